"""Diversity-aware NSGA-II: the paper's search, with every objective penalised by how crowded
with failures the candidate's region already is, so the population moves on once a region
has given its failures.

A region is named by keys of a candidate's values: by default every pair of its feature
values (feature = value, feature = value), and the crowding of a candidate is the mean
number of failures found so far that share each of its value pairs; with ``cells`` it is
the number of failures in its cell of the named features. Each objective is raised by
``penalty x crowding / (crowding + 3)``: nothing for an empty region, about half the
penalty once three failures share it. The population's penalties are recomputed at every
``tell``, because crowding grows as failures are found; a failure still needs its score
below the oracle's threshold, so the search keeps hunting failures, only elsewhere.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import Field
from pymoo.core.population import Population

from stellar.features import Candidate, FeatureSpace
from stellar.search.astral import cell_features
from stellar.search.base import Failing, failing_below
from stellar.search.nsga2 import StellarSearch

HALF = 3.0  # failures in a region at which it carries half the penalty


class DiverseSearch(StellarSearch):
    """NSGA-II whose objectives grow with the failures already found around a candidate."""

    class Options(StellarSearch.Options):
        penalty: float = Field(0.5, ge=0, description="added to every objective when crowded")
        cells: list[str] | None = Field(
            None,
            description="features whose value combinations are the regions (default: "
            "every pair of feature values)",
        )

    name = "diverse"

    def __init__(
        self,
        space: FeatureSpace,
        n_objectives: int = 1,
        seed: int = 0,
        penalty: float = 0.5,
        cells: Sequence[str] | None = None,
        failing: Failing | None = None,
        **options: Any,
    ) -> None:
        if penalty < 0:
            raise ValueError(f"penalty must be at least 0, got {penalty}")
        super().__init__(space, n_objectives, seed, **options)
        self.penalty = penalty
        self.cell_features = None if cells is None else cell_features(space, cells)
        self.failing = failing or failing_below([0.5] * n_objectives)
        self.failures: Counter[Hashable] = Counter()

    def tell(
        self, candidates: Sequence[Candidate], scores: Sequence[Sequence[float] | None]
    ) -> None:
        """Count the new failures, re-penalise the population, then NSGA-II's tell."""
        for candidate, score in zip(candidates, scores, strict=True):
            if score is not None and self.failing(score):
                self.failures.update(self._keys(candidate.values))
        population = self.algorithm.pop
        if population is not None and len(population) > 0:
            population.set("F", self._penalised(population.get("X"), population.get("scores")))
        super().tell(candidates, scores)

    def _objectives(self, infills: Population, scores: np.ndarray) -> np.ndarray:
        infills.set("scores", scores)
        return self._penalised(infills.get("X"), scores)

    def _penalised(self, X: np.ndarray, scores: np.ndarray) -> np.ndarray:
        crowding = np.array([self.crowding(self.space.decode(x)) for x in X])
        return scores + (self.penalty * crowding / (crowding + HALF))[:, None]

    def crowding(self, values: Mapping[str, Any]) -> float:
        """Mean number of failures found so far in the regions of ``values``."""
        return float(np.mean([self.failures[k] for k in self._keys(values)]))

    def report(self, executed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """How many distinct regions the failures fell in."""
        regions = "cells" if self.cell_features else "value pairs"
        return {"regions": regions, "regions_with_failures": len(self.failures)}

    def _keys(self, values: Mapping[str, Any]) -> list[Hashable]:
        if self.cell_features is not None:
            return [tuple(self.space[n].index(values[n]) for n in self.cell_features)]
        indexed = [(n, self.space[n].index(values[n])) for n in self.space.names]
        return list(itertools.combinations(indexed, 2)) or indexed
