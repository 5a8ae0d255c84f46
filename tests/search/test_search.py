from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pymoo.core.duplicate import DefaultDuplicateElimination
from pymoo.core.population import Population
from pymoo.core.problem import Problem
from strategies import spaces

from stellar.errors import StellarError
from stellar.features import Feature, FeatureSpace, parse_feature_space
from stellar.search import make_algorithm
from stellar.search.nsga2 import (
    ConstraintRepair,
    GridDuplicates,
    MixedCrossover,
    MixedMutation,
    StellarSearch,
)
from stellar.search.random_search import RandomSearch

NAVI_LIKE = parse_feature_space(
    {
        "features": [
            {
                "name": "category",
                "kind": "content",
                "values": ["hospital", "restaurant", "cafe", "bar"],
            },
            {"name": "cuisine", "kind": "content", "values": ["none", "thai", "greek", "german"]},
            {
                "name": "rating",
                "kind": "content",
                "ordinal": True,
                "values": ["none", 3.5, 4, 4.5, 5],
            },
            {
                "name": "politeness",
                "kind": "style",
                "ordinal": True,
                "values": ["rude", "neutral", "polite"],
            },
        ],
        "constraints": [
            {"when": {"category": "hospital"}, "set": {"cuisine": "none", "rating": "none"}},
            {"when": {"category": {"not": ["restaurant", "cafe"]}}, "set": {"cuisine": "none"}},
        ],
    }
)


def _valid(space: FeatureSpace, vector) -> bool:
    values = space.decode(vector)
    return space.satisfies(values) and tuple(vector) == space.encode(values)


@settings(max_examples=60, deadline=None)
@given(spaces(), st.integers(0, 2**32 - 1))
def test_operator_outputs_decode_to_valid_values(space, seed):
    rng = np.random.default_rng(seed)
    problem = Problem(n_var=len(space), n_obj=1, xl=space.lower_bounds, xu=space.upper_bounds)
    ordinal = space.ordinal_mask
    n_values = np.array([len(f.values) for f in space.features])
    parents = np.array(
        [
            [space.candidate(space.random_values(_py(rng))).vector for _ in range(6)]
            for _ in range(2)
        ],
        dtype=float,
    )
    children = MixedCrossover(ordinal, prob=1.0, eta=15)._do(problem, parents, random_state=rng)
    flat = children.reshape(-1, len(space))
    mutated = MixedMutation(ordinal, n_values, prob_var=0.5, eta=20)._do(
        problem, flat, random_state=rng
    )
    for x in mutated:
        assert (x >= space.lower_bounds - 1e-9).all() and (x <= space.upper_bounds + 1e-9).all()
        values = space.decode(x)
        for f in space.features:
            f.index(values[f.name])
    repaired = ConstraintRepair(space)._do(problem, mutated)
    assert all(_valid(space, x) for x in repaired)


def _py(rng: np.random.Generator):
    import random

    return random.Random(int(rng.integers(2**32)))


def test_categorical_columns_stay_integral_and_mutation_rate_is_respected():
    space = FeatureSpace([Feature(f"c{i}", "content", tuple(range(10))) for i in range(20)])
    problem = Problem(n_var=20, n_obj=1, xl=space.lower_bounds, xu=space.upper_bounds)
    X = np.zeros((500, 20))
    out = MixedMutation(space.ordinal_mask, np.full(20, 10), prob_var=0.1, eta=20)._do(
        problem, X, random_state=np.random.default_rng(0)
    )
    assert np.array_equal(out, np.rint(out))
    changed = (out != 0).mean()
    assert 0.07 < changed < 0.11  # 0.1 reset rate, of which 1/10 draws the same value


@pytest.mark.parametrize("objectives", [1, 2])
def test_stellar_ask_tell_loop_keeps_valid_candidates(objectives):
    algo = StellarSearch(NAVI_LIKE, n_objectives=objectives, seed=3, population=8)
    for _ in range(5):
        candidates = algo.ask()
        assert 0 < len(candidates) <= 8
        for c in candidates:
            assert NAVI_LIKE.satisfies(c.values)
            assert NAVI_LIKE.encode(c.values) == c.vector
        scores = [[c.vector[2]] * objectives for c in candidates]
        algo.tell(candidates, scores)
    assert len(algo.algorithm.pop) == 8


def test_discarded_candidates_never_enter_the_population():
    algo = StellarSearch(NAVI_LIKE, n_objectives=1, seed=0, population=6)
    for _ in range(4):
        candidates = algo.ask()
        # every bar is "discarded": no score
        scores = [None if c.values["category"] == "bar" else [0.5] for c in candidates]
        algo.tell(candidates, scores)
        for x in algo.algorithm.pop.get("X"):
            assert NAVI_LIKE.decode(x)["category"] != "bar"


def test_all_discarded_initial_population_is_resampled():
    algo = StellarSearch(NAVI_LIKE, n_objectives=1, seed=0, population=6)
    first = algo.ask()
    algo.tell(first, [None] * len(first))
    second = algo.ask()
    assert [c.vector for c in second] != [c.vector for c in first]
    algo.tell(second, [[0.1]] * len(second))
    assert len(algo.algorithm.pop) == len(second)


