"""Random search: every feature sampled uniformly and independently."""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from stellar.features import Candidate, FeatureSpace


class RandomSearch:
    """Asks batches of ``population`` uniformly random candidates; ignores scores."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        population: int = Field(20, ge=1, description="candidates per batch")

    name = "random"

    def __init__(
        self, space: FeatureSpace, n_objectives: int = 1, seed: int = 0, population: int = 20
    ) -> None:
        if population < 1:
            raise ValueError("population must be at least 1")
        self.space, self.population = space, population
        self.rng = random.Random(seed)

    def ask(self) -> list[Candidate]:
        return [
            self.space.candidate(self.space.random_values(self.rng)) for _ in range(self.population)
        ]

    def tell(
        self, candidates: Sequence[Candidate], scores: Sequence[Sequence[float] | None]
    ) -> None:
        """Random search learns nothing."""
