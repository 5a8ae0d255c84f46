"""Pairwise comparison of algorithms over seeds, and the rows of a summary table.

Significance: two-sided Mann-Whitney U, significant at ``p < ALPHA`` (0.05). Effect size:
Vargha-Delaney A12, the probability that a run of ``first`` scores higher than a run of
``second`` (0.5: no difference); its magnitude is negligible / small / medium / large by
``|A12 - 0.5|`` against ``statistics.A12_THRESHOLDS`` (0.06, 0.14, 0.21).
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass

from stellar.analysis.statistics import A12_THRESHOLDS, a12, a12_magnitude, mann_whitney

ALPHA = 0.05
THRESHOLDS = {"alpha": ALPHA, "a12": A12_THRESHOLDS}


@dataclass(frozen=True)
class PairRow:
    """``first`` versus ``second`` on one metric; A12 > 0.5 favours ``first``."""

    metric: str
    first: str
    second: str
    mean_first: float
    mean_second: float
    p_value: float
    a12: float
    magnitude: str

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA


def compare(values: dict[str, list[float]], first: str, second: str, metric: str) -> PairRow:
    x, y = values[first], values[second]
    effect = a12(x, y)
    return PairRow(
        metric,
        first,
        second,
        statistics.fmean(x),
        statistics.fmean(y),
        mann_whitney(x, y),
        effect,
        a12_magnitude(effect),
    )


def pairwise(values: dict[str, list[float]], metric: str) -> list[PairRow]:
    """Every unordered pair of algorithms, ``first`` before ``second`` in ``values``' order.

    ``values`` maps an algorithm to one value per run (seed); algorithms without runs are
    left out. The reverse direction follows: A12(second, first) = 1 - A12(first, second).
    """
    names = [name for name, runs in values.items() if runs]
    return [compare(values, a, b, metric) for a, b in itertools.combinations(names, 2)]


@dataclass(frozen=True)
class SummaryRow:
    algorithm: str
    runs: int
    mean_failures: float
    mean_failure_ratio: float
    mean_coverage: float | None  # None when diversity was not computed


@dataclass(frozen=True)
class Headline:
    """The algorithm with most failures versus the runner-up, on unique failures."""

    best: str
    other: str
    mean_best: float
    mean_other: float
    ratio: float | None  # mean_best / mean_other; None when other found none
    p_value: float
    a12: float
    magnitude: str

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA


@dataclass(frozen=True)
class Summary:
    rows: list[SummaryRow]
    headline: Headline | None  # None with fewer than two algorithms with runs


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def summary_rows(
    failures: dict[str, list[float]],
    ratios: dict[str, list[float]],
    coverage: dict[str, list[float]] | None = None,
) -> Summary:
    """Per algorithm means, and the best algorithm (most mean failures) versus the next."""
    rows = [
        SummaryRow(
            algorithm,
            len(runs),
            _mean(runs),
            _mean(ratios.get(algorithm, [])),
            _mean(coverage.get(algorithm, [])) if coverage is not None else None,
        )
        for algorithm, runs in failures.items()
    ]
    ranked = sorted((r for r in rows if r.runs), key=lambda r: -r.mean_failures)
    if len(ranked) < 2:
        return Summary(rows, None)
    best, other = ranked[0], ranked[1]
    row = compare(failures, best.algorithm, other.algorithm, "failures")
    ratio = best.mean_failures / other.mean_failures if other.mean_failures else None
    headline = Headline(
        best.algorithm,
        other.algorithm,
        best.mean_failures,
        other.mean_failures,
        ratio,
        row.p_value,
        row.a12,
        row.magnitude,
    )
    return Summary(rows, headline)
