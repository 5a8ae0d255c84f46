"""Garbage collection while a run's search executes.

What exists when the search starts (modules, models, configuration) lives as long as the
run, so it is frozen (``gc.freeze``) and no collection walks it. The tests in flight hold
thousands of young objects (coroutines, tasks, records), so the youngest generation is
collected after 10,000 net allocations instead of Python's 700: at concurrency 64 a
2,560-test search made 3 collections instead of ~60 (``bench/throughput.py``). Runs may
execute at once in one process (threads of a Dask worker): the first to start tunes, the
last to end gives the process its own settings back.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 10_000
_lock = threading.Lock()
_runs = 0
_saved: tuple[int, ...] = ()


@contextmanager
def tuned_for_a_run() -> Iterator[None]:
    """Freeze what exists and collect the young generation less often, until the last run
    in this process ends."""
    global _runs, _saved
    with _lock:
        if _runs == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(YOUNG_THRESHOLD, *_saved[1:])
        _runs += 1
        gc.freeze()
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0:
                gc.unfreeze()
                gc.set_threshold(*_saved)
