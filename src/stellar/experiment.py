"""Experiments: every algorithm x seed on one configuration, resumable, runs in parallel.

An experiment directory holds ``experiment.yaml`` (what was asked), ``runs/ALGORITHM-sSEED``
(one run directory each) and ``report/`` (tables and plots). A run counts as finished when
its summary gives a budget or the search space as the stop reason; anything else
(no summary, Ctrl-C, SIGTERM, a kill) is resumed from its archive (see :mod:`stellar.resume`),
so repeating the command finishes an interrupted experiment without redoing any test.
A t-wise covering array is built once here and handed to every run (``shared_arrays``).
:mod:`stellar.cluster` runs the same runs as Dask tasks instead of local processes.
"""

from __future__ import annotations

import os
import queue
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import yaml

from stellar import event_loop
from stellar.errors import StellarError, Terminated
from stellar.rundir import read_summary
from stellar.termination import StopReason
from stellar.yaml_loading import read_yaml_file

EXPERIMENT_FILE = "experiment.yaml"
OnDone = Callable[[str, int, dict[str, Any] | None, str | None], None]
OnProgress = Callable[[str, int, dict[str, Any]], None]  # algorithm, seed, counts
Job = tuple[str, int, Path]  # algorithm, seed, run directory


@dataclass
class Plan:
    """What an experiment runs; stored so that a resumed experiment cannot drift."""

    config: str | None  # the run configuration (None: the built-in default)
    algorithms: list[str]
    seeds: list[int]
    tests: int | None
    time: float | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)  # --set values (None clears)

    def run_dir(self, root: Path, algorithm: str, seed: int) -> Path:
        return root / "runs" / f"{algorithm.split(':')[-1]}-s{seed}"


def prepare(root: Path, plan: Plan) -> None:
    """Create the experiment directory, or check that it holds the same plan."""
    path = root / EXPERIMENT_FILE
    wanted = vars(plan)
    if path.exists():
        stored = read_yaml_file(path) or {}
        if not isinstance(stored, dict):
            raise StellarError(f"{path}: not an experiment plan (expected a mapping)")
        keys = ("config", "tests", "time", "overrides", "settings")
        differs = [
            f"{key}.{sub}" if isinstance(wanted[key], dict) else key
            for key in keys
            if stored.get(key) != wanted[key]
            for sub in _changed(stored.get(key), wanted[key])
        ]
        if differs:
            raise StellarError(
                f"{root} holds an experiment with other settings ({', '.join(differs)}); "
                "use another --dir or the same settings"
            )
        # more algorithms or seeds extend the experiment
        wanted = {
            **wanted,
            "algorithms": _union(stored.get("algorithms", []), plan.algorithms),
            "seeds": _union(stored.get("seeds", []), plan.seeds),
        }
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(wanted, sort_keys=False), encoding="utf-8")


def finished(run_dir: Path) -> bool:
    """Whether the run stopped for a reason that needs no redo (a budget, an exhausted space)."""
    reason = read_summary(run_dir).get("stop_reason", "")
    return reason in StopReason._value2member_map_ and StopReason(reason).finished


def run_config(plan: Plan, algorithm: str, seed: int) -> Any:
    """The configuration of one run of the experiment (a ``RunConfig``)."""
    from stellar.config import load_config

    overrides = {
        **plan.overrides,
        "algorithm.name": algorithm,
        "seed": seed,
        "budget.tests": plan.tests,
        "budget.time": plan.time,
    }
    return load_config(plan.config, overrides, plan.settings)


def shared_arrays(plan: Plan, algorithms: Sequence[str]) -> dict[str, list[tuple[int, ...]]]:
    """The covering arrays the t-wise runs among ``algorithms`` will ask, built (or read from
    the cache) once, here: ``{array_key: rows}`` for :func:`stellar.search.twise.prime`."""
    from stellar.assembly import build_algorithm
    from stellar.search.twise import TwiseSearch, array_key, covering_array

    arrays = {}
    for algorithm in dict.fromkeys(algorithms):
        try:
            config = run_config(plan, algorithm, plan.seeds[0] if plan.seeds else 0)
            search = build_algorithm(config, config.feature_space(), config.algorithm.name)
        except Exception:  # its runs fail and report it, one by one
            continue
        if isinstance(search, TwiseSearch):
            key = array_key(search.space, search.strength)
            arrays.setdefault(key, covering_array(search.space, search.strength))
    return arrays


class ProgressFeed:
    """A run's ``on_record`` callback: ``send(counts)`` at most every ``interval`` seconds."""

    def __init__(self, send: Callable[[dict[str, Any]], None], interval: float = 0.5) -> None:
        self.send, self.interval, self.last = send, interval, 0.0

    def __call__(self, record: Any, summary: Any) -> None:
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
            self.send(counts(summary))


def counts(summary: Any) -> dict[str, Any]:
    """What the progress display shows of a run's summary (a ``RunSummary`` or its dict)."""
    get = summary.get if isinstance(summary, dict) else lambda k: getattr(summary, k)
    shown = {k: get(k) or 0 for k in ("tests", "failures", "failure_ratio")}
    return {**shown, "errors": (get("sut_errors") or 0) + (get("judge_errors") or 0)}


_progress: Any = None  # a worker process's queue to the parent, for progress


