"""A Python function as the system under test."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from stellar.records import Response


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


class PythonSUT:
    """Calls ``func(text)``; sync functions run in a thread pool so the event loop never blocks."""

    def __init__(self, func: Callable[[str], Any], workers: int = 8) -> None:
        self.func = func
        self.is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)  # noqa: B004 - async callable objects
        )
        self.pool = None if self.is_async else ThreadPoolExecutor(max_workers=workers)

    async def query(self, text: str) -> Response:
        if self.is_async:
            result = await self.func(text)
        else:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(self.pool, self.func, text)
        return to_response(result)

    async def aclose(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
