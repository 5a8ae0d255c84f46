"""Surrogate search: learn where the system fails while searching, and ask where *new*
failures are likely.

Failure is predictable from the features (a random forest over one-hot values reached AUC
0.89 on the built-in assistant), yet mode-balanced mutation and NSGA-II learn nothing from
passing tests. This search fits a classifier on every outcome so far and spends each batch
where it expects failures that the run has not seen yet:

* **the surrogate** is a scikit-learn random forest over the one-hot feature values whose
  classes are "passed", "excluded", "duplicate" (the generator only repeated an earlier
  input) and each failure mode the run assigned (:mod:`stellar.modes`), so one model gives
  the chance that a candidate fails, the mode it would fall in, and the chance that it is
  wasted. Its trees disagree where data is thin: that disagreement is the uncertainty;
* **the pool** of each batch holds ``pool`` unseen, constrained candidates: random ones,
  children of failures (``changes`` features redrawn, rare modes' parents first) and random
  ones with one feature set to its least-tried value;
* **the acquisition** is Thompson sampling over the trees: for each slot a quarter of the
  trees is drawn and the candidate their mean values most is taken, where a candidate's
  value is the probability of failing in each mode, weighted by ``(1 + size) ** -balance``
  (a mode found 9 times is worth a tenth of a new one at the default 1) and raised by
  ``novelty`` times the share of its value pairs that no failure has shown yet (failing
  2-way cells). A taken candidate's pairs count as shown for the rest of the batch, so a
  batch spreads;
* a share ``explore`` of every batch stays uniformly random, and so is everything until the
  run has a failure; until ``warmup`` outcomes the rest are children of failures (a model of
  a few dozen tests knows less than the failures themselves); a slot whose best value is
  below Good-Turing's estimate of the chance that a random candidate fails in a mode not
  seen yet is left to a random draw too, so the search explores again once the modes it
  knows are well covered.

The forest is refitted when the outcomes have grown by a tenth since the last fit (every
batch early on); its time is reported as ``surrogate_seconds`` (``bench/speed.py``). Everything
is drawn from one seeded generator and the forest's seed comes from it, so a resume that
re-tells the archive asks the same candidates.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from stellar.features import Candidate, FeatureSpace
from stellar.search.points import constrain_points, point_values

PASSED = -1  # the surrogate's class of a passing test (modes are the other classes)
EXCLUDED = -2  # its class of a test the fitness kept out of the verdicts (worth nothing)
DUPLICATE = -3  # of an input discarded as a duplicate of an earlier one (worth nothing)
REFIT_GROWTH = 0.1  # refit when the outcomes have grown by this share since the last fit
SAMPLED = 4  # each slot is valued by the mean of a random quarter of the trees
GOOD_TURING_SAMPLE = 50  # random verdicts before Good-Turing's estimate redirects slots
TRIES = 20  # redraws of a pool member or random candidate whose vector was asked before
LEARNERS = ("forest", "extra-trees")


class SurrogateSearch:
    """Thompson sampling over a random forest of failure modes (see the module)."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        population: int = Field(20, ge=1, description="candidates per batch")
        learner: Literal["forest", "extra-trees"] = Field(
            "forest", description="the surrogate: scikit-learn's random forest or extra trees"
        )
        trees: int = Field(32, ge=2, le=1000, description="trees of the surrogate's ensemble")
        pool: int = Field(
            600, ge=1, le=100_000, description="unseen candidates scored for each batch"
        )
        explore: float = Field(
            0.1, ge=0, le=1, description="share of each batch drawn uniformly at random"
        )
        balance: float = Field(
            1.0, ge=0, le=10, description="a mode's worth is (1 + its size) to the power -balance"
        )
        novelty: float = Field(
            0.5, ge=0, le=100, description="weight of the failing value pairs a candidate may add"
        )
        changes: int = Field(2, ge=1, description="features a child of a failure redraws")
        warmup: int = Field(
            60,
            ge=1,
            description="outcomes before the model decides; until then, children of failures",
        )

    name = "surrogate"

    def __init__(
        self,
        space: FeatureSpace,
        n_objectives: int = 1,
        seed: int = 0,
        population: int = 20,
        learner: str = "forest",
        trees: int = 32,
        pool: int = 600,
        explore: float = 0.1,
        balance: float = 1.0,
        novelty: float = 0.5,
        changes: int = 2,
        warmup: int = 60,
    ) -> None:
        if population < 1:
            raise ValueError(f"population must be at least 1, got {population}")
        if learner not in LEARNERS:
            raise ValueError(f"learner must be one of {', '.join(LEARNERS)}, got {learner!r}")
        if pool < 1:
            raise ValueError(f"pool must be at least 1, got {pool}")
        if not 0 <= explore <= 1:
            raise ValueError(f"explore must be in [0, 1], got {explore}")
        if not 1 <= changes <= len(space.names):
            raise ValueError(f"changes must be from 1 to {len(space.names)}, got {changes}")
        self.space, self.population, self.pool = space, population, pool
        self.trees, self.warmup = trees, warmup
        self.explore, self.balance, self.novelty, self.changes = explore, balance, novelty, changes
        # imported here, when the run is built, so that loading is not counted as searching
        from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

        self._learner = RandomForestClassifier if learner == "forest" else ExtraTreesClassifier
        self.rng = random.Random(seed)
        self.gen = np.random.default_rng(seed)  # the pools' draws
        self.sizes = np.array([len(f.values) for f in space.features])
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])  # one-hot columns
        self.width = int(self.sizes.sum())
        self.divisors = np.array([len(f.values) if f.ordinal else 1 for f in space.features])
        self.asked: set[tuple[float, ...]] = set()
        self.rows: list[np.ndarray] = []  # one-hot rows of the told outcomes
        self.labels: list[Hashable] = []  # PASSED, EXCLUDED, DUPLICATE or the failure's mode
        self.parents: dict[Hashable, list[np.ndarray]] = {}  # failures' points by mode
        self.pair_a, self.pair_b = np.triu_indices(len(space.features), 1)
        self.failing_pairs = np.zeros(self.width * self.width)  # failures showing each pair
        # of one-hot columns (id a * width + b)
        self.tried = np.zeros(self.width, dtype=int)  # outcomes told with each value
        self.drawn_at_random: set[tuple[float, ...]] = set()
        self.random_modes: Counter[Hashable | None] = Counter()  # outcomes of random draws
        self.model: Any = None
        self._fitted_on = 0
        self.fits, self.seconds = 0, 0.0

    # ------------------------------------------------------------------ ask / tell
    def ask(self) -> list[Candidate]:
        """Up to ``population`` candidates never asked before; none when the space is spent."""
        ready = self.parents and len(self.labels) >= self.warmup
        n_model = self.population - self._random_count() if self.parents else 0
        started = time.perf_counter()
        if ready:
            chosen = self._acquire(n_model)
        else:  # too few outcomes for a model: children of the failures found so far
            chosen = self._candidates(self._fresh(self._children(self.pool))[0][:n_model])
        self.seconds += time.perf_counter() - started
        while len(chosen) < self.population:
            candidate = self._unseen_random()
            if candidate is None:  # nearly spent: what the pool's wider draws still find
                return chosen + self._candidates(self._pool()[0][: self.population - len(chosen)])
            self.drawn_at_random.add(candidate.vector)
            chosen.append(candidate)
        return chosen

    def tell(
        self,
        candidates: Sequence[Candidate],
        scores: Sequence[Sequence[float] | None],
        modes: Sequence[Hashable | None] | None = None,
        excluded: Sequence[bool] | None = None,
        duplicate: Sequence[bool] | None = None,
    ) -> None:
        """Learn each candidate's outcome: passed, excluded, failed in its mode, or its input
        a duplicate (the generator repeats itself there); nothing for other discards."""
        n = len(candidates)
        outcomes = zip(
            modes or [None] * n, excluded or [False] * n, duplicate or [False] * n, strict=True
        )
        for candidate, score, (mode, out, repeated) in zip(
            candidates, scores, outcomes, strict=True
        ):
            if score is None and not repeated:  # invalid or not scored: nothing to learn
                continue
            point = self._point(candidate.values)
            self.rows.append(self._one_hot(point[None, :])[0])
            if repeated:
                self.labels.append(DUPLICATE)
                continue
            self.labels.append(EXCLUDED if out else PASSED if mode is None else mode)
            self.tried[self.offsets + point] += 1
            if candidate.vector in self.drawn_at_random:
                self.random_modes[mode] += 1
            if mode is not None:
                self.parents.setdefault(mode, []).append(point)
                ids = self.offsets + point
                self.failing_pairs[ids[self.pair_a] * self.width + ids[self.pair_b]] += 1
        started = time.perf_counter()
        self._refit()
        self.seconds += time.perf_counter() - started

    def report(self, executed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return {
            "surrogate_fits": self.fits,
            "surrogate_seconds": round(self.seconds, 3),  # fitting, pooling and acquiring
            "modes_learnt": len(self.parents),
        }

    # ------------------------------------------------------------------ the surrogate
    def _refit(self) -> None:
        n = len(self.labels)
        if not self.parents or n < self.warmup:
            return
        if self.model is not None and n < self._fitted_on * (1 + REFIT_GROWTH):
            return
        labels = np.array([str(label) for label in self.labels])
        self.model = self._learner(
            n_estimators=self.trees,
            min_samples_leaf=3,
            max_features="sqrt",
            random_state=self.rng.randrange(2**31),
            n_jobs=1,
        ).fit(np.array(self.rows), labels)
        classes = list(self.model.classes_)
        sizes = Counter(str(label) for label in self.labels)
        # a class's worth: nothing for passing, excluded or duplicates; a mode's falls with size
        nothing = {str(PASSED), str(EXCLUDED), str(DUPLICATE)}
        self.worth = np.array(
            [0.0 if c in nothing else (1 + sizes[c]) ** -self.balance for c in classes]
        )
        self._fitted_on = n
        self.fits += 1

    def _acquire(self, n: int) -> list[Candidate]:
        """``n`` candidates of the pool, each the best of the trees drawn for its slot (fewer
        where a random draw is worth more: :meth:`_unseen_mode_chance`)."""
        points, _ = self._pool()
        if not len(points):
            return []
        X = self._one_hot(points)
        trees = self.model.estimators_
        # each tree's worth of each candidate: sum over classes of P(class) * worth(class)
        # (a tree's classes_ are the forest's class indices)
        worth = np.empty((len(trees), len(points)))
        for t, tree in enumerate(trees):
            worth[t] = (
                tree.predict_proba(X, check_input=False) @ self.worth[tree.classes_.astype(int)]
            )
        # the value pairs each candidate has (ids a * columns + b) that no failure, and no
        # candidate taken before it in this batch, has shown
        ids = self.offsets + points
        pair_ids = ids[:, self.pair_a] * self.width + ids[:, self.pair_b]
        shown = self.failing_pairs > 0
        unseen = self._unseen_mode_chance()
        chosen: list[int] = []
        free = np.ones(len(points), dtype=bool)
        for _ in range(min(n, len(points))):
            new = 1.0 - shown[pair_ids].mean(axis=1) if pair_ids.shape[1] else 0.0
            drawn = self.rng.sample(range(len(trees)), max(1, len(trees) // SAMPLED))
            value = worth[drawn].mean(axis=0) * (1 + self.novelty * new)
            value[~free] = -np.inf
            best = int(np.argmax(value))
            if value[best] < unseen:  # a random draw is worth more: ask() makes the rest
                break
            chosen.append(best)
            free[best] = False
            shown[pair_ids[best]] = True
        return self._candidates(points[chosen])

    # ------------------------------------------------------------------ candidates
    # Pools are built as matrices of value indices, one row a point, and only the points
    # asked become Candidates: a pool of 600 dicts a batch cost more than the forest.
    def _pool(self) -> tuple[np.ndarray, np.ndarray]:
        """Unseen, distinct, constrained points (and their vectors), at most ``pool``: children
        of failures, least-tried values and random points in turn."""
        n = -(-self.pool * 2 // 3)  # twice the pool, for points asked before or repeated
        makers = [self._children(n), self._least_tried(n), self._randoms(n)]
        rows = np.stack(makers, axis=1).reshape(-1, len(self.space.features))
        points, vectors = self._fresh(rows)
        return points[: self.pool], vectors[: self.pool]

    def _fresh(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows after constraints, without repeats or points asked before, in order."""
        points = constrain_points(self.space, rows)
        _, first = np.unique(points, axis=0, return_index=True)
        points = points[np.sort(first)]
        vectors = points / self.divisors
        new = [tuple(v) not in self.asked for v in vectors.tolist()]
        return points[new], vectors[new]

    def _candidates(self, points: np.ndarray) -> list[Candidate]:
        """The points as Candidates, marked as asked."""
        chosen = [self.space.candidate(point_values(self.space, p)) for p in points.tolist()]
        self.asked.update(c.vector for c in chosen)
        return chosen

    def _randoms(self, n: int) -> np.ndarray:
        return self.gen.integers(0, self.sizes, size=(n, len(self.sizes)))

    def _children(self, n: int) -> np.ndarray:
        """Failures with 1 to ``changes`` features redrawn; a parent's chance falls with its
        mode's size, so that rare modes are explored first."""
        modes = list(self.parents)
        if not modes:
            return self._randoms(n)
        parents = np.array([p for m in modes for p in self.parents[m]])
        weights = np.concatenate(
            [
                np.full(len(self.parents[m]), (1 + len(self.parents[m])) ** -self.balance)
                / len(self.parents[m])
                for m in modes
            ]
        )
        rows = parents[self.gen.choice(len(parents), size=n, p=weights / weights.sum())]
        redrawn = self.gen.random(rows.shape).argsort(axis=1)[:, : self.changes]
        keep = np.arange(self.changes) >= self.gen.integers(1, self.changes + 1, size=(n, 1))
        redrawn = np.where(keep, -1, redrawn)  # -1: a slot left unchanged
        for k in range(self.changes):
            r = np.flatnonzero(redrawn[:, k] >= 0)
            f = redrawn[r, k]
            # another value, uniformly: a shift by 1 .. size - 1 (none when there is no other)
            shift = np.floor(self.gen.random(len(r)) * (self.sizes[f] - 1)).astype(int) + 1
            rows[r, f] = (rows[r, f] + np.where(self.sizes[f] > 1, shift, 0)) % self.sizes[f]
        return rows

    def _least_tried(self, n: int) -> np.ndarray:
        """Random points with one feature, drawn at random, set to a value tried least."""
        rows = self._randoms(n)
        features = self.gen.integers(0, len(self.sizes), size=n)
        for f, size in enumerate(self.sizes.tolist()):
            r = np.flatnonzero(features == f)
            counts = self.tried[self.offsets[f] : self.offsets[f] + size]
            fewest = np.flatnonzero(counts == counts.min())
            rows[r, f] = fewest[self.gen.integers(0, len(fewest), size=len(r))]
        return rows

    def _unseen_random(self) -> Candidate | None:
        for _ in range(TRIES + 1):
            candidate = self.space.candidate(self.space.random_values(self.rng))
            if candidate.vector not in self.asked:
                self.asked.add(candidate.vector)
                return candidate
        return None

    def _unseen_mode_chance(self) -> float:
        """The chance that a random candidate fails in a mode not seen yet: Good-Turing's
        estimate of the missing mass (modes met once among the random draws' verdicts, over
        those verdicts), add-one smoothed so that it is never 0. Below ``GOOD_TURING_SAMPLE``
        random verdicts the estimate is too rough to act on (3 singletons in 20 draws say
        14%), and the model decides: early, the failures it knows are the best lead."""
        told = sum(self.random_modes.values())
        if told < GOOD_TURING_SAMPLE:
            return 0.0
        once = sum(1 for mode, n in self.random_modes.items() if mode is not None and n == 1)
        return (once + 1) / (told + 2)

    def _random_count(self) -> int:
        """Random slots of a batch: ``explore`` of it, the fraction settled by a draw."""
        whole, part = divmod(self.explore * self.population, 1)
        return int(whole) + (self.rng.random() < part)

    def _point(self, values: Mapping[str, Any]) -> np.ndarray:
        return np.array([f.index(values[f.name]) for f in self.space.features])

    def _one_hot(self, points: np.ndarray) -> np.ndarray:
        X = np.zeros((len(points), self.width), dtype=np.float32)
        X[np.arange(len(points))[:, None], self.offsets + points] = 1.0
        return X
