"""Effect sizes and significance tests for comparing algorithms over seeds."""

from __future__ import annotations

from collections.abc import Sequence

from scipy.stats import mannwhitneyu

# Vargha & Delaney (2000) thresholds on |A12 - 0.5|, as usually reported in SBSE studies.
A12_THRESHOLDS = ((0.06, "negligible"), (0.14, "small"), (0.21, "medium"))


def a12(first: Sequence[float], second: Sequence[float]) -> float:
    """Vargha-Delaney A12: probability that a value of ``first`` exceeds one of ``second``."""
    if not first or not second:
        raise ValueError("A12 needs two non-empty samples")
    wins = sum((x > y) + 0.5 * (x == y) for x in first for y in second)
    return wins / (len(first) * len(second))


def a12_magnitude(value: float) -> str:
    distance = abs(value - 0.5)
    return next((label for limit, label in A12_THRESHOLDS if distance < limit), "large")


def mann_whitney(first: Sequence[float], second: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p-value (1.0 when both samples are constant and equal)."""
    if len(set(first) | set(second)) == 1:
        return 1.0
    return float(mannwhitneyu(first, second, alternative="two-sided").pvalue)
