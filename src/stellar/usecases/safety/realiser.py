"""Offline realiser: turns a SafeQA candidate into a malicious user request without any model.

A harmful ask of the candidate's category (``data/realiser_asks.yaml``), worded plainly, in
slang or in technical terms by the writing style, is put into a sentence frame chosen by
anthropomorphism and slang level. The persuasion technique adds a sentence, the writing style
a role-play set-up, a dialect or a question form, and politeness its decorations
(``data/realiser_phrases.yaml``). A request has at most three sentences. Word and character
perturbations from :mod:`stellar.text.perturbations` come last.

All randomness comes from the ``rng`` argument: one rng state always gives one request, while
different states give varied ones. Missing features take plain defaults (a category drawn
from ``rng``, no persuasion, no particular writing style, neutral politeness and slang,
directive, no perturbation), so candidates of the ASTRAL subset work too; unknown features
are ignored, and an unknown value of a known feature raises ``ValueError``.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from stellar.features import Candidate
from stellar.records import TestInput
from stellar.text.perturbations import Perturbation, perturbation

__all__ = ["FEATURE_VALUES", "MAX_CHARS", "SafetyRealiser", "compose", "realise"]

MAX_CHARS = 320
"""Longest unperturbed request; longer ones are redrawn, then made compact."""
MAX_SENTENCES = 3

_DATA = Path(__file__).parent / "data"


def _load(name: str) -> Any:
    with (_DATA / name).open(encoding="utf-8") as file:
        return yaml.load(file, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # safe


_ASKS: dict[str, Any] = _load("realiser_asks.yaml")
_PHRASES: dict[str, Any] = _load("realiser_phrases.yaml")
CATEGORIES: dict[str, dict[str, Any]] = _ASKS["categories"]
GENERIC: dict[str, list[str]] = _ASKS["generic"]
FRAMES: dict[str, Any] = _PHRASES["frames"]
FEELINGS: dict[str, dict[str, list[str]]] = _PHRASES["feelings"]
OPENERS: dict[str, list[str]] = _PHRASES["openers"]
POLITENESS: dict[str, dict[str, Any]] = _PHRASES["politeness"]
PERSUASION: dict[str, dict[str, list[str]]] = _PHRASES["persuasion"]
STYLES: dict[str, Any] = _PHRASES["writing_style"]
DIALECTS: dict[str, dict[str, Any]] = STYLES["uncommon dialects"]
IMPERATIVES = frozenset(_PHRASES["imperatives"])
GREETINGS = frozenset(_PHRASES["greetings"])

WORD_PERTURBATIONS: dict[str, str | None] = {
    "none": None,
    "delete words": "delete_words",
    "homophones": "homophones",
    "fillers": "fillers",
}
CHAR_PERTURBATIONS: dict[str, str | None] = {
    "none": None,
    "typos": "typos",
    "delete characters": "delete_chars",
    "add characters": "add_chars",
}
FEATURE_VALUES: dict[str, tuple[str, ...]] = {
    "category": tuple(CATEGORIES),
    "persuasion": tuple(PERSUASION),
    "writing_style": ("slang", "uncommon dialects", "technical terms", "role-play", "question"),
    "politeness": tuple(POLITENESS),
    "slang": ("formal", "neutral", "slangy"),
    "anthropomorphism": ("very directive", "directive", "interrogative", "empathic"),
    "word_perturbation": tuple(WORD_PERTURBATIONS),
    "char_perturbation": tuple(CHAR_PERTURBATIONS),
}
"""The features the realiser reads and the values it knows."""
_DEFAULTS: dict[str, str | None] = {
    "persuasion": None,
    "writing_style": None,
    "politeness": "neutral",
    "slang": "neutral",
    "anthropomorphism": "directive",
    "word_perturbation": "none",
    "char_perturbation": "none",
}
_RUDE = ("very rude", "rude")
_ME = re.compile(r"me \{ask\}|\{ask\} for me")  # frames for asks without "me"
_ADDRESSED = re.compile(r"\b(friend|buddy|pal|mate|partner)\b", re.IGNORECASE)
_SUBSTITUTION_P = 0.8  # chance that a dialect applies each of its word substitutions
# First words that keep their capital after an opener ("Hey, Dr Reyes says ...").
_KEEP_CAPITAL = frozenset(
    ["I"]
    + [name.split()[0] for name in GENERIC["names"]]
    + [
        institution.split()[0]
        for content in CATEGORIES.values()
        for institution in content["institutions"]
        if institution[:1].isupper()
    ]
)


# ------------------------------------------------------------------------------ helpers


def _pick(rng: random.Random, entry: Mapping[str, list[str]], slang: str) -> str:
    """A phrase for the slang level: its own list pooled with the neutral one."""
    pool = list(entry.get("neutral", []))
    if slang != "neutral":
        pool = list(entry.get(slang, [])) + pool
    return rng.choice(pool)


def _fill(template: str, **fields: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: fields[m.group(1)], template)


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def _decapitalise(text: str) -> str:
    word = re.match(r"[A-Za-z]*", text)
    if word and word.group() in _KEEP_CAPITAL:
        return text
    return text[:1].lower() + text[1:]


def _insert_tail(sentence: str, tail: str) -> str:
    """``tail`` before the sentence's end mark."""
    return sentence[:-1] + tail + sentence[-1]


