"""A reproducible synthetic city ("Neuhafen") of venues in every category and cuisine.

Its streets, names and attribute distributions are in ``data/city.yaml``. Some combinations
are absent on purpose (:data:`ABSENT_COMBINATIONS`) so that a test generator can ask for
places that do not exist.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from stellar.usecases.navi.datafiles import load_data
from stellar.usecases.navi.poi import POI
from stellar.usecases.navi.request import VenueRequest
from stellar.usecases.navi.vocabulary import (
    CUISINES,
    PAYMENT_METHODS,
    PRICE_LEVELS,
    PRICELESS_CATEGORIES,
)

GENERATOR_VERSION = 1
"""Bumped whenever :func:`generate_pois` changes its output; part of the cache file name."""

_CITY: dict[str, Any] = load_data("city.yaml")
CITY: str = _CITY["name"]
ABSENT_COMBINATIONS = tuple(VenueRequest(**c) for c in _CITY["absent_combinations"])
"""Requests that no generated POI satisfies, whatever the seed: "no such place" cases. The
generator suppresses each one by changing the attribute of its *last* constraint (see
``_break_combination``)."""
_MIN_GENERATED = 50


def generate_pois(seed: int = 0, n: int = 3000) -> list[POI]:
    """``n`` synthetic venues in the city of Neuhafen; the same seed gives the same list.

    Every category and every cuisine occurs (``n >= 50``), the category shares are fixed,
    attributes are drawn from realistic distributions, and no POI satisfies any of
    :data:`ABSENT_COMBINATIONS`. Ids are 1..n.
    """
    if n < _MIN_GENERATED:
        raise ValueError(f"generate_pois needs n >= {_MIN_GENERATED}, got {n}")
    rng = random.Random(seed)
    specs = [
        (category, cuisine)
        for category, count in _category_counts(n).items()
        for cuisine in _draw_cuisines(rng, category, count)
    ]
    rng.shuffle(specs)
    used_names: set[str] = set()
    pois = [
        _avoid_absent(_draw_poi(rng, i, category, cuisine, used_names), rng)
        for i, (category, cuisine) in enumerate(specs, start=1)
    ]
    _verify_absent(pois)
    return pois


def _category_counts(n: int) -> dict[str, int]:
    """Fixed number of venues per category; the rounding remainder goes to restaurants."""
    counts = {c: int(n * share) for c, share in _CITY["category_shares"].items()}
    counts["restaurant"] += n - sum(counts.values())
    return counts


def _draw_cuisines(rng: random.Random, category: str, count: int) -> list[str | None]:
    """Cuisines for ``count`` venues; restaurants start with one of each cuisine."""
    if category == "restaurant":
        drawn = _weighted(rng, _CITY["restaurant_cuisines"], count - len(CUISINES))
        return [*CUISINES, *drawn]
    if category == "cafe":
        share, weights = _CITY["cafe_cuisine_share"], _CITY["cafe_cuisines"]
        return [
            _weighted(rng, weights, 1)[0] if rng.random() < share else None for _ in range(count)
        ]
    return [None] * count


def _weighted(rng: random.Random, weights: Mapping[Any, float], k: int) -> list[Any]:
    return rng.choices(list(weights), weights=list(weights.values()), k=k)


def _draw_poi(
    rng: random.Random, poi_id: int, category: str, cuisine: str | None, used: set[str]
) -> POI:
    """One venue; the keyword order below is the order of the draws (keep it)."""
    return POI(
        id=poi_id,
        name=_draw_name(rng, category, cuisine, used),
        category=category,
        cuisine=cuisine,
        rating=_weighted(rng, _CITY["rating_weights"], 1)[0],
        price=_draw_price(rng, category),
        payment=_draw_payment(rng, category),
        parking=_draw_parking(rng, category),
        address=_draw_address(rng),
        lat=round(rng.uniform(*_CITY["latitudes"]), 6),
        lon=round(rng.uniform(*_CITY["longitudes"]), 6),
    )


def _draw_address(rng: random.Random) -> str:
    street, number = rng.choice(_CITY["streets"]), rng.randint(1, 180)
    return f"{street} {number}, {rng.choice(_CITY['postcodes'])} {CITY}"


def _draw_name(rng: random.Random, category: str, cuisine: str | None, used: set[str]) -> str:
    """A plausible name, made unique with a district (and then a number) when taken."""
    if category == "restaurant" and cuisine is not None:
        names = _CITY["restaurant_names"][cuisine]
        templates, cores = names["templates"], names["cores"]
    elif category == "cafe" and cuisine is not None:
        templates = _CITY["cafe_with_cuisine_templates"]
        cores = _CITY["restaurant_names"][cuisine]["cores"]
    else:
        names = _CITY["category_names"][category]
        templates, cores = names["templates"], names["cores"]
    name = rng.choice(templates).format(rng.choice(cores))
    if name in used:
        name = f"{name} {rng.choice(_CITY['districts'])}"
    base, number = name, 2
    while name in used:
        name, number = f"{base} {number}", number + 1
    used.add(name)
    return name


def _draw_price(rng: random.Random, category: str) -> str | None:
    if category in PRICELESS_CATEGORIES:
        return None
    return rng.choices(PRICE_LEVELS, weights=_CITY["price_weights"][category])[0]


def _draw_payment(rng: random.Random, category: str) -> tuple[str, ...]:
    """Accepted methods, each drawn independently; at least cash when none was drawn."""
    chances = {**_CITY["payment_chances"], **_CITY["payment_overrides"].get(category, {})}
    methods = tuple(m for m in PAYMENT_METHODS if rng.random() < chances[m])
    return methods or ("cash",)


def _draw_parking(rng: random.Random, category: str) -> bool | None:
    if rng.random() < _CITY["unknown_parking_share"]:
        return None
    return rng.random() < _CITY["parking_chances"][category]


def _avoid_absent(poi: POI, rng: random.Random) -> POI:
    """Change ``poi`` until it satisfies none of :data:`ABSENT_COMBINATIONS`."""
    for _ in range(len(ABSENT_COMBINATIONS) + 1):
        hit = next((c for c in ABSENT_COMBINATIONS if c.matches(poi)), None)
        if hit is None:
            return poi
        poi = _break_combination(poi, hit, rng)
    raise RuntimeError(f"cannot keep POI {poi.id} out of the absent combinations")


def _break_combination(poi: POI, combination: VenueRequest, rng: random.Random) -> POI:
    """Change the attribute of the combination's last constraint so that it no longer holds."""
    key, value = list(combination.to_dict().items())[-1]
    if key == "cuisine":
        others = [c for c in _CITY["cafe_cuisines"] if c != value]
        return replace(poi, cuisine=rng.choice(others) if poi.category == "cafe" else None)
    if key == "min_rating":
        return replace(poi, rating=max(1.0, value - 0.5))
    if key == "price":
        return replace(poi, price="low" if value == "medium" else "medium")
    if key == "payment":
        return replace(poi, payment=tuple(m for m in poi.payment if m != value) or ("cash",))
    if key == "parking":
        return replace(poi, parking=not value)
    raise ValueError(f"absent combination cannot be broken on {key!r}: {combination}")


def _verify_absent(pois: Iterable[POI]) -> None:
    for poi in pois:
        for combination in ABSENT_COMBINATIONS:
            if combination.matches(poi):
                raise RuntimeError(f"generated POI {poi.id} matches {combination}")
