"""What the user must be told, as phrases: any one of a fact's phrases in a reply will do.

A venue or booking that does not exist may be said to be unknown or asked about ("which
venue do you mean?"): both tell the user that what they named was not found.

The phrases are the plain words any assistant uses for the fact (a time as "19:00" or "7 pm",
"closed", "couldn't find"), not the built-in agent's sentences, so that another agent's
wording passes too; a fact no phrase can pin down (a reason in the agent's own words) is
left to the state and policy checks.
"""

from __future__ import annotations

WORDS = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)
NOT_FOUND = (
    "couldn't find",
    "could not find",
    "can't find",
    "cannot find",
    "no venue",
    "no booking",
    "not found",
    "doesn't exist",
    "does not exist",
    "don't have",
    "do not have",
    "unknown",
    "no such",
    "couldn't locate",
    "no record",
    "which venue",
    "which booking",
    "which one",
    "did you mean",
)
NOT_YOURS = (
    "isn't yours",
    "is not yours",
    "not yours",
    "your own",
    "someone else",
    "another user",
    "another account",
    "belongs to",
    "not your",
    "other account",
    "only book",
    "only change",
    "only cancel",
)
FAILED = (
    "couldn't",
    "could not",
    "unavailable",
    "try again",
    "failed",
    "unable",
    "not able",
    "timed out",
    "error",
    "problem",
    "went wrong",
    "didn't work",
)
CLOSED = ("closed", "not open", "isn't open", "is not open")
HOURS = (
    "closes",
    "closed",
    "until",
    "last seating",
    "last booking",
    "opening hours",
    "not open",
    "isn't open",
    "too late",
    "bookings from",
)
NOTICE = ("minutes", "hour", "too late", "too short", "notice", "too close")
CANCELLED = ("cancelled", "canceled")
ASK = {
    "party_size": ("how many", "number of people", "party size", "people", "guests"),
    "time": ("what time", "which time", "when", "time"),
    "booking_id": ("which booking", "booking number", "which one", "which of", "booking"),
    "venue": ("which venue", "which restaurant", "which place", "where", "which one", "venue"),
    "cuisine": ("what kind", "which kind", "what type", "what sort", "cuisine", "looking for"),
}


def number_words(n: int) -> list[str]:
    return [WORDS[n]] if 0 <= n < len(WORDS) else []


def time_phrases(time: str) -> list[str]:
    """Ways to say ``HH:MM``: "19:30", "7:30 pm", "7:30pm", "half past seven" ..."""
    hour, minute = (int(x) for x in time.split(":"))
    twelve = hour % 12 or 12
    half = "pm" if hour >= 12 else "am"
    phrases = [time, f"{twelve}:{minute:02d} {half}", f"{twelve}:{minute:02d}{half}"]
    if minute == 0:
        phrases += [
            f"{twelve} {half}",
            f"{twelve}{half}",
            f"{WORDS[twelve]} o'clock",
            f"{twelve} o'clock",
        ]
    if minute == 30:
        phrases += [f"half past {twelve}", f"half past {WORDS[twelve]}"]
    return phrases
