"""The checks of a navi conversation, each turn against its plan's expectation.

Every check scores in [0, 1] (low is bad; below :data:`PASS` fails) and names the planned
turn it looked at:

* ``content``: the venue proposed at a turn that states the goal fits what that turn asked;
* ``retention``: it still fits what earlier turns asked (attributes stated before this turn),
  and a turn after the request still gets venues when some fit;
* ``correction``: it does not have a value the user corrected away;
* ``reference``: "the second one", "take me there", "yes" and "another one" land on the
  venue they point at;
* ``goal``: the venue the conversation ends on fits the final goal.

A venue that misses an attribute understood in an earlier turn (the venue proposed at the
turn that stated it, if any, had it), or has a corrected-away value, scores at most
:data:`LAPSE_CAP`; other misses score as single-turn navi's f2 does.

The venue a turn proposes is the one its answer names first, else the first it returns
(as for single-turn navi). Turns whose goal no venue in the database satisfies are not
checked: there is no right answer to hold them to.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stellar.dialogue.plan import Act, Plan
from stellar.dialogue.runner import answers_by_turn
from stellar.usecases.navi.fitness import (
    constraint_distance,
    first_named,
    judged_venue,
    venue_score,
    wrong_kind,
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
            "turn": self.turn,
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


def proposed(answer: str, pois: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    venue = judged_venue(answer, pois)
    return None if venue is None else dict(pois[venue.index])


def check_conversation(
    plan: Plan, data: Any, satisfiable: Callable[[VenueRequest], bool]
) -> list[Check]:
    """Every check of the conversation (``data``: the runner's exchanges)."""
    answers = answers_by_turn(data)
    checks: list[Check] = []
    offered: list[dict[str, Any]] = []  # the last list of venues the goal's turns got
    current: dict[str, Any] | None = None  # the venue proposed last
    misread: set[tuple[str, int]] = set()  # (attribute, turn) the turn stating it missed
    for index, turn in enumerate(plan.turns):
        exchange = answers.get(index)
        if exchange is None:  # the conversation ended before this turn
            break
        pois, answer = venues(exchange["data"]), exchange["answer"]
        here = proposed(answer, pois)
        expect, act = turn.expect, str(turn.act)
        referent = expect.get("referent", {})
        if "ordinal" in referent and offered:
            target = _ordinal(offered, referent["ordinal"])
            if target is not None:
                checks.append(_reference(index, act, target, answer, here, "the venue picked"))
        elif referent.get("proposed") and current is not None:
            checks.append(_reference(index, act, current, answer, here, "the venue proposed"))
        if expect.get("other_than_proposed") and current is not None and _same(here, current):
            checks.append(Check("reference", index, act, 0.0, "proposed the rejected venue again"))
        if "constraints" in expect:
            checks += _state(index, turn.act, expect, answer, pois, satisfiable, misread)
        if pois and turn.act is not Act.DETOUR:
            offered, current = pois, here
    goal = final_goal(plan)
    if goal and satisfiable(request_of(goal)) and answers:
        last = max(answers)
        if current is None:
            checks.append(Check("goal", last, "end", 0.0, "no venue proposed though some fit"))
        else:
            missed = _missed(request_of(goal), current)
            note = f"ends on {current.get('name')!r}" + (
                f", missing {', '.join(missed)}" if missed else ""
            )
            checks.append(Check("goal", last, "end", venue_score(request_of(goal), current), note))
    return checks


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


def _state(
    index: int,
    act: Act,
    expect: Mapping[str, Any],
    answer: str,
    pois: Sequence[Mapping[str, Any]],
    satisfiable: Callable[[VenueRequest], bool],
    misread: set[tuple[str, int]],
) -> list[Check]:
    """The content, retention and correction checks of a turn that states the goal.

    An attribute the venue misses at the very turn that stated it was misread, not
    forgotten (``misread`` collects them): later misses of it are content failures too."""
    request = request_of(expect["constraints"])
    stated, superseded = expect.get("stated", {}), expect.get("superseded", {})
    venue = proposed(answer, pois)
    if not satisfiable(request):  # no right answer; a venue of another kind was still misread
        kinds = wrong_kind(request, venue) if venue is not None else []
        misread.update((name, index) for name in kinds if stated.get(name) == index)
        return []
    if venue is None:
        misread.update((name, turn) for name, turn in stated.items() if turn == index)
        kind = "content" if act in (Act.REQUEST, Act.DETOUR) else "retention"
        return [Check(kind, index, str(act), 0.0, "no venue offered though some fit")]
    score = venue_score(request, venue)
    missed = _missed(request, venue)
    misread.update((name, index) for name in missed if stated.get(name) == index)
    old = [n for n in missed if any(_has(venue, n, value) for value in superseded.get(n, []))]
    earlier = [n for n in missed if stated.get(n, index) < index and (n, stated[n]) not in misread]
    name = venue.get("name")
    if old:  # a lapse of state fails whatever else the venue matches
        note = f"{old[0]} still {venue.get(old[0])!r} after the correction"
        return [Check("correction", index, str(act), min(score, LAPSE_CAP), note)]
    if earlier:
        note = f"{earlier[0]} stated at turn {stated[earlier[0]] + 1} not honoured by {name!r}"
        return [Check("retention", index, str(act), min(score, LAPSE_CAP), note)]
    note = f"{name!r} misses {', '.join(missed)}" if missed else f"{name!r} fits"
    return [Check("content", index, str(act), score, note)]


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
