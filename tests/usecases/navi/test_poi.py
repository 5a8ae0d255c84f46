"""Tests for the POI record (stellar.usecases.navi.poi)."""

from __future__ import annotations

from typing import Any

import pytest
from navi_samples import make_poi

from stellar.usecases.navi.poi import round_rating


def test_invalid_poi_is_rejected() -> None:
    with pytest.raises(ValueError, match="no price level"):
        make_poi(1, category="museum", cuisine=None, price="low")
    with pytest.raises(ValueError, match="no cuisine"):
        make_poi(1, category="bar")
    with pytest.raises(ValueError, match="rating"):
        make_poi(1, rating=4.2)
    with pytest.raises(ValueError, match="payment"):
        make_poi(1, payment=("bitcoin",))


def test_to_dict() -> None:
    poi = make_poi(9, payment=("credit card", "cash"))
    assert poi.payment == ("cash", "credit card")
    assert poi.to_dict() == {
        "name": "Venue 9",
        "category": "restaurant",
        "cuisine": "italian",
        "rating": 4.0,
        "price": "medium",
        "payment": ["cash", "credit card"],
        "parking": True,
        "address": "Hauptstraße 9, 71630 Neuhafen",
    }


@pytest.mark.parametrize(
    ("value", "rating"), [(4.2, 4.0), (4.3, 4.5), (0, 1.0), (7, 5.0), ("4", None), (True, None)]
)
def test_round_rating(value: Any, rating: float | None) -> None:
    assert round_rating(value) == rating
