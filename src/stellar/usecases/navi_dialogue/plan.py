"""A navi conversation's plan: the candidate's goal and dialogue features as acts, in order.

:func:`compile_plan` is pure: the same candidate values and rng state give the same plan.
The goal is the candidate's content (category and attributes). Each turn says what it
states (``slots``) and, where the answer can be checked, what it must satisfy
(``expect``):

* ``constraints``: the goal as it stands after the turn (after corrections and withdrawals):
  the venue the answer proposes must satisfy it;
* ``stated``: the turn at which each of those attributes took its current value (so a
  violated attribute stated earlier is a lapse of memory, not of understanding);
* ``superseded``: values a correction replaced (a venue that has one ignored it);
* ``referent``: what a reference turn points at (``ordinal``: first, second, last of the
  last list offered; ``proposed``: the venue proposed last);
* ``other_than_proposed``: a rejection wants another venue.

A turn that reacts to what was offered says what must hold before it is sent
(``Turn.requires``): a rejection, "take me there" and a confirmation need a venue offered,
"the second one" a list of two or more named (:mod:`stellar.dialogue.preconditions`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from stellar.dialogue.plan import Act, Plan, Turn
from stellar.dialogue.preconditions import LISTED, OFFERED
from stellar.usecases.navi.realiser_lexicon import APPLICABLE, ATTRIBUTES
from stellar.usecases.navi.vocabulary import CATEGORIES

VALUES: dict[str, tuple[Any, ...]] = {  # what an attribute may be set to (features.yaml)
    "cuisine": (
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
    ),
    "price": ("low", "medium", "high"),
    "rating": (3.5, 4.0, 4.5, 5.0),
    "payment": ("cash", "credit card", "contactless", "mobile payment"),
    "parking": ("available",),
}
CORRECTABLE = ("cuisine", "price", "rating", "payment")  # parking has one value only
ORDINALS = ("first", "second", "last")


def compile_plan(values: Mapping[str, Any], rng: random.Random) -> Plan:
    """The plan of one conversation (see the module docstring); turns carry no words yet."""
    return _Compiler(values, rng).plan()


class _Compiler:
    def __init__(self, values: Mapping[str, Any], rng: random.Random) -> None:
        self.values, self.rng = values, rng
        self.category: str = values["category"]
        self.goal: dict[str, Any] = {
            name: values[name] for name in ATTRIBUTES if values.get(name, "none") != "none"
        }
        self.applicable = [a for a in ATTRIBUTES if self.category in APPLICABLE[a]]
        self.turns: list[Turn] = []
        self.active: dict[str, Any] = {"category": self.category}
        self.stated: dict[str, int] = {}
        self.superseded: dict[str, list[Any]] = {}

    # ------------------------------------------------------------------ choices
    def _attribute(self, among: tuple[str, ...], taken: set[str]) -> str | None:
        """An attribute of the goal for a dialogue act, else one the category takes (added to
        the goal with a drawn value); None when the category takes none."""
        own = [a for a in self.goal if a in among and a not in taken]
        if own:
            return self.rng.choice(own)
        free = [a for a in self.applicable if a in among and a not in taken]
        if not free:
            return None
        name = self.rng.choice(free)
        self.goal[name] = self.rng.choice(VALUES[name])
        return name

    def plan(self) -> Plan:
        v, rng = self.values, self.rng
        taken: set[str] = set()
        ellipsis = None
        if v.get("reference") == "ellipsis":
            ellipsis = self._attribute(tuple(ATTRIBUTES), taken)
            taken |= {ellipsis} if ellipsis else set()
        corrected = None
        if v.get("correction", "none") != "none":
            corrected = self._attribute(CORRECTABLE, taken)
            taken |= {corrected} if corrected else set()
        dropped = None
        if v.get("drop", "none") != "none":
            dropped = self._attribute(tuple(ATTRIBUTES), taken)
            taken |= {dropped} if dropped else set()
        wrong = None
        if corrected:
            wrong = rng.choice([x for x in VALUES[corrected] if x != self.goal[corrected]])

        said = [a for a in self.goal if a != ellipsis]  # what the user tells, with wrong first
        first = {a: (wrong if a == corrected else self.goal[a]) for a in said}
        reveal = v.get("reveal", "upfront")
        upfront = {a: first[a] for a in said if reveal == "upfront" or a == "cuisine"}
        self._turn(Act.REQUEST, {"category": self.category, **upfront}, check=True)
        if corrected in upfront and v.get("correction") == "early":
            self._correct(corrected)
        later = [a for a in said if a not in upfront]
        if reveal == "incremental":
            for name in later:
                self._state(name, first[name], corrected, v)
        self._detour(v.get("detour", "none"))
        if reveal == "late":
            self._pad(int(v.get("distance", 1)))
            if later:
                self._turn(Act.ADD, {a: first[a] for a in later}, check=True)
                if corrected in later and v.get("correction") == "early":
                    self._correct(corrected)
        if dropped:
            self._turn(Act.DROP, {"attribute": dropped}, check=True, drop=dropped)
        if reveal != "late":
            self._pad(int(v.get("distance", 1)))
        if corrected and self.active.get(corrected) != self.goal[corrected]:
            self._correct(corrected)  # late, or early but stated upfront: now
        if ellipsis:
            self._turn(Act.ADD, {ellipsis: self.goal[ellipsis]}, check=True, elliptic=True)
        self._close(v.get("reference", "none"), v.get("confirm", "none"))
        return Plan(self.turns, clarification="")

    # ------------------------------------------------------------------ turns
    def _turn(
        self,
        act: Act,
        slots: dict[str, Any],
        *,
        check: bool = False,
        drop: str | None = None,
        elliptic: bool = False,
        expect: dict[str, Any] | None = None,
        requires: str = "",
    ) -> Turn:
        index = len(self.turns)
        if act is not Act.DETOUR:  # a detour's request is not the goal
            for name, value in slots.items():
                if name in ATTRIBUTES or name == "category":
                    self.active[name], self.stated[name] = value, index
        if drop:
            self.active.pop(drop, None)
            self.stated.pop(drop, None)
        if elliptic:
            slots = {**slots, "elliptic": True}
        expected = dict(expect or {})
        if check:
            expected |= {
                "constraints": dict(self.active),
                "stated": dict(self.stated),
                "superseded": {k: list(vs) for k, vs in self.superseded.items()},
            }
        turn = Turn(act, slots, expected, requires=requires)
        self.turns.append(turn)
        return turn

    def _state(self, name: str, value: Any, corrected: str | None, v: Mapping[str, Any]) -> None:
        self._turn(Act.ADD, {name: value}, check=True)
        if name == corrected and v.get("correction") == "early":
            self._correct(name)

    def _correct(self, name: str) -> None:
        old = self.active.get(name)
        self.superseded.setdefault(name, []).append(old)
        self._turn(Act.CORRECT, {name: self.goal[name], "was": old}, check=True)

    def _detour(self, kind: str) -> None:
        if kind == "chit_chat":
            self._turn(Act.DETOUR, {"kind": "chit_chat"})
        elif kind == "other_request":
            other = self.rng.choice([c for c in CATEGORIES if c != self.category])
            self._turn(
                Act.DETOUR,
                {"kind": "other_request", "category": other},
                expect={"constraints": {"category": other}, "stated": {}, "superseded": {}},
            )
            self._turn(Act.RETURN, {"category": self.category}, check=True)

    def _pad(self, distance: int) -> None:
        """Small talk until ``distance`` turns separate the first statement from the end."""
        said = [turn for name, turn in self.stated.items() if name != "category"]
        start = min(said, default=len(self.turns) - 1)
        while len(self.turns) - start < distance:
            self._turn(Act.DETOUR, {"kind": "aside"})

    def _close(self, reference: str, confirm: str) -> None:
        """The end: a refusal of what is proposed first (then a reference would point at the
        new proposal, not contradict itself), the reference, the acceptance."""
        proposed = {"referent": {"proposed": True}}
        if confirm == "reject_then_accept":
            self._turn(
                Act.REJECT, {}, check=True, expect={"other_than_proposed": True}, requires=OFFERED
            )
        if reference == "ordinal":
            ordinal = self.rng.choice(ORDINALS)
            expect = {"referent": {"ordinal": ordinal}}
            self._turn(Act.CHOOSE, {"ordinal": ordinal}, expect=expect, requires=LISTED)
        elif reference == "anaphora":
            self._turn(Act.CHOOSE, {"anaphora": True}, expect=proposed, requires=OFFERED)
        if confirm in ("accept", "reject_then_accept"):
            self._turn(Act.CONFIRM, {}, expect=proposed, requires=OFFERED)


def final_goal(plan: Plan) -> dict[str, Any]:
    """The constraints in force at the end: those of the last turn that states them."""
    for turn in reversed(plan.turns):
        if "constraints" in turn.expect and turn.act is not Act.DETOUR:
            return dict(turn.expect["constraints"])
    return {}
