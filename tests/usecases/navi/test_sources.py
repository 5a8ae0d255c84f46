"""Tests for the venue sources (stellar.usecases.navi.sources)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stellar.usecases.navi.city import generate_pois
from stellar.usecases.navi.poi import POI
from stellar.usecases.navi.sources import (
    PACKAGED_MULTIWOZ,
    build_database,
    default_cache_path,
    default_database,
    open_pois,
)
from stellar.usecases.navi.store import POIDatabase


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


@pytest.fixture
def yelp_file(tmp_path: Path) -> Path:
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


def test_default_database_built_once_in_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STELLAR_CACHE_DIR", str(tmp_path))
    path = default_cache_path(seed=2)
    assert path == tmp_path / "navi-pois-seed2-v1.sqlite"
    first = default_database(seed=2)
    assert first.path == path and len(first) == 3000
    stamp = path.stat().st_mtime_ns
    second = default_database(seed=2)
    assert path.stat().st_mtime_ns == stamp
    assert second.all() == generate_pois(seed=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_default_database_rebuilds_a_broken_or_foreign_cache(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_text("garbage")
    assert len(default_database(path, seed=0)) == 3000
    POIDatabase.create(path, [make_poi(1)]).close()
    assert len(default_database(path, seed=0)) == 3000


def test_build_database_sources(tmp_path: Path) -> None:
    generated = build_database("generated", tmp_path / "g.sqlite", seed=4)
    assert generated.all() == generate_pois(seed=4)
    yelp = tmp_path / "business.json"
    yelp.write_text(business("a", "Restaurants") + "\n" + business("b", "Dentists") + "\n")
    assert len(build_database(f"yelp:{yelp}", tmp_path / "y.sqlite")) == 1


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("osm:berlin.pbf", "unknown POI source"),
        ("yelp:", "unknown POI source"),
        ("yelp:/no/such/business.json", "Yelp business file not found"),
        ("multiwoz:/no/such/dir", "MultiWOZ directory not found"),
    ],
)
def test_build_database_errors(source: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=message):
        build_database(source, tmp_path / "x.sqlite")
    assert not (tmp_path / "x.sqlite").exists()


def test_build_database_from_empty_source_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(business("d", "Dentists") + "\n")
    with pytest.raises(ValueError, match="no usable venues"):
        build_database(f"yelp:{empty}", tmp_path / "x.sqlite")


def test_open_pois_opens_each_source_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STELLAR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("stellar.usecases.navi.sources._open", {})
    multiwoz = open_pois("multiwoz")
    assert open_pois("multiwoz") is multiwoz
    assert len(multiwoz) == 232 and multiwoz.source == f"multiwoz:{PACKAGED_MULTIWOZ.resolve()}"
    assert [p.name[:19] for p in tmp_path.iterdir()] == ["navi-pois-multiwoz-"]
