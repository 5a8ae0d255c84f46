"""The event loop that STELLAR's commands run on: uvloop where it is installed (Linux and
macOS), else asyncio's own. uvloop's C transports and scheduler take about a tenth off the
framework's CPU per test at many model calls in flight (``bench/throughput.py``)."""

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
