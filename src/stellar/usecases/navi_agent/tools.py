"""The tools the agent is given: the booking service's API over the database.

The service keeps its data consistent (unknown ids, a table no longer free, a booking already
cancelled are refused with a :class:`ToolError`), and nothing more: the written policy
(confirmation, party sizes, open venues, own bookings, notice) is the agent's to follow, as
a real booking backend trusts the assistant in front of it. That is what makes a breach of
the policy observable in the database and the call trace.

Listings (``search_venues``, ``list_bookings``) are what a cache would serve, and what the
``stale`` tool behaviour perturbs; ``venue_details`` and ``booking_details`` read the live
rows.
"""

from __future__ import annotations

from typing import Any

from stellar.agent.environment import State, Tool, ToolError
from stellar.usecases.navi_agent.database import booking, minutes, now, venue

TIME = {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$", "description": "HH:MM"}
ID = {"type": "string", "minLength": 1}
LISTED = (
    "id",
    "name",
    "category",
    "cuisine",
    "rating",
    "price",
    "address",
    "opens",
    "closes",
    "closed",
    "review",
)


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def search_venues(state: State, args: dict[str, Any]) -> list[dict[str, Any]]:
    """Venues whose name, cuisine, category or address hold every word of ``query``."""
    words = str(args.get("query", "")).lower().split()
    found = []
    for row in state["venues"]:
        text = " ".join(str(row.get(k) or "") for k in ("name", "cuisine", "category", "address"))
        if args.get("cuisine") and row.get("cuisine") != args["cuisine"].lower():
            continue
        if args.get("category") and row.get("category") != args["category"]:
            continue
        if all(word in text.lower() for word in words):
            found.append({k: row.get(k) for k in LISTED})
    return found[: int(args.get("limit", 5))]


def venue_details(state: State, args: dict[str, Any]) -> dict[str, Any]:
    row = venue(state, args["venue_id"])
    if row is None:
        raise ToolError(f"no venue {args['venue_id']!r}")
    return dict(row)


def _shown(state: State, row: dict[str, Any]) -> dict[str, Any]:
    place = venue(state, row["venue_id"]) or {}
    until = minutes(row["time"]) - minutes(now(state))
    return {**row, "venue_name": place.get("name"), "minutes_until": until}


def list_bookings(state: State, args: dict[str, Any]) -> list[dict[str, Any]]:
    return [_shown(state, row) for row in state["bookings"] if row["owner"] == args["user"]]


def booking_details(state: State, args: dict[str, Any]) -> dict[str, Any]:
    row = booking(state, args["booking_id"])
    if row is None:
        raise ToolError(f"no booking {args['booking_id']!r}")
    return _shown(state, row)


def _free(state: State, place: dict[str, Any], time: str, party: int, besides: str = "") -> None:
    taken = sum(
        row["party_size"]
        for row in state["bookings"]
        if row["venue_id"] == place["id"]
        and row["status"] == "confirmed"
        and row["time"] == time
        and row["id"] != besides
    )
    if taken + party > int(place["capacity"]):
        raise ToolError(f"{place['name']} has no table free for {party} at {time}")


def book_table(state: State, args: dict[str, Any]) -> dict[str, Any]:
    place = venue(state, args["venue_id"])
    if place is None:
        raise ToolError(f"no venue {args['venue_id']!r}")
    _free(state, place, args["time"], args["party_size"])
    number = 1 + max((int(row["id"].split("-")[-1]) for row in state["bookings"]), default=1000)
    row = {
        "id": f"B-{number}",
        "owner": args["user"],
        "venue_id": place["id"],
        "party_size": args["party_size"],
        "time": args["time"],
        "status": "confirmed",
        "note": args.get("note", ""),
    }
    state["bookings"].append(row)
    return _shown(state, row)


def _confirmed(state: State, booking_id: str) -> dict[str, Any]:
    row = booking(state, booking_id)
    if row is None:
        raise ToolError(f"no booking {booking_id!r}")
    if row["status"] != "confirmed":
        raise ToolError(f"booking {row['id']} is {row['status']}")
    return row


def change_booking(state: State, args: dict[str, Any]) -> dict[str, Any]:
    row = _confirmed(state, args["booking_id"])
    if "party_size" not in args and "time" not in args:
        raise ToolError("nothing to change: give party_size or time")
    place = venue(state, row["venue_id"]) or {}
    party, time = args.get("party_size", row["party_size"]), args.get("time", row["time"])
    if place:
        _free(state, place, time, party, besides=row["id"])
    row.update(party_size=party, time=time)
    return _shown(state, row)


def cancel_booking(state: State, args: dict[str, Any]) -> dict[str, Any]:
    row = _confirmed(state, args["booking_id"])
    row["status"] = "cancelled"
    return _shown(state, row)


def start_navigation(state: State, args: dict[str, Any]) -> dict[str, Any]:
    place = venue(state, args["venue_id"])
    if place is None:
        raise ToolError(f"no venue {args['venue_id']!r}")
    row = {"id": f"R-{len(state['routes']) + 1}", "venue_id": place["id"]}
    state["routes"].append(row)
    return {"destination": place["name"], "address": place.get("address", ""), "route": row["id"]}


def make_tools() -> list[Tool]:
    """The service's tools, each with the JSON Schema of its arguments."""
    user = {"type": "string", "description": "the account the call is for, e.g. user-1"}
    party = {"type": "integer", "minimum": 1, "maximum": 50}
    return [
        Tool(
            "search_venues",
            "Search venues by words of their name, cuisine, category or address.",
            _object(
                {
                    "query": {"type": "string"},
                    "cuisine": {"type": "string"},
                    "category": {"enum": ["restaurant", "cafe", "bar"]},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 10},
                },
                [],
            ),
            search_venues,
        ),
        Tool(
            "venue_details",
            "A venue's details: opening hours, whether it is closed, seats, a review.",
            _object({"venue_id": ID}, ["venue_id"]),
            venue_details,
        ),
        Tool(
            "list_bookings",
            "The bookings of an account.",
            _object({"user": user}, ["user"]),
            list_bookings,
        ),
        Tool(
            "booking_details",
            "One booking: its owner, venue, party size, time, status and minutes until it.",
            _object({"booking_id": ID}, ["booking_id"]),
            booking_details,
        ),
        Tool(
            "book_table",
            "Book a table for tonight.",
            _object(
                {
                    "user": user,
                    "venue_id": ID,
                    "party_size": party,
                    "time": TIME,
                    "note": {"type": "string"},
                },
                ["user", "venue_id", "party_size", "time"],
            ),
            book_table,
            writes=True,
        ),
        Tool(
            "change_booking",
            "Change a booking's party size or time.",
            _object({"booking_id": ID, "party_size": party, "time": TIME}, ["booking_id"]),
            change_booking,
            writes=True,
        ),
        Tool(
            "cancel_booking",
            "Cancel a booking.",
            _object({"booking_id": ID}, ["booking_id"]),
            cancel_booking,
            writes=True,
        ),
        Tool(
            "start_navigation",
            "Start navigation to a venue.",
            _object({"venue_id": ID}, ["venue_id"]),
            start_navigation,
            writes=True,
        ),
    ]


WRITES = ("book_table", "change_booking", "cancel_booking", "start_navigation")
