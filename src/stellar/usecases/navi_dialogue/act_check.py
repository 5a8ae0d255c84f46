"""Does a model-written navi turn do what its act says? (the act rules of the turn check)

Rules, each from the driver's side: a request names the place and carries its wishes and no
others; an addition or a correction states its value (a correction may name the value it
replaces), nothing else; a withdrawal names the wish and withdraws it; a detour does not
restate the goal (an aside says neither yes nor no); a return goes back to the place; a
choice names the ordinal, or points at what was offered; a confirmation affirms and a
rejection refuses. Where no cue word tells either way (a confirmation without "yes", "sure"
...), the rule says ``UNDECIDED`` and the sentence model decides against the template's own
phrases (:class:`~stellar.dialogue.turn_check.MeaningCheck`).
"""

from __future__ import annotations

import re
from typing import Any

from stellar.dialogue.plan import Act, Plan, Turn
from stellar.dialogue.turn_check import UNDECIDED, Judgement, MeaningCheck, words
from stellar.text.embeddings import get_embedder
from stellar.usecases.navi.realiser_lexicon import (
    CATEGORY_NOUNS,
    CATEGORY_PARAPHRASES,
    CUISINE,
    PRICE_ADJECTIVES,
)
from stellar.usecases.navi.vocabulary import CUISINE_NAMES

WORDS: dict[str, dict[Any, tuple[str, ...]]] = {  # word starts that say an attribute's value
    "price": {  # with the realiser's adjectives for each level
        value: tuple({w for level in PRICE_ADJECTIVES[value].values() for w in level} | set(own))
        for value, own in {
            "low": (
                "cheap*",
                "inexpensive",
                "budget",
                "affordable",
                "low",
                "modest",
                "arm and a leg",
                "break the bank",
            ),
            "medium": ("mid", "moderate*", "medium", "reasonabl*", "average"),
            "high": (
                "expensive",
                "fancy",
                "high-end",
                "high end",
                "luxur*",
                "splurge",
                "pricey",
                "upper price",
            ),
        }.items()
    },
    "payment": {
        "cash": ("cash",),
        "credit card": ("credit", "card", "cards"),
        "contactless": ("contactless", "tap"),
        "mobile payment": ("phone", "mobile", "apple pay", "google pay"),
    },
    "parking": {"available": ("park*", "spot to ditch")},
}
"""Whole words, or word starts where marked ``*``."""
ATTRIBUTE_WORDS = {  # words that name an attribute (a withdrawal names the one it drops)
    "cuisine": ("food", "cuisine", "kind of"),
    "price": ("price", "budget", "cost", "expensive", "cheap"),
    "rating": ("rating", "star", "review"),
    "payment": ("payment", "pay", "card", "cash"),
    "parking": ("parking", "park"),
}
AFFIRM = (
    "yes",
    "yeah",
    "yep",
    "sure",
    "ok",
    "okay",
    "sounds good",
    "perfect",
    "great",
    "let's go",
    "go ahead",
    "take me",
    "works",
    "fine",
    "do it",
    "please do",
    "alright",
    "all right",
    "good",
)
REFUSE = (
    "no",
    "not",
    "nah",
    "nope",
    "don't",
    "another",
    "something else",
    "different",
    "other",
    "rather not",
    "else",
)
WITHDRAW = (
    "doesn't matter",
    "does not matter",
    "no longer",
    "forget",
    "don't care",
    "do not care",
    "never mind",
    "nevermind",
    "not important",
    "isn't important",
    "don't worry",
    "skip",
    "whatever",
    "drop",
    "ignore",
    "scratch",
    "not bothered",
    "any",
)
ASKING = ("looking for", "find me", "take me", "i need", "is there", "i want", "show me")
NEGATIONS = ("don't", "do not", "no", "not", "without", "doesn't", "never", "won't")
BACK = ("back", "anyway", "again", "return")
ORDINALS = {
    "first": ("first", "1st", "number one"),
    "second": ("second", "2nd", "number two"),
    "last": ("last", "final"),
}
POINTS = ("there", "that one", "that place", "this one", "it", "that", "this")
MAX_WORDS = {"request": 60, "confirm": 20, "reject": 20, "choose": 20, "drop": 20, "return": 20}
"""Words a turn may have, per act (the rest: the turn check's default)."""
_GENERIC = {
    "place",
    "somewhere",
    "spot",
    "some",
    "have",
    "with",
    "that",
    "proper",
    "joint",
    "shop",
    "house",
    "establishment",
    "service",
    "centre",
    "facility",
    "fresh",
    "freshly",
    "tonight",
    "night",
    "grab",
    "things",
    "where",
    "view",
}


