"""Seeded text perturbation operators that add realistic noise to test utterances.

Word-level operators (:mod:`.words`, :mod:`.homophones`) follow the STELLAR paper
(function-word deletion, speech fillers, homophone substitution), kept to what a speaker says
and a speech recogniser writes: fillers where people hesitate, at most two, and homophones
from a reviewed list of plausible slips (``data/homophones.yaml``). Character-level
operators (:mod:`.characters`) follow the METAL framework (keyboard typos, character
deletion/insertion, letter swaps, extra spaces, leetspeak).

Every operator has the signature ``(text, rng, p=DEFAULT) -> str``: it draws all randomness
from ``rng`` (so a given seed always gives the same output), returns ``text`` unchanged for
``p == 0`` and raises ``ValueError`` unless ``0 <= p <= 1``. ``PERTURBATIONS`` maps names to
operators and ``perturb`` applies one by name.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from stellar.registry import plugins
from stellar.text.perturbations._common import _check_p
from stellar.text.perturbations.characters import (
    LEET_MAP,
    QWERTY_NEIGHBOURS,
    add_chars,
    delete_chars,
    extra_spaces,
    leetspeak,
    swap_chars,
    typos,
)
from stellar.text.perturbations.homophones import (
    HOMOPHONE_WORDS,
    cmudict_path,
    homophone_index,
    homophone_rules,
    homophones,
)
from stellar.text.perturbations.words import (
    FILLERS,
    FUNCTION_WORDS,
    MAX_FILLERS,
    add_fillers,
    delete_words,
)

__all__ = [
    "FILLERS",
    "FUNCTION_WORDS",
    "HOMOPHONE_WORDS",
    "LEET_MAP",
    "MAX_FILLERS",
    "PERTURBATIONS",
    "QWERTY_NEIGHBOURS",
    "Perturbation",
    "add_chars",
    "add_fillers",
    "cmudict_path",
    "delete_chars",
    "delete_words",
    "extra_spaces",
    "homophone_index",
    "homophone_rules",
    "homophones",
    "identity",
    "leetspeak",
    "perturb",
    "perturbation",
    "swap_chars",
    "typos",
]

Perturbation = Callable[..., str]


def identity(text: str, rng: random.Random, p: float = 0.0) -> str:
    """Return ``text`` unchanged (the "none" perturbation)."""
    _check_p(p)
    return text


PERTURBATIONS: dict[str, Perturbation] = {
    "none": identity,
    "delete_words": delete_words,
    "fillers": add_fillers,
    "homophones": homophones,
    "typos": typos,
    "delete_chars": delete_chars,
    "add_chars": add_chars,
    "swap_chars": swap_chars,
    "extra_spaces": extra_spaces,
    "leetspeak": leetspeak,
}
"""Perturbation name -> operator."""


def perturbation(name: str) -> Perturbation:
    """The operator called ``name``: a built-in or one registered as ``stellar.perturbation``."""
    registered = plugins("perturbation")
    if name not in registered:
        raise ValueError(f"unknown perturbation {name!r}; known: {', '.join(registered)}")
    return registered[name].load()


def perturb(name: str, text: str, seed_or_rng: int | random.Random, p: float | None = None) -> str:
    """Apply the perturbation ``name`` to ``text``.

    ``seed_or_rng`` is a ``random.Random`` or a seed for a fresh one; ``p=None`` uses the
    operator's default probability. Raises ``ValueError`` for an unknown name.
    """
    operator = perturbation(name)
    rng = seed_or_rng if isinstance(seed_or_rng, random.Random) else random.Random(seed_or_rng)
    return operator(text, rng) if p is None else operator(text, rng, p)
