"""Which earlier input each duplicate was discarded for.

A run stores it with the duplicate (``details["duplicate_of"]``: the generation and index of
the input it matched). For archives written before that, the earlier input is found again by
embedding the inputs with the run's embedder and taking, among the inputs sent before the
duplicate, the most similar one; it is named only when its similarity is the one the run
stored, so a different embedder never names a wrong input (at 10,000 tests this embeds
~50,000 inputs again: minutes).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stellar.errors import StellarError
from stellar.records import DUPLICATE_OF, Status, TestRecord
from stellar.text.embeddings import get_embedder

TOLERANCE = 0.005  # the stored similarity against the recomputed one
CHUNK = 512  # duplicates compared at once (a 10,000-test run holds tens of thousands)


def earlier_inputs(records: Sequence[TestRecord], embedder: str | None) -> dict[int, int]:
    """For each duplicate (its position in ``records``), the position of the input it was
    found too similar to; duplicates that cannot be matched are left out."""
    position = {(r.generation, r.index): i for i, r in enumerate(records) if r.executed}
    found = {}
    for i, record in enumerate(records):
        stored = record.details.get(DUPLICATE_OF) if record.status == Status.DUPLICATE else None
        if isinstance(stored, list) and (earlier := position.get(tuple(stored))) is not None:
            found[i] = earlier
    duplicates = [
        i for i, r in enumerate(records) if _matchable(r) and DUPLICATE_OF not in r.details
    ]
    sent = [i for i, r in enumerate(records) if r.executed]
    if not duplicates or not sent or not embedder or embedder == "none":
        return found
    try:
        model = get_embedder(embedder)
        vectors = _unit(model.embed([records[i].input_text or "" for i in duplicates + sent]))
    except (StellarError, ValueError, OSError):  # no such embedder, or its model is missing
        return found
    order = _screening_order(records)
    sent_vectors, sent_order = vectors[len(duplicates) :], order[sent]
    for start in range(0, len(duplicates), CHUNK):  # a block of rows: bounded memory
        rows = duplicates[start : start + CHUNK]
        similarity = vectors[start : start + len(rows)] @ sent_vectors.T
        similarity[order[rows][:, np.newaxis] <= sent_order[np.newaxis, :]] = -np.inf
        best = np.argmax(similarity, axis=1)
        for row, position in enumerate(rows):
            stored = float(records[position].similarity or 0.0)
            if abs(similarity[row, best[row]] - stored) <= TOLERANCE:
                found[position] = sent[int(best[row])]
    return found


def _screening_order(records: Sequence[TestRecord]) -> np.ndarray:
    """Each record's place in screening order: by generation, then candidate index."""
    width = max(r.index for r in records) + 1
    return np.array([r.generation * width + r.index for r in records], dtype=np.int64)


def _matchable(record: TestRecord) -> bool:
    return record.status == Status.DUPLICATE and record.similarity is not None


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
