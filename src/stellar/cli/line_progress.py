"""Progress as plain lines at a steady interval, where no live bar can be drawn.

When standard error is not a terminal (a CI log, ``nohup``, ``2> file``) a live bar writes
nothing until it stops. :class:`LineProgress` takes the bar's place: it keeps the same
tasks and fields, and a timer thread prints one line per task every ``interval`` seconds
(``STELLAR_PROGRESS_INTERVAL``, default 15) while the work runs, then a last line each.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

INTERVAL_ENV = "STELLAR_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 15.0


def line_interval() -> tuple[float, str | None]:
    """Seconds between progress lines: ``STELLAR_PROGRESS_INTERVAL``, else the default; and
    what is wrong with a value that is not a positive number of seconds."""
    value = os.environ.get(INTERVAL_ENV, "").strip()
    if not value:
        return DEFAULT_INTERVAL, None
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        problem = (
            f"{INTERVAL_ENV}={value}: not a positive number of seconds; using {DEFAULT_INTERVAL:g}"
        )
        return DEFAULT_INTERVAL, problem
    return seconds, None


@dataclass
class _Task:
    description: str
    total: int | None
    fields: dict[str, Any]
    completed: float = 0
    started: float = field(default_factory=time.monotonic)
    shown: tuple[float, tuple[Any, ...]] | None = None  # what the last line said


class LineProgress:
    """The part of ``rich.progress.Progress`` the commands use, printed as lines."""

    def __init__(
        self,
        console: Console,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console, self.clock = console, clock
        if interval is None:
            interval, problem = line_interval()
            if problem:
                console.print(f"stellar: warning: {problem}", markup=False, highlight=False)
        self.interval = interval
        self.tasks: list[_Task] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None

    def add_task(self, description: str, total: float | None = None, **fields: Any) -> int:
        with self._lock:
            total_tests = None if total is None else int(total)
            self.tasks.append(_Task(description, total_tests, fields, started=self.clock()))
            return len(self.tasks) - 1

    def update(
        self,
        task_id: int,
        *,
        completed: float | None = None,
        advance: float | None = None,
        **fields: Any,
    ) -> None:
        with self._lock:
            task = self.tasks[task_id]
            if completed is not None:
                task.completed = completed
            if advance is not None:
                task.completed += advance
            task.fields.update(fields)

    def tick(self, final: bool = False) -> None:
        """Print a line for each task (on the last tick, only those that changed)."""
        with self._lock:
            lines = []
            for task in self.tasks:
                state = (task.completed, tuple(sorted(task.fields.items())))
                if final and task.shown is not None and task.shown[1] == state:
                    continue
                task.shown = (self.clock(), state)
                lines.append(self.line(task))
        for line in lines:
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def line(self, task: _Task) -> str:
        done = f"{task.completed:,.0f}"
        if task.total:
            done += f" of {task.total:,} ({task.completed / task.total:.0%})"
        fields = task.fields
        parts = [f"{task.description}: {done}"]
        if "modes" in fields:
            parts.append(f"modes {fields['modes']}")
        if "failures" in fields:
            ratio = fields.get("ratio", 0.0)
            parts.append(f"failures {fields['failures']} ({ratio:.1%} of verdicts)")
        if "errors" in fields:
            parts.append(f"errors {fields['errors']}")
        parts.append(f"{self.clock() - task.started:.0f} s")
        return ", ".join(parts)

    def __enter__(self) -> LineProgress:
        with self._lock:
            for task in self.tasks:  # counted from here, as the work starts
                task.started = self.clock()
        self._stop.clear()
        self._timer = threading.Thread(target=self._run, name="stellar-progress", daemon=True)
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._timer is not None:
            self._timer.join()
        self.tick(final=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.tick()
