"""Tests for the POI database (stellar.usecases.navi.store)."""

from __future__ import annotations

import itertools
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from navi_samples import make_poi

from stellar.usecases.navi.city import ABSENT_COMBINATIONS, generate_pois
from stellar.usecases.navi.poi import POI, POIDataError
from stellar.usecases.navi.request import VenueRequest as R
from stellar.usecases.navi.store import POIDatabase
from stellar.usecases.navi.vocabulary import CATEGORIES


@pytest.fixture(scope="module")
def generated() -> list[POI]:
    return generate_pois(seed=0)


@pytest.fixture(scope="module")
def generated_db(generated: list[POI], tmp_path_factory: pytest.TempPathFactory) -> POIDatabase:
    return POIDatabase.create(tmp_path_factory.mktemp("db") / "pois.sqlite", generated)


@pytest.fixture
def small_db(tmp_path: Path) -> POIDatabase:
    pois = [
        make_poi(1, rating=4.0, payment=("cash", "contactless"), parking=True),
        make_poi(2, rating=4.5, price="high", payment=("credit card",), parking=False),
        make_poi(3, rating=4.0, cuisine="greek", parking=None),
        make_poi(4, rating=None, payment=()),
        make_poi(5, rating=3.5, price="low", payment=("mobile payment", "cash")),
        make_poi(6, rating=5.0, category="cafe", cuisine=None),
        make_poi(7, rating=4.0, price="low"),
    ]
    return POIDatabase.create(tmp_path / "small.sqlite", pois)


# --- requests against the generated city -------------------------------------------------


def test_absent_combinations_unsatisfiable_in_database(generated_db: POIDatabase) -> None:
    assert len(ABSENT_COMBINATIONS) >= 5
    for combination in ABSENT_COMBINATIONS:
        assert generated_db.query(combination) == []
        assert not generated_db.satisfiable(combination)


@pytest.mark.parametrize(
    "constraints",
    [  # near misses of the absent combinations, and ordinary requests
        {"category": "restaurant", "cuisine": "vietnamese", "min_rating": 4.5},
        {"category": "restaurant", "cuisine": "italian", "min_rating": 5.0},
        {"category": "cafe", "cuisine": "italian"},
        {"category": "restaurant", "cuisine": "greek"},
        {"category": "bakery", "price": "medium"},
        {"category": "restaurant", "cuisine": "mexican", "payment": "cash"},
        {"category": "restaurant", "cuisine": "thai", "payment": "mobile payment"},
        {"category": "restaurant", "cuisine": "japanese", "parking": False},
        {"category": "hotel", "price": "low", "min_rating": 4.0},
        {"category": "hotel", "price": "high", "min_rating": 4.5},
        {"category": "museum", "parking": False},
        {"category": "hospital", "parking": True},
        {"category": "car_repair", "payment": "credit card"},
        {"category": "supermarket", "parking": True, "payment": "contactless"},
        {"category": "bar", "price": "low", "min_rating": 4.0},
    ],
)
def test_present_combinations_are_satisfiable(
    generated_db: POIDatabase, constraints: dict[str, Any]
) -> None:
    assert generated_db.satisfiable(R(**constraints))
    assert all(R(**constraints).matches(p) for p in generated_db.query(R(**constraints)))


def test_query_agrees_with_python_matching(generated: list[POI], generated_db: POIDatabase) -> None:
    for category, rating, price, payment, parking in itertools.product(
        CATEGORIES, (None, 4.0), (None, "low"), (None, "contactless"), (None, True, False)
    ):
        constraints = {"category": category, "min_rating": rating, "payment": payment}
        if price and category not in {"car_repair", "museum", "hospital"}:
            constraints["price"] = price
        constraints["parking"] = parking
        expected = [p.id for p in generated if R(**constraints).matches(p)]
        found = [p.id for p in generated_db.query(R(**constraints), limit=None)]
        assert sorted(found) == sorted(expected), constraints


# --- query semantics -----------------------------------------------------------------------


def ids(pois: list[POI]) -> list[int]:
    return [p.id for p in pois]


def test_min_rating_is_inclusive_and_unknown_rating_never_matches(small_db: POIDatabase) -> None:
    assert ids(small_db.query(R("restaurant", min_rating=4.0), limit=None)) == [2, 1, 3, 7]
    assert ids(small_db.query(R("restaurant", min_rating=4.5), limit=None)) == [2]
    assert 4 not in ids(small_db.query(R("restaurant", min_rating=1.0), limit=None))


