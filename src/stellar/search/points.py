"""Candidates as rows of value indices ("points"), for a search that scores thousands of
candidates a batch and asks a few: a dict and a :class:`~stellar.features.Candidate` each
cost more than the model that scores them (``search/surrogate.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stellar.features import FeatureSpace, Value


def constrain_points(space: FeatureSpace, points: np.ndarray) -> np.ndarray:
    """:meth:`FeatureSpace.apply_constraints` of every row at once: the rules in their order,
    repeated until nothing changes."""
    out = np.array(points, dtype=np.int64, copy=True)
    column = {f.name: k for k, f in enumerate(space.features)}
    for _ in range(len(space.constraints) + 1):
        changed = False
        for rule in space.constraints:
            applies = np.ones(len(out), dtype=bool)
            for condition in rule.when:
                applies &= np.isin(out[:, column[condition.feature]], list(condition.allowed))
            for name, value in rule.set.items():
                j, i = column[name], space[name].index(value)
                hit = applies & (out[:, j] != i)
                if hit.any():
                    out[hit, j] = i
                    changed = True
        if not changed:
            return out
    raise RuntimeError("constraints did not settle; the load-time checks should prevent this")


def point_values(space: FeatureSpace, point: Sequence[int]) -> dict[str, Value]:
    """The feature values of one row of value indices."""
    return {f.name: f.values[i] for f, i in zip(space.features, point, strict=True)}
