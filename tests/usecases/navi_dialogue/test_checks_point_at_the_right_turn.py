"""Issue 41: conversation checks that point at the right turn, for the right reason.

Each kind of wrong verdict seen against a stateful assistant written elsewhere, planted: an
action nobody asked for, a confirmation never carried out, "got" naming a venue only listed,
turns numbered as the plan (not the transcript) numbers them, a later fault hidden by the
first, and a turn sent though what it reacts to was never offered.
"""

from __future__ import annotations

import random
from typing import Any

from misreading_assistants import HearsOrdinals, ListsOnYes
from test_checks import BASE

from stellar.dialogue.plan import Act, Plan
from stellar.dialogue.runner import run_conversation
from stellar.features import load_feature_space
from stellar.records import Evaluation, Response, TestInput
from stellar.usecases.navi_dialogue.actions import action_of, asked_for
from stellar.usecases.navi_dialogue.checks import PASS, check_conversation
from stellar.usecases.navi_dialogue.fitness import NaviDialogueFitness
from stellar.usecases.navi_dialogue.plan import compile_plan
from stellar.usecases.navi_dialogue.turns import write_plan

SPACE = load_feature_space("src/stellar/usecases/navi_dialogue/features.yaml")


def venue(name: str, **attributes: Any) -> dict[str, Any]:
    base = {"category": "restaurant", "cuisine": "italian", "price": "low", "rating": 4.0}
    return {"name": name, **base, "payment": ["cash"], "parking": False, **attributes}


CHEAP, CHEAP_2, CHEAP_3 = venue("Luigi's"), venue("Pasta Bar"), venue("Trattoria Uno")
DEAR = venue("Casa Alta", price="high")


class AnyVenue:
    """A venue database in which every request has an answer."""

    def satisfiable(self, request) -> bool:
        return True

    def query(self, request, limit=None) -> list:
        return []


class Replies:
    """A session answering from a list, recording what it was sent."""

    def __init__(self, replies: list[Response]) -> None:
        self.replies, self.sent = list(replies), []

    async def send(self, text: str) -> Response:
        self.sent.append(text)
        return self.replies.pop(0)

    async def close(self) -> None:
        pass


def listing(*pois: dict[str, Any]) -> Response:
    names = " or ".join(p["name"] for p in pois)
    return Response(f"How about {names}? Shall I start navigation?", list(pois))


async def judged(
    values: dict[str, Any], plan: Plan, session: Any, fitness: NaviDialogueFitness | None = None
) -> tuple[Response, Evaluation]:
    response = await run_conversation(session, plan)
    fitness = fitness or NaviDialogueFitness(database=AnyVenue())  # type: ignore[arg-type]
    test_input = TestInput("x", plan=plan.to_dict())
    return response, await fitness.evaluate(SPACE.candidate(values), test_input, response)


def failing(evaluation: Evaluation) -> list[tuple[str, int]]:
    return [(c["check"], c["turn"]) for c in evaluation.details["checks"] if c["score"] < PASS]


async def test_an_unasked_navigation_fails_at_its_own_turn_not_at_a_later_right_one():
    # request -> "let me think for a second" (heard as "the second one") -> "yes, let's go"
    values = {**BASE, "distance": 2, "confirm": "accept"}
    plan = write_plan(values, random.Random(0))
    assert [t.act for t in plan.turns] == [Act.REQUEST, Act.DETOUR, Act.CONFIRM]
    plan.turns[1].text = "Hmm, let me think for a second."
    assistant = await HearsOrdinals().open()
    response, evaluation = await judged(values, plan, assistant, NaviDialogueFitness())
    second = response.data["turns"][0]["data"][1]["name"]
    assert f"Starting navigation to {second}" in response.data["turns"][1]["answer"]
    assert failing(evaluation) == [("unasked", 2)]  # the confirmation, right for it, passes
    assert evaluation.details["failing_turn"] == 2
    assert evaluation.details["mode"].startswith("unasked at detour")
    assert evaluation.details["reason"] == (
        f"turn 2 (detour): unasked: started navigation to {second!r} though nobody asked for it"
    )


async def test_a_confirmation_answered_with_a_list_fails_its_reference_check():
    values = {**BASE, "confirm": "accept"}
    plan = write_plan(values, random.Random(0))
    assert [t.act for t in plan.turns] == [Act.REQUEST, Act.CONFIRM]
    plan.turns[1].text = "Yes please, go ahead."
    assistant = await ListsOnYes().open()
    response, evaluation = await judged(values, plan, assistant, NaviDialogueFitness())
    assert response.data["turns"][1]["answer"] == response.data["turns"][0]["answer"]
    assert evaluation.scores["conversation"] < PASS
    assert failing(evaluation) == [("reference", 2)]
    reason = evaluation.details["reason"]
    assert reason.startswith("turn 2 (confirm): reference: the venue proposed was ")
    assert "got no navigation or choice (the answer listed " in reason


def test_got_names_the_venue_navigated_to_not_the_one_listed_first():
    values = {**BASE, "reference": "ordinal"}
    plan = compile_plan(values, random.Random(0))
    assert plan.turns[1].slots["ordinal"] == "second"
    data = {
        "turns": [
            {"turn": 0, "act": "request", "planned": True, "user": "...", "answer": "How about "
             "Luigi's, Pasta Bar or Trattoria Uno?", "data": [CHEAP, CHEAP_2, CHEAP_3]},
            {"turn": 1, "act": "choose", "planned": True, "user": "The second one, please.",
             "answer": "Luigi's is closer, so starting navigation to Trattoria Uno.",
             "data": [CHEAP, CHEAP_2, CHEAP_3]},
        ]
    }  # fmt: skip
    checks = check_conversation(plan, data, lambda r, e: True)
    [reference] = [c for c in checks if c.check == "reference"]
    assert reference.turn == 1 and reference.score == 0.0
    assert reference.note == "the venue picked was 'Pasta Bar', got 'Trattoria Uno' (navigation)"


