"""How the navigation assistant reads an utterance (lexicons in ``data/assistant_lexicon.yaml``).

The text is normalised (lower case, accents and punctuation removed, hyphens split) and
matched against the phrase lexicons, longest phrase first, one slot per stretch of text
("parking garage" is parking, not a garage; "American Express" a card, not a cuisine). The
first mention wins within a slot; a cuisine name beats a dish word. A cuisine with no venue
word implies a restaurant ("where can I get sushi"). Ratings are read from a number next to
"star(s)", after "rated"/"rating", as "4.5+", or from "top rated" (4.5) and "highly rated"
(4.0); ratings snap up to the 0.5 grid. A price word preceded by a negation within three
words ("not too expensive", "nothing fancy") means a *medium* price.

Strong profanity (``abusive_words``) stops the assistant from processing the message at
all; clauses (split at punctuation) that contain a milder insult (``insult_words``) are
redacted before understanding, so a constraint stated in the same clause is lost.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from stellar.usecases.navi.datafiles import load_data
from stellar.usecases.navi.request import VenueRequest

_LEXICON: dict[str, Any] = load_data("assistant_lexicon.yaml")
CATEGORY_PROTOTYPES: dict[str, list[str]] = _LEXICON["category_prototypes"]
"""Descriptions of each category that the embedding fallback compares a request with."""
NUMBER_WORDS: dict[str, float] = _LEXICON["number_words"]
NEGATIONS = frozenset(_LEXICON["negations"])
NEGATED_PRICE = "medium"
"""The price read from a negated price word: "not too expensive" / "nothing fancy" /
"not that cheap" all mean something in the middle."""


@dataclass(frozen=True)
class Understanding:
    """What the assistant understood from one utterance, and how."""

    venue: VenueRequest | None = None  # None: no kind of venue understood
    via: str | None = None  # "lexicon", "embedding" or None (no venue understood)
    similarity: float | None = None  # best prototype similarity when the fallback ran
    rude: bool = False  # an insult was found; its clauses were ignored
    abusive: bool = False  # strong profanity: nothing was searched


@dataclass(frozen=True)
class _Phrase:
    slot: str
    value: Any
    pattern: re.Pattern[str]
    priority: int  # lower wins within a slot (cuisine names before dishes)


@dataclass(frozen=True)
class _Hit:
    slot: str
    value: Any
    start: int
    end: int
    priority: int


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(word) for word in phrase.split())
    return re.compile(rf"(?<![\w']){body}(?:e?s)?(?![\w'])")


@functools.cache  # compiled at the first utterance, not when the plugins are listed
def _phrases() -> list[_Phrase]:
    lexicon, rating_words = _LEXICON, _LEXICON["rating_words"]
    tables: list[tuple[str, list[tuple[Any, list[str]]], int]] = [
        ("category", list(lexicon["category_words"].items()), 0),
        ("cuisine", list(lexicon["cuisine_names"].items()), 0),
        ("cuisine", list(lexicon["cuisine_dishes"].items()), 1),
        ("price", list(lexicon["price_words"].items()), 0),
        ("payment", list(lexicon["payment_words"].items()), 0),
        ("parking", [(True, lexicon["parking_words"])], 0),
        ("rating", [(value, [phrase]) for phrase, value in rating_words.items()], 0),
    ]
    return [
        _Phrase(slot, value, _phrase_pattern(phrase), priority)
        for slot, table, priority in tables
        for value, phrases in table
        for phrase in phrases
    ]


_NUMBER = rf"(\d+(?:\.\d+)?|{'|'.join(NUMBER_WORDS)})(\s+and\s+a\s+half)?"
_RATING_PATTERNS = (
    re.compile(
        rf"(?<![\w.]){_NUMBER}\s*\+?\s*"
        r"(?:(?:or|and)\s+(?:more|better|higher|up|above)\s+)?stars?\b"
    ),
    re.compile(
        rf"\b(?:rated|rating|ratings|reviews)\s+(?:(?:of|at|least|above|over|minimum|min|"
        rf"higher|better|than|no|less|more|greater|a)\s+)*{_NUMBER}(?![\w.])"
    ),
    re.compile(r"(?<![\w.])([1-5](?:\.[05])?)()\s*\+"),
)
_ABUSIVE = re.compile(rf"\b(?:{'|'.join(_LEXICON['abusive_words'])})\b")
_INSULT = re.compile(rf"\b(?:{'|'.join(_LEXICON['insult_words'])})\b")
_CLAUSE_SPLIT = re.compile(r"(?<!\d)[.,]|[.,](?!\d)|[!?;:\n]|\s[-–—]+\s")


def normalise(text: str) -> str:
    """Lower case, accents and punctuation removed (decimal points and "+" kept)."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = text.replace("’", "'").replace("&", " and ")
    text = re.sub(r"[^\w\s'.+]|_", " ", text)
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", text)
    text = re.sub(r"(?<!\w)'|'(?!\w)", " ", text)
    return " ".join(text.split())


