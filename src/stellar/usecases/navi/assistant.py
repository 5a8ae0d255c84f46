"""The built-in in-car navigation assistant: the system under test of the offline use case.

It reads only the user's text and works like a small production assistant:

1. **Guard.** Strong profanity (:data:`ABUSIVE_WORDS`) is not processed at all: the
   assistant de-escalates and asks the user to rephrase, without searching. Milder insults
   (:data:`INSULT_WORDS`) are redacted clause by clause (clauses are split at punctuation)
   before understanding, so a constraint stated in the same clause as an insult is lost; the
   answer opens with an apology for the frustration.
2. **Understanding** (:meth:`NavigationAssistant.understand`). The text is normalised
   (lower case, accents and punctuation removed, hyphens split) and matched against the
   phrase lexicons below, longest phrase first, one slot per stretch of text ("parking
   garage" is parking, not a garage; "American Express" a card, not a cuisine). The first
   mention wins within a slot; a cuisine name beats a dish word. A cuisine with no venue word
   implies a restaurant ("where can I get sushi"). Ratings are read from a number next to
   "star(s)", after "rated"/"rating", as "4.5+", or from "top rated" (4.5) and "highly rated"
   (4.0); ratings snap up to the 0.5 grid. A price word preceded by a negation within three
   words ("not too expensive", "nothing fancy") means a *medium* price. Cuisine is dropped
   for venues that have none (a "German bakery" is a bakery).
3. **Embedding fallback.** Without a venue word, the rest of the utterance (the recognised
   constraint phrases removed) is compared (cosine similarity of sentence embeddings) with
   prototype descriptions of each category (:data:`CATEGORY_PROTOTYPES`); the best category
   is accepted only at or above ``similarity_threshold`` (default
   :data:`DEFAULT_SIMILARITY_THRESHOLD`), otherwise the assistant asks a clarifying question.
4. **Search with relaxation.** The database is queried with every constraint; matches are
   ranked nearest first from the car's position (then by rating). Without a match,
   constraints are relaxed cumulatively in the order of :data:`RELAXATION_ORDER` (payment,
   parking, price, then the minimum rating in 0.5 steps down to 1.0 and finally dropped);
   category and cuisine are never relaxed. The answer says what was relaxed.
5. **Answer.** A short natural-language answer (under 45 words for a plain request) naming
   the nearest POIs and ending with a follow-up question; the POIs come back as
   ``Response.data`` (a list of :meth:`POI.to_dict` dicts). Messages of :data:`CHATTY_WORDS`
   words or more get a longer, warmer answer that mirrors their tone.

**LLM mode.** With ``llm`` (a chat model), steps 1-4 stay as they are and the model writes
the answer from the retrieved POIs, which still come back as ``Response.data``.

Everything is deterministic given the text and the database. The known weak spots are those
of real keyword-plus-embedding assistants: slang outside the lexicon ("grub", "crib"),
homophones ("for stars", "inn" written as "in"), fillers between a number and "stars",
dropped words, vague or indirect needs below the similarity threshold, and rude phrasing.
"""

from __future__ import annotations

import asyncio
import functools
import math
import re
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stellar.llm.base import ChatModel, Message, PlannedCall, estimate_tokens
from stellar.records import Response
from stellar.text.embeddings import get_embedder
from stellar.usecases.navi.poidb import (
    CUISINE_CATEGORIES,
    POI,
    POIDatabase,
)
from stellar.usecases.navi.sources import open_pois

# --------------------------------------------------------------------------------------------
# Lexicons (normalised form: lower case, no accents, hyphens as spaces; a plural "s"/"es"
# is accepted after every phrase)
# --------------------------------------------------------------------------------------------

