"""The persona-only baseline: goal and voice at random, the conversation at its plainest.

This is what a tool with a user simulator and no dialogue features tests: a random goal and
persona (content, style, perturbation features sampled uniformly), while the shape of the
conversation is not searched: every ``dialogue`` feature keeps its first value, which a
feature file lists as the plain one (no correction, no detour, no reference). For a space
without dialogue features it is random search.
"""

from __future__ import annotations

from stellar.features import Candidate, FeatureSpace
from stellar.search.random_search import RandomSearch


class PersonaSearch(RandomSearch):
    """Random goal and style; every dialogue feature at its first, plainest value."""

    name = "persona"

    def __init__(
        self, space: FeatureSpace, n_objectives: int = 1, seed: int = 0, population: int = 20
    ) -> None:
        super().__init__(space, n_objectives, seed, population)
        self.plain = {f.name: f.values[0] for f in space.features if f.kind == "dialogue"}

    def ask(self) -> list[Candidate]:
        return [
            self.space.candidate({**self.space.random_values(self.rng), **self.plain})
            for _ in range(self.population)
        ]
