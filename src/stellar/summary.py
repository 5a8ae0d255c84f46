"""What a run did, and why it stopped (``summary.json``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from stellar.dialogue.plan import MODEL, MODEL_RETRY
from stellar.llm.usage import add_usage, total_cost
from stellar.pass_k import pass_hat, passes
from stellar.records import MODE_KEY, PLAN_KEY, Status, TestRecord

MODEL_SOURCES = (MODEL, MODEL_RETRY)  # the Turn.source of words a model wrote
LOW_MODEL_SHARE = 0.5  # below it, the run says the simulated user was mostly the template's

OUTCOMES = (
    "tests",
    "turns",
    "verdicts",
    "failures",
    "duplicates",
    "invalid",
    "sut_errors",
    "judge_errors",
    "excluded",
)


@dataclass
class RunSummary:
    """Counts, cost and the stop reason of one run."""

    run_dir: str
    algorithm: str
    seed: int
    tests: int = 0  # inputs sent to the system under test
    turns: int = 0  # conversations: the user turns they sent, clarifying ones included
    verdicts: int = 0  # tests the oracle judged (not errors, not excluded)
    failures: int = 0
    modes: int = 0  # failure modes the search found as it ran (stellar.modes)
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
    approximate: str | None = None  # why the results only approximate the system's behaviour
    first_error: str | None = None  # the first SUT or judge error, as a hint
    cost: float = 0.0  # USD spent on model calls
    usage: dict[str, dict[str, float]] = field(default_factory=dict)  # per role
    cached_answers: int = 0  # answers of the system under test taken from the model cache
    algorithm_report: dict[str, Any] = field(default_factory=dict)  # e.g. t-wise coverage
    unpriced: list[str] = field(default_factory=list)  # hosted models without a price
    post_search: dict[str, Any] = field(default_factory=dict)  # judge, judged, pending, usage
    simulated_user: dict[str, Any] = field(default_factory=dict)  # turns a model wrote, per act
    repeated: dict[str, int] = field(default_factory=dict)  # repeated tests: passes -> tests
    repeated_modes: dict[str, list[int]] = field(default_factory=dict)  # [failing, every repeat]
    failure_ratio: float = field(init=False, default=0.0)

    def count(self, record: TestRecord) -> None:
        self._tally(record)
        self.count_usage(record.usage)

    def recount(self, records: Iterable[TestRecord]) -> None:
        """Count the outcomes again from the archive (after the post-search judge); the
        search's usage stays, the post-search judge's is kept apart and added to the cost."""
        for name in OUTCOMES:
            setattr(self, name, 0)
        self.first_error = None
        self.simulated_user, self.repeated, self.repeated_modes = {}, {}, {}
        post_usage: dict[str, dict[str, float]] = {}
        for record in records:
            self._tally(record)
            if record.verdict is not None and record.verdict.usage:
                add_usage(post_usage, record.verdict.usage)
        self.post_search["usage"] = post_usage
        self.cost = total_cost(self.usage) + total_cost(post_usage)

    def _tally(self, record: TestRecord) -> None:
        self.tests += record.executed
        data = record.response_data
        if isinstance(data, dict) and PLAN_KEY in record.details:
            self.turns += len(data.get("turns") or ())
        if record.judged and not record.final_excluded and (found := passes(record)) is not None:
            key = f"{found[0]}/{found[1]}"
            self.repeated[key] = self.repeated.get(key, 0) + 1
            if record.is_failure and (mode := record.details.get(MODE_KEY)):
                counts = self.repeated_modes.setdefault(str(mode), [0, 0])
                counts[0], counts[1] = counts[0] + 1, counts[1] + (found[0] == 0)
        if record.executed and isinstance(record.details.get(PLAN_KEY), dict):
            self._tally_writers(record.details[PLAN_KEY].get("turns") or ())
        self.verdicts += record.judged and not record.final_excluded
        self.failures += record.is_failure
        self.excluded += record.judged and record.final_excluded
        self.duplicates += record.status == Status.DUPLICATE
        self.invalid += record.status == Status.INVALID
        self.sut_errors += record.status == Status.SUT_ERROR
        final_error = record.verdict.error if record.verdict is not None else None
        self.judge_errors += record.status == Status.JUDGE_ERROR or final_error is not None
        if self.first_error is None:
            if record.status in (Status.SUT_ERROR, Status.JUDGE_ERROR):
                self.first_error = f"{record.status}: {record.error}"
            elif final_error is not None:
                self.first_error = f"post-search judge: {final_error}"
        self.failure_ratio = self.failures / self.verdicts if self.verdicts else 0.0

    def _tally_writers(self, turns: Iterable[Any]) -> None:
        """Count the turns a model was asked to write and those it wrote acceptably, per act
        (``acts``: act -> [kept, asked])."""
        for turn in turns:
            if not isinstance(turn, dict):
                continue
            kept = turn.get("source") in MODEL_SOURCES
            if not (kept or turn.get("rejected")):
                continue  # a template's turn no model was asked for
            counts = self.simulated_user.setdefault("acts", {}).setdefault(turn["act"], [0, 0])
            counts[0], counts[1] = counts[0] + kept, counts[1] + 1
            self.simulated_user["model"] = self.simulated_user.get("model", 0) + kept
            self.simulated_user["asked"] = self.simulated_user.get("asked", 0) + 1

    def count_usage(self, usage: dict[str, dict[str, float]]) -> None:
        if usage:
            add_usage(self.usage, usage)
            self.cost = total_cost(self.usage)
            self.cached_answers = int(self.usage.get("sut", {}).get("cached", 0))

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


def simulated_user_lines(written: dict[str, Any]) -> tuple[str, str]:
    """What ``RunSummary.simulated_user`` (or the sum of several runs') says: how much of the
    user the model played, per act, and a warning under ``LOW_MODEL_SHARE`` ("" when the
    model wrote enough, or no model was asked)."""
    asked = int(written.get("asked", 0))
    if not asked:
        return "", ""
    share = int(written.get("model", 0)) / asked
    acts = written.get("acts") or {}
    per_act = ", ".join(f"{act} {kept}/{n}" for act, (kept, n) in sorted(acts.items()))
    line = (
        f"simulated user: the model wrote {written.get('model', 0)} of {asked} turns "
        f"acceptably ({share:.0%}; {per_act}); the rest are the template's"
    )
    warning = ""
    if share < LOW_MODEL_SHARE:
        warning = (
            f"the model wrote under {LOW_MODEL_SHARE:.0%} of the user's turns acceptably: "
            "use a stronger model to play the user (docs/dialogue.md)"
        )
    return line, warning


def added_writers(summaries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The ``simulated_user`` counts of several runs, summed."""
    total: dict[str, Any] = {}
    for summary in summaries:
        written = summary.get("simulated_user") or {}
        for act, (kept, asked) in (written.get("acts") or {}).items():
            counts = total.setdefault("acts", {}).setdefault(act, [0, 0])
            counts[0], counts[1] = counts[0] + kept, counts[1] + asked
        for key in ("model", "asked"):
            total[key] = total.get(key, 0) + int(written.get(key, 0))
    return total


def pass_k_line(repeated: dict[str, int], modes: dict[str, list[int]] | None = None) -> str:
    """pass^1 .. pass^k of a run's repeated tests ("" when no test was repeated), and for the
    largest failure modes how many of their tests failed every repeat (a hard failure) rather
    than some (a flaky one)."""
    counts = [tuple(map(int, key.split("/"))) for key, n in repeated.items() for _ in range(n)]
    if not counts:
        return ""
    k = max(n for _, n in counts)
    hats = [f"pass^{j} {pass_hat(counts, j):.2f}" for j in range(1, k + 1)]
    every = sum(1 for c, n in counts if c == n)
    line = f"repeated {k}x: {every} of {len(counts)} tests passed every repeat; {', '.join(hats)}"
    largest = sorted((modes or {}).items(), key=lambda item: -item[1][0])[:MODES_SHOWN]
    for mode, (failing, always) in largest:
        line += f"\n  {mode}: {always} of {failing} failing tests failed every repeat"
    return line


MODES_SHOWN = 5  # failure modes whose repeats the summary lists
