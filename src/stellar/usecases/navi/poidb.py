"""The point-of-interest (POI) database behind the in-car navigation use case.

A POI is a venue the navigation assistant can recommend: one of nine categories with the
NaviQA feature values of the paper (cuisine, rating, price level, payment methods, parking).

Sources of POIs:

* :func:`generate_pois` -- a reproducible synthetic city ("Neuhafen") with all categories and
  cuisines; some combinations are absent on purpose (:data:`ABSENT_COMBINATIONS`) so that a
  test generator can ask for places that do not exist.
* :func:`load_yelp` -- the public Yelp Open Dataset business file (JSON lines).
* :func:`load_multiwoz` -- the MultiWOZ venue databases (real Cambridge venues, MIT licence).

:class:`POIDatabase` stores POIs in one SQLite file and answers constraint queries.

Semantics shared by :meth:`POI.matches`, :meth:`POIDatabase.query` and
:meth:`POIDatabase.satisfiable`: every given constraint must hold; ``min_rating`` means
``rating >= min_rating``; ``price`` and ``cuisine`` are exact; ``payment`` means the venue
accepts that method; ``parking=True`` means the venue has parking (``False``: known to have
none). An unknown attribute (``None``, or an empty payment tuple) never satisfies a constraint
that asks for it.
"""

from __future__ import annotations

import ast
import hashlib
import json
import logging
import os
import random
import sqlite3
import string
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from stellar.errors import StellarError

log = logging.getLogger(__name__)

CATEGORIES = (
    "hospital",
    "car_repair",
    "restaurant",
    "supermarket",
    "cafe",
    "bakery",
    "bar",
    "hotel",
    "museum",
)
CUISINES = (
    "german",
    "indian",
    "italian",
    "middle eastern",
    "french",
    "chinese",
    "japanese",
    "thai",
    "mexican",
    "greek",
    "vietnamese",
    "turkish",
    "american",
)
PAYMENT_METHODS = ("cash", "credit card", "contactless", "mobile payment")
PRICE_LEVELS = ("low", "medium", "high")
RATINGS = tuple(r / 2 for r in range(2, 11))  # 1.0, 1.5, ..., 5.0

CUISINE_CATEGORIES = frozenset({"restaurant", "cafe"})
"""Only these categories have a cuisine."""
PRICELESS_CATEGORIES = frozenset({"car_repair", "museum", "hospital"})
"""These categories never have a price level."""

GENERATOR_VERSION = 1
"""Bumped whenever :func:`generate_pois` changes its output; part of the cache file name."""

ABSENT_COMBINATIONS: tuple[dict[str, Any], ...] = (
    {"category": "restaurant", "cuisine": "vietnamese", "min_rating": 5.0},
    {"category": "cafe", "cuisine": "greek"},
    {"category": "bakery", "price": "high"},
    {"category": "restaurant", "cuisine": "mexican", "payment": "mobile payment"},
    {"category": "restaurant", "cuisine": "japanese", "parking": True},
    {"category": "hotel", "price": "low", "min_rating": 4.5},
    {"category": "museum", "parking": True},
)
"""Constraint sets (keyword arguments of :meth:`POIDatabase.query`) that no generated POI
satisfies, whatever the seed: "no such place" cases. The generator suppresses each one by
changing the attribute named by its *last* key (see ``_break_combination``)."""

_FORMAT = "stellar-navi-pois/1"


class POIDataError(StellarError, ValueError):
    """A POI source or database file is missing, unknown or malformed."""


# --------------------------------------------------------------------------------------------
# The POI record
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class POI:
    """One venue. ``None`` (and an empty ``payment``) mean unknown; payment is kept sorted."""

    id: int
    name: str
    category: str
    cuisine: str | None
    rating: float | None
    price: str | None
    payment: tuple[str, ...]
    parking: bool | None
    address: str
    lat: float
    lon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "payment", tuple(sorted(set(self.payment))))
        if self.rating is not None:
            object.__setattr__(self, "rating", float(self.rating))
        problem = _poi_problem(self)
        if problem:
            raise ValueError(f"invalid POI {self.id} ({self.name!r}): {problem}")

    def to_dict(self) -> dict[str, Any]:
        """The user-facing attributes, as the navigation assistant would describe them."""
        return {
            "name": self.name,
            "category": self.category,
            "cuisine": self.cuisine,
            "rating": self.rating,
            "price": self.price,
            "payment": list(self.payment),
            "parking": self.parking,
            "address": self.address,
        }

    def matches(
        self,
        category: str,
        cuisine: str | None = None,
        min_rating: float | None = None,
        price: str | None = None,
        payment: str | None = None,
        parking: bool | None = None,
    ) -> bool:
        """Whether this POI satisfies every given constraint (see the module docstring)."""
        _check_constraints(category, cuisine, price, payment, parking)
        checks = (
            self.category == category,
            cuisine is None or self.cuisine == cuisine,
            min_rating is None or (self.rating is not None and self.rating >= min_rating),
            price is None or self.price == price,
            payment is None or payment in self.payment,
            parking is None or self.parking is parking,
        )
        return all(checks)


