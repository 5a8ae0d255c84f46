"""MAP-Elites: a planted grid, determinism, constraints, discarded tests, options, runs."""

import asyncio
import itertools
import statistics

import pytest
import yaml

from stellar.cli import main
from stellar.errors import StellarError
from stellar.features import parse_feature_space
from stellar.run import Run
from stellar.rundir import read_summary
from stellar.search import make_algorithm
from stellar.search.base import failing_below
from stellar.search.map_elites import MapElitesSearch
from stellar.search.random_search import RandomSearch

# 4 x 3 x 3 = 36 cells; detail and noise are the other features
PLANTED = parse_feature_space(
    {
        "features": [
            {"name": "topic", "kind": "content", "values": ["t0", "t1", "t2", "t3"]},
            {"name": "tone", "kind": "style", "values": ["rude", "neutral", "polite"]},
            {"name": "length", "kind": "style", "values": ["short", "medium", "long"]},
            {"name": "detail", "kind": "content", "values": ["d0", "d1", "d2", "d3"]},
            {"name": "noise", "kind": "perturbation", "values": ["none", "typos", "fillers"]},
        ]
    }
)
CELLS = ["topic", "tone", "length"]
FAILS = failing_below([0.3])

SHOP = parse_feature_space(
    {
        "features": [
            {"name": "category", "kind": "content", "values": ["hospital", "restaurant", "cafe"]},
            {"name": "cuisine", "kind": "content", "values": ["none", "thai", "greek"]},
            {"name": "politeness", "kind": "style", "values": ["rude", "polite"]},
            {"name": "noise", "kind": "perturbation", "values": ["none", "shouting"]},
            {"name": "length", "kind": "style", "values": ["short", "long"]},
        ],
        "constraints": [
            {"when": {"category": "hospital"}, "set": {"cuisine": "none"}},
            {"when": {"noise": "shouting"}, "set": {"politeness": "rude"}},
        ],
    }
)


def planted(candidate) -> list[float]:
    """Every cell fails for exactly one (detail, noise) of 12, its own; half a match is
    halfway there."""
    index = {name: PLANTED[name].index(v) for name, v in candidate.values.items()}
    detail = (index["topic"] + index["tone"]) % 4
    noise = (index["tone"] + index["length"]) % 3
    return [0.1 + 0.35 * (index["detail"] != detail) + 0.35 * (index["noise"] != noise)]


def drive(algorithm, objective, budget: int) -> list[tuple]:
    """Ask and tell until ``budget`` candidates are scored; (candidate, scores) pairs."""
    told: list[tuple] = []
    while len(told) < budget and (batch := algorithm.ask()):
        batch = batch[: budget - len(told)]
        scores = [objective(c) for c in batch]
        algorithm.tell(batch, scores)
        told += zip(batch, scores, strict=True)
    return told


def cell(candidate, names=CELLS) -> tuple:
    return tuple(candidate.values[n] for n in names)


def failing_cells(told) -> int:
    return len({cell(c) for c, s in told if FAILS(s)})


def test_fills_the_planted_grid_and_finds_failures_in_more_cells_than_random():
    budget = 200
    found = []
    for seed in range(5):
        algorithm = MapElitesSearch(PLANTED, seed=seed, population=10, cells=CELLS, failing=FAILS)
        told = drive(algorithm, planted, budget)
        assert len(told) == budget
        assert len({c.vector for c, _ in told}) == budget  # nothing asked twice
        assert len({cell(c) for c, _ in told}) >= 34  # of 36 cells
        assert len(algorithm.archive) == len({cell(c) for c, _ in told})
        found.append(failing_cells(told))
        report = algorithm.report([c.values for c, _ in told])
        assert report["cells"] == 36 and report["cells_failing"] == found[-1]
    rand = [
        failing_cells(drive(RandomSearch(PLANTED, seed=s, population=10), planted, budget))
        for s in range(20)
    ]
    assert statistics.mean(found) > 1.2 * statistics.mean(rand)


def test_elites_are_failures_first_then_the_lowest_mean():
    algorithm = MapElitesSearch(SHOP, 2, cells=["category"], failing=lambda s: s[1] < 0.2)
    rest = {"category": "cafe", "politeness": "rude", "noise": "none", "length": "short"}
    a, b, c = (SHOP.candidate(rest | {"cuisine": x}) for x in ("none", "thai", "greek"))
    algorithm.tell([a, b], [[0.0, 0.9], [0.9, 0.1]])  # a: lower mean, b: a failure
    algorithm.tell([c], [[0.0, 0.5]])
    [elite] = algorithm.archive.data("solution")
    assert tuple(elite) == b.vector
    assert algorithm.failures[(2,)] == 1 and algorithm.tests[(2,)] == 3


