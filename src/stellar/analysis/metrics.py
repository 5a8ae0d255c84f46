"""Metrics read from a run's archive: failures, failure ratio, elapsed time, curves, rates.

A *failure* is the archive's: an ``ok`` test the oracle flags and that is not excluded, so
duplicates, invalid inputs and excluded tests never count. *Unique* failures count each
distinct input text once. *Tests* are executed tests: inputs that reached the system under
test (``ok``, ``sut_error`` or ``judge_error``).

Every function takes a run directory or a :class:`RunData` from :func:`load_run`, so a
caller that needs several metrics reads each archive once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stellar.archive import open_run
from stellar.records import TestRecord
from stellar.rundir import read_summary


@dataclass
class RunData:
    """Everything the analysis needs from one run directory, read once."""

    run_dir: Path
    records: list[TestRecord]
    meta: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)  # summary.json, {} when missing

    @property
    def executed(self) -> list[TestRecord]:
        return [r for r in self.records if r.executed]

    @property
    def failures(self) -> list[TestRecord]:
        return [r for r in self.records if r.is_failure]


@dataclass
class RunMetrics:
    tests: int
    unique_failures: int
    elapsed: float = 0.0  # seconds
    failures: int = 0  # failing tests, as the run's summary counts them
    verdicts: int = 0  # tests judged pass or fail (not errors, not excluded)

    @property
    def failure_ratio(self) -> float:
        """Failures among the verdicts: the summary's own ratio."""
        return self.failures / self.verdicts if self.verdicts else 0.0


@dataclass(frozen=True)
class CurvePoint:
    """State of a run after one more executed test."""

    tests: int  # executed tests so far
    seconds: float  # since the first test of the run started
    unique_failures: int  # distinct failing inputs so far


@dataclass(frozen=True)
class FeatureRate:
    """Failing share of the executed tests whose candidate had ``feature = value``."""

    feature: str
    value: str
    tests: int
    failures: int  # failing tests (not deduplicated by text)
    rate: float


RunLike = str | Path | RunData


def load_run(run_dir: str | Path) -> RunData:
    """Read a run's records, archive metadata and summary.json."""
    run_dir = Path(run_dir)
    with open_run(run_dir) as archive:
        records = list(archive.records())
        meta = archive.meta()
    summary = read_summary(run_dir) or meta.get("summary") or {}
    return RunData(run_dir, records, meta, summary)


def _data(run: RunLike) -> RunData:
    return run if isinstance(run, RunData) else load_run(run)


def unique_failure_texts(run: RunLike) -> list[str]:
    """Distinct failing input texts, in the order first found."""
    return list(dict.fromkeys(r.input_text or "" for r in _data(run).failures))


def elapsed(run: RunLike) -> float:
    """Run time in seconds: summary.json's ``elapsed``, else first start to last finish."""
    data = _data(run)
    if data.summary.get("elapsed") is not None:
        return float(data.summary["elapsed"])
    started = [r.started_at for r in data.records if r.started_at]
    finished = [r.finished_at for r in data.records if r.finished_at]
    return max(finished) - min(started) if started and finished else 0.0


def run_metrics(run: RunLike) -> RunMetrics:
    """Tests executed, failures counted once per distinct input text, elapsed seconds, and
    failures among verdicts as the run's summary counts them."""
    data = _data(run)
    return RunMetrics(
        tests=len(data.executed),
        unique_failures=len(unique_failure_texts(data)),
        elapsed=elapsed(data),
        failures=len(data.failures),
        verdicts=sum(r.judged and not r.final_excluded for r in data.records),
    )


def failure_curve(run: RunLike) -> list[CurvePoint]:
    """One point per executed test, in completion order."""
    data = _data(run)
    starts = [r.started_at for r in data.records if r.started_at]
    origin = min(starts) if starts else 0.0
    seen: set[str] = set()
    points = []
    executed = sorted(data.executed, key=lambda r: r.finished_at)  # stable: ties keep id order
    for n, record in enumerate(executed, start=1):
        if record.is_failure:
            seen.add(record.input_text or "")
        points.append(CurvePoint(n, max(0.0, record.finished_at - origin), len(seen)))
    return points


def feature_failure_rates(runs: Iterable[RunLike]) -> list[FeatureRate]:
    """Failure rate per feature value over the executed tests of ``runs`` taken together.

    Features keep the order of the candidates' keys; values are sorted by their encoded
    coordinate in the test's vector (the feature space's order) when vectors are stored.
    """
    counts: dict[str, dict[str, list[int]]] = {}
    order: dict[tuple[str, str], float] = {}
    for run in runs:
        for record in _data(run).executed:
            aligned = len(record.vector or []) == len(record.candidate)
            for i, (feature, value) in enumerate(record.candidate.items()):
                cell = counts.setdefault(feature, {}).setdefault(str(value), [0, 0])
                cell[0] += 1
                cell[1] += record.is_failure
                key = (feature, str(value))
                if key not in order:
                    order[key] = record.vector[i] if aligned else float(len(order))
    rates = []
    for feature, values in counts.items():
        for value in sorted(values, key=lambda v: order[(feature, v)]):
            tests, failures = values[value]
            rates.append(FeatureRate(feature, value, tests, failures, failures / tests))
    return rates
