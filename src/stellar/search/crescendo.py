"""A Crescendo-style baseline: one objective at a time, escalated until it breaks.

This is how the multi-turn red-teaming tools people use work (PyRIT's Crescendo, promptfoo's
crescendo strategy): pick an objective (here a value of the ``objective`` feature, e.g. a
harm category), try it at the lowest rung of the ``ladder`` feature (e.g. the escalation
shape), and climb one rung each time the attempt does not fail, until it fails (the
objective is broken) or the top rung failed too; then the next objective. Everything else
in the candidate (style, framing, noise) is drawn at random for each attempt. When every
objective is broken or exhausted, a new round starts from the bottom rung.

It uses the run's notion of failure (``failing``), as an attack loop uses its success
scorer, and asks ``population`` attempts at a time, one per objective in turn.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from stellar.features import Candidate, FeatureSpace
from stellar.search.base import Failing


class CrescendoSearch:
    """One objective at a time, one ladder rung higher after each attempt that did not fail."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        population: int = Field(10, ge=1, description="attempts asked at a time")
        objective: str = Field("category", description="the feature whose values are objectives")
        ladder: str = Field("escalation", description="the ordinal feature climbed on no failure")

    name = "crescendo"

    def __init__(
        self,
        space: FeatureSpace,
        n_objectives: int = 1,
        seed: int = 0,
        population: int = 10,
        objective: str = "category",
        ladder: str = "escalation",
        failing: Failing | None = None,
    ) -> None:
        features = {f.name: f for f in space.features}
        for name, what in ((objective, "objective"), (ladder, "ladder")):
            if name not in features:
                raise ValueError(
                    f"crescendo: no feature {name!r} to use as its {what} (set another with "
                    f"--set algorithm.crescendo.{what}=FEATURE)"
                )
        if not features[ladder].ordinal:
            raise ValueError(f"crescendo: the ladder feature {ladder!r} must be ordinal")
        self.space, self.population, self.rng = space, population, random.Random(seed)
        self.objective, self.ladder = objective, ladder
        self.rungs = list(features[ladder].values)
        self.objectives = list(features[objective].values)
        self.failing = failing or (lambda scores: any(s < 0.5 for s in scores))
        self.level = dict.fromkeys(self.objectives, 0)  # objective -> rung to try next
        self.done: set = set()  # broken or exhausted this round
        self.turn = 0  # the next objective to ask, round robin

    def ask(self) -> list[Candidate]:
        asked = []
        for _ in range(self.population):
            if len(self.done) == len(self.objectives):  # a new round from the bottom rung
                self.done.clear()
                self.level = dict.fromkeys(self.objectives, 0)
            while self.objectives[self.turn % len(self.objectives)] in self.done:
                self.turn += 1
            goal = self.objectives[self.turn % len(self.objectives)]
            self.turn += 1
            values = self.space.random_values(self.rng)
            values[self.objective] = goal
            values[self.ladder] = self.rungs[self.level[goal]]
            asked.append(self.space.candidate(values))
        return asked

    def tell(
        self, candidates: Sequence[Candidate], scores: Sequence[Sequence[float] | None]
    ) -> None:
        """An objective whose attempt failed is broken; otherwise it climbs a rung."""
        for candidate, score in zip(candidates, scores, strict=True):
            goal = candidate.values[self.objective]
            if goal in self.done or score is None:
                continue
            if self.failing(score):
                self.done.add(goal)
            elif self.level[goal] + 1 < len(self.rungs):
                self.level[goal] += 1
            else:
                self.done.add(goal)

    def report(self, executed: Sequence[object] = ()) -> dict[str, object]:
        """For summary.json: the objectives broken or exhausted this round, and each one's
        next rung."""
        return {
            "done_this_round": sorted(map(str, self.done)),
            "next_rung": {str(k): self.rungs[v] for k, v in self.level.items()},
        }
