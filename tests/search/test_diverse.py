"""Diversity-aware NSGA-II: crowding, re-penalised population, the oracle's failure rule."""

import asyncio
import random

import numpy as np
import pytest
from search_samples import SPACE

from stellar.assembly import build_algorithm
from stellar.errors import StellarError
from stellar.features import parse_feature_space
from stellar.run import Run
from stellar.search import failing_below, make_algorithm
from stellar.search.diverse import DiverseSearch
from stellar.search.nsga2 import StellarSearch


def planted(values) -> list[float]:
    """Every bar fails hard; rude requests fail mildly wherever they are."""
    if values["place"] == "bar":
        return [0.0]
    return [0.4 if values["tone"] == "rude" else 0.9]


def search(algorithm, generations: int) -> list[dict]:
    """Ask and tell with the planted scores; the failing candidates found."""
    found = []
    for _ in range(generations):
        candidates = algorithm.ask()
        scores = [planted(c.values) for c in candidates]
        algorithm.tell(candidates, scores)
        found += [c.values for c, s in zip(candidates, scores, strict=True) if s[0] < 0.5]
    return found


def test_crowding_counts_failures_sharing_value_pairs():
    algorithm = DiverseSearch(SPACE, seed=0, population=4)
    bar = {"place": "bar", "price": 1, "tone": "rude", "noise": "none"}
    museum = {"place": "museum", "price": 4, "tone": "polite", "noise": "typos"}
    algorithm.tell([], [])
    algorithm.failures.update(algorithm._keys(bar))
    assert algorithm.crowding(bar) == 1.0  # every one of its 6 pairs holds one failure
    assert algorithm.crowding(museum) == 0.0
    half = {**bar, "tone": "polite", "noise": "typos"}  # keeps 1 of 6 pairs: (place, price)
    assert algorithm.crowding(half) == pytest.approx(1 / 6)


def test_cells_make_one_region_per_cell():
    algorithm = DiverseSearch(SPACE, seed=0, cells=["place", "tone"])
    candidates = [
        SPACE.candidate({"place": "bar", "price": p, "tone": "rude", "noise": "none"})
        for p in (1, 2)
    ]
    algorithm.ask()
    algorithm.tell(candidates, [[0.0], [0.1]])
    assert algorithm.failures == {(0, 0): 2}
    assert algorithm.report([]) == {"regions": "cells", "regions_with_failures": 1}


def test_population_is_repenalised_as_failures_accumulate():
    algorithm = DiverseSearch(SPACE, seed=3, population=8, penalty=0.5)
    search(algorithm, 6)
    population = algorithm.algorithm.pop
    raw, penalised = population.get("scores"), population.get("F")
    crowding = np.array([algorithm.crowding(SPACE.decode(x)) for x in population.get("X")])
    assert np.allclose(penalised - raw, (0.5 * crowding / (crowding + 3.0))[:, None])
    assert (crowding > 0).any()


WIDE = parse_feature_space(
    {
        "features": [
            {"name": "place", "kind": "content", "values": ["bar", "cafe", "hotel", "shop", "gym"]},
            {"name": "price", "kind": "content", "ordinal": True, "values": [1, 2, 3, 4]},
            {"name": "tone", "kind": "style", "values": ["rude", "plain", "polite"]},
            {"name": "slang", "kind": "style", "values": ["formal", "neutral", "slangy"]},
            {"name": "noise", "kind": "perturbation", "values": ["none", "typos", "fillers"]},
        ]
    }
)


def test_finds_more_distinct_failures_than_plain_nsga2():
    """Once bars have given their failures, the penalty sends the search elsewhere, so the
    same budget yields more distinct failing inputs than the paper's NSGA-II on every seed."""

    def distinct(algorithm) -> int:
        return len({tuple(v.values()) for v in search(algorithm, 10)})

    for seed in range(4):
        plain = distinct(StellarSearch(WIDE, seed=seed, population=10))
        diverse = distinct(DiverseSearch(WIDE, seed=seed, population=10))
        assert diverse >= plain, seed


def test_same_seed_same_search():
    first, second = (search(DiverseSearch(SPACE, seed=7, population=6), 5) for _ in range(2))
    assert first == second


def test_failing_rule_comes_from_the_oracle(toy_config):
    config = toy_config(**{"algorithm.name": "diverse"})
    algorithm = build_algorithm(config, config.feature_space(), "diverse")
    limits = [config.oracle.below[name] for name in config.objectives]
    below = [limit - 0.01 for limit in limits]
    assert algorithm.failing(below) and not algorithm.failing(limits)


def test_failing_below_skips_objectives_without_a_threshold():
    failing = failing_below([None, 0.5])
    assert failing([0.0, 0.6]) is False and failing([0.9, 0.4]) is True


def test_options_are_checked():
    with pytest.raises(StellarError, match="penalty"):
        make_algorithm("diverse", SPACE, 1, 0, penalty=-1)
    with pytest.raises(StellarError, match="unknown feature 'colour'"):
        make_algorithm("diverse", SPACE, 1, 0, cells=["colour"])
    algorithm = make_algorithm("diverse", SPACE, 2, 0, population=5, mutation=0.2)
    assert isinstance(algorithm, DiverseSearch) and len(algorithm.ask()) == 5


def test_whole_run(toy_config):
    config = toy_config(**{"algorithm.name": "diverse", "budget.tests": 40})
    summary = asyncio.run(Run(config).execute())
    assert summary.tests == 40 and summary.algorithm_report["regions"] == "value pairs"


def test_random_scores_never_break_the_population():
    algorithm = DiverseSearch(SPACE, n_objectives=2, seed=1, population=6)
    rng = random.Random(0)
    for _ in range(8):
        candidates = algorithm.ask()
        algorithm.tell(
            candidates,
            [None if rng.random() < 0.2 else [rng.random(), rng.random()] for _ in candidates],
        )
    assert len(algorithm.algorithm.pop) == 6