def test_payment_means_the_method_is_accepted(small_db: POIDatabase) -> None:
    assert ids(small_db.query(R("restaurant", payment="contactless"))) == [1]
    assert ids(small_db.query(R("restaurant", payment="cash"), limit=None)) == [1, 3, 7, 5]
    assert ids(small_db.query(R("restaurant", payment="mobile payment"))) == [5]
    assert not small_db.satisfiable(R("cafe", payment="credit card"))


def test_parking_true_means_has_parking_and_unknown_never_matches(small_db: POIDatabase) -> None:
    assert ids(small_db.query(R("restaurant", parking=True), limit=None)) == [1, 7, 5, 4]
    assert ids(small_db.query(R("restaurant", parking=False), limit=None)) == [2]


def test_price_and_cuisine_are_exact(small_db: POIDatabase) -> None:
    assert ids(small_db.query(R("restaurant", price="low"), limit=None)) == [7, 5]
    assert ids(small_db.query(R("restaurant", price="high"))) == [2]
    assert ids(small_db.query(R("restaurant", cuisine="greek"))) == [3]
    assert small_db.query(R("restaurant", cuisine="thai")) == []
    assert ids(small_db.query(R("cafe"))) == [6]


def test_combined_constraints(small_db: POIDatabase) -> None:
    assert ids(small_db.query(R("restaurant", min_rating=4.0, price="medium", parking=True))) == [1]
    assert small_db.satisfiable(R("restaurant", min_rating=4.0, price="low", payment="cash"))
    assert not small_db.satisfiable(R("restaurant", min_rating=4.5, price="low"))


def test_results_best_rated_first_ties_by_id_unrated_last(small_db: POIDatabase) -> None:
    assert ids(small_db.query(R("restaurant"), limit=None)) == [2, 1, 3, 7, 5, 4]


def test_order_on_generated_data(generated_db: POIDatabase) -> None:
    result = generated_db.query(R("restaurant"), limit=None)
    keys = [(-p.rating, p.id) for p in result]
    assert keys == sorted(keys)


def test_limit(small_db: POIDatabase) -> None:
    assert len(small_db.query(R("restaurant"))) == 5
    assert ids(small_db.query(R("restaurant"), limit=2)) == [2, 1]
    assert small_db.query(R("restaurant"), limit=0) == []
    assert len(small_db.query(R("restaurant"), limit=None)) == 6
    with pytest.raises(ValueError, match="limit"):
        small_db.query(R("restaurant"), limit=-1)


# --- storage -------------------------------------------------------------------------------


def test_create_open_round_trip(tmp_path: Path, generated: list[POI]) -> None:
    path = tmp_path / "sub" / "pois.sqlite"
    POIDatabase.create(path, generated, source="test").close()
    with POIDatabase.open(path) as db:
        assert len(db) == len(generated)
        assert db.all() == sorted(generated, key=lambda p: p.id)
        assert db.get(17) == next(p for p in generated if p.id == 17)
        assert db.get(10**9) is None
        assert db.source == "test"
    assert [p.name for p in tmp_path.joinpath("sub").iterdir()] == ["pois.sqlite"]


def test_create_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "pois.sqlite"
    POIDatabase.create(path, [make_poi(1), make_poi(2)]).close()
    db = POIDatabase.create(path, [make_poi(3)])
    assert ids(db.all()) == [3]


def test_create_refuses_duplicate_ids(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="duplicate"):
        POIDatabase.create(tmp_path / "pois.sqlite", [make_poi(1), make_poi(1)])
    assert list(tmp_path.iterdir()) == []


def test_open_missing_file_errors_clearly(tmp_path: Path) -> None:
    missing = tmp_path / "nope.sqlite"
    with pytest.raises(POIDataError, match=r"POI database not found: .*nope\.sqlite"):
        POIDatabase.open(missing)


def test_open_rejects_files_that_are_not_poi_databases(tmp_path: Path) -> None:
    text = tmp_path / "text.sqlite"
    text.write_text("hello, not a database\n" * 100)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE t (x)")
    connection.close()
    for path in (text, other):
        with pytest.raises(ValueError, match="not a STELLAR POI database"):
            POIDatabase.open(path)


def test_database_is_read_only(small_db: POIDatabase) -> None:
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        small_db._connection.execute("DELETE FROM pois")


def test_queries_from_several_threads(generated_db: POIDatabase) -> None:
    requests = [R(c, min_rating=r) for c in CATEGORIES for r in (3.0, 4.0, 4.5)] * 20
    expected = [ids(generated_db.query(r)) for r in requests]
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = list(pool.map(lambda r: ids(generated_db.query(r)), requests))
    assert found == expected