CATEGORY_WORDS: dict[str, tuple[str, ...]] = {
    "restaurant": (
        "restaurant", "resto", "place to eat", "somewhere to eat", "something to eat",
        "diner", "eatery", "bistro", "brasserie", "steakhouse", "steak house",
    ),
    "cafe": (
        "cafe", "coffee shop", "coffee house", "coffeehouse", "coffee place", "coffee bar",
        "espresso bar", "tea room", "tearoom", "teahouse", "tea house",
    ),
    "bar": (
        "bar", "pub", "tavern", "brewpub", "cocktail bar", "wine bar", "beer garden",
        "cocktail lounge",
    ),
    "bakery": ("bakery", "bakeries", "bakehouse", "patisserie", "pastry shop", "baker"),
    "supermarket": (
        "supermarket", "grocery store", "grocery", "groceries", "grocer", "food store",
        "convenience store", "hypermarket",
    ),
    "hotel": (
        "hotel", "motel", "inn", "hostel", "guest house", "guesthouse", "bed and breakfast",
        "b and b", "bnb", "place to stay", "somewhere to stay", "room for the night",
        "lodging", "accommodation",
    ),
    "hospital": (
        "hospital", "emergency room", "emergency department", "a and e", "urgent care",
        "clinic", "medical center", "medical centre", "infirmary",
    ),
    "car_repair": (
        "garage", "mechanic", "car repair", "auto repair", "car service", "repair shop",
        "auto shop", "body shop", "tire shop", "tyre shop", "car workshop",
    ),
    "museum": ("museum", "gallery", "galleries", "art gallery", "exhibition"),
}  # fmt: skip

CUISINE_NAMES: dict[str, tuple[str, ...]] = {
    "german": ("german", "bavarian"),
    "indian": ("indian",),
    "italian": ("italian",),
    "middle eastern": ("middle eastern", "lebanese", "syrian", "persian"),
    "french": ("french",),
    "chinese": ("chinese", "cantonese", "szechuan", "sichuan"),
    "japanese": ("japanese",),
    "thai": ("thai",),
    "mexican": ("mexican", "tex mex"),
    "greek": ("greek",),
    "vietnamese": ("vietnamese",),
    "turkish": ("turkish",),
    "american": ("american",),
}
CUISINE_DISHES: dict[str, tuple[str, ...]] = {
    "german": ("schnitzel", "bratwurst", "sauerkraut"),
    "indian": ("curry", "curries", "tandoori", "biryani", "naan"),
    "italian": ("pizza", "pizzeria", "pasta", "trattoria", "osteria", "lasagna", "risotto"),
    "middle eastern": ("falafel", "hummus", "shawarma"),
    "french": ("crepe", "creperie", "ratatouille"),
    "chinese": ("dim sum", "dumpling", "chow mein", "peking duck"),
    "japanese": ("sushi", "sushi bar", "ramen", "sashimi", "tempura"),
    "thai": ("pad thai", "green curry", "tom yum"),
    "mexican": ("taco", "burrito", "quesadilla", "nacho", "taqueria", "enchilada"),
    "greek": ("gyros", "souvlaki", "moussaka", "taverna"),
    "vietnamese": ("pho", "banh mi"),
    "turkish": ("kebab", "kebap", "doner", "doner kebab"),
    "american": ("burger", "hamburger", "cheeseburger", "french fries", "fries", "bbq"),
}  # fmt: skip

PRICE_WORDS: dict[str, tuple[str, ...]] = {
    "low": (
        "cheap", "cheaper", "cheapest", "inexpensive", "budget", "affordable", "low cost",
        "low price", "low priced", "economical", "bargain",
    ),
    "medium": (
        "moderate", "moderately priced", "mid range", "midrange", "mid priced",
        "medium priced", "medium price", "reasonably priced", "reasonable", "fair price",
        "fairly priced", "average price", "average priced",
    ),
    "high": (
        "expensive", "pricey", "pricy", "upscale", "fancy", "high end", "luxury", "luxurious",
        "posh", "fine dining", "exclusive", "classy", "overpriced",
    ),
}  # fmt: skip
NEGATED_PRICE = "medium"
"""The price read from a negated price word: "not too expensive" / "nothing fancy" /
"not that cheap" all mean something in the middle."""

