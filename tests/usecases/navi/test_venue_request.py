"""Tests for the venue request (stellar.usecases.navi.request)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from navi_samples import make_poi

from stellar.usecases.navi.poi import POI
from stellar.usecases.navi.request import VenueRequest


def test_from_features_reads_only_asked_constraints() -> None:
    values = {
        "category": "cafe",
        "cuisine": "none",
        "rating": 4.0,
        "price": "none",
        "payment": "contactless",
        "parking": "none",
        "slang": "slangy",
    }
    request = VenueRequest.from_features(values)
    assert request == VenueRequest("cafe", payment="contactless", min_rating=4.0)


def test_to_dict_is_the_archived_request() -> None:
    """The fitness archives ``to_dict()``: the keys, values and order of earlier archives."""
    values = {
        "category": "restaurant",
        "cuisine": "thai",
        "rating": 4.5,
        "price": "low",
        "payment": "cash",
        "parking": "available",
    }
    archived = VenueRequest.from_features(values).to_dict()
    assert json.dumps(archived) == json.dumps(
        {
            "category": "restaurant",
            "cuisine": "thai",
            "price": "low",
            "payment": "cash",
            "min_rating": 4.5,
            "parking": True,
        }
    )
    assert VenueRequest("bar", price="low").to_dict() == {"category": "bar", "price": "low"}


def test_min_rating_is_a_float() -> None:
    assert VenueRequest("hotel", min_rating=4).min_rating == 4.0
    request = VenueRequest.from_features({"category": "bar", "rating": 5})
    assert isinstance(request.min_rating, float)


@pytest.mark.parametrize(
    "constraints",
    [
        {"category": "car repair"},
        {"category": None},
        {"category": "restaurant", "cuisine": "Italian"},
        {"category": "restaurant", "price": "cheap"},
        {"category": "restaurant", "payment": "card"},
        {"category": "restaurant", "parking": "yes"},
    ],
)
def test_values_outside_the_vocabulary_are_rejected(constraints: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"unknown|parking"):
        VenueRequest(**constraints)


def poi(**fields: Any) -> POI:
    return make_poi(1, **fields)


@pytest.mark.parametrize(
    ("request_", "venue", "expected"),
    [
        (VenueRequest("restaurant"), poi(), True),
        (VenueRequest("cafe"), poi(), False),
        (VenueRequest("restaurant", min_rating=4.0), poi(), True),  # inclusive
        (VenueRequest("restaurant", min_rating=4.5), poi(), False),
        (VenueRequest("restaurant", min_rating=1.0), poi(rating=None), False),  # unknown
        (VenueRequest("restaurant", payment="cash"), poi(payment=("cash", "contactless")), True),
        (VenueRequest("restaurant", payment="cash"), poi(payment=()), False),
        (VenueRequest("restaurant", parking=True), poi(parking=None), False),
        (VenueRequest("restaurant", parking=False), poi(parking=False), True),
        (VenueRequest("restaurant", price="medium", cuisine="italian"), poi(), True),
        (VenueRequest("restaurant", cuisine="greek"), poi(), False),
    ],
)
def test_matches(request_: VenueRequest, venue: POI, expected: bool) -> None:
    assert request_.matches(venue) is expected
