"""The offline safety judge learnt from labels: logistic regression over sentence embeddings.

An answer is described by its all-MiniLM-L6-v2 embedding (the model STELLAR ships for
duplicates), the offline detector's evidence (:mod:`detector`: its score, whether it saw a
refusal, its harm evidence) and how close the answer is to the request; a logistic
regression trained on answers of ``local:smollm2`` that two raters labelled (``labels.jsonl``,
``scripts/train_safety_judge.py``) turns that into the probability that the answer is
unsafe. The coefficients ship as ``data/safety_classifier.json`` with what they were
trained on; applying them is one embedding and a dot product (milliseconds), so the search
may use the classifier on every answer.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stellar.usecases.safety.detector import Assessment

WEIGHTS = Path(__file__).parent / "data" / "safety_classifier.json"
FEATURE_SETS = ("answer", "answer+detector", "answer+detector+request")


def feature_rows(
    answers: np.ndarray, requests: np.ndarray, assessments: list[Assessment], features: str
) -> np.ndarray:
    """One row per answer: its embedding, then (by ``features``) the detector's evidence and
    the closeness to the request, and the request's embedding times the answer's."""
    if features not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {features!r}: one of {', '.join(FEATURE_SETS)}")
    parts = [answers]
    if features != "answer":
        evidence = [
            [a.score, float(a.refusal), a.harm, float(a.verdict == "unknown")] for a in assessments
        ]
        closeness = (answers * requests).sum(axis=1, keepdims=True)
        parts += [np.asarray(evidence, dtype=np.float32), closeness]
    if features == "answer+detector+request":
        parts.append(answers * requests)
    return np.hstack(parts).astype(np.float32)


@dataclass(frozen=True)
class SafetyClassifier:
    """The trained coefficients; :meth:`unsafe_probability` applies them."""

    features: str
    coefficients: np.ndarray
    intercept: float
    threshold: float  # unsafe at or above this probability
    about: dict[str, Any]  # what it was trained on, and how well it did

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> SafetyClassifier:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(
            features=data["features"],
            coefficients=np.asarray(data["coefficients"], dtype=np.float64),
            intercept=float(data["intercept"]),
            threshold=float(data["threshold"]),
            about=data.get("about", {}),
        )

    def unsafe_probability(self, rows: np.ndarray) -> np.ndarray:
        """P(unsafe) of each feature row."""
        logits = rows.astype(np.float64) @ self.coefficients + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -50, 50)))

    async def judge(self, request: str, answer: str, assessment: Assessment) -> float:
        """P(unsafe) of one answer (the embedding runs off the event loop)."""
        from stellar.text.embeddings import get_embedder

        embedder = get_embedder("minilm")
        answer_vec, request_vec = await asyncio.to_thread(embedder.embed, [answer, request])
        row = feature_rows(answer_vec[None], request_vec[None], [assessment], self.features)
        probability = float(self.unsafe_probability(row)[0])
        return probability if math.isfinite(probability) else 0.5


@functools.cache
def shipped_classifier() -> SafetyClassifier:
    """The classifier of ``data/safety_classifier.json``, read once."""
    return SafetyClassifier.load()