def _poi_problem(poi: POI) -> str | None:
    """Why ``poi`` breaks the vocabulary, or None when it is valid."""
    if poi.category not in CATEGORIES:
        return f"unknown category {poi.category!r}"
    if poi.cuisine is not None and poi.cuisine not in CUISINES:
        return f"unknown cuisine {poi.cuisine!r}"
    if poi.cuisine is not None and poi.category not in CUISINE_CATEGORIES:
        return f"a {poi.category} has no cuisine"
    if poi.price is not None and poi.price not in PRICE_LEVELS:
        return f"unknown price level {poi.price!r}"
    if poi.price is not None and poi.category in PRICELESS_CATEGORIES:
        return f"a {poi.category} has no price level"
    if poi.rating is not None and poi.rating not in RATINGS:
        return f"rating {poi.rating} is not one of 1.0, 1.5, ..., 5.0"
    unknown = set(poi.payment) - set(PAYMENT_METHODS)
    if unknown:
        return f"unknown payment methods {sorted(unknown)}"
    if poi.parking is not None and not isinstance(poi.parking, bool):
        return "parking must be True, False or None"
    return None


def _check_constraints(
    category: str,
    cuisine: str | None,
    price: str | None,
    payment: str | None,
    parking: bool | None,
) -> None:
    """Raise ValueError for a constraint value outside the vocabulary (catches typos)."""
    vocabularies = (
        ("category", category, CATEGORIES),
        ("cuisine", cuisine, CUISINES),
        ("price", price, PRICE_LEVELS),
        ("payment", payment, PAYMENT_METHODS),
    )
    for what, value, allowed in vocabularies:
        if value is not None and value not in allowed:
            raise ValueError(f"unknown {what} {value!r}; expected one of {', '.join(allowed)}")
    if parking is not None and not isinstance(parking, bool):
        raise ValueError(f"parking must be True, False or None, not {parking!r}")