PAYMENT_WORDS: dict[str, tuple[str, ...]] = {
    "cash": ("cash", "pay in cash"),
    "credit card": (
        "credit card", "card", "debit card", "visa", "mastercard", "master card", "amex",
        "american express",
    ),
    "contactless": ("contactless", "contact less", "tap to pay", "tap and pay", "nfc"),
    "mobile payment": (
        "mobile payment", "mobile pay", "apple pay", "google pay", "samsung pay",
        "pay with my phone", "pay with my mobile", "pay with phone", "pay by phone",
        "phone payment",
    ),
}  # fmt: skip

PARKING_WORDS: tuple[str, ...] = (
    "parking", "park", "car park", "parking lot", "parking space", "parking spot",
    "parking garage", "place to park", "somewhere to park", "valet",
)  # fmt: skip

NUMBER_WORDS = {"one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0}
RATING_WORDS = {
    "top rated": 4.5, "best rated": 4.5, "highest rated": 4.5,
    "highly rated": 4.0, "well rated": 4.0, "good reviews": 4.0, "well reviewed": 4.0,
}  # fmt: skip
NEGATIONS = frozenset({"not", "no", "nothing", "never", "isn't", "aren't", "don't", "without"})

ABUSIVE_WORDS = (
    r"\w*fuck\w*", r"shit\w*", r"bullshit", r"asshole\w*", r"bitch\w*", r"bastard\w*",
    r"cunt\w*", r"dick(?:head)?", r"wtf", r"stfu", r"screw you",
)  # fmt: skip
"""Strong profanity: the message is not processed (no search), the assistant de-escalates."""
INSULT_WORDS = (
    r"stupid", r"idiot\w*", r"dumb", r"moron\w*", r"useless", r"incompetent", r"pathetic",
    r"worthless", r"crap\w*", r"damn\w*", r"hell", r"bloody", r"freaking", r"frigging",
    r"shut up", r"jerk", r"loser", r"piece of junk", r"garbage",
)  # fmt: skip
"""Insults and mild swearing: clauses containing them are redacted before understanding."""

CATEGORY_PROTOTYPES: dict[str, tuple[str, ...]] = {
    "restaurant": (
        "I am hungry and want to eat",
        "where can I get a good meal",
        "I would like to have dinner somewhere",
        "let's grab some lunch",
    ),
    "cafe": (
        "I need a coffee",
        "somewhere to have coffee and cake",
        "I'd love a cappuccino right now",
        "a quiet spot for a cup of tea",
    ),
    "bar": (
        "I want to have a drink",
        "let's grab a beer after work",
        "somewhere to have cocktails tonight",
    ),
    "bakery": (
        "I want to buy fresh bread",
        "where can I get bread rolls and pastries",
        "I'd like a croissant or a piece of cake to take away",
    ),
    "supermarket": (
        "I need to buy groceries",
        "I have to pick up milk, eggs and vegetables",
        "we ran out of food at home and need to go shopping",
    ),
    "hotel": (
        "I need somewhere to sleep tonight",
        "we need a room for the night",
        "I am exhausted and need a bed to rest",
    ),
    "hospital": (
        "I need a doctor",
        "someone is hurt and needs medical help",
        "I feel very sick and need to be treated",
        "this is a medical emergency",
        "I have been injured and I am in pain",
    ),
    "car_repair": (
        "my car broke down",
        "my car is making a strange noise",
        "I have a flat tire",
        "the engine warning light is on and the car needs fixing",
    ),
    "museum": (
        "I want to see some art",
        "I'd like to learn about history and look at exhibits",
        "something cultural to do this afternoon",
    ),
}
DEFAULT_SIMILARITY_THRESHOLD = 0.5
"""Cosine similarity (all-MiniLM-L6-v2) an implicit request needs to its closest prototype.
Plain needs score 0.55-0.9 ("I'm starving, where can I eat?" 0.66, "my tire is flat" 0.88);
vague ones 0.3-0.5 ("where can I get a bite?" 0.42) and unrelated text 0.2-0.4."""

RELAXATION_ORDER = ("payment", "parking", "price", "min_rating")
"""Constraints given up, cumulatively, when nothing matches; the rating is lowered in
:data:`RATING_STEP` steps (down to 1.0) before it is dropped."""
RATING_STEP = 0.5
EARTH_RADIUS_KM = 6371.0
CHATTY_WORDS = 30
"""Messages with at least this many words get a longer, mirroring answer."""

# --------------------------------------------------------------------------------------------
# Answer vocabulary
# --------------------------------------------------------------------------------------------

CATEGORY_NOUNS = {
    "restaurant": ("restaurant", "restaurants"), "cafe": ("cafe", "cafes"),
    "bar": ("bar", "bars"), "bakery": ("bakery", "bakeries"),
    "supermarket": ("supermarket", "supermarkets"), "hotel": ("hotel", "hotels"),
    "hospital": ("hospital", "hospitals"), "car_repair": ("car repair shop", "car repair shops"),
    "museum": ("museum", "museums"),
}  # fmt: skip
PRICE_ADJECTIVES = {"low": "inexpensive", "medium": "moderately priced", "high": "upscale"}
PAYMENT_CLAUSES = {
    "cash": "that accept cash", "credit card": "that accept credit cards",
    "contactless": "that accept contactless payment",
    "mobile payment": "that accept mobile payment",
}  # fmt: skip
RELAXATION_PHRASES = {
    "payment": "ignored the payment method",
    "parking": "ignored the parking requirement",
    "price": "ignored the price range",
}
FOLLOW_UP = "Shall I start navigation?"
CLARIFY = (
    "Sorry, I'm not sure what kind of place you are looking for. Could you tell me, for "
    "example, whether you need a restaurant, a cafe, a hotel or a hospital?"
)
ABUSIVE_REPLY = (
    "I'm sorry this is frustrating. I'd like to help, but I can't respond to language like "
    "that. Could you tell me calmly what kind of place you are looking for?"
)
RUDE_OPENER = "I'm sorry for the frustration, I'm doing my best."
CHATTY_OPENER = "Thanks for the details, I'm happy to help!"
EMERGENCY_NOTE = "If this is an emergency, please call 112."
CHATTY_FOLLOW_UP = (
    "Would you like me to start navigation to {name}, or shall I tell you more about the "
    "other options?"
)

# --------------------------------------------------------------------------------------------
# Understanding
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """What the assistant understood; the constraint fields use the database vocabulary."""

    category: str | None = None
    cuisine: str | None = None
    min_rating: float | None = None
    price: str | None = None
    payment: str | None = None
    parking: bool | None = None
    via: str | None = None  # "lexicon", "embedding" or None (no venue understood)
    similarity: float | None = None  # best prototype similarity when the fallback ran
    rude: bool = False  # an insult was found; its clauses were ignored
    abusive: bool = False  # strong profanity: nothing was searched
    chatty: bool = False  # a long message; the answer mirrors it

    def constraints(self) -> dict[str, Any]:
        """Keyword arguments for :meth:`POIDatabase.query` (only the given constraints)."""
        names = ("category", "cuisine", "min_rating", "price", "payment", "parking")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


@dataclass(frozen=True)
class _Phrase:
    slot: str
    value: Any
    pattern: re.Pattern[str]
    priority: int  # lower wins within a slot (cuisine names before dishes)


@dataclass(frozen=True)
class _Hit:
    slot: str
    value: Any
    start: int
    end: int
    priority: int


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(word) for word in phrase.split())
    return re.compile(rf"(?<![\w']){body}(?:e?s)?(?![\w'])")


