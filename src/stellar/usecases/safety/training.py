"""Fitting the offline safety classifier on labelled answers: the team's labels, and a
user's marks on top (``stellar judge RUN_DIR --learn``).

``scripts/train_safety_judge.py`` trains the shipped classifier with these functions; a
user's refit keeps its feature set and regularisation (chosen by cross-validation on the
team's 1,001 training answers) and learns the coefficients again on those answers plus the
user's, each of the user's weighing ``USER_WEIGHT`` times as much: they are answers of the
user's own system, and a few dozen marks must be able to move a model fitted on a thousand.
The probability threshold is chosen again by cross-validation: the most precise one that
gives up at most ``RECALL_GIVEN`` of recall; a person who corrects false alarms wants fewer.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stellar.labels import LabelledAnswer, read_labels
from stellar.usecases.safety.classifier import WEIGHTS, SafetyClassifier, feature_rows
from stellar.usecases.safety.detector import Assessment, assess, categories

SHIPPED_LABELS = Path(__file__).parent / "labels.jsonl"
HELD_OUT_LABELS = Path(__file__).parent / "labels_heldout.jsonl"
USER_WEIGHT = 5.0  # one of the user's answers counts as this many of the team's
RECALL_GIVEN = 0.1  # recall the threshold may give up for precision (cross-validated)
THRESHOLDS = np.round(np.arange(0.2, 0.91, 0.05), 2)
FOLDS = 5


def majority_unsafe(row: LabelledAnswer) -> bool | None:
    """The raters' majority: True unsafe, False safe, None a tie or "unknown". As in
    ``stellar calibrate``, any other verdict is not a failure (a review mark says "pass")."""
    verdicts = [label.get("verdict") for label in row.labels]
    verdicts = [v for v in verdicts if v not in (None, "unknown")]
    unsafe = verdicts.count("unsafe")
    safe = len(verdicts) - unsafe
    if unsafe == safe:
        return None
    return unsafe > safe


@dataclass
class Labelled:
    """The answers with a majority verdict, and what the classifier reads of them."""

    rows: list[LabelledAnswer]
    unsafe: np.ndarray  # bool per row
    answers: np.ndarray  # embeddings
    requests: np.ndarray
    assessments: list[Assessment]

    def features(self, name: str, index: np.ndarray | None = None) -> np.ndarray:
        pick = np.arange(len(self.rows)) if index is None else index
        return feature_rows(
            self.answers[pick], self.requests[pick], [self.assessments[i] for i in pick], name
        )


def labelled(rows: Sequence[LabelledAnswer]) -> Labelled:
    """The rows with a majority verdict, embedded and assessed by the detector."""
    from stellar.text.embeddings import get_embedder

    rows = [row for row in rows if majority_unsafe(row) is not None]
    embedder = get_embedder("minilm")
    known = set(categories())

    def assessment(row: LabelledAnswer) -> Assessment:
        category = row.candidate.get("category")
        return assess(row.input, row.answer, category if category in known else None)

    return Labelled(
        rows=rows,
        unsafe=np.array([bool(majority_unsafe(row)) for row in rows], dtype=bool),
        answers=embedder.embed([row.answer for row in rows]),
        requests=embedder.embed([row.input for row in rows]),
        assessments=[assessment(row) for row in rows],
    )


def team_training_rows() -> list[LabelledAnswer]:
    """The shipped labels the shipped classifier was trained on (not the held-out part)."""
    held = {row.id for row in read_labels(HELD_OUT_LABELS)}
    return [row for row in read_labels(SHIPPED_LABELS) if row.id not in held]


@functools.cache
def team_labelled() -> Labelled:
    """The team's training answers, embedded once a process (a thousand answers: seconds)."""
    return labelled(team_training_rows())


def fit(
    x: np.ndarray, y: np.ndarray, c: float, weights: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=5000, class_weight="balanced")
    model.fit(x, y, sample_weight=weights)
    return model.coef_[0], float(model.intercept_[0])


def best_threshold(
    x: np.ndarray, y: np.ndarray, c: float, weights: np.ndarray, shipped: float
) -> float:
    """The threshold of the best weighted out-of-fold precision among those whose recall
    stays within ``RECALL_GIVEN`` of the recall at the ``shipped`` threshold (stratified
    folds, seed 0): fewer false alarms, at a bounded cost in failures missed."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import precision_score, recall_score
    from sklearn.model_selection import StratifiedKFold

    p = np.zeros(len(y))
    for train, held in StratifiedKFold(FOLDS, shuffle=True, random_state=0).split(x, y):
        model = LogisticRegression(C=c, max_iter=5000, class_weight="balanced")
        model.fit(x[train], y[train], sample_weight=weights[train])
        p[held] = model.predict_proba(x[held])[:, 1]

    def recall(t: float) -> float:
        return recall_score(y, p >= t, sample_weight=weights, zero_division=0.0)

    floor = recall(shipped) - RECALL_GIVEN
    allowed = [t for t in THRESHOLDS if recall(t) >= floor] or [shipped]
    return float(
        max(
            allowed,
            key=lambda t: precision_score(y, p >= t, sample_weight=weights, zero_division=0.0),
        )
    )


def learn(user_rows: Sequence[LabelledAnswer], out: Path) -> dict[str, Any]:
    """Refit the classifier on the team's training answers and ``user_rows``; write it to
    ``out`` (atomically) in the shipped file's format and return what it was trained on."""
    shipped = SafetyClassifier.load(WEIGHTS)
    team, user = team_labelled(), labelled(user_rows)
    if not len(user.rows):
        raise ValueError("none of the marks says safe or unsafe: nothing to learn")
    x = np.vstack([team.features(shipped.features), user.features(shipped.features)])
    y = np.concatenate([team.unsafe, user.unsafe])
    weights = np.concatenate([np.ones(len(team.rows)), np.full(len(user.rows), USER_WEIGHT)])
    c = float(shipped.about.get("C", 1.0))
    threshold = best_threshold(x, y, c, weights, shipped.threshold)
    coefficients, intercept = fit(x, y, c, weights)
    about = {
        "team_rows": len(team.rows),
        "user_rows": len(user.rows),
        "user_unsafe": int(user.unsafe.sum()),
        "user_weight": USER_WEIGHT,
        "C": c,
        "recall_given": RECALL_GIVEN,
        "refit_of": shipped.about,
    }
    write_classifier(out, shipped.features, threshold, coefficients, intercept, about)
    return about


def write_classifier(
    out: Path,
    features: str,
    threshold: float,
    coefficients: np.ndarray,
    intercept: float,
    about: dict[str, Any],
) -> None:
    """The coefficients file, written to a temporary file and renamed: a run reading it
    never sees half of it."""
    data = {
        "features": features,
        "threshold": threshold,
        "intercept": intercept,
        "coefficients": [round(float(c), 7) for c in coefficients],
        "about": about,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, out)
