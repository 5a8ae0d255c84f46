"""The venue request: what a driver asks for, in the vocabulary's terms.

One type for the database (:meth:`POIDatabase.query`, :meth:`POIDatabase.satisfiable`), the
fitness (built from a candidate's feature values) and the assistant (read from the text).
Every given constraint must hold: ``min_rating`` means ``rating >= min_rating``; ``price``
and ``cuisine`` are exact; ``payment`` means the venue accepts that method; ``parking=True``
means the venue has parking (``False``: known to have none). ``None`` means not asked. An
unknown attribute of a venue (``None``, or no payment methods) never satisfies a constraint
that asks for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from stellar.usecases.navi.vocabulary import (
    CATEGORIES,
    CUISINES,
    NOT_ASKED,
    PAYMENT_METHODS,
    PRICE_LEVELS,
)

if TYPE_CHECKING:
    from stellar.usecases.navi.poi import POI


@dataclass(frozen=True)
class VenueRequest:
    """A category and optional constraints; a value outside the vocabulary is a ValueError."""

    category: str
    cuisine: str | None = None
    price: str | None = None
    payment: str | None = None
    min_rating: float | None = None
    parking: bool | None = None

    def __post_init__(self) -> None:
        vocabularies = (
            ("category", self.category, CATEGORIES),
            ("cuisine", self.cuisine, CUISINES),
            ("price", self.price, PRICE_LEVELS),
            ("payment", self.payment, PAYMENT_METHODS),
        )
        for what, value, allowed in vocabularies:
            if (value is not None or what == "category") and value not in allowed:
                expected = ", ".join(allowed)
                raise ValueError(f"unknown {what} {value!r}; expected one of {expected}")
        if self.parking is not None and not isinstance(self.parking, bool):
            raise ValueError(f"parking must be True, False or None, not {self.parking!r}")
        if self.min_rating is not None:
            object.__setattr__(self, "min_rating", float(self.min_rating))

    @classmethod
    def from_features(cls, values: Mapping[str, Any]) -> VenueRequest:
        """The request of a candidate's feature values (``"none"``: not asked)."""

        def given(name: str) -> Any:
            value = values.get(name, NOT_ASKED)
            return None if value == NOT_ASKED else value

        rating = given("rating")
        return cls(
            category=values["category"],
            cuisine=given("cuisine"),
            price=given("price"),
            payment=given("payment"),
            min_rating=None if rating is None else float(rating),
            parking=True if given("parking") == "available" else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """The given constraints, in field order (the fitness archives this)."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }

    def matches(self, poi: POI) -> bool:
        """Whether ``poi`` satisfies every given constraint."""
        checks = (
            poi.category == self.category,
            self.cuisine is None or poi.cuisine == self.cuisine,
            self.min_rating is None or (poi.rating is not None and poi.rating >= self.min_rating),
            self.price is None or poi.price == self.price,
            self.payment is None or self.payment in poi.payment,
            self.parking is None or poi.parking is self.parking,
        )
        return all(checks)
