"""The checks of a navi conversation, each turn against its plan's expectation.

Every check scores in [0, 1] (low is bad; below :data:`PASS` fails) and names the turn it
looked at as the transcript numbers it (every exchange, clarifying ones included; a
skipped turn takes no number), with the planned turn it belongs to:

* ``content``: the venue proposed at a turn that states the goal fits what that turn asked;
* ``retention``: it still fits what earlier turns asked and the system had understood;
* ``correction``: it does not have a value the user corrected away;
* ``reference``: "the second one", "take me there", "yes" are carried out on the venue
  they point at (navigation to it or a choice of it, read from the answer's words by
  :mod:`~.actions`; after "the second one" an answer naming that venue alone will do), and
  "another one" does not propose the rejected venue again;
* ``unasked``: an answer that starts navigation or takes a venue as chosen where the user
  asked for neither ("let me think for a second" read as "the second one") fails at that
  turn, whatever the turn was;
* ``goal``: the venue the conversation ends on fits the final goal.

A venue that misses an attribute the system had understood in an earlier turn (it listed
two or more venues at the turn that stated the attribute, all of them had it), or has a
corrected-away value (unless it is another kind of place altogether),
scores at most :data:`LAPSE_CAP`; other misses score as single-turn navi's f2 does, and are
``content`` failures: an attribute never shown understood is a misunderstanding, not a
lapse of memory.

The venue a turn proposes is the one its answer names first, else the first it returns
(as for single-turn navi); a venue navigated to or chosen becomes the proposed one. "The
second one" counts in the venues the last answer that offered some named, in the order it
named them (data it returned but did not say is no list anyone heard); after an answer that
named one venue, an ordinal is ambiguous and is not checked, and after one that offered
none, "yes" or "take me there" point at nothing and are not checked either (the runner
skips such turns: :mod:`stellar.dialogue.preconditions`).
Turns whose goal no venue in the database satisfies (rejected venues left out) are not
checked: there is no right answer to hold them to.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from stellar.dialogue.plan import Act, Plan, Turn
from stellar.dialogue.runner import exchanges_of, skipped_turns
from stellar.usecases.navi.fitness import constraint_distance, venue_score
from stellar.usecases.navi.request import VenueRequest
from stellar.usecases.navi_dialogue.actions import action_of, asked_for
from stellar.usecases.navi_dialogue.answers import named, proposed, request_of, same, venues
from stellar.usecases.navi_dialogue.plan import final_goal

__all__ = ["PASS", "Check", "check_conversation", "named", "request_of", "venues"]

PASS = 0.75  # the oracle's threshold, as for single-turn navi
LAPSE_CAP = 0.5
"""The most a venue scores that breaks an attribute stated in an earlier turn, or has a value
the user corrected away: the weighted agreement alone passes a venue that misses one of four
attributes (0.75), and a forgotten wish is the failure a conversation test is for."""
STATE_CHECKS = ("content", "retention", "correction")
Satisfiable = Callable[[VenueRequest, Collection[str]], bool]
"""Whether some venue satisfies a request, the venues of the given names left out."""
CONVERSATION_CHECKS = ("reference", "unasked", "goal")
ASKING = (Act.CHOOSE, Act.CONFIRM)  # the acts that ask the assistant to act on a venue


@dataclass(frozen=True)
class Check:
    """One check of one turn: ``turn`` counts the transcript's exchanges from 0 (clarifying
    ones included), ``planned`` the plan's turns (None: not known)."""

    check: str
    turn: int
    act: str
    score: float
    note: str
    planned: int | None = None

    def to_dict(self) -> dict[str, Any]:
        found = {
            "check": self.check,
            "turn": self.turn + 1,  # from 1, as the transcript, the reason and the report count
            "act": self.act,
            "score": round(self.score, 4),
            "note": self.note,
        }
        if self.planned is not None:
            found["planned_turn"] = self.planned + 1
        return found