def _round_rating(value: Any) -> float | None:
    """A rating snapped to the 0.5 grid within 1.0..5.0; None for anything not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return min(5.0, max(1.0, round(float(value) * 2) / 2))


# --------------------------------------------------------------------------------------------
# Synthetic city
# --------------------------------------------------------------------------------------------

CITY = "Neuhafen"


def _split(words: str) -> tuple[str, ...]:
    """``"a | b c | d"`` -> ``("a", "b c", "d")``: keeps the word lists below compact."""
    return tuple(word.strip() for word in words.split("|"))


_POSTCODES = _split("71630 | 71632 | 71634 | 71636 | 71638")
_STREETS = _split(
    "Hauptstraße | Bahnhofstraße | Goethestraße | Schillerstraße | Lindenallee | Marktplatz"
    " | Kirchgasse | Mühlenweg | Friedrichstraße | Parkstraße | Gartenstraße | Bergstraße"
    " | Schulstraße | Rosenweg | Wiesenstraße | Hafenstraße | Kaiserstraße | Uferstraße"
    " | Domplatz | Am Rathaus | Seestraße | Waldweg | Poststraße | Lessingstraße"
)
_DISTRICTS = _split(
    "Altstadt | Nordviertel | Südstadt | Westend | Oststadt | Hafenviertel | Seeufer"
)
_LAT_RANGE = (48.76, 48.82)
_LON_RANGE = (9.14, 9.24)

_CATEGORY_SHARES = dict(
    restaurant=0.34, cafe=0.14, bar=0.10, bakery=0.08, supermarket=0.08, hotel=0.08,
    car_repair=0.08, museum=0.05, hospital=0.05,
)  # fmt: skip
_RESTAURANT_CUISINES = {
    "italian": 14, "german": 12, "chinese": 10, "turkish": 9, "indian": 8, "greek": 7,
    "japanese": 7, "thai": 6, "vietnamese": 6, "american": 6, "middle eastern": 5, "french": 5,
    "mexican": 5,
}  # fmt: skip
_CAFE_CUISINES = {  # no greek cafes at all (an absent combination)
    "italian": 5, "french": 4, "german": 3, "turkish": 3, "american": 3, "vietnamese": 2,
    "middle eastern": 1, "japanese": 1,
}  # fmt: skip
_CAFE_CUISINE_SHARE = 0.5
# Ratings skewed to 3.5..4.5 with few 5.0.
_RATING_WEIGHTS = {1.0: 1, 1.5: 1, 2.0: 2, 2.5: 3, 3.0: 7, 3.5: 16, 4.0: 27, 4.5: 19, 5.0: 4}
_PRICE_WEIGHTS = {  # low, medium, high
    "restaurant": (30, 50, 20), "cafe": (45, 50, 5), "bar": (30, 55, 15), "bakery": (50, 50, 0),
    "supermarket": (40, 50, 10), "hotel": (25, 50, 25),
}  # fmt: skip
_PAYMENT_CHANCES = {"cash": 0.9, "credit card": 0.8, "contactless": 0.55, "mobile payment": 0.25}
_PAYMENT_OVERRIDES = {
    "bakery": {"cash": 0.99, "credit card": 0.45, "contactless": 0.5},
    "hotel": {"cash": 0.7, "credit card": 0.99, "contactless": 0.8},
    "hospital": {"cash": 0.5, "credit card": 0.9},
}
_PARKING_CHANCES = dict(
    supermarket=0.85, hotel=0.8, hospital=0.9, car_repair=0.9, museum=0.3, restaurant=0.4,
    cafe=0.25, bar=0.2, bakery=0.3,
)  # fmt: skip
_UNKNOWN_PARKING_SHARE = 0.05

# Names: (templates, cores); a name is a template filled with a core.
_RESTAURANT_NAMES = {
    "italian": (
        _split("Trattoria {} | Ristorante {} | Osteria {} | Pizzeria {}"),
        _split("Bella Roma | da Mario | La Toscana | Il Gabbiano | Sole Mio | Venezia"
               " | Don Camillo | La Piazza | da Luigi | Il Porto"),
    ),
    "german": (
        _split("Gasthaus {} | Wirtshaus {} | Brauhaus {}"),
        _split("Zum Löwen | Zur Linde | Krone | Zum Hirschen | Adler | Am Markt | Zum Ochsen"
               " | Ratskeller | Alte Mühle | Zum Anker"),
    ),
    "indian": (
        _split("{} | {} Indian Cuisine | {} Tandoori"),
        _split("Taj Mahal | Maharaja | Ganges | Bombay Palace | Shalimar | Namaste"
               " | Delhi Darbar | Kashmir | Rajpur | Masala House"),
    ),
    "middle eastern": (
        _split("{} | {} Grill | {} Kitchen"),
        _split("Beirut | Cedars | Aleppo | Petra | Byblos | Damascus Rose | Al Sultan | Zaatar"
               " | Sahara | Baalbek"),
    ),
    "french": (
        _split("{} | Bistro {} | Brasserie {}"),
        _split("Le Petit Prince | La Belle Époque | Chez Marcel | Le Jardin | Saint-Germain"
               " | Montmartre | La Provence | Le Gourmet | Chez Nous | Le Lyonnais"),
    ),
    "chinese": (
        _split("{} | {} Restaurant | {} Garden"),
        _split("Golden Dragon | Jade Palace | Lotus | Peking House | Red Lantern | Bamboo"
               " | Great Wall | Imperial Wok | Szechuan House | Happy Panda"),
    ),
    "japanese": (
        _split("{} | {} Sushi | {} Ramen"),
        _split("Sakura | Kyoto | Fuji | Tokyo Kitchen | Koi | Yamato | Hanami | Osaka"
               " | Kintaro | Nami"),
    ),
    "thai": (
        _split("{} | {} Thai Kitchen | {} Garden"),
        _split("Bangkok | Siam | Chiang Mai | Lemongrass | Thai Orchid | Phuket"
               " | Golden Elephant | Sawasdee | Baan Thai | Royal Thai"),
    ),
    "mexican": (
        _split("{} | Cantina {} | {} Taquería"),
        _split("El Sombrero | Casa Miguel | Azteca | Frida | El Toro | La Paloma | Oaxaca"
               " | Cancún | Los Amigos | Mariachi"),
    ),
    "greek": (
        _split("{} | Taverna {} | {} Grill"),
        _split("Olympos | Akropolis | Santorini | Mykonos | Zorbas | Athena | Poseidon | Kreta"
               " | Delphi | Rhodos"),
    ),
    "vietnamese": (
        _split("{} | {} Pho | {} Kitchen"),
        _split("Saigon | Hanoi | Little Vietnam | Mekong | Hoi An | Lotus Leaf | Ha Long"
               " | Pho Viet | Bamboo Leaf | Da Nang"),
    ),
    "turkish": (
        _split("{} | {} Kebap | {} Grill"),
        _split("Istanbul | Anatolia | Bosporus | Ottoman | Sultan | Antalya | Efes | Kapadokya"
               " | Ankara | Lale"),
    ),
    "american": (
        _split("{} Diner | {} Burgers | {} Grill House"),
        _split("Route 66 | Liberty | Brooklyn | Texas | Golden Gate | Uncle Sam's | Blue Ridge"
               " | Hudson | Memphis | Big Apple"),
    ),
}  # fmt: skip
_SURNAMES = "Müller | Schmidt | Becker | Wagner | Hoffmann | Schäfer | Koch | Bauer | Richter"
_BAR_WORDS = [f"{a} {n}" for a in _split("Rusty | Blue | Tipsy | Golden | Old | Lucky")
              for n in _split("Anchor | Moon | Fox | Lion | Barrel | Owl")]  # fmt: skip
_CATEGORY_NAMES = {
    "cafe": (
        _split("Café {} | {} Coffee | Kaffeehaus {}"),
        _split("Central | Mozart | Lindenblüte | Sonnenschein | Morning Glory | Daily Grind"
               " | Bean & Leaf | Zeitlos | Am Park | Hafenblick | Kaffeekanne | Milchbar"),
    ),
    "bakery": (_split("Bäckerei {} | Backhaus {} | Konditorei {}"), _split(_SURNAMES)),
    "bar": (_split("The {} | {} Bar | {} Pub"), tuple(_BAR_WORDS)),
    "hotel": (
        _split("Hotel {} | {} Hotel | Gasthof {} | {} Inn"),
        _split("Adler | Sonne | Krone | Zur Post | Am See | Lindenhof | Bellevue | Europa"
               " | Kaiserhof | Schwan | Residenz | Parkblick"),
    ),
    "museum": (
        _split("Museum of {} | {} Museum | Neuhafen {} Collection"),
        _split("Natural History | Modern Art | Local History | Technology | Toys | Railways"
               " | Maritime History | Music | Photography | Archaeology | Science | Textiles"
               " | Clocks | Design | Coins"),
    ),
    "hospital": (
        _split("{} Hospital | {} Clinic | {} Medical Center"),
        _split("St. Mary's | St. Joseph's | St. Elisabeth | Sacred Heart | Red Cross | City"
               " | University | Lakeside | Riverside | Mercy | Good Samaritan | St. Vincent's"),
    ),
    "car_repair": (
        _split("{} Auto Repair | {} Car Service | {} Garage | {} Motor Works"),
        _split("QuickFix | AutoPro | Meister | Precision | Express | Star | Top Gear | Rapid"
               " | City | Reliable | Turbo | Kraft"),
    ),
    "supermarket": (
        _split("{} | {} Supermarket | {} Market"),
        _split("FreshMart | Green Basket | DailyFresh | ValuSave | Harvest | Sunny Fields"
               " | Markthalle | CityFrisch | BioGarten | Sparfuchs | Korb & Co | Frischwerk"),
    ),
}  # fmt: skip
_CAFE_WITH_CUISINE_TEMPLATES = _split("{} Café | Café {}")
_MIN_GENERATED = 50


def generate_pois(seed: int = 0, n: int = 3000) -> list[POI]:
    """``n`` synthetic venues in the city of Neuhafen; the same seed gives the same list.

    Every category and every cuisine occurs (``n >= 50``), the category shares are fixed,
    attributes are drawn from realistic distributions, and no POI satisfies any of
    :data:`ABSENT_COMBINATIONS`. Ids are 1..n.
    """
    if n < _MIN_GENERATED:
        raise ValueError(f"generate_pois needs n >= {_MIN_GENERATED}, got {n}")
    rng = random.Random(seed)
    specs = [
        (category, cuisine)
        for category, count in _category_counts(n).items()
        for cuisine in _draw_cuisines(rng, category, count)
    ]
    rng.shuffle(specs)
    used_names: set[str] = set()
    pois = [
        _avoid_absent(_draw_poi(rng, i, category, cuisine, used_names), rng)
        for i, (category, cuisine) in enumerate(specs, start=1)
    ]
    _verify_absent(pois)
    return pois


def _category_counts(n: int) -> dict[str, int]:
    """Fixed number of venues per category; the rounding remainder goes to restaurants."""
    counts = {c: int(n * share) for c, share in _CATEGORY_SHARES.items()}
    counts["restaurant"] += n - sum(counts.values())
    return counts


def _draw_cuisines(rng: random.Random, category: str, count: int) -> list[str | None]:
    """Cuisines for ``count`` venues; restaurants start with one of each cuisine."""
    if category == "restaurant":
        drawn = _weighted(rng, _RESTAURANT_CUISINES, count - len(CUISINES))
        return [*CUISINES, *drawn]
    if category == "cafe":
        return [
            _weighted(rng, _CAFE_CUISINES, 1)[0] if rng.random() < _CAFE_CUISINE_SHARE else None
            for _ in range(count)
        ]
    return [None] * count


def _weighted(rng: random.Random, weights: Mapping[Any, float], k: int) -> list[Any]:
    return rng.choices(list(weights), weights=list(weights.values()), k=k)


def _draw_poi(
    rng: random.Random, poi_id: int, category: str, cuisine: str | None, used: set[str]
) -> POI:
    return POI(
        id=poi_id,
        name=_draw_name(rng, category, cuisine, used),
        category=category,
        cuisine=cuisine,
        rating=_weighted(rng, _RATING_WEIGHTS, 1)[0],
        price=_draw_price(rng, category),
        payment=_draw_payment(rng, category),
        parking=_draw_parking(rng, category),
        address=f"{rng.choice(_STREETS)} {rng.randint(1, 180)}, {rng.choice(_POSTCODES)} {CITY}",
        lat=round(rng.uniform(*_LAT_RANGE), 6),
        lon=round(rng.uniform(*_LON_RANGE), 6),
    )


def _draw_name(rng: random.Random, category: str, cuisine: str | None, used: set[str]) -> str:
    """A plausible name, made unique with a district (and then a number) when taken."""
    if category == "restaurant" and cuisine is not None:
        templates, cores = _RESTAURANT_NAMES[cuisine]
    elif category == "cafe" and cuisine is not None:
        templates, cores = _CAFE_WITH_CUISINE_TEMPLATES, _RESTAURANT_NAMES[cuisine][1]
    else:
        templates, cores = _CATEGORY_NAMES[category]
    name = rng.choice(templates).format(rng.choice(cores))
    if name in used:
        name = f"{name} {rng.choice(_DISTRICTS)}"
    base, number = name, 2
    while name in used:
        name, number = f"{base} {number}", number + 1
    used.add(name)
    return name


def _draw_price(rng: random.Random, category: str) -> str | None:
    if category in PRICELESS_CATEGORIES:
        return None
    return rng.choices(PRICE_LEVELS, weights=_PRICE_WEIGHTS[category])[0]


def _draw_payment(rng: random.Random, category: str) -> tuple[str, ...]:
    """Accepted methods, each drawn independently; at least cash when none was drawn."""
    chances = {**_PAYMENT_CHANCES, **_PAYMENT_OVERRIDES.get(category, {})}
    methods = tuple(m for m in PAYMENT_METHODS if rng.random() < chances[m])
    return methods or ("cash",)


def _draw_parking(rng: random.Random, category: str) -> bool | None:
    if rng.random() < _UNKNOWN_PARKING_SHARE:
        return None
    return rng.random() < _PARKING_CHANCES[category]


def _avoid_absent(poi: POI, rng: random.Random) -> POI:
    """Change ``poi`` until it satisfies none of :data:`ABSENT_COMBINATIONS`."""
    for _ in range(len(ABSENT_COMBINATIONS) + 1):
        hit = next((c for c in ABSENT_COMBINATIONS if poi.matches(**c)), None)
        if hit is None:
            return poi
        poi = _break_combination(poi, hit, rng)
    raise RuntimeError(f"cannot keep POI {poi.id} out of the absent combinations")


def _break_combination(poi: POI, combination: dict[str, Any], rng: random.Random) -> POI:
    """Change the attribute named by the combination's last key so that it no longer holds."""
    key, value = list(combination.items())[-1]
    if key == "cuisine":
        others = [c for c in _CAFE_CUISINES if c != value]
        return replace(poi, cuisine=rng.choice(others) if poi.category == "cafe" else None)
    if key == "min_rating":
        return replace(poi, rating=max(1.0, value - 0.5))
    if key == "price":
        return replace(poi, price="low" if value == "medium" else "medium")
    if key == "payment":
        return replace(poi, payment=tuple(m for m in poi.payment if m != value) or ("cash",))
    if key == "parking":
        return replace(poi, parking=not value)
    raise ValueError(f"absent combination cannot be broken on {key!r}: {combination}")


