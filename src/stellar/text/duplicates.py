"""Near-duplicate filtering of generated test inputs by embedding cosine similarity.

:class:`DuplicateFilter` remembers the embedding of every input accepted during a run in
one contiguous float32 matrix, in check order. While it holds fewer than ``index_from``
vectors a check scans them all (one matrix product per batch); from then on it scans
low-dimensional projections instead (:class:`~stellar.text.projected_scan.ProjectedScan`),
which rule out every stored vector that cannot reach the threshold, and compares the few
left exactly: the same verdicts at a third of the cost or less from 100,000 stored inputs
(``bench/embeddings.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from stellar.text.embeddings import Embedder
from stellar.text.projected_scan import RANK, ProjectedScan

__all__ = ["EMPTY_SIMILARITY", "INDEX_FROM", "DuplicateFilter"]

#: Similarity reported when there is no earlier input to compare with.
EMPTY_SIMILARITY = 0.0

# Batch columns compared with the archive per matrix product; bounds temporary memory
# to about ``len(archive) * _CHUNK * 4`` bytes.
_CHUNK = 64

#: Stored vectors from which checks scan projections rather than the vectors themselves:
#: below it the full scan is as cheap (bench/embeddings.py).
INDEX_FROM = 2_000


class DuplicateFilter:
    """Flags inputs whose cosine similarity to an earlier accepted input is >= ``threshold``.

    * A text is a duplicate iff its maximum cosine similarity to any stored input is at
      or above ``threshold`` (inclusive). The most similar stored input is found in
      float32; its similarity is then computed in float64, rounded to float32 and compared
      with the threshold rounded to float32, so a value equal to the threshold counts as a
      duplicate, whichever way the input was found.
    * Non-duplicates are stored; duplicates are **not**, so the memory holds exactly the
      accepted inputs (and anything preloaded with :meth:`add`).
    * With nothing stored, a check reports ``(False, EMPTY_SIMILARITY)``, i.e. similarity
      0.0 ("orthogonal to everything").
    * From ``index_from`` stored vectors on (None: never), the scan of projections finds
      every stored vector that may reach the threshold, so verdicts do not change; the
      similarity reported for a non-duplicate is then the best among those and the vector
      with the highest bound, usually but not always the true maximum.

    Vectors passed to the ``*_vectors`` methods must be L2-normalised, as produced by an
    :class:`~stellar.text.embeddings.Embedder`. Not thread-safe.
    """

    def __init__(
        self,
        embedder: Embedder,
        threshold: float = 0.8,
        initial_capacity: int = 1024,
        *,
        index_from: int | None = INDEX_FROM,
    ) -> None:
        if not 0.0 < threshold <= 1.0:  # also rejects NaN
            raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
        if initial_capacity < 1:
            raise ValueError(f"initial_capacity must be >= 1, got {initial_capacity}")
        if index_from is not None and index_from < 1:
            raise ValueError(f"index_from must be >= 1 or None, got {index_from}")
        self.index_from = index_from
        self._index: ProjectedScan | None = None
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

    @property
    def indexed(self) -> bool:
        """Whether checks scan projections (``index_from`` vectors are stored)."""
        return self._index is not None

    @property
    def memory_bytes(self) -> int:
        """Bytes held: the float32 matrix as allocated plus the projections, if any."""
        return self._matrix.nbytes + (self._index.memory_bytes if self._index else 0)

    # ---------------------------------------------------------------- text API

    def check(self, text: str) -> tuple[bool, float]:
        """Return ``(is_duplicate, max_similarity)`` for ``text``; store it if not a duplicate."""
        return self.check_batch([text])[0]

    def check_batch(self, texts: Sequence[str]) -> list[tuple[bool, float]]:
        """Check ``texts`` in order, as if by successive :meth:`check` calls.

        The batch is embedded in one call; each item is also compared with the items of
        the same batch accepted before it.
        """
        return [(duplicate, similarity) for duplicate, similarity, _ in self.screen(texts)]

    def screen(self, texts: Sequence[str]) -> list[tuple[bool, float, int]]:
        """As :meth:`check_batch`, with the stored row each text matched best (a duplicate)
        or was stored in (an accepted text); rows count the accepted texts from 0."""
        if len(texts) == 0:
            return []
        return self._screen_vectors(self.embedder.embed(texts))

    def add(self, texts: Sequence[str]) -> None:
        """Store ``texts`` without checking them (e.g. to preload an archive on resume)."""
        if len(texts) > 0:
            self.add_vectors(self.embedder.embed(texts))

    # ---------------------------------------------------------------- vector API

    def check_vectors(self, vectors: np.ndarray) -> list[tuple[bool, float]]:
        """Like :meth:`check_batch`, for precomputed unit vectors of shape ``(k, dim)``."""
        return [
            (duplicate, similarity) for duplicate, similarity, _ in self._screen_vectors(vectors)
        ]

    def _screen_vectors(self, vectors: np.ndarray) -> list[tuple[bool, float, int]]:
        batch = self._as_batch(vectors)
        prior = self._size
        best_prior, rows_prior = self._best_stored(batch)
        results: list[tuple[bool, float, int]] = []
        for vector, best, row in zip(batch, best_prior, rows_prior, strict=True):
            if self._size > prior:  # items of this batch accepted so far
                similarities = self._matrix[prior : self._size] @ vector
                if similarities[own := int(np.argmax(similarities))] > best:
                    row = prior + own
            if row < 0:
                results.append((False, EMPTY_SIMILARITY, self._size))
                self._append(vector[np.newaxis])
                continue
            similarity = self._similarity(int(row), vector)
            duplicate = bool(similarity >= self._threshold32)
            if not duplicate:
                row = self._size
                self._append(vector[np.newaxis])
            results.append((duplicate, float(similarity), int(row)))
        self._update_index()
        return results

    def check_vector(self, vector: np.ndarray) -> tuple[bool, float]:
        """Like :meth:`check`, for one precomputed unit vector of shape ``(dim,)``."""
        return self.check_vectors(vector)[0]

    def add_vectors(self, vectors: np.ndarray) -> None:
        """Store precomputed unit vectors of shape ``(k, dim)`` without checking them."""
        self._append(self._as_batch(vectors))
        self._update_index()

    # ---------------------------------------------------------------- persistence

    def save_new(self, path: Path, upto: int | None = None) -> None:
        """Append stored rows ``[rows already saved, upto)`` to ``path`` (raw float32 rows;
        ``upto`` None: every stored row), so that a resumed run reloads them instead of
        embedding every input again. Rows are in check order, so ``upto`` = the count
        after a generation's check saves exactly the inputs of that generation and before.
        """
        end = self._size if upto is None else upto
        if not 0 <= end <= self._size:
            raise ValueError(f"upto must be in [0, {self._size}], got {upto}")
        if end > self._saved:
            with Path(path).open("ab") as fh:
                fh.write(self._matrix[self._saved : end].tobytes())
            self._saved = end

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
        batch = np.ascontiguousarray(vectors, dtype=np.float32)
        if batch.ndim == 1:
            batch = batch[np.newaxis]
        if batch.ndim != 2 or batch.shape[1] != self.dim:
            raise ValueError(f"expected vectors of shape (k, {self.dim}), got {batch.shape}")
        return batch

    def _best_stored(self, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per batch row, the max float32 similarity to a stored vector and that vector's row
        (-inf and -1 if none): by a full scan, or among the projected scan's candidates."""
        stored = self._matrix[: self._size]
        if self._index is None or not self._index.pays:
            return self._max_similarity(stored, batch)
        # Where the projections rule out too few (vectors without low-rank structure), the
        # full scan is the cheaper way to the same answer.
        found = self._index.candidates(batch, self.threshold, most=self._size // 8)
        wide = np.array([rows is None for rows in found], dtype=bool)
        best = np.empty(len(batch), dtype=np.float32)
        rows = np.empty(len(batch), dtype=np.int64)
        if wide.any():
            best[wide], rows[wide] = self._max_similarity(stored, batch[wide])
        for i in np.flatnonzero(~wide):
            candidates = found[i]
            assert candidates is not None
            similarities = stored[candidates] @ batch[i]
            pick = int(np.argmax(similarities))
            best[i], rows[i] = similarities[pick], candidates[pick]
        return best, rows

    def _similarity(self, row: int, vector: np.ndarray) -> np.float32:
        """Similarity of stored ``row`` and ``vector``, computed in float64 and rounded to
        float32, so that it does not depend on how the row was found."""
        return np.float32(np.dot(self._matrix[row].astype(np.float64), vector.astype(np.float64)))

    def _update_index(self) -> None:
        """Index the rows stored since the last call, once ``index_from`` rows are stored."""
        if self._index is None:
            if self.index_from is None or self._size < self.index_from:
                return
            self._index = ProjectedScan(self.dim, self.index_from, rank=min(RANK, self.dim))
        self._index.follow(self._matrix[: self._size])

    @staticmethod
    def _max_similarity(archive: np.ndarray, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per batch row, the max dot product with an archive row and that row's number
        (-inf and -1 if the archive is empty)."""
        best = np.full(len(batch), -np.inf, dtype=np.float32)
        rows = np.full(len(batch), -1, dtype=np.int64)
        if len(archive):
            for start in range(0, len(batch), _CHUNK):
                chunk = batch[start : start + _CHUNK]
                similarities = archive @ chunk.T
                pick = np.argmax(similarities, axis=0)
                rows[start : start + len(chunk)] = pick
                best[start : start + len(chunk)] = similarities[pick, np.arange(len(chunk))]
        return best, rows

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