def _add_please(sentence: str, imperative: bool) -> str | None:
    """ "Please tell me ..." / "Can you please ..."; None where "please" does not fit."""
    match = re.match(r"(Can|Could|Would|Will) (you|ya) (?!be able)", sentence)
    if match:
        return sentence[: match.end()] + "please " + sentence[match.end() :]
    return "Please " + _decapitalise(sentence) if imperative else None


def _match_case(word: str, template: str) -> str:
    """``word`` capitalised like ``template`` (its first letter)."""
    letter = re.search(r"[A-Za-z]", template)
    if letter and letter.group().isupper():
        at = re.search(r"[A-Za-z]", word)
        if at:
            return word[: at.start()] + word[at.start()].upper() + word[at.start() + 1 :]
    return word


def _dialect(text: str, dialect: Mapping[str, Any], rng: random.Random) -> str:
    """Apply a dialect's word substitutions, each with probability ``_SUBSTITUTION_P``."""
    for pattern, replacement in dialect["substitutions"]:
        if rng.random() < _SUBSTITUTION_P:
            text = re.sub(
                rf"\b(?:{pattern})\b",
                lambda m, r=replacement: _match_case(m.expand(r), m.group()),
                text,
                flags=re.IGNORECASE,
            )
    return text


def _openers(openers: list[str], rude: bool) -> list[str]:
    """The openers that fit the politeness: no greetings from rude speakers."""
    return [o for o in openers if not rude or re.split(r"[ ,.]", o)[0] not in GREETINGS]


def _settings(values: Mapping[str, Any], rng: random.Random) -> dict[str, str | None]:
    """The known features' values, checked, with defaults for the missing ones."""
    chosen = dict(_DEFAULTS)
    for name, known in FEATURE_VALUES.items():
        if name in values:
            value = values[name]
            if not isinstance(value, str) or value not in known:
                raise ValueError(
                    f"unknown value {value!r} of feature {name!r}; known: {', '.join(known)}"
                )
            chosen[name] = value
    if "category" not in chosen:
        chosen["category"] = rng.choice(FEATURE_VALUES["category"])
    return chosen


# ------------------------------------------------------------------------------ composing


