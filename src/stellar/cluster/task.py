"""The worker side: one run in a temporary directory, from the state the client left in the
run's Variable; progress and checkpoints sent from a thread of its own."""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from stellar import event_loop
from stellar.cluster.pack import pack, unpack
from stellar.experiment import Plan, counts, run_config
from stellar.rundir import ARCHIVE_NAME

CHECKPOINT_ENV = "STELLAR_CHECKPOINT_SECONDS"
PROGRESS_SECONDS = 0.5
logger = logging.getLogger(__name__)


def run_task(
    plan: Plan,
    algorithm: str,
    seed: int,
    key: str,
    topic: str,
    arrays: dict[str, list[tuple[int, ...]]],
) -> tuple[dict[str, Any], bytes]:
    """One run on a worker, from the state in the Variable ``key``; returns its summary and
    its packed run directory. Progress goes to ``topic``, checkpoints to the Variable."""
    from distributed import Variable, get_client, get_worker

    worker, client = get_worker(), get_client()
    state = Variable(key, client=client).get(timeout=60)
    with tempfile.TemporaryDirectory(prefix="stellar-") as tmp:
        run_dir = Path(tmp) / key.split("-", 2)[2]  # ALGORITHM-sSEED
        if state:
            unpack(state, run_dir)
        run_dir.mkdir(exist_ok=True)
        reporter = Reporter(client, worker, key, topic, run_dir)
        try:
            summary = _run(plan, algorithm, seed, run_dir, arrays, reporter, worker)
        finally:
            reporter.close()
        return summary, pack(run_dir)


def _run(
    plan: Plan,
    algorithm: str,
    seed: int,
    run_dir: Path,
    arrays: dict[str, list[tuple[int, ...]]],
    reporter: Reporter,
    worker: Any,
) -> dict[str, Any]:
    import torch

    from stellar.run import Run
    from stellar.search.twise import prime
    from stellar.termination import StopReason

    torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(1, worker.state.nthreads)))
    prime(arrays)
    config = run_config(plan, algorithm, seed)
    resume = (run_dir / ARCHIVE_NAME).exists()

    async def go() -> Any:
        run = Run(config, run_dir=run_dir, on_record=reporter.on_record, resume=resume)
        loop = asyncio.get_running_loop()
        reason = StopReason.INTERRUPTED
        reporter.on_cancel = lambda: loop.call_soon_threadsafe(
            run.request_stop, reason, f"{reason} (cancelled by the client)"
        )
        return await run.execute()

    return asdict(event_loop.run(go()))


class Reporter:
    """Sends a run's progress (events on ``topic``) and checkpoints (the Variable ``key``)
    from a thread of its own, so that the run never waits on the network; asks the run to
    stop (``on_cancel``) when the client no longer wants the task."""

    def __init__(self, client: Any, worker: Any, key: str, topic: str, run_dir: Path) -> None:
        self.client, self.worker, self.key, self.topic, self.run_dir = (
            client,
            worker,
            key,
            topic,
            run_dir,
        )
        self.every = float(os.environ.get(CHECKPOINT_ENV) or 5.0)
        self.on_cancel: Callable[[], Any] | None = None
        self.seen: dict[str, Any] | None = None  # the latest counts, set by the run's loop
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"{key}-reporter", daemon=True)
        self.thread.start()

    def on_record(self, record: Any, summary: Any) -> None:
        self.seen = counts(summary)

    def close(self) -> None:
        self.done.set()
        self.thread.join()

    def _loop(self) -> None:
        from distributed import Variable

        sent, saved, checkpoint, last_save = None, None, 0, time.monotonic()
        while not self.done.wait(PROGRESS_SECONDS):
            if self._cancelled():
                if self.on_cancel is not None:
                    self.on_cancel()
                return
            seen = self.seen
            if seen is None or seen == sent:
                continue
            message = {"key": self.key, "counts": seen, "checkpoint": None}
            try:  # a scheduler away for a moment costs a report, never the run
                if seen != saved and time.monotonic() - last_save >= self.every:
                    Variable(self.key, client=self.client).set(pack(self.run_dir))
                    saved, last_save, checkpoint = seen, time.monotonic(), checkpoint + 1
                    message["checkpoint"] = checkpoint
                self.client.log_event(self.topic, message)
            except Exception as exc:
                logger.warning("%s: progress not reported: %s", self.key, exc)
            sent = seen

    def _cancelled(self) -> bool:
        task = getattr(getattr(self.worker, "state", None), "tasks", {}).get(self.key)
        return task is None or task.state == "cancelled"
