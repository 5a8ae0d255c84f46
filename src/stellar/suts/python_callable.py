"""A Python function as the system under test.

A function with a parameter named ``history`` holds conversations: each turn calls
``func(text, history=[{"role": ..., "content": ...}, ...])`` with the earlier turns. An object
with its own ``open()`` is opened as it is; a plain ``func(text)`` answers single turns only.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from stellar.dialogue.session import HistorySession
from stellar.records import Response

HISTORY = "history"  # the parameter a function takes the earlier turns in


def to_response(result: Any) -> Response:
    """Accept a Response, a string, or a mapping with ``text`` (or ``answer``) and ``data``."""
    if isinstance(result, Response):
        return result
    if isinstance(result, str):
        return Response(text=result)
    if isinstance(result, dict) and ("text" in result or "answer" in result):
        text = result.get("text", result.get("answer"))
        return Response(text=str(text), data=result.get("data"))
    raise TypeError(
        f"the system under test returned {type(result).__name__}; "
        "expected str, Response, or a dict with 'text' and optional 'data'"
    )


def takes_history(func: Callable[..., Any]) -> bool:
    """Whether ``func`` has a parameter named ``history``."""
    try:
        return HISTORY in inspect.signature(func).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False


class PythonSUT:
    """Calls ``func(text)``; sync functions run in a thread pool so the event loop never blocks."""

    def __init__(self, func: Callable[..., Any], workers: int = 8) -> None:
        self.func = func
        self.is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)  # noqa: B004 - async callable objects
        )
        self.pool = None if self.is_async else ThreadPoolExecutor(max_workers=workers)
        self.takes_history = takes_history(func)
        if self.takes_history:
            self.open = self._open  # only a system that keeps conversations has open()
        elif callable(getattr(func, "open", None)):
            self.open = self._open_own

    async def query(self, text: str) -> Response:
        return await self.call(text, [] if self.takes_history else None)

    async def call(self, text: str, history: list[dict[str, str]] | None) -> Response:
        """``func(text)``, or ``func(text, history=...)`` when ``history`` is given."""
        kwargs = {} if history is None else {HISTORY: history}
        if self.is_async:
            result = await self.func(text, **kwargs)
        else:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(self.pool, lambda: self.func(text, **kwargs))
        return to_response(result)

    async def _open(self) -> HistorySession:
        """A conversation: each turn calls the function with the turns so far."""
        return HistorySession(self.call)

    async def _open_own(self) -> Any:
        """The object's own session (``open()`` may be sync or async)."""
        session = self.func.open()  # type: ignore[attr-defined]
        return await session if inspect.isawaitable(session) else session

    async def aclose(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
