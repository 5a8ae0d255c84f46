"""How the conversation tracker reads one user turn (``data/conversation_lexicon.yaml``).

Besides the assistant's venue lexicon (:func:`read_constraints`), a turn is read for:

* **negated values**: a venue, cuisine, payment or parking word at most three words after a
  negation in the same clause ("not Thai, Indian", "I don't want Thai"; the look-ahead
  stops at words such as "but", "I meant" or "mind") is not asked for. A negated price
  word is not either when another price word follows ("not cheap, expensive"); otherwise it
  stays the assistant's ("not too expensive" is a medium price);
* **withdrawn constraints**: a clause (split at punctuation and "but") with a drop phrase
  ("doesn't matter", "forget", "any rating is fine") withdraws the constraints it names
  ("the price", "parking"), or, naming none, those whose values it mentions ("cash");
* **references**: an ordinal ("the second one", "number 3", "the last one") or the name of a
  venue of the last list;
* **acts**: confirm, reject, navigate, details and close; where several match, the one said
  first wins, and a one-word phrase ("great", "no") counts only at the start of a clause
  (after lead-ins such as "oh" or "that's"). A yes/no question about "it" ("does it take
  cash?") is a question about the proposed venue; "that one" refers to it; "back to"
  returns to an earlier goal ("again" or "previous" too, in a turn with no other act).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from stellar.usecases.navi.datafiles import load_data
from stellar.usecases.navi.understanding import (
    NEGATIONS,
    normalise,
    read_constraints,
    redact_insults,
)

_LEXICON: dict[str, Any] = load_data("conversation_lexicon.yaml")
SLOTS = ("cuisine", "price", "min_rating", "payment", "parking")
"""The constraints of a request besides its category."""
NEGATABLE = ("category", "cuisine", "payment", "parking")
ACTS = ("confirm", "reject", "navigate", "details", "close")
"""The acts a turn may perform on what was proposed (the first one said wins)."""
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_QUESTION = re.compile(
    r"^(?:(?:and|so|ok|okay|hmm|well|but)\s+)?(?:does|do|is|are|can|will|has|have|did)\s+"
    r"(?:it|they|that|this|that place|this place|that one|this one)\b"
)
_CLAUSES = re.compile(r"(?<!\d)[.,]|[.,](?!\d)|[;:!?\n]|\s[-–—]+\s|\bbut\b", re.IGNORECASE)


def _pattern(phrases: Iterable[str], regex: bool = False) -> re.Pattern[str]:
    """One whole-word alternation of ``phrases``, longest first."""
    bodies = sorted((p if regex else re.escape(p) for p in phrases), key=len, reverse=True)
    return re.compile(rf"(?<![\w'])(?:{'|'.join(bodies)})(?![\w'])")


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    found = {act: _pattern(_LEXICON[act]) for act in (*ACTS, "refer", "back", "back_weak")}
    found["drop"] = _pattern(_LEXICON["drop"], regex=True)
    restaurant_words = load_data("assistant_lexicon.yaml")["category_words"]["restaurant"]
    found["restaurant"] = _pattern(
        (rf"{re.escape(w)}(?:e?s)?" for w in restaurant_words), regex=True
    )
    ordinals, nouns = _pattern(_LEXICON["ordinals"]), _pattern(_LEXICON["ordinal_nouns"])
    found["ordinal"] = re.compile(
        rf"(?:(?<![\w'])(?P<the>the)\s+)?{ordinals.pattern}(?:\s+(?P<noun>{nouns.pattern}))?"
    )
    prefixes = _pattern(_LEXICON["number_prefixes"]).pattern
    found["number"] = re.compile(rf"{prefixes}\s+(\d|{'|'.join(_NUMBERS)})(?![\w'])")
    for slot, words in _LEXICON["slot_names"].items():
        found[f"slot:{slot}"] = _pattern(words)
    return found


@dataclass(frozen=True)
class TurnReading:
    """What one user turn says, as the tracker reads it."""

    text: str  # normalised, insulting clauses redacted
    rude: bool  # an insult was redacted
    found: dict[str, Any]  # read_constraints without the negated or withdrawn phrases
    category_said: bool  # a venue word names the category (not only implied by a cuisine)
    negated: dict[str, Any]  # slot -> a value said after a negation
    dropped: frozenset[str]  # slots withdrawn (never the category)
    ordinal: int | None  # 1-based reference to the last list; -1 for the last one
    act: str | None  # the first of ACTS said
    refers: bool  # points at the proposed venue ("that one")
    back: bool  # returns to an earlier goal ("back to"; "again" only without another act)
    question: bool  # a yes/no question about the proposed venue

    @property
    def changes(self) -> dict[str, Any]:
        """The constraints (besides the category) the turn gives a value."""
        return {slot: self.found[slot] for slot in SLOTS if self.found[slot] is not None}


def read_turn(text: str) -> TurnReading:
    """Read a turn that is not abusive (see the module docstring)."""
    kept, rude = redact_insults(text)
    patterns = _patterns()
    dropped: set[str] = set()
    clauses = []
    said_clauses = [clean for clause in _CLAUSES.split(kept) if (clean := normalise(clause))]
    for clean in said_clauses:
        if clean and patterns["drop"].search(clean):
            dropped |= _named_slots(clean) or _valued_slots(clean)
            clauses.append(_without_names(clean))
        elif clean and not all(_is_negation(word) for word in clean.split()):
            clauses.append(clean)  # a bare "no," negates nothing ("no, cheaper" is cheap)
    words: list[str] = []
    negated: dict[str, Any] = {}
    for index, clause in enumerate(clauses):  # a negation reaches no further than its clause
        kept_words, clause_negated = _negations(clause.split(), " ".join(clauses[index + 1 :]))
        words += kept_words
        negated |= clause_negated
    found = read_constraints(" ".join(words))
    whole = normalise(kept)
    said = found["category"] is not None and (
        found["cuisine"] is None
        or found["category"] != "restaurant"
        or patterns["restaurant"].search(whole) is not None
    )
    if not said and "cuisine" in dropped:
        found["category"] = None  # "it doesn't have to be Italian" asks for no restaurant
    for slot in dropped:
        found[slot] = None
    act = _first_act(said_clauses)
    back_weak = act is None and patterns["back_weak"].search(whole) is not None
    return TurnReading(
        text=whole,
        rude=rude,
        found=found,
        category_said=said,
        negated=negated,
        dropped=frozenset(dropped),
        ordinal=_ordinal(whole),
        act=act,
        refers=patterns["refer"].search(whole) is not None,
        back=back_weak or patterns["back"].search(whole) is not None,
        question=_QUESTION.search(whole) is not None,
    )


def _named_slots(clause: str) -> set[str]:
    """The slots a clause names ("the price", "parking"); never the category ("any
    restaurant is fine" keeps the restaurants)."""
    return {slot for slot in SLOTS if _patterns()[f"slot:{slot}"].search(clause)}


def _valued_slots(clause: str) -> set[str]:
    """The slots a clause gives a value ("cash doesn't matter": payment)."""
    found = read_constraints(clause)
    return {slot for slot in SLOTS if found[slot] is not None}


def _without_names(clause: str) -> str:
    """A withdrawing clause without the words naming what it withdraws (so "no need to
    park" asks for no parking); values of other slots in it are still read."""
    for slot in SLOTS:
        clause = _patterns()[f"slot:{slot}"].sub(" ", clause)
    return clause


def _is_negation(word: str) -> bool:
    return word in NEGATIONS or word.endswith("n't")


def _negations(words: list[str], later: str = "") -> tuple[list[str], dict[str, Any]]:
    """``words`` (a clause) without the negated venue values, and those values by slot;
    ``later`` is the rest of the turn (a price said there replaces a negated one)."""
    stops = frozenset(_LEXICON["negation_stops"])
    kept: list[str] = []
    negated: dict[str, Any] = {}
    i = 0
    while i < len(words):
        if not _is_negation(words[i]):
            kept.append(words[i])
            i += 1
            continue
        end = None
        for j in range(i + 1, min(i + 4, len(words))):
            if words[j] in stops:
                break
            found = read_constraints(" ".join(words[i + 1 : j + 1]))
            if found["cuisine"] is not None:
                found["category"] = None  # "not Thai" does not negate restaurants
            values = {s: found[s] for s in NEGATABLE if found[s] is not None}
            if values:
                negated.update(values)
                end = j + 1
                break
            rest = " ".join([*words[j + 1 :], later])
            if found["price"] is not None and read_constraints(rest)["price"] is not None:
                negated["price"] = found["price"]  # "not cheap, expensive": the second one
                end = j + 1
                break
            if found["price"] is not None or found["min_rating"] is not None:
                break  # "not too expensive": the assistant reads a medium price
        if end is None:
            kept.append(words[i])
            i += 1
        else:
            i = end
    return kept, negated


def _ordinal(text: str) -> int | None:
    """A reference to a position of the last list, or None."""
    patterns = _patterns()
    number = patterns["number"].search(text)
    if number is not None:
        value = number.group(1)
        return int(value) if value.isdigit() else _NUMBERS[value]
    for match in patterns["ordinal"].finditer(text):
        if match.group("the") or match.group("noun") or match.group(0) == text:
            word = match.group(0).split()[1 if match.group("the") else 0]
            return int(_LEXICON["ordinals"][word])
    return None


def _first_act(clauses: list[str]) -> str | None:
    """The act of ACTS said first (at the same place, the longer phrase). A one-word phrase
    ("great", "no") counts only at the start of a clause, after lead-ins ("oh, that's
    great"): "the song on the radio is great" confirms nothing."""
    lead_ins = frozenset(_LEXICON["lead_ins"])
    for clause in clauses:
        hits = [
            (match.start(), match.start() - match.end(), act)
            for act in ACTS
            for match in _patterns()[act].finditer(clause)
            if " " in match.group(0) or set(clause[: match.start()].split()) <= lead_ins
        ]
        if hits:
            return min(hits)[2]
    return None


def named_venue(text: str, names: Sequence[str]) -> int | None:
    """The index of the venue of ``names`` that ``text`` (normalised) names, or None.

    A venue is named by its full name or by a shorter start of it (at least two words) that
    no other venue of the list shares ("Pizzeria Il Porto" for "Pizzeria Il Porto Südstadt").
    """
    spelled = [normalise(name).split() for name in names]
    best: tuple[int, int] | None = None  # (words matched, index)
    for index, words in enumerate(spelled):
        for length in range(len(words), 1, -1):
            prefix = words[:length]
            shared = any(other[:length] == prefix for k, other in enumerate(spelled) if k != index)
            if shared and length < len(words):
                break
            if re.search(rf"(?<![\w']){re.escape(' '.join(prefix))}(?![\w'])", text):
                if best is None or length > best[0]:
                    best = (length, index)
                break
    return None if best is None else best[1]
