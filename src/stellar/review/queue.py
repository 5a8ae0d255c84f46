"""The order in which a person reviews a run's verdicts, and what the marks let us say.

A reviewer's minute is best spent in two ways, so the queue has two parts:

* **the least certain verdicts first** (``uncertain`` of them): those whose search-time
  scores lie nearest the oracle's thresholds, failures and passes alike. A person's mark
  there teaches a judge the most, but they are no fair sample of the run;
* **then a random sample**: every failure and up to ``passes`` passes, in a seeded random
  order. Marks of the failures in this part estimate the share of the run's failures that
  are real (its precision) without the bias of the first part; the passes show what the
  judge missed.

The estimate (:func:`~stellar.review_file.precision_estimate`) is the share of real
failures among the random part's failures marked real or false alarm, with a Wilson 95%
interval.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stellar.records import TestRecord
from stellar.review_file import PrecisionEstimate, precision_estimate

__all__ = ["PrecisionEstimate", "QueueItem", "precision_estimate", "review_queue"]

UNCERTAIN_FIRST = 10  # least certain verdicts reviewed before the random sample
PASS_SAMPLE = 20  # passes in the random part, at most
SEED = 0


@dataclass(frozen=True)
class QueueItem:
    test_id: int
    sample: str  # "uncertain" or "random"
    failed: bool  # the judge's verdict
    margin: float | None  # distance of its scores from the thresholds; None: unknown


def margin(record: TestRecord, thresholds: Mapping[str, float]) -> float | None:
    """How far the search-time scores are from changing the verdict: for a failure, how far
    its lowest score lies below its threshold (a failure at 0.49 under 0.5 is less certain
    than one at 0.0, whatever its other scores); for a pass, how near its nearest score
    comes to one."""
    scored = [(record.scores[k], t) for k, t in thresholds.items() if k in record.scores]
    if not scored:
        return None
    below = [t - s for s, t in scored if s < t]
    return max(below) if below else min(s - t for s, t in scored)


def review_queue(
    numbered: Sequence[tuple[int, TestRecord]],
    thresholds: Mapping[str, float],
    uncertain: int = UNCERTAIN_FIRST,
    passes: int = PASS_SAMPLE,
    seed: int = SEED,
) -> list[QueueItem]:
    """The run's judged verdicts in review order (see the module); marks are not read, so
    the order stays the same while a person reviews."""
    judged = [(i, r) for i, r in numbered if r.judged and not r.judge_excluded]
    items = [QueueItem(i, "", r.judge_failure, margin(r, thresholds)) for i, r in judged]
    known = sorted((m.margin, m.test_id) for m in items if m.margin is not None)
    first = {test_id for _, test_id in known[:uncertain]}
    rng = random.Random(seed)
    failures = [m.test_id for m in items if m.failed and m.test_id not in first]
    passing = [m.test_id for m in items if not m.failed and m.test_id not in first]
    sample = failures + rng.sample(passing, min(passes, len(passing)))
    rng.shuffle(sample)
    by_id = {m.test_id: m for m in items}
    ordered = [(test_id, "uncertain") for _, test_id in known[:uncertain]]
    ordered += [(test_id, "random") for test_id in sample]
    return [
        QueueItem(test_id, part, by_id[test_id].failed, by_id[test_id].margin)
        for test_id, part in ordered
    ]
