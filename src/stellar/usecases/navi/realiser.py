"""Offline realiser: turns a navigation candidate into a user utterance without any LLM.

A candidate's content features (category, cuisine, price, rating, payment, parking) become a
request (:mod:`~stellar.usecases.navi.realiser_content`), its style features (slang,
implicitness, politeness, anthropomorphism) choose the words and sentence frames, and its
word perturbation adds noise with :mod:`stellar.text.perturbations`. All randomness comes
from the ``rng`` argument, so one rng state always gives one utterance, while different
states give varied ones. The phrase tables are in ``data/realiser_phrases.yaml``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from stellar.features import Candidate
from stellar.records import TestInput
from stellar.usecases.navi.realiser_content import (
    ContentPhrases,
    capitalise,
    decapitalise,
    pick,
    tidy,
)
from stellar.usecases.navi.realiser_lexicon import (
    ANTHROPOMORPHISM,
    FEELINGS,
    IMPERATIVES,
    PERTURBATION_OPERATORS,
    POLITENESS,
    SLANG,
)

__all__ = ["MAX_CHARS", "NaviRealiser", "realise"]

MAX_CHARS = 380


def _frame(request: ContentPhrases, anthropomorphism: str) -> str:
    """A sentence frame for the request's register.

    Definite frames ("the nearest ...") need a venue word, and "Where ..." frames do not fit
    the vague head of an implicit request ("Where can I find somewhere?").
    """

    def fits(frame: str) -> bool:
        if request.level == "implicit" and frame.startswith("Where"):
            return False
        return request.level == "not" or "{the_np}" not in frame

    entry = {k: [f for f in v if fits(f)] for k, v in ANTHROPOMORPHISM[anthropomorphism].items()}
    return pick(request.rng, entry, request.slang)


def _insert_tail(sentence: str, start: int, tail: str) -> str:
    """Put ``tail`` before the first sentence-ending mark at or after ``start``."""
    match = re.compile(r"[.!?](?=\s|$)").search(sentence, start)
    end = match.start() if match else len(sentence)
    return sentence[:end] + tail + sentence[end:]


def _add_please(sentence: str) -> str | None:
    """ "Please find ..." / "Can you please find ..."; None where it does not fit."""
    if re.match(r"(Can|Could|Would) you ", sentence):
        return re.sub(r"^(\w+ you) ", r"\1 please ", sentence)
    if sentence.split(" ", 1)[0] in IMPERATIVES:
        return "Please " + decapitalise(sentence)
    return None


def _request_sentence(
    request: ContentPhrases, anthropomorphism: str, apart: list[str], compact: bool
) -> tuple[str, int]:
    """The request and the position just after its venue phrase (where tails go)."""
    rng = request.rng
    if anthropomorphism == "very directive" and request.level == "not" and rng.random() < 0.35:
        text = request.terse()
        return text, len(text) - 1
    frame = _frame(request, anthropomorphism)
    slot = "{the_np}" if "{the_np}" in frame else "{np}"
    located = re.search(r"\b(around|vicinity|near|close by)\b", frame) is not None
    np = request.noun_phrase(slot == "{the_np}", located, apart, compact)
    before, after = frame.split(slot, 1)
    if not before:
        np = capitalise(np)
    return before + np + after, len(before) + len(np)


def _politeness(
    request: ContentPhrases, sentence: str, tail_at: int, politeness: str
) -> tuple[str | None, str, str | None]:
    """Opener, decorated request sentence and closer for the politeness level.

    Rude and polite requests always get at least one marked decoration.
    """
    rng, slang = request.rng, request.slang
    lexicon = POLITENESS[politeness]
    if politeness == "neutral":
        opener = pick(rng, lexicon["open"], slang) if rng.random() < 0.15 else None
        closer = pick(rng, lexicon["close"], slang) if rng.random() < 0.1 else None
        return opener, sentence, closer
    options = ["open", "tail", "close"]
    please = _add_please(sentence) if politeness == "polite" else None
    if please:
        options.append("please")
    chosen = [option for option in options if rng.random() < 0.35] or [rng.choice(options)]
    if "please" in chosen:
        sentence = please
    elif "tail" in chosen:
        sentence = _insert_tail(sentence, tail_at, pick(rng, lexicon["tail"], slang))
    opener = pick(rng, lexicon["open"], slang) if "open" in chosen else None
    closer = pick(rng, lexicon["close"], slang) if "close" in chosen else None
    return opener, sentence, closer


def _compose(values: Mapping[str, Any], rng: random.Random, compact: bool = False) -> str:
    """The unperturbed utterance; ``compact`` leaves out optional remarks."""
    request = ContentPhrases(values, rng)
    slang = request.slang
    anthropomorphism = values.get("anthropomorphism", "directive")
    apart: list[str] = []
    sentence, tail_at = _request_sentence(request, anthropomorphism, apart, compact)
    opener, sentence, closer = _politeness(
        request, sentence, tail_at, values.get("politeness", "neutral")
    )
    if opener is None and rng.random() < {"formal": 0.3, "neutral": 0.15}.get(slang, 0.6):
        opener = rng.choice(SLANG[slang])

    before: list[str] = []
    after: list[str] = []
    if anthropomorphism == "empathic" and not compact and rng.random() < 0.7:
        before.append(pick(rng, FEELINGS, slang))
    if request.level == "implicit":
        (before if rng.random() < 0.7 else after).append(request.need())
    remark = None if compact else request.indifference()
    parts = [*before, sentence, *after, *apart, *(p for p in (remark, closer) if p)]
    if opener and opener.endswith(","):
        parts[0] = f"{opener} {decapitalise(parts[0])}"
    elif opener:
        parts.insert(0, opener)
    return tidy(" ".join(parts))


def realise(values: Mapping[str, Any], rng: random.Random) -> str:
    """A user utterance expressing the candidate ``values``; deterministic for an rng state.

    The word perturbation named by ``values["word_perturbation"]`` is applied last, with the
    same rng. Utterances longer than ``MAX_CHARS`` are redrawn, then made compact.
    """
    perturb = PERTURBATION_OPERATORS[values.get("word_perturbation", "none")]
    text = ""
    for attempt in range(12):
        text = capitalise(perturb(_compose(values, rng, compact=attempt >= 6), rng))
        if len(text) <= MAX_CHARS:
            break
    return text


class NaviRealiser:
    """Generator for the navigation use case: candidate -> utterance, without an LLM."""

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput:
        return TestInput(text=realise(candidate.values, rng))
