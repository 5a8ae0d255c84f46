"""A conversation with the navigation assistant: a small dialogue-state tracker.

:meth:`NavigationAssistant.open` returns a :class:`NaviConversation` (a
:class:`~stellar.dialogue.session.Session`). It keeps a :class:`DialogueState`: the active
request, the requests of earlier goals (by category), the last list of venues offered, the
venue proposed and those the user refused. Each turn is read by
:func:`~stellar.usecases.navi.conversation_acts.read_turn` (the assistant's own lexicons,
plus negations, withdrawn constraints, references and acts) and handled by the first rule
that applies:

1. a reference to the last list ("the second one", a venue's name) chooses that venue;
2. a venue word of another category starts a new goal; the old one is remembered, and a
   category talked about before comes back with its constraints ("the bar, please");
3. with no goal yet, the embedding fallback may find one (else a clarifying question; the
   constraints said so far wait for the category);
4. a negated category ("I don't want a restaurant anymore") forgets the goal;
5. a yes/no question about "it" ("does it take cash?") is answered from the proposed venue
   (the request stays as it was);
6. "back to ..." without a category returns to the latest earlier goal (the active one
   when there is none), with the turn's constraints applied;
7. new, corrected, negated or withdrawn constraints update the request; it is searched
   again (an implicit need said with a constraint, "I'm starving, somewhere cheap", only
   updates the active goal: the fallback runs on turns that say nothing else);
8. navigate / confirm starts the route to the proposed venue, details describe it, reject
   proposes the next one of the list (or searches again without the refused ones), "that
   one" chooses it, close says goodbye;
9. otherwise the embedding fallback may start a new goal; failing that, a short reply keeps
   the state.

Every reply's ``data`` is the venues it is about (``POI.to_dict()``), the one it means
first, as the single-turn answer returns them. Abusive and rude turns are handled as in
:meth:`NavigationAssistant.answer`; an abusive turn leaves the state as it was. The first
turn of a plain request is answered exactly as the single-turn assistant would.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stellar.records import Response
from stellar.usecases.navi.conversation_acts import TurnReading, named_venue, read_turn
from stellar.usecases.navi.poi import POI
from stellar.usecases.navi.replies import (
    ABUSIVE_REPLY,
    CATEGORY_NOUNS,
    CLARIFY,
    FOLLOW_UP,
    RUDE_OPENER,
    compose,
    describe,
    llm_messages,
    poi_summary,
)
from stellar.usecases.navi.request import VenueRequest
from stellar.usecases.navi.understanding import Understanding, is_abusive, residual
from stellar.usecases.navi.venue_search import SearchResult
from stellar.usecases.navi.vocabulary import CUISINE_CATEGORIES

if TYPE_CHECKING:
    from stellar.usecases.navi.assistant import NavigationAssistant

Offer = tuple[POI, float]  # a venue and its distance in km
Search = tuple[VenueRequest, SearchResult]


@dataclass
class DialogueState:
    """What the conversation remembers between turns."""

    request: VenueRequest | None = None  # the active goal
    earlier: dict[str, VenueRequest] = field(default_factory=dict)  # category -> last request
    pending: dict[str, Any] = field(default_factory=dict)  # constraints said before a category
    offered: list[Offer] = field(default_factory=list)  # the last list of venues offered
    proposed: Offer | None = None  # the venue proposed or chosen
    rejected: set[int] = field(default_factory=set)  # ids refused for the active goal
    navigating: POI | None = None  # the venue the route was started to


class NaviConversation:
    """One conversation with the assistant (see the module docstring); deterministic given
    the texts. :meth:`reply` is the synchronous turn (the HTTP server's)."""

    def __init__(self, assistant: NavigationAssistant) -> None:
        self.assistant = assistant
        self.state = DialogueState()
        self.closed = False

    async def send(self, text: str) -> Response:
        """The reply to the user's next turn; in LLM mode the model writes search answers."""
        if self.closed:
            raise RuntimeError("the conversation is closed")
        response, search = await asyncio.to_thread(self._turn, text)
        llm = self.assistant.llm
        if llm is None or search is None:
            return response
        completion = await llm.complete(
            llm_messages(text, *search), temperature=0.0, max_tokens=200
        )
        return Response(text=completion.text.strip(), data=response.data)

    async def close(self) -> None:
        """End the conversation: the state is forgotten."""
        self.closed = True
        self.state = DialogueState()

    def reply(self, text: str) -> Response:
        """The rule-written reply to the user's next turn."""
        return self._turn(text)[0]

    def _turn(self, text: str) -> tuple[Response, Search | None]:
        if is_abusive(text):
            return Response(text=ABUSIVE_REPLY, data=[]), None
        turn = read_turn(text)
        response, search = self._handle(turn)
        if turn.rude:
            response = Response(text=f"{RUDE_OPENER} {response.text}", data=response.data)
        return response, search

    def _handle(self, turn: TurnReading) -> tuple[Response, Search | None]:
        state, goal = self.state, self.state.request
        category = turn.found["category"]
        implied = category is not None and not turn.category_said
        if implied and goal is not None and goal.category in CUISINE_CATEGORIES:
            category = goal.category  # "what about Italian?" while looking for cafes
        if state.offered and (goal is None or category in (None, goal.category)):
            index = self._reference(turn)
            if index is not None:
                return self._choose(index, turn), None
        if category is not None and (goal is None or category != goal.category):
            return self._new_goal(category, turn, Understanding(via="lexicon"))
        if goal is None:
            return self._without_goal(turn)
        if turn.negated.get("category") == goal.category and category is None:
            return self._forget(goal), None
        if turn.question and state.proposed is not None and turn.act in (None, "details"):
            return self._answer_question(turn, state.proposed), None
        if turn.back:
            latest = self._latest_earlier()
            if latest is None:  # "back to the supermarket" while still looking for one
                return self._refine(goal, turn)
            return self._new_goal(latest, turn, Understanding(via="lexicon"))
        if turn.changes or turn.dropped or turn.negated:
            return self._refine(goal, turn)
        if turn.act is not None or turn.refers:
            return self._on_proposal(turn)
        implicit = self._implicit(turn)
        if implicit is not None and implicit[0] != goal.category:
            return self._new_goal(implicit[0], turn, implicit[1])
        return self._keep_state(), None

    # ------------------------------------------------------------------------------------
    # Goals and searches
    # ------------------------------------------------------------------------------------

    def _implicit(self, turn: TurnReading) -> tuple[str, Understanding] | None:
        """The category the embedding fallback finds at or above the threshold, or None."""
        if not turn.text:
            return None
        scores = self.assistant.category_scores(residual(turn.text) or turn.text)
        best = max(scores, key=scores.__getitem__)
        similarity = round(scores[best], 4)
        if similarity < self.assistant.similarity_threshold:
            return None
        return best, Understanding(via="embedding", similarity=similarity)

    def _latest_earlier(self) -> str | None:
        """The category of the latest earlier goal other than the active one."""
        goal = self.state.request
        others = (c for c in reversed(self.state.earlier) if goal is None or c != goal.category)
        return next(others, None)

    def _without_goal(self, turn: TurnReading) -> tuple[Response, Search | None]:
        state = self.state
        latest = self._latest_earlier()
        if turn.back and latest is not None:
            return self._new_goal(latest, turn, Understanding(via="lexicon"))
        implicit = self._implicit(turn)
        if implicit is not None:
            return self._new_goal(implicit[0], turn, implicit[1])
        state.pending.update(turn.changes)
        for slot in turn.dropped:
            state.pending.pop(slot, None)
        return Response(text=CLARIFY, data=[]), None

    def _new_goal(
        self, category: str, turn: TurnReading, understood: Understanding
    ) -> tuple[Response, Search]:
        """Start a goal of ``category``: the remembered request of that category, if any."""
        state = self.state
        if state.request is not None:
            state.earlier.pop(state.request.category, None)
            state.earlier[state.request.category] = state.request
        remembered = state.earlier.get(category)
        values = remembered.to_dict() if remembered is not None else {}
        values.update(state.pending)
        state.pending = {}
        state.rejected = set()
        return self._search(self._updated(category, values, turn), understood)

    def _refine(self, goal: VenueRequest, turn: TurnReading) -> tuple[Response, Search]:
        request = self._updated(goal.category, goal.to_dict(), turn)
        return self._search(request, Understanding(via="lexicon"))

    @staticmethod
    def _updated(category: str, values: dict[str, Any], turn: TurnReading) -> VenueRequest:
        """``values`` with the turn's negations, new values and withdrawals applied."""
        values = dict(values)
        for slot, value in turn.negated.items():
            if slot == "parking" or values.get(slot) == value:
                values.pop(slot, None)
        values.update(turn.changes)
        for slot in turn.dropped:
            values.pop(slot, None)
        if category not in CUISINE_CATEGORIES:
            values.pop("cuisine", None)
        values["category"] = category
        return VenueRequest(**values)

    def _search(self, request: VenueRequest, understood: Understanding) -> tuple[Response, Search]:
        state = self.state
        result = self.assistant.search(request, exclude=state.rejected)
        state.request, state.offered = request, list(result.pois)
        state.proposed = result.pois[0] if result.pois else None
        state.navigating = None
        body = compose(understood, request, result)
        return Response(text=body, data=_dicts(result.pois)), (request, result)

    def _forget(self, goal: VenueRequest) -> Response:
        state = self.state
        state.earlier.pop(goal.category, None)
        state.earlier[goal.category] = goal
        state.request, state.offered, state.proposed = None, [], None
        noun = CATEGORY_NOUNS[goal.category][1]
        return Response(text=f"All right, no {noun}. What else can I find for you?", data=[])

    # ------------------------------------------------------------------------------------
    # The venues offered
    # ------------------------------------------------------------------------------------

    def _reference(self, turn: TurnReading) -> int | None:
        """The index in the last list the turn refers to (out of range: its length)."""
        offered = self.state.offered
        if turn.ordinal is not None:
            if turn.ordinal == -1:
                return len(offered) - 1
            return turn.ordinal - 1 if 1 <= turn.ordinal <= len(offered) else len(offered)
        return named_venue(turn.text, [poi.name for poi, _ in offered])

    def _choose(self, index: int, turn: TurnReading) -> Response:
        state = self.state
        if index >= len(state.offered):
            names = ", ".join(poi.name for poi, _ in state.offered)
            count = len(state.offered)
            return Response(
                text=f"I suggested {count}: {names}. Which one would you like?",
                data=_dicts(state.offered),
            )
        state.proposed = state.offered[index]
        if turn.act in ("navigate", "confirm"):
            return self._navigate(state.proposed)
        if turn.act == "details" or turn.question:
            return self._details(state.proposed)
        return self._chosen()

    def _chosen(self) -> Response:
        """Name the proposed venue and offer to navigate there."""
        assert self.state.proposed is not None
        poi, km = self.state.proposed
        return Response(
            text=f"Good choice: {poi_summary(poi, km)}. {FOLLOW_UP}", data=self._offer()
        )

    def _on_proposal(self, turn: TurnReading) -> tuple[Response, Search | None]:
        """Navigate, details, confirm, reject, close, or "that one"."""
        state = self.state
        if turn.act == "close":
            return self._close(), None
        if state.proposed is None:
            return self._keep_state(), None
        if turn.act in ("navigate", "confirm"):
            return self._navigate(state.proposed), None
        if turn.act == "details":
            return self._details(state.proposed), None
        if turn.act == "reject":
            return self._next()
        return self._chosen(), None

    def _navigate(self, offer: Offer) -> Response:
        poi, km = offer
        self.state.navigating = poi
        street = poi.address.split(",")[0]
        return Response(
            text=f"Starting navigation to {poi.name}, {street}, {km:.1f} km away. "
            "Is there anything else I can do for you?",
            data=[poi.to_dict()],
        )

    def _details(self, offer: Offer) -> Response:
        poi, km = offer
        text = f"{poi_summary(poi, km, detailed=True)}. {FOLLOW_UP}"
        return Response(text=text, data=[poi.to_dict()])

    def _answer_question(self, turn: TurnReading, offer: Offer) -> Response:
        """Answer "does it take cash?" from the proposed venue (the request stays)."""
        poi, km = offer
        if not turn.changes:
            return self._details(offer)
        fits = VenueRequest(category=poi.category, **turn.changes).matches(poi)
        text = f"{'Yes' if fits else 'No'}: {poi_summary(poi, km, detailed=True)}. {FOLLOW_UP}"
        return Response(text=text, data=[poi.to_dict()])

    def _next(self) -> tuple[Response, Search | None]:
        """Propose the next venue of the last list, or search again without the refused."""
        state = self.state
        assert state.proposed is not None and state.request is not None
        state.rejected.add(state.proposed[0].id)
        remaining = [offer for offer in state.offered if offer[0].id not in state.rejected]
        if not remaining:
            return self._search(state.request, Understanding(via="lexicon"))
        state.proposed = remaining[0]
        poi, km = remaining[0]
        text = f"Another option is {poi_summary(poi, km)}. {FOLLOW_UP}"
        return Response(text=text, data=_dicts(remaining)), None

    def _close(self) -> Response:
        state = self.state
        if state.navigating is not None:
            text = f"You're welcome. Enjoy your time at {state.navigating.name}!"
            return Response(text=text, data=[state.navigating.to_dict()])
        return Response(text="All right. Just ask if you need anything else.", data=self._offer())

    def _keep_state(self) -> Response:
        """A short reply that keeps the goal (chit-chat, or nothing understood)."""
        goal, proposed = self.state.request, self.state.proposed
        if goal is None:
            return Response(text=CLARIFY, data=[])
        if proposed is None:
            text = f"I'm still looking for {describe(goal)}. Would you like to change your wishes?"
            return Response(text=text, data=[])
        text = f"I'm still looking for {describe(goal)}. Shall I take you to {proposed[0].name}?"
        return Response(text=text, data=self._offer())

    def _offer(self) -> list[dict[str, Any]]:
        """The last list offered, the proposed venue first."""
        state = self.state
        if state.proposed is None:
            return []
        others = [offer for offer in state.offered if offer[0].id != state.proposed[0].id]
        return _dicts([state.proposed, *others])


def _dicts(offers: list[Offer]) -> list[dict[str, Any]]:
    return [poi.to_dict() for poi, _ in offers]
