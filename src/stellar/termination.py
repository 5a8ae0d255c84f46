"""Why a run stops: budgets that compose (like pymoo's terminations) and the stop reasons.

The same budgets are asked by the pipeline's gate before each input is sent to the system
under test and by the search loop between generations. A budget that ``between_tests``
may stop a generation midway (time, money, a stop request); the others (test count,
discard limit) are checked between generations, and the test budget is handed out in
candidate order so that the same seed always gives the same archive.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stellar.config_schema import BudgetConfig


class StopReason(StrEnum):
    """Why a run ended; a finished run ended by a budget or an exhausted search space."""

    TESTS = "test budget reached"
    TIME = "time budget reached"
    COST = "money budget reached"
    DISCARDS = "discard limit reached"
    EXHAUSTED = "search space exhausted"
    UNHEALTHY = "system not healthy"
    INTERRUPTED = "interrupted"
    TERMINATED = "terminated"  # SIGTERM: a CI cancel, `docker stop`
    ABORTED = "aborted"
    MODEL_ERROR = "model error"
    ERROR = "error"

    @property
    def finished(self) -> bool:
        """Whether the run did all it was asked to (an experiment need not redo it)."""
        return self in FINISHED


FINISHED = frozenset(
    {StopReason.TESTS, StopReason.TIME, StopReason.COST, StopReason.DISCARDS, StopReason.EXHAUSTED}
)


@dataclass(frozen=True)
class Stop:
    reason: StopReason
    message: str  # what the user reads, e.g. "test budget reached (200 tests)"


@dataclass
class Progress:
    """What the budgets look at; the run updates it as tests complete."""

    tests: int = 0  # inputs sent to the system under test
    modes: int = 0  # failure modes found so far
    discarded: int = 0  # duplicate or invalid inputs
    errors: int = 0  # SUT and judge errors
    started: float = field(default_factory=time.monotonic)
    spent: Callable[[], float] = lambda: 0.0  # USD, including calls not yet committed


class Termination:
    """One budget; ``check`` returns a Stop once it is used up."""

    between_tests = True

    def check(self, progress: Progress) -> Stop | None:
        raise NotImplementedError


@dataclass
class TestBudget(Termination):
    limit: int
    between_tests = False  # handed out in candidate order by the loop, not by timing
    __test__ = False  # not a pytest test class

    def check(self, progress: Progress) -> Stop | None:
        if progress.tests >= self.limit:
            return Stop(StopReason.TESTS, f"{StopReason.TESTS} ({self.limit} tests)")
        return None

    def left(self, progress: Progress) -> int:
        return self.limit - progress.tests


@dataclass
class TimeBudget(Termination):
    seconds: float

    def check(self, progress: Progress) -> Stop | None:
        if time.monotonic() - progress.started >= self.seconds:
            return Stop(StopReason.TIME, f"{StopReason.TIME} ({self.seconds:g} s)")
        return None


@dataclass
class CostBudget(Termination):
    usd: float

    def check(self, progress: Progress) -> Stop | None:
        spent = progress.spent()
        if spent >= self.usd:
            return Stop(StopReason.COST, f"{StopReason.COST} (${spent:.4f} of ${self.usd:g})")
        return None


@dataclass
class DiscardLimit(Termination):
    limit: int
    between_tests = False

    def check(self, progress: Progress) -> Stop | None:
        if progress.discarded >= self.limit:
            return Stop(
                StopReason.DISCARDS,
                f"{StopReason.DISCARDS} ({progress.discarded} duplicate or invalid inputs; "
                "raise budget.max_discarded or widen the feature space)",
            )
        return None


@dataclass
class HealthCheck(Termination):
    """Stops once more than ``max_error_rate`` of at least ``min_tests`` tests were errors."""

    max_error_rate: float
    min_tests: int = 10
    between_tests = False

    def check(self, progress: Progress) -> Stop | None:
        if (
            progress.tests >= self.min_tests
            and progress.errors > self.max_error_rate * progress.tests
        ):
            return Stop(
                StopReason.UNHEALTHY,
                f"{StopReason.UNHEALTHY}: {progress.errors} of {progress.tests} tests were errors",
            )
        return None


@dataclass
class StopRequest(Termination):
    """Ctrl-C, a fatal model error: stop after the tests in flight."""

    event: asyncio.Event = field(default_factory=asyncio.Event)
    stop: Stop | None = None

    def request(self, reason: StopReason, message: str = "") -> None:
        self.stop = self.stop or Stop(reason, message or str(reason))
        self.event.set()

    def check(self, progress: Progress) -> Stop | None:
        return self.stop if self.event.is_set() else None


@dataclass
class AnyOf(Termination):
    """Stops at the first of its budgets that is used up (in the order given)."""

    budgets: Sequence[Termination]

    def check(self, progress: Progress, between_tests: bool = False) -> Stop | None:
        for budget in self.budgets:
            if between_tests and not budget.between_tests:
                continue
            stop = budget.check(progress)
            if stop is not None:
                return stop
        return None

    def tests_left(self, progress: Progress) -> int | None:
        limits = [b.left(progress) for b in self.budgets if isinstance(b, TestBudget)]
        return min(limits) if limits else None


# stopped by a person or a model error, not by the tests: no health verdict
STOPPED_EARLY = (
    StopReason.INTERRUPTED,
    StopReason.TERMINATED,
    StopReason.ABORTED,
    StopReason.MODEL_ERROR,
)


def budgets(budget: BudgetConfig) -> list[Termination]:
    """The configured budgets, in the order their stop reasons are reported."""
    found: list[Termination] = []
    if budget.tests is not None:
        found.append(TestBudget(budget.tests))
    if budget.time is not None:
        found.append(TimeBudget(budget.time))
    if budget.cost is not None:
        found.append(CostBudget(budget.cost))
    found.append(DiscardLimit(budget.discard_limit))
    found.append(HealthCheck(budget.max_error_rate, min(10, budget.tests or 10)))
    return found
