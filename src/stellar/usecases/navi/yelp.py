"""Venues from the public Yelp Open Dataset business file (JSON lines)."""

from __future__ import annotations

import ast
import hashlib
import json
import logging
import os
from collections import Counter
from typing import Any

from stellar.usecases.navi.poi import POI, round_rating
from stellar.usecases.navi.vocabulary import CUISINE_CATEGORIES, PRICELESS_CATEGORIES

log = logging.getLogger(__name__)

YELP_CATEGORIES: dict[str, str] = {
    "Restaurants": "restaurant",
    "Cafes": "cafe",
    "Coffee & Tea": "cafe",
    "Themed Cafes": "cafe",
    "Bakeries": "bakery",
    "Bars": "bar",
    "Pubs": "bar",
    "Cocktail Bars": "bar",
    "Wine Bars": "bar",
    "Sports Bars": "bar",
    "Dive Bars": "bar",
    "Beer Bar": "bar",
    "Hotels": "hotel",
    "Bed & Breakfast": "hotel",
    "Guest Houses": "hotel",
    "Museums": "museum",
    "Art Museums": "museum",
    "Hospitals": "hospital",
    "Emergency Rooms": "hospital",
    "Auto Repair": "car_repair",
    "Grocery": "supermarket",
    "Supermarkets": "supermarket",
}
"""Yelp category label -> our category. A business with several is assigned the first of
:data:`YELP_CATEGORY_PRIORITY` it maps to (a "Restaurants, Bars" grill is a restaurant,
"Cafes, Restaurants" is a cafe, "Hotels, Restaurants" a hotel)."""

YELP_CATEGORY_PRIORITY = (
    "hospital",
    "car_repair",
    "museum",
    "hotel",
    "supermarket",
    "bakery",
    "cafe",
    "restaurant",
    "bar",
)

YELP_CUISINES: dict[str, str] = {
    "Italian": "italian",
    "Chinese": "chinese",
    "Cantonese": "chinese",
    "Szechuan": "chinese",
    "Dim Sum": "chinese",
    "Japanese": "japanese",
    "Sushi Bars": "japanese",
    "Ramen": "japanese",
    "Mexican": "mexican",
    "Tex-Mex": "mexican",
    "Thai": "thai",
    "Indian": "indian",
    "French": "french",
    "German": "german",
    "Greek": "greek",
    "Vietnamese": "vietnamese",
    "Turkish": "turkish",
    "Middle Eastern": "middle eastern",
    "Lebanese": "middle eastern",
    "Persian/Iranian": "middle eastern",
    "Falafel": "middle eastern",
    "American (Traditional)": "american",
    "American (New)": "american",
    "Burgers": "american",
}
"""Yelp category label -> our cuisine (restaurants and cafes only); the first label in the
business's list that maps wins. Ambiguous labels (Pizza, Mediterranean, Asian Fusion) map to
none: cuisine stays unknown."""

YELP_PRICES = {1: "low", 2: "medium", 3: "high", 4: "high"}
"""``RestaurantsPriceRange2`` -> price level (categories without prices ignore it)."""

_MAX_LITERAL = 2000


def load_yelp(path: str | os.PathLike[str], counts: Counter[str] | None = None) -> list[POI]:
    """Venues from the Yelp Open Dataset business file (``yelp_academic_dataset_business.json``).

    Mapping decisions:

    * category and cuisine: :data:`YELP_CATEGORIES`, :data:`YELP_CUISINES`; businesses that
      map to none of our categories are skipped, as are closed ones (``is_open == 0``);
    * rating: ``stars`` (already 1.0..5.0 in steps of 0.5); price: :data:`YELP_PRICES`;
    * payment: cash is assumed accepted unless ``BusinessAcceptsCash`` is False;
      ``BusinessAcceptsCreditCards`` True adds credit card. Yelp records neither contactless nor
      mobile payment, so they are never claimed (a request for them is unsatisfiable);
    * parking: True if any ``BusinessParking`` value is True, False if all known values are
      False, None (unknown) when missing or ``"None"``;
    * attribute strings are Python literals, parsed with :func:`ast.literal_eval`;
    * id: a stable 48-bit hash of ``business_id`` (unchanged when the file is filtered or
      re-ordered); a repeated ``business_id`` is skipped.

    Lines that are not valid business records are skipped and counted; pass a Counter as
    ``counts`` to receive the tallies (kept, malformed, closed, other_category, duplicate).
    """
    counts = Counter() if counts is None else counts
    pois: list[POI] = []
    seen: set[int] = set()
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            outcome, poi = _yelp_record(line)
            if poi is not None and poi.id in seen:
                outcome, poi = "duplicate", None
            counts[outcome] += 1
            if poi is not None:
                seen.add(poi.id)
                pois.append(poi)
    if counts["malformed"]:
        log.warning("%s: skipped %d malformed lines", path, counts["malformed"])
    return pois


