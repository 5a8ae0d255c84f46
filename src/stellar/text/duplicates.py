"""Near-duplicate filtering of generated test inputs by embedding cosine similarity.

:class:`DuplicateFilter` remembers the embedding of every input accepted during a run in
one contiguous float32 matrix, so checking a new input against the whole archive is a
single matrix-vector product.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from stellar.text.embeddings import Embedder

__all__ = ["EMPTY_SIMILARITY", "DuplicateFilter"]

#: Similarity reported when there is no earlier input to compare with.
EMPTY_SIMILARITY = 0.0

# Batch columns compared with the archive per matrix product; bounds temporary memory
# to about ``len(archive) * _CHUNK * 4`` bytes.
_CHUNK = 64


class DuplicateFilter:
    """Flags inputs whose cosine similarity to an earlier accepted input is >= ``threshold``.

    * A text is a duplicate iff its maximum cosine similarity to any stored input is at
      or above ``threshold`` (inclusive). Similarities are computed in float32 and
      compared with the threshold rounded to float32, so a stored value equal to the
      threshold counts as a duplicate.
    * Non-duplicates are stored; duplicates are **not**, so the memory holds exactly the
      accepted inputs (and anything preloaded with :meth:`add`).
    * With nothing stored, a check reports ``(False, EMPTY_SIMILARITY)``, i.e. similarity
      0.0 ("orthogonal to everything").

    Vectors passed to the ``*_vectors`` methods must be L2-normalised, as produced by an
    :class:`~stellar.text.embeddings.Embedder`. Not thread-safe.
    """

    def __init__(
        self, embedder: Embedder, threshold: float = 0.8, initial_capacity: int = 1024
    ) -> None:
        if not 0.0 < threshold <= 1.0:  # also rejects NaN
            raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
        if initial_capacity < 1:
            raise ValueError(f"initial_capacity must be >= 1, got {initial_capacity}")
        self.embedder = embedder
        self.threshold = float(threshold)
        self.dim = int(embedder.dim)
        self._threshold32 = np.float32(threshold)
        self._matrix = np.empty((initial_capacity, self.dim), dtype=np.float32)
        self._size = 0
        self._saved = 0  # rows already written by save_new

    def __len__(self) -> int:
        return self._size

    def prepare(self) -> None:
        """Load the embedding model now rather than at the first check."""
        self.embedder.embed(["warm-up"])

    @property
    def capacity(self) -> int:
        """Rows currently allocated for stored vectors."""
        return self._matrix.shape[0]

    @property
    def vectors(self) -> np.ndarray:
        """Read-only view of the stored vectors, shape ``(len(self), dim)``."""
        view = self._matrix[: self._size]
        view.flags.writeable = False
        return view

    # ---------------------------------------------------------------- text API

    def check(self, text: str) -> tuple[bool, float]:
        """Return ``(is_duplicate, max_similarity)`` for ``text``; store it if not a duplicate."""
        return self.check_batch([text])[0]

    def check_batch(self, texts: Sequence[str]) -> list[tuple[bool, float]]:
        """Check ``texts`` in order, as if by successive :meth:`check` calls.

        The batch is embedded in one call; each item is also compared with the items of
        the same batch accepted before it.
        """
        if len(texts) == 0:
            return []
        return self.check_vectors(self.embedder.embed(texts))

    def add(self, texts: Sequence[str]) -> None:
        """Store ``texts`` without checking them (e.g. to preload an archive on resume)."""
        if len(texts) > 0:
            self.add_vectors(self.embedder.embed(texts))

    # ---------------------------------------------------------------- vector API

    def check_vectors(self, vectors: np.ndarray) -> list[tuple[bool, float]]:
        """Like :meth:`check_batch`, for precomputed unit vectors of shape ``(k, dim)``."""
        batch = self._as_batch(vectors)
        prior = self._size
        best_prior = self._max_similarity(self._matrix[:prior], batch)
        results: list[tuple[bool, float]] = []
        for vector, best in zip(batch, best_prior, strict=True):
            if self._size > prior:  # items of this batch accepted so far
                best = max(best, np.max(self._matrix[prior : self._size] @ vector))
            duplicate = bool(best >= self._threshold32)
            if not duplicate:
                self._append(vector[np.newaxis])
            results.append((duplicate, float(best) if math.isfinite(best) else EMPTY_SIMILARITY))
        return results

    def check_vector(self, vector: np.ndarray) -> tuple[bool, float]:
        """Like :meth:`check`, for one precomputed unit vector of shape ``(dim,)``."""
        return self.check_vectors(vector)[0]

    def add_vectors(self, vectors: np.ndarray) -> None:
        """Store precomputed unit vectors of shape ``(k, dim)`` without checking them."""
        self._append(self._as_batch(vectors))

    # ---------------------------------------------------------------- persistence

    def save_new(self, path: Path) -> None:
        """Append the vectors stored since the last call to ``path`` (raw float32 rows), so
        that a resumed run reloads them instead of embedding every input again."""
        if self._size > self._saved:
            with Path(path).open("ab") as fh:
                fh.write(self._matrix[self._saved : self._size].tobytes())
        self._saved = self._size

    def load(self, path: Path) -> bool:
        """Store the vectors saved in ``path``; False (nothing loaded) when it is missing or
        was written for another dimension. A row cut short by a kill is ignored."""
        try:
            raw = np.fromfile(path, dtype=np.float32)
        except (OSError, ValueError):
            return False
        rows = raw[: len(raw) - len(raw) % self.dim].reshape(-1, self.dim)
        if len(rows) and not np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-3):
            return False  # not unit vectors of this embedder
        self.add_vectors(rows)
        self._saved = self._size
        return True

    # ---------------------------------------------------------------- internals

    def _as_batch(self, vectors: np.ndarray) -> np.ndarray:
        """Validate ``vectors`` as a float32 ``(k, dim)`` array (a 1-D vector gives k=1)."""
        batch = np.asarray(vectors, dtype=np.float32)
        if batch.ndim == 1:
            batch = batch[np.newaxis]
        if batch.ndim != 2 or batch.shape[1] != self.dim:
            raise ValueError(f"expected vectors of shape (k, {self.dim}), got {batch.shape}")
        return batch

    @staticmethod
    def _max_similarity(archive: np.ndarray, batch: np.ndarray) -> np.ndarray:
        """Per batch row, the max dot product with any archive row (-inf if none)."""
        best = np.full(len(batch), -np.inf, dtype=np.float32)
        if len(archive):
            for start in range(0, len(batch), _CHUNK):
                chunk = batch[start : start + _CHUNK]
                best[start : start + len(chunk)] = np.max(archive @ chunk.T, axis=0)
        return best

    def _append(self, rows: np.ndarray) -> None:
        """Append ``rows``, doubling the capacity as often as needed (amortised O(1))."""
        needed = self._size + len(rows)
        if needed > self.capacity:
            capacity = self.capacity
            while capacity < needed:
                capacity *= 2
            grown = np.empty((capacity, self.dim), dtype=np.float32)
            grown[: self._size] = self._matrix[: self._size]
            self._matrix = grown
        self._matrix[self._size : needed] = rows
        self._size = needed