async def test_turns_are_numbered_as_the_transcript_shows_them_clarifying_ones_included():
    # request -> (clarifying question, answered) -> detour -> return forgets the price
    values = {**BASE, "detour": "other_request"}
    plan = write_plan(values, random.Random(0))
    other = venue("Elsewhere", category=plan.turns[1].slots["category"], cuisine=None)
    replies = [
        Response("Sorry, what kind of place?", []),
        listing(CHEAP, CHEAP_2),
        listing(other),
        listing(DEAR),
    ]
    response, evaluation = await judged(values, plan, Replies(replies))
    assert [t["planned"] for t in response.data["turns"]] == [True, False, True, True]
    assert evaluation.details["failing_turn"] == 4  # the 4th exchange of the transcript
    assert evaluation.details["failing_planned_turn"] == 3
    assert evaluation.details["reason"].startswith(
        "turn 4 (return): retention: price stated at turn 1 (understood then) not honoured"
    )
    retention = next(c for c in evaluation.details["checks"] if c["check"] == "retention")
    assert retention["turn"] == 4 and retention["planned_turn"] == 3


async def test_the_reason_lists_every_failing_check_and_the_mode_is_the_first():
    # the price forgotten after the detour, then "yes" lands on another venue
    values = {**BASE, "detour": "other_request", "confirm": "accept"}
    plan = write_plan(values, random.Random(0))
    other = venue("Elsewhere", category=plan.turns[1].slots["category"], cuisine=None)
    went = Response("Starting navigation to Luigi's.", [CHEAP])
    replies = [listing(CHEAP, CHEAP_2), listing(other), listing(DEAR), went]
    _, evaluation = await judged(values, plan, Replies(replies))
    assert [check for check, _ in failing(evaluation)] == ["retention", "reference"]
    assert evaluation.details["mode"] == "retention at return (detour: other_request)"
    first, second = evaluation.details["reason"].split("; ")
    assert first.startswith("turn 3 (return): retention: price stated at turn 1")
    assert second == (
        "turn 4 (confirm): reference: the venue proposed was 'Casa Alta', "
        'got "Luigi\'s" (navigation)'
    )


async def test_a_turn_whose_precondition_failed_is_skipped_and_marked():
    # nothing offered: "not that one" and "yes" are not sent; the conversation goes on
    values = {**BASE, "confirm": "reject_then_accept"}
    plan = write_plan(values, random.Random(0))
    assert [t.act for t in plan.turns] == [Act.REQUEST, Act.REJECT, Act.CONFIRM]
    session = Replies([Response("Sorry, I found nothing like that.", [])])
    response, evaluation = await judged(values, plan, session)
    assert session.sent == [plan.turns[0].text]
    skipped = evaluation.details["skipped_turns"]
    assert [(s["planned_turn"], s["act"], s["after_turn"]) for s in skipped] == [
        (2, "reject", 1),
        (3, "confirm", 1),
    ]
    assert all(s["why"] == "the last answer offered nothing" for s in skipped)
    assert f'[not sent, reject: the last answer offered nothing: "{plan.turns[1].text}"]' in (
        response.text
    )


async def test_the_second_one_is_not_said_after_an_answer_that_named_one_venue():
    values = {**BASE, "reference": "ordinal", "confirm": "accept"}
    plan = write_plan(values, random.Random(0))
    assert [t.act for t in plan.turns] == [Act.REQUEST, Act.CHOOSE, Act.CONFIRM]
    went = Response("Starting navigation to Luigi's.", [CHEAP])
    session = Replies([listing(CHEAP), went])
    response, evaluation = await judged(values, plan, session)
    assert session.sent == [plan.turns[0].text, plan.turns[2].text]  # "yes" still holds
    assert response.data["skipped"][0]["why"] == (
        "the last answer named fewer than two to choose from"
    )
    assert failing(evaluation) == []


def test_an_answer_acts_only_in_a_statement():
    pois = [CHEAP, CHEAP_2]
    assert action_of("How about Luigi's? Shall I take you to Luigi's?", pois) is None
    assert action_of("Sorry, I can't start navigation to Luigi's.", pois) is None
    navigation = action_of("Starting navigation to Pasta Bar, Hauptstr. 5, 1.2 km away.", pois)
    assert navigation is not None and navigation.kind == "navigation"
    assert navigation.name == "Pasta Bar"
    choice = action_of("Good choice: Luigi's (4 stars). Shall I start navigation?", pois)
    assert choice is not None and (choice.kind, choice.name) == ("choice", "Luigi's")
    assert action_of("Route set. Off we go!", [CHEAP]).name == "Luigi's"  # the only venue


def test_navigation_a_request_asked_for_is_not_unasked():
    assert asked_for("Navigate to a cheap Italian restaurant.", "navigation")
    assert asked_for("Take me to a pizzeria.", "navigation")
    assert not asked_for("Hmm, let me think for a second.", "navigation")
    assert not asked_for("Hmm, let me think for a second.", "choice")
    assert asked_for("I'll take the second one.", "choice")