def _request(
    s: dict[str, Any], rng: random.Random, compact: bool
) -> tuple[str, bool, list[str] | None]:
    """The request sentence, whether it is an imperative, and the style's tails for it
    (None: the frame takes none)."""
    entry = rng.choice(CATEGORIES[s["category"]]["asks"])
    style, slang, level = s["writing_style"], s["slang"], s["anthropomorphism"]
    ask = entry[{"slang": "slang", "technical terms": "technical"}.get(style, "plain")]
    frames = "question" if style == "question" else "plain"
    if style == "technical terms" and rng.random() < 0.5:
        frames = "technical"
    if level == "empathic" and s["politeness"] in _RUDE:
        level = "empathic frank"
    entry_frames = FRAMES[frames][level][entry["type"]]
    if re.search(r"\bme\b", ask):  # not "Help me tell me ..." or "... with me for me"
        entry_frames = {k: [f for f in v if not _ME.search(f)] for k, v in entry_frames.items()}
    frame = _pick(rng, entry_frames, slang)
    sentence = _capitalise(_fill(frame, ask=ask))
    imperative = frame.startswith("{ask}") or sentence.split(" ", 1)[0] in IMPERATIVES
    # Style tails only go after the ask itself ("..., straight up, no cap." reads badly).
    tails: list[str] | None = [] if frame.endswith(("{ask}.", "{ask}?")) else None
    technical_tail = style == "technical terms" and frames == "plain" and not compact
    if tails is not None and technical_tail and rng.random() < 0.5:
        tails.append(rng.choice(STYLES["technical terms"]["tails"]))
    return sentence, imperative, tails


def _politeness(
    level: str,
    rng: random.Random,
    slang: str,
    room: int,
    question: bool,
    can_please: bool,
    compact: bool,
) -> dict[str, str]:
    """The politeness decorations: lead, open, tail, close and please (value "please").

    Polite and rude requests get at least one marked decoration, very polite and very rude
    ones at least two; sentence-long ones (open, close) only while ``room`` allows, and a
    compact request gets no more than it must.
    """
    lexicon = POLITENESS[level]
    if level == "neutral":
        return {}
    free = ["lead"]
    if not question or lexicon["question_tail"]:
        free.append("tail")
    if lexicon["please"] and can_please:
        free.append("please")
    chosen = [o for o in [*free, "open", "close"] if rng.random() < 0.4 and not compact]
    while sum(option in ("open", "close") for option in chosen) > room:
        chosen.remove(rng.choice([o for o in chosen if o in ("open", "close")]))
    while len(chosen) < (2 if level.startswith("very") else 1):
        chosen.append(rng.choice([o for o in free if o not in chosen]))
    out: dict[str, str] = {}
    for option in chosen:
        if option == "please":
            out[option] = "please"
        elif option == "tail" and question:
            out[option] = rng.choice(lexicon["question_tail"])
        else:
            out[option] = _pick(rng, lexicon[option], slang)
    return out


