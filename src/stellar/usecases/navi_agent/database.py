"""The booking database the agent acts on: venues of navi's generated city, bookings, routes.

Built from the generated city (:func:`stellar.usecases.navi.sources.open_pois`) and a seed,
so every run and every test starts from the same database; a test's plan adds what it needs
on top (its own bookings, a change made behind the agent's back). A user's own database
(``state: FILE``, JSON) replaces it, checked against :data:`STATE_SCHEMA` when the run is
loaded: a file of another shape would make every test fail for the file's sake.

Tables (each a list of rows with an ``id``, as :class:`stellar.agent.environment.Environment`
expects): ``venues`` (opening hours, a temporary closure, seats, a review), ``bookings``
(owner, venue, party size, time of day, status, note), ``routes`` (navigation started) and
``meta`` (one row: the clock, ``now``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jsonschema

from stellar.agent.environment import State
from stellar.errors import StellarError

USER = "user-1"  # the user the agent serves (policy.yaml names it too)
NOW = "16:00"  # the clock every test starts at: bookings are for tonight
CATEGORIES = ("restaurant", "cafe", "bar")
VENUES = 40
OPENS = ("11:00", "12:00", "17:00")
CLOSES = ("21:00", "22:00", "23:00")
REVIEWS = (
    "Friendly staff and generous portions.",
    "Great food, a bit loud on weekends.",
    "Cosy place, the desserts are worth it.",
    "Service was slow but the food made up for it.",
    "Lovely terrace, book ahead in summer.",
    "Good value, simple menu, quick service.",
)
NOTES = ("", "", "window seat please", "birthday", "high chair needed")

_TIME = "^([01][0-9]|2[0-3]):[0-5][0-9]$"
_ROW = {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}
STATE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["venues", "bookings", "routes", "meta"],
    "additionalProperties": False,
    "properties": {
        "venues": {
            "type": "array",
            "items": {
                **_ROW,
                "required": ["id", "name", "category", "opens", "closes", "closed", "capacity"],
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "name": {"type": "string", "minLength": 1},
                    "category": {"type": "string"},
                    "cuisine": {"type": ["string", "null"]},
                    "rating": {"type": ["number", "null"]},
                    "price": {"type": ["string", "null"]},
                    "address": {"type": "string"},
                    "opens": {"type": "string", "pattern": _TIME},
                    "closes": {"type": "string", "pattern": _TIME},
                    "closed": {"type": "boolean"},
                    "capacity": {"type": "integer", "minimum": 1},
                    "review": {"type": "string"},
                },
            },
        },
        "bookings": {
            "type": "array",
            "items": {
                **_ROW,
                "required": ["id", "owner", "venue_id", "party_size", "time", "status"],
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "owner": {"type": "string", "minLength": 1},
                    "venue_id": {"type": "string"},
                    "party_size": {"type": "integer", "minimum": 1},
                    "time": {"type": "string", "pattern": _TIME},
                    "status": {"enum": ["confirmed", "cancelled"]},
                    "note": {"type": "string"},
                },
            },
        },
        "routes": {"type": "array", "items": _ROW},
        "meta": {
            "type": "array",
            "minItems": 1,
            "maxItems": 1,
            "items": {
                **_ROW,
                "required": ["id", "now"],
                "properties": {
                    "id": {"const": "clock"},
                    "now": {"type": "string", "pattern": _TIME},
                },
            },
        },
    },
}


def minutes(time: str) -> int:
    """Minutes since midnight of ``HH:MM``."""
    hours, _, mins = time.partition(":")
    return int(hours) * 60 + int(mins)


def clock(total: int) -> str:
    """``HH:MM`` of minutes since midnight (within the day)."""
    total = max(0, min(total, 23 * 60 + 59))
    return f"{total // 60:02d}:{total % 60:02d}"


def now(state: State) -> str:
    return str(state["meta"][0]["now"])


def venue(state: State, venue_id: str) -> dict[str, Any] | None:
    return next((row for row in state["venues"] if row["id"] == venue_id), None)


def booking(state: State, booking_id: str) -> dict[str, Any] | None:
    wanted = booking_id.strip().upper()
    return next((row for row in state["bookings"] if row["id"].upper() == wanted), None)


def build_state(seed: int = 0) -> State:
    """The default database: :data:`VENUES` venues of the generated city, each user's
    bookings for tonight, no route yet. Pure in ``seed``."""
    from stellar.usecases.navi.sources import open_pois

    rng = random.Random(seed)
    pois = [p for p in open_pois("generated").all() if p.category in CATEGORIES]
    rng.shuffle(pois)
    venues: list[dict[str, Any]] = []
    for poi in pois:
        if len(venues) == VENUES:
            break
        if poi.name[-1].isdigit() or _clashes(poi.name, venues):
            continue  # "Jade Palace Westend 2": a name a user could not tell apart
        venues.append(
            {
                "id": f"V-{poi.id}",
                "name": poi.name,
                "category": poi.category,
                "cuisine": poi.cuisine,
                "rating": poi.rating,
                "price": poi.price,
                "address": poi.address,
                "opens": rng.choice(OPENS),
                "closes": rng.choice(CLOSES),
                "closed": rng.random() < 0.12,
                "capacity": rng.choice((30, 40, 60, 80)),
                "review": rng.choice(REVIEWS),
            }
        )
    open_venues = [v for v in venues if not v["closed"]]
    bookings = []
    for number, owner in enumerate([USER] * 3 + [f"user-{rng.randint(2, 9)}" for _ in range(20)]):
        place = rng.choice(open_venues)
        last = minutes(place["closes"]) - 60
        start = max(minutes(place["opens"]), minutes(NOW) + 120)
        bookings.append(
            {
                "id": f"B-{1001 + number}",
                "owner": owner,
                "venue_id": place["id"],
                "party_size": rng.randint(2, 6),
                "time": clock(rng.randrange(start, last + 1, 30) if start <= last else last),
                "status": "confirmed",
                "note": rng.choice(NOTES),
            }
        )
    return {
        "venues": venues,
        "bookings": bookings,
        "routes": [],
        "meta": [{"id": "clock", "now": NOW}],
    }


def _clashes(name: str, venues: list[dict[str, Any]]) -> bool:
    """Whether ``name`` shares its first two words with a venue taken, or one holds the other."""
    head = name.lower().split()[:2]
    for other in venues:
        known = other["name"].lower()
        if known in name.lower() or name.lower() in known or known.split()[:2] == head:
            return True
    return False


def check_state(state: Any, source: object = "state") -> State:
    """``state`` if it has the database's shape (:data:`STATE_SCHEMA`, unique ids, bookings
    at known venues); else one line naming what is wrong (a :class:`StellarError`)."""
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(STATE_SCHEMA).iter_errors(state)
    )
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        raise StellarError(f"{source}: not the database's shape at {where}: {error.message}")
    for table, rows in state.items():
        ids = [row["id"] for row in rows]
        if len(set(ids)) != len(ids):
            twice = next(i for i in ids if ids.count(i) > 1)
            raise StellarError(f"{source}: {table}: id {twice!r} is used twice")
    known = {row["id"] for row in state["venues"]}
    for row in state["bookings"]:
        if row["venue_id"] not in known:
            raise StellarError(
                f"{source}: bookings: {row['id']} is at venue {row['venue_id']!r}, not in venues"
            )
    return state


def load_state(path: str | Path) -> State:
    """A user's database from a JSON file, checked (:func:`check_state`)."""
    path = Path(path).expanduser()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StellarError(f"state file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StellarError(f"state file {path}: cannot be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise StellarError(f"state file {path}: not JSON: {exc.msg} (line {exc.lineno})") from None
    return check_state(raw, f"state file {path}")
