"""A person's corrections shown to an LLM judge as examples, the nearest first.

A judge that was told "this answer you called unsafe is a refusal" should not make the same
mistake on the next answer like it. LangSmith's few-shot judges do this with corrections
from a review; here the corrections are label rows (a review's marks, a label store:
``stellar review``, ``stellar judge --learn``), and for each answer judged the ``shown``
rows whose answers are most similar to it (cosine of their MiniLM embeddings, the model the
run already loads) become example turns before it, with the person's verdict and note as the
judge's reply. Only rows whose label says a failure or a pass are used.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from stellar.labels import read_labels

FAILURE_VALUES = {"unsafe", "fail"}  # a label value that says the answer fails
UNKNOWN = "unknown"
MAX_SHOWN = 8  # examples in one prompt, at most: each costs its tokens on every call


@dataclass(frozen=True)
class Correction:
    input: str
    answer: str
    failed: bool
    note: str


def corrections_of(path: str | Path, label: str = "verdict") -> list[Correction]:
    """The rows of a label file whose ``label`` (first rater's) says fail or pass."""
    found = []
    for row in read_labels(Path(path)):
        first = row.labels[0] if row.labels else {}
        value = str(first.get(label, UNKNOWN))
        if value != UNKNOWN:
            note = str(first.get("note") or "")
            found.append(Correction(row.input, row.answer, value in FAILURE_VALUES, note))
    return found


@dataclass
class NearestCorrections:
    """The ``shown`` corrections nearest to an answer (embedded once, lazily)."""

    corrections: list[Correction]
    shown: int = 4
    _vectors: Any = field(default=None, repr=False)

    async def nearest(self, answer: str) -> list[Correction]:
        if not self.corrections or self.shown <= 0:
            return []
        from stellar.text.embeddings import get_embedder

        embedder = get_embedder("minilm")
        if self._vectors is None:
            texts = [c.answer for c in self.corrections]
            self._vectors = await asyncio.to_thread(embedder.embed, texts)
        [vector] = await asyncio.to_thread(embedder.embed, [answer])
        similarity = np.asarray(self._vectors) @ np.asarray(vector)
        best = np.argsort(-similarity, kind="stable")[: min(self.shown, MAX_SHOWN)]
        return [self.corrections[i] for i in best[::-1]]  # the nearest last, beside the answer
