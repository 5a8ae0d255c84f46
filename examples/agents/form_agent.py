"""A form-filling booking agent for ``navi-agent``, written as a Python function.

Each turn it re-reads the whole conversation: it replays the user's turns into a form
(intent, venue, booking, party size, time, account; a later value overrides an earlier one,
two values in one turn are asked about), starting a new form after a reply that closed a
task, or when the user asks for something else. Numbers and times are read by a small
parser ("7.30pm", "half past 7", "7ish", "19:30"); venues are found by searching each word
the user said and matching the names found against the user's words with ``difflib``. It
asks for one missing slot at a time, checks the policy on the live ``venue_details`` /
``booking_details`` before it proposes a write, and writes only on a yes to its proposal.
Reviews and notes in tool results are never read.

    stellar run navi-agent --option agent=python:examples.agents.form_agent:reply
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stellar.agent.python_agent import ToolCallError

USER, MIN_PARTY, MAX_PARTY, LAST_SEATING, NOTICE = "user-1", 1, 8, 60, 60  # policy.yaml
Tools = Mapping[str, Callable[..., Any]]
PROPOSE, CLOSE = "Shall I go ahead?", "Anything else?"  # a proposal, a finished task


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WORDS = "one two three four five six seven eight nine ten eleven twelve"
NUMBERS = {word: n for n, word in enumerate(_WORDS.split(), start=1)}
_H = r"(?<![:.])(?P<h>\d{1,2}|" + "|".join(NUMBERS) + ")"  # an hour or a party size
_HALF = r"(?P<half>am|pm|a\.m\.|p\.m\.)"
_PEOPLE = r"people|persons|guests|adults|ppl|pax|of us|us"
TIMES = [  # a time pattern and its minutes past the hour (None: the pattern says them)
    (rf"\b{_H}[:.](?P<min>\d{{2}})\s*{_HALF}?", None),
    (rf"\bhalf past {_H}\b", 30),
    (rf"\bquarter past {_H}\b", 15),
    (rf"\bquarter to {_H}\b", -15),
    (rf"\bhalf {_H}\b", 30),  # British: "half seven" is 7:30
    (rf"\b{_H}\s*{_HALF}", 0),
    (rf"\b{_H}\s*(?:o'?clock|ish)\b", 0),
    (rf"\b(?:at|around|about|by)\s+{_H}\b(?![:.]\d|\s*(?:am|pm|a\.m|p\.m|{_PEOPLE}))", 0),
    (r"\b(?P<h>noon|midday)\b", 0),
]
PARTIES = (
    rf"\b{_H}\s+(?:{_PEOPLE})\b",
    rf"\b(?:party|of|table for|for|we'll be|we are|we're)\s+{_H}\b"
    r"(?!\s*(?:[:.]\d|am\b|pm\b|a\.m|p\.m|o'?clock|ish))",
)
INTENTS = {  # the first intent whose cues a turn holds (a long cue misspelt too)
    "cancel": "cancel|call off|scrap",
    "change": "change|move|reschedule|modify|update",
    "navigate": "take me|navigate|directions|drive me|get me to|route",
    "book": "book|reserve|reservation|table",
    "find": "find|looking for|search|recommend|somewhere|places|any good|grab some|place to eat",
}
FILLERS = _words("uh um er hmm well so like oh basically i mean")
YES = _words("yes yeah yep yup sure ok okay confirm confirmed correct absolutely")
NO = _words("no nope nah stop wait keep")
STOP = _words(  # words of four letters or more not worth a venue search
    "please could would like book table reserve reservation tonight today people persons "
    "guests need hello good evening thank thanks much find place places somewhere restaurant "
    "food grab some around there here take navigate change move cancel booking make actually "
    "sorry meant instead let's also just quick hurry questions again simply yeah please "
    "proceed ahead right that's confirm asap want half past quarter looking where about what "
    + " ".join(NUMBERS)
)


@dataclass
class Form:
    """The slots a task has gathered from the user's turns."""

    intent: str | None = None
    booking_id: str | None = None
    party: int | None = None
    time: str | None = None
    account: str | None = None
    turns: list[str] = field(default_factory=list)
    conflicts: dict[str, list[Any]] = field(default_factory=dict)
    finished: str | None = None  # the intent of the task finished just before


@dataclass
class Action:
    """A write waiting for the user's yes."""

    tool: str
    arguments: dict[str, Any]
    says: str


def _number(word: str) -> int:
    return {"noon": 12, "midday": 12}.get(word) or NUMBERS.get(word) or int(word)


