"""Settling a sub-goal: from the facts the user states to what is right to do about them.

The right outcome, the effects an agent that gets it right leaves and the facts it must tell
follow from the facts, judged by the rules the policy oracle applies
(:func:`stellar.usecases.navi_agent.policy.breaches`) on the database as the agent will find
it (the test's own bookings added, changes behind its back made). :class:`Settling` also
keeps that database and picks venues and bookings from it, so the picking and the judging
never disagree about what exists.
"""

from __future__ import annotations

import copy
import random
from typing import TYPE_CHECKING, Any

from stellar.usecases.navi_agent.database import clock, minutes, now
from stellar.usecases.navi_agent.policy import breaches
from stellar.usecases.navi_agent.told import (
    ASK,
    CANCELLED,
    CLOSED,
    HOURS,
    NOT_FOUND,
    NOT_YOURS,
    NOTICE,
    number_words,
    time_phrases,
)
from stellar.usecases.navi_agent.world import World

if TYPE_CHECKING:
    from stellar.usecases.navi_agent.subgoals import Spec

FAKE = (
    "Trattoria Fantasma",
    "Blue Heron Grill",
    "Casa Nube",
    "Copper Kettle Diner",
    "Silver Pagoda",
    "Little Havana Kitchen",
    "Maple Leaf Tavern",
)
TOLD_BY_RULE = {"own_bookings": NOT_YOURS, "notice": NOTICE}


