"""Tidy what a model wrote around a single user utterance, and spot refusals.

Models asked for "one request, nothing else" still add preambles ("Sure! Here's the
request:"), labels ("User:"), speakers ('The driver asks: "..."'), quotes, list numbers,
markdown and notes after the utterance.
:func:`clean_generation` removes these and keeps only the utterance; :func:`is_refusal`
recognises a model declining the task. Both are heuristics, tuned to leave a genuine user
utterance alone ("Okay, find me a cafe", "Sorry, can you find me a bar?").
"""

from __future__ import annotations

import re

__all__ = ["clean_generation", "is_refusal"]

_FENCE = re.compile(r"^\s*```.*$", re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_INTERJECTION = r"(?:sure|certainly|of course|absolutely|okay|ok|alright|great)"
_HERE = r"here(?:['’]s| is| are)"
_NOUN = r"(?:request|utterance|query|example|version|message|input|sentence|one|it)"
# "Sure! Here's a polite request for a cafe:" -- a lead-in ending in a colon.
_LEAD_IN = re.compile(
    rf"^(?:{_INTERJECTION}\b[!.,]*\s*)?"
    rf"{_HERE}\s+(?:[\w-]+\s+){{0,6}}?{_NOUN}\b[^:\n]*:\s*",
    re.IGNORECASE,
)
# A paragraph or line that only introduces the answer ("Sure!", "Certainly, I can help with that.").
_PREAMBLE_PARAGRAPH = re.compile(
    rf"^(?:.*:|{_INTERJECTION}\b[!.,]*(?:\s*(?:i can|i'd be|i would be|i will|i'll|happy to"
    rf"|{_HERE})\b.*)?)$",
    re.IGNORECASE | re.DOTALL,
)
_LABEL = re.compile(
    r"^(?:[^\W\d_]+\s+)?"  # a one-word qualifier: "Driver request:", "Generated input:"
    r"(?:user|driver|passenger|utterance|request|query|input|output|answer|response|message)"
    r"\s*:\s*",
    re.IGNORECASE,
)
_LIST_MARK = re.compile(r"^(?:\d+[.)]|[-*•])\s+")
# "The driver asks:", "User says:", "Here's what the passenger might say:", "A customer
# would ask," -- a speaker (one word, not a pronoun), maybe a modal, a verb of speech.
_SPEAKER = re.compile(
    r"^(?:here(?:['’]s| is) what\s+)?(?:(?:the|a|an)\s+)?"
    r"(?!(?:i|you|he|she|it|we|they|this|that|there|here)\b)(?P<role>[^\W\d_]+)\s+"
    r"(?:(?:might|would|could|may|will|can|should|typically|usually|then)\s+)?"
    r"(?:asks?|asked|says?|said|requests?|requested|writes?|wrote|types?|typed|inquires?"
    r"|quer(?:y|ies)|speaks?|states?)"
    r"(?:\s+(?:something\s+like|like\s+this|the\s+assistant|to\s+the\s+assistant))?"
    r"\s*(?P<sep>[:,])\s*",
    re.IGNORECASE,
)
# speakers whose lead-in is dropped also before an unquoted utterance ("The user asks: ...")
_PEOPLE = (
    "user|driver|passenger|customer|person|client|human|caller|speaker|traveler|traveller"
    "|rider|guest|visitor|tourist|motorist|commuter|someone|somebody"
)
_PERSON = re.compile(rf"(?:{_PEOPLE})s?", re.IGNORECASE)
_ABOUT = (
    r"(?:note|explanation|style|features?|slang|politeness|implicitness|anthropomorphism"
    r"|this (?:request|utterance|query|message|example|version|sentence))\b"
)
_COMMENTARY_LINE = re.compile(rf"^\(?\s*{_ABOUT}", re.IGNORECASE)
_TRAILING_NOTE = re.compile(rf"\s*\(\s*{_ABOUT}[^()]*\)\s*$", re.IGNORECASE)
_QUOTE_PAIRS = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»", "„": "“", "`": "`", "*": "*"}


def clean_generation(text: str) -> str:
    """The single utterance in a model's answer, without wrapping, labels or commentary."""
    text = _FENCE.sub("", text.replace("\r\n", "\n")).replace("**", "").replace("__", "")
    text = _LEAD_IN.sub("", text.strip())
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
    while len(paragraphs) > 1 and _PREAMBLE_PARAGRAPH.match(paragraphs[0]):
        paragraphs.pop(0)
    if not paragraphs:
        return ""
    lines = [line.strip() for line in paragraphs[0].splitlines() if line.strip()]
    while len(lines) > 1 and _PREAMBLE_PARAGRAPH.match(lines[0]):
        lines.pop(0)  # "Sure!" or "Here you go:" on a line of its own
    for i in range(1, len(lines)):
        if _COMMENTARY_LINE.match(lines[i]):
            lines = lines[:i]
            break
    text = lines[0] if _LIST_MARK.match(lines[0]) else " ".join(lines)
    return _unwrap(text)


def _unwrap(text: str) -> str:
    """Strip lead-ins, labels, list marks, quotes and trailing notes until none is left."""
    while True:
        before = text
        text = _LEAD_IN.sub("", text)
        text = _LABEL.sub("", text)
        text = _strip_speaker(text)
        text = _LIST_MARK.sub("", text)
        text = _TRAILING_NOTE.sub("", text)
        text = _strip_quotes(text).strip()
        if text == before:
            return text


def _strip_speaker(text: str) -> str:
    """Drop "The driver asks:" before a quoted utterance, or before any utterance when the
    speaker is a person word and a colon follows; "The hotel says: no rooms" stays."""
    found = _SPEAKER.match(text)
    if found is None:
        return text
    rest = text[found.end() :]
    close = _QUOTE_PAIRS.get(rest[:1])
    end = rest.rfind(close, 1) if close else -1
    quoted = end > 0 and re.fullmatch(r"[\s.,;!?]*", rest[end + 1 :]) is not None
    person = found["sep"] == ":" and _PERSON.fullmatch(found["role"]) is not None
    return rest if rest and (quoted or person) else text


def _strip_quotes(text: str) -> str:
    """Remove quotes around the whole text, also when only punctuation or a note follows."""
    close = _QUOTE_PAIRS.get(text[:1])
    if close is None:
        return text
    end = text.rfind(close, 1)
    if end < 0:
        return text
    rest = text[end + 1 :]
    if re.fullmatch(r"[\s.,;!?]*", rest) or re.match(rf"\s+(?:[-–—(]|{_ABOUT})", rest, re.I):
        return text[1:end]
    return text


# ---------------------------------------------------------------------------- refusals

_CANT = (
    r"(?:can(?:'t| ?not)|am (?:not able|unable) to|'m (?:not able|unable) to|won't|will not"
    r"|must decline|do not feel comfortable|don't feel comfortable)"
)
_TASK = (
    r"(?:help|assist)(?:\s+you)?(?:\s+with\b|\s+(?:that|this)\b|\s*[.!,]|\s*$)"
    r"|comply|fulfil|fulfill|provide|create|generate|produce|engage|participate|role-?play"
)
_REFUSAL_OPENING = re.compile(  # matched at the start only: cheaper than ^ in a search
    rf"(?:(?:i'm|i am)\s+(?:so\s+|very\s+|really\s+)?sorry|sorry|i apologi[sz]e|apologies"
    rf"|unfortunately)[,.!]?\s+(?:but\s+)?(?:as an ai[^,]*,\s*)?"
    rf"i\s*{_CANT}(?:\s+\w+)?\s*(?:{_TASK})"
    rf"|i\s*{_CANT}\s+(?:{_TASK})"
    rf"|i apologi[sz]e,? but\b",
    re.IGNORECASE,
)
_AS_AN_AI = re.compile(
    r"\bas an ai\b(?: language model| assistant)?,? i\b|\bas an? (?:ai )?language model\b",
    re.IGNORECASE,
)


def is_refusal(text: str) -> bool:
    """Whether ``text`` is a model declining the task rather than a user's request.

    Only the opening of the text counts ("I'm sorry, but I can't help with that", "I cannot
    assist with this", "As an AI, I ..."), and an apology must be followed by a refusal to do
    something, so a user's "Sorry, can you find me a cafe?" is not one.
    """
    opening = text.strip().replace("’", "'")[:300]
    return bool(_REFUSAL_OPENING.match(opening) or _AS_AN_AI.search(opening))
