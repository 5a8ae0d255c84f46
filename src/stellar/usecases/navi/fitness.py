"""NaviQA fitness: response quality f1 and content fitness f2 (rules and example: docs/navi.md).

f1 = 0.55 R + 0.30 D + 0.15 P (paper): R is whether the answer is about the venue request,
D whether it is direct (to the point), P whether it offers a follow-up; each scored 0, 0.5
or 1. Given a :class:`~stellar.fitness.judges.JudgeModel`, an LLM judge scores them
(:class:`~stellar.usecases.navi.judge.NaviResponseJudge`, details ``source: llm`` with its votes
and reason); without one, an offline judge scores them with transparent rules
(``source: offline``; its word lists are in ``data/offline_judge.yaml``). The offline D reads
what the answer says, not only how long it is: sentences that do not help the request
(pleasantries, chit-chat) and returned venues the answer does not name make it less direct.

f2 judges the venue the driver is taken to: of the returned venues, the one the answer
names first, else the first in the list (details ``judged_venue``). Its score is its
weighted agreement with every requested constraint, normalised by the total weight (venue
weight 2, every other constraint 1; ordinal constraints, rating and price, score by
distance, categorical ones by match), as in the paper, with two departures: the paper takes
the *best* returned venue, and here a venue of another category or cuisine than the one
asked for (or of unknown cuisine when one was asked for) scores at most
:data:`WRONG_KIND_CAP`, below the oracle's 0.75, whatever else it matches (details
``wrong_kind``). An empty answer scores 1 when no venue in the database satisfies the
request (an honest "nothing here") and 0 when one does. A request no venue could satisfy is
marked ``excluded``: it never counts as a failure. The use case declares that its fitness
needs the venues (``response.needs_data`` in ``usecase.yaml``), so a configuration whose
system under test returns none is refused at load; a single answer that still comes without
data is scored content 1 with ``content_scored: false``, so only f1 can fail it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stellar.features import Candidate
from stellar.fitness.judges import JudgeModel
from stellar.llm.base import PlannedCall
from stellar.records import EXCLUDED_REASON, Evaluation, Response, TestInput
from stellar.usecases.navi.datafiles import load_data
from stellar.usecases.navi.judge import RESPONSE_WEIGHTS, NaviResponseJudge
from stellar.usecases.navi.request import VenueRequest
from stellar.usecases.navi.sources import open_pois
from stellar.usecases.navi.store import POIDatabase
from stellar.usecases.navi.vocabulary import CUISINE_NAMES, PRICE_LEVELS

WEIGHTS = {
    "category": 2.0,
    "cuisine": 1.0,
    "rating": 1.0,
    "price": 1.0,
    "payment": 1.0,
    "parking": 1.0,
}
RATING_SPAN = 1.5  # from the lowest requestable rating (3.5) to the highest (5.0)
F1_WEIGHTS = RESPONSE_WEIGHTS  # R, D, P
_JUDGE: dict[str, Any] = load_data("offline_judge.yaml")
CATEGORY_WORDS: dict[str, list[str]] = _JUDGE["category_words"]
ANY_CATEGORY_WORD = tuple(word for words in CATEGORY_WORDS.values() for word in words)
INFORMATIVE = tuple(_JUDGE["informative_words"]) + tuple(
    name.lower() for name in CUISINE_NAMES.values()
)
VAGUE_FOLLOW_UP = re.compile(
    rf"\b(?:{'|'.join(map(re.escape, _JUDGE['vague_follow_ups']))})\b", re.IGNORECASE
)
LONG_WORDS = 100
"""Beyond this many words an answer is more than a driver can take in, however useful."""


def poi_score(request: VenueRequest, poi: Mapping[str, Any]) -> float:
    """Weighted, normalised agreement of one returned POI with the request."""
    total = weight = 0.0
    for name, want in request.to_dict().items():
        key = "rating" if name == "min_rating" else name
        w = WEIGHTS[key]
        total += w * (1.0 - constraint_distance(key, want, poi.get(key)))
        weight += w
    return total / weight


def constraint_distance(name: str, want: Any, have: Any) -> float:
    """0 when the POI satisfies the constraint, up to 1 for the worst violation or unknown."""
    if have is None:
        return 1.0
    if name == "rating":  # "at least": no penalty above, growing penalty below
        return min(1.0, max(0.0, (want - float(have)) / RATING_SPAN))
    if name == "price":
        if have not in PRICE_LEVELS:
            return 1.0
        gap = abs(PRICE_LEVELS.index(want) - PRICE_LEVELS.index(have))
        return gap / (len(PRICE_LEVELS) - 1)
    if name == "payment":
        return 0.0 if want in have else 1.0
    if name == "parking":
        return 0.0 if have is True else 1.0
    return 0.0 if have == want else 1.0  # category, cuisine


WRONG_KIND_CAP = 0.5
"""The most a venue of another category or cuisine than the requested one scores: a driver
taken to a French place after asking for sushi is failed, however many other wishes it
meets (a weighted mean alone passes it at 0.75 once one more constraint is asked)."""
KIND = ("category", "cuisine")  # what makes a venue the kind of place asked for


@dataclass(frozen=True)
class JudgedVenue:
    """The returned venue the content score judges, and why that one."""

    index: int  # its position in the returned list, from 0
    name: str | None
    chosen: str  # "named first in the answer" or "first returned"

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "chosen": self.chosen}


def judged_venue(answer: str, pois: Sequence[Mapping[str, Any]]) -> JudgedVenue | None:
    """The venue the driver is taken to: the one the answer names first, else the first one
    returned; None when no venue is returned."""
    if not pois:
        return None
    named = first_named(answer, pois)
    index, chosen = (0, "first returned") if named is None else (named, "named first in the answer")
    return JudgedVenue(index, _name(pois[index]), chosen)


def first_named(answer: str, pois: Sequence[Mapping[str, Any]]) -> int | None:
    """The index of the returned venue whose name starts earliest in ``answer`` (as a whole
    phrase, any case; at one position the longer name wins); None when it names none."""
    found = []
    for index, poi in enumerate(pois):
        name = _name(poi)
        match = _phrase(name).search(answer) if name else None
        if match:
            found.append((match.start(), -len(name or ""), index))
    return min(found)[2] if found else None


def _name(poi: Mapping[str, Any]) -> str | None:
    """A venue's name, None when it has none."""
    name = poi.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    return name.strip()


