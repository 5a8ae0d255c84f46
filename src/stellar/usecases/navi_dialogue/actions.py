"""What an answer *did* with a venue, and whether the user's turn asked for it.

Naming a venue is not acting on it: "How about Luigi's or Pasta Bar?" proposes, "Starting
navigation to Luigi's." and "Good choice: Luigi's." act. The checks need the difference to
tell a confirmation the assistant never carried out from one it did, and to catch an action
nobody asked for ("let me think for a second" read as "the second one"). The answer is read
as words only (no assistant's internals), so any system behind the session interface, an
HTTP one included, is read the same way:

* an **action** is a statement (a sentence not ending in "?", without a negation before the
  phrase) that starts navigation ("starting navigation to", "taking you to", "route set")
  or takes a venue as chosen ("good choice", "you picked", "X it is"); "Shall I take you
  there?" offers and does nothing;
* its **venue** is the first venue the sentence names after the phrase ("starting
  navigation to X", "X it is"), else the last before it, else the only venue the answer
  names, else the only one it returned.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NAVIGATION = re.compile(
    r"\bstart(?:s|ing|ed)?\s+(?:the\s+|your\s+)?(?:navigation|navigating|route|routing|guidance)"
    r"|\bnavigation\s+(?:to\b.*?\b)?(?:started|has started|is starting|is running|is on|begins)"
    r"|\bnavigating\s+(?:you\s+)?to\b|\btaking\s+you\s+(?:to|there)\b|\bguiding\s+you\b"
    r"|\b(?:i'll|i will|i'm going to|let me)\s+(?:now\s+)?(?:take|guide|route|navigate|drive)"
    r"\s+you\b|\bheading\s+(?:to|for|towards)\b|\broute\s+(?:to\b.*?\b)?(?:is\s+)?"
    r"(?:set|started|calculated|ready)\b|\bdestination\s+(?:is\s+)?set\b"
    r"|\bset(?:ting)?\s+(?:the|your)\s+destination\b|\bhere\s+we\s+go\b|\blet's\s+go\s+to\b",
    re.IGNORECASE,
)
CHOICE = re.compile(
    r"\b(?:good|great|excellent|nice|fine|wise|perfect)\s+(?:choice|pick|decision)\b"
    r"|\byou(?:'ve|\s+have)?\s+(?:chose|chosen|picked|selected)\b"
    r"|\b(?:i've|i\s+have)\s+(?:selected|chosen|picked)\b|\bgoing\s+with\b|\u00a7\d+\u00a7\s+it\s+is\b",
    re.IGNORECASE,
)
NEGATION = re.compile(r"\b(?:not|never|cannot|unable)\b|n't\b", re.IGNORECASE)
CLAUSE = re.compile(r"[,;:]")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
NAVIGATION_ASKED = re.compile(
    r"\bnavigat|\btake\s+me\b|\bdrive\s+(?:me|there)\b|\bbring\s+me\b|\bget\s+me\s+(?:to|there)"
    r"|\broute\b|\bdirections?\b|\bdestination\b|\bgo\s+there\b|\blet'?s\s+go\b"
    r"|\bhead\s+(?:to|there)\b|\bguide\s+me\b|\bstraight\s+to\b|\bgo\s+to\b",
    re.IGNORECASE,
)
CHOICE_ASKED = re.compile(
    r"\b(?:first|second|third|last|1st|2nd|3rd|final)\s+(?:one|option|choice|place|suggestion)"
    r"|\b(?:that|this)\s+(?:one|place)\b|\bnumber\s+\w+\b|\bi'll\s+take\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Action:
    """An answer's action: ``kind`` "navigation" or "choice", on ``venue`` (None: unnamed)."""

    kind: str
    venue: dict[str, Any] | None

    @property
    def name(self) -> str | None:
        return None if self.venue is None else self.venue.get("name")


def action_of(answer: str, pois: Sequence[Mapping[str, Any]]) -> Action | None:
    """The first action ``answer`` performs (navigation before a choice in one sentence)."""
    masked, order = _masked(answer, pois)
    for sentence in SENTENCE_END.split(masked):
        if sentence.rstrip().endswith("?"):
            continue  # an offer ("Shall I take you there?"), not an action
        for kind, pattern in (("navigation", NAVIGATION), ("choice", CHOICE)):
            match = pattern.search(sentence)
            if match is None or NEGATION.search(CLAUSE.split(sentence[: match.start()])[-1]):
                continue  # "I can't start navigation": no action
            after = re.search(r"\u00a7(\d+)\u00a7", sentence[match.start() :])
            before = re.findall(r"\u00a7(\d+)\u00a7", sentence[: match.start()])
            if after is not None:  # "starting navigation to X", "route to X set", "X it is"
                return Action(kind, dict(pois[int(after.group(1))]))
            if before:  # "X, here we go"
                return Action(kind, dict(pois[int(before[-1])]))
            return Action(kind, _only(order, pois))
    return None


def asked_for(text: str, kind: str) -> bool:
    """Whether the user's words ask for an action of ``kind`` ("take me to ...", "the first
    one"): such an action is not unasked, whatever the turn was planned as."""
    return bool((NAVIGATION_ASKED if kind == "navigation" else CHOICE_ASKED).search(text))


def _masked(answer: str, pois: Sequence[Mapping[str, Any]]) -> tuple[str, list[int]]:
    """``answer`` with each venue name it holds replaced by ``§index§`` (so a dot in a name
    ends no sentence), longest names first; and the indexes in the order they appear."""
    names = [(_plain(str(p.get("name") or "")), i) for i, p in enumerate(pois)]
    text = _plain(answer)
    for name, index in sorted(names, key=lambda pair: -len(pair[0])):
        if name.strip():
            whole = rf"(?<![\w']){re.escape(name)}(?![\w'])"
            text = re.sub(whole, f"\u00a7{index}\u00a7", text, flags=re.IGNORECASE)
    order = [int(m.group(1)) for m in re.finditer(r"\u00a7(\d+)\u00a7", text)]
    return text, order


def _plain(text: str) -> str:
    """Apostrophes as one character: a system writes Joe's as Joe\u2019s as often as not."""
    return re.sub("[\u2019\u2018\u02bc`]", "'", text)


def _only(order: list[int], pois: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The venue of an action whose sentence names none: the only one the answer names, else
    the only one it returned."""
    if len(set(order)) == 1:
        return dict(pois[order[0]])
    if not order and len(pois) == 1:
        return dict(pois[0])
    return None