def _yelp_record(line: str) -> tuple[str, POI | None]:
    """(outcome, POI or None) for one line of the business file."""
    try:
        business = json.loads(line)
        if not isinstance(business, dict):
            return "malformed", None
        if business.get("is_open") == 0:
            return "closed", None
        labels = [c.strip() for c in (business.get("categories") or "").split(",")]
        category = _yelp_category(labels)
        if category is None:
            return "other_category", None
        return "kept", _yelp_poi(business, category, labels)
    except (ValueError, TypeError, KeyError, AttributeError):
        return "malformed", None


def _yelp_category(labels: list[str]) -> str | None:
    """Our category for a business's Yelp labels (see :data:`YELP_CATEGORY_PRIORITY`)."""
    mapped = {YELP_CATEGORIES.get(label) for label in labels}
    return next((c for c in YELP_CATEGORY_PRIORITY if c in mapped), None)


def _yelp_poi(business: dict[str, Any], category: str, labels: list[str]) -> POI:
    attributes = business.get("attributes") or {}
    if not isinstance(attributes, dict):
        raise TypeError("attributes is not an object")
    name, business_id = business["name"], business["business_id"]
    if not (isinstance(name, str) and name.strip() and isinstance(business_id, str)):
        raise ValueError("missing name or business_id")
    cuisine = next((YELP_CUISINES[label] for label in labels if label in YELP_CUISINES), None)
    digest = hashlib.blake2b(business_id.encode(), digest_size=6).digest()
    return POI(
        id=int.from_bytes(digest, "big"),
        name=name.strip(),
        category=category,
        cuisine=cuisine if category in CUISINE_CATEGORIES else None,
        rating=round_rating(business.get("stars")),
        price=None if category in PRICELESS_CATEGORIES else _yelp_price(attributes),
        payment=_yelp_payment(attributes),
        parking=_yelp_parking(attributes),
        address=_join_address(business),
        lat=_coordinate(business["latitude"]),
        lon=_coordinate(business["longitude"]),
    )


def _literal(value: Any) -> Any:
    """A Yelp attribute string parsed as a Python literal; None when absent or unparseable."""
    if not isinstance(value, str):
        return value
    if len(value) > _MAX_LITERAL:
        return None
    try:
        return ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _yelp_price(attributes: dict[str, Any]) -> str | None:
    level = _literal(attributes.get("RestaurantsPriceRange2"))
    return YELP_PRICES.get(level) if type(level) is int else None


def _yelp_payment(attributes: dict[str, Any]) -> tuple[str, ...]:
    methods = [] if _literal(attributes.get("BusinessAcceptsCash")) is False else ["cash"]
    if _literal(attributes.get("BusinessAcceptsCreditCards")) is True:
        methods.append("credit card")
    return tuple(methods)


def _yelp_parking(attributes: dict[str, Any]) -> bool | None:
    parking = _literal(attributes.get("BusinessParking"))
    if not isinstance(parking, dict):
        return None
    values = [v for v in parking.values() if isinstance(v, bool)]
    if any(values):
        return True
    return False if values else None


def _join_address(business: dict[str, Any]) -> str:
    """``"123 Main St, Philadelphia, PA 19103"``, leaving out missing parts."""
    state_zip = " ".join(s for s in (business.get("state"), business.get("postal_code")) if s)
    parts = (business.get("address"), business.get("city"), state_zip)
    return ", ".join(str(p).strip() for p in parts if p and str(p).strip())


def _coordinate(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"coordinate is not a number: {value!r}")
    return float(value)
