"""Helpers shared by the word- and character-level perturbation operators."""

from __future__ import annotations

import math
from numbers import Real


def _check_p(p: float) -> None:
    """Raise ``ValueError`` unless ``p`` is a real number in [0, 1]."""
    if isinstance(p, bool) or not isinstance(p, Real) or math.isnan(p) or not 0 <= p <= 1:
        raise ValueError(f"p must be a probability in [0, 1], got {p!r}")


def _match_case(word: str, template: str) -> str:
    """Give ``word`` the capitalisation pattern of ``template`` (upper, title or lower)."""
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
