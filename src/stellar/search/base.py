"""The ask/tell interface every search algorithm implements."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Protocol

from stellar.features import Candidate, FeatureSpace
from stellar.records import Status, TestRecord


class Algorithm(Protocol):
    """Proposes candidates and learns from their scores; never calls the system under test.

    ``tell`` receives, for each asked candidate, its objective values (lower is worse for the
    system under test, so the search minimises them), or None when the candidate was
    discarded (duplicate, invalid) or could not be scored: such candidates never enter the
    population.
    """

    name: str

    def ask(self) -> list[Candidate]: ...

    def tell(
        self, candidates: Sequence[Candidate], scores: Sequence[Sequence[float] | None]
    ) -> None: ...


class AlgorithmFactory(Protocol):
    def __call__(
        self, space: FeatureSpace, n_objectives: int, seed: int, **settings
    ) -> Algorithm: ...


Failing = Callable[[Sequence[float]], bool]
"""Whether an objective vector is a failure by the run's oracle (for diversity-aware search)."""


def failing_below(limits: Sequence[float | None]) -> Failing:
    """Failure when any objective is below its limit (None: that objective never fails)."""
    pairs = [(i, limit) for i, limit in enumerate(limits) if limit is not None]

    def failing(scores: Sequence[float]) -> bool:
        return any(scores[i] < limit for i, limit in pairs)

    return failing


OUTCOMES = ("modes", "excluded", "duplicate")
"""What a search is told besides scores, each by keyword when its ``tell`` takes it."""


def outcomes(records: Sequence[TestRecord | None], modes: Sequence[Hashable | None]):
    """Per candidate: its failure mode (None: passed or not run), whether its test was kept
    out of the verdicts, and whether its input was discarded as a duplicate (so a search can
    learn where the generator only repeats itself)."""
    return {
        "modes": list(modes),
        "excluded": [bool(r and r.excluded) for r in records],
        "duplicate": [bool(r and r.status == Status.DUPLICATE) for r in records],
    }