def has(text: str, cues: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``cues`` as whole words."""
    lower = " ".join(words(text))
    return any(re.search(rf"\b{re.escape(cue)}\b", lower) for cue in cues)


def place_words(category: str) -> tuple[str, ...]:
    """Words that name a kind of place: its nouns and paraphrases' own words."""
    nouns = [category.replace("_", " ")]
    nouns += [p for level in CATEGORY_NOUNS.get(category, {}).values() for p in level]
    paraphrases = [p for level in CATEGORY_PARAPHRASES.get(category, {}).values() for p in level]
    found = {w for p in nouns for w in words(p) if len(w) >= 3}
    found |= {w for p in paraphrases for w in words(p) if len(w) >= 4}
    return tuple(sorted(found - _GENERIC))


def place_nouns(category: str) -> tuple[str, ...]:
    """The longer words of a kind of place's nouns ("garage", "bakery"): what names it for
    certain (paraphrases and short words also occur in other talk: "park the car")."""
    nouns = [p for level in CATEGORY_NOUNS.get(category, {}).values() for p in level]
    return tuple({w for p in nouns for w in words(p) if len(w) >= 5} - _GENERIC)


def says(name: str, value: Any, text: str) -> bool:
    """Whether ``text`` states ``name`` = ``value`` in the words people use for it."""
    if name == "category":
        return has(text, place_words(str(value)))
    if name == "cuisine":  # by its name, or a dish of it ("tacos")
        known = CUISINE.get(value, {})
        names = [
            CUISINE_NAMES.get(value, str(value)),
            *known.get("dishes", ()),
            *known.get("cafe", ()),
        ]
        return has(text, tuple(n.lower() for n in names))
    if name == "rating":  # "4" or "4.0" for 4.0, never the 4 of "4.5"
        number = float(value)
        return bool(re.search(rf"(?<![\d.])(?:{number:g}|{number:.1f})(?!\d|\.\d)", text))
    lower = text.lower()
    return any(re.search(_pattern(w), lower) for w in WORDS.get(name, {}).get(value, ()))


def _pattern(word: str) -> str:
    stem = word.removesuffix("*")
    return rf"\b{re.escape(stem)}" + ("" if word.endswith("*") else r"\b")


def wished(name: str, value: Any, text: str) -> bool:
    """Whether ``text`` asks for ``name`` = ``value``: says it in a clause that does not say
    the user does without it ("I don't need parking" asks for no parking)."""
    clauses = re.split(r"[.,;!?](?:\s|$)| but | and ", text)
    return any(says(name, value, c) for c in clauses if not has(c, NEGATIONS))


def extra(slots: dict[str, Any], text: str, allowed: tuple[Any, ...] = ()) -> str:
    """A wish ``text`` states that ``slots`` do not (``allowed``: values it may name)."""
    for name, values in {**WORDS, "cuisine": {c: () for c in CUISINE_NAMES}}.items():
        for value in values:
            if slots.get(name) != value and value not in allowed and wished(name, value, text):
                return f"{name} {value}"
    return ""


class NaviActCheck:
    """The act rules for the turns of one plan (the goal is the plan's, for detours)."""

    def __init__(self, plan: Plan) -> None:
        first = plan.turns[0].slots if plan.turns else {}
        self.category = str(first.get("category", ""))
        self.goal = {
            n: v
            for t in plan.turns
            for n, v in t.slots.items()
            if n in WORDS or n in ("cuisine", "rating")
        }

    def __call__(self, turn: Turn, text: str) -> Judgement:
        slots, act = turn.slots, turn.act
        if _as_a_place(text):
            return Judgement(reason="speaks as the place, not the driver")
        if act in (Act.REQUEST, Act.ADD, Act.CORRECT):
            for name, value in slots.items():
                if name not in ("was", "elliptic") and not says(name, value, text):
                    return Judgement(reason=f"does not say {name} {value}")
            stated = extra(slots, text, allowed=(slots.get("was"),))
            if stated:
                return Judgement(reason=f"adds a wish the plan does not have ({stated})")
            name = next((n for n in slots if n not in ("was", "elliptic")), "")
            if "was" in slots and wished(name, slots["was"], text):
                return Judgement(reason=f"still asks for the old {name} ({slots['was']})")
            return self._elsewhere(text)
        if act is Act.DROP:
            attribute = str(slots.get("attribute", ""))
            if not has(text, ATTRIBUTE_WORDS.get(attribute, (attribute,))):
                return Judgement(reason=f"does not name the {attribute}")
            return (
                Judgement()
                if has(text, WITHDRAW)
                else Judgement(reason=f"does not withdraw the {attribute}")
            )
        if act is Act.DETOUR:
            return self._detour(slots, text)
        if act is Act.RETURN:
            if not (says("category", self.category, text) or has(text, BACK)):
                return Judgement(reason="does not go back to the search")
            return self._elsewhere(text)
        if act is Act.CHOOSE and "ordinal" in slots:
            ordinal = str(slots["ordinal"])
            return (
                Judgement()
                if has(text, ORDINALS.get(ordinal, (ordinal,)))
                else Judgement(reason=f"does not pick the {ordinal}")
            )
        if act is Act.CHOOSE:
            return _cued(text, POINTS, REFUSE, "does not point at what was offered")
        if act is Act.CONFIRM:
            return _cued(text, AFFIRM, REFUSE, "does not affirm")
        if act is Act.REJECT:
            return _cued(text, REFUSE, AFFIRM, "does not reject")
        return UNDECIDED

    def _elsewhere(self, text: str) -> Judgement:
        """Rejected when the turn asks for another kind of place than the goal's."""
        for category in CATEGORY_NOUNS:
            if category != self.category and has(text, place_nouns(category)):
                return Judgement(reason=f"asks for another place ({category})")
        return Judgement()

    def _detour(self, slots: dict[str, Any], text: str) -> Judgement:
        if slots.get("kind") == "other_request":
            other = str(slots.get("category", ""))
            if not says("category", other, text):
                return Judgement(reason=f"does not ask for the {other}")
        elif self.category and says("category", self.category, text):
            return Judgement(reason="restates the goal in a detour")
        elif has(text, ASKING):
            return Judgement(reason="asks for something in a detour")
        if slots.get("kind") == "aside" and (has(text, AFFIRM[:4]) or has(text, ("no", "nope"))):
            return Judgement(reason="answers yes or no in an aside")
        stated = [f"{n} {v}" for n, v in self.goal.items() if wished(n, v, text)]
        return Judgement(reason=f"restates the goal in a detour ({stated[0]})" if stated else None)


def _as_a_place(text: str) -> bool:
    """ "I am a museum of the past": the model speaks as the place, not as the driver."""
    lower = " ".join(words(text))
    nouns = "|".join(n for category in CATEGORY_NOUNS for n in place_nouns(category))
    return bool(re.search(rf"\bi(?: am|'m) (?:a|an|the) (?:\w+ )?(?:{nouns})\b", lower))


def _cued(text: str, wanted: tuple[str, ...], against: tuple[str, ...], why: str) -> Judgement:
    """Kept with a wanted cue and none against it; rejected with only cues against; else the
    meaning check decides."""
    if has(text, against) and not has(text, wanted):
        return Judgement(reason=why)
    if has(text, wanted) and not has(text, against):
        return Judgement()
    return UNDECIDED


def meaning_check(phrases: dict[str, Any]) -> MeaningCheck:
    """The meaning check over the template's phrases (``turn_phrases.yaml``)."""
    examples = {
        "confirm": phrases["confirm"],
        "reject": phrases["reject"],
        "choose": phrases["anaphora"],
    }
    rivals = {"confirm": ["reject"], "reject": ["confirm"], "choose": ["reject"]}
    return MeaningCheck(examples, rivals, lambda: get_embedder("minilm-int8"))
