"""What an answer of a navi conversation offers: its venues, those it names, the one it proposes.

Shared by the checks and by whoever reads a transcript: the venues are the answer's data
(a list, or ``{"pois": [...]}``), a venue is *named* when its whole name is in the words, and
the one *proposed* is the one named first, else the first returned (single-turn navi's rule).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stellar.usecases.navi.fitness import judged_venue
from stellar.usecases.navi.realiser_lexicon import ATTRIBUTES
from stellar.usecases.navi.request import VenueRequest


def request_of(constraints: Mapping[str, Any]) -> VenueRequest:
    return VenueRequest.from_features({**dict.fromkeys(ATTRIBUTES, "none"), **constraints})


def venues(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, dict):
        data = data.get("pois")
    return [p for p in data or [] if isinstance(p, dict)] if isinstance(data, list) else []


def same(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Whether two venues are one (by id where both have one, else by name)."""
    if a is None or b is None:
        return False
    if a.get("id") is not None and b.get("id") is not None:
        return a["id"] == b["id"]
    return a.get("name") == b.get("name")


def named(answer: str, pois: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The venues ``answer`` names, in the order it names them; a name found only inside a
    longer one ("Da Nang" in "Da Nang Hafenviertel") is not named."""
    text, spans = answer.lower(), []
    for poi in pois:
        name = str(poi.get("name") or "").lower()
        start = text.find(name) if name else -1
        if start >= 0:
            spans.append((start, start + len(name), dict(poi)))
    inside = [
        any(a <= start and end <= b and (a, b) != (start, end) for a, b, _ in spans)
        for start, end, _ in spans
    ]
    found = [span for span, within in zip(spans, inside, strict=True) if not within]
    return [poi for _, _, poi in sorted(found, key=lambda span: span[0])]


def proposed(answer: str, pois: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    venue = judged_venue(answer, pois)
    return None if venue is None else dict(pois[venue.index])