def test_same_seed_same_candidates():
    def trace(seed):
        algo = StellarSearch(NAVI_LIKE, n_objectives=1, seed=seed, population=6)
        out = []
        for _ in range(3):
            cands = algo.ask()
            out.append([c.vector for c in cands])
            algo.tell(cands, [[sum(c.vector) / 10] for c in cands])
        return out

    assert trace(7) == trace(7)
    assert trace(7) != trace(8)


def test_nsga2_minimises_a_simple_objective():
    """On a smooth objective the search concentrates where it is lowest; random does not."""
    space = FeatureSpace(
        [Feature(f"o{i}", "style", tuple(range(10)), ordinal=True) for i in range(4)]
    )

    def best_after(algo):
        best = 1.0
        for _ in range(15):
            cands = algo.ask()
            scores = [[sum(c.vector) / 3.6] for c in cands]
            best = min(best, *(s[0] for s in scores))
            algo.tell(cands, scores)
        return best

    stellar = np.mean([best_after(StellarSearch(space, 1, s, population=10)) for s in range(5)])
    rand = np.mean([best_after(RandomSearch(space, 1, s, population=10)) for s in range(5)])
    assert stellar < rand


def test_make_algorithm_by_name_and_path_refuses_foreign_options():
    algo = make_algorithm("random", NAVI_LIKE, 1, 0, population=4)
    assert isinstance(algo, RandomSearch) and len(algo.ask()) == 4
    with pytest.raises(StellarError, match=r"algorithm 'random' has no option 'crossover'"):
        make_algorithm("random", NAVI_LIKE, 1, 0, population=4, crossover=0.7)
    algo = make_algorithm("stellar.search.nsga2:StellarSearch", NAVI_LIKE, 2, 0, population=4)
    assert isinstance(algo, StellarSearch)


def test_invalid_settings_are_rejected():
    with pytest.raises(ValueError, match="crossover"):
        StellarSearch(NAVI_LIKE, crossover=1.5)
    with pytest.raises(ValueError, match="population"):
        RandomSearch(NAVI_LIKE, population=0)


def test_pymoo_operator_internals_are_unchanged():
    """nsga2.py drives pymoo's SBX and PM through ``_do`` on column subsets (pymoo has no
    public call for that); pyproject pins pymoo, and these recorded offspring catch a change
    of those internals when the pin is moved."""
    ordinal = np.array([True, False, True, False])
    problem = SimpleNamespace(xl=np.zeros(4), xu=np.array([4.0, 3.0, 5.0, 2.0]), n_var=4)
    rng = np.random.default_rng(7)
    parents = np.array([[[0, 1, 1, 2], [4, 0, 2, 1]], [[1, 2, 5, 0], [3, 3, 0, 2]]], dtype=float)
    children = MixedCrossover(ordinal, prob=1.0, eta=15)._do(problem, parents, random_state=rng)
    mutated = MixedMutation(ordinal, np.array([5, 4, 6, 3]), prob_var=0.5, eta=20)._do(
        problem, children.reshape(-1, 4), random_state=rng
    )
    assert np.round(children, 4).tolist() == [
        [[0.0, 2.0, 1.4954, 0.0], [3.9939, 3.0, 2.0, 2.0]],
        [[1.0, 1.0, 4.4409, 2.0], [2.9668, 0.0, 0.0, 1.0]],
    ]
    assert np.round(mutated, 4).tolist() == [
        [0.0, 3.0, 1.4954, 0.0],
        [3.9939, 0.0, 2.0, 2.0],
        [1.0, 1.0, 4.4409, 2.0],
        [3.015, 3.0, 0.0, 0.0],
    ]


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(*[st.integers(0, 3)] * 3), min_size=1, max_size=12),
    others=st.lists(st.tuples(*[st.integers(0, 3)] * 3), max_size=12),
)
def test_grid_duplicates_give_pymoos_verdicts(rows, others):
    pop, other = Population.new(X=np.array(rows, float)), Population.new(X=np.array(others, float))
    for args in ((), (other,)):
        ours = GridDuplicates().do(pop, *args, return_indices=True)
        pymoos = DefaultDuplicateElimination().do(pop, *args, return_indices=True)
        assert ours[1:] == pymoos[1:]


def test_grid_duplicates_leave_the_search_unchanged():
    def asks(duplicates) -> list:
        search = StellarSearch(NAVI_LIKE, seed=3, population=8)
        if duplicates is not None:
            search.algorithm.eliminate_duplicates = duplicates
            search.algorithm.mating.eliminate_duplicates = duplicates
        seen = []
        for _ in range(30):
            batch = search.ask()
            seen.append([c.vector for c in batch])
            search.tell(batch, [[sum(c.vector) % 3] for c in batch])
        return seen

    assert asks(None) == asks(DefaultDuplicateElimination())
