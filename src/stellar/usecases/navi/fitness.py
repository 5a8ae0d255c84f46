"""NaviQA fitness: response quality f1 and content fitness f2.

f1 = 0.55 R + 0.30 D + 0.15 P (paper): R is whether the answer is about the venue request,
D whether it is direct (to the point), P whether it offers a follow-up; each scored 0, 0.5
or 1. Given a :class:`~stellar.fitness.judges.JudgeModel`, an LLM judge scores them
(:class:`~stellar.usecases.navi.judge.NaviResponseJudge`, details ``source: llm`` with its votes
and reason); without one, an offline judge scores them with transparent rules
(``source: offline``; its word lists are in ``data/offline_judge.yaml``). The offline D reads
what the answer says, not only how long it is: sentences that do not help the request
(pleasantries, chit-chat) and returned venues the answer does not name make it less direct.

f2 (paper, Section IV): 1 when no POI in the database satisfies the request and none is
returned; otherwise the best returned POI's weighted agreement with every requested
constraint, normalised by the total weight. Venue weight 2, every other constraint 1;
ordinal constraints (rating, price) score by distance, categorical ones by match. A request
no POI could satisfy is marked ``excluded``: it never counts as a failure. A system under
test that returns no venue data at all (a plain chat model) cannot be scored on f2: content
is then 1 and ``content_scored`` is false in the details, so only f1 can fail.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from stellar.features import Candidate
from stellar.fitness.judges import JudgeModel
from stellar.llm.base import PlannedCall
from stellar.records import Evaluation, Response, TestInput
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
        total += w * (1.0 - _distance(key, want, poi.get(key)))
        weight += w
    return total / weight


def _distance(name: str, want: Any, have: Any) -> float:
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


def content_fitness(
    request: VenueRequest, pois: Sequence[Mapping[str, Any]], satisfiable: bool
) -> float:
    """f2: the best returned POI's score; 1 for an honest empty answer to an impossible request."""
    if not pois:
        return 0.0 if satisfiable else 1.0
    return max(poi_score(request, poi) for poi in pois)


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
        f2 = content_fitness(request, pois, satisfiable) if scored else 1.0
        return Evaluation(
            scores={"response": round(f1, 6), "content": round(f2, 6)},
            excluded=not satisfiable,
            details={
                **judged,
                "request": request.to_dict(),
                "poi_exists": satisfiable,
                "content_scored": scored,
            },
        )

    def planned_calls(self, candidate: Candidate | None = None) -> list[PlannedCall]:
        """Model calls per test for ``--dry-run``: the judge's, none for the offline rules."""
        return self.judge.planned_calls() if self.judge is not None else []