def _build_phrases() -> list[_Phrase]:
    tables: list[tuple[str, list[tuple[Any, tuple[str, ...]]], int]] = [
        ("category", list(CATEGORY_WORDS.items()), 0),
        ("cuisine", list(CUISINE_NAMES.items()), 0),
        ("cuisine", list(CUISINE_DISHES.items()), 1),
        ("price", list(PRICE_WORDS.items()), 0),
        ("payment", list(PAYMENT_WORDS.items()), 0),
        ("parking", [(True, PARKING_WORDS)], 0),
        ("rating", [(value, (phrase,)) for phrase, value in RATING_WORDS.items()], 0),
    ]
    return [
        _Phrase(slot, value, _phrase_pattern(phrase), priority)
        for slot, table, priority in tables
        for value, phrases in table
        for phrase in phrases
    ]


_PHRASES = _build_phrases()
_NUMBER = r"(\d+(?:\.\d+)?|one|two|three|four|five)(\s+and\s+a\s+half)?"
_RATING_PATTERNS = (
    re.compile(
        rf"(?<![\w.]){_NUMBER}\s*\+?\s*"
        r"(?:(?:or|and)\s+(?:more|better|higher|up|above)\s+)?stars?\b"
    ),
    re.compile(
        rf"\b(?:rated|rating|ratings|reviews)\s+(?:(?:of|at|least|above|over|minimum|min|"
        rf"higher|better|than|no|less|more|greater|a)\s+)*{_NUMBER}(?![\w.])"
    ),
    re.compile(r"(?<![\w.])([1-5](?:\.[05])?)()\s*\+"),
)
_ABUSIVE = re.compile(rf"\b(?:{'|'.join(ABUSIVE_WORDS)})\b")
_INSULT = re.compile(rf"\b(?:{'|'.join(INSULT_WORDS)})\b")
_CLAUSE_SPLIT = re.compile(r"(?<!\d)[.,]|[.,](?!\d)|[!?;:\n]|\s[-–—]+\s")


