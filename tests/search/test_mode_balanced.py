"""Mode-balanced search: children of failures, rare modes first, separated regions found."""

import numpy as np
import pytest
from search_samples import SPACE

from stellar.features import parse_feature_space
from stellar.search.mode_balanced import ModeBalancedSearch
from stellar.search.nsga2 import StellarSearch


def differences(a, b) -> int:
    return sum(a[name] != b[name] for name in SPACE.names)


def test_before_any_failure_it_asks_distinct_random_candidates():
    search = ModeBalancedSearch(SPACE, seed=0, population=20)
    asked = search.ask()
    search.tell(asked, [[0.9]] * len(asked), modes=[None] * len(asked))
    asked += search.ask()
    assert len({c.vector for c in asked}) == 40  # no vector asked twice
    assert not search.parents


def test_children_change_at_most_the_set_number_of_a_failures_features():
    search = ModeBalancedSearch(SPACE, seed=1, population=30, explore=0.0, changes=1)
    parent = SPACE.candidate({"place": "bar", "price": 2, "tone": "rude", "noise": "none"})
    search.tell([parent], [[0.0]], modes=[7])
    children = search.ask()
    assert all(differences(c.values, parent.values) <= 1 for c in children)
    assert len({c.vector for c in children}) > 1


def test_a_small_mode_is_drawn_more_often_than_a_large_one():
    search = ModeBalancedSearch(SPACE, seed=2, explore=0.0, changes=1)
    bars = [SPACE.candidate({**SPACE.random_values(search.rng), "place": "bar"}) for _ in range(30)]
    museums = [SPACE.candidate({**SPACE.random_values(search.rng), "place": "museum"})]
    museums *= 3
    told = bars + museums
    search.tell(told, [[0.0]] * len(told), modes=["bar"] * 30 + ["museum"] * 3)
    children = [search._draw() for _ in range(400)]  # the draws, repeats allowed (small space)
    museum_share = np.mean([c.values["place"] == "museum" for c in children])
    # weights 3 ** -0.5 against 30 ** -0.5: 76% of children from the museum mode, of which
    # a quarter change the place
    assert 0.45 < museum_share < 0.75


# Three separated failure regions of unequal size in a 6^4 grid; the score falls towards
# each region's centre, so a search minimising it is drawn into whichever it meets first.
PLANTED = parse_feature_space(
    {
        "features": [
            {"name": n, "kind": "content", "ordinal": True, "values": list(range(6))}
            for n in "abcd"
        ]
    }
)
REGIONS = [((0, 0, 0, 0), 5.0), ((5, 5, 5, 0), 2.5), ((5, 0, 5, 5), 1.5)]


def landscape(values) -> tuple[float, int]:
    x = np.array([values[n] for n in "abcd"])
    scaled = [np.abs(x - np.array(centre)).sum() / radius for centre, radius in REGIONS]
    region = int(np.argmin(scaled))
    d = scaled[region]
    return (0.5 * d if d < 1 else min(1.0, 0.5 + 0.05 * (d - 1))), region


def regions_found(search, tests: int, told_modes: bool) -> int:
    found: set[int] = set()
    for _ in range(tests // 10):
        asked = search.ask()
        scored = [landscape(c.values) for c in asked]
        modes = [region if score < 0.5 else None for score, region in scored]
        scores = [[score] for score, _ in scored]
        search.tell(asked, scores, modes=modes) if told_modes else search.tell(asked, scores)
        found |= {m for m in modes if m is not None}
    return len(found)


def test_it_finds_three_separated_regions_where_the_papers_search_finds_one():
    seeds = range(10)
    balanced = [
        regions_found(ModeBalancedSearch(PLANTED, seed=s, population=10), 300, True) for s in seeds
    ]
    paper = [
        regions_found(StellarSearch(PLANTED, seed=s, population=10), 300, False) for s in seeds
    ]
    assert sum(n == 3 for n in balanced) >= 6
    assert max(paper) <= 2 and np.mean(paper) < 1.5


def test_a_spent_space_ends_the_search():
    tiny = parse_feature_space(
        {"features": [{"name": n, "kind": "content", "values": [1, 2, 3]} for n in "ab"]}
    )
    search = ModeBalancedSearch(tiny, seed=0, population=4)
    asked = []
    while batch := search.ask():
        asked += batch
        search.tell(batch, [[0.0]] * len(batch), modes=[0] * len(batch))
    assert sorted(c.vector for c in asked) == sorted({c.vector for c in asked})
    assert len(asked) == 9  # every combination once, then nothing


def test_more_changes_than_features_is_an_error_not_a_silent_cap():
    with pytest.raises(ValueError, match="changes must be from 1 to 4, got 5"):
        ModeBalancedSearch(SPACE, changes=5)
