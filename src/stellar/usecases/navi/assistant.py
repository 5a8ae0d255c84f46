"""The built-in in-car navigation assistant: the system under test of the offline use case.

It reads only the user's text and works like a small production assistant:

1. **Guard.** Strong profanity is not processed at all: the assistant de-escalates and asks
   the user to rephrase, without searching. Clauses with milder insults are redacted before
   understanding; the answer opens with an apology for the frustration.
2. **Understanding** (:mod:`~stellar.usecases.navi.understanding`): phrase lexicons read
   the venue, cuisine, price, rating, payment and parking wishes. Cuisine is dropped for
   venues that have none (a "German bakery" is a bakery).
3. **Embedding fallback.** Without a venue word, the rest of the utterance (the recognised
   constraint phrases removed) is compared (cosine similarity of sentence embeddings) with
   prototype descriptions of each category; the best category is accepted only at or above
   ``similarity_threshold`` (default :data:`DEFAULT_SIMILARITY_THRESHOLD`), otherwise the
   assistant asks a clarifying question.
4. **Search with relaxation** (:mod:`~stellar.usecases.navi.venue_search`): matches are
   ranked nearest first from the car's position (then by rating); without a match,
   constraints are relaxed (payment, parking, price, rating; never category or cuisine).
5. **Answer** (:mod:`~stellar.usecases.navi.replies`): a short answer naming the nearest
   POIs and ending with a follow-up question; the POIs come back as ``Response.data`` (a
   list of :meth:`POI.to_dict` dicts). Its length depends on what was understood and found,
   never on how long the message was: a driver who talks more does not get more to listen to.

**LLM mode.** With ``llm`` (a chat model), steps 1-4 stay as they are and the model writes
the answer from the retrieved POIs, which still come back as ``Response.data``.

**Conversations.** :meth:`NavigationAssistant.open` starts a session that keeps the request,
the venues offered and the one proposed across turns (:mod:`~stellar.usecases.navi.conversation`);
:meth:`~NavigationAssistant.query` stays single-turn.

Everything is deterministic given the text and the database. The known weak spots are those
of real keyword-plus-embedding assistants: slang outside the lexicon ("grub", "crib"),
homophones ("for stars", "inn" written as "in"), fillers between a number and "stars",
dropped words, vague or indirect needs below the similarity threshold, and rude phrasing.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Collection
from typing import Any

import numpy as np

from stellar.llm.base import ChatModel, PlannedCall, estimate_tokens
from stellar.records import Response
from stellar.text.embeddings import UnknownEmbedder, embedder_factory, get_embedder
from stellar.usecases.navi.conversation import NaviConversation
from stellar.usecases.navi.poi import POI
from stellar.usecases.navi.replies import (
    ABUSIVE_REPLY,
    CLARIFY,
    LLM_SYSTEM_PROMPT,
    compose,
    llm_messages,
    opening,
)
from stellar.usecases.navi.request import VenueRequest
from stellar.usecases.navi.sources import open_pois
from stellar.usecases.navi.store import POIDatabase
from stellar.usecases.navi.understanding import (
    CATEGORY_PROTOTYPES,
    Understanding,
    is_abusive,
    normalise,
    read_constraints,
    redact_insults,
    residual,
)
from stellar.usecases.navi.venue_search import SearchResult, distance_km, relaxations
from stellar.usecases.navi.vocabulary import CUISINE_CATEGORIES

DEFAULT_SIMILARITY_THRESHOLD = 0.5
"""Cosine similarity (all-MiniLM-L6-v2) an implicit request needs to its closest prototype.
Plain needs score 0.55-0.9 ("I'm starving, where can I eat?" 0.66, "my tire is flat" 0.88);
vague ones 0.3-0.5 ("where can I get a bite?" 0.42) and unrelated text 0.2-0.4."""


KEPT_VECTORS = 8_192  # fallback texts whose embedding is kept (~12 MB)


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
        embedder: Any = "minilm-int8",
        similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
        max_pois: int = 3,
        position: tuple[float, float] | None = None,
        pois: str = "generated",
        llm: ChatModel | None = None,
    ) -> None:
        if max_pois < 1:
            raise ValueError(f"max_pois must be >= 1, got {max_pois}")
        if isinstance(embedder, str):
            try:
                embedder_factory(embedder)  # checked now; the model loads in prepare()
            except UnknownEmbedder as exc:
                raise ValueError(f"embedder: {exc}") from None
        self.similarity_threshold = similarity_threshold
        self.max_pois = max_pois
        self._db = db
        self.pois = pois
        self._position = position
        self._embedder = embedder
        self._prototypes: tuple[list[str], np.ndarray] | None = None
        self._db_lock = threading.Lock()
        self._embed_lock = threading.Lock()
        self._vectors: dict[str, np.ndarray] = {}  # fallback text -> embedding (see warm)
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

    def prepare(self) -> None:
        """Open the venues and load the embedder now, not during the first test."""
        _ = self.position
        self.category_scores("a place to go")

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._embed_lock:
            if isinstance(self._embedder, str):
                self._embedder = get_embedder(self._embedder)
            return np.asarray(self._embedder.embed(texts), dtype=np.float32)

    def _vector(self, text: str) -> np.ndarray:
        """The embedding of one fallback text, computed once (in a batch where warmed)."""
        vector = self._vectors.get(text)
        if vector is None:
            vector = self._embed([text])[0]
            self._keep({text: vector})
        return vector

    def _keep(self, vectors: dict[str, np.ndarray]) -> None:
        """Remember ``vectors``, forgetting the oldest beyond ``KEPT_VECTORS`` (a generation's
        texts are embedded just before they are answered, so they are the newest)."""
        self._vectors.update(vectors)
        while len(self._vectors) > KEPT_VECTORS:
            del self._vectors[next(iter(self._vectors))]

    async def warm(self, texts: list[str]) -> None:
        """The SUT interface's optional hook: the texts of a generation about to be sent."""
        await asyncio.to_thread(self.embed_fallbacks, texts)

    def embed_fallbacks(self, texts: list[str]) -> None:
        """Embed, in one batch, the fallback texts of utterances about to be answered.

        A sentence model on a CPU costs ~13 ms for one text and ~4 ms a text in batches of 20
        (its weights are read once per call), so a generation's texts are embedded together;
        :meth:`answer` then finds each vector computed."""
        wanted = {q for t in texts if (q := self._fallback_text(t)) and q not in self._vectors}
        if wanted:
            ordered = sorted(wanted)  # the batch does not depend on the order of ``texts``
            self._keep(dict(zip(ordered, self._embed(ordered), strict=True)))

    def _fallback_text(self, text: str) -> str | None:
        """What :meth:`understand` compares with the prototypes, or None if it needs not."""
        if is_abusive(text):
            return None
        clean = normalise(redact_insults(text)[0])
        if not clean or read_constraints(clean)["category"] is not None:
            return None
        return residual(clean) or clean

    def category_scores(self, text: str) -> dict[str, float]:
        """The best prototype similarity of ``text`` for every category."""
        if self._prototypes is None:
            labels = [c for c, texts in CATEGORY_PROTOTYPES.items() for _ in texts]
            texts = [t for group in CATEGORY_PROTOTYPES.values() for t in group]
            self._prototypes = (labels, self._embed(texts))
        labels, matrix = self._prototypes
        similarities = matrix @ self._vector(text)
        scores: dict[str, float] = {}
        for label, similarity in zip(labels, similarities.tolist(), strict=True):
            scores[label] = max(scores.get(label, -1.0), similarity)
        return scores

    def understand(self, text: str) -> Understanding:
        """What ``text`` asks for (see the module docstring)."""
        if is_abusive(text):
            return Understanding(abusive=True, rude=True)
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
        venue = VenueRequest(**found) if found["category"] else None
        return Understanding(venue, via=via, similarity=similarity, rude=rude)

    def nearest(
        self, request: VenueRequest, exclude: Collection[int] = ()
    ) -> tuple[list[tuple[POI, float]], int]:
        """The ``max_pois`` nearest POIs satisfying ``request`` (none whose id is in
        ``exclude``), and how many match."""
        lat, lon = self.position
        matches = [poi for poi in self.db.query(request, limit=None) if poi.id not in exclude]
        ranked = sorted(
            ((poi, distance_km(lat, lon, poi.lat, poi.lon)) for poi in matches),
            key=lambda pair: (round(pair[1], 3), -(pair[0].rating or 0.0), pair[0].id),
        )
        return ranked[: self.max_pois], len(matches)

    def search(self, request: VenueRequest, exclude: Collection[int] = ()) -> SearchResult:
        """Search with every constraint, then relax them (see :mod:`venue_search`); venues
        whose id is in ``exclude`` (refused in a conversation) are never returned."""
        attempts = [(request, []), *relaxations(request)]
        for used, relaxed in attempts:
            pois, total = self.nearest(used, exclude)
            if pois:
                return SearchResult(pois, total, relaxed, used)
        return SearchResult([], 0, [], request)

    def answer(self, text: str) -> Response:
        """Answer one utterance; ``data`` is the list of returned POIs as dicts."""
        understood = self.understand(text)
        if understood.abusive:
            return Response(text=ABUSIVE_REPLY, data=[])
        if understood.venue is None:
            return Response(text=opening(understood, CLARIFY), data=[])
        result = self.search(understood.venue)
        body = compose(understood, understood.venue, result)
        data = [p.to_dict() for p, _ in result.pois]
        return Response(text=opening(understood, body), data=data)

    __call__ = answer

    async def query(self, text: str) -> Response:
        """The SUT interface: rule-written answers, or model-written ones in LLM mode."""
        if self.llm is None:
            return await asyncio.to_thread(self.answer, text)
        understood = await asyncio.to_thread(self.understand, text)
        if understood.abusive:
            return Response(text=ABUSIVE_REPLY, data=[])
        venue = understood.venue
        result = None if venue is None else await asyncio.to_thread(self.search, venue)
        completion = await self.llm.complete(
            llm_messages(text, venue, result), temperature=0.0, max_tokens=200
        )
        pois = [p.to_dict() for p, _ in result.pois] if result else []
        return Response(text=completion.text.strip(), data=pois)

    async def open(self) -> NaviConversation:
        """A new conversation (the session interface; see :mod:`conversation`)."""
        return NaviConversation(self)

    def planned_calls(self, candidate: Any = None) -> list[PlannedCall]:
        """One answer-writing call per test in LLM mode (for ``--dry-run``)."""
        if self.llm is None:
            return []
        prompt = estimate_tokens(LLM_SYSTEM_PROMPT) + 30 * self.max_pois + 60
        return [PlannedCall(self.llm.name, "sut", prompt, 60)]


def navi_assistant(pois: str = "generated") -> NavigationAssistant:
    """The shared assistant for a venue source (``stellar serve navi``)."""
    return _shared_assistant(pois)


@functools.cache
def _shared_assistant(pois: str) -> NavigationAssistant:
    return NavigationAssistant(pois=pois)
