"""Exact search for stored unit vectors near a query, scanning low-dimensional projections.

For an orthonormal basis ``B`` (``dim x rank``) every dot product splits in two::

    q . x = (B'q) . (B'x) + q_r . x_r  <=  (B'q) . (B'x) + |q_r| |x_r|

where ``q_r`` and ``x_r`` are the parts outside the span of ``B`` (Cauchy-Schwarz). With
``B`` the top principal directions of the stored vectors, the projections keep most of the
energy of sentence embeddings (``rank`` 64 keeps ~80-90% for MiniLM and the hashing embedder
on generated utterances), so the bound is tight: a scan of the ``rank``-dimensional
projections plus one norm per row rules out all but a handful of rows, and only those are
compared exactly. No row at or above the cut is ever ruled out, so verdicts equal a full
scan's; the cost per check is about ``rank / dim`` of it (``bench/embeddings.py``).

The basis is fitted on the first ``fit_from`` rows (a strided sample beyond 8,192) and
refitted on the first ``fit_from x 4**k`` rows when that many are stored, so the basis is a
function of the rows alone, not of how they arrived: a run and its resumed continuation,
which reloads its rows at once, get the same candidates.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RANK", "ProjectedScan"]

#: Principal directions kept per vector (fewer where the vectors have fewer dimensions).
RANK = 64

# Float32 rounding of a bound over ``rank`` terms stays far below this; rows whose bound
# lies within it of the cut are compared exactly too.
_MARGIN = 1e-4
_FIT_SAMPLE = 8_192  # rows a fit looks at, at most
_BLOCK = 131_072  # rows per matrix product: bounds temporary memory to _BLOCK x batch floats
_PROJECT_BLOCK = 16_384  # rows projected at a time (float64 copies: ~50 MB at 384 dimensions)


class ProjectedScan:
    """Candidate rows of a caller's float32 matrix of unit vectors (rows are only appended).

    :meth:`follow` keeps the projections in step with the matrix; :meth:`candidates` returns,
    per query, every row whose similarity may reach ``cut``, plus the row with the highest
    bound (so that a query always gets an estimate of its best similarity). Needs at least
    one row.
    """

    def __init__(self, dim: int, fit_from: int, rank: int = RANK) -> None:
        if not 0 < rank <= dim:
            raise ValueError(f"rank must be in [1, {dim}], got {rank}")
        if fit_from < 1:
            raise ValueError(f"fit_from must be >= 1, got {fit_from}")
        self.dim, self.rank, self.fit_from = dim, rank, fit_from
        self._basis = np.zeros((dim, rank))  # float64, orthonormal columns
        self._fitted_on = 0
        self.energy = 0.0  # share of the fitted rows' squared norms inside the basis
        # Per row: its projection (``rank`` values), then the norm of its residual, so that
        # one matrix product with [projection, residual norm] of the queries gives the bounds.
        self._bounds = np.empty((0, rank + 1), dtype=np.float32)
        self._size = 0

    def __len__(self) -> int:
        """Rows followed."""
        return self._size

    @property
    def memory_bytes(self) -> int:
        """Bytes of the projections and residual norms as allocated."""
        return self._bounds.nbytes

    @property
    def pays(self) -> bool:
        """Whether the basis keeps enough of the rows (half their energy) for the bounds to
        rule out most rows; vectors without low-rank structure are better scanned in full."""
        return self.energy >= 0.5

    def follow(self, rows: np.ndarray) -> None:
        """Project ``rows[len(self):]`` (``rows`` extends the rows followed so far, and holds
        at least ``fit_from``), refitting the basis when a new ``fit_from x 4**k`` is reached."""
        if len(rows) < self.fit_from:
            raise ValueError(f"need at least fit_from={self.fit_from} rows, got {len(rows)}")
        fit_on = self.fit_from
        while 4 * fit_on <= len(rows):
            fit_on *= 4
        if fit_on != self._fitted_on:
            self._fit(rows, fit_on)
        elif len(rows) > self._size:
            self._grow(len(rows))
            self._project(rows, self._size)
        self._size = len(rows)

    def candidates(self, queries: np.ndarray, cut: float, most: int) -> list[np.ndarray | None]:
        """Per query, the numbers of the rows whose dot product with it may be ``>= cut``
        (every such row is among them) and of the row with the highest bound, ascending;
        None where more than ``most`` rows may be (the projections do not pay: scan them)."""
        if len(queries) == 0:
            return []
        keys = self._augmented(queries)
        found: list[list[np.ndarray]] = [[] for _ in queries]
        counts = np.zeros(len(queries), dtype=np.int64)
        best = np.full(len(queries), -np.inf, dtype=np.float32)
        best_row = np.zeros(len(queries), dtype=np.int64)
        everyone = np.arange(len(queries))
        for start in range(0, self._size, _BLOCK):
            bound = keys @ self._bounds[start : min(start + _BLOCK, self._size)].T
            hits = bound >= np.float32(cut - _MARGIN)
            counts += np.count_nonzero(hits, axis=1)
            hits[counts > most] = False
            columns, rows = np.divmod(np.flatnonzero(hits), hits.shape[1])
            for query, part in enumerate(np.split(rows, np.searchsorted(columns, everyone[1:]))):
                found[query].append(start + part)
            top = np.argmax(bound, axis=1)
            higher = bound[everyone, top] > best
            best = np.where(higher, bound[everyone, top], best)
            best_row = np.where(higher, start + top, best_row)
        return [
            np.union1d(np.concatenate(parts), [row]) if count <= most else None
            for parts, row, count in zip(found, best_row, counts, strict=True)
        ]

    # ---------------------------------------------------------------- internals

    def _fit(self, rows: np.ndarray, fit_on: int) -> None:
        """Basis: the top principal directions (uncentred: dot products are) of (a strided
        sample of) the first ``fit_on`` rows; every row is projected again."""
        sample = rows[: fit_on : max(1, -(-fit_on // _FIT_SAMPLE))].astype(np.float64)
        values, vectors = np.linalg.eigh(sample.T @ sample)  # ascending
        basis = vectors[:, ::-1][:, : self.rank] * (values[::-1][: self.rank] > 0)
        self.energy = float(values[::-1][: self.rank].sum() / max(values.sum(), 1e-300))
        self._basis, self._fitted_on = basis, fit_on
        self._grow(len(rows))
        self._project(rows, 0)

    def _augmented(self, rows: np.ndarray) -> np.ndarray:
        """``rows`` as [projection, norm of the residual], float32."""
        block = rows.astype(np.float64)
        projected = block @ self._basis
        residual = np.linalg.norm(block - projected @ self._basis.T, axis=1)
        return np.hstack([projected, residual[:, np.newaxis]]).astype(np.float32)

    def _project(self, rows: np.ndarray, start: int) -> None:
        for begin in range(start, len(rows), _PROJECT_BLOCK):
            block = rows[begin : begin + _PROJECT_BLOCK]
            self._bounds[begin : begin + len(block)] = self._augmented(block)

    def _grow(self, needed: int) -> None:
        """Room for ``needed`` rows, doubling (amortised O(1) per row)."""
        if needed > len(self._bounds):
            grown = np.empty((max(needed, 2 * len(self._bounds), 1024), self.rank + 1), np.float32)
            grown[: self._size] = self._bounds[: self._size]
            self._bounds = grown
