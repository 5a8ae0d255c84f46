"""Precision, recall and F1 of binary verdicts (failure = positive), with bootstrap 95%
intervals: how far a judge agrees with people's labels, and how sure that figure is."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import bootstrap


def binary_scores(truth: Sequence[bool], flagged: Sequence[bool]) -> tuple[float, float, float]:
    """Precision, recall and F1 of ``flagged`` (failure = positive), 0 where undefined."""
    p, r, f1 = _vector_scores(np.asarray(truth, dtype=bool), np.asarray(flagged, dtype=bool))
    return float(p), float(r), float(f1)


def _vector_scores(
    truth: np.ndarray, flagged: np.ndarray, axis: int = -1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    tp = np.sum(truth & flagged, axis=axis)
    fp = np.sum(~truth & flagged, axis=axis)
    fn = np.sum(truth & ~flagged, axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 0.0)
        recall = np.where(tp + fn > 0, tp / np.maximum(tp + fn, 1), 0.0)
        f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 0.0)
    return precision, recall, f1


def bootstrap_intervals(
    truth: Sequence[bool], flagged: Sequence[bool], resamples: int = 2000, seed: int = 0
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap 95% intervals of precision, recall and F1 (rows resampled)."""
    truth_a, flagged_a = np.asarray(truth, dtype=bool), np.asarray(flagged, dtype=bool)
    if len(truth_a) < 2:
        return {}
    intervals = {}
    for k, name in enumerate(("precision", "recall", "f1")):

        def statistic(t: np.ndarray, f: np.ndarray, axis: int = -1, k: int = k) -> np.ndarray:
            return _vector_scores(t.astype(bool), f.astype(bool), axis)[k]

        found = bootstrap(
            (truth_a, flagged_a),
            statistic,
            paired=True,
            vectorized=True,
            n_resamples=resamples,
            method="percentile",
            rng=np.random.default_rng(seed),
        ).confidence_interval
        intervals[name] = (float(found.low), float(found.high))
    return intervals
