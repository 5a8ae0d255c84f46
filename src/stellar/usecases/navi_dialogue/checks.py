"""The checks of a navi conversation, each turn against its plan's expectation.

Every check scores in [0, 1] (low is bad; below :data:`PASS` fails) and names the planned
turn it looked at:

* ``content``: the venue proposed at a turn that states the goal fits what that turn asked;
* ``retention``: it still fits what earlier turns asked and the system had understood;
* ``correction``: it does not have a value the user corrected away;
* ``reference``: "the second one", "take me there", "yes" and "another one" land on the
  venue they point at;
* ``goal``: the venue the conversation ends on fits the final goal.

A venue that misses an attribute the system had understood in an earlier turn (it listed
two or more venues at the turn that stated the attribute, all of them had it), or has a
corrected-away value (unless it is another kind of place altogether),
scores at most :data:`LAPSE_CAP`; other misses score as single-turn navi's f2 does, and are
``content`` failures: an attribute never shown understood is a misunderstanding, not a
lapse of memory.

The venue a turn proposes is the one its answer names first, else the first it returns
(as for single-turn navi); "the second one" counts in the venues the last answer that
offered some named, in the order it named them (data it returned but did not say is no list
anyone heard); after an answer that named one venue, an ordinal is ambiguous and is not
checked, and after one that offered none, "yes" or "take me there" point at nothing and are
not checked either.
Turns whose goal no venue in the database satisfies (rejected venues left out) are not
checked: there is no right answer to hold them to.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stellar.dialogue.plan import Act, Plan
from stellar.dialogue.runner import answers_by_turn
from stellar.usecases.navi.fitness import (
    constraint_distance,
    first_named,
    judged_venue,
    venue_score,
)
from stellar.usecases.navi.realiser_lexicon import ATTRIBUTES
from stellar.usecases.navi.request import VenueRequest
from stellar.usecases.navi_dialogue.plan import final_goal

PASS = 0.75  # the oracle's threshold, as for single-turn navi
LAPSE_CAP = 0.5
"""The most a venue scores that breaks an attribute stated in an earlier turn, or has a value
the user corrected away: the weighted agreement alone passes a venue that misses one of four
attributes (0.75), and a forgotten wish is the failure a conversation test is for."""
STATE_CHECKS = ("content", "retention", "correction")
Satisfiable = Callable[[VenueRequest, Collection[str]], bool]
"""Whether some venue satisfies a request, the venues of the given names left out."""
CONVERSATION_CHECKS = ("reference", "goal")


@dataclass(frozen=True)
class Check:
    """One check of one planned turn."""

    check: str
    turn: int
    act: str
    score: float
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "turn": self.turn + 1,  # from 1, as the reason and the report count
            "act": self.act,
            "score": round(self.score, 4),
            "note": self.note,
        }


def request_of(constraints: Mapping[str, Any]) -> VenueRequest:
    return VenueRequest.from_features({**dict.fromkeys(ATTRIBUTES, "none"), **constraints})


def venues(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, dict):
        data = data.get("pois")
    return [p for p in data or [] if isinstance(p, dict)] if isinstance(data, list) else []


def _same(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    if a is None or b is None:
        return False
    if a.get("id") is not None and b.get("id") is not None:
        return a["id"] == b["id"]
    return a.get("name") == b.get("name")


def named(answer: str, pois: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The venues ``answer`` names, in the order it names them; a name found only inside a
    longer one ("Da Nang" in "Da Nang Hafenviertel") is not named."""
    text, spans = answer.lower(), []
    for poi in pois:
        name = str(poi.get("name") or "").lower()
        start = text.find(name) if name else -1
        if start >= 0:
            spans.append((start, start + len(name), dict(poi)))
    inside = [
        any(a <= start and end <= b and (a, b) != (start, end) for a, b, _ in spans)
        for start, end, _ in spans
    ]
    found = [span for span, within in zip(spans, inside, strict=True) if not within]
    return [poi for _, _, poi in sorted(found, key=lambda span: span[0])]


