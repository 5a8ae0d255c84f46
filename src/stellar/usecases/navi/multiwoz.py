"""Venues from the MultiWOZ databases: real Cambridge venues (MIT licence)."""

from __future__ import annotations

import json
import os
import string
from pathlib import Path
from typing import Any

from stellar.usecases.navi.poi import POI, POIDataError, round_rating

MULTIWOZ_CUISINES: dict[str, str] = {
    "italian": "italian",
    "chinese": "chinese",
    "indian": "indian",
    "french": "french",
    "thai": "thai",
    "mexican": "mexican",
    "japanese": "japanese",
    "vietnamese": "vietnamese",
    "turkish": "turkish",
    "lebanese": "middle eastern",
    "north american": "american",
}
"""MultiWOZ ``food`` -> our cuisine. Foods outside our vocabulary (british, european,
modern european, asian oriental, gastropub, mediterranean, international, spanish,
portuguese, korean, african, seafood) are not forced into it: the cuisine stays unknown."""

MULTIWOZ_PRICES = {"cheap": "low", "moderate": "medium", "expensive": "high"}
MULTIWOZ_HOSPITAL = {
    "name": "Addenbrookes Hospital",
    "address": "Hills Rd, Cambridge CB2 0QQ",
    "lat": 52.1751,
    "lon": 0.1406,
}
"""All MultiWOZ hospital departments belong to this hospital (the file has no address)."""
MULTIWOZ_FILES = ("restaurant_db.json", "hotel_db.json", "attraction_db.json", "hospital_db.json")


def load_multiwoz(directory: str | os.PathLike[str]) -> list[POI]:
    """Venues from the MultiWOZ databases in ``directory`` (real Cambridge venues).

    * restaurants: cuisine by :data:`MULTIWOZ_CUISINES`, price by :data:`MULTIWOZ_PRICES`;
    * hotels and guesthouses -> hotel: ``stars`` -> rating (``"0"``, unrated -> unknown),
      ``parking`` yes/no, price range;
    * attractions of type ``museum`` (museums and galleries) -> museum; other types skipped;
    * hospital departments -> one hospital POI each, named "Addenbrookes Hospital - <dept>"
      at :data:`MULTIWOZ_HOSPITAL`'s address.

    MultiWOZ has no ratings for restaurants and museums and no payment data at all: those stay
    unknown (``None``, empty payment) and never satisfy a constraint asking for them. Names are
    capitalised word by word; addresses get "Cambridge" and the formatted postcode. Ids are
    1..n in file order (restaurants, hotels, museums, hospital departments). Files that are
    absent are skipped; :class:`POIDataError` when none of :data:`MULTIWOZ_FILES` exists.
    """
    directory = Path(directory)
    readers = (_multiwoz_restaurant, _multiwoz_hotel, _multiwoz_museum, _multiwoz_hospital)
    present = [
        (directory / f, r)
        for f, r in zip(MULTIWOZ_FILES, readers, strict=True)
        if (directory / f).is_file()
    ]
    if not present:
        expected = ", ".join(MULTIWOZ_FILES)
        raise POIDataError(f"no MultiWOZ database files ({expected}) in {directory}")
    pois: list[POI] = []
    for file, reader in present:
        entries = json.loads(file.read_text(encoding="utf-8"))
        for entry in entries:
            fields = reader(entry)
            if fields is not None:
                pois.append(POI(id=len(pois) + 1, **fields))
    return pois


def _multiwoz_common(entry: dict[str, Any]) -> dict[str, Any]:
    """Name, address and coordinates of a restaurant, hotel or attraction entry."""
    lat, lon = entry["location"]
    return {
        "name": string.capwords(entry["name"]),
        "address": f"{string.capwords(entry['address'])}, Cambridge {_postcode(entry)}".strip(),
        "lat": float(lat),
        "lon": float(lon),
    }


def _postcode(entry: dict[str, Any]) -> str:
    """``"cb21ab"`` -> ``"CB2 1AB"`` (the inward code is always the last three characters)."""
    code = str(entry.get("postcode", "")).replace(" ", "").upper()
    return f"{code[:-3]} {code[-3:]}" if len(code) > 3 else code


def _multiwoz_restaurant(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        **_multiwoz_common(entry),
        "category": "restaurant",
        "cuisine": MULTIWOZ_CUISINES.get(entry.get("food", "")),
        "rating": None,
        "price": MULTIWOZ_PRICES.get(entry.get("pricerange", "")),
        "payment": (),
        "parking": None,
    }


def _multiwoz_hotel(entry: dict[str, Any]) -> dict[str, Any]:
    stars = entry.get("stars", "0")
    return {
        **_multiwoz_common(entry),
        "category": "hotel",
        "cuisine": None,
        "rating": round_rating(float(stars)) if stars not in ("0", "?", "") else None,
        "price": MULTIWOZ_PRICES.get(entry.get("pricerange", "")),
        "payment": (),
        "parking": {"yes": True, "no": False}.get(entry.get("parking", "")),
    }


def _multiwoz_museum(entry: dict[str, Any]) -> dict[str, Any] | None:
    if entry.get("type") != "museum":
        return None
    return {
        **_multiwoz_common(entry),
        "category": "museum",
        "cuisine": None,
        "rating": None,
        "price": None,
        "payment": (),
        "parking": None,
    }


def _multiwoz_hospital(entry: dict[str, Any]) -> dict[str, Any]:
    hospital = MULTIWOZ_HOSPITAL
    return {
        "name": f"{hospital['name']} - {entry['department']}",
        "address": entry.get("address") or hospital["address"],
        "lat": hospital["lat"],
        "lon": hospital["lon"],
        "category": "hospital",
        "cuisine": None,
        "rating": None,
        "price": None,
        "payment": (),
        "parking": None,
    }
