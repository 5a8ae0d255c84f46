"""What a run did, and why it stopped (``summary.json``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stellar.llm.usage import add_usage, total_cost
from stellar.records import Status, TestRecord


@dataclass
class RunSummary:
    """Counts, cost and the stop reason of one run."""

    run_dir: str
    algorithm: str
    seed: int
    tests: int = 0  # inputs sent to the system under test
    verdicts: int = 0  # tests the oracle judged (not errors, not excluded)
    failures: int = 0
    duplicates: int = 0
    invalid: int = 0
    sut_errors: int = 0
    judge_errors: int = 0
    excluded: int = 0
    generations: int = 0
    elapsed: float = 0.0
    stop_reason: str = ""  # a StopReason value
    stop_message: str = ""  # what the user reads, e.g. "test budget reached (200 tests)"
    error: str | None = None  # a model refused the key or is unknown: the run stopped early
    unhealthy: str | None = None  # too many errors, or no verdict: the results mean little
    first_error: str | None = None  # the first SUT or judge error, as a hint
    cost: float = 0.0  # USD spent on model calls
    usage: dict[str, dict[str, float]] = field(default_factory=dict)  # per role
    algorithm_report: dict[str, Any] = field(default_factory=dict)  # e.g. t-wise coverage
    unpriced: list[str] = field(default_factory=list)  # hosted models without a price
    failure_ratio: float = field(init=False, default=0.0)

    def count(self, record: TestRecord) -> None:
        self.tests += record.executed
        self.verdicts += record.status == Status.OK and not record.excluded
        self.failures += record.is_failure
        self.excluded += record.status == Status.OK and record.excluded
        self.duplicates += record.status == Status.DUPLICATE
        self.invalid += record.status == Status.INVALID
        self.sut_errors += record.status == Status.SUT_ERROR
        self.judge_errors += record.status == Status.JUDGE_ERROR
        if record.status in (Status.SUT_ERROR, Status.JUDGE_ERROR) and self.first_error is None:
            self.first_error = f"{record.status}: {record.error}"
        self.failure_ratio = self.failures / self.verdicts if self.verdicts else 0.0
        self.count_usage(record.usage)

    def count_usage(self, usage: dict[str, dict[str, float]]) -> None:
        if usage:
            add_usage(self.usage, usage)
            self.cost = total_cost(self.usage)

    @property
    def discarded(self) -> int:
        return self.duplicates + self.invalid

    @property
    def errors(self) -> int:
        return self.sut_errors + self.judge_errors

    def check_health(self, max_error_rate: float) -> None:
        """Set ``unhealthy`` when errors exceed the rate or no test reached a verdict."""
        if self.tests and self.errors / self.tests > max_error_rate:
            self.unhealthy = (
                f"{self.errors} of {self.tests} tests ended in errors ({self.sut_errors} from "
                f"the system under test, {self.judge_errors} from the judges), more than "
                f"{max_error_rate:.0%}"
            )
        elif not self.verdicts:
            self.unhealthy = "no test reached a verdict" + (
                "" if self.tests else " (no input reached the system under test)"
            )
