"""Character-level perturbation operators following the METAL framework.

Keyboard typos, character deletion/insertion, letter swaps, extra spaces and leetspeak.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from itertools import groupby

from stellar.text.perturbations._common import _check_p, _match_case

LEET_MAP: dict[str, str] = {
    "a": "4",
    "b": "8",
    "e": "3",
    "g": "9",
    "i": "1",
    "l": "1",
    "o": "0",
    "s": "5",
    "t": "7",
    "z": "2",
}
"""Character substitutions used by ``leetspeak`` (keys are lowercase)."""

_QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _qwerty_neighbours() -> dict[str, str]:
    """Keys adjacent to each letter on a QWERTY keyboard (same row and staggered rows)."""
    neighbours: dict[str, str] = {}
    for r, row in enumerate(_QWERTY_ROWS):
        for i, key in enumerate(row):
            near = [row[j] for j in (i - 1, i + 1) if 0 <= j < len(row)]
            if r > 0:  # the row above is shifted half a key to the left
                above = _QWERTY_ROWS[r - 1]
                near += [above[j] for j in (i, i + 1) if j < len(above)]
            if r < len(_QWERTY_ROWS) - 1:
                below = _QWERTY_ROWS[r + 1]
                near += [below[j] for j in (i - 1, i) if 0 <= j < len(below)]
            neighbours[key] = "".join(sorted(near))
    return neighbours


QWERTY_NEIGHBOURS: dict[str, str] = _qwerty_neighbours()
"""Lowercase letter -> string of its neighbouring keys, used by ``typos``."""


def _map_letter_runs(text: str, transform: Callable[[str], str]) -> str:
    """Apply ``transform`` to each maximal run of alphabetic characters, left to right."""
    return "".join(
        transform("".join(run)) if is_alpha else "".join(run)
        for is_alpha, run in groupby(text, key=str.isalpha)
    )


def typos(text: str, rng: random.Random, p: float = 0.1) -> str:
    """Replace each ASCII letter with a neighbouring QWERTY key with probability ``p``."""
    _check_p(p)
    out = []
    for ch in text:
        near = QWERTY_NEIGHBOURS.get(ch.lower())
        if near and rng.random() < p:
            ch = _match_case(rng.choice(near), ch)
        out.append(ch)
    return "".join(out)


def delete_chars(text: str, rng: random.Random, p: float = 0.1) -> str:
    """Delete each letter with probability ``p``, keeping at least one letter per word."""
    _check_p(p)

    def thin(word: str) -> str:
        kept = "".join(ch for ch in word if rng.random() >= p)
        return kept or word[0]

    return _map_letter_runs(text, thin)


def add_chars(text: str, rng: random.Random, p: float = 0.1) -> str:
    """After each letter, insert a random ASCII letter (same case) with probability ``p``."""
    _check_p(p)
    out = []
    for ch in text:
        out.append(ch)
        if ch.isalpha() and rng.random() < p:
            out.append(_match_case(rng.choice(string.ascii_lowercase), ch))
    return "".join(out)


def swap_chars(text: str, rng: random.Random, p: float = 0.3) -> str:
    """In each word with probability ``p``, swap two adjacent, different inner letters.

    The first and last letters stay in place; words shorter than four letters are untouched.
    """
    _check_p(p)

    def swap(word: str) -> str:
        if len(word) < 4 or rng.random() >= p:
            return word
        positions = [i for i in range(1, len(word) - 2) if word[i] != word[i + 1]]
        if not positions:
            return word
        i = rng.choice(positions)
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]

    return _map_letter_runs(text, swap)


def extra_spaces(text: str, rng: random.Random, p: float = 0.1) -> str:
    """Insert a space between each pair of adjacent characters with probability ``p``."""
    _check_p(p)
    out = []
    for i, ch in enumerate(text):
        out.append(ch)
        if i < len(text) - 1 and rng.random() < p:
            out.append(" ")
    return "".join(out)


def leetspeak(text: str, rng: random.Random, p: float = 0.3) -> str:
    """Replace each character that has a ``LEET_MAP`` entry with probability ``p``."""
    _check_p(p)
    out = []
    for ch in text:
        leet = LEET_MAP.get(ch.lower())
        if leet and rng.random() < p:
            ch = leet
        out.append(ch)
    return "".join(out)
