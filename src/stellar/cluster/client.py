"""The client side: the cluster's address, the connection, and the experiment's runs as
tasks (submitted, followed, their checkpoints and results unpacked into the experiment)."""

from __future__ import annotations

import contextlib
import logging
import re
import signal
import threading
import uuid
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stellar.cluster.pack import pack, unpack
from stellar.cluster.task import run_task
from stellar.errors import StellarError, Terminated
from stellar.experiment import OnDone, OnProgress, Plan, pending, shared_arrays
from stellar.rundir import ARCHIVE_NAME, write_summary

CONNECT_TIMEOUT = 3.0  # seconds to reach a scheduler
_ADDRESS = re.compile(r"(?:(tcp|tls)://)?([A-Za-z0-9_.\-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})")


def parse_cluster(spec: str) -> str | int:
    """``tcp://HOST:PORT`` (or ``HOST:PORT``, ``tls://...``) -> the address; ``local:N`` -> N."""
    text = spec.strip()
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if count.isdigit() and 1 <= int(count) <= 1024:
            return int(count)
        raise StellarError(f"--cluster {spec!r}: local:N needs N worker processes, 1 to 1024")
    match = _ADDRESS.fullmatch(text)
    if match is None or not 0 < int(match.group(3)) < 65536:
        raise StellarError(
            f"--cluster {spec!r}: give a Dask scheduler's address (tcp://HOST:8786) or local:N"
        )
    return f"{match.group(1) or 'tcp'}://{match.group(2)}:{match.group(3)}"


@contextlib.contextmanager
def connect(target: str | int) -> Iterator[Any]:
    """A ``distributed.Client`` for a scheduler address, or for a local cluster of N worker
    processes (one thread each); an unreachable scheduler is a ``StellarError``."""
    import distributed  # noqa: F401 - sets up its loggers, which we quieten now

    # its reconnect tracebacks and warnings: what matters is said in one line
    quiet = [logging.getLogger(n) for n in ("distributed", "distributed.client")]
    levels = [logger.level for logger in quiet]
    for logger in quiet:
        logger.setLevel(logging.CRITICAL)
    try:
        with _client(target) as client:
            yield client
    finally:
        for logger, level in zip(quiet, levels, strict=True):
            logger.setLevel(level)


@contextlib.contextmanager
def _client(target: str | int) -> Iterator[Any]:
    from distributed import Client, LocalCluster

    if isinstance(target, int):
        cluster = LocalCluster(
            n_workers=target,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # any free port: never a clash with 8787
            silence_logs=logging.ERROR,
        )
        with cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(target, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise StellarError(f"--cluster {target}: cannot reach a Dask scheduler ({exc})") from None
    with client:
        yield client


def execute(
    root: Path,
    plan: Plan,
    client: Any,
    on_done: OnDone,
    on_progress: OnProgress | None = None,
    arrays: dict[str, list[tuple[int, ...]]] | None = None,
) -> tuple[dict[str, list[Path]], int]:
    """Run what is missing as tasks on ``client``'s cluster (as :func:`stellar.experiment.
    execute` does in local processes); run directories per algorithm, and the number skipped."""
    from distributed import Variable

    runs, jobs, skipped = pending(root, plan)
    if not jobs:
        return runs, skipped
    if arrays is None:  # built once, here: no worker builds one
        arrays = shared_arrays(plan, [algorithm for algorithm, _, _ in jobs])
    token = uuid.uuid4().hex[:12]
    topic, inbox = f"stellar-{token}", deque[Any]()
    active: dict[str, tuple[str, int, Path]] = {}
    futures: dict[str, Any] = {}
    try:
        client.subscribe_topic(topic, inbox.append)
        for algorithm, seed, run_dir in jobs:
            key = f"stellar-{token}-{run_dir.name}"
            state = pack(run_dir) if (run_dir / ARCHIVE_NAME).exists() else b""
            Variable(key, client=client).set(state)  # where the task starts from
            active[key] = (algorithm, seed, run_dir)
            futures[key] = client.submit(
                run_task, plan, algorithm, seed, key, topic, arrays, key=key, retries=0
            )
        with _StopOnSigterm() as stop:
            while active and not stop.terminated:
                if client.status != "running":
                    raise ConnectionError("no connection")
                _collect(client, inbox, active, on_progress)
                for key in [k for k in active if futures[k].done()]:
                    algorithm, seed, run_dir = active.pop(key)
                    summary, error = _result(futures.pop(key), run_dir)
                    on_done(algorithm, seed, summary, error)
                    Variable(key, client=client).delete()
                stop.wait(0.3)
    except (OSError, TimeoutError) as exc:  # CommClosedError is an OSError
        raise StellarError(
            f"lost the Dask scheduler ({exc or type(exc).__name__}); finished runs and "
            "checkpoints are kept: run the same command again to resume"
        ) from None
    finally:
        with contextlib.suppress(Exception):  # Ctrl-C, SIGTERM: the tasks stop their runs
            client.cancel(list(futures.values()))
            for key in active:
                Variable(key, client=client).delete()
            client.unsubscribe_topic(topic)
    if stop.terminated:
        raise Terminated("terminated (SIGTERM); run the same command again to resume")
    return runs, skipped


def _collect(
    client: Any, inbox: deque[Any], active: dict[str, Any], on_progress: OnProgress | None
) -> None:
    """Hand on the progress the tasks reported and copy their new checkpoints here."""
    from distributed import Variable

    saved = set()
    while inbox:
        _, message = inbox.popleft()
        key = message.get("key")
        if key not in active:
            continue
        algorithm, seed, run_dir = active[key]
        if on_progress is not None:
            on_progress(algorithm, seed, message["counts"])
        if message.get("checkpoint") and key not in saved:
            saved.add(key)
            with contextlib.suppress(TimeoutError):  # a later one comes
                unpack(Variable(key, client=client).get(timeout=10), run_dir)


def _result(future: Any, run_dir: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A finished task's summary (its run directory unpacked into ``run_dir``), or its error."""
    if future.status == "cancelled":
        return None, "cancelled"
    if future.status != "finished":
        exc = future.exception()
        return None, f"{type(exc).__name__}: {exc}"
    summary, data = future.result()
    unpack(data, run_dir)
    summary["run_dir"] = str(run_dir)
    write_summary(run_dir, summary)
    return summary, None


class _StopOnSigterm:
    """On SIGTERM (in the main thread only): stop waiting; the runs are cancelled."""

    def __init__(self) -> None:
        self.terminated, self.event, self.previous = False, threading.Event(), None

    def __enter__(self) -> _StopOnSigterm:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGTERM, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)

    def _handle(self, signum: int, frame: object) -> None:
        self.terminated = True
        self.event.set()

    def wait(self, seconds: float) -> None:
        self.event.wait(seconds)
