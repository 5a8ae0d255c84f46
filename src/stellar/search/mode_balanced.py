"""Mode-balanced search: spend the budget evenly over the failure modes found so far.

The paper's NSGA-II minimises the judge's score, so once it finds a failure mode it keeps
finding the same one (95% of a default run's failures in one mode). This search uses the
modes the run assigns while it runs (:mod:`stellar.modes`) instead of the scores:

* each failing test is kept as a parent under its mode;
* a new candidate is, with probability ``explore`` (and always before the first failure),
  drawn uniformly at random, the way random search finds modes;
* otherwise a mode is drawn with a weight that falls with its size (``size ** -balance``:
  0.5 gives a mode of 3 failures three times the draws of one of 30), a parent uniformly within
  it, and ``changes`` of the parent's features are set to other values at random: the
  child keeps most of what made the parent fail, so it tends to fail the same way with
  another input (a new failure of a small mode) or, where the changed feature was the
  cause, a nearby way (a new mode);
* a feature vector already asked is not asked again (up to ``TRIES`` redraws; a batch
  with no new vector at all ends the search: the space is spent).

It learns nothing from passing tests' scores; a search that is not told modes (a run
without failures yet) behaves as random search.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from stellar.features import Candidate, FeatureSpace

TRIES = 20  # redraws of a child whose feature vector was asked before


class ModeBalancedSearch:
    """Mutates failures of rarely-found modes more often than those of common ones."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        population: int = Field(20, ge=1, description="candidates per batch")
        explore: float = Field(
            0.1, ge=0, le=1, description="share of candidates drawn at random once modes exist"
        )
        balance: float = Field(
            0.5, ge=0, le=10, description="a mode's weight is its size to the power -balance"
        )
        changes: int = Field(2, ge=1, description="features a child changes of its parent")

    name = "mode-balanced"

    def __init__(
        self,
        space: FeatureSpace,
        n_objectives: int = 1,
        seed: int = 0,
        population: int = 20,
        explore: float = 0.1,
        balance: float = 0.5,
        changes: int = 2,
    ) -> None:
        if population < 1:
            raise ValueError("population must be at least 1")
        if not 0 <= balance <= 10:  # larger powers round every weight to 0
            raise ValueError(f"balance must be in [0, 10], got {balance}")
        self.space, self.population = space, population
        self.explore, self.balance = explore, balance
        if not 1 <= changes <= len(space.names):
            raise ValueError(f"changes must be from 1 to {len(space.names)}, got {changes}")
        self.changes = changes
        self.rng = random.Random(seed)
        self.parents: dict[Hashable, list[Mapping[str, Any]]] = {}
        self.asked: set[tuple[float, ...]] = set()

    def ask(self) -> list[Candidate]:
        """Up to ``population`` candidates never asked before; none when the space is spent."""
        drawn = [self._new() for _ in range(self.population)]
        return [c for c in drawn if c is not None]

    def tell(
        self,
        candidates: Sequence[Candidate],
        scores: Sequence[Sequence[float] | None],
        modes: Sequence[Hashable | None] | None = None,
    ) -> None:
        """Keep each failing candidate under its mode."""
        for candidate, mode in zip(candidates, modes or [None] * len(candidates), strict=True):
            if mode is not None:
                self.parents.setdefault(mode, []).append(candidate.values)

    def report(self, executed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return {"modes_exploited": len(self.parents)}

    def _new(self) -> Candidate | None:
        for _ in range(TRIES + 1):
            candidate = self._draw()
            if candidate.vector not in self.asked:
                self.asked.add(candidate.vector)
                return candidate
        return None

    def _draw(self) -> Candidate:
        if not self.parents or self.rng.random() < self.explore:
            return self.space.candidate(self.space.random_values(self.rng))
        modes = list(self.parents)
        weights = [len(self.parents[m]) ** -self.balance for m in modes]
        family = self.parents[self.rng.choices(modes, weights)[0]]
        child = dict(self.rng.choice(family))
        for name in self.rng.sample(self.space.names, self.changes):
            others = [v for v in self.space[name].values if v != child[name]]
            if others:
                child[name] = self.rng.choice(others)
        return self.space.candidate(child)
