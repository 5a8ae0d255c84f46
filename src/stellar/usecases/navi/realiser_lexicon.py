"""The realiser's phrase tables (``data/realiser_phrases.yaml``), keyed by feature value.

:data:`LEXICONS` maps every feature name to a lexicon keyed by that feature's values; the
other tables are the parts the realiser assembles an utterance from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from stellar.text.perturbations import PERTURBATIONS, Perturbation
from stellar.usecases.navi.datafiles import load_data
from stellar.usecases.navi.vocabulary import CATEGORIES, CUISINE_NAMES

Phrases = dict[str, list[str]]  # slang level -> phrases

_PHRASES: dict[str, Any] = load_data("realiser_phrases.yaml")
ASKED_RATINGS = (3.5, 4.0, 4.5, 5.0)
"""The minimum ratings a request may ask for (the rating feature's values)."""
TOP_RATING = 5.0

CATEGORY_NOUNS: dict[str, Phrases] = _PHRASES["category"]["nouns"]  # implicitness "not"
CATEGORY_PARAPHRASES: dict[str, Phrases] = _PHRASES["category"]["paraphrases"]  # "slightly"
CATEGORY_NEEDS: dict[str, Phrases] = _PHRASES["category"]["needs"]  # "implicit"
GENERIC_PLACES: Phrases = _PHRASES["generic_places"]
LOCATIONS: Phrases = _PHRASES["locations"]

_CUISINE = _PHRASES["cuisine"]
CUISINE_DISHES: dict[str, list[str]] = _CUISINE["dishes"]
CUISINE_POST: Phrases = _CUISINE["post"]
CUISINE_DISH_POST: Phrases = _CUISINE["dish_post"]
CUISINE_SAY: Phrases = _CUISINE["say"]
CUISINE_CRAVINGS: Phrases = _CUISINE["cravings"]
_CAFE = _PHRASES["cafe_cuisine"]  # what a cafe of a cuisine serves ("Italian espresso")
CAFE_SPECIALITIES: dict[str, list[str]] = _CAFE["specialities"]
CAFE_POST: Phrases = _CAFE["post"]
CAFE_SAY: Phrases = _CAFE["say"]
CAFE_CRAVINGS: Phrases = _CAFE["cravings"]
CUISINE: dict[str, Any] = {
    **{
        value: {"name": name, "dishes": CUISINE_DISHES[value], "cafe": CAFE_SPECIALITIES[value]}
        for value, name in CUISINE_NAMES.items()
    },
    "none": {"any": _CUISINE["none"]},
}

_PRICE = _PHRASES["price"]
PRICE_ADJECTIVES: dict[str, Phrases] = _PRICE["adjectives"]
PRICE: dict[str, Any] = {
    **{
        value: {"pre": adjectives, "post": _PRICE["post"][value], "say": _PRICE["say"][value]}
        for value, adjectives in PRICE_ADJECTIVES.items()
    },
    "none": {"any": _PRICE["none"]},
}

_RATING = _PHRASES["rating"]
RATING: dict[Any, Any] = {
    **{
        rating: {
            "post": _RATING["top_post"] if rating == TOP_RATING else _RATING["post"],
            "say": _RATING["say"],
        }
        for rating in ASKED_RATINGS
    },
    "none": {"any": _RATING["none"]},
}

PAYMENT: dict[str, Any] = _PHRASES["payment"]
PARKING: dict[str, Any] = _PHRASES["parking"]

_TERSE = _PHRASES["terse"]
TERSE: dict[str, dict[Any, list[str]]] = {  # telegraphic keywords ("Restaurant. Cheap. Now.")
    "price": _TERSE["price"],
    "rating": dict.fromkeys(ASKED_RATINGS, _TERSE["rating"]),
    "payment": _TERSE["payment"],
    "parking": _TERSE["parking"],
}
TERSE_ENDS: list[str] = _TERSE["ends"]

SLANG: dict[str, list[str]] = _PHRASES["openers"]
ANTHROPOMORPHISM: dict[str, Phrases] = _PHRASES["frames"]
FEELINGS: Phrases = _PHRASES["feelings"]
RUDE_EMPATHIC_FRAMES: Phrases = _PHRASES["rude_empathic"]["frames"]  # no warmth when rude
RUDE_EMPATHIC_FEELINGS: Phrases = _PHRASES["rude_empathic"]["feelings"]
PRICE_CLASHES: dict[str, list[str]] = _PHRASES["price_clashes"]  # venue word -> prices
COURTEOUS: tuple[str, ...] = tuple(_PHRASES["courteous"])  # never in a rude request
POLITENESS: dict[str, dict[str, Phrases]] = _PHRASES["politeness"]
DEFINITE: tuple[str, ...] = tuple(_PHRASES["definite"])
IMPERATIVES: tuple[str, ...] = tuple(_PHRASES["imperatives"])

IMPLICITNESS: dict[str, dict[str, Phrases]] = {
    "not": CATEGORY_NOUNS,
    "slightly": CATEGORY_PARAPHRASES,
    "implicit": CATEGORY_NEEDS,
}
CATEGORY: dict[str, dict[str, Phrases]] = {
    category: {level: lexicon[category] for level, lexicon in IMPLICITNESS.items()}
    for category in CATEGORY_NOUNS
}

PERTURBATION_OPERATORS: dict[str, Perturbation] = {
    "none": PERTURBATIONS["none"],
    "delete words": PERTURBATIONS["delete_words"],
    "homophones": PERTURBATIONS["homophones"],
    "fillers": PERTURBATIONS["fillers"],
}

LEXICONS: dict[str, Mapping[Any, Any]] = {
    "category": CATEGORY,
    "payment": PAYMENT,
    "cuisine": CUISINE,
    "parking": PARKING,
    "price": PRICE,
    "rating": RATING,
    "slang": SLANG,
    "implicitness": IMPLICITNESS,
    "politeness": POLITENESS,
    "anthropomorphism": ANTHROPOMORPHISM,
    "word_perturbation": PERTURBATION_OPERATORS,
}
"""Feature name -> lexicon keyed by the feature's values."""

# Attributes that make sense for a category; "don't care" remarks are only made for these.
APPLICABLE: dict[str, tuple[str, ...]] = {
    "cuisine": ("restaurant", "cafe"),
    "payment": ("restaurant", "cafe", "hotel", "bar", "supermarket"),
    "rating": ("hotel", "restaurant", "cafe", "bar", "museum"),
    "price": ("restaurant", "cafe", "hotel", "bar", "supermarket", "bakery"),
    "parking": tuple(c for c in CATEGORIES if c != "hospital"),
}
ATTRIBUTES: tuple[str, ...] = ("cuisine", "price", "rating", "payment", "parking")
ATTRIBUTE_LEXICONS: dict[str, Mapping[Any, Any]] = {
    "price": PRICE,
    "rating": RATING,
    "payment": PAYMENT,
    "parking": PARKING,
}
KEEP_CAPITAL = re.compile(r"(I|I'\w+|ER|BBQ|Apple|Peking)\b")  # never lower-cased
