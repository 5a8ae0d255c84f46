"""The venue vocabulary (``data/vocabulary.yaml``), defined once and checked at load.

Categories, cuisines, price levels, payment methods and ratings: POIs, venue requests and
the database use exactly these values. The category, cuisine, price, payment and rating
features of ``features.yaml`` must only use values of the vocabulary (or ``"none"``, not
asked); anything else is a :class:`VocabularyError` as soon as the vocabulary loads.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from stellar.errors import StellarError
from stellar.usecases.navi.datafiles import load_data

FEATURES = Path(__file__).parent / "features.yaml"
NOT_ASKED = "none"
"""The feature value of an attribute the request does not ask for."""


class VocabularyError(StellarError, ValueError):
    """A feature value that the venue vocabulary does not know."""


@dataclass(frozen=True)
class Vocabulary:
    categories: tuple[str, ...]
    cuisines: tuple[str, ...]
    price_levels: tuple[str, ...]  # cheapest first
    payment_methods: tuple[str, ...]
    ratings: tuple[float, ...]
    cuisine_categories: frozenset[str]  # only these have a cuisine
    priceless_categories: frozenset[str]  # these never have a price level

    def feature_values(self) -> dict[str, tuple[Any, ...]]:
        """Feature name -> the values it may take besides ``"none"``."""
        return {
            "category": self.categories,
            "cuisine": self.cuisines,
            "price": self.price_levels,
            "payment": self.payment_methods,
            "rating": self.ratings,
        }


def check_features(
    vocabulary: Vocabulary, features: Iterable[Mapping[str, Any]], source: str = "features"
) -> None:
    """Raise :class:`VocabularyError` for a feature value the vocabulary does not know."""
    known = vocabulary.feature_values()
    for feature in features:
        allowed = known.get(feature.get("name", ""))
        if allowed is None:
            continue
        unknown = [v for v in feature.get("values", ()) if v != NOT_ASKED and v not in allowed]
        if unknown:
            raise VocabularyError(
                f"{source}: feature {feature['name']!r} has values that the venue vocabulary "
                f"(data/vocabulary.yaml) does not know: {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(map(str, allowed))}"
            )


@functools.cache
def vocabulary() -> Vocabulary:
    """The vocabulary, checked against the use case's ``features.yaml``."""
    data = load_data("vocabulary.yaml")
    loaded = Vocabulary(
        categories=tuple(data["categories"]),
        cuisines=tuple(data["cuisines"]),
        price_levels=tuple(data["price_levels"]),
        payment_methods=tuple(data["payment_methods"]),
        ratings=tuple(float(r) for r in data["ratings"]),
        cuisine_categories=frozenset(data["cuisine_categories"]),
        priceless_categories=frozenset(data["priceless_categories"]),
    )
    with FEATURES.open(encoding="utf-8") as file:  # libyaml when there: read at every start
        features = yaml.load(file, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["features"]
    check_features(loaded, features, FEATURES.name)
    return loaded


CATEGORIES = vocabulary().categories
CUISINES = vocabulary().cuisines
PRICE_LEVELS = vocabulary().price_levels
PAYMENT_METHODS = vocabulary().payment_methods
RATINGS = vocabulary().ratings
CUISINE_CATEGORIES = vocabulary().cuisine_categories
PRICELESS_CATEGORIES = vocabulary().priceless_categories
CUISINE_NAMES = {cuisine: cuisine.title() for cuisine in CUISINES}
"""How a cuisine is written in a sentence: ``"middle eastern"`` -> ``"Middle Eastern"``."""
