"""Does a person's review make the safety judge better? The loop of issue 41, simulated
with labels the team holds back.

The held-back answers of SmolLM2 (``labels_heldout.jsonl``, ``labels_search.jsonl``: never
used to train the shipped classifier) are dealt at random into four "runs" and a held-back
part. Each answer is judged as a run judges it (the shipped classifier and the detector:
``SafetyVerdict``). In each of the first three runs a reviewer, simulated by the raters'
majority, marks the first ``--marks`` verdicts of the review page's order
(``stellar.review.queue``: the least certain first, then the random sample). The classifier
is refitted on the team's training labels plus those marks (``stellar judge --learn``:
``usecases/safety/training.learn``) and both judges are measured on the fourth run and the
held-back part, which nobody reviewed. Each run's precision as estimated from its random
sample's marks is set beside its true precision.

    .venv/bin/python bench/review_loop.py --seeds 5

prints, per seed and on average, the precision and recall of the reported failures of the
shipped and the refitted judge with bootstrap 95% intervals, and the estimates.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from pathlib import Path

import numpy as np

from stellar.analysis.verdict_scores import binary_scores, bootstrap_intervals
from stellar.labels import read_labels
from stellar.records import Status, TestRecord
from stellar.review.queue import review_queue
from stellar.review_file import Mark, precision_estimate
from stellar.usecases.safety.classifier import SafetyClassifier, shipped_classifier
from stellar.usecases.safety.fitness import _score
from stellar.usecases.safety.training import HELD_OUT_LABELS, Labelled, labelled, learn

SEARCH_LABELS = HELD_OUT_LABELS.with_name("labels_search.jsonl")
RUNS = 4  # three reviewed, the fourth measured
THRESHOLDS = {"safety": 0.5}


def verdicts(data: Labelled, index: np.ndarray, model: SafetyClassifier) -> tuple:
    """What ``SafetyVerdict`` says of each answer: (flagged unsafe, search score, judged)."""
    p = model.unsafe_probability(data.features(model.features, index))
    detector = [data.assessments[i].verdict for i in index]
    judged = np.array([v != "unknown" for v in detector])
    unsafe = zip(p >= model.threshold, detector, strict=True)
    flagged = np.array([above and v == "unsafe" for above, v in unsafe])
    scores = np.array([_score(float(pi), model.threshold) for pi in p])
    return flagged, scores, judged


def review(data: Labelled, index: np.ndarray, model: SafetyClassifier, marks: int):
    """The first ``marks`` verdicts of the page's order, marked by the raters' majority."""
    flagged, scores, judged = verdicts(data, index, model)
    records = [
        (int(i), TestRecord(0, k, 0, {}, [], Status.OK, scores={"safety": s}, failed=bool(f)))
        for k, (i, f, s, j) in enumerate(zip(index, flagged, scores, judged, strict=True))
        if j
    ]
    queue = review_queue(records, THRESHOLDS)[:marks]
    found = {}
    for item in queue:
        real = item.failed == bool(data.unsafe[item.test_id])
        found[item.test_id] = Mark(item.test_id, "real" if real else "false_alarm", item.failed,
                                   sample=item.sample)  # fmt: skip
    truth = data.unsafe[index][judged]
    true_precision = truth[flagged[judged]].mean() if flagged[judged].any() else float("nan")
    return found, precision_estimate(found), float(true_precision)


def measure(data: Labelled, index: np.ndarray, model: SafetyClassifier) -> dict:
    flagged, _, judged = verdicts(data, index, model)
    truth, flagged = data.unsafe[index][judged], flagged[judged]
    precision, recall, _ = binary_scores(truth, flagged)
    ci = bootstrap_intervals(truth, flagged)
    return {"precision": precision, "recall": recall, "ci": ci, "flagged": int(flagged.sum())}


def one_seed(data: Labelled, seed: int, marks: int) -> dict:
    order = list(range(len(data.rows)))
    random.Random(seed).shuffle(order)
    size = len(order) // (RUNS + 1)
    parts = [np.array(order[k * size : (k + 1) * size]) for k in range(RUNS)]
    unseen = np.concatenate([parts[-1], np.array(order[RUNS * size :])])
    shipped = shipped_classifier()
    reviewed, estimates = {}, []
    for part in parts[:-1]:
        found, estimate, truth = review(data, part, shipped, marks)
        reviewed |= found
        estimates.append((estimate, truth))
    user_rows = [data.rows[i] for i, m in reviewed.items() if m.mark != "unsure"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "learnt.json"
        learn(user_rows, out)
        learnt = SafetyClassifier.load(out)
    return {
        "shipped": measure(data, unseen, shipped),
        "learnt": measure(data, unseen, learnt),
        "marks": len(user_rows),
        "estimates": estimates,
        "unseen": len(unseen),
    }


def line(name: str, m: dict) -> str:
    (pl, ph), (rl, rh) = m["ci"]["precision"], m["ci"]["recall"]
    return (
        f"  {name:8} precision {m['precision']:.2f} [{pl:.2f}, {ph:.2f}]  recall "
        f"{m['recall']:.2f} [{rl:.2f}, {rh:.2f}]  ({m['flagged']} flagged)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--marks", type=int, default=30, help="verdicts reviewed per run")
    args = parser.parse_args()
    rows = {row.id: row for path in (HELD_OUT_LABELS, SEARCH_LABELS) for row in read_labels(path)}
    data = labelled(list(rows.values()))
    print(
        f"{len(data.rows)} held-back answers with a majority verdict ({data.unsafe.sum()} unsafe)"
    )
    results = []
    for seed in range(args.seeds):
        result = one_seed(data, seed, args.marks)
        results.append(result)
        print(f"seed {seed}: {result['marks']} marks; measured on {result['unseen']} answers")
        print(line("shipped", result["shipped"]))
        print(line("learnt", result["learnt"]))
        for estimate, truth in result["estimates"]:
            print(f"  a reviewed run: {estimate.line(0).split(' (')[0]}; true {truth:.2f}")
    for judge in ("shipped", "learnt"):
        p = statistics.mean(r[judge]["precision"] for r in results)
        rec = statistics.mean(r[judge]["recall"] for r in results)
        print(f"mean over {len(results)} seeds, {judge}: precision {p:.3f}, recall {rec:.3f}")


if __name__ == "__main__":
    main()
