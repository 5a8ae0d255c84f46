"""Offline realiser: turns a navigation candidate into a user utterance without any LLM.

A candidate's content features (category, cuisine, price, rating, payment, parking) become a
request (:mod:`~stellar.usecases.navi.realiser_content`), its style features (slang,
implicitness, politeness, anthropomorphism) choose the words and sentence frames, and its
word perturbation adds noise with :mod:`stellar.text.perturbations`. All randomness comes
from the ``rng`` argument, so one rng state always gives one utterance, while different
states give varied ones. The phrase tables are in ``data/realiser_phrases.yaml``.

Tones never contradict each other: a rude request is impatient, and only insults the
assistant when it does not also ask for its opinion (empathic requests); a rude empathic
request talks to the assistant as to a person, without warmth. A perturbed request always
carries its perturbation: a composition the operator leaves unchanged (no homophone the
reviewed list allows in it, no place for a filler) is redrawn.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Mapping
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
    COURTEOUS,
    FEELINGS,
    IMPERATIVES,
    PERTURBATION_OPERATORS,
    POLITENESS,
    RUDE_EMPATHIC_FEELINGS,
    RUDE_EMPATHIC_FRAMES,
    SLANG,
)

__all__ = ["MAX_CHARS", "NaviRealiser", "realise", "realise_with_plain"]

MAX_CHARS = 380
ATTEMPTS = 16  # compositions tried; the second half leave out optional remarks


def _frame(request: ContentPhrases, anthropomorphism: str, rude: bool) -> str:
    """A sentence frame for the request's register (a rude empathic one without warmth).

    Definite frames ("the nearest ...") need a venue word, and "Where ..." frames do not fit
    the vague head of an implicit request ("Where can I find somewhere?").
    """

    def fits(frame: str) -> bool:
        if request.level == "implicit" and frame.startswith("Where"):
            return False
        if rude and not _civil(frame):
            return False
        return request.level == "not" or "{the_np}" not in frame

    frames = ANTHROPOMORPHISM[anthropomorphism]
    if rude and anthropomorphism == "empathic":
        frames = RUDE_EMPATHIC_FRAMES
    entry = {k: [f for f in v if fits(f)] for k, v in frames.items()}
    return pick(request.rng, entry, request.slang)


def _civil(phrase: str) -> bool:
    """Whether ``phrase`` is free of courtesy words ("Kindly", "Excuse me")."""
    return not any(word in phrase for word in COURTEOUS)


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
    request: ContentPhrases, anthropomorphism: str, rude: bool, apart: list[str], compact: bool
) -> tuple[str, int]:
    """The request and the position just after its venue phrase (where tails go)."""
    rng = request.rng
    if anthropomorphism == "very directive" and request.level == "not" and rng.random() < 0.35:
        text = request.terse()
        return text, len(text) - 1
    frame = _frame(request, anthropomorphism, rude)
    slot = "{the_np}" if "{the_np}" in frame else "{np}"
    located = re.search(r"\b(around|round|vicinity|near|nearby|close by)\b", frame) is not None
    np = request.noun_phrase(slot == "{the_np}", located, apart, compact)
    before, after = frame.split(slot, 1)
    if not before:
        np = capitalise(np)
    return before + np + after, len(before) + len(np)


def _pooled(*entries: dict[str, list[str]]) -> dict[str, list[str]]:
    """Slang-keyed phrase lists joined level by level."""
    return {slang: [p for entry in entries for p in entry.get(slang, [])] for slang in entries[0]}


def _politeness(
    request: ContentPhrases, sentence: str, tail_at: int, politeness: str, empathic: bool
) -> tuple[str | None, str, str | None]:
    """Opener, decorated request sentence and closer for the politeness level.

    Rude and polite requests always get at least one marked decoration. A rude request
    insults the assistant only when it does not ask for its opinion (``empathic``). A tail
    goes only where the request sentence ends right after the venue phrase.
    """
    rng, slang = request.rng, request.slang
    lexicon = POLITENESS[politeness]
    if politeness == "neutral":
        opener = pick(rng, lexicon["open"], slang) if rng.random() < 0.15 else None
        closer = pick(rng, lexicon["close"], slang) if rng.random() < 0.1 else None
        return opener, sentence, closer
    if politeness == "rude" and not empathic:
        insults = lexicon["insults"]
        lexicon = {
            **lexicon,
            "open": _pooled(lexicon["open"], insults["open"]),
            "close": _pooled(lexicon["close"], insults["close"]),
        }
    ends_after_venue = re.match(r"\s*([.!?]|$)", sentence[tail_at:]) is not None
    options = ["open", "tail", "close"] if ends_after_venue else ["open", "close"]
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


def _compose(
    values: Mapping[str, Any],
    rng: random.Random,
    compact: bool = False,
    quiet: Collection[str] = (),
) -> str:
    """The unperturbed utterance; ``compact`` leaves out optional remarks, ``quiet``: attributes
    it makes no "don't care" remark about."""
    request = ContentPhrases(values, rng)
    slang = request.slang
    anthropomorphism = values.get("anthropomorphism", "directive")
    apart: list[str] = []
    politeness = values.get("politeness", "neutral")
    rude, empathic = politeness == "rude", anthropomorphism == "empathic"
    sentence, tail_at = _request_sentence(request, anthropomorphism, rude, apart, compact)
    opener, sentence, closer = _politeness(request, sentence, tail_at, politeness, empathic)
    if opener is None and rng.random() < {"formal": 0.3, "neutral": 0.15}.get(slang, 0.6):
        opener = rng.choice([o for o in SLANG[slang] if not rude or _civil(o)])

    before: list[str] = []
    after: list[str] = []
    if empathic and not compact and rng.random() < 0.7:
        before.append(pick(rng, RUDE_EMPATHIC_FEELINGS if rude else FEELINGS, slang))
    if request.level == "implicit":
        (before if rng.random() < 0.7 else after).append(request.need())
    remark = None if compact else request.indifference(quiet)
    parts = [*before, sentence, *after, *apart, *(p for p in (remark, closer) if p)]
    if opener and opener.endswith(","):  # "Yo, ...", unless the text opens with one ("Bro, ...")
        if not re.match(r"[\w']+,", parts[0]):
            parts[0] = f"{opener} {decapitalise(parts[0])}"
    elif opener:
        parts.insert(0, opener)
    return tidy(" ".join(parts))


def realise(values: Mapping[str, Any], rng: random.Random, quiet: Collection[str] = ()) -> str:
    """A user utterance expressing the candidate ``values``; deterministic for an rng state.

    The word perturbation named by ``values["word_perturbation"]`` is applied last, with the
    same rng (see :func:`realise_with_plain`). ``quiet``: attributes never remarked on as
    not mattering (a conversation asks for them later).
    """
    return realise_with_plain(values, rng, quiet)[1]


def realise_with_plain(
    values: Mapping[str, Any], rng: random.Random, quiet: Collection[str] = ()
) -> tuple[str, str]:
    """The utterance before and after its word perturbation (:func:`realise` gives the second).

    Utterances longer than ``MAX_CHARS``, and perturbed ones the operator left unchanged, are
    redrawn (after half the attempts made compact); when every attempt is unchanged, the
    last one that fits is returned.
    """
    name = values.get("word_perturbation", "none")
    perturb = PERTURBATION_OPERATORS[name]
    plain = text = ""
    fallback: tuple[str, str] | None = None
    for attempt in range(ATTEMPTS):
        plain = capitalise(_compose(values, rng, attempt >= ATTEMPTS // 2, quiet))
        text = capitalise(perturb(plain, rng))
        if len(text) > MAX_CHARS:
            continue
        if name == "none" or text != plain:
            return plain, text
        fallback = plain, text
    return fallback or (plain, text)


class NaviRealiser:
    """Generator for the navigation use case: candidate -> utterance, without an LLM."""

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput:
        return TestInput(text=realise(candidate.values, rng))
