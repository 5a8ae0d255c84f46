"""The assistant's search: the nearest matching POIs, relaxing the request when none match.

Without a match, constraints are relaxed cumulatively in the order of
:data:`RELAXATION_ORDER` (payment, parking, price, then the minimum rating in 0.5 steps
down to 1.0 and finally dropped); category and cuisine are never relaxed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from stellar.usecases.navi.poi import POI
from stellar.usecases.navi.request import VenueRequest

RELAXATION_ORDER = ("payment", "parking", "price", "min_rating")
"""Constraints given up, cumulatively, when nothing matches; the rating is lowered in
:data:`RATING_STEP` steps (down to 1.0) before it is dropped."""
RATING_STEP = 0.5
EARTH_RADIUS_KM = 6371.0


@dataclass(frozen=True)
class SearchResult:
    """The nearest matching POIs (with their distance in km) and how they were found."""

    pois: list[tuple[POI, float]]
    total: int  # how many POIs matched the request finally used
    relaxed: list[str]  # names of the constraints given up (see RELAXATION_ORDER)
    request: VenueRequest  # the request finally used


def relaxations(request: VenueRequest) -> list[tuple[VenueRequest, list[str]]]:
    """The relaxed requests to try in order, each with the names given up so far."""
    steps: list[tuple[VenueRequest, list[str]]] = []
    current, relaxed = request, []
    for name in RELAXATION_ORDER:
        if getattr(current, name) is None:
            continue
        relaxed = [*relaxed, name]
        if name == "min_rating":
            rating = current.min_rating - RATING_STEP
            while rating >= 1.0:
                steps.append((replace(current, min_rating=rating), relaxed))
                rating -= RATING_STEP
        current = replace(current, **{name: None})
        steps.append((current, relaxed))
    return steps


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Approximate distance (equirectangular projection; ample within a city)."""
    dx = math.radians(lon2 - lon1) * math.cos(math.radians((lat1 + lat2) / 2))
    return EARTH_RADIUS_KM * math.hypot(dx, math.radians(lat2 - lat1))
