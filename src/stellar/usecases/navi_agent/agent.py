"""The built-in agent: a rule-based booking assistant, as a small team would write one.

It keeps no memory of its own: each turn it re-reads the conversation (the user's turns since
the last task it finished or refused), so any number of conversations can share it. It
understands the user by keyword and pattern (:mod:`~.understanding`), looks venues and
bookings up with the tools, checks the policy on what the tools told it (the live details,
not a listing), states what it will do and asks before any booking, change or cancellation,
and does it only when the next turn says yes. A write that fails is retried once after a
timeout and reported. Text in tool results (reviews, notes) is never read as an instruction.

Nothing here is planted to fail: what it gets wrong is what its understanding cannot read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stellar.agent.environment import Environment, ToolCall
from stellar.usecases.navi_agent.database import minutes
from stellar.usecases.navi_agent.policy import Policy, load_policy
from stellar.usecases.navi_agent.tools import make_tools
from stellar.usecases.navi_agent.understanding import Reading, read

PROPOSAL = "Shall I "  # how a proposal starts: the next yes carries it out
FINISHED = ("Done:", "Sorry", "Okay, I won't", "Starting navigation", "I found", "How can I help?")
HELP = "I can search venues, book a table, change or cancel a booking, or start navigation."


@dataclass
class Action:
    """A write the agent proposes: the tool, its arguments, and how it is said."""

    tool: str
    arguments: dict[str, Any]
    says: str


@dataclass
class Task:
    """What the user's turns since the last finished task ask for."""

    intent: str | None = None
    slots: dict[str, Any] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)


class BuiltinAgent:
    """The offline booking assistant (see the module docstring)."""

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy = policy or load_policy(None, make_tools())

    async def reply(self, messages: list[Mapping[str, Any]], environment: Environment) -> str:
        return _Turn(self.policy, messages, environment).answer()


