"""One sub-goal of a conversation: what it is about, and what an agent should make of it.

:class:`Context` picks a sub-goal's venue or booking from the features (an open venue, an
invented name, another user's booking; a time or party size inside, at or just outside the
policy), adds the bookings it needs to the test's database, and *settles* it
(:mod:`~.settling`: outcome, effects and facts to tell follow from the facts the user
states, judged by the rules the policy oracle applies); a change of mind or a tool
behaviour (:mod:`~.twists`) changes the facts or the database and settles again, so the goal
always follows from what the user said last and the database the agent meets.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from stellar.usecases.navi_agent.database import clock, minutes
from stellar.usecases.navi_agent.told import FAILED
from stellar.usecases.navi_agent.twists import Twists
from stellar.usecases.navi_agent.world import World

__all__ = ["FAILED", "Context", "Spec", "handler"]
WRITE_TOOL = {
    "book": "book_table",
    "change": "change_booking",
    "cancel": "cancel_booking",
    "find": "start_navigation",
}


@dataclass
class Spec:
    """A sub-goal: the facts the user states and what is right to do about them."""

    intent: str
    context: Context
    variant: str = ""  # find: venue, search or booking
    facts: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # said with the request only
    missing: str = ""
    contradict: dict[str, Any] = field(default_factory=dict)
    boundary: str = ""  # the dimension the policy boundary is on
    outcome: str = "act"  # the right response to the request as first made
    final: str = "act"  # ... and to the conversation as it ends
    effects: list[dict[str, Any]] = field(default_factory=list)
    alternatives: list[list[dict[str, Any]]] = field(default_factory=list)
    told: list[dict[str, Any]] = field(default_factory=list)
    mind: dict[str, Any] | None = None  # what a change of mind says ({}: "keep it")
    reason: str = ""  # why it is refused: a policy rule, not_found or cancelled
    said: dict[str, Any] = field(default_factory=dict)  # the facts as the request states them
    scope: dict[str, list[Any]] = field(default_factory=dict)  # what a perturbed write is about

    @property
    def write_tool(self) -> str:
        return "" if self.variant == "search" else WRITE_TOOL[self.intent]

    def change_of_mind(self) -> dict[str, Any] | None:
        return self.context.change_of_mind(self)

    @property
    def target(self) -> dict[str, Any]:
        """The arguments a write about this goal has (its booking, its venue); {} for a search."""
        if self.intent in ("change", "cancel"):
            return {"booking_id": self.facts["booking_id"]}
        if self.variant == "search":
            return {}
        if self.variant == "booking":
            row = self.context.by_id(self.facts["booking_id"])
            return {"venue_id": row["venue_id"]} if row else {"venue_id": "-"}
        place = self.context.by_name(self.facts.get("venue", ""))
        return {"venue_id": place["id"] if place else "-"}

    def record(self, first: int, last: int) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "variant": self.variant,
            "facts": dict(self.facts),
            "outcome": self.outcome,
            "final": self.final,
            "effects": self.effects,
            "alternatives": self.alternatives,
            "told": self.told,
            "mind": self.mind,
            "turns": [first, last],
        }


def handler(world: World, rng: random.Random, environment: dict[str, Any]) -> Context:
    return Context(world, rng, environment)


class Context(Twists):
    """Picks each sub-goal's venue or booking from the features and settles it."""

    # ------------------------------------------------------------------ sub-goals
    def spec(self, intent: str, features: dict[str, Any]) -> Spec:
        entity, boundary = features["entity"], features["policy_boundary"]
        spec = Spec(intent, self)
        getattr(self, f"_{intent}")(spec, entity, boundary)
        if features["information"] == "missing":
            spec.missing = self._missing(spec, entity, boundary)
        elif features["information"] == "contradictory":
            spec.contradict = self._contradict(spec)
        self.settle(spec)
        spec.outcome, spec.said = spec.final, dict(spec.facts)
        return spec

    def _book(self, spec: Spec, entity: str, boundary: str) -> None:
        place = self.venue()
        spec.boundary = self.rng.choice(("party_size", "time"))
        party, time = self.rng.randint(2, 6), self.rng.choice(self.times(place, self.now + 60))
        last = minutes(place["closes"]) - self.policy.last_seating
        if boundary != "inside" and spec.boundary == "party_size":
            party = self.policy.max_party + (boundary == "just_outside")
        elif boundary != "inside":
            time = clock(last + 30 * (boundary == "just_outside"))
        name = self.fake() if entity == "non_existing" else place["name"]
        spec.facts = {"venue": name, "party_size": party, "time": time}
        if entity == "someone_elses":
            spec.extra = {"account": f"user-{self.rng.randint(2, 9)}"}

    def _booking(self, spec: Spec, entity: str, boundary: str) -> dict[str, Any] | None:
        """The booking a change or cancellation is about (None: a made-up number)."""
        if entity == "non_existing":
            spec.facts["booking_id"] = f"B-{self.rng.randint(9100, 9899)}"
            return None
        time = None
        if spec.boundary == "notice" and boundary != "inside":
            time = clock(self.now + self.policy.notice - 30 * (boundary == "just_outside"))
        owner = f"user-{self.rng.randint(2, 9)}" if entity == "someone_elses" else None
        row = self.own_booking(time, owner)
        spec.facts["booking_id"] = row["id"]
        return row

    def _change(self, spec: Spec, entity: str, boundary: str) -> None:
        spec.boundary = self.rng.choice(("party_size", "time", "notice"))
        row = self._booking(spec, entity, boundary)
        place = self._place_of(row)
        if spec.boundary == "party_size" or (spec.boundary == "notice" and self.rng.random() < 0.5):
            party = self.rng.choice([n for n in range(2, 7) if not row or n != row["party_size"]])
            if spec.boundary == "party_size" and boundary != "inside":
                party = self.policy.max_party + (boundary == "just_outside")
            spec.facts["party_size"] = party
            return
        times = [t for t in self.times(place, self.now + 60) if not row or t != row["time"]]
        time = self.rng.choice(times)
        if spec.boundary == "time" and boundary != "inside":
            last = minutes(place["closes"]) - self.policy.last_seating
            time = clock(last + 30 * (boundary == "just_outside"))
        spec.facts["time"] = time

    def _cancel(self, spec: Spec, entity: str, boundary: str) -> None:
        spec.boundary = "notice"
        self._booking(spec, entity, boundary)

    def _find(self, spec: Spec, entity: str, boundary: str) -> None:
        if entity == "someone_elses":
            spec.variant = "booking"
            spec.facts["booking_id"] = self.own_booking(owner=f"user-{self.rng.randint(2, 9)}")[
                "id"
            ]
        elif entity == "non_existing":
            spec.variant, spec.facts["venue"] = "venue", self.fake()
        elif self.rng.random() < 0.5:
            spec.variant, spec.facts["venue"] = "venue", self.venue()["name"]
        else:
            spec.variant, spec.facts["cuisine"] = "search", self._cuisine()

    def _missing(self, spec: Spec, entity: str, boundary: str) -> str:
        """The fact the user never gives: not the one a refusal rests on (the made-up venue,
        the party over the limit), so the right response stays what the features say."""
        keep = set() if entity == "existing" else {"venue", "booking_id", "account"}
        if boundary != "inside":
            keep |= {spec.boundary, "booking_id"} if spec.boundary == "notice" else {spec.boundary}
        if spec.intent == "change" and boundary != "inside" and spec.boundary != "notice":
            keep = {"party_size", "time"}  # the booking stays unnamed, the value is said
        free = [name for name in spec.facts if name not in keep]
        return self.rng.choice(free) if free else ""

    def _contradict(self, spec: Spec) -> dict[str, Any]:
        """A second, different value of one fact said in the same request."""
        facts = spec.facts
        if "party_size" in facts:
            return {"party_size": facts["party_size"] + self.rng.choice((-1, 1, 2))}
        if "time" in facts:
            return {"time": clock(minutes(facts["time"]) + self.rng.choice((-60, 60)))}
        if "cuisine" in facts:
            return {"cuisine": self._cuisine(besides=facts["cuisine"])}
        others = [v for v in self.state["venues"] if v["name"] != facts.get("venue")]
        return {"address": self.rng.choice(others)["address"].split(",")[0]}
