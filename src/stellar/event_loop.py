"""The event loop that STELLAR's commands run on: uvloop where it is installed (Linux and
macOS), else asyncio's own. With many model calls in flight, uvloop's C scheduler takes
0.4-0.7 ms off the framework's CPU per test (calls3 at concurrency 64: 2.8-3.1 against
3.4-3.6 ms on 2 cores, ``bench/throughput.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the fastest loop available."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop, or None (asyncio's default) where uvloop is not installed."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
