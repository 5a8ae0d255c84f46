"""Tests for the Yelp loader (stellar.usecases.navi.yelp)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from navi_samples import write_yelp_file

from stellar.usecases.navi.yelp import load_yelp


def test_load_yelp_maps_attributes(yelp_file: Path) -> None:
    counts: Counter[str] = Counter()
    pois = {p.name.removeprefix("Business "): p for p in load_yelp(yelp_file, counts)}
    assert list(pois) == ["it", "cafe", "bar", "hotel", "sushi", "garage", "broken-attrs"]
    italian = pois["it"]
    assert (italian.category, italian.cuisine, italian.rating) == ("restaurant", "italian", 4.5)
    assert (italian.price, italian.payment, italian.parking) == (
        "medium",
        ("cash", "credit card"),
        True,
    )
    assert italian.address == "123 Main St, Philadelphia, PA 19103"
    cafe = pois["cafe"]
    assert (cafe.category, cafe.cuisine, cafe.rating) == ("cafe", None, 3.0)
    assert (cafe.price, cafe.payment, cafe.parking) == (None, ("cash",), None)
    assert (pois["bar"].category, pois["bar"].price, pois["bar"].parking) == ("bar", None, None)
    hotel = pois["hotel"]
    assert (hotel.category, hotel.price, hotel.payment, hotel.parking) == (
        "hotel",
        "high",
        ("cash",),
        False,
    )
    assert (pois["sushi"].category, pois["sushi"].cuisine) == ("restaurant", "japanese")
    garage = pois["garage"]
    assert (garage.category, garage.price, garage.payment) == ("car_repair", None, ("credit card",))
    assert (pois["broken-attrs"].category, pois["broken-attrs"].parking) == ("bakery", None)
    assert counts == Counter(kept=7, malformed=3, other_category=2, closed=1, duplicate=1)


def test_load_yelp_ids_are_stable_and_distinct(yelp_file: Path, tmp_path: Path) -> None:
    first = load_yelp(yelp_file)
    assert len({p.id for p in first}) == len(first)
    assert [p.id for p in load_yelp(yelp_file)] == [p.id for p in first]
    reordered = tmp_path / "reordered.json"
    reordered.write_text("\n".join(reversed(yelp_file.read_text().splitlines())))
    by_name = {p.name: p.id for p in load_yelp(reordered)}
    assert all(by_name[p.name] == p.id for p in first)


@pytest.fixture
def yelp_file(tmp_path: Path) -> Path:
    return write_yelp_file(tmp_path)