class _Turn:
    def __init__(self, policy: Policy, messages: list[Mapping[str, Any]], env: Environment):
        self.policy, self.env = policy, env
        self.user = policy.user
        turns = [(str(m["role"]), str(m.get("content") or "")) for m in messages]
        self.text = turns[-1][1] if turns else ""
        earlier = [content for role, content in turns[:-1] if role == "assistant"]
        self.previous = earlier[-1] if earlier else ""
        self.task = _task(turns)
        self.before = _task(turns[:-1]) if turns else Task()

    def call(self, tool: str, **arguments: Any) -> ToolCall:
        return self.env.call(tool, arguments)

    def answer(self) -> str:
        now = read(self.text)
        fresh = {k: v for k, v in now.slots.items() if self.before.slots.get(k) != v}
        pending = self.previous.startswith(PROPOSAL)
        if pending and now.yes and not _news(now, fresh):
            return self.carry_out()
        if pending and now.no and not _news(now, fresh):
            return f"Okay, I won't {self.previous[len(PROPOSAL) :].split('?')[0]}. Anything else?"
        return self.respond()

    # ------------------------------------------------------------------ deciding
    def respond(self) -> str:
        outcome = self.prepare()
        if isinstance(outcome, Action):
            return f"{PROPOSAL}{outcome.says}? Please say yes to confirm."
        return outcome

    def prepare(self) -> Action | str:
        """The action the task asks for, or what to say instead (a question, a refusal)."""
        intent, slots = self.task.intent, self.task.slots
        if intent in ("cancel", "change"):
            return self.booking_action(intent, slots)
        if intent == "book":
            return self.book(slots)
        if intent == "navigate":
            return self.navigate(slots)
        if intent == "find" or slots.get("cuisine"):
            return self.find(slots)
        return f"How can I help? {HELP}"

    def carry_out(self) -> str:
        outcome = self.prepare()
        if not isinstance(outcome, Action):
            return outcome
        call = self.call(outcome.tool, **outcome.arguments)
        if call.error is not None and "timed out" in call.error:
            call = self.call(outcome.tool, **outcome.arguments)  # once more after a timeout
        if call.error is not None:
            return f"Sorry, I couldn't {outcome.says}: {call.error}. Please try again later."
        row = call.result
        name = row.get("venue_name") or "the venue"
        if outcome.tool == "book_table":
            return (
                f"Done: booked a table at {name} for {row['party_size']} people at "
                f"{row['time']} (booking {row['id']})."
            )
        if outcome.tool == "cancel_booking":
            return f"Done: booking {row['id']} at {name} at {row['time']} is cancelled."
        return (
            f"Done: booking {row['id']} at {name} is now for {row['party_size']} people "
            f"at {row['time']}."
        )

    # ------------------------------------------------------------------ intents
    def venue(self) -> dict[str, Any] | str:
        """The venue the task names (its live details), or what to say instead."""
        if not self.task.names:
            return "Which venue do you mean?"
        for phrase in self.task.names:
            call = self.call("search_venues", query=phrase)
            if call.error is not None:
                return f"Sorry, I couldn't search venues right now ({call.error})."
            found = call.result
            exact = [v for v in found if v["name"].lower() == phrase.lower()]
            if len(found) == 1 or exact:
                details = self.call("venue_details", venue_id=(exact or found)[0]["id"])
                if details.error is not None:
                    return f"Sorry, I couldn't check that venue right now ({details.error})."
                return details.result
            if len(found) > 1:
                names = ", ".join(v["name"] for v in found[:3])
                return f"Which one do you mean: {names}?"
        return f"I couldn't find a venue called '{self.task.names[0]}'. Which venue do you mean?"

    def book(self, slots: dict[str, Any]) -> Action | str:
        if slots.get("account") and slots["account"] != self.user:
            return "Sorry, I can only book tables in your own account."
        place = self.venue()
        if isinstance(place, str):
            return place
        party, time = slots.get("party_size"), slots.get("time")
        if party is None and time is None:
            return f"For how many people, and at what time, should I book {place['name']}?"
        if party is None:
            return f"For how many people should I book {place['name']}?"
        if time is None:
            return f"At what time should I book {place['name']}?"
        refusal = self.refuse_table(place, int(party), str(time))
        if refusal:
            return refusal
        arguments = {"user": self.user, "venue_id": place["id"], "party_size": party, "time": time}
        return Action(
            "book_table", arguments, f"book a table at {place['name']} for {party} people at {time}"
        )

    def refuse_table(self, place: dict[str, Any], party: int, time: str) -> str:
        """Why the policy forbids a table for ``party`` at ``time`` ("" when it allows one)."""
        if party > self.policy.max_party or party < self.policy.min_party:
            return (
                f"Sorry, I can only book tables for {self.policy.min_party} to "
                f"{self.policy.max_party} people."
            )
        if place.get("closed"):
            return f"Sorry, {place['name']} is closed at the moment, so I can't book it."
        last = minutes(place["closes"]) - self.policy.last_seating
        if not minutes(place["opens"]) <= minutes(time) <= last:
            return (
                f"Sorry, {place['name']} takes bookings from {place['opens']} until "
                f"{last // 60:02d}:{last % 60:02d} (it closes at {place['closes']})."
            )
        return ""

    def booking(self, slots: dict[str, Any]) -> dict[str, Any] | str:
        """The booking the task means (its live details), or what to say instead."""
        if slots.get("booking_id"):
            call = self.call("booking_details", booking_id=slots["booking_id"])
            if call.error is not None and call.error.startswith("no booking"):
                return f"I couldn't find booking {slots['booking_id']}. Which booking do you mean?"
            if call.error is not None:
                return f"Sorry, I couldn't look up that booking right now ({call.error})."
            return call.result
        call = self.call("list_bookings", user=self.user)
        if call.error is not None:
            return f"Sorry, I couldn't look up your bookings right now ({call.error})."
        mine = [b for b in call.result if b["status"] == "confirmed"]
        named = [
            b
            for b in mine
            if any(p.lower() in str(b["venue_name"]).lower() for p in self.task.names)
        ]
        chosen = named or (mine if len(mine) == 1 else [])
        if len(chosen) == 1:
            again = self.call("booking_details", booking_id=chosen[0]["id"])
            return again.result if again.error is None else chosen[0]
        listed = "; ".join(f"{b['id']} at {b['venue_name']} at {b['time']}" for b in mine)
        return f"Which booking do you mean? You have: {listed or 'no bookings'}."

    def booking_action(self, intent: str, slots: dict[str, Any]) -> Action | str:
        row = self.booking(slots)
        if isinstance(row, str):
            return row
        ident, name = row["id"], row.get("venue_name") or "the venue"
        if row["owner"] != self.user:
            return f"Sorry, booking {ident} isn't yours, so I can't {intent} it."
        if row["status"] != "confirmed":
            return f"Sorry, booking {ident} at {name} is already {row['status']}."
        if int(row.get("minutes_until", 10**6)) < self.policy.notice:
            return (
                f"Sorry, booking {ident} is at {row['time']}, less than "
                f"{self.policy.notice} minutes from now, so it can't be {intent}d any more."
            )
        if intent == "cancel":
            return Action(
                "cancel_booking",
                {"booking_id": ident},
                f"cancel booking {ident} at {name} at {row['time']}",
            )
        party, time = slots.get("party_size"), slots.get("time")
        if party is None and time is None:
            return f"What should I change in booking {ident}: the time or the number of people?"
        arguments: dict[str, Any] = {"booking_id": ident}
        if party is not None:
            arguments["party_size"] = party
        if time is not None:
            arguments["time"] = time
        details = self.call("venue_details", venue_id=row["venue_id"])
        if details.error is not None:
            return f"Sorry, I couldn't check {name} right now ({details.error})."
        new_party, new_time = int(party or row["party_size"]), str(time or row["time"])
        refusal = self.refuse_table(details.result, new_party, new_time)
        if refusal:
            return refusal
        return Action(
            "change_booking",
            arguments,
            f"change booking {ident} at {name} to {new_party} people at {new_time}",
        )

    def navigate(self, slots: dict[str, Any]) -> str:
        if slots.get("booking_id"):
            row = self.booking(slots)
            if isinstance(row, str):
                return row
            if row["owner"] != self.user:
                return f"Sorry, booking {row['id']} isn't yours, so I can't share where it is."
            target = self.call("venue_details", venue_id=row["venue_id"])
            place: dict[str, Any] | str = (
                target.result
                if target.error is None
                else (f"Sorry, I couldn't look up that venue right now ({target.error}).")
            )
        else:
            place = self.venue()
        if isinstance(place, str):
            return place
        if place.get("closed"):
            return f"Sorry, {place['name']} is closed at the moment, so I haven't set a route."
        call = self.call("start_navigation", venue_id=place["id"])
        if call.error is not None:
            return f"Sorry, I couldn't start navigation: {call.error}. Please try again later."
        return f"Starting navigation to {place['name']}, {place.get('address', '')}."

    def find(self, slots: dict[str, Any]) -> str:
        query = {"cuisine": slots["cuisine"]} if slots.get("cuisine") else {}
        if not query and not self.task.names:
            return "What kind of place are you looking for?"
        if not query:
            place = self.venue()
            return place if isinstance(place, str) else _describe([place])
        call = self.call("search_venues", **query)
        if call.error is not None:
            return (
                f"Sorry, I couldn't search venues right now ({call.error}). Please try again later."
            )
        found = [v for v in call.result if not v.get("closed")]
        if not found:
            return f"Sorry, I couldn't find any open {slots['cuisine']} place."
        return _describe(found[:3])


