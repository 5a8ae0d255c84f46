"""A point of interest (POI): one venue the navigation assistant can recommend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stellar.errors import StellarError
from stellar.usecases.navi.vocabulary import (
    CATEGORIES,
    CUISINE_CATEGORIES,
    CUISINES,
    PAYMENT_METHODS,
    PRICE_LEVELS,
    PRICELESS_CATEGORIES,
    RATINGS,
)


class POIDataError(StellarError, ValueError):
    """A POI source or database file is missing, unknown or malformed."""


@dataclass(frozen=True)
class POI:
    """One venue. ``None`` (and an empty ``payment``) mean unknown; payment is kept sorted.

    A value outside the vocabulary, a cuisine for a category without cuisines or a price
    level for a category without prices is a ValueError.
    """

    id: int
    name: str
    category: str
    cuisine: str | None
    rating: float | None
    price: str | None
    payment: tuple[str, ...]
    parking: bool | None
    address: str
    lat: float
    lon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "payment", tuple(sorted(set(self.payment))))
        if self.rating is not None:
            object.__setattr__(self, "rating", float(self.rating))
        problem = _problem(self)
        if problem:
            raise ValueError(f"invalid POI {self.id} ({self.name!r}): {problem}")

    def to_dict(self) -> dict[str, Any]:
        """The user-facing attributes, as the navigation assistant would describe them."""
        return {
            "name": self.name,
            "category": self.category,
            "cuisine": self.cuisine,
            "rating": self.rating,
            "price": self.price,
            "payment": list(self.payment),
            "parking": self.parking,
            "address": self.address,
        }


def _problem(poi: POI) -> str | None:
    """Why ``poi`` breaks the vocabulary, or None when it is valid."""
    if poi.category not in CATEGORIES:
        return f"unknown category {poi.category!r}"
    if poi.cuisine is not None and poi.cuisine not in CUISINES:
        return f"unknown cuisine {poi.cuisine!r}"
    if poi.cuisine is not None and poi.category not in CUISINE_CATEGORIES:
        return f"a {poi.category} has no cuisine"
    if poi.price is not None and poi.price not in PRICE_LEVELS:
        return f"unknown price level {poi.price!r}"
    if poi.price is not None and poi.category in PRICELESS_CATEGORIES:
        return f"a {poi.category} has no price level"
    if poi.rating is not None and poi.rating not in RATINGS:
        return f"rating {poi.rating} is not one of {', '.join(map(str, RATINGS))}"
    unknown = set(poi.payment) - set(PAYMENT_METHODS)
    if unknown:
        return f"unknown payment methods {sorted(unknown)}"
    if poi.parking is not None and not isinstance(poi.parking, bool):
        return "parking must be True, False or None"
    return None


def round_rating(value: Any) -> float | None:
    """A rating snapped to the 0.5 grid within 1.0..5.0; None for anything not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return min(5.0, max(1.0, round(float(value) * 2) / 2))