APOSTROPHES = "'\u2019\u2018\u02bc`"  # a model writes Joe's as Joe\u2019s as often as not


@functools.lru_cache(maxsize=1024)
def _phrase(name: str) -> re.Pattern[str]:
    """``name`` as a whole phrase: any case, any run of white space between its words, any
    apostrophe for an apostrophe."""
    parts = []
    for token in re.split(rf"(\s+|[{APOSTROPHES}])", name):
        if token.isspace():
            parts.append(r"\s+")
        elif token and token in APOSTROPHES:
            parts.append(f"[{APOSTROPHES}]")
        elif token:
            parts.append(re.escape(token))
    return re.compile(rf"(?<!\w){''.join(parts)}(?!\w)", re.IGNORECASE)


def wrong_kind(request: VenueRequest, poi: Mapping[str, Any]) -> list[str]:
    """The requested category or cuisine that ``poi`` does not have (unknown counts as not)."""
    wanted = request.to_dict()
    return [key for key in KIND if key in wanted and poi.get(key) != wanted[key]]


def venue_score(request: VenueRequest, poi: Mapping[str, Any]) -> float:
    """:func:`poi_score`, at most :data:`WRONG_KIND_CAP` for a venue of the wrong kind."""
    score = poi_score(request, poi)
    return min(score, WRONG_KIND_CAP) if wrong_kind(request, poi) else score


def content_fitness(
    request: VenueRequest, answer: str, pois: Sequence[Mapping[str, Any]], satisfiable: bool
) -> float:
    """f2: the judged venue's score; 1 for an honest empty answer to an impossible request."""
    venue = judged_venue(answer, pois)
    if venue is None:
        return 0.0 if satisfiable else 1.0
    return venue_score(request, pois[venue.index])


