"""T-wise and ASTRAL-style baselines: coverage, determinism, constraints, cache, runs."""

import asyncio
import itertools
import math

import pytest

from stellar.errors import StellarError
from stellar.features import parse_feature_space
from stellar.run import Run
from stellar.search import make_algorithm
from stellar.search import twise as twise_module
from stellar.search.astral import AstralSearch
from stellar.search.twise import TwiseSearch

SMALL = parse_feature_space(
    {
        "features": [
            {"name": "a", "kind": "content", "values": ["x", "y"]},
            {"name": "b", "kind": "content", "values": [1, 2, 3]},
            {"name": "c", "kind": "style", "values": [True, False]},
            {"name": "d", "kind": "style", "values": ["p", "q", "r"]},
            {"name": "e", "kind": "perturbation", "values": ["none", "typos"]},
        ]
    }
)

SHOP = parse_feature_space(
    {
        "features": [
            {"name": "category", "kind": "content", "values": ["hospital", "restaurant", "cafe"]},
            {"name": "cuisine", "kind": "content", "values": ["none", "thai", "greek"]},
            {"name": "politeness", "kind": "style", "values": ["rude", "polite"]},
            {"name": "noise", "kind": "perturbation", "values": ["none", "shouting"]},
        ],
        "constraints": [
            {"when": {"category": "hospital"}, "set": {"cuisine": "none"}},
            {"when": {"noise": "shouting"}, "set": {"politeness": "rude"}},
        ],
    }
)