def run_one(
    plan: Plan,
    algorithm: str,
    seed: int,
    run_dir: str,
    threads: int,
    arrays: dict[str, list[tuple[int, ...]]] | None = None,
) -> dict[str, Any]:
    """Run (or resume) one algorithm x seed in this (worker) process; returns its summary.
    SIGTERM and SIGINT stop it after the tests in flight, keeping its archive. ``arrays``:
    covering arrays built by the experiment (see :func:`shared_arrays`)."""
    import asyncio
    from dataclasses import asdict

    import torch

    from stellar.archive import ARCHIVE_NAME
    from stellar.run import Run
    from stellar.search.twise import prime

    torch.set_num_threads(threads)
    prime(arrays or {})
    config = run_config(plan, algorithm, seed)
    resume = (Path(run_dir) / ARCHIVE_NAME).exists()
    feed = None
    if _progress is not None:
        feed = ProgressFeed(lambda seen: _progress.put((algorithm, seed, seen)))

    async def execute() -> Any:
        run = Run(config, run_dir=Path(run_dir), on_record=feed, resume=resume)
        loop = asyncio.get_running_loop()
        for signum, reason in ((signal.SIGTERM, StopReason.TERMINATED), (signal.SIGINT, None)):
            reason = reason or StopReason.INTERRUPTED
            loop.add_signal_handler(signum, run.request_stop, reason, f"{reason} (signal)")
        return await run.execute()

    try:
        return asdict(event_loop.run(execute()))
    finally:
        _idle_ignores_signals()


def _idle_ignores_signals(progress: Any = None) -> None:
    """A worker between runs ignores SIGTERM and SIGINT (its runs handle them), so that a
    signal to the whole process group never breaks the pool; ``progress``: its queue."""
    global _progress
    if progress is not None:
        _progress = progress
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def pending(root: Path, plan: Plan) -> tuple[dict[str, list[Path]], list[Job], int]:
    """Run directories per algorithm, the runs still to do (new, or resumed from their
    archive) and the number already finished."""
    jobs, skipped = [], 0
    runs: dict[str, list[Path]] = {a: [] for a in plan.algorithms}
    for seed in plan.seeds:
        for algorithm in plan.algorithms:
            run_dir = plan.run_dir(root, algorithm, seed)
            runs[algorithm].append(run_dir)
            if finished(run_dir):
                skipped += 1
            else:
                jobs.append((algorithm, seed, run_dir))
    return runs, jobs, skipped


def execute(
    root: Path,
    plan: Plan,
    parallel: int,
    on_done: OnDone,
    on_progress: OnProgress | None = None,
    arrays: dict[str, list[tuple[int, ...]]] | None = None,
) -> tuple[dict[str, list[Path]], int]:
    """Run what is missing; returns run directories per algorithm and the number skipped.
    ``arrays``: the runs' covering arrays (default: built here, see :func:`shared_arrays`)."""
    runs, jobs, skipped = pending(root, plan)
    if not jobs:
        return runs, skipped
    if arrays is None:
        arrays = shared_arrays(plan, [algorithm for algorithm, _, _ in jobs])
    threads = max(1, (os.cpu_count() or 1) // parallel)
    context = get_context("spawn")
    progress = context.Queue() if on_progress else None
    with ProcessPoolExecutor(
        parallel, mp_context=context, initializer=_idle_ignores_signals, initargs=(progress,)
    ) as pool:
        futures = {
            pool.submit(run_one, plan, algorithm, seed, str(run_dir), threads, arrays): (
                algorithm,
                seed,
            )
            for algorithm, seed, run_dir in jobs
        }
        stop = _StopOnSigterm(pool)
        while futures:
            done, _ = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)
            _drain(progress, on_progress)
            for future in done:
                algorithm, seed = futures.pop(future)
                if future.cancelled():  # never started: SIGTERM came first
                    continue
                try:
                    summary, error = future.result(), None
                except Exception as exc:  # a failed run is reported; the others go on
                    summary, error = None, f"{type(exc).__name__}: {exc}"
                on_done(algorithm, seed, summary, error)
        stop.restore()
    if stop.terminated:
        raise Terminated("terminated (SIGTERM); run the same command again to resume")
    return runs, skipped


def _drain(progress: Any, on_progress: OnProgress | None) -> None:
    """Hand the progress the workers reported so far to ``on_progress``."""
    while progress is not None and on_progress is not None:
        try:
            algorithm, seed, seen = progress.get_nowait()
        except queue.Empty:
            return
        on_progress(algorithm, seed, seen)


class _StopOnSigterm:
    """On SIGTERM: start no more runs, and stop the running ones after their tests in flight."""

    def __init__(self, pool: ProcessPoolExecutor) -> None:
        self.pool, self.terminated = pool, False
        self.previous = signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        self.terminated = True
        self.pool.shutdown(wait=False, cancel_futures=True)
        for process in list((getattr(self.pool, "_processes", None) or {}).values()):
            process.terminate()  # SIGTERM: a running run stops and writes its summary

    def restore(self) -> None:
        signal.signal(signal.SIGTERM, self.previous)


def _changed(old: Any, new: Any) -> list[str]:
    """The keys whose values differ, for mappings; one entry otherwise."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return [""]
    return sorted(k for k in {*old, *new} if old.get(k) != new.get(k))


def _union(first: Sequence[Any], second: Sequence[Any]) -> list[Any]:
    return list(dict.fromkeys([*first, *second]))