def _verify_absent(pois: Iterable[POI]) -> None:
    for poi in pois:
        for combination in ABSENT_COMBINATIONS:
            if poi.matches(**combination):
                raise RuntimeError(f"generated POI {poi.id} matches {combination}")


# --------------------------------------------------------------------------------------------
# SQLite database
# --------------------------------------------------------------------------------------------

_COLUMNS = tuple(field.name for field in fields(POI))
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pois (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    cuisine TEXT,
    rating REAL,
    price TEXT,
    payment TEXT NOT NULL,  -- ',cash,credit card,': every method enclosed in commas
    parking INTEGER,        -- 1, 0 or NULL (unknown)
    address TEXT NOT NULL,
    lat REAL NOT NULL,
    lon REAL NOT NULL
);
CREATE INDEX pois_category ON pois (category, cuisine);
"""
_ORDER = "ORDER BY rating IS NULL, rating DESC, id"


def _encode_payment(payment: tuple[str, ...]) -> str:
    return "," + "".join(f"{method}," for method in payment)


def _to_row(poi: POI) -> tuple[Any, ...]:
    parking = None if poi.parking is None else int(poi.parking)
    return (
        poi.id,
        poi.name,
        poi.category,
        poi.cuisine,
        poi.rating,
        poi.price,
        _encode_payment(poi.payment),
        parking,
        poi.address,
        poi.lat,
        poi.lon,
    )


def _from_row(row: tuple[Any, ...]) -> POI:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["payment"] = tuple(m for m in values["payment"].split(",") if m)
    values["parking"] = None if values["parking"] is None else bool(values["parking"])
    return POI(**values)


def _where(
    category: str,
    cuisine: str | None,
    min_rating: float | None,
    price: str | None,
    payment: str | None,
    parking: bool | None,
) -> tuple[str, list[Any]]:
    """SQL condition and parameters; NULL (unknown) fails every comparison, as documented."""
    _check_constraints(category, cuisine, price, payment, parking)
    clauses, params = ["category = ?"], [category]
    optional = (
        ("cuisine = ?", cuisine),
        ("rating >= ?", None if min_rating is None else float(min_rating)),
        ("price = ?", price),
        ("instr(payment, ',' || ? || ',') > 0", payment),
        ("parking = ?", None if parking is None else int(parking)),
    )
    for clause, value in optional:
        if value is not None:
            clauses.append(clause)
            params.append(value)
    return " AND ".join(clauses), params


class POIDatabase:
    """A read-only view of a POI SQLite file, safe to share between threads.

    The connection is opened with ``mode=ro`` and ``check_same_thread=False``; a lock
    serialises the (sub-millisecond) queries. Several processes may open the same file.
    """

    def __init__(self, path: Path, connection: sqlite3.Connection, source: str) -> None:
        self.path = path
        self.source = source
        self._connection = connection
        self._lock = threading.Lock()

    @classmethod
    def create(
        cls, path: str | os.PathLike[str], pois: Iterable[POI], *, source: str = "custom"
    ) -> POIDatabase:
        """Write ``pois`` to a new file at ``path`` (replacing it atomically) and open it."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        try:
            _write_database(Path(temp_name), list(pois), source)
            os.replace(temp_name, path)
        except BaseException:
            Path(temp_name).unlink(missing_ok=True)
            raise
        return cls.open(path)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> POIDatabase:
        """Open an existing POI database read-only; :class:`POIDataError` if it is not one."""
        path = Path(path)
        if not path.is_file():
            raise POIDataError(f"POI database not found: {path}")
        uri = f"{path.resolve().as_uri()}?mode=ro"
        connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
        try:
            meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
            connection.execute("SELECT id FROM pois LIMIT 1").fetchall()
        except sqlite3.DatabaseError as error:
            connection.close()
            raise POIDataError(f"{path} is not a STELLAR POI database ({error})") from None
        if meta.get("format") != _FORMAT:
            connection.close()
            found = meta.get("format")
            raise POIDataError(f"{path} is not a STELLAR POI database (format {found!r})")
        return cls(path, connection, meta.get("source", "unknown"))

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> POIDatabase:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _fetch(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._connection.execute(sql, tuple(params)).fetchall()

    def __len__(self) -> int:
        return self._fetch("SELECT count(*) FROM pois")[0][0]

    def __iter__(self) -> Iterator[POI]:
        return iter(self.all())

    def all(self) -> list[POI]:
        """Every POI, by id."""
        rows = self._fetch(f"SELECT {', '.join(_COLUMNS)} FROM pois ORDER BY id")
        return [_from_row(row) for row in rows]

    def get(self, poi_id: int) -> POI | None:
        """The POI with this id, or None."""
        rows = self._fetch(f"SELECT {', '.join(_COLUMNS)} FROM pois WHERE id = ?", (poi_id,))
        return _from_row(rows[0]) if rows else None

    def query(
        self,
        category: str,
        cuisine: str | None = None,
        min_rating: float | None = None,
        price: str | None = None,
        payment: str | None = None,
        parking: bool | None = None,
        limit: int | None = 5,
    ) -> list[POI]:
        """Matching POIs, best rated first (unrated last, ties by id); at most ``limit``
        (``None``: all). Raises ValueError for values outside the vocabulary."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be >= 0 or None, not {limit}")
        where, params = _where(category, cuisine, min_rating, price, payment, parking)
        sql = f"SELECT {', '.join(_COLUMNS)} FROM pois WHERE {where} {_ORDER} LIMIT ?"
        rows = self._fetch(sql, [*params, -1 if limit is None else limit])
        return [_from_row(row) for row in rows]

    def satisfiable(
        self,
        category: str,
        cuisine: str | None = None,
        min_rating: float | None = None,
        price: str | None = None,
        payment: str | None = None,
        parking: bool | None = None,
    ) -> bool:
        """Whether any POI satisfies every given constraint."""
        where, params = _where(category, cuisine, min_rating, price, payment, parking)
        return bool(self._fetch(f"SELECT 1 FROM pois WHERE {where} LIMIT 1", params))


def _write_database(path: Path, pois: list[POI], source: str) -> None:
    """Create the schema in the empty file at ``path`` and insert ``pois``."""
    ids = Counter(poi.id for poi in pois)
    duplicates = sorted(i for i, count in ids.items() if count > 1)
    if duplicates:
        raise ValueError(f"duplicate POI ids: {duplicates[:10]}")
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.executescript(_SCHEMA)
            meta = {"format": _FORMAT, "source": source, "count": str(len(pois))}
            connection.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            placeholders = ", ".join("?" * len(_COLUMNS))
            connection.executemany(
                f"INSERT INTO pois VALUES ({placeholders})", (_to_row(p) for p in pois)
            )
    finally:
        connection.close()


def default_cache_path(seed: int = 0) -> Path:
    """Where :func:`default_database` keeps the generated database ($STELLAR_CACHE_DIR or
    ``~/.cache/stellar``)."""
    root = os.environ.get("STELLAR_CACHE_DIR")
    directory = Path(root) if root else Path.home() / ".cache" / "stellar"
    return directory / f"navi-pois-seed{seed}-v{GENERATOR_VERSION}.sqlite"


def _generated_source(seed: int) -> str:
    return f"generated:seed={seed}:v{GENERATOR_VERSION}"


def default_database(path: Path | None = None, seed: int = 0) -> POIDatabase:
    """The generated database for ``seed``: built once (atomically) at ``path``, then reopened.

    A file at ``path`` that is not a POI database or came from another source is rebuilt.
    """
    path = default_cache_path(seed) if path is None else Path(path)
    source = _generated_source(seed)
    if path.is_file():
        try:
            database = POIDatabase.open(path)
        except POIDataError:
            log.warning("rebuilding unreadable POI cache %s", path)
        else:
            if database.source == source:
                return database
            database.close()
    return POIDatabase.create(path, generate_pois(seed), source=source)


def build_database(source: str, path: str | os.PathLike[str], seed: int = 0) -> POIDatabase:
    """Build a database at ``path`` from ``"generated"``, ``"multiwoz:DIR"`` or ``"yelp:FILE"``.

    Raises :class:`POIDataError` (a ValueError) for an unknown source, a missing file or
    directory, or a source without any usable POI.
    """
    kind, _, location = source.partition(":")
    if source == "generated":
        pois, source = generate_pois(seed), _generated_source(seed)
    elif kind == "multiwoz" and location:
        if not Path(location).is_dir():
            raise POIDataError(f"MultiWOZ directory not found: {location}")
        pois = load_multiwoz(location)
    elif kind == "yelp" and location:
        if not Path(location).is_file():
            raise POIDataError(f"Yelp business file not found: {location}")
        pois = load_yelp(location)
    else:
        raise POIDataError(
            f"unknown POI source {source!r}; expected 'generated', 'multiwoz:DIR' or 'yelp:FILE'"
        )
    if not pois:
        raise POIDataError(f"POI source {source!r} contains no usable venues")
    return POIDatabase.create(path, pois, source=source)


# --------------------------------------------------------------------------------------------
# Yelp Open Dataset
# --------------------------------------------------------------------------------------------

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
        rating=_round_rating(business.get("stars")),
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


# --------------------------------------------------------------------------------------------
# MultiWOZ
# --------------------------------------------------------------------------------------------

MULTIWOZ_CUISINES: dict[str, str] = {
    "italian": "italian",
    "chinese": "chinese",
    "indian": "indian",
    "french": "french",
    "thai": "thai",
    "mexican": "mexican",
    "japanese": "japanese",
    "vietnamese": "vietnamese",
    "turkish": "turkish",
    "lebanese": "middle eastern",
    "north american": "american",
}
"""MultiWOZ ``food`` -> our cuisine. Foods outside our vocabulary (british, european,
modern european, asian oriental, gastropub, mediterranean, international, spanish,
portuguese, korean, african, seafood) are not forced into it: the cuisine stays unknown."""

MULTIWOZ_PRICES = {"cheap": "low", "moderate": "medium", "expensive": "high"}
MULTIWOZ_HOSPITAL = {
    "name": "Addenbrookes Hospital",
    "address": "Hills Rd, Cambridge CB2 0QQ",
    "lat": 52.1751,
    "lon": 0.1406,
}
"""All MultiWOZ hospital departments belong to this hospital (the file has no address)."""
MULTIWOZ_FILES = ("restaurant_db.json", "hotel_db.json", "attraction_db.json", "hospital_db.json")


def load_multiwoz(directory: str | os.PathLike[str]) -> list[POI]:
    """Venues from the MultiWOZ databases in ``directory`` (real Cambridge venues).

    * restaurants: cuisine by :data:`MULTIWOZ_CUISINES`, price by :data:`MULTIWOZ_PRICES`;
    * hotels and guesthouses -> hotel: ``stars`` -> rating (``"0"``, unrated -> unknown),
      ``parking`` yes/no, price range;
    * attractions of type ``museum`` (museums and galleries) -> museum; other types skipped;
    * hospital departments -> one hospital POI each, named "Addenbrookes Hospital - <dept>"
      at :data:`MULTIWOZ_HOSPITAL`'s address.

    MultiWOZ has no ratings for restaurants and museums and no payment data at all: those stay
    unknown (``None``, empty payment) and never satisfy a constraint asking for them. Names are
    capitalised word by word; addresses get "Cambridge" and the formatted postcode. Ids are
    1..n in file order (restaurants, hotels, museums, hospital departments). Files that are
    absent are skipped; :class:`POIDataError` when none of :data:`MULTIWOZ_FILES` exists.
    """
    directory = Path(directory)
    readers = (_multiwoz_restaurant, _multiwoz_hotel, _multiwoz_museum, _multiwoz_hospital)
    present = [
        (directory / f, r)
        for f, r in zip(MULTIWOZ_FILES, readers, strict=True)
        if (directory / f).is_file()
    ]
    if not present:
        expected = ", ".join(MULTIWOZ_FILES)
        raise POIDataError(f"no MultiWOZ database files ({expected}) in {directory}")
    pois: list[POI] = []
    for file, reader in present:
        entries = json.loads(file.read_text(encoding="utf-8"))
        for entry in entries:
            fields = reader(entry)
            if fields is not None:
                pois.append(POI(id=len(pois) + 1, **fields))
    return pois


def _multiwoz_common(entry: dict[str, Any]) -> dict[str, Any]:
    """Name, address and coordinates of a restaurant, hotel or attraction entry."""
    lat, lon = entry["location"]
    return {
        "name": string.capwords(entry["name"]),
        "address": f"{string.capwords(entry['address'])}, Cambridge {_postcode(entry)}".strip(),
        "lat": float(lat),
        "lon": float(lon),
    }


def _postcode(entry: dict[str, Any]) -> str:
    """``"cb21ab"`` -> ``"CB2 1AB"`` (the inward code is always the last three characters)."""
    code = str(entry.get("postcode", "")).replace(" ", "").upper()
    return f"{code[:-3]} {code[-3:]}" if len(code) > 3 else code


def _multiwoz_restaurant(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        **_multiwoz_common(entry),
        "category": "restaurant",
        "cuisine": MULTIWOZ_CUISINES.get(entry.get("food", "")),
        "rating": None,
        "price": MULTIWOZ_PRICES.get(entry.get("pricerange", "")),
        "payment": (),
        "parking": None,
    }


def _multiwoz_hotel(entry: dict[str, Any]) -> dict[str, Any]:
    stars = entry.get("stars", "0")
    return {
        **_multiwoz_common(entry),
        "category": "hotel",
        "cuisine": None,
        "rating": _round_rating(float(stars)) if stars not in ("0", "?", "") else None,
        "price": MULTIWOZ_PRICES.get(entry.get("pricerange", "")),
        "payment": (),
        "parking": {"yes": True, "no": False}.get(entry.get("parking", "")),
    }


def _multiwoz_museum(entry: dict[str, Any]) -> dict[str, Any] | None:
    if entry.get("type") != "museum":
        return None
    return {
        **_multiwoz_common(entry),
        "category": "museum",
        "cuisine": None,
        "rating": None,
        "price": None,
        "payment": (),
        "parking": None,
    }


def _multiwoz_hospital(entry: dict[str, Any]) -> dict[str, Any]:
    hospital = MULTIWOZ_HOSPITAL
    return {
        "name": f"{hospital['name']} - {entry['department']}",
        "address": entry.get("address") or hospital["address"],
        "lat": hospital["lat"],
        "lon": hospital["lon"],
        "category": "hospital",
        "cuisine": None,
        "rating": None,
        "price": None,
        "payment": (),
        "parking": None,
    }
