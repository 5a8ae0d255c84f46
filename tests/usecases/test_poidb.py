"""Tests for the navigation use case's POI database (stellar.usecases.navi.poidb)."""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from stellar.usecases.navi.poidb import (
    ABSENT_COMBINATIONS,
    CATEGORIES,
    CUISINES,
    PAYMENT_METHODS,
    POI,
    PRICE_LEVELS,
    POIDatabase,
    POIDataError,
    build_database,
    default_cache_path,
    default_database,
    generate_pois,
    load_multiwoz,
    load_yelp,
)

MULTIWOZ = Path("/work/shared/data/multiwoz")
needs_multiwoz = pytest.mark.skipif(
    not (MULTIWOZ / "restaurant_db.json").is_file(), reason="MultiWOZ data not available"
)


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


# --- generation ----------------------------------------------------------------------------


def test_same_seed_gives_identical_pois_and_other_seed_differs(generated: list[POI]) -> None:
    assert generate_pois(seed=0) == generated
    other = generate_pois(seed=1)
    assert other != generated
    assert [p.name for p in other] != [p.name for p in generated]


@pytest.mark.parametrize("n", [50, 137, 3000])
def test_generates_exactly_n_pois_with_ids_1_to_n(n: int) -> None:
    pois = generate_pois(seed=3, n=n)
    assert len(pois) == n
    assert sorted(p.id for p in pois) == list(range(1, n + 1))


def test_too_few_pois_are_refused() -> None:
    with pytest.raises(ValueError, match="n >= 50"):
        generate_pois(n=10)


@pytest.mark.parametrize(("seed", "n"), [(0, 3000), (7, 50)])
def test_all_categories_and_cuisines_present(seed: int, n: int) -> None:
    pois = generate_pois(seed=seed, n=n)
    assert {p.category for p in pois} == set(CATEGORIES)
    restaurant_cuisines = {p.cuisine for p in pois if p.category == "restaurant"}
    assert restaurant_cuisines == set(CUISINES)


def test_attributes_stay_in_the_vocabulary(generated: list[POI]) -> None:
    for poi in generated:
        assert poi.payment and set(poi.payment) <= set(PAYMENT_METHODS)
        assert poi.payment == tuple(sorted(poi.payment))
        assert poi.rating is not None and 1.0 <= poi.rating <= 5.0
        assert (poi.rating * 2).is_integer()
        if poi.category in {"car_repair", "museum", "hospital"}:
            assert poi.price is None
        else:
            assert poi.price in PRICE_LEVELS
        if poi.category == "restaurant":
            assert poi.cuisine in CUISINES
        elif poi.category != "cafe":
            assert poi.cuisine is None
        assert poi.address.endswith("Neuhafen")


def test_distributions_are_realistic(generated: list[POI]) -> None:
    ratings = Counter(p.rating for p in generated)
    share = {r: ratings[r] / len(generated) for r in ratings}
    assert share[3.5] + share[4.0] + share[4.5] > 0.6
    assert 0 < share[5.0] < 0.1
    prices = Counter(p.price for p in generated if p.price)
    assert prices.most_common(1)[0][0] == "medium"
    payments = Counter(m for p in generated for m in p.payment)
    assert payments["cash"] > payments["mobile payment"] * 2
    assert payments["credit card"] > payments["mobile payment"] * 2

    def parking_share(category: str) -> float:
        venues = [p for p in generated if p.category == category]
        return sum(p.parking is True for p in venues) / len(venues)

    for common in ("supermarket", "hotel", "hospital"):
        for rare in ("cafe", "bar", "restaurant"):
            assert parking_share(common) > parking_share(rare)


def test_names_are_unique_and_plausible(generated: list[POI]) -> None:
    names = [p.name for p in generated]
    assert len(set(names)) == len(names)
    hospitals = [p.name for p in generated if p.category == "hospital"]
    assert all(any(w in n for w in ("Hospital", "Clinic", "Medical Center")) for n in hospitals)


@pytest.mark.parametrize("seed", range(5))
def test_absent_combinations_are_absent(seed: int) -> None:
    pois = generate_pois(seed=seed)
    for combination in ABSENT_COMBINATIONS:
        assert not [p for p in pois if p.matches(**combination)], combination


def test_absent_combinations_unsatisfiable_in_database(generated_db: POIDatabase) -> None:
    assert len(ABSENT_COMBINATIONS) >= 5
    for combination in ABSENT_COMBINATIONS:
        assert generated_db.query(**combination) == []
        assert not generated_db.satisfiable(**combination)


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
    assert generated_db.satisfiable(**constraints)
    assert all(p.matches(**constraints) for p in generated_db.query(**constraints))


