"""Metrics read from a run's archive."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stellar.archive import open_run


@dataclass
class RunMetrics:
    tests: int
    unique_failures: int

    @property
    def failure_ratio(self) -> float:
        return self.unique_failures / self.tests if self.tests else 0.0


def run_metrics(run_dir: str | Path) -> RunMetrics:
    """Tests executed and failures counted once per distinct input text."""
    with open_run(run_dir) as archive:
        counts = archive.counts()
        inputs = {r.input_text for r in archive.records(failures_only=True)}
    tests = counts["ok"] + counts["sut_error"] + counts["judge_error"]
    return RunMetrics(tests=tests, unique_failures=len(inputs))