def normalise(text: str) -> str:
    """Lower case, accents and punctuation removed (decimal points and "+" kept)."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = text.replace("’", "'").replace("&", " and ")
    text = re.sub(r"[^\w\s'.+]|_", " ", text)
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", text)
    text = re.sub(r"(?<!\w)'|'(?!\w)", " ", text)
    return " ".join(text.split())


def redact_insults(text: str) -> tuple[str, bool]:
    """``text`` without the clauses that contain an insult, and whether any was removed."""
    clauses = _CLAUSE_SPLIT.split(text)
    kept = [c for c in clauses if not _INSULT.search(normalise(c))]
    return " , ".join(c.strip() for c in kept if c.strip()), len(kept) < len(clauses)


def _lexicon_hits(text: str) -> list[_Hit]:
    """Non-overlapping phrase matches, longest first (ties: earliest)."""
    candidates = [
        _Hit(p.slot, p.value, m.start(), m.end(), p.priority)
        for p in _PHRASES
        for m in p.pattern.finditer(text)
    ]
    candidates.sort(key=lambda h: (h.start - h.end, h.start))
    taken: list[_Hit] = []
    for hit in candidates:
        if all(hit.end <= t.start or hit.start >= t.end for t in taken):
            taken.append(hit)
    return taken


def _first(hits: list[_Hit], slot: str) -> _Hit | None:
    matching = [h for h in hits if h.slot == slot]
    return min(matching, key=lambda h: (h.priority, h.start), default=None)


def _price(text: str, hit: _Hit | None) -> str | None:
    if hit is None:
        return None
    before = text[: hit.start].split()[-3:]
    negated = any(word in NEGATIONS or word.endswith("n't") for word in before)
    return NEGATED_PRICE if negated else hit.value


def _number(digits: str, half: str | None) -> float:
    value = NUMBER_WORDS.get(digits)
    value = float(digits) if value is None else value
    return value + (0.5 if half else 0.0)


def _rating(text: str, hits: list[_Hit]) -> float | None:
    """The first explicit rating (snapped up to the 0.5 grid), else a rating phrase's."""
    found = [
        (m.start(), _number(m.group(1), m.group(2)))
        for pattern in _RATING_PATTERNS
        for m in pattern.finditer(text)
    ]
    valid = sorted((start, value) for start, value in found if 1.0 <= value <= 5.0)
    if valid:
        return math.ceil(valid[0][1] * 2) / 2
    phrase = _first(hits, "rating")
    return None if phrase is None else phrase.value


def residual(text: str) -> str:
    """``text`` without the phrases the lexicon recognised: what the embedding fallback sees."""
    for hit in sorted(_lexicon_hits(text), key=lambda h: -h.start):
        text = text[: hit.start] + text[hit.end :]
    return " ".join(text.split())


