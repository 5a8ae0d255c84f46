"""The generator interface: a candidate in, a test input out."""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable
from typing import Any, Protocol

from stellar.features import Candidate
from stellar.records import TestInput


class Generator(Protocol):
    """Turns a candidate into a concrete test input; ``rng`` is seeded per test."""

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput: ...


class CallableGenerator:
    """Adapts ``func(candidate, rng) -> str | TestInput`` (sync or async) to a Generator."""

    def __init__(self, func: Callable[[Candidate, random.Random], Any]) -> None:
        self.func = func

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput:
        result = self.func(candidate, rng)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, TestInput):
            return result
        if isinstance(result, str):
            return TestInput(text=result)
        raise TypeError(f"generator returned {type(result).__name__}; expected str or TestInput")


def as_generator(obj: Any) -> Generator:
    """Use an object with ``generate`` as it is; wrap a plain callable."""
    if hasattr(obj, "generate"):
        return obj
    if callable(obj):
        return CallableGenerator(obj)
    raise TypeError(f"{obj!r} is neither a generator nor a callable")
