"""Token usage and cost, booked per role (generator, sut, judge) to the test in progress.

The pipeline opens a usage book for each test (:func:`book_for_test`); every model call made
while that test is being generated, run or judged adds its tokens and cost to it, so the
test record carries its own usage and a run's total is the sum over its records. Cached
answers count their tokens but cost nothing: no request was made.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

ROLES = ("generator", "sut", "judge")
FIELDS = ("calls", "cached", "retries", "errors", "input_tokens", "output_tokens", "cost")

# List prices in USD per million tokens (input, output) of common hosted models, checked
# 2025; override or extend them with ``llm.prices`` in the configuration. Local servers
# (Ollama, vLLM, openai-compatible) cost nothing unless priced there.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "o4-mini": (1.10, 4.40),
    "o3-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "gpt-3.5-turbo": (0.50, 1.50),
}
HOSTED = ("openai", "azure")

_book: ContextVar[dict[str, dict[str, float]] | None] = ContextVar("stellar_usage", default=None)


@contextlib.contextmanager
def book_for_test(book: dict[str, dict[str, float]]) -> Iterator[None]:
    """Book model usage of the code inside the block (and the tasks it starts) to ``book``."""
    token = _book.set(book)
    try:
        yield
    finally:
        _book.reset(token)


def record_call(role: str, **amounts: float) -> None:
    """Add one call's amounts (``FIELDS``) to the current test's book, if one is open."""
    book = _book.get()
    if book is None:
        return
    entry = book.setdefault(role, dict.fromkeys(FIELDS, 0))
    for name, value in amounts.items():
        entry[name] = entry.get(name, 0) + value


def add_usage(total: dict[str, dict[str, float]], usage: Mapping[str, Mapping[str, Any]]) -> None:
    """Sum one record's usage into a run's total."""
    for role, amounts in usage.items():
        entry = total.setdefault(role, dict.fromkeys(FIELDS, 0))
        for name, value in amounts.items():
            entry[name] = entry.get(name, 0) + value


def from_cache(*books: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per role over usage books: (answers taken from the cache, calls); roles that made no
    call are left out."""
    found: dict[str, tuple[int, int]] = {}
    for book in books:
        for role, amounts in book.items():
            cached, calls = found.get(role, (0, 0))
            found[role] = (
                cached + int(amounts.get("cached", 0)),
                calls + int(amounts.get("calls", 0)),
            )
    return {role: counts for role, counts in found.items() if counts[1]}


def total_cost(usage: Mapping[str, Mapping[str, Any]]) -> float:
    return sum(float(amounts.get("cost", 0.0)) for amounts in usage.values())


class PriceTable:
    """USD per million tokens by model name; the longest matching prefix wins
    (``gpt-4o-mini-2024-07-18`` is priced as ``gpt-4o-mini``)."""

    def __init__(self, prices: Mapping[str, tuple[float, float] | list[float]] | None = None):
        merged = {**DEFAULT_PRICES, **{k: tuple(v) for k, v in (prices or {}).items()}}
        self.prices: dict[str, tuple[float, float]] = merged  # type: ignore[assignment]
        self.custom = set(prices or {})

    def lookup(self, provider: str, model: str) -> tuple[float, float] | None:
        """Prices for a model; None when a hosted model has no price (cost unknown)."""
        for key in (f"{provider}:{model}", model):
            if key in self.custom:
                return self.prices[key]
        if provider not in HOSTED:
            return (0.0, 0.0)
        matches = [name for name in self.prices if model.startswith(name)]
        return self.prices[max(matches, key=len)] if matches else None

    def cost(self, provider: str, model: str, input_tokens: int, output_tokens: int) -> float:
        price = self.lookup(provider, model) or (0.0, 0.0)
        return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000