def read_constraints(text: str) -> dict[str, Any]:
    """The constraints the lexicon finds in normalised ``text`` (category possibly None)."""
    hits = _lexicon_hits(text)
    category, cuisine = _first(hits, "category"), _first(hits, "cuisine")
    payment, parking = _first(hits, "payment"), _first(hits, "parking")
    return {
        "category": category.value if category else ("restaurant" if cuisine else None),
        "cuisine": cuisine.value if cuisine else None,
        "min_rating": _rating(text, hits),
        "price": _price(text, _first(hits, "price")),
        "payment": payment.value if payment else None,
        "parking": True if parking else None,
    }


# --------------------------------------------------------------------------------------------
# Answering
# --------------------------------------------------------------------------------------------


def _stars(rating: float) -> str:
    return f"{rating:g} star" + ("" if rating == 1.0 else "s")


def describe(constraints: dict[str, Any], count: int = 2) -> str:
    """``"inexpensive Italian restaurants rated 4 stars or more with parking"``."""
    noun = CATEGORY_NOUNS[constraints["category"]][0 if count == 1 else 1]
    words = [PRICE_ADJECTIVES.get(constraints.get("price"), "")]
    words.append((constraints.get("cuisine") or "").title())
    words.append(noun)
    rating = constraints.get("min_rating")
    if rating is not None:
        words.append(f"rated {_stars(rating)}" + ("" if rating == 5.0 else " or more"))
    if constraints.get("parking"):
        words.append("with parking")
    words.append(PAYMENT_CLAUSES.get(constraints.get("payment"), ""))
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


def relaxations(constraints: dict[str, Any]) -> list[tuple[dict[str, Any], list[str]]]:
    """The relaxed constraint sets to try in order, each with the names given up so far."""
    steps: list[tuple[dict[str, Any], list[str]]] = []
    current, relaxed = dict(constraints), []
    for name in RELAXATION_ORDER:
        if name not in current:
            continue
        relaxed = [*relaxed, name]
        if name == "min_rating":
            rating = current["min_rating"] - RATING_STEP
            while rating >= 1.0:
                steps.append(({**current, "min_rating": rating}, relaxed))
                rating -= RATING_STEP
        current = {k: v for k, v in current.items() if k != name}
        steps.append((current, relaxed))
    return steps


