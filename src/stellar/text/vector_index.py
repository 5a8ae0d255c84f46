"""Approximate nearest neighbours of unit vectors: a usearch HNSW graph, for the duplicate filter.

:class:`GraphIndex` follows the rows of its caller's matrix, keyed by row number, and only
proposes candidates: the caller computes their exact similarities. Rows are added on one
thread, in order, so the same rows build the same graph however they were split among
calls: a run and its resumed continuation, which reloads the rows at once, agree (tested).
"""

from __future__ import annotations

import numpy as np

__all__ = ["GraphIndex"]


class GraphIndex:
    """HNSW graph over inner products of unit vectors, stored as ``dtype`` (int8: a quarter of
    float32's memory, and as good as float32 at proposing candidates).

    The defaults were chosen with ``bench/embeddings.py`` on 100,000 stored vectors: a
    wider ``expansion_search`` finds more of the near-threshold neighbours at a higher cost
    per search; ``connectivity`` and ``expansion_add`` trade memory and insertion time
    against the same.
    """

    def __init__(
        self,
        dim: int,
        *,
        dtype: str = "i8",
        connectivity: int = 16,
        expansion_add: int = 64,
        expansion_search: int = 128,
    ) -> None:
        from usearch.index import Index  # imported here: only large archives need it

        self._index = Index(
            ndim=dim,
            metric="ip",
            dtype=dtype,
            connectivity=connectivity,
            expansion_add=expansion_add,
            expansion_search=expansion_search,
        )

    def __len__(self) -> int:
        """Rows indexed."""
        return len(self._index)

    @property
    def memory_bytes(self) -> int:
        """Bytes the graph and its int8 copies of the vectors take."""
        return int(self._index.memory_usage)

    def follow(self, rows: np.ndarray) -> None:
        """Index ``rows[len(self):]``: ``rows`` extends the rows followed so far."""
        start = len(self._index)
        if len(rows) > start:
            keys = np.arange(start, len(rows), dtype=np.uint64)
            self._index.add(keys, rows[start:], threads=1)

    def nearest(self, queries: np.ndarray, count: int) -> np.ndarray:
        """Keys of up to ``count`` approximate nearest neighbours per query row, shape
        ``(len(queries), count)``; -1 fills rows with fewer matches. (usearch answers one
        query with only its valid matches, several with padded rows and their counts.)"""
        keys = np.full((len(queries), count), -1, dtype=np.int64)
        if len(self._index) == 0 or len(queries) == 0:
            return keys
        matches = self._index.search(queries, count, threads=1)
        found = np.asarray(matches.keys).astype(np.int64).reshape(len(queries), -1)
        counts = np.asarray(getattr(matches, "counts", found.shape[1])).reshape(-1, 1)
        width = min(count, found.shape[1])
        keys[:, :width] = np.where(np.arange(width) < counts, found[:, :width], -1)
        return keys