def test_same_seed_same_candidates_for_the_same_scores():
    def run(seed):
        algorithm = MapElitesSearch(PLANTED, seed=seed, population=7, cells=CELLS, failing=FAILS)
        return [c.values for c, _ in drive(algorithm, planted, 70)]

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_constraints_are_respected_and_candidates_land_in_their_cells():
    names = ["category", "cuisine", "politeness"]
    algorithm = MapElitesSearch(SHOP, seed=2, population=6, cells=names, move=0.8)
    told = drive(algorithm, lambda c: [0.4 if c.values["cuisine"] == "thai" else 0.9], 60)
    assert all(SHOP.satisfies(c.values) and c.vector == SHOP.encode(c.values) for c, _ in told)
    data = algorithm.archive.data(["solution", "measures"])
    for solution, measures in zip(data["solution"], data["measures"], strict=True):
        values = SHOP.decode(solution)
        assert tuple(SHOP[n].index(values[n]) for n in names) == tuple(measures)
    impossible = {("hospital", "thai"), ("hospital", "greek")}
    assert not {cell(c, names[:2]) for c, _ in told} & impossible
    valid = {
        (cat, cui, pol)
        for cat, cui, pol in itertools.product(*(SHOP[n].values for n in names))
        if (cat, cui) not in impossible
    }
    assert {cell(c, names) for c, _ in told} == valid  # 14 valid cells, every one asked


def test_discarded_candidates_are_ignored():
    algorithm = MapElitesSearch(PLANTED, seed=1, population=8, cells=CELLS, failing=FAILS)
    first = algorithm.ask()
    algorithm.tell(first, [None] * len(first))
    assert algorithm.archive.empty and not algorithm.tests
    second = algorithm.ask()  # still the random start; nothing asked twice
    assert len(second) == 8 and not {c.vector for c in first} & {c.vector for c in second}
    scores = [planted(c) if i % 2 else None for i, c in enumerate(second)]
    algorithm.tell(second, scores)
    kept = [c for c, s in zip(second, scores, strict=True) if s is not None]
    assert sum(algorithm.tests.values()) == len(kept)
    assert len(algorithm.archive) == len({cell(c) for c in kept})
    assert len(algorithm.ask()) == 8  # mutants of the kept elites


def test_a_tiny_space_runs_out():
    space = parse_feature_space(
        {
            "features": [
                {"name": "a", "kind": "style", "values": [1, 2]},
                {"name": "b", "kind": "content", "values": ["x", "y", "z"]},
            ]
        }
    )
    algorithm = MapElitesSearch(space, seed=0, population=4)
    assert algorithm.cell_features == ["a", "b"] and algorithm.others == []
    told = drive(algorithm, lambda c: [0.9], 100)
    assert len(told) == 6 and len({c.vector for c, _ in told}) == 6
    assert algorithm.ask() == []


def test_bad_options_are_rejected():
    with pytest.raises(ValueError, match="unknown feature 'colour'"):
        MapElitesSearch(PLANTED, cells=["topic", "colour"])
    with pytest.raises(ValueError, match="mutation must be a probability"):
        MapElitesSearch(PLANTED, mutation=1.5)
    with pytest.raises(ValueError, match="population"):
        MapElitesSearch(PLANTED, population=0)
    with pytest.raises(StellarError, match="algorithm map-elites: cells: unknown") as info:
        make_algorithm("map-elites", PLANTED, 1, 0, cells=["colour"])
    assert "\n" not in str(info.value)
    with pytest.raises(StellarError, match="has no option 'crossover'"):
        make_algorithm("map-elites", PLANTED, 1, 0, crossover=0.5)


def test_make_algorithm_hands_over_the_oracle():
    algorithm = make_algorithm("map-elites", PLANTED, 1, 0, FAILS, population=5, explore=0.2)
    assert isinstance(algorithm, MapElitesSearch) and algorithm.failing is FAILS
    assert algorithm.cell_features == ["tone", "length", "topic"]  # style + first content
    assert len(algorithm.ask()) == 5
    default = make_algorithm("map-elites", PLANTED, 2, 0)
    assert default.failing([0.4, 0.9]) and not default.failing([0.6, 0.9])


def test_whole_run(toy_config):
    config = toy_config(**{"algorithm.name": "map-elites", "budget.tests": 30})
    summary = asyncio.run(Run(config).execute())
    assert summary.tests == 30
    assert summary.stop_message == "test budget reached (30 tests)"
    report = summary.algorithm_report
    assert report["cells"] == 72 and 0 < report["cells_filled"] <= report["cells_visited"] <= 30


def test_stellar_run_of_the_built_in_use_case(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["run", "--algorithm", "map-elites", "--tests", "60", "--out", "runs", "--quiet"]
    assert main([*args, "--set", "duplicates.embedder=hashing"]) == 0  # hashing: no model load
    [run_dir] = (tmp_path / "runs").iterdir()
    assert run_dir.name.startswith("navi-map-elites-s0-")
    summary = read_summary(run_dir)
    assert summary["tests"] == 60
    assert summary["algorithm_report"]["cells"] == 9 * 3 * 3
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert config["algorithm"]["map-elites"]["cells"] == ["category", "implicitness", "politeness"]