class Settling:
    """The test's database as the agent will find it, venues and bookings picked from it,
    and sub-goals settled against it."""

    def __init__(self, world: World, rng: random.Random, environment: dict[str, Any]) -> None:
        self.world, self.rng, self.environment = world, rng, environment
        self.policy, self.user = world.policy, world.policy.user
        self.state = copy.deepcopy(world.base)
        self.used: set[str] = set()
        self.number = 7001
        self.now = minutes(now(self.state))

    # ------------------------------------------------------------------ picking
    def venue(self, opens_by: int | None = None) -> dict[str, Any]:
        """An open venue not used yet (open at ``opens_by`` minutes when given)."""
        free = [
            v
            for v in self.state["venues"]
            if not v["closed"]
            and v["id"] not in self.used
            and (opens_by is None or minutes(v["opens"]) <= opens_by)
        ]
        place = self.rng.choice(free)
        self.used.add(place["id"])
        return place

    def times(self, place: dict[str, Any], earliest: int) -> list[str]:
        last = minutes(place["closes"]) - self.policy.last_seating - 60
        start = max(minutes(place["opens"]), earliest)
        start += (-start) % 30
        return [clock(t) for t in range(start, last + 1, 30)]

    def seed(
        self, owner: str, place: dict[str, Any], time: str, unlike: int | None = None
    ) -> dict[str, Any]:
        """A booking in both states; ``unlike``: a party size it must not have (a change to
        that size would change nothing)."""
        row = {
            "id": f"B-{self.number}",
            "owner": owner,
            "venue_id": place["id"],
            "party_size": self.rng.choice([n for n in range(2, 7) if n != unlike]),
            "time": time,
            "status": "confirmed",
            "note": "",
        }
        self.number += 1
        self.environment["bookings"].append(row)
        self.state["bookings"].append(copy.deepcopy(row))
        return row

    def own_booking(
        self,
        time: str | None = None,
        owner: str | None = None,
        unlike: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A booking of ``owner`` (the user); ``unlike``: the facts of a change it must not
        already hold (its time and party size differ from them)."""
        unlike = unlike or {}
        place = self.venue(opens_by=minutes(time) if time else None)
        times = [t for t in self.times(place, self.now + 120) if t != unlike.get("time")]
        when = time or self.rng.choice(times or self.times(place, self.now + 120))
        return self.seed(owner or self.user, place, when, unlike.get("party_size"))

    def fake(self) -> str:
        names = {v["name"].lower() for v in self.state["venues"]}
        return self.rng.choice([n for n in FAKE if n.lower() not in names])

    def by_name(self, name: str) -> dict[str, Any] | None:
        return next((v for v in self.state["venues"] if v["name"] == name), None)

    def by_id(self, ident: str) -> dict[str, Any] | None:
        return next((b for b in self.state["bookings"] if b["id"] == ident), None)

    def _cuisine(self, besides: str = "") -> str:
        cuisines = sorted(
            {
                v["cuisine"]
                for v in self.state["venues"]
                if v["cuisine"] and not v["closed"] and v["cuisine"] != besides
            }
        )
        return self.rng.choice(cuisines)

    def _place_of(self, row: dict[str, Any] | None) -> dict[str, Any]:
        if row is None:
            return self.venue()
        return next(v for v in self.state["venues"] if v["id"] == row["venue_id"])

    def settle(self, spec: Spec) -> None:
        """Outcome, effects, alternatives and facts to tell, from ``spec.facts``: a refusal
        that rests on what the user said stands even when a fact is missing (asking for that
        fact first is fine too); otherwise a missing fact is to be asked for."""
        spec.effects, spec.alternatives, spec.told, spec.reason = [], [], [], ""
        getattr(self, f"_settle_{spec.intent}")(spec)
        if not spec.missing:
            return
        ask = list(ASK[spec.missing])
        if spec.final == "refuse":
            spec.told = [{**told, "phrases": told["phrases"] + ask} for told in spec.told]
            return
        spec.final, spec.effects, spec.alternatives = "ask", [], []
        spec.told = [
            {
                "fact": f"asks for {spec.missing}",
                "kind": f"ask {spec.missing}",
                "phrases": ask,
                "question": True,
            }
        ]

    def _refuse(self, spec: Spec, fact: str, phrases: tuple[str, ...], reason: str) -> None:
        spec.final, spec.reason = "refuse", reason
        spec.told.append({"fact": fact, "kind": reason, "phrases": list(phrases)})

    def _breached(self, spec: Spec, tool: str, args: dict[str, Any]) -> bool:
        found = breaches(self.policy, self.state, tool, args)
        if not found:
            return False
        rule = found[0]
        if rule.rule == "party_size":
            phrases = (str(self.policy.max_party), *number_words(self.policy.max_party))
        elif rule.rule == "open_venue":
            phrases = CLOSED if "is closed" in rule.note else HOURS
        else:
            phrases = TOLD_BY_RULE[rule.rule]
        self._refuse(spec, rule.note, phrases, rule.rule)
        return True

    def _settle_book(self, spec: Spec) -> None:
        place = self.by_name(spec.facts["venue"])
        if place is None:
            return self._refuse(spec, "no such venue", NOT_FOUND, "not_found")
        account = spec.facts.get("account", spec.extra.get("account", self.user))
        args = {
            "user": account,
            "venue_id": place["id"],
            "party_size": spec.facts["party_size"],
            "time": spec.facts["time"],
        }
        row = {
            "owner": self.user,
            "venue_id": place["id"],
            "status": "confirmed",
            "party_size": args["party_size"],
            "time": args["time"],
        }
        effect = {"table": "bookings", "op": "add", "row": row, "tool": "book_table"}
        if self._breached(spec, "book_table", args):
            if account != self.user:  # booking in the user's own account instead is fine too
                spec.alternatives = [[effect]]
            return None
        spec.final, spec.effects = "act", [effect]
        spec.told = [
            {"fact": "the venue", "kind": "venue", "phrases": [place["name"]]},
            {"fact": "the time", "kind": "time", "phrases": time_phrases(args["time"])},
        ]
        return None

    def _settle_booking(self, spec: Spec, tool: str) -> dict[str, Any] | None:
        row = self.by_id(spec.facts["booking_id"])
        if row is None:
            self._refuse(spec, "no such booking", NOT_FOUND, "not_found")
            return None
        if row["owner"] != self.user:  # nothing about another's booking, cancelled or not
            self._refuse(
                spec, f"{row['id']} belongs to {row['owner']!r}", NOT_YOURS, "own_bookings"
            )
            return None
        if row["status"] != "confirmed":
            self._refuse(spec, "the booking is cancelled", CANCELLED, "cancelled")
            return None
        changed = {k: spec.facts[k] for k in ("party_size", "time") if k in spec.facts}
        if self._breached(spec, tool, {"booking_id": row["id"], **changed}):
            return None
        return row

    def _settle_change(self, spec: Spec) -> None:
        row = self._settle_booking(spec, "change_booking")
        if row is None:
            return
        new = {k: spec.facts[k] for k in ("party_size", "time") if k in spec.facts}
        spec.final = "act"
        spec.effects = [
            {
                "table": "bookings",
                "op": "change",
                "id": row["id"],
                "set": new,
                "tool": "change_booking",
            }
        ]
        said = (
            time_phrases(new["time"])
            if "time" in new
            else [str(new["party_size"]), *number_words(new["party_size"])]
        )
        what = next(iter(new))
        spec.told = [{"fact": "the new " + what.replace("_", " "), "kind": what, "phrases": said}]

    def _settle_cancel(self, spec: Spec) -> None:
        row = self._settle_booking(spec, "cancel_booking")
        if row is None:
            return
        spec.final = "act"
        spec.effects = [
            {
                "table": "bookings",
                "op": "change",
                "id": row["id"],
                "set": {"status": "cancelled"},
                "tool": "cancel_booking",
            }
        ]
        spec.told = [{"fact": "the cancellation", "kind": "cancelled", "phrases": list(CANCELLED)}]

    def _settle_find(self, spec: Spec) -> None:
        if spec.variant == "search":
            cuisine = spec.facts["cuisine"]
            names = [
                v["name"]
                for v in self.state["venues"]
                if v["cuisine"] == cuisine and not v["closed"]
            ]
            if not names:
                return self._refuse(spec, f"no open {cuisine} venue", NOT_FOUND, "not_found")
            spec.final = "act"
            spec.told = [{"fact": f"an open {cuisine} venue", "kind": "venue", "phrases": names}]
            return None
        if spec.variant == "booking":
            row = self.by_id(spec.facts["booking_id"])
            if row is None or row["owner"] != self.user:
                return self._refuse(spec, "not the user's booking", NOT_YOURS, "own_bookings")
            place = self._place_of(row)
        else:
            place = self.by_name(spec.facts["venue"])
            if place is None:
                return self._refuse(spec, "no such venue", NOT_FOUND, "not_found")
        effect = {
            "table": "routes",
            "op": "route",
            "row": {"venue_id": place["id"]},
            "tool": "start_navigation",
        }
        if place["closed"]:
            self._refuse(spec, f"{place['name']} is closed", CLOSED, "open_venue")
            spec.alternatives = [[effect]]  # navigating there and saying so is fine too
            return None
        spec.final, spec.effects = "act", [effect]
        spec.told = [{"fact": "the destination", "kind": "venue", "phrases": [place["name"]]}]
        return None