def check_conversation(plan: Plan, data: Any, satisfiable: Satisfiable) -> list[Check]:
    """Every check of the conversation (``data``: the runner's exchanges)."""
    return _Checker(plan, satisfiable).run(exchanges_of(data), skipped_turns(data))


class _Checker:
    def __init__(self, plan: Plan, satisfiable: Satisfiable) -> None:
        self.plan, self.satisfiable = plan, satisfiable
        self.checks: list[Check] = []
        self.offered: list[dict[str, Any]] = []  # the venues the last answer named
        self.current: dict[str, Any] | None = None  # the venue proposed, navigated to, chosen
        self.understood: set[tuple[str, int]] = set()  # (attribute, planned turn stating it)
        self.rejected: list[str] = []  # names of the venues the user turned down
        self.said_at: dict[int, int] = {}  # planned turn -> its first exchange

    def run(self, exchanges: list[dict[str, Any]], skipped: list[dict[str, Any]]) -> list[Check]:
        positions: dict[int, list[int]] = {}
        for position, exchange in enumerate(exchanges):
            positions.setdefault(int(exchange["turn"]), []).append(position)
        self.said_at = {turn: found[0] for turn, found in positions.items()}
        not_sent = {int(skip["turn"]) for skip in skipped}
        for index, turn in enumerate(self.plan.turns):
            if index not in positions:
                if index in not_sent:  # its precondition failed: nothing to check
                    continue
                break  # the conversation ended before this turn
            for position in positions[index]:
                self._unasked(position, index, turn, exchanges[position])
            last = positions[index][-1]
            pois, answer = venues(exchanges[last]["data"]), exchanges[last]["answer"]
            self._turn(last, index, turn, answer, pois)
            if turn.act is not Act.DETOUR:  # an answer without venues proposes nothing:
                self.current, self.offered = proposed(answer, pois), named(answer, pois)
            action = action_of(answer, pois)
            if action is not None and action.venue is not None:
                self.current = action.venue  # what it acted on is what it proposes now
        if exchanges:
            self._goal(len(exchanges) - 1, int(exchanges[-1]["turn"]))
        return self.checks

    def _unasked(self, position: int, index: int, turn: Turn, exchange: Mapping[str, Any]) -> None:
        """An answer that acts where the user asked for no action fails at that turn."""
        if turn.act in ASKING and exchange.get("planned", True):
            return
        action = action_of(str(exchange["answer"]), venues(exchange["data"]))
        if action is None or asked_for(str(exchange["user"]), action.kind):
            return
        what = "a venue it did not name" if action.name is None else repr(action.name)
        note = (
            f"started navigation to {what} though nobody asked for it"
            if action.kind == "navigation"
            else f"took {what} as chosen though nobody chose it"
        )
        self.checks.append(Check("unasked", position, str(exchange["act"]), 0.0, note, index))

    def _turn(
        self, position: int, index: int, turn: Turn, answer: str, pois: list[dict[str, Any]]
    ) -> None:
        act, expect = str(turn.act), turn.expect
        referent = expect.get("referent", {})
        reference = _Reference(position, index, act, answer, pois)
        if "ordinal" in referent and len(self.offered) > 1:  # after one venue: ambiguous
            target = _ordinal(self.offered, referent["ordinal"])
            if target is not None:
                self.checks.append(reference.check(target, "the venue picked", alone=True))
        elif referent.get("proposed") and self.current is not None:
            self.checks.append(reference.check(self.current, "the venue proposed", alone=False))
        if expect.get("other_than_proposed") and self.current is not None:
            if same(proposed(answer, pois), self.current):
                note = "proposed the rejected venue again"
                self.checks.append(Check("reference", position, act, 0.0, note, index))
            self.rejected.append(str(self.current.get("name")))
        if "constraints" in expect:
            self._state(position, index, act, expect, answer, pois)

    def _state(
        self,
        position: int,
        index: int,
        act: str,
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
            note = "no venue offered though some fit"
            self.checks.append(Check("content", position, act, 0.0, note, index))
            return
        if len(pois) > 1:  # a list, all of whose venues have it: understood, not luck
            missed_by_any = {name for poi in pois for name in missed(request, poi)}
            self.understood.update(
                (name, index)
                for name, turn in stated.items()
                if turn == index and name not in missed_by_any
            )

        score, misses, name = venue_score(request, venue), missed(request, venue), venue.get("name")
        old = [n for n in misses if any(_has(venue, n, value) for value in superseded.get(n, []))]
        forgotten = [
            n for n in misses if stated.get(n, index) < index and (n, stated[n]) in self.understood
        ]
        if "category" in misses:  # another kind of place: a lapse only if it was understood
            forgotten, old = [n for n in forgotten if n == "category"], []
        if old:  # a lapse of state fails whatever else the venue matches
            note = f"{old[0]} still {venue.get(old[0])!r} after the correction"
            check = Check("correction", position, act, min(score, LAPSE_CAP), note, index)
        elif forgotten:
            n = forgotten[0]
            said = self.said_at.get(stated[n], stated[n]) + 1  # as the transcript numbers it
            note = f"{n} stated at turn {said} (understood then) not honoured by {name!r}"
            check = Check("retention", position, act, min(score, LAPSE_CAP), note, index)
        else:
            note = f"{name!r} misses {', '.join(misses)}" if misses else f"{name!r} fits"
            check = Check("content", position, act, score, note, index)
        self.checks.append(check)

    def _goal(self, last: int, index: int) -> None:
        goal = final_goal(self.plan)
        if not goal or not self.satisfiable(request_of(goal), self.rejected):
            return
        if self.current is None:
            note = "no venue proposed though some fit"
            self.checks.append(Check("goal", last, "end", 0.0, note, index))
            return
        misses = missed(request_of(goal), self.current)
        note = f"ends on {self.current.get('name')!r}" + (
            f", missing {', '.join(misses)}" if misses else ""
        )
        score = venue_score(request_of(goal), self.current)
        self.checks.append(Check("goal", last, "end", score, note, index))


@dataclass(frozen=True)
class _Reference:
    """The reference check of one answer: did it carry out what the turn pointed at?"""

    position: int
    index: int
    act: str
    answer: str
    pois: list[dict[str, Any]]

    def check(self, target: Mapping[str, Any], what: str, *, alone: bool) -> Check:
        """Pass when the answer navigates to ``target`` or takes it as chosen (with ``alone``,
        also when ``target`` is the only venue it names); "got" names what it acted on."""
        known = self.pois or [dict(target)]  # an answer with no data: read it for the target
        action = action_of(self.answer, known)
        said = named(self.answer, known)
        got: Mapping[str, Any] | None = None
        how = ""
        if action is not None:
            got = action.venue or (proposed(self.answer, self.pois) if len(said) < 2 else None)
            how = action.kind
        elif alone and len(said) == 1:
            got, how = said[0], "the only venue named"
        name = target.get("name")
        if got is not None and same(got, target):
            return Check("reference", self.position, self.act, 1.0, f"{what}: {name!r}", self.index)
        if got is not None:
            note = f"{what} was {name!r}, got {got.get('name')!r} ({how})"
        elif action is not None:
            note = f"{what} was {name!r}, got {action.kind} to a venue it did not name"
        else:
            listed = f" (the answer listed {', '.join(repr(p.get('name')) for p in said)})"
            note = f"{what} was {name!r}, got no navigation or choice" + (listed if said else "")
        return Check("reference", self.position, self.act, 0.0, note, self.index)


def _ordinal(offered: list[dict[str, Any]], ordinal: str) -> dict[str, Any] | None:
    position = {"first": 0, "second": 1, "last": len(offered) - 1}[ordinal]
    return offered[position] if position < len(offered) else None


def missed(request: VenueRequest, venue: Mapping[str, Any]) -> list[str]:
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
