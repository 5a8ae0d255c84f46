"""The realiser's phrase assembly: a candidate's venue and content attributes as words.

:class:`ContentPhrases` picks the venue phrase ("a cheap Italian restaurant that takes
cash"), the need behind an implicit request, telegraphic keywords and "don't care" remarks;
all choices come from its ``rng``, so one rng state always gives the same words.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from stellar.usecases.navi.realiser_lexicon import (
    APPLICABLE,
    ATTRIBUTE_LEXICONS,
    ATTRIBUTES,
    CAFE_CRAVINGS,
    CAFE_POST,
    CAFE_SAY,
    CAFE_SPECIALITIES,
    CATEGORY_NEEDS,
    CATEGORY_NOUNS,
    CATEGORY_PARAPHRASES,
    CUISINE,
    CUISINE_CRAVINGS,
    CUISINE_DISH_POST,
    CUISINE_DISHES,
    CUISINE_POST,
    CUISINE_SAY,
    DEFINITE,
    GENERIC_PLACES,
    KEEP_CAPITAL,
    LOCATIONS,
    PRICE_ADJECTIVES,
    PRICE_CLASHES,
    TERSE,
    TERSE_ENDS,
)
from stellar.usecases.navi.vocabulary import CUISINE_NAMES


def pick(rng: random.Random, entry: Mapping[str, list[str]], slang: str) -> str:
    """A phrase for ``slang``: its own list pooled with the neutral one."""
    pool = list(entry.get("neutral", []))
    if slang != "neutral":
        pool = entry.get(slang, []) + pool
    return rng.choice(pool)


def _stars(rating: Any, slang: str) -> str:
    """The rating as said: "4" or "4.5" ("4.0" in formal speech)."""
    value = float(rating)
    if value.is_integer() and slang != "formal":
        return str(int(value))
    return f"{value:.1f}"


def _article(word: str) -> str:
    """Indefinite article for the word that follows it."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def decapitalise(text: str) -> str:
    """Lower-case the first letter unless it starts "I", a name or a cuisine."""
    if not text or KEEP_CAPITAL.match(text):
        return text
    for name in CUISINE_NAMES.values():
        if text.startswith(name):
            return text
    return text[:1].lower() + text[1:]


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def _join(phrases: Sequence[str], rng: random.Random) -> str:
    """ "A", "A and B", "A, B and C" with a varied last connector."""
    if len(phrases) <= 1:
        return "".join(phrases)
    last = rng.choice([" and ", ", and ", " and also "])
    return ", ".join(phrases[:-1]) + last + phrases[-1]


def _speciality(cuisine: str, named: bool, rng: random.Random) -> str:
    """What a cafe of ``cuisine`` serves; ``named``: one that says the cuisine's name."""
    pool = CAFE_SPECIALITIES[cuisine]
    if named:
        pool = [s for s in pool if CUISINE_NAMES[cuisine] in s]
    return rng.choice(pool)


def _fill(
    template: str, values: Mapping[str, Any], slang: str, rng: random.Random, named: bool = False
) -> str:
    """Fill {cuisine}, {dish}, {speciality} and {stars} from the candidate."""
    cuisine = values.get("cuisine", "none")
    fields = {
        "cuisine": CUISINE_NAMES.get(cuisine, ""),
        "dish": rng.choice(CUISINE_DISHES[cuisine]) if "{dish}" in template else "",
        "speciality": _speciality(cuisine, named, rng) if "{speciality}" in template else "",
        "stars": _stars(values["rating"], slang) if values.get("rating", "none") != "none" else "",
    }
    return template.format(**fields)


def _requested(values: Mapping[str, Any]) -> list[str]:
    """The content attributes the candidate asks for, in feature order."""
    return [name for name in ATTRIBUTES if values.get(name, "none") != "none"]