def is_abusive(text: str) -> bool:
    """Whether ``text`` contains strong profanity."""
    return _ABUSIVE.search(normalise(text)) is not None


def redact_insults(text: str) -> tuple[str, bool]:
    """``text`` without the clauses that contain an insult, and whether any was removed."""
    clauses = _CLAUSE_SPLIT.split(text)
    kept = [c for c in clauses if not _INSULT.search(normalise(c))]
    return " , ".join(c.strip() for c in kept if c.strip()), len(kept) < len(clauses)


@functools.lru_cache(maxsize=4096)
def _lexicon_hits(text: str) -> tuple[_Hit, ...]:
    """Non-overlapping phrase matches, longest first (ties: earliest); cached, since an
    answer reads the constraints and the residual of the same text."""
    candidates = [
        _Hit(p.slot, p.value, m.start(), m.end(), p.priority)
        for p in _phrases()
        for m in p.pattern.finditer(text)
    ]
    candidates.sort(key=lambda h: (h.start - h.end, h.start))
    taken: list[_Hit] = []
    for hit in candidates:
        if all(hit.end <= t.start or hit.start >= t.end for t in taken):
            taken.append(hit)
    return tuple(taken)


def _first(hits: tuple[_Hit, ...], slot: str) -> _Hit | None:
    matching = [h for h in hits if h.slot == slot]
    return min(matching, key=lambda h: (h.priority, h.start), default=None)


def _price(text: str, hit: _Hit | None) -> str | None:
    if hit is None:
        return None
    before = text[: hit.start].split()[-3:]
    negated = any(word in NEGATIONS or word.endswith("n't") for word in before)
    return NEGATED_PRICE if negated else hit.value


def _number(digits: str, half: str | None) -> float:
    value = NUMBER_WORDS.get(digits)
    value = float(digits) if value is None else value
    return value + (0.5 if half else 0.0)


def _rating(text: str, hits: tuple[_Hit, ...]) -> float | None:
    """The first explicit rating (snapped up to the 0.5 grid), else a rating phrase's."""
    found = [
        (m.start(), _number(m.group(1), m.group(2)))
        for pattern in _RATING_PATTERNS
        for m in pattern.finditer(text)
    ]
    valid = sorted((start, value) for start, value in found if 1.0 <= value <= 5.0)
    if valid:
        return math.ceil(valid[0][1] * 2) / 2
    phrase = _first(hits, "rating")
    return None if phrase is None else phrase.value


def residual(text: str) -> str:
    """``text`` without the phrases the lexicon recognised: what the embedding fallback sees."""
    for hit in sorted(_lexicon_hits(text), key=lambda h: -h.start):
        text = text[: hit.start] + text[hit.end :]
    return " ".join(text.split())


def read_constraints(text: str) -> dict[str, Any]:
    """The constraints the lexicon finds in normalised ``text`` (category possibly None)."""
    hits = _lexicon_hits(text)
    category, cuisine = _first(hits, "category"), _first(hits, "cuisine")
    payment, parking = _first(hits, "payment"), _first(hits, "parking")
    return {
        "category": category.value if category else ("restaurant" if cuisine else None),
        "cuisine": cuisine.value if cuisine else None,
        "min_rating": _rating(text, hits),
        "price": _price(text, _first(hits, "price")),
        "payment": payment.value if payment else None,
        "parking": True if parking else None,
    }
