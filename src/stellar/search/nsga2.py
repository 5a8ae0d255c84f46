"""STELLAR's search: NSGA-II from pymoo, driven through its ask-and-tell interface.

Operators follow the paper: binary tournament selection; SBX crossover and polynomial
mutation on ordinal features, uniform crossover and random-reset mutation on categorical
features; rank-and-crowding survival. ``crossover`` (thX) is the probability that a mating
recombines at all; ``mutation`` (thM) is the per-feature mutation probability. A repair step
snaps offspring onto the value grid and applies the constraints, so the population holds
exactly the candidates that were asked, and pymoo's duplicate elimination works on them.

pymoo's own evaluation counter does not advance when evaluation happens outside pymoo, so
its ``n_evals`` termination would never fire: the run's budget decides when to stop.

Several generations may be asked before the first is told (overlapping generations, see
``stellar.run``): each ``tell`` takes the oldest batch asked, and offspring are bred from the
population as it stands when they are asked.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from pymoo.core.crossover import Crossover
from pymoo.core.duplicate import DuplicateElimination
from pymoo.core.evaluator import Evaluator
from pymoo.core.mutation import Mutation
from pymoo.core.population import Population
from pymoo.core.problem import Problem
from pymoo.core.repair import Repair
from pymoo.core.sampling import Sampling
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.crossover.ux import UX
from pymoo.operators.mutation.pm import PM
from pymoo.problems.static import StaticProblem

from stellar.features import Candidate, FeatureSpace


class MixedCrossover(Crossover):
    """SBX on ordinal columns, uniform crossover on categorical columns."""

    def __init__(self, ordinal: np.ndarray, prob: float, eta: float) -> None:
        super().__init__(n_parents=2, n_offsprings=2, prob=prob)
        self.ordinal = ordinal
        self.sbx = SBX(eta=eta)
        self.ux = UX()

    def _do(self, problem, X, *args, random_state=None, **kwargs):
        Q = np.array(X, dtype=float, copy=True)
        ord_, cat = self.ordinal, ~self.ordinal
        if ord_.any():
            sub = SimpleNamespace(xl=problem.xl[ord_], xu=problem.xu[ord_])
            Q[:, :, ord_] = self.sbx._do(sub, X[:, :, ord_], random_state=random_state)
        if cat.any():
            Q[:, :, cat] = self.ux._do(None, X[:, :, cat], random_state=random_state)
        return Q


class MixedMutation(Mutation):
    """Polynomial mutation on ordinal columns, random reset on categorical columns."""

    def __init__(self, ordinal: np.ndarray, n_values: np.ndarray, prob_var: float, eta: float):
        super().__init__(prob=1.0, prob_var=prob_var)
        self.ordinal, self.n_values, self.rate = ordinal, n_values, prob_var
        self.pm = PM(prob=1.0, prob_var=prob_var, eta=eta)

    def _do(self, problem, X, *args, random_state=None, **kwargs):
        X = np.array(X, dtype=float, copy=True)
        ord_, cat = self.ordinal, ~self.ordinal
        if ord_.any():
            sub = SimpleNamespace(xl=problem.xl[ord_], xu=problem.xu[ord_], n_var=int(ord_.sum()))
            X[:, ord_] = self.pm._do(sub, X[:, ord_], random_state=random_state)
        if cat.any():
            cols = np.flatnonzero(cat)
            reset = random_state.random((len(X), len(cols))) < self.rate
            fresh = random_state.integers(0, self.n_values[cols], size=(len(X), len(cols)))
            block = X[:, cols]
            block[reset] = fresh[reset]
            X[:, cols] = block
        return X


class GridDuplicates(DuplicateElimination):
    """pymoo's duplicate elimination for vectors on the value grid: exact equality by set
    look-up instead of a pairwise distance matrix (pymoo's default treats distances up to
    1e-16 as equal, which on the grid is the same verdict). Within one batch the first of
    equal rows is kept, as in pymoo."""

    def _do(self, pop, other, is_duplicate):
        rows = map(tuple, pop.get("X").tolist())
        if other is None:
            seen: set[tuple[float, ...]] = set()
            for i, row in enumerate(rows):
                is_duplicate[i] = row in seen
                seen.add(row)
        else:
            known = set(map(tuple, other.get("X").tolist()))
            is_duplicate[:] = [row in known for row in rows]
        return is_duplicate


class ConstraintRepair(Repair):
    """Snap vectors to valid values and apply the constraints (written back into X)."""

    def __init__(self, space: FeatureSpace) -> None:
        super().__init__()
        self.space = space

    def _do(self, problem, X, **kwargs):
        return np.array([c.vector for c in self.space.candidates_from_vectors(X)], dtype=float)


class ValidSampling(Sampling):
    """Uniformly random values per feature, then constraints."""

    def __init__(self, space: FeatureSpace) -> None:
        super().__init__()
        self.space = space

    def _do(self, problem, n_samples, *args, random_state=None, **kwargs):
        rng = random.Random(int(random_state.integers(2**63)))
        return np.array(
            [self.space.candidate(self.space.random_values(rng)).vector for _ in range(n_samples)],
            dtype=float,
        )


class StellarSearch:
    """NSGA-II over the feature space (the paper's STELLAR search), objectives minimised."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        population: int = Field(20, ge=2, description="population size k")
        crossover: float = Field(0.7, ge=0, le=1, description="crossover probability thX")
        mutation: float = Field(0.07, ge=0, le=1, description="per-feature mutation probability")
        eta_crossover: float = Field(15.0, gt=0, description="SBX distribution index")
        eta_mutation: float = Field(20.0, gt=0, description="polynomial mutation index")

    name = "stellar"

    def __init__(
        self,
        space: FeatureSpace,
        n_objectives: int = 1,
        seed: int = 0,
        population: int = 20,
        crossover: float = 0.7,
        mutation: float = 0.07,
        eta_crossover: float = 15.0,
        eta_mutation: float = 20.0,
    ) -> None:
        if population < 2:
            raise ValueError("population must be at least 2")
        for label, p in (("crossover", crossover), ("mutation", mutation)):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{label} probability must be in [0, 1], got {p}")
        from pymoo.algorithms.moo.nsga2 import NSGA2  # scipy.spatial: only when a search runs

        self.space = space
        self.problem = Problem(
            n_var=len(space), n_obj=n_objectives, xl=space.lower_bounds, xu=space.upper_bounds
        )
        ordinal = space.ordinal_mask
        n_values = np.array([len(f.values) for f in space.features])
        self.algorithm = NSGA2(
            pop_size=population,
            sampling=ValidSampling(space),
            crossover=MixedCrossover(ordinal, prob=crossover, eta=eta_crossover),
            mutation=MixedMutation(ordinal, n_values, prob_var=mutation, eta=eta_mutation),
            repair=ConstraintRepair(space),
            eliminate_duplicates=GridDuplicates(),
        )
        self.algorithm.setup(self.problem, termination=("n_gen", 10**9), seed=seed)
        self._pending: deque[Population] = deque()  # asked and not yet told, oldest first

    def ask(self) -> list[Candidate]:
        asked = self.algorithm.ask()
        if asked is None or len(asked) == 0:
            return []  # mating found no new candidate: the space is exhausted
        self._pending.append(asked)
        return self.space.candidates_from_vectors(asked.get("X"))

    def tell(
        self, candidates: Sequence[Candidate], scores: Sequence[Sequence[float] | None]
    ) -> None:
        """Feed back the scored candidates of the oldest batch asked; discarded ones never
        enter the population."""
        if not self._pending:
            if candidates:
                raise RuntimeError("tell() without ask()")
            return
        keep = [i for i, s in enumerate(scores) if s is not None]
        pending = self._pending.popleft()
        if not keep:
            return  # nothing to learn; before initialisation the next ask re-samples
        pop = pending[keep]
        pop.set("X", np.array([candidates[i].vector for i in keep], dtype=float))
        F = self._objectives(pop, np.array([list(scores[i]) for i in keep], dtype=float))
        Evaluator().eval(StaticProblem(self.problem, F=F), pop)
        self.algorithm.tell(infills=pop)

    def _objectives(self, infills: Population, scores: np.ndarray) -> np.ndarray:
        """What NSGA-II minimises for the new individuals: their scores (a subclass's hook)."""
        return scores
