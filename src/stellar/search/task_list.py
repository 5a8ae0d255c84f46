"""A fixed task list, as agent benchmarks run one: the baseline a search must beat.

Benchmarks such as tau-bench run a fixed list of tasks with a cooperative simulated user and
tools that work. This algorithm does the same inside STELLAR's space: every combination of
the ``tasks`` features (the task: intent, sub-goals ...), each asked once, in one order that
does not depend on the run's seed (the list is fixed; seeds change only how each test is
written), with every other feature at its first value (the plain style, no perturbation, a
cooperative user, tools that work). When the list is done, the run ends as exhausted.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from stellar.errors import StellarError
from stellar.features import Candidate, FeatureSpace

ORDER_SEED = 0  # the list's order: the same for every run


class TaskListSearch:
    """Asks the task list ``population`` at a time; ignores scores."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        population: int = Field(20, ge=1, description="candidates per batch")
        tasks: list[str] = Field(
            default_factory=list,
            description="the features that make a task (default: the content features)",
        )

    name = "task-list"

    def __init__(
        self,
        space: FeatureSpace,
        n_objectives: int = 1,
        seed: int = 0,
        population: int = 20,
        tasks: Sequence[str] = (),
    ) -> None:
        names = list(tasks) or [f.name for f in space.features if f.kind == "content"]
        if not names:
            raise StellarError("task-list: set tasks, the features that make a task")
        unknown = [name for name in names if name not in {f.name for f in space.features}]
        if unknown:
            raise StellarError(f"task-list: tasks names unknown features: {', '.join(unknown)}")
        base = {f.name: f.values[0] for f in space.features}
        seen, listed = set(), []
        for combination in itertools.product(*(space[name].values for name in names)):
            candidate = space.candidate({**base, **dict(zip(names, combination, strict=True))})
            key = tuple(sorted(candidate.values.items(), key=lambda item: item[0]))
            if key not in seen:  # constraints can map two combinations to one task
                seen.add(key)
                listed.append(candidate)
        random.Random(ORDER_SEED).shuffle(listed)
        self.remaining, self.population = listed, population

    def ask(self) -> list[Candidate]:
        batch, self.remaining = self.remaining[: self.population], self.remaining[self.population :]
        return batch

    def tell(
        self, candidates: Sequence[Candidate], scores: Sequence[Sequence[float] | None]
    ) -> None:
        """A fixed list learns nothing."""
