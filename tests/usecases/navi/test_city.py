"""Tests for the synthetic city (stellar.usecases.navi.city)."""

from __future__ import annotations

from collections import Counter

import pytest

from stellar.usecases.navi.city import ABSENT_COMBINATIONS, generate_pois
from stellar.usecases.navi.poi import POI
from stellar.usecases.navi.vocabulary import CATEGORIES, CUISINES, PAYMENT_METHODS, PRICE_LEVELS


@pytest.fixture(scope="module")
def generated() -> list[POI]:
    return generate_pois(seed=0)


def test_same_seed_gives_identical_pois_and_other_seed_differs(generated: list[POI]) -> None:
    assert generate_pois(seed=0) == generated
    other = generate_pois(seed=1)
    assert other != generated
    assert [p.name for p in other] != [p.name for p in generated]


@pytest.mark.parametrize("n", [50, 137, 3000])
def test_generates_exactly_n_pois_with_ids_1_to_n(n: int) -> None:
    pois = generate_pois(seed=3, n=n)
    assert len(pois) == n
    assert sorted(p.id for p in pois) == list(range(1, n + 1))


def test_too_few_pois_are_refused() -> None:
    with pytest.raises(ValueError, match="n >= 50"):
        generate_pois(n=10)


@pytest.mark.parametrize(("seed", "n"), [(0, 3000), (7, 50)])
def test_all_categories_and_cuisines_present(seed: int, n: int) -> None:
    pois = generate_pois(seed=seed, n=n)
    assert {p.category for p in pois} == set(CATEGORIES)
    restaurant_cuisines = {p.cuisine for p in pois if p.category == "restaurant"}
    assert restaurant_cuisines == set(CUISINES)


def test_attributes_stay_in_the_vocabulary(generated: list[POI]) -> None:
    for poi in generated:
        assert poi.payment and set(poi.payment) <= set(PAYMENT_METHODS)
        assert poi.payment == tuple(sorted(poi.payment))
        assert poi.rating is not None and 1.0 <= poi.rating <= 5.0
        assert (poi.rating * 2).is_integer()
        if poi.category in {"car_repair", "museum", "hospital"}:
            assert poi.price is None
        else:
            assert poi.price in PRICE_LEVELS
        if poi.category == "restaurant":
            assert poi.cuisine in CUISINES
        elif poi.category != "cafe":
            assert poi.cuisine is None
        assert poi.address.endswith("Neuhafen")


def test_distributions_are_realistic(generated: list[POI]) -> None:
    ratings = Counter(p.rating for p in generated)
    share = {r: ratings[r] / len(generated) for r in ratings}
    assert share[3.5] + share[4.0] + share[4.5] > 0.6
    assert 0 < share[5.0] < 0.1
    prices = Counter(p.price for p in generated if p.price)
    assert prices.most_common(1)[0][0] == "medium"
    payments = Counter(m for p in generated for m in p.payment)
    assert payments["cash"] > payments["mobile payment"] * 2
    assert payments["credit card"] > payments["mobile payment"] * 2

    def parking_share(category: str) -> float:
        venues = [p for p in generated if p.category == category]
        return sum(p.parking is True for p in venues) / len(venues)

    for common in ("supermarket", "hotel", "hospital"):
        for rare in ("cafe", "bar", "restaurant"):
            assert parking_share(common) > parking_share(rare)


def test_names_are_unique_and_plausible(generated: list[POI]) -> None:
    names = [p.name for p in generated]
    assert len(set(names)) == len(names)
    hospitals = [p.name for p in generated if p.category == "hospital"]
    assert all(any(w in n for w in ("Hospital", "Clinic", "Medical Center")) for n in hospitals)


@pytest.mark.parametrize("seed", range(5))
def test_absent_combinations_are_absent(seed: int) -> None:
    pois = generate_pois(seed=seed)
    for combination in ABSENT_COMBINATIONS:
        assert not [p for p in pois if combination.matches(p)], combination


def test_absent_combinations_break_on_their_last_constraint() -> None:
    last = [list(c.to_dict())[-1] for c in ABSENT_COMBINATIONS]
    assert last == ["min_rating", "cuisine", "price", "payment", "parking", "min_rating", "parking"]