# --------------------------------------------------------------------------------------------
# The assistant
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchResult:
    """The nearest matching POIs (with their distance in km) and how they were found."""

    pois: list[tuple[POI, float]]
    total: int  # how many POIs matched the constraints finally used
    relaxed: list[str]  # names of the constraints given up (see RELAXATION_ORDER)
    constraints: dict[str, Any]  # the constraints finally used


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Approximate distance (equirectangular projection; ample within a city)."""
    dx = math.radians(lon2 - lon1) * math.cos(math.radians((lat1 + lat2) / 2))
    return EARTH_RADIUS_KM * math.hypot(dx, math.radians(lat2 - lat1))


class NavigationAssistant:
    """An in-car assistant that finds POIs for a free-text request (see the module docstring).

    Matching POIs are ranked by distance from ``position`` (lat, lon; default: the centre of
    the database's POIs, where the car is assumed to be), then by rating. Safe to call from
    several threads: the database serialises its queries and the embedder is guarded by a
    lock. ``embedder`` is anything with ``embed(texts) -> unit-norm rows``.
    """

    def __init__(
        self,
        db: POIDatabase | None = None,
        embedder: Any = "minilm",
        similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
        max_pois: int = 3,
        position: tuple[float, float] | None = None,
        pois: str = "generated",
        llm: ChatModel | None = None,
    ) -> None:
        if max_pois < 1:
            raise ValueError(f"max_pois must be >= 1, got {max_pois}")
        self.similarity_threshold = similarity_threshold
        self.max_pois = max_pois
        self._db = db
        self.pois = pois
        self._position = position
        self._embedder = embedder
        self._prototypes: tuple[list[str], np.ndarray] | None = None
        self._db_lock = threading.Lock()
        self._embed_lock = threading.Lock()
        self.llm = llm

    @property
    def db(self) -> POIDatabase:
        """The POI database (the generated default one is opened on first use)."""
        with self._db_lock:
            if self._db is None:
                self._db = open_pois(self.pois)
            return self._db

    @property
    def position(self) -> tuple[float, float]:
        """Where the car is: the given position, or the mean location of all POIs."""
        if self._position is None:
            pois = self.db.all()
            if not pois:
                return (0.0, 0.0)
            self._position = (
                sum(p.lat for p in pois) / len(pois),
                sum(p.lon for p in pois) / len(pois),
            )
        return self._position

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._embed_lock:
            if isinstance(self._embedder, str):
                self._embedder = get_embedder(self._embedder)
            return np.asarray(self._embedder.embed(texts), dtype=np.float32)

    def category_scores(self, text: str) -> dict[str, float]:
        """The best prototype similarity of ``text`` for every category."""
        if self._prototypes is None:
            labels = [c for c, texts in CATEGORY_PROTOTYPES.items() for _ in texts]
            texts = [t for group in CATEGORY_PROTOTYPES.values() for t in group]
            self._prototypes = (labels, self._embed(texts))
        labels, matrix = self._prototypes
        similarities = matrix @ self._embed([text])[0]
        scores: dict[str, float] = {}
        for label, similarity in zip(labels, similarities.tolist(), strict=True):
            scores[label] = max(scores.get(label, -1.0), similarity)
        return scores

    def understand(self, text: str) -> Request:
        """What ``text`` asks for (see the module docstring)."""
        chatty = len(text.split()) >= CHATTY_WORDS
        if _ABUSIVE.search(normalise(text)):
            return Request(abusive=True, rude=True, chatty=chatty)
        kept, rude = redact_insults(text)
        clean = normalise(kept)
        found = read_constraints(clean)
        via, similarity = ("lexicon", None) if found["category"] else (None, None)
        if found["category"] is None and clean:
            scores = self.category_scores(residual(clean) or clean)
            best = max(scores, key=scores.__getitem__)
            similarity = round(scores[best], 4)
            if similarity >= self.similarity_threshold:
                found["category"], via = best, "embedding"
        if found["category"] not in CUISINE_CATEGORIES:
            found["cuisine"] = None
        return Request(**found, via=via, similarity=similarity, rude=rude, chatty=chatty)

    def nearest(self, constraints: dict[str, Any]) -> tuple[list[tuple[POI, float]], int]:
        """The ``max_pois`` nearest POIs satisfying ``constraints``, and how many match."""
        lat, lon = self.position
        matches = self.db.query(**constraints, limit=None)
        ranked = sorted(
            ((poi, distance_km(lat, lon, poi.lat, poi.lon)) for poi in matches),
            key=lambda pair: (round(pair[1], 3), -(pair[0].rating or 0.0), pair[0].id),
        )
        return ranked[: self.max_pois], len(matches)

    def search(self, request: Request) -> SearchResult:
        """Search with every constraint, then relax them in :data:`RELAXATION_ORDER`."""
        constraints = request.constraints()
        attempts = [(constraints, []), *relaxations(constraints)]
        for used, relaxed in attempts:
            pois, total = self.nearest(used)
            if pois:
                return SearchResult(pois, total, relaxed, used)
        return SearchResult([], 0, [], constraints)

    def answer(self, text: str) -> Response:
        """Answer one utterance; ``data`` is the list of returned POIs as dicts."""
        request = self.understand(text)
        if request.abusive:
            return Response(text=ABUSIVE_REPLY, data=[])
        if request.category is None:
            return Response(text=_opening(request, CLARIFY), data=[])
        result = self.search(request)
        body = _compose(request, result)
        return Response(text=_opening(request, body), data=[p.to_dict() for p, _ in result.pois])

    __call__ = answer

    async def query(self, text: str) -> Response:
        """The SUT interface: rule-written answers, or model-written ones in LLM mode."""
        if self.llm is None:
            return await asyncio.to_thread(self.answer, text)
        request = await asyncio.to_thread(self.understand, text)
        if request.abusive:
            return Response(text=ABUSIVE_REPLY, data=[])
        result = None if request.category is None else await asyncio.to_thread(self.search, request)
        completion = await self.llm.complete(
            llm_messages(text, request, result), temperature=0.0, max_tokens=200
        )
        pois = [p.to_dict() for p, _ in result.pois] if result else []
        return Response(text=completion.text.strip(), data=pois)

    def planned_calls(self, candidate: Any = None) -> list[PlannedCall]:
        """One answer-writing call per test in LLM mode (for ``--dry-run``)."""
        if self.llm is None:
            return []
        prompt = estimate_tokens(LLM_SYSTEM_PROMPT) + 30 * self.max_pois + 60
        return [PlannedCall(self.llm.name, "sut", prompt, 60)]


LLM_SYSTEM_PROMPT = (
    "You are the navigation assistant of a car. Answer the driver's request using only the "
    "venues listed under 'Venues found', nearest first; never invent venues or details. Say "
    "plainly when a wish could not be met. Keep the answer under 45 words, suitable to be "
    "read aloud while driving, and end with one short follow-up question."
)


def llm_messages(text: str, request: Request, result: SearchResult | None) -> list[Message]:
    """The prompt of LLM mode: the driver's words plus what the search found."""
    if result is None:
        context = "Understood request: unclear (no kind of place recognised).\nVenues found: none"
    else:
        wanted = request.constraints()
        lines = [f"Understood request: {describe(wanted)}"]
        if result.relaxed:
            lines.append(f"No exact match; relaxed: {', '.join(result.relaxed)}")
        lines.append("Venues found:" if result.pois else "Venues found: none")
        lines += [
            f"{i}. {poi_summary(poi, km, True)}" for i, (poi, km) in enumerate(result.pois, 1)
        ]
        if wanted["category"] == "hospital":
            lines.append(f"Always add: {EMERGENCY_NOTE}")
        context = "\n".join(lines)
    return [
        {"role": "system", "content": LLM_SYSTEM_PROMPT},
        {"role": "user", "content": f"{context}\n\nDriver: {text}"},
    ]


def _opening(request: Request, body: str) -> str:
    openers = [RUDE_OPENER if request.rude else "", CHATTY_OPENER if request.chatty else ""]
    return " ".join(part for part in [*openers, body] if part)


def _compose(request: Request, result: SearchResult) -> str:
    """The answer to an understood request (after the optional openers)."""
    wanted = request.constraints()
    if not result.pois:
        extra = ", even after relaxing your other wishes" if len(wanted) > 2 else ""
        return (
            f"Sorry, I couldn't find any {describe(wanted)}{extra}. "
            "Would you like to look for something else?"
        )
    detailed = request.chatty
    (best, km), *others = result.pois
    sentences = []
    if request.via == "embedding":
        noun = CATEGORY_NOUNS[wanted["category"]][0]
        sentences.append(f"It sounds like you are looking for a {noun}.")
    if result.relaxed:
        action = _relaxation_phrase(result.relaxed, result.constraints.get("min_rating"))
        sentences.append(f"I couldn't find an exact match for {describe(wanted)}, so I {action}.")
        sentences.append(f"The closest match is {poi_summary(best, km, detailed)}.")
    else:
        sentences.append(f"I found {result.total} {describe(wanted, result.total)}.")
        sentences.append(f"The nearest is {poi_summary(best, km, detailed)}.")
    sentences.append(_others([poi for poi, _ in others]))
    if wanted["category"] == "hospital":
        sentences.append(EMERGENCY_NOTE)
    sentences.append(CHATTY_FOLLOW_UP.format(name=best.name) if detailed else FOLLOW_UP)
    return " ".join(s for s in sentences if s)


# --------------------------------------------------------------------------------------------
# Factory for configuration files
# --------------------------------------------------------------------------------------------


@functools.cache
def navi_assistant(pois: str = "generated") -> NavigationAssistant:
    """The shared assistant for a POI source (``stellar serve-navi``)."""
    return NavigationAssistant(pois=pois)


__all__ = [
    "CATEGORY_PROTOTYPES",
    "DEFAULT_SIMILARITY_THRESHOLD",
    "RELAXATION_ORDER",
    "NavigationAssistant",
    "Request",
    "SearchResult",
    "describe",
    "distance_km",
    "navi_assistant",
    "normalise",
    "poi_summary",
    "read_constraints",
    "relaxations",
]
