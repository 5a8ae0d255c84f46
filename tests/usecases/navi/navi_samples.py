"""Sample venues and Yelp records shared by the venue-database tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stellar.usecases.navi.poi import POI


def make_poi(poi_id: int, **fields: Any) -> POI:
    """A valid restaurant POI with the given fields overridden."""
    values: dict[str, Any] = {
        "name": f"Venue {poi_id}",
        "category": "restaurant",
        "cuisine": "italian",
        "rating": 4.0,
        "price": "medium",
        "payment": ("cash",),
        "parking": True,
        "address": f"Hauptstraße {poi_id}, 71630 Neuhafen",
        "lat": 48.8,
        "lon": 9.2,
    }
    return POI(id=poi_id, **{**values, **fields})


def business(business_id: str, categories: str | None, **fields: Any) -> str:
    record = {
        "business_id": business_id,
        "name": f"Business {business_id}",
        "address": "123 Main St",
        "city": "Philadelphia",
        "state": "PA",
        "postal_code": "19103",
        "latitude": 39.95,
        "longitude": -75.16,
        "stars": 4.5,
        "review_count": 10,
        "is_open": 1,
        "attributes": None,
        "categories": categories,
    }
    return json.dumps({**record, **fields})


def write_yelp_file(tmp_path: Path) -> Path:
    """A Yelp business file with good, odd and broken records."""
    parking = "{'garage': False, 'street': True, 'validated': False, 'lot': False}"
    no_parking = "{'garage': False, 'street': False, 'validated': None, 'lot': False}"
    lines = [
        business("it", "Restaurants, Italian, Pizza", attributes={
            "RestaurantsPriceRange2": "2", "BusinessAcceptsCreditCards": "True",
            "BusinessParking": parking, "WiFi": "u'free'"}),
        business("cafe", "Coffee & Tea, Food", attributes=None, stars=3.0),
        business("bar", "Nightlife, Bars", attributes={
            "BusinessParking": "None", "RestaurantsPriceRange2": "None"}),
        business("hotel", "Hotels & Travel, Hotels", attributes={
            "BusinessParking": no_parking, "BusinessAcceptsCreditCards": "False",
            "RestaurantsPriceRange2": "4"}),
        business("sushi", "Bars, Restaurants, Sushi Bars, Japanese"),
        business("garage", "Automotive, Auto Repair", attributes={
            "RestaurantsPriceRange2": "2", "BusinessAcceptsCash": "False",
            "BusinessAcceptsCreditCards": "True"}),
        business("dentist", "Dentists, Health & Medical"),
        business("nocat", None),
        business("closed", "Restaurants", is_open=0),
        business("broken-attrs", "Bakeries", attributes={"BusinessParking": "{'lot': Tru"}),
        business("it", "Restaurants, Italian"),
        business("nolat", "Restaurants", latitude=None),
        '{"business_id": "cut", "name": ',
        "[1, 2, 3]",
        "",
    ]  # fmt: skip
    path = tmp_path / "business.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