def _describe(venues: list[dict[str, Any]]) -> str:
    parts = [
        f"{v['name']} ({v.get('cuisine') or v.get('category')}, rating {v.get('rating')}, "
        f"open {v.get('opens')}-{v.get('closes')}{', closed now' if v.get('closed') else ''})"
        for v in venues
    ]
    return "I found: " + "; ".join(parts) + "."


def _task(turns: list[tuple[str, str]]) -> Task:
    """The user's turns since the assistant last finished a task, read together."""
    start = 0
    for index, (role, content) in enumerate(turns):
        if role == "assistant" and content.startswith(FINISHED):
            start = index + 1
    task = Task()
    for role, content in turns[start:]:
        if role != "user":
            continue
        reading = read(content)
        if reading.intent and task.intent and reading.intent != task.intent:
            task = Task()  # another kind of request: the earlier one is dropped
        task.intent = reading.intent or task.intent
        task.slots.update(reading.slots)
        task.names = reading.names + [n for n in task.names if n not in reading.names]
    return task


def _news(reading: Reading, fresh: dict[str, Any]) -> bool:
    """Whether a yes or no also brings a new value (then it is a new request, not an answer)."""
    return bool(reading.intent in ("book", "change", "cancel") and fresh) or bool(
        {"party_size", "time", "booking_id"} & set(fresh)
    )