def test_query_agrees_with_python_matching(generated: list[POI], generated_db: POIDatabase) -> None:
    for category, rating, price, payment, parking in itertools.product(
        CATEGORIES, (None, 4.0), (None, "low"), (None, "contactless"), (None, True, False)
    ):
        constraints = {"category": category, "min_rating": rating, "payment": payment}
        if price and category not in {"car_repair", "museum", "hospital"}:
            constraints["price"] = price
        constraints["parking"] = parking
        expected = [p.id for p in generated if p.matches(**constraints)]
        found = [p.id for p in generated_db.query(**constraints, limit=None)]
        assert sorted(found) == sorted(expected), constraints


# --- query semantics -----------------------------------------------------------------------


def ids(pois: list[POI]) -> list[int]:
    return [p.id for p in pois]


def test_min_rating_is_inclusive_and_unknown_rating_never_matches(small_db: POIDatabase) -> None:
    assert ids(small_db.query("restaurant", min_rating=4.0, limit=None)) == [2, 1, 3, 7]
    assert ids(small_db.query("restaurant", min_rating=4.5, limit=None)) == [2]
    assert 4 not in ids(small_db.query("restaurant", min_rating=1.0, limit=None))


def test_payment_means_the_method_is_accepted(small_db: POIDatabase) -> None:
    assert ids(small_db.query("restaurant", payment="contactless")) == [1]
    assert ids(small_db.query("restaurant", payment="cash", limit=None)) == [1, 3, 7, 5]
    assert ids(small_db.query("restaurant", payment="mobile payment")) == [5]
    assert not small_db.satisfiable("cafe", payment="credit card")


def test_parking_true_means_has_parking_and_unknown_never_matches(small_db: POIDatabase) -> None:
    assert ids(small_db.query("restaurant", parking=True, limit=None)) == [1, 7, 5, 4]
    assert ids(small_db.query("restaurant", parking=False, limit=None)) == [2]


def test_price_and_cuisine_are_exact(small_db: POIDatabase) -> None:
    assert ids(small_db.query("restaurant", price="low", limit=None)) == [7, 5]
    assert ids(small_db.query("restaurant", price="high")) == [2]
    assert ids(small_db.query("restaurant", cuisine="greek")) == [3]
    assert small_db.query("restaurant", cuisine="thai") == []
    assert ids(small_db.query("cafe")) == [6]


def test_combined_constraints(small_db: POIDatabase) -> None:
    assert ids(small_db.query("restaurant", min_rating=4.0, price="medium", parking=True)) == [1]
    assert small_db.satisfiable("restaurant", min_rating=4.0, price="low", payment="cash")
    assert not small_db.satisfiable("restaurant", min_rating=4.5, price="low")


def test_results_best_rated_first_ties_by_id_unrated_last(small_db: POIDatabase) -> None:
    assert ids(small_db.query("restaurant", limit=None)) == [2, 1, 3, 7, 5, 4]


def test_order_on_generated_data(generated_db: POIDatabase) -> None:
    result = generated_db.query("restaurant", limit=None)
    keys = [(-p.rating, p.id) for p in result]
    assert keys == sorted(keys)


def test_limit(small_db: POIDatabase) -> None:
    assert len(small_db.query("restaurant")) == 5
    assert ids(small_db.query("restaurant", limit=2)) == [2, 1]
    assert small_db.query("restaurant", limit=0) == []
    assert len(small_db.query("restaurant", limit=None)) == 6
    with pytest.raises(ValueError, match="limit"):
        small_db.query("restaurant", limit=-1)


@pytest.mark.parametrize(
    "constraints",
    [
        {"category": "car repair"},
        {"category": "restaurant", "cuisine": "Italian"},
        {"category": "restaurant", "price": "cheap"},
        {"category": "restaurant", "payment": "card"},
        {"category": "restaurant", "parking": "yes"},
    ],
)
def test_values_outside_the_vocabulary_are_rejected(
    small_db: POIDatabase, constraints: dict[str, Any]
) -> None:
    with pytest.raises(ValueError, match=r"unknown|parking"):
        small_db.query(**constraints)
    with pytest.raises(ValueError):
        small_db.satisfiable(**constraints)


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
    requests = [{"category": c, "min_rating": r} for c in CATEGORIES for r in (3.0, 4.0, 4.5)] * 20
    expected = [ids(generated_db.query(**r)) for r in requests]
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = list(pool.map(lambda r: ids(generated_db.query(**r)), requests))
    assert found == expected


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


# --- loaders -------------------------------------------------------------------------------


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
    assert not db.satisfiable("restaurant", min_rating=1.0)
    assert not db.satisfiable("restaurant", payment="cash")
    assert not db.satisfiable("hospital", parking=True)
    assert db.satisfiable("hotel", parking=True, min_rating=4.0, price="low")
    assert ids(db.query("restaurant", cuisine="middle eastern")) != []


def test_build_database_sources(yelp_file: Path, tmp_path: Path) -> None:
    generated = build_database("generated", tmp_path / "g.sqlite", seed=4)
    assert generated.all() == generate_pois(seed=4)
    assert len(build_database(f"yelp:{yelp_file}", tmp_path / "y.sqlite")) == 7


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