def content_details(
    request: VenueRequest, answer: str, pois: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Which venue f2 judged, and which of the requested kind it is not."""
    venue = judged_venue(answer, pois)
    if venue is None:
        return {"judged_venue": None}
    return {"judged_venue": venue.to_dict(), "wrong_kind": wrong_kind(request, pois[venue.index])}


def response_dimensions(
    request: VenueRequest, answer: str, pois: Sequence[Mapping[str, Any]]
) -> dict[str, float]:
    """Offline judge of R (relevance), D (directness), P (follow-up), each 0, 0.5 or 1."""
    text = answer.lower()
    category = request.category
    named = [p for p in pois if p.get("name") and p["name"].lower() in text]
    if any(p.get("category") == category for p in named):
        relevance = 1.0
    elif named or _mentions(text, CATEGORY_WORDS[category]) or "?" in text:
        relevance = 0.5  # talks about venues, or asks about the request, but misses it
    else:
        relevance = 0.0
    last = re.split(r"(?<=[.!])\s+", answer.strip())[-1] if answer.strip() else ""
    if "?" in last:
        follow_up = 1.0
    elif "?" in answer or VAGUE_FOLLOW_UP.search(answer):
        follow_up = 0.5
    else:
        follow_up = 0.0
    return {"R": relevance, "D": directness(answer, pois), "P": follow_up}


def sentences(answer: str) -> list[str]:
    """The answer's sentences (split after . ! ? that end a word, not inside "4.5")."""
    return [s for s in re.split(r"(?<=[.!?])\s+", answer.strip()) if s]


def helps(sentence: str, names: Sequence[str]) -> bool:
    """Whether a sentence carries something for the request (see ``data/offline_judge.yaml``)."""
    lower = sentence.lower()
    return (
        any(name in lower for name in names)
        or "?" in sentence
        or re.search(r"\d", sentence) is not None
        or _mentions(lower, ANY_CATEGORY_WORD)
        or _mentions(lower, INFORMATIVE)
    )


def directness(answer: str, pois: Sequence[Mapping[str, Any]]) -> float:
    """D: 1 when every sentence helps the request and the venues found are named.

    0.5 with one padding sentence (or more, while the helpful ones outnumber them), when
    returned venues go unnamed, or beyond ``LONG_WORDS`` words; 0 when nothing in it helps,
    or two or more padding sentences are at least as many as the helpful ones.
    """
    names = [p["name"].lower() for p in pois if p.get("name")]
    named = any(name in answer.lower() for name in names)
    parts = sentences(answer)
    helpful = sum(helps(part, names) for part in parts)
    padding = len(parts) - helpful
    if not helpful or (padding > 1 and padding >= helpful):
        return 0.0
    if padding or (pois and not named) or len(answer.split()) > LONG_WORDS:
        return 0.5
    return 1.0


def _mentions(text: str, words: Sequence[str]) -> bool:
    return bool(words) and _word_starts(tuple(words)).search(text) is not None


@functools.lru_cache(maxsize=16)
def _word_starts(words: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern matching any of ``words`` at the start of a word."""
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + ")")


def has_venue_data(response: Response) -> bool:
    """Whether the SUT returns venues at all (a plain chat model does not)."""
    data = response.data
    return isinstance(data, list) or (isinstance(data, dict) and "pois" in data)


def pois_of(response: Response) -> list[dict[str, Any]]:
    data = response.data
    if isinstance(data, dict):
        data = data.get("pois")
    return [p for p in data or [] if isinstance(p, dict)]


NO_VENUE = "no venue in the database satisfies the request"


class NaviFitness:
    """Scores ``response`` (f1: LLM judge if given, else offline rules) and ``content`` (f2)."""

    objectives = ("response", "content")  # the scores it gives, checked against a configuration

    def __init__(
        self,
        pois: str = "generated",
        database: POIDatabase | None = None,
        judge: JudgeModel | None = None,
    ) -> None:
        self.db = database or open_pois(pois)
        self.judge = NaviResponseJudge(judge) if judge is not None else None

    async def evaluate(
        self, candidate: Candidate, test_input: TestInput, response: Response
    ) -> Evaluation:
        request = VenueRequest.from_features(candidate.values)
        pois = pois_of(response)
        satisfiable = self.db.satisfiable(request)
        if self.judge is None:
            dims = response_dimensions(request, response.text, pois)
            f1 = sum(F1_WEIGHTS[k] * v for k, v in dims.items())
            judged: dict[str, Any] = {**dims, "source": "offline"}
        else:
            judged = await self.judge.score(test_input.text, response.text)
            f1 = judged.pop("response")
            judged["source"] = "llm"
        scored = has_venue_data(response)
        # without venue data f2 cannot be measured: it passes, and the details say so
        f2 = content_fitness(request, response.text, pois, satisfiable) if scored else 1.0
        content = content_details(request, response.text, pois) if scored else {}
        return Evaluation(
            scores={"response": round(f1, 6), "content": round(f2, 6)},
            excluded=not satisfiable,
            details={
                **judged,
                "request": request.to_dict(),
                "poi_exists": satisfiable,
                "content_scored": scored,
                **({} if satisfiable else {EXCLUDED_REASON: NO_VENUE}),
                **content,
            },
        )

    def planned_calls(self, candidate: Candidate | None = None) -> list[PlannedCall]:
        """Model calls per test for ``--dry-run``: the judge's, none for the offline rules."""
        return self.judge.planned_calls() if self.judge is not None else []