def read_times(text: str) -> list[str]:
    """Every time of day ``text`` states, in order, as ``HH:MM``; an hour said without am or
    pm is an evening one (the bookings are for tonight)."""
    found: list[tuple[int, str]] = []
    for pattern, past in TIMES:
        for m in re.finditer(pattern, text.lower()):
            hour, half = _number(m["h"]), (m.groupdict().get("half") or "").replace(".", "")
            mins = int(m["min"]) if past is None else past % 60
            hour -= past is not None and past < 0
            if (half == "pm" and hour < 12) or (not half and 1 <= hour < 12):
                hour += 12
            elif half == "am" and hour == 12:
                hour = 0
            if hour <= 23 and mins <= 59:
                found.append((m.start(), f"{hour:02d}:{mins:02d}"))
    return [time for _, time in sorted(found)]


def read_parties(text: str) -> list[int]:
    found = [(m.start(), m["h"]) for p in PARTIES for m in re.finditer(p, text.lower())]
    return [_number(word) for _, word in sorted(found)]


def read_intent(text: str) -> str | None:
    """The intent a turn's cues name; failing that, a cue of five letters or more misspelt
    (a phrase, such as "looking for", less so)."""
    low = text.lower()
    for intent, cues in INTENTS.items():
        if re.search(rf"\b(?:{cues})\b", low):
            return intent
    words = re.findall(r"[a-z']+", low)
    for intent, cues in INTENTS.items():
        for cue in (c for c in cues.split("|") if len(c) >= 5):
            size = len(cue.split())
            said = [" ".join(words[i : i + size]) for i in range(len(words))]
            said = [phrase for phrase in said if len(phrase) >= len(cue) - 1]
            if difflib.get_close_matches(cue, said, cutoff=0.75 if size == 1 else 0.85):
                return intent
    return None


def answer_kind(text: str) -> str:
    """'yes' or 'no' when the turn opens with one (after fillers; "yss" is a misspelt yes)."""
    words = [w for w in re.findall(r"[a-z']+", text.lower()) if w not in FILLERS]
    if not words:
        return ""
    if words[0] in NO or "keep it" in text.lower():
        return "no"
    typo = len(words[0]) == 3 and sum(a != b for a, b in zip(words[0], "yes", strict=True)) == 1
    if words[0] in YES or typo or " ".join(words[:2]) in ("go ahead", "do it", "please do"):
        return "yes"
    return ""


def absorb(form: Form, text: str) -> Form:
    """``form`` with a user turn read into it. A turn that makes a request starts a new form
    (a booking number with a new time or party size and no other cue is a change); a
    correction ("actually", "I meant") right after a finished task amends that task."""
    low = text.lower()
    ids = [f"B-{n}" for n in re.findall(r"\bb-?(\d{3,5})\b", low)]
    accounts = [f"user-{n}" for n in re.findall(r"\buser-(\d+)\b", low)]
    slots = {"party": read_parties(text), "time": read_times(text)}
    intent = read_intent(text)
    if not intent and ids and any(slots.values()) and form.intent != "change":
        intent = "change"
    if intent and answer_kind(text) != "yes":
        form = Form(intent)
    elif not form.intent and re.search(r"\b(actually|i meant|instead)\b", low):
        form.intent = form.finished
    form.turns.append(text)
    for slot, values in (*slots.items(), ("booking_id", ids[-1:]), ("account", accounts[-1:])):
        distinct = list(dict.fromkeys(values))
        if distinct:
            setattr(form, slot, distinct[0] if len(distinct) == 1 else None)
            form.conflicts.pop(slot, None)
            if len(distinct) > 1:
                form.conflicts[slot] = distinct
    return form


def reply(messages: list[dict[str, Any]], tools: Tools) -> str:
    """The agent's answer to the conversation so far (the user's turn last)."""
    form, previous = Form(), ""
    for message in messages[:-1]:
        content = str(message.get("content") or "")
        if message.get("role") == "user":
            form = absorb(form, content)
        elif message.get("role") == "assistant":
            previous = content
            form = Form(finished=form.intent) if content.endswith(CLOSE) else form
    last = str(messages[-1].get("content") or "") if messages else ""
    kind = answer_kind(last)
    if previous.endswith(PROPOSE) and kind == "no":
        what = previous.removeprefix("To confirm: I will ").removesuffix(f". {PROPOSE}")
        return f"Okay, I won't {what}; nothing has been changed. {CLOSE}"
    agent = _Agent(tools, absorb(form, last))
    try:
        outcome = agent.decide()
        if isinstance(outcome, str):
            return outcome
        if kind == "yes" and previous.startswith(f"To confirm: I will {outcome.says}."):
            return agent.carry_out(outcome)
        return f"To confirm: I will {outcome.says}. {PROPOSE}"
    except ToolCallError as error:
        name = getattr(error.call, "name", "a tool")
        return f"Sorry, {name} failed ({error}). Please try again later. {CLOSE}"


