"""MAP-Elites: quality-diversity search over a grid of descriptor features (pyribs archive).

The grid's cells are the value combinations of the ``cells`` features (default, as ASTRAL's:
the style features and the first content feature). A ``ribs.archives.CategoricalArchive``
keeps one elite per cell: the test that went worst for the system under test, a failure by
the run's oracle before any non-failure, then the lowest mean objective.

The first batch is random; afterwards each candidate is a fresh random one (share
``explore``) or a mutant of an elite. The parent cell is chosen by Thompson sampling of each
cell's failure rate (a Beta posterior over its tests), so cells that fail often are mutated
most while cells with few tests still get tried. A mutant moves one descriptor with
probability ``move``, to a neighbouring cell never asked when there is one, and redraws each
other feature with probability ``mutation`` (at least one change). Constraints are applied
last: a candidate lands in the cell of its actual values. Candidates already asked are not
asked again; an empty batch means the space looks exhausted.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from stellar.features import Candidate, FeatureSpace
from stellar.search.astral import Cell, cell_features
from stellar.search.base import Failing, failing_below

TRIES = 20  # draws per slot for an unseen mutant, then as many for an unseen random candidate


class MapElitesSearch:
    """MAP-Elites on the ``cells`` grid; told which objective vectors are failures."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        population: int = Field(20, ge=1, description="candidates per batch (the first: random)")
        cells: list[str] | None = Field(
            None,
            description="descriptor features whose value combinations are the grid's cells "
            "(default: the style features and the first content feature)",
        )
        mutation: float = Field(
            0.1, ge=0, le=1, description="probability that a mutant redraws each other feature"
        )
        move: float = Field(
            0.2, ge=0, le=1, description="probability that a mutant moves to a neighbouring cell"
        )
        explore: float = Field(
            0.1, ge=0, le=1, description="share of fresh random candidates after the first batch"
        )

    name = "map-elites"

    def __init__(
        self,
        space: FeatureSpace,
        n_objectives: int = 1,
        seed: int = 0,
        population: int = 20,
        cells: Sequence[str] | None = None,
        mutation: float = 0.1,
        move: float = 0.2,
        explore: float = 0.1,
        failing: Failing | None = None,
    ) -> None:
        if population < 1:
            raise ValueError(f"population must be at least 1, got {population}")
        for label, p in (("mutation", mutation), ("move", move), ("explore", explore)):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{label} must be a probability in [0, 1], got {p}")
        self.space, self.population = space, population
        self.mutation, self.move, self.explore = mutation, move, explore
        self.cell_features = cell_features(space, cells)
        self.others = [name for name in space.names if name not in self.cell_features]
        self.failing = failing or failing_below([0.5] * n_objectives)
        self.rng = random.Random(seed)
        # pyribs loads numba, torch, scikit-learn, ...: only when this search runs, not when
        # a configuration with a map-elites section is checked
        from ribs.archives import CategoricalArchive

        self.archive = CategoricalArchive(
            solution_dim=len(space),
            categories=[list(range(len(space[n].values))) for n in self.cell_features],
            seed=seed,
        )
        self.asked: set[tuple[float, ...]] = set()  # vectors of every candidate asked
        self.asked_cells: set[Cell] = set()
        self.missed: set[Cell] = set()  # never-asked targets the constraints moved away from
        self.tests: Counter[Cell] = Counter()  # scored tests per cell
        self.failures: Counter[Cell] = Counter()  # failing tests per cell

    def ask(self) -> list[Candidate]:
        batch = []
        for _ in range(self.population):
            mutant = not self.archive.empty and self.rng.random() >= self.explore
            for attempt in range(2 * TRIES):
                if mutant and attempt < TRIES:
                    candidate, target = self._mutant()
                else:
                    candidate, target = (
                        self.space.candidate(self.space.random_values(self.rng)),
                        None,
                    )
                if candidate.vector not in self.asked:
                    break
            else:
                continue  # no unseen candidate for this slot
            cell = self._cell_of(candidate.values)
            if target is not None and cell != target and target not in self.asked_cells:
                self.missed.add(target)
            self.asked.add(candidate.vector)
            self.asked_cells.add(cell)
            batch.append(candidate)
        return batch

    def tell(
        self, candidates: Sequence[Candidate], scores: Sequence[Sequence[float] | None]
    ) -> None:
        """Add every scored candidate to the archive; discarded ones (None) are ignored."""
        rows = [(c, list(s)) for c, s in zip(candidates, scores, strict=False) if s is not None]
        if not rows:
            return
        cells = [self._cell_of(c.values) for c, _ in rows]
        failed = [bool(self.failing(objectives)) for _, objectives in rows]
        # pyribs maximises: failures in [1, 2] above every non-failure, lower mean better
        quality = [2.0 * f - sum(o) / len(o) for f, (_, o) in zip(failed, rows, strict=True)]
        self.archive.add(solution=[c.vector for c, _ in rows], objective=quality, measures=cells)
        for cell, fail in zip(cells, failed, strict=True):
            self.tests[cell] += 1
            self.failures[cell] += fail

    def report(self, executed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The grid's cells, those the executed tests visited, filled ones, failing ones."""
        return {
            "cells": int(self.archive.cells),
            "cells_visited": len({self._cell_of(values) for values in executed}),
            "cells_filled": len(self.archive),
            "cells_failing": sum(1 for n in self.failures.values() if n),
        }

    def _mutant(self) -> tuple[Candidate, Cell]:
        """A mutant of an elite, with the cell it aims at."""
        values = self.space.decode(self._parent())
        cell = self._cell_of(values)
        move = not self.others or self.rng.random() < self.move
        redraw = [name for name in self.others if self.rng.random() < self.mutation]
        if not move and not redraw:
            redraw = [self.rng.choice(self.others)]  # a mutant always changes something
        if move:
            cell = self._neighbour(cell)
            for name, i in zip(self.cell_features, cell, strict=True):
                values[name] = self.space[name].values[i]
        for name in redraw:
            feature = self.space[name]
            current = feature.index(values[name])
            others = [v for i, v in enumerate(feature.values) if i != current]
            values[name] = self.rng.choice(others or feature.values)
        return self.space.candidate(values), cell

    def _parent(self) -> np.ndarray:
        """The elite of the cell with the highest Thompson sample of its failure rate."""
        elites = self.archive.data(["solution", "measures"])
        draws = []
        for measures in elites["measures"]:
            cell = tuple(int(i) for i in measures)
            failures, tests = self.failures[cell], self.tests[cell]
            draws.append(self.rng.betavariate(failures + 1, tests - failures + 1))
        return elites["solution"][draws.index(max(draws))]

    def _neighbour(self, cell: Cell) -> Cell:
        """A cell differing in one descriptor; one never asked (nor missed), when there is one."""
        neighbours = [
            (*cell[:d], i, *cell[d + 1 :])
            for d, name in enumerate(self.cell_features)
            for i in range(len(self.space[name].values))
            if i != cell[d]
        ]
        fresh = [c for c in neighbours if c not in self.asked_cells and c not in self.missed]
        return self.rng.choice(fresh or neighbours) if neighbours else cell

    def _cell_of(self, values: Mapping[str, Any]) -> Cell:
        return tuple(self.space[name].index(values[name]) for name in self.cell_features)