@pytest.fixture(autouse=True)
def cache_home(tmp_path, monkeypatch):
    """Every test gets its own covering-array cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def ask_all(algorithm, limit: int = 100_000) -> list[list]:
    batches = []
    while batch := algorithm.ask():
        batches.append(batch)
        assert len(batches) < limit
    return batches


def asked(algorithm) -> list:
    """Every candidate the algorithm asks until it runs out."""
    return [c for batch in ask_all(algorithm) for c in batch]


def all_t_tuples(space, t: int) -> set:
    """Every t-tuple of the unconstrained space, by enumeration."""
    out = set()
    for combo in itertools.combinations(range(len(space)), t):
        for values in itertools.product(*(space.features[i].values for i in combo)):
            out.add((combo, values))
    return out


def covered_by(rows, space, t: int) -> set:
    """The t-tuples the rows cover, by brute force (independent of t_tuples)."""
    names = space.names
    out = set()
    for row in rows:
        for combo in itertools.combinations(range(len(names)), t):
            out.add((combo, tuple(row[names[i]] for i in combo)))
    return out


# ---------------------------------------------------------------------------- t-wise


@pytest.mark.parametrize("t", [1, 2, 3])
def test_twise_array_covers_every_t_tuple(t):
    algorithm = TwiseSearch(SMALL, strength=t, population=7)
    rows = [c.values for c in asked(algorithm)]
    assert len(rows) == len(algorithm.rows) < SMALL.size
    expected = all_t_tuples(SMALL, t)
    for combo, values in expected:
        names = [SMALL.names[i] for i in combo]
        assert any(tuple(row[n] for n in names) == values for row in rows), (combo, values)
    report = algorithm.report(rows)
    assert report["tuples_total"] == report["tuples_covered"] == len(expected)
    assert report["coverage"] == 1.0


def test_reported_coverage_within_a_budget_is_the_recount():
    algorithm = TwiseSearch(SHOP, strength=2, population=3)
    executed = [c.values for c in algorithm.ask() + algorithm.ask()]
    everything = [c.values for c in algorithm.rows]
    report = algorithm.report(executed)
    total = covered_by(everything, SHOP, 2)
    covered = covered_by(executed, SHOP, 2)
    assert report["rows"] == len(everything)
    assert report["rows_asked"] == 6
    assert report["tuples_total"] == len(total)
    assert report["tuples_covered"] == len(covered)
    assert report["coverage"] == pytest.approx(len(covered) / len(total))
    assert 0 < report["coverage"] < 1
    # constraints remove tuples such as (hospital, thai) from the constrained array
    assert len(total) < len(all_t_tuples(SHOP, 2))


def test_strength_is_clipped_to_the_number_of_features():
    algorithm = TwiseSearch(SMALL, strength=9)
    assert algorithm.strength == len(SMALL)
    report = algorithm.report([])
    assert report["strength"] == len(SMALL)
    assert report["rows"] == SMALL.size  # strength n: every combination
    assert report["tuples_covered"] == 0 and report["coverage"] == 0.0


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError, match="strength"):
        TwiseSearch(SMALL, strength=0)
    with pytest.raises(ValueError, match="population"):
        TwiseSearch(SMALL, population=0)


def test_twise_order_depends_on_the_seed_only():
    def order(seed):
        return [c.values for c in asked(TwiseSearch(SMALL, seed=seed, strength=3))]

    assert order(3) == order(3)
    assert order(3) != order(4)
    key = sorted(map(repr, order(3)))
    assert key == sorted(map(repr, order(4)))


def test_twise_respects_constraints_and_runs_out():
    algorithm = TwiseSearch(SHOP, strength=2, population=4)
    batches = ask_all(algorithm)
    rows = [c for batch in batches for c in batch]
    assert all(len(batch) == 4 for batch in batches[:-1])
    assert len(rows) == len(algorithm.rows)
    assert all(SHOP.satisfies(c.values) for c in rows)
    assert all(c.vector == SHOP.encode(c.values) for c in rows)
    assert algorithm.ask() == []
    assert algorithm.report([c.values for c in rows])["coverage"] == 1.0


def test_covering_array_is_cached_on_disk(monkeypatch, cache_home):
    first = TwiseSearch(SMALL, strength=3)
    rows = [c.values for c in first.rows]
    assert list((cache_home / "stellar" / "covering-arrays").glob("*.json"))

    def fail(*args, **kwargs):
        raise AssertionError("covering array rebuilt")

    monkeypatch.setattr(twise_module, "CoveringArray", fail)
    assert [c.values for c in TwiseSearch(SMALL, strength=3).rows] == rows
    with pytest.raises(AssertionError, match="rebuilt"):
        TwiseSearch(SMALL, strength=2).ask()  # another strength is another key


def test_broken_cache_does_not_fail_the_run(monkeypatch, tmp_path, cache_home):
    reference = [c.values for c in TwiseSearch(SMALL, strength=2).rows]
    for path in (cache_home / "stellar" / "covering-arrays").glob("*.json"):
        path.write_text("{not json", encoding="utf-8")  # a corrupt entry is rebuilt
    assert [c.values for c in TwiseSearch(SMALL, strength=2).rows] == reference
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # the cache dir cannot be created
    assert [c.values for c in TwiseSearch(SMALL, strength=2).rows] == reference


# ---------------------------------------------------------------------------- ASTRAL


def cell(candidate, names):
    return tuple(candidate.values[n] for n in names)


def test_astral_visits_every_valid_cell_once_per_round():
    names = ["category", "cuisine"]
    algorithm = AstralSearch(SHOP, seed=5, population=4, cells=names, per_cell=3)
    batches = ask_all(algorithm)
    visits = [cell(c, names) for batch in batches for c in batch]
    valid = {
        (cat, cui)
        for cat, cui in itertools.product(SHOP["category"].values, SHOP["cuisine"].values)
        if cat != "hospital" or cui == "none"
    }
    assert len(valid) == 7
    assert len(visits) == 3 * 7
    rounds = [visits[i : i + 7] for i in range(0, 21, 7)]
    assert set(rounds[0]) == valid and len(set(rounds[0])) == 7
    assert rounds[0] == rounds[1] == rounds[2]  # round-robin
    assert algorithm.ask() == []
    report = algorithm.report([c.values for batch in batches[:1] for c in batch])
    assert report == {"cells": 7, "per_cell": 3, "cells_visited": 4, "cell_coverage": 4 / 7}


def test_astral_keeps_cell_values_under_constraints():
    """'polite' is only valid without shouting: every polite visit must not shout."""
    algorithm = AstralSearch(SHOP, seed=1, population=50, cells=["politeness"], per_cell=40)
    visits = asked(algorithm)
    assert len(visits) == 80
    assert sum(c.values["politeness"] == "polite" for c in visits) == 40
    assert all(SHOP.satisfies(c.values) for c in visits)
    assert all(c.values["noise"] == "none" for c in visits if c.values["politeness"] == "polite")


def test_astral_default_cells_and_determinism():
    algorithm = AstralSearch(SHOP, seed=2)
    assert algorithm.cell_features == ["politeness", "category"]
    again = AstralSearch(SHOP, seed=2)
    other = AstralSearch(SHOP, seed=3)
    first = [c.values for c in algorithm.ask()]
    assert first == [c.values for c in again.ask()]
    assert first != [c.values for c in other.ask()]


def test_astral_rejects_unknown_cells():
    with pytest.raises(ValueError, match="unknown feature 'colour'"):
        AstralSearch(SHOP, cells=["category", "colour"])
    with pytest.raises(ValueError, match="per_cell"):
        AstralSearch(SHOP, per_cell=0)
    with pytest.raises(StellarError, match="algorithm astral: cells: unknown") as info:
        make_algorithm("astral", SHOP, 1, 0, cells=["colour"])
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------- wiring


def test_make_algorithm_builds_both():
    twise = make_algorithm("twise", SMALL, 2, 3, population=5, strength=2)
    assert isinstance(twise, TwiseSearch) and twise.strength == 2 and len(twise.ask()) == 5
    astral = make_algorithm("astral", SHOP, 1, 0, population=3, cells=["category"], per_cell=2)
    assert isinstance(astral, AstralSearch) and astral.per_cell == 2
    assert len(astral.ask()) == 3 and len(astral.ask()) == 3 and astral.ask() == []


@pytest.mark.parametrize("name", ["twise", "astral"])
def test_whole_run(toy_config, name):
    summary = asyncio.run(Run(toy_config(**{"algorithm.name": name, "budget.tests": 30})).execute())
    assert summary.tests == 30
    assert summary.stop_message == "test budget reached (30 tests)"


def test_astral_run_ends_when_every_cell_is_visited(toy_config):
    """Toy default cells: mood x politeness x color = 72 cells, all valid."""
    summary = asyncio.run(Run(toy_config(**{"algorithm.name": "astral"})).execute())
    assert summary.stop_reason == "search space exhausted"
    assert summary.tests + summary.discarded == math.prod([4, 3, 6])