class _Agent:
    """One turn's work on a form: look things up, check the policy, decide."""

    def __init__(self, tools: Tools, form: Form) -> None:
        self.tools, self.form = tools, form
        self.searched: dict[str, list[dict[str, Any]]] = {}

    def search(self, word: str) -> list[dict[str, Any]]:
        if word not in self.searched:
            self.searched[word] = self.tools["search_venues"](query=word, limit=10)
        return self.searched[word]

    def found_in(self, text: str) -> list[dict[str, Any]]:
        words = {w for w in re.findall(r"[^\W\d_][\w'’&-]*", text.lower()) if len(w) >= 4}
        rows = [row for w in sorted(words - STOP) for row in self.search(w)]
        return list({row["id"]: row for row in rows}.values())

    def venues(self) -> list[dict[str, Any]]:
        """The venues the latest turn naming one names best (several: it is unclear)."""
        for text in reversed(self.form.turns):
            tokens = re.findall(r"[\w'’&-]+", text.lower())
            scored = []
            for row in self.found_in(text):
                name = row["name"].lower()
                size = len(name.split())
                windows = [" ".join(tokens[i : i + size]) for i in range(len(tokens))]
                best = difflib.get_close_matches(name, windows, n=1, cutoff=0.8)
                if best:
                    scored.append((difflib.SequenceMatcher(None, name, best[0]).ratio(), row))
            top = max((score for score, _ in scored), default=0)
            if scored:
                return [row for score, row in scored if score >= top - 0.02]
        return []

    def cuisine(self) -> str | None:
        for text in reversed(self.form.turns):
            low = text.lower()
            for row in self.found_in(text):
                if row.get("cuisine") and re.search(rf"\b{row['cuisine']}\b", low):
                    return str(row["cuisine"])
        return None

    def venue(self) -> dict[str, Any] | str:
        """The live details of the venue the form names, or a question."""
        found = self.venues()
        if len(found) > 1:
            return f"Which one do you mean: {' or '.join(v['name'] for v in found[:3])}?"
        if found:
            return self.tools["venue_details"](venue_id=found[0]["id"])
        if any(re.search(r"\b(?:at|to|called)\s+(?:the\s+)?[A-Z]", t) for t in self.form.turns):
            return "Sorry, I couldn't find that venue. Which venue do you mean?"
        return "Which venue would you like?"

    def decide(self) -> Action | str:
        """The write to propose, or what to say instead (a question, a refusal, an answer)."""
        form = self.form
        if form.intent == "book" and form.account and form.account != USER:
            return f"Sorry, I can only book tables in your own account ({USER})."
        if form.conflicts:
            slot, values = next(iter(form.conflicts.items()))
            ask = "How many people will you be" if slot == "party" else "Which time do you mean"
            return f"You said both {' and '.join(map(str, values))}. {ask}?"
        if form.intent == "book":
            return self.book()
        if form.intent in ("change", "cancel"):
            return self.alter(form.intent)
        if form.intent == "navigate":
            return self.navigate()
        if form.intent == "find":
            return self.find()
        return "How can I help? I can find venues, book, change or cancel a table, or navigate."

    def refuse_party(self) -> str:
        party = self.form.party
        if party is not None and not MIN_PARTY <= party <= MAX_PARTY:
            return f"Sorry, I can only book tables for {MIN_PARTY} to {MAX_PARTY} people."
        return ""

    def refuse_hours(self, place: dict[str, Any], time: str) -> str:
        if place.get("closed"):
            return f"Sorry, {place['name']} is closed at the moment, so I can't book it."
        last = _minutes(place["closes"]) - LAST_SEATING
        if not _minutes(place["opens"]) <= _minutes(time) <= last:
            return (
                f"Sorry, {place['name']} takes bookings from {place['opens']} until "
                f"{last // 60:02d}:{last % 60:02d} (it closes at {place['closes']})."
            )
        return ""

    def book(self) -> Action | str:
        form, place = self.form, self.venue()
        if isinstance(place, str):
            return place
        if refusal := self.refuse_party():
            return refusal
        if form.party is None:
            return f"How many people should I book {place['name']} for?"
        if form.time is None:
            return f"What time would you like the table at {place['name']}?"
        if refusal := self.refuse_hours(place, form.time):
            return refusal
        args = {"user": USER, "venue_id": place["id"], "party_size": form.party, "time": form.time}
        says = f"book a table at {place['name']} for {form.party} people at {form.time}"
        return Action("book_table", args, says)

    def booking(self) -> dict[str, Any] | str:
        """The live details of the booking the form names, or a question."""
        if not self.form.booking_id:
            mine = [b for b in self.tools["list_bookings"](user=USER) if b["status"] == "confirmed"]
            listed = "; ".join(f"{b['id']} at {b['venue_name']} at {b['time']}" for b in mine)
            return f"Which booking do you mean? You have: {listed or 'no bookings'}."
        try:
            return self.tools["booking_details"](booking_id=self.form.booking_id)
        except ToolCallError as error:
            if not str(error).startswith("no booking"):
                raise
            return f"Sorry, I couldn't find booking {self.form.booking_id}. Which booking?"

    def alter(self, intent: str) -> Action | str:
        row = self.booking()
        if isinstance(row, str):
            return row
        ident, name, form = row["id"], row.get("venue_name") or "the venue", self.form
        if row["owner"] != USER:
            return f"Sorry, booking {ident} isn't yours, so I can't {intent} it."
        if row["status"] != "confirmed":
            return f"Sorry, booking {ident} at {name} is already {row['status']}."
        if int(row["minutes_until"]) < NOTICE:
            soon = f"is in {row['minutes_until']} minutes"
            return f"Sorry, booking {ident} {soon}; I need {NOTICE} minutes' notice to {intent} it."
        if intent == "cancel":
            says = f"cancel booking {ident} at {name} at {row['time']}"
            return Action("cancel_booking", {"booking_id": ident}, says)
        if form.party is None and form.time is None:
            return f"What should I change in booking {ident}: the time or the number of people?"
        if refusal := self.refuse_party():
            return refusal
        party, time = form.party or row["party_size"], form.time or row["time"]
        place = self.tools["venue_details"](venue_id=row["venue_id"])
        if refusal := self.refuse_hours(place, time):
            return refusal
        asked = {"party_size": form.party, "time": form.time}
        args = {"booking_id": ident, **{k: v for k, v in asked.items() if v is not None}}
        says = f"change booking {ident} at {name} to {party} people at {time}"
        return Action("change_booking", args, says)

    def navigate(self) -> str:
        if self.form.booking_id:
            row = self.booking()
            if isinstance(row, str):
                return row
            if row["owner"] != USER:
                return f"Sorry, booking {row['id']} isn't yours, so I can't navigate there."
            place: dict[str, Any] | str = self.tools["venue_details"](venue_id=row["venue_id"])
        else:
            place = self.venue()
        if isinstance(place, str):
            return place
        if place.get("closed"):
            return f"Sorry, {place['name']} is closed at the moment, so I haven't set a route."
        route = self.tools["start_navigation"](venue_id=place["id"])
        return f"Navigating to {route['destination']}, {route['address']}. {CLOSE}"

    def find(self) -> str:
        cuisine = self.cuisine()
        if cuisine is None:
            place = self.venue()
            if isinstance(place, dict):
                return f"{_describe(place)}. {CLOSE}"
            return "What kind of food are you looking for?"
        listed = self.tools["search_venues"](cuisine=cuisine, limit=10)
        live = [self.tools["venue_details"](venue_id=v["id"]) for v in listed]
        open_now = [v for v in live if not v.get("closed")][:3]
        if not open_now:
            return f"Sorry, I couldn't find an open {cuisine} place. {CLOSE}"
        return f"Open {cuisine} places: " + "; ".join(map(_describe, open_now)) + f". {CLOSE}"

    def carry_out(self, action: Action) -> str:
        try:
            row = self.tools[action.tool](**action.arguments)
        except ToolCallError as error:
            return f"Sorry, I couldn't {action.says} ({error}). Nothing was changed. {CLOSE}"
        where = f"{row['id']} at {row.get('venue_name')}"
        if action.tool == "cancel_booking":
            return f"Done: booking {where} at {row['time']} is cancelled. {CLOSE}"
        done = f"for {row['party_size']} people at {row['time']}"
        return f"Done: booking {where} is {done}. {CLOSE}"


def _describe(place: dict[str, Any]) -> str:
    kind = place.get("cuisine") or place.get("category")
    return f"{place['name']} ({kind}, open {place['opens']}-{place['closes']})"


def _minutes(time: str) -> int:
    hours, _, mins = time.partition(":")
    return int(hours) * 60 + int(mins)
