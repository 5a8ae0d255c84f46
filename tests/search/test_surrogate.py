"""Surrogate search: learns where failures are, finds a second region random search misses,
never asks a vector twice, and asks the same again when told the same."""

import numpy as np
import pytest
from search_samples import SPACE

from stellar.analysis.failure_rules import Condition, Verdict, failure_rules
from stellar.features import parse_feature_space
from stellar.search.random_search import RandomSearch
from stellar.search.surrogate import SurrogateSearch

# Two planted failure regions, each a conjunction of three values: a, b, c at 0 (1 in 64 of
# the space) and the rarer d=1, e=2, f=3 (1 in 512), whose near misses (two of the three
# values) fail a third of the time in a mode of their own, as failures thin out around a
# real fault.
PLANTED = parse_feature_space(
    {
        "features": [
            {"name": n, "kind": "content", "values": list(range(k))}
            for n, k in zip("abcdef", (4, 4, 4, 8, 8, 8), strict=True)
        ]
    }
)
FIRST = (Condition("a", "0"), Condition("b", "0"), Condition("c", "0"))
SECOND = (Condition("d", "1"), Condition("e", "2"), Condition("f", "3"))


def region(values) -> int | None:
    if values["a"] == values["b"] == values["c"] == 0:
        return 1
    near = (values["d"] == 1) + (values["e"] == 2) + (values["f"] == 3)
    if near == 3:
        return 2
    if near == 2 and (values["d"] + values["e"] + values["f"]) % 3 == 0:
        return 3
    return None


def search_planted(search, tests: int) -> list[Verdict]:
    told: list[Verdict] = []
    while len(told) < tests:
        asked = search.ask()[: tests - len(told)]
        modes = [region(c.values) for c in asked]
        scores = [[0.0 if m else 1.0] for m in modes]
        if isinstance(search, SurrogateSearch):
            search.tell(asked, scores, modes=modes)
        else:
            search.tell(asked, scores)
        told += [
            Verdict({k: str(v) for k, v in c.values.items()}, m is not None, m)
            for c, m in zip(asked, modes, strict=True)
        ]
    return told


def regions(told: list[Verdict]) -> set[int]:
    return {v.mode for v in told if v.mode in (1, 2)}


def test_it_finds_both_planted_regions_where_random_search_finds_one():
    seeds = range(10)  # at 200 tests: the learning search 7 of 10 seeds, random 2
    learnt = [search_planted(SurrogateSearch(PLANTED, seed=s), 200) for s in seeds]
    drawn = [search_planted(RandomSearch(PLANTED, seed=s), 200) for s in seeds]
    assert sum(regions(t) == {1, 2} for t in learnt) >= 7
    assert sum(regions(t) == {1, 2} for t in drawn) <= 3
    assert all(1 in regions(t) for t in drawn)  # random search does find the larger one
    # and most of what the learning search asks fails
    assert np.mean([sum(v.failed for v in t) for t in learnt]) > 5 * np.mean(
        [sum(v.failed for v in t) for t in drawn]
    )


def test_the_rule_of_each_planted_region_is_its_conjunction():
    # uniform tests: the larger region, exactly, and nothing else at 100%
    for seed in range(3):
        rules = failure_rules(search_planted(RandomSearch(PLANTED, seed=seed), 1000))
        assert FIRST in {r.conditions for r in rules}
        assert all(r.conditions == FIRST for r in rules if r.precision == 1.0)
    # the search's own tests, drawn where it expects failures: seeds 0-9 at this commit give
    # the first conjunction in 7 runs, the second in 4 of the 7 that found it (the others
    # name a broader rule that takes in its near misses, such as e=2 & f=3: 38 of 48)
    found = [
        {r.conditions for r in failure_rules(search_planted(SurrogateSearch(PLANTED, seed=s), 200))}
        for s in range(10)
    ]
    assert sum(FIRST in rules for rules in found) >= 6
    assert sum(SECOND in rules for rules in found) >= 3