def tidy(text: str) -> str:
    """Single spaces, no space before punctuation, capitalised sentences."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.!?])", r"\1", text)
    text = re.sub(r"([.!?])\1+", r"\1", text)
    text = re.sub(r"([.!?] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    return capitalise(text)


class ContentPhrases:
    """Realises one candidate's venue request; all choices come from ``rng``."""

    def __init__(self, values: Mapping[str, Any], rng: random.Random) -> None:
        self.values = values
        self.rng = rng
        self.slang: str = values.get("slang", "neutral")
        self.level: str = values.get("implicitness", "not")
        self.category: str = values["category"]

    def pick(self, entry: Mapping[str, list[str]]) -> str:
        """A filled-in phrase from a slang-keyed lexicon entry.

        A cafe's speciality names its cuisine in explicit requests ("Italian espresso").
        """
        named = self.level == "not"
        return _fill(pick(self.rng, entry, self.slang), self.values, self.slang, self.rng, named)

    def post(self, name: str) -> str:
        """An attribute phrase that follows the head ("that takes cash")."""
        if name == "cuisine" and self.category == "cafe":
            return self.pick(CAFE_POST)  # "with Italian coffee and pastries"
        if name == "cuisine":
            return self.pick(CUISINE_POST if self.level == "not" else CUISINE_DISH_POST)
        return self.pick(ATTRIBUTE_LEXICONS[name][self.values[name]]["post"])

    def say(self, name: str) -> str:
        """An attribute said as a sentence of its own ("I only have cash on me.")."""
        if name == "cuisine":
            return self.pick(CAFE_SAY if self.category == "cafe" else CUISINE_SAY)
        return self.pick(ATTRIBUTE_LEXICONS[name][self.values[name]]["say"])

    def noun_phrase(self, definite: bool, located: bool, apart: list[str], compact: bool) -> str:
        """The venue and its attributes; attributes said apart are appended to ``apart``.

        ``definite``: "the nearest ..."; ``located``: the frame already says where.
        """
        names = _requested(self.values)
        if self.level == "implicit" and "cuisine" in names:
            names.remove("cuisine")  # said as a craving, with the need
        self.rng.shuffle(names)
        pre: list[str] = []
        post: list[str] = []
        for name in names:
            if self.level == "not" and name in ("price", "cuisine") and self.rng.random() < 0.5:
                pre.append(name)
            elif not compact and self.rng.random() < 0.25:
                apart.append(self.say(name))
            else:
                post.append(self.post(name))
        head = self.head([n for n in ("price", "cuisine") if n in pre], definite)
        if not (definite or located) and (self.level == "implicit" or self.rng.random() < 0.3):
            head += " " + self.pick(LOCATIONS)
        return f"{head} {_join(post, self.rng)}" if post else head

    def head(self, pre: Sequence[str], definite: bool) -> str:
        """The venue itself, with any price and cuisine adjectives before the noun."""
        if self.level == "slightly":
            return self.pick(CATEGORY_PARAPHRASES[self.category])
        if self.level == "implicit":
            return self.pick(GENERIC_PLACES)
        words = [
            self.pick(PRICE_ADJECTIVES[self.values["price"]])
            if name == "price"
            else CUISINE_NAMES[self.values["cuisine"]]
            for name in pre
        ]
        phrase = " ".join([*words, self.noun()])
        determiner = self.rng.choice(DEFINITE) if definite else _article(phrase)
        return f"{determiner} {phrase}"

    def noun(self) -> str:
        """The venue word, never one that contradicts the price asked ("an upscale crash pad")."""
        price = self.values.get("price", "none")
        entry = {
            slang: [noun for noun in nouns if price not in PRICE_CLASHES.get(noun, ())]
            for slang, nouns in CATEGORY_NOUNS[self.category].items()
        }
        return self.pick(entry)

    def need(self) -> str:
        """The need behind an implicit request, with any cuisine craving ("I'm starving.")."""
        need = self.pick(CATEGORY_NEEDS[self.category])
        if self.values.get("cuisine", "none") != "none":
            cravings = CAFE_CRAVINGS if self.category == "cafe" else CUISINE_CRAVINGS
            need += self.rng.choice([" and ", ", and ", ". "]) + self.pick(cravings)
        return need + self.rng.choice([".", ".", "!"])

    def terse(self) -> str:
        """Telegraphic keywords: "Restaurant. Italian. Cheap. 4+ stars. Now."."""
        words = [capitalise(self.noun())]
        names = _requested(self.values)
        self.rng.shuffle(names)
        for name in names:
            if name == "cuisine":
                words.append(CUISINE_NAMES[self.values["cuisine"]])
            else:
                phrase = self.rng.choice(TERSE[name][self.values[name]])
                words.append(_fill(phrase, self.values, self.slang, self.rng))
        words.append(self.rng.choice(TERSE_ENDS).rstrip("."))
        return " ".join(w + "." for w in words)

    def indifference(self, quiet: Collection[str] = ()) -> str | None:
        """Now and then, a remark on an attribute the speaker does not care about (never on
        those in ``quiet``)."""
        unasked = [
            name
            for name in ATTRIBUTES
            if self.values.get(name, "none") == "none"
            and self.category in APPLICABLE[name]
            and name not in quiet
        ]
        if not unasked or self.rng.random() >= 0.12:
            return None
        lexicon = {"cuisine": CUISINE, **ATTRIBUTE_LEXICONS}[self.rng.choice(unasked)]
        return self.rng.choice(lexicon["none"]["any"])
