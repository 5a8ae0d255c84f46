"""What the navigation assistant says (its words and sentences: ``data/assistant_replies.yaml``).

A short answer (under 45 words for a plain request) names the nearest POIs, says what was
relaxed and ends with a follow-up question; how long the driver's message was does not
matter. In LLM mode :func:`llm_messages` gives a model the understood request and the POIs
found.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stellar.llm.base import Message
from stellar.usecases.navi.datafiles import load_data
from stellar.usecases.navi.poi import POI
from stellar.usecases.navi.request import VenueRequest
from stellar.usecases.navi.understanding import Understanding
from stellar.usecases.navi.venue_search import SearchResult
from stellar.usecases.navi.vocabulary import CUISINE_NAMES

_REPLIES: dict[str, Any] = load_data("assistant_replies.yaml")
CATEGORY_NOUNS: dict[str, list[str]] = _REPLIES["category_nouns"]  # singular, plural
PRICE_ADJECTIVES: dict[str, str] = _REPLIES["price_adjectives"]
PAYMENT_CLAUSES: dict[str, str] = _REPLIES["payment_clauses"]
RELAXATION_PHRASES: dict[str, str] = _REPLIES["relaxation_phrases"]
FOLLOW_UP: str = _REPLIES["follow_up"]
CLARIFY: str = _REPLIES["clarify"]
ABUSIVE_REPLY: str = _REPLIES["abusive_reply"]
RUDE_OPENER: str = _REPLIES["rude_opener"]
EMERGENCY_NOTE: str = _REPLIES["emergency_note"]
LLM_SYSTEM_PROMPT: str = _REPLIES["llm_system_prompt"]


def _stars(rating: float) -> str:
    return f"{rating:g} star" + ("" if rating == 1.0 else "s")


def describe(request: VenueRequest, count: int = 2) -> str:
    """``"inexpensive Italian restaurants rated 4 stars or more with parking"``."""
    noun = CATEGORY_NOUNS[request.category][0 if count == 1 else 1]
    words = [PRICE_ADJECTIVES.get(request.price or "", "")]
    words.append(CUISINE_NAMES.get(request.cuisine or "", ""))
    words.append(noun)
    rating = request.min_rating
    if rating is not None:
        words.append(f"rated {_stars(rating)}" + ("" if rating == 5.0 else " or more"))
    if request.parking:
        words.append("with parking")
    words.append(PAYMENT_CLAUSES.get(request.payment or "", ""))
    return " ".join(w for w in words if w)


def poi_summary(poi: POI, km: float | None = None, detailed: bool = False) -> str:
    """``"Trattoria Bella Roma (4.5 stars, medium price, 1.2 km away, Hauptstraße 12)"``."""
    parts = [_stars(poi.rating) if poi.rating is not None else "not rated yet"]
    if poi.price is not None:
        parts.append(f"{poi.price} price")
    if km is not None:
        parts.append(f"{km:.1f} km away")
    if detailed:
        if poi.payment:
            parts.append(f"accepts {_enumerate(list(poi.payment))}")
        if poi.parking is not None:
            parts.append("parking available" if poi.parking else "no parking")
    parts.append(poi.address.split(",")[0])
    return f"{poi.name} ({', '.join(parts)})"


def _enumerate(items: Sequence[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _others(pois: Sequence[POI]) -> str:
    return f"Other options: {_enumerate([poi.name for poi in pois])}." if pois else ""


def _relaxation_phrase(relaxed: list[str], rating: float | None) -> str:
    actions = [RELAXATION_PHRASES[name] for name in relaxed if name in RELAXATION_PHRASES]
    if "min_rating" in relaxed:
        actions.append(
            "ignored the rating"
            if rating is None
            else f"lowered the minimum rating to {_stars(rating)}"
        )
    return _enumerate(actions)


def opening(understood: Understanding, body: str) -> str:
    """``body`` after the opener for a rude message."""
    return f"{RUDE_OPENER} {body}" if understood.rude else body


def compose(understood: Understanding, wanted: VenueRequest, result: SearchResult) -> str:
    """The answer to an understood request (after the optional openers)."""
    if not result.pois:
        extra = ", even after relaxing your other wishes" if len(wanted.to_dict()) > 2 else ""
        return (
            f"Sorry, I couldn't find any {describe(wanted)}{extra}. "
            "Would you like to look for something else?"
        )
    (best, km), *others = result.pois
    sentences = []
    if understood.via == "embedding":
        noun = CATEGORY_NOUNS[wanted.category][0]
        sentences.append(f"It sounds like you are looking for a {noun}.")
    if result.relaxed:
        action = _relaxation_phrase(result.relaxed, result.request.min_rating)
        sentences.append(f"I couldn't find an exact match for {describe(wanted)}, so I {action}.")
        sentences.append(f"The closest match is {poi_summary(best, km)}.")
    else:
        sentences.append(f"I found {result.total} {describe(wanted, result.total)}.")
        sentences.append(f"The nearest is {poi_summary(best, km)}.")
    sentences.append(_others([poi for poi, _ in others]))
    if wanted.category == "hospital":
        sentences.append(EMERGENCY_NOTE)
    sentences.append(FOLLOW_UP)
    return " ".join(s for s in sentences if s)


def llm_messages(
    text: str, wanted: VenueRequest | None, result: SearchResult | None
) -> list[Message]:
    """The prompt of LLM mode: the driver's words plus what the search found."""
    if wanted is None or result is None:
        context = "Understood request: unclear (no kind of place recognised).\nVenues found: none"
    else:
        lines = [f"Understood request: {describe(wanted)}"]
        if result.relaxed:
            lines.append(f"No exact match; relaxed: {', '.join(result.relaxed)}")
        lines.append("Venues found:" if result.pois else "Venues found: none")
        lines += [
            f"{i}. {poi_summary(poi, km, True)}" for i, (poi, km) in enumerate(result.pois, 1)
        ]
        if wanted.category == "hospital":
            lines.append(f"Always add: {EMERGENCY_NOTE}")
        context = "\n".join(lines)
    return [
        {"role": "system", "content": LLM_SYSTEM_PROMPT},
        {"role": "user", "content": f"{context}\n\nDriver: {text}"},
    ]