def test_no_vector_is_asked_twice_and_constraints_hold():
    space = parse_feature_space(
        {
            "features": [
                {"name": "place", "kind": "content", "values": ["bar", "cafe", "museum"]},
                {"name": "drink", "kind": "content", "values": ["none", "beer", "tea"]},
                {"name": "tone", "kind": "style", "values": ["rude", "plain", "polite"]},
            ],
            "constraints": [{"when": {"place": "museum"}, "set": {"drink": "none"}}],
        }
    )
    search = SurrogateSearch(space, seed=3, population=5, warmup=5, pool=50)
    asked = []
    while batch := search.ask():
        asked += batch
        fails = [c.values["tone"] == "rude" or None for c in batch]
        search.tell(batch, [[0.0 if f else 1.0] for f in fails], modes=fails)
    vectors = [c.vector for c in asked]
    assert len(vectors) == len(set(vectors)) == 21  # the 21 valid combinations, then none
    assert all(space.satisfies(c.values) for c in asked)
    assert search.fits > 0


def test_told_the_same_it_asks_the_same():
    def history(seed: int) -> list[tuple[float, ...]]:
        search = SurrogateSearch(SPACE, seed=seed, population=8, warmup=8)
        vectors = []
        for _ in range(8):
            batch = search.ask()
            vectors += [c.vector for c in batch]
            modes = [c.values["place"] if c.values["price"] == 1 else None for c in batch]
            excluded = [c.values["noise"] == "typos" for c in batch]
            scores = [[0.0 if m else 1.0] for m in modes]
            search.tell(batch, scores, modes=modes, excluded=excluded)
        return vectors

    assert history(4) == history(4)
    assert history(4) != history(5)


def test_excluded_tests_and_duplicates_are_learnt_as_worth_nothing():
    search = SurrogateSearch(SPACE, seed=0, population=12, warmup=4)
    batch = search.ask()
    kinds = [i % 3 for i in range(len(batch))]  # 0: failed, 1: excluded, 2: a duplicate
    search.tell(
        batch,
        [None if k == 2 else [0.0] for k in kinds],
        modes=[7 if k == 0 else None for k in kinds],
        excluded=[k == 1 for k in kinds],
        duplicate=[k == 2 for k in kinds],
    )
    assert sorted(map(str, search.labels)) == ["-2"] * 4 + ["-3"] * 4 + ["7"] * 4
    worth = dict(zip(search.model.classes_, search.worth, strict=True))
    assert worth["-2"] == worth["-3"] == 0 < worth["7"]


def test_a_discard_that_is_not_a_duplicate_teaches_nothing():
    search = SurrogateSearch(SPACE, seed=0, population=6)
    batch = search.ask()
    search.tell(batch, [None] * len(batch), modes=[None] * len(batch))
    assert search.labels == []


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"learner": "svm"}, "learner must be one of"),
        ({"pool": 0}, "pool must be at least 1"),
        ({"explore": 1.5}, r"explore must be in \[0, 1\]"),
        ({"changes": 9}, "changes must be from 1 to 4"),
    ],
)
def test_bad_settings_are_refused(setting, message):
    with pytest.raises(ValueError, match=message):
        SurrogateSearch(SPACE, **setting)


def test_before_the_model_it_mutates_the_failures_found():
    search = SurrogateSearch(SPACE, seed=2, population=6, explore=0.0, changes=1)
    parent = SPACE.candidate({"place": "bar", "price": 2, "tone": "rude", "noise": "none"})
    search.tell([parent], [[0.0]], modes=[5])
    children = search.ask()
    assert search.model is None  # one outcome: far below the warm-up
    assert len(children) == 6  # of the 10 neighbours
    assert all(sum(c.values[n] != parent.values[n] for n in SPACE.names) <= 1 for c in children)