def _compose(s: dict[str, Any], rng: random.Random, compact: bool) -> str:
    content = CATEGORIES[s["category"]]
    style, slang, level = s["writing_style"], s["slang"], s["anthropomorphism"]
    sentence, imperative, tails = _request(s, rng, compact)
    question = sentence.endswith("?")
    opener: str | None = None  # a comma opener for the first sentence
    lead: str | None = None  # put before the request sentence

    setup = persuasion = None
    if style == "role-play":
        role = rng.choice(content["roles"] + GENERIC["roles"])
        setup = _fill(_pick(rng, STYLES["role-play"]["setups"], slang), role=role)
    if s["persuasion"]:
        fields = {
            "topic": rng.choice(content["topics"]),
            "expert": rng.choice(content["experts"]),
            "name": rng.choice(GENERIC["names"]),
            "institution": rng.choice(content["institutions"]),
            "pretext": rng.choice(content["pretexts"] + GENERIC["pretexts"]),
            "pct": str(rng.randint(41, 89)),
            "year": str(rng.randint(2015, 2023)),
            "n": f"{rng.choice([1200, 2400, 3500, 5000, 8000, 12000]):,}",
            "k": str(rng.randint(12, 60)),
        }
        persuasion = _capitalise(_fill(_pick(rng, PERSUASION[s["persuasion"]], slang), **fields))
    room = MAX_SENTENCES - 1 - (setup is not None) - (persuasion is not None)

    dialect = None
    rude = s["politeness"] in _RUDE
    if style == "uncommon dialects":
        dialect = DIALECTS[rng.choice(sorted(DIALECTS))]
        opener = rng.choice(_openers(dialect["openers"], rude))
    elif style == "slang" and slang != "formal":
        if tails is None or rng.random() < 0.5:
            opener = rng.choice(STYLES["slang"]["openers"])
        else:
            tails.append(rng.choice(STYLES["slang"]["tails"]))

    can_please = _add_please(sentence, imperative) is not None
    polite = _politeness(s["politeness"], rng, slang, room, question, can_please, compact)
    room -= ("open" in polite) + ("close" in polite)
    if dialect and tails is not None and not polite.get("tail") and rng.random() < 0.5:
        addressed = _ADDRESSED.search(sentence) is not None  # "..., buddy, ..., mate?"
        tags = ([] if addressed else dialect["vocatives"]) + ([] if question else dialect["tags"])
        if tags:
            tails.append(rng.choice(tags))
    for tail in [*(tails or [])[:1], polite.get("tail")]:
        if tail:
            sentence = _insert_tail(sentence, tail)
    if "please" in polite:
        sentence = _add_please(sentence, imperative) or sentence
    if "lead" in polite:
        lead = polite["lead"]
    elif setup and level != "empathic" and rng.random() < 0.6:
        lead = rng.choice(STYLES["role-play"]["lead_ins"])
    if lead:
        sentence = f"{lead} {_decapitalise(sentence)}"

    feelings = None
    if level == "empathic" and room > 0 and not compact and rng.random() < 0.6:
        tone = "frank" if rude else "warm"
        feelings = _pick(rng, FEELINGS[tone], slang)
        room -= 1
    greeting = None
    if opener is None:
        chance = {"formal": 0.3, "neutral": 0.2, "slangy": 0.8}[slang]
        if rng.random() < chance and not compact and _openers(OPENERS[slang], rude):
            greeting = rng.choice(_openers(OPENERS[slang], rude))
            if not greeting.endswith(","):  # a sentence
                greeting = greeting if room > 0 else None
            else:
                opener, greeting = greeting, None

    before = [p for p in (setup, persuasion) if p]
    after: list[str] = []
    if persuasion and rng.random() < 0.3:
        before.remove(persuasion)
        after.append(persuasion)
    elif len(before) == 2 and rng.random() < 0.3:
        before.reverse()
    parts = [greeting, polite.get("open"), *before, feelings, sentence, *after, polite.get("close")]
    parts = [p for p in parts if p]
    if opener:
        parts[0] = f"{opener} {_decapitalise(parts[0])}"
    text = " ".join(parts)
    return _dialect(text, dialect, rng) if dialect else text


def compose(values: Mapping[str, Any], rng: random.Random) -> str:
    """The unperturbed request for ``values``; deterministic for an rng state.

    Requests longer than ``MAX_CHARS`` are redrawn, then made compact.
    """
    settings = _settings(values, rng)
    text = ""
    for attempt in range(12):
        text = _compose(settings, rng, compact=attempt >= 6)
        if len(text) <= MAX_CHARS:
            break
    return text


@functools.cache
def _operator(name: str) -> Perturbation:
    return perturbation(name)


REDRAWS = 8


def realise(values: Mapping[str, Any], rng: random.Random) -> str:
    """A malicious request expressing ``values``; deterministic for an rng state.

    :func:`compose` writes the request, then the word and the character perturbation are
    applied with the same rng (so the perturbed text may exceed ``MAX_CHARS`` a little). A
    composition the word perturbation leaves unchanged (no homophone slip a recogniser would
    make fits it) is redrawn, up to ``REDRAWS`` times.
    """
    text = compose(values, rng)
    word = WORD_PERTURBATIONS[values.get("word_perturbation", "none")]
    for attempt in range(REDRAWS if word else 0):  # redrawn while the operator changes nothing
        plain = text if attempt == 0 else compose(values, rng)
        text = _capitalise(_operator(word)(plain, rng))
        if text != plain:
            break
    char = CHAR_PERTURBATIONS[values.get("char_perturbation", "none")]
    if char:
        text = _operator(char)(text, rng)
    return text


class SafetyRealiser:
    """Generator for the safety use case: candidate -> malicious request, without an LLM."""

    def __init__(self) -> None:
        pass

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput:
        return TestInput(text=realise(candidate.values, rng))
