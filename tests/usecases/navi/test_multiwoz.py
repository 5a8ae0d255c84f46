"""Tests for the MultiWOZ loader (stellar.usecases.navi.multiwoz)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from stellar.usecases.navi.multiwoz import load_multiwoz
from stellar.usecases.navi.poi import POIDataError
from stellar.usecases.navi.request import VenueRequest as R
from stellar.usecases.navi.sources import PACKAGED_MULTIWOZ, build_database

MULTIWOZ = Path("/work/shared/data/multiwoz")
needs_multiwoz = pytest.mark.skipif(
    not (MULTIWOZ / "restaurant_db.json").is_file(), reason="MultiWOZ data not available"
)


def ids(pois: list) -> list[int]:
    return [p.id for p in pois]


@needs_multiwoz
def test_load_multiwoz_counts_and_known_venues() -> None:
    pois = load_multiwoz(MULTIWOZ)
    counts = Counter(p.category for p in pois)
    assert counts == {"restaurant": 110, "hotel": 33, "museum": 23, "hospital": 66}
    assert sorted(p.id for p in pois) == list(range(1, 233))
    by_name = {p.name: p for p in pois}
    curry = by_name["Curry Garden"]
    assert (curry.category, curry.cuisine, curry.price) == ("restaurant", "indian", "high")
    assert curry.address == "106 Regent Street City Centre, Cambridge CB2 1DP"
    assert (curry.rating, curry.payment, curry.parking) == (None, (), None)
    assert (by_name["Pizza Hut City Centre"].cuisine, by_name["Pizza Hut City Centre"].price) == (
        "italian",
        "low",
    )
    acorn = by_name["Acorn Guest House"]
    assert (acorn.category, acorn.rating, acorn.price, acorn.parking) == (
        "hotel",
        4.0,
        "medium",
        True,
    )
    assert by_name["A And B Guest House"].parking is False
    assert by_name["The Fitzwilliam Museum"].category == "museum"
    assert "Adc Theatre" not in by_name
    hospital = by_name["Addenbrookes Hospital - gynaecology"]
    assert (hospital.category, hospital.address) == ("hospital", "Hills Rd, Cambridge CB2 0QQ")


@needs_multiwoz
def test_multiwoz_unknown_attributes_never_satisfy(tmp_path: Path) -> None:
    db = build_database(f"multiwoz:{MULTIWOZ}", tmp_path / "mw.sqlite")
    assert len(db) == 232
    assert not db.satisfiable(R("restaurant", min_rating=1.0))
    assert not db.satisfiable(R("restaurant", payment="cash"))
    assert not db.satisfiable(R("hospital", parking=True))
    assert db.satisfiable(R("hotel", parking=True, min_rating=4.0, price="low"))
    assert ids(db.query(R("restaurant", cuisine="middle eastern"))) != []


def test_packaged_venues_equal_the_shared_copy() -> None:
    assert len(load_multiwoz(PACKAGED_MULTIWOZ)) == 232
    if (MULTIWOZ / "restaurant_db.json").is_file():
        assert load_multiwoz(PACKAGED_MULTIWOZ) == load_multiwoz(MULTIWOZ)


def test_directory_without_databases_errors(tmp_path: Path) -> None:
    with pytest.raises(POIDataError, match="no MultiWOZ database files"):
        load_multiwoz(tmp_path)
