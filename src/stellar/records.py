"""The data that flows through a run: inputs, responses, evaluations and test records."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """Outcome of one candidate's trip through the pipeline."""

    OK = "ok"
    INVALID = "invalid"  # empty, too long, or the generator failed
    DUPLICATE = "duplicate"  # too similar to an earlier input of the run
    SUT_ERROR = "sut_error"  # the system under test raised, answered an error, or timed out
    JUDGE_ERROR = "judge_error"  # a fitness function or the oracle failed


DISCARDED = (Status.INVALID, Status.DUPLICATE)
EXCLUDED_REASON = "excluded_reason"  # the details key saying why a test was excluded
REVIEWED_FALSE_ALARM = "reviewed: false alarm"  # why a failure a person rejected is excluded
MODE_KEY = "mode"  # the details entry where a fitness names what went wrong
PLAN_KEY = "plan"  # the details key of a conversation's plan (stellar.dialogue.plan)
DUPLICATE_OF = (
    "duplicate_of"  # the details key: [generation, index] of the input a duplicate matched
)


@dataclass
class TestInput:
    """The text made from a candidate, and the prompt that made it when a model did.

    A conversation also carries its plan (``stellar.dialogue.plan.Plan.to_dict()``); its
    ``text`` is then the user's turns, one per line."""

    __test__ = False  # not a pytest class

    text: str
    prompt: str | None = None
    plan: dict[str, Any] | None = None


@dataclass
class Response:
    """What the system under test gave back."""

    text: str
    data: Any = None  # structured data, e.g. the records a retrieval system returned
    error: str | None = None
    latency: float | None = None


@dataclass
class Evaluation:
    """Fitness scores in [0, 1] (low is bad); ``excluded`` keeps a test out of failure counts."""

    scores: dict[str, float]
    excluded: bool = False
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Verdict:
    """The post-search judge's decision on one executed test (``error``: it gave none)."""

    scores: dict[str, float] = field(default_factory=dict)
    failed: bool | None = None
    excluded: bool = False
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class TestRecord:
    """One candidate's trip through the pipeline, as stored in the archive."""

    __test__ = False  # not a pytest class

    generation: int
    index: int
    seed: int
    candidate: dict[str, Any]
    vector: list[float]
    status: Status = Status.OK
    input_text: str | None = None
    prompt: str | None = None
    response_text: str | None = None
    response_data: Any = None
    scores: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    failed: bool | None = None  # the oracle's verdict
    excluded: bool = False
    error: str | None = None
    similarity: float | None = None  # best similarity to an earlier input; exact if >= threshold
    started_at: float = 0.0
    finished_at: float = 0.0
    generation_seconds: float | None = None
    sut_seconds: float | None = None
    fitness_seconds: float | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    verdict: Verdict | None = None  # the post-search judge's, when the run has one
    review: str | None = None  # a person's mark (stellar review): real, false_alarm, unsure

    @property
    def judge_failure(self) -> bool:
        """Judged failing by the last judge: executed, failing, not excluded (by the
        post-search judge when the run has one), whatever a person said since."""
        if self.verdict is not None:
            final = self.verdict
            return self.judged and bool(final.failed) and not final.excluded
        return self.status == Status.OK and bool(self.failed) and not self.excluded

    @property
    def is_failure(self) -> bool:
        """Counted as a found failure: the judge's failure unless a person marked it a false
        alarm."""
        return self.judge_failure and self.review != "false_alarm"

    @property
    def reviewed_false_alarm(self) -> bool:
        """A judged failure a person marked as a false alarm: excluded from the counts."""
        return self.judge_failure and self.review == "false_alarm"

    @property
    def judged(self) -> bool:
        """Scored without error, by the search's fitness and the post-search judge if any."""
        return self.status == Status.OK and (self.verdict is None or self.verdict.error is None)

    @property
    def awaits_verdict(self) -> bool:
        """Scored by the search, with no post-search verdict yet or one that ended in an error."""
        return self.status == Status.OK and (self.verdict is None or bool(self.verdict.error))

    @property
    def judge_excluded(self) -> bool:
        """Kept out of failure counts by the last judge that scored it."""
        return self.verdict.excluded if self.verdict is not None else self.excluded

    @property
    def final_excluded(self) -> bool:
        """Kept out of failure counts: by the last judge, or by a person's review."""
        return self.judge_excluded or self.reviewed_false_alarm

    @property
    def exclusion_reason(self) -> str | None:
        if self.reviewed_false_alarm:
            return REVIEWED_FALSE_ALARM
        if not self.judge_excluded:
            return None
        details = self.verdict.details if self.verdict is not None else self.details
        return str(details.get(EXCLUDED_REASON) or "excluded by the judge")

    @property
    def executed(self) -> bool:
        """The input reached the system under test."""
        return self.status in (Status.OK, Status.SUT_ERROR, Status.JUDGE_ERROR)
