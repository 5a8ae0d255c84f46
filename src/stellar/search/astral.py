"""ASTRAL-style coverage baseline: every cell of chosen features visited round-robin.

A cell is one combination of values of the ``cells`` features (the paper's safety setting:
category x style x persuasion). By default the cells are formed by every feature of kind
"style" plus the first feature of kind "content". Cells that no valid candidate can have
(the constraints always change one of their values) are dropped. The valid cells are
visited in one seeded shuffled order, ``per_cell`` rounds; each visit is one candidate with
the cell's values and the other features drawn at random.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from stellar.features import Candidate, FeatureSpace

TRIES = 20  # random completions tried per cell (validity) and per visit
MAX_CELLS = 1_000_000

Cell = tuple[int, ...]  # value indices of the cell features


class AstralSearch:
    """Asks one candidate per cell visit, ``population`` visits at a time; ignores scores."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        population: int = Field(20, ge=1, description="cell visits per batch")
        cells: list[str] | None = Field(
            None,
            description="features whose value combinations are the cells (default: "
            "the style features and the first content feature)",
        )
        per_cell: int = Field(1, ge=1, description="tests per cell (rounds)")

    name = "astral"

    def __init__(
        self,
        space: FeatureSpace,
        n_objectives: int = 1,
        seed: int = 0,
        population: int = 20,
        cells: Sequence[str] | None = None,
        per_cell: int = 1,
    ) -> None:
        if population < 1:
            raise ValueError("population must be at least 1")
        if per_cell < 1:
            raise ValueError(f"per_cell must be at least 1, got {per_cell}")
        self.space, self.population, self.per_cell = space, population, per_cell
        self.cell_features = cell_features(space, cells)
        self.rng = random.Random(seed)
        self._witness: dict[Cell, dict[str, Any]] = {}  # one valid candidate per valid cell
        sizes = [range(len(space[name].values)) for name in self.cell_features]
        for cell in itertools.product(*sizes):
            found = self._complete(cell)
            if found is not None:
                self._witness[cell] = found
        self.valid_cells: list[Cell] = list(self._witness)  # in visiting order
        self.rng.shuffle(self.valid_cells)
        self._visits = 0

    def ask(self) -> list[Candidate]:
        cells, start = self.valid_cells, self._visits
        self._visits = min(start + self.population, len(cells) * self.per_cell)
        return [self._visit(cells[i % len(cells)]) for i in range(start, self._visits)]

    def tell(
        self, candidates: Sequence[Candidate], scores: Sequence[Sequence[float] | None]
    ) -> None:
        """ASTRAL-style coverage learns nothing."""

    def report(self, executed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """How many valid cells the executed candidates visited."""
        visited = {self._cell_of(values) for values in executed} & set(self._witness)
        return {
            "cells": len(self.valid_cells),
            "per_cell": self.per_cell,
            "cells_visited": len(visited),
            "cell_coverage": len(visited) / len(self.valid_cells) if self.valid_cells else 0.0,
        }

    def _visit(self, cell: Cell) -> Candidate:
        """The cell's values, the other features random; a known valid completion otherwise."""
        values = self._complete(cell) or self._witness[cell]
        return self.space.candidate(values)

    def _complete(self, cell: Cell) -> dict[str, Any] | None:
        """Constrained random completion of the cell that keeps its values, if one is found."""
        fixed = {
            name: self.space[name].values[i]
            for name, i in zip(self.cell_features, cell, strict=True)
        }
        for _ in range(TRIES):
            values = self.space.apply_constraints(self.space.random_values(self.rng) | fixed)
            if self._cell_of(values) == cell:
                return values
        return None

    def _cell_of(self, values: Mapping[str, Any]) -> Cell:
        return tuple(self.space[name].index(values[name]) for name in self.cell_features)


def cell_features(space: FeatureSpace, cells: Sequence[str] | None) -> list[str]:
    """The named cell features, or the default: every style feature and the first content one."""
    if cells is None:
        content = [f.name for f in space.features if f.kind == "content"][:1]
        names = [f.name for f in space.features if f.kind == "style"] + content
        if not names:
            raise ValueError("cells: the space has no style or content feature; name the cells")
    else:
        names = list(cells)
        unknown = [n for n in names if n not in space.names]
        if unknown:
            known = ", ".join(space.names)
            raise ValueError(f"cells: unknown feature {unknown[0]!r} (known: {known})")
        if not names or len(set(names)) != len(names):
            raise ValueError("cells: expected a non-empty list of distinct feature names")
    n_cells = math.prod(len(space[n].values) for n in names)
    if n_cells > MAX_CELLS:
        raise ValueError(f"cells: {n_cells} value combinations, more than {MAX_CELLS}")
    return names
