"""Repeated tests: one verdict from k repeats, and pass^k, the chance that all k succeed.

A non-deterministic system (an agent at a temperature above 0, a service behind a load
balancer) can pass a test once and fail it the next time. ``--repeats k`` sends each test k
times, each in a fresh session; the test fails when any repeat fails, and the record keeps
the first failing repeat (else the first error, else the first repeat) with every repeat's
outcome in ``details["repeats"]``. pass^k is the estimator of tau-bench: over tests with c
successes in n repeats, the mean of C(c, j) / C(n, j), for each j <= n.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from math import comb
from typing import Any

from stellar.records import MODE_KEY, Status, TestRecord

REPEATS_KEY = "repeats"  # details: {"k", "passed", "outcomes": [...]}
ADOPTED = (
    "status",
    "error",
    "response_text",
    "response_data",
    "scores",
    "details",
    "failed",
    "excluded",
    "fitness_seconds",
)  # what a repeated test's record takes from a repeat


async def send_repeated(
    record: TestRecord, k: int, send: Callable[[TestRecord], Awaitable[None]]
) -> None:
    """``send`` ``k`` copies of ``record`` at once; ``record`` becomes the repeat a person
    reads (:func:`shown_repeat`) with every repeat's outcome under :data:`REPEATS_KEY`."""
    attempts = [replace(record, details=dict(record.details)) for _ in range(k)]
    await asyncio.gather(*(send(attempt) for attempt in attempts))
    shown = shown_repeat(attempts)
    for name in ADOPTED:
        setattr(record, name, getattr(shown, name))
    record.sut_seconds = sum(a.sut_seconds or 0.0 for a in attempts)
    record.details = {**record.details, REPEATS_KEY: repeats_detail(attempts)}


def shown_repeat(attempts: Sequence[TestRecord]) -> TestRecord:
    """The repeat a person reads: the first that failed, else the first error, else the first."""
    for attempt in attempts:
        if attempt.status == Status.OK and attempt.failed and not attempt.excluded:
            return attempt
    for attempt in attempts:
        if attempt.status != Status.OK:
            return attempt
    return attempts[0]


def repeats_detail(attempts: Sequence[TestRecord]) -> dict[str, Any]:
    """What each repeat gave: status, failed, its failure mode key and error."""
    outcomes = [
        {
            "status": str(a.status),
            "failed": a.failed if a.status == Status.OK else None,
            "mode": a.details.get(MODE_KEY) if a.failed else None,
            "error": a.error,
        }
        for a in attempts
    ]
    passed = sum(1 for a in attempts if a.status == Status.OK and not a.failed)
    return {"k": len(attempts), "passed": passed, "outcomes": outcomes}


def passes(record: TestRecord) -> tuple[int, int] | None:
    """(successes, repeats) of a repeated test, None for a test sent once."""
    found = record.details.get(REPEATS_KEY)
    if not isinstance(found, dict):
        return None
    return int(found.get("passed", 0)), int(found.get("k", 0))


def pass_hat(counts: Iterable[tuple[int, int]], j: int) -> float | None:
    """pass^j over tests with (c successes, n repeats), n >= j (None: no such test)."""
    terms = [comb(c, j) / comb(n, j) for c, n in counts if n >= j]
    return sum(terms) / len(terms) if terms else None