def proposed(answer: str, pois: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    venue = judged_venue(answer, pois)
    return None if venue is None else dict(pois[venue.index])


def check_conversation(plan: Plan, data: Any, satisfiable: Satisfiable) -> list[Check]:
    """Every check of the conversation (``data``: the runner's exchanges)."""
    return _Checker(plan, satisfiable).run(answers_by_turn(data))


class _Checker:
    def __init__(self, plan: Plan, satisfiable: Satisfiable) -> None:
        self.plan, self.satisfiable = plan, satisfiable
        self.checks: list[Check] = []
        self.offered: list[dict[str, Any]] = []  # the venues the last answer named
        self.current: dict[str, Any] | None = None  # the venue proposed last
        self.understood: set[tuple[str, int]] = set()  # (attribute, turn that stated it)
        self.rejected: list[str] = []  # names of the venues the user turned down

    def run(self, answers: Mapping[int, Mapping[str, Any]]) -> list[Check]:
        for index, turn in enumerate(self.plan.turns):
            exchange = answers.get(index)
            if exchange is None:  # the conversation ended before this turn
                break
            pois, answer = venues(exchange["data"]), exchange["answer"]
            self._turn(index, turn.act, turn.expect, answer, pois)
            if turn.act is not Act.DETOUR:  # an answer without venues proposes nothing:
                self.current, self.offered = proposed(answer, pois), named(answer, pois)
        if answers:
            self._goal(max(answers))
        return self.checks

    def _turn(
        self,
        index: int,
        act: Act,
        expect: Mapping[str, Any],
        answer: str,
        pois: list[dict[str, Any]],
    ) -> None:
        here = proposed(answer, pois)
        referent = expect.get("referent", {})
        if "ordinal" in referent and len(self.offered) > 1:  # after one venue: ambiguous
            target = _ordinal(self.offered, referent["ordinal"])
            if target is not None:
                self.checks.append(_reference(index, act, target, answer, here, "the venue picked"))
        elif referent.get("proposed") and self.current is not None:
            self.checks.append(
                _reference(index, act, self.current, answer, here, "the venue proposed")
            )
        if expect.get("other_than_proposed") and self.current is not None:
            if _same(here, self.current):
                self.checks.append(
                    Check("reference", index, str(act), 0.0, "proposed the rejected venue again")
                )
            self.rejected.append(str(self.current.get("name")))
        if "constraints" in expect:
            self._state(index, act, expect, answer, pois)

    def _state(
        self,
        index: int,
        act: Act,
        expect: Mapping[str, Any],
        answer: str,
        pois: list[dict[str, Any]],
    ) -> None:
        """The content, retention and correction checks of a turn that states the goal."""
        request = request_of(expect["constraints"])
        stated, superseded = expect.get("stated", {}), expect.get("superseded", {})
        if not self.satisfiable(request, self.rejected):
            return
        venue = proposed(answer, pois)
        if venue is None:  # what it missed, this turn or earlier, it does not say
            self.checks.append(
                Check("content", index, str(act), 0.0, "no venue offered though some fit")
            )
            return
        if len(pois) > 1:  # a list, all of whose venues have it: understood, not luck
            missed_by_any = {name for poi in pois for name in _missed(request, poi)}
            self.understood.update(
                (name, index)
                for name, turn in stated.items()
                if turn == index and name not in missed_by_any
            )

        score, missed, name = (
            venue_score(request, venue),
            _missed(request, venue),
            venue.get("name"),
        )
        old = [n for n in missed if any(_has(venue, n, value) for value in superseded.get(n, []))]
        forgotten = [
            n for n in missed if stated.get(n, index) < index and (n, stated[n]) in self.understood
        ]
        if "category" in missed:  # another kind of place: a lapse only if it was understood
            forgotten, old = [n for n in forgotten if n == "category"], []
        if old:  # a lapse of state fails whatever else the venue matches
            note = f"{old[0]} still {venue.get(old[0])!r} after the correction"
            check = Check("correction", index, str(act), min(score, LAPSE_CAP), note)
        elif forgotten:
            n = forgotten[0]
            note = f"{n} stated at turn {stated[n] + 1} (understood then) not honoured by {name!r}"
            check = Check("retention", index, str(act), min(score, LAPSE_CAP), note)
        else:
            note = f"{name!r} misses {', '.join(missed)}" if missed else f"{name!r} fits"
            check = Check("content", index, str(act), score, note)
        self.checks.append(check)

    def _goal(self, last: int) -> None:
        goal = final_goal(self.plan)
        if not goal or not self.satisfiable(request_of(goal), self.rejected):
            return
        if self.current is None:
            self.checks.append(Check("goal", last, "end", 0.0, "no venue proposed though some fit"))
            return
        missed = _missed(request_of(goal), self.current)
        note = f"ends on {self.current.get('name')!r}" + (
            f", missing {', '.join(missed)}" if missed else ""
        )
        score = venue_score(request_of(goal), self.current)
        self.checks.append(Check("goal", last, "end", score, note))


def _ordinal(offered: list[dict[str, Any]], ordinal: str) -> dict[str, Any] | None:
    position = {"first": 0, "second": 1, "last": len(offered) - 1}[ordinal]
    return offered[position] if position < len(offered) else None


def _reference(
    index: int,
    act: str,
    target: Mapping[str, Any],
    answer: str,
    here: Mapping[str, Any] | None,
    what: str,
) -> Check:
    """Pass when the answer's venue is ``target``, or it returns none but names ``target``."""
    named = here is None and first_named(answer, [target]) is not None
    if _same(here, target) or named:
        return Check("reference", index, act, 1.0, f"{what}: {target.get('name')!r}")
    got = here.get("name") if here else None
    return Check("reference", index, act, 0.0, f"{what} was {target.get('name')!r}, got {got!r}")


def _missed(request: VenueRequest, venue: Mapping[str, Any]) -> list[str]:
    """The attributes of ``request`` that ``venue`` does not satisfy."""
    names = []
    for name, want in request.to_dict().items():
        key = "rating" if name == "min_rating" else name
        if constraint_distance(key, want, venue.get(key)) > 0:
            names.append(key)
    return names


def _has(venue: Mapping[str, Any], name: str, value: Any) -> bool:
    """Whether ``venue`` has the attribute value ``value`` (a payment among its methods)."""
    have = venue.get(name)
    if name == "payment":
        return isinstance(have, list) and value in have
    if name == "rating":
        return have is not None and float(have) >= float(value)
    return have == value
