"""Experiments: every algorithm x seed on one configuration, resumable, runs in parallel.

An experiment directory holds ``experiment.yaml`` (what was asked), ``runs/ALGORITHM-sSEED``
(one run directory each) and ``report/`` (tables and plots). A run counts as finished when
its summary gives a budget or the search space as the stop reason; anything else
(no summary, Ctrl-C, a crash) is deleted and run again, so repeating the command resumes an
interrupted experiment without redoing finished runs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import yaml

from stellar.errors import StellarError
from stellar.rundir import read_summary
from stellar.termination import StopReason

EXPERIMENT_FILE = "experiment.yaml"


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
        stored = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
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


def run_one(plan: Plan, algorithm: str, seed: int, run_dir: str, threads: int) -> dict[str, Any]:
    """Run one algorithm x seed in this (worker) process; returns its summary."""
    import asyncio
    from dataclasses import asdict

    import torch

    from stellar.config import load_config
    from stellar.run import Run

    torch.set_num_threads(threads)
    overrides = {
        **plan.overrides,
        "algorithm.name": algorithm,
        "seed": seed,
        "budget.tests": plan.tests,
        "budget.time": plan.time,
    }
    config = load_config(plan.config, overrides, plan.settings)
    summary = asyncio.run(Run(config, run_dir=Path(run_dir)).execute())
    return asdict(summary)


def execute(
    root: Path,
    plan: Plan,
    parallel: int,
    on_done: Callable[[str, int, dict[str, Any] | None, str | None], None],
) -> tuple[dict[str, list[Path]], int]:
    """Run what is missing; returns run directories per algorithm and the number skipped."""
    jobs, skipped = [], 0
    runs: dict[str, list[Path]] = {a: [] for a in plan.algorithms}
    for seed in plan.seeds:
        for algorithm in plan.algorithms:
            run_dir = plan.run_dir(root, algorithm, seed)
            runs[algorithm].append(run_dir)
            if finished(run_dir):
                skipped += 1
                continue
            shutil.rmtree(run_dir, ignore_errors=True)  # an unfinished attempt starts over
            jobs.append((algorithm, seed, run_dir))
    if not jobs:
        return runs, skipped
    threads = max(1, (os.cpu_count() or 1) // parallel)
    with ProcessPoolExecutor(parallel, mp_context=get_context("spawn")) as pool:
        pending = {
            pool.submit(run_one, plan, algorithm, seed, str(run_dir), threads): (algorithm, seed)
            for algorithm, seed, run_dir in jobs
        }
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                algorithm, seed = pending.pop(future)
                try:
                    summary, error = future.result(), None
                except Exception as exc:  # a failed run is reported; the others go on
                    summary, error = None, f"{type(exc).__name__}: {exc}"
                on_done(algorithm, seed, summary, error)
    return runs, skipped


def _changed(old: Any, new: Any) -> list[str]:
    """The keys whose values differ, for mappings; one entry otherwise."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return [""]
    return sorted(k for k in {*old, *new} if old.get(k) != new.get(k))


def _union(first: Sequence[Any], second: Sequence[Any]) -> list[Any]:
    return list(dict.fromkeys([*first, *second]))
