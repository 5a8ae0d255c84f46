"""What the built-in agent reads in a user's turn: keywords and patterns, as a small team writes.

Intent by keyword (cancel, change, book, navigate, find), yes and no by the turn's first
words, and slots by pattern: a booking number (``B-1001``), a time (``19:00``, ``7pm``,
``7:30 pm``, ``at 7``, ``noon``), a party size (``for 4``, ``six people``, ``party of 3``),
an account (``user-7``), a cuisine, and the phrases that may name a venue (the words after
"at", "to", "called" ... and runs of capitalised words), which the agent looks up with the
search tool. Later values in a turn override earlier ones. It knows no slang for numbers or
times ("half seven", "a couple of us"), no misspelt keywords and no relative changes ("two
more"): those are the limits a search should find.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from stellar.usecases.navi.vocabulary import CUISINES

NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_NUM = r"(\d{1,2}|" + "|".join(NUMBERS) + r")"
INTENTS = (
    ("cancel", r"\b(cancel|call off|scrap)\b"),
    ("change", r"\b(change|move|reschedule|modify|update)\b"),
    ("book", r"\b(book|reserve|reservation|a table|table for)\b"),
    ("navigate", r"\b(take me|navigate|directions|drive me|route|get me to|bring me)\b"),
    ("find", r"\b(find|looking for|search|recommend|suggest|show me|where can i|is there)\b"),
)
YES = re.compile(
    r"^\W*(yes|yeah|yep|yup|sure|ok|okay|correct|confirm(ed)?|go ahead|please do|do it|"
    r"sounds good|that's right|right|absolutely|of course)\b",
    re.IGNORECASE,
)
NO = re.compile(r"^\W*(no|nope|don't|do not|stop|wait|never ?mind|hold on)\b", re.IGNORECASE)
BOOKING = re.compile(r"\bB-?(\d{3,5})\b", re.IGNORECASE)
ACCOUNT = re.compile(r"\buser-(\d+)\b", re.IGNORECASE)
CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\s*(am|pm|a\.m\.|p\.m\.)?", re.IGNORECASE)
HOUR = re.compile(r"\b(\d{1,2})\s*(am|pm|a\.m\.|p\.m\.)", re.IGNORECASE)
AT_HOUR = re.compile(r"\bat (\d{1,2})\b(?!\s*(?::|\d|people|persons|guests|of us|ppl|pax))")
PARTY = (
    re.compile(
        rf"\b(?:for|party of|table for|group of)\s+{_NUM}\b"
        r"(?!\s*(?::|am\b|pm\b|a\.m|p\.m|o'clock|\.\d|minutes|hours))",
        re.IGNORECASE,
    ),
    re.compile(rf"\b{_NUM}\s+(?:people|persons|guests|adults|of us|pax|ppl)\b", re.IGNORECASE),
)
TRIGGERS = re.compile(r"\b(?:at|to|from|called|named|for|is)\s+", re.IGNORECASE)
STOP = {
    "for",
    "at",
    "to",
    "tonight",
    "today",
    "please",
    "with",
    "and",
    "by",
    "on",
    "instead",
    "pm",
    "am",
    "people",
    "the",
    "a",
    "an",
    "my",
    "me",
    "us",
    "it",
    "there",
    "now",
    "from",
    "in",
    "of",
    "booking",
    "table",
    "thanks",
    "thank",
    "is",
    "it's",
    "open",
}
STARTERS = {
    "i",
    "i'd",
    "i'm",
    "book",
    "please",
    "can",
    "could",
    "would",
    "hi",
    "hello",
    "hey",
    "yes",
    "no",
    "ok",
    "okay",
    "cancel",
    "change",
    "take",
    "find",
    "move",
    "actually",
    "sorry",
    "thanks",
    "thank",
    "so",
    "and",
    "also",
    "then",
    "now",
    "just",
    "good",
    "great",
    "come",
    "every",
    "fine",
}


@dataclass
class Reading:
    """What one turn says: its intent, yes or no, and the slots it sets."""

    intent: str | None = None
    yes: bool = False
    no: bool = False
    slots: dict[str, object] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)  # phrases that may name a venue


def read(text: str) -> Reading:
    """The reading of one user turn."""
    low = text.lower()
    reading = Reading()
    for intent, pattern in INTENTS:
        if re.search(pattern, low):
            reading.intent = intent
            break
    reading.yes, reading.no = bool(YES.search(text)), bool(NO.search(text))
    if found := BOOKING.findall(text):
        reading.slots["booking_id"] = f"B-{found[-1]}"
    if found := ACCOUNT.findall(text):
        reading.slots["account"] = f"user-{found[-1]}"
    if (time := _time(text)) is not None:
        reading.slots["time"] = time
    if (party := _party(text)) is not None:
        reading.slots["party_size"] = party
    cuisines = [c for c in CUISINES if re.search(rf"\b{c}\b", low)]
    if cuisines:
        reading.slots["cuisine"] = cuisines[-1]
    reading.names = venue_phrases(text)
    return reading


def _time(text: str) -> str | None:
    found: list[tuple[int, str]] = []
    for match in CLOCK.finditer(text):
        hour, minute = int(match.group(1)), int(match.group(2))
        found.append((match.start(), _clock(hour, minute, match.group(3))))
    for match in HOUR.finditer(text):
        found.append((match.start(), _clock(int(match.group(1)), 0, match.group(2))))
    for match in AT_HOUR.finditer(text):
        hour = int(match.group(1))
        found.append((match.start(), _clock(hour + 12 if hour < 12 else hour, 0, None)))
    if re.search(r"\bnoon\b", text, re.IGNORECASE):
        found.append((text.lower().index("noon"), "12:00"))
    valid = [(at, t) for at, t in found if t]
    return max(valid)[1] if valid else None


def _clock(hour: int, minute: int, half: str | None) -> str:
    if half and half.lower().startswith("p") and hour < 12:
        hour += 12
    if half and half.lower().startswith("a") and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return ""
    return f"{hour:02d}:{minute:02d}"


def _party(text: str) -> int | None:
    found: list[tuple[int, int]] = []
    for pattern in PARTY:
        for match in pattern.finditer(text):
            word = match.group(1).lower()
            found.append((match.start(), NUMBERS[word] if word in NUMBERS else int(word)))
    return max(found)[1] if found else None


def venue_phrases(text: str) -> list[str]:
    """Phrases that may name a venue: the words after a trigger ("at", "to", "called" ...)
    up to a stop word or a number, then runs of capitalised words (not a sentence's
    first word when it is a common opener)."""
    tokens = re.findall(r"[\w'’&.-]+|[,;:!?()]", text)
    phrases: list[str] = []
    for index, token in enumerate(tokens):
        if token.lower() in {"at", "to", "called", "named", "from"}:
            phrase = _run(tokens[index + 1 :], lambda t: t.lower() not in STOP)
            if phrase:
                phrases.append(phrase)
    capitalised: list[str] = []
    for index, token in enumerate([*tokens, "."]):
        first = index == 0 or tokens[index - 1] in {".", "!", "?"}
        if token[:1].isupper() and not (first and token.lower() in STARTERS) and token.isalpha():
            capitalised.append(token)
            continue
        if token.lower() in {"de", "la", "del", "di", "il", "zum", "zur", "am", "&", "el"} and (
            capitalised
        ):
            capitalised.append(token)
            continue
        if len(capitalised) >= 1 and capitalised[0].lower() not in STARTERS | {"user"}:
            phrases.append(" ".join(capitalised).strip(" &"))
        capitalised = []
    unique: list[str] = []
    for phrase in phrases:
        if phrase and phrase.lower() not in (p.lower() for p in unique):
            unique.append(phrase)
    return unique


def _run(tokens: list[str], keep) -> str:
    words: list[str] = []
    for token in tokens[:7]:
        if not keep(token) or not re.match(r"^[^\W\d_][\w'’&.-]*$", token):
            if words and token.lower() in {"de", "la", "del", "di", "il", "zum", "zur", "am"}:
                words.append(token)
                continue
            break
        words.append(token)
    return " ".join(words).strip(" .")
