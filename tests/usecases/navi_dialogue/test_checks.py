"""The conversation checks on planted conversations: each lapse is caught, a right one passes."""

from __future__ import annotations

import random
from typing import Any

import pytest

from stellar.dialogue.plan import Act, Plan, Turn
from stellar.dialogue.runner import run_conversation
from stellar.features import load_feature_space
from stellar.records import Response
from stellar.usecases.navi_dialogue.checks import PASS, check_conversation
from stellar.usecases.navi_dialogue.fitness import NaviDialogueFitness, signature
from stellar.usecases.navi_dialogue.plan import compile_plan
from stellar.usecases.navi_dialogue.turns import write_plan

BASE = {
    "category": "restaurant",
    "cuisine": "italian",
    "price": "low",
    "rating": "none",
    "payment": "none",
    "parking": "none",
    "reveal": "upfront",
    "correction": "none",
    "drop": "none",
    "detour": "none",
    "reference": "none",
    "distance": 1,
    "confirm": "none",
    "style_drift": "none",
    "perturbed_turns": "first",
    "word_perturbation": "none",
    "slang": "neutral",
    "implicitness": "not",
    "politeness": "neutral",
    "anthropomorphism": "directive",
}


def venue(name: str, **attributes: Any) -> dict[str, Any]:
    base = {
        "category": "restaurant",
        "cuisine": "italian",
        "price": "low",
        "rating": 4.0,
        "payment": ["cash"],
        "parking": False,
    }
    return {"name": name, **base, **attributes}


CHEAP = venue("Luigi's")
CHEAP_2 = venue("Pasta Bar")
DEAR = venue("Casa Alta", price="high")
THAI = venue("Bangkok Garden", cuisine="thai")


def planted(plan: Plan, answers: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """The runner's data for a conversation whose turn ``i`` returned ``answers[i]``,
    each answer naming its venues; a choice or confirmation is carried out (navigation to
    the first venue)."""
    turns = []
    for index, (turn, pois) in enumerate(zip(plan.turns, answers, strict=True)):
        text = f"How about {' or '.join(p['name'] for p in pois)}?" if pois else "Okay."
        if pois and turn.act in (Act.CHOOSE, Act.CONFIRM):
            text = f"Starting navigation to {pois[0]['name']}."
        turns.append(
            {
                "turn": index,
                "act": str(turn.act),
                "planned": True,
                "user": turn.text,
                "answer": text,
                "data": pois,
            }
        )
    return {"turns": turns}


def checks_of(values: dict[str, Any], answers: list[list[dict[str, Any]]], seed: int = 0):
    plan = compile_plan(values, random.Random(seed))
    assert len(plan.turns) == len(answers), [t.act for t in plan.turns]
    return plan, check_conversation(plan, planted(plan, answers), lambda request, excluding: True)


def failed(checks) -> list[str]:
    return [c.check for c in checks if c.score < PASS]


def test_a_conversation_that_keeps_track_passes():
    # request (italian, low) -> detour -> return -> the second one -> yes
    values = {**BASE, "detour": "other_request", "reference": "ordinal", "confirm": "accept"}
    plan = compile_plan(values, random.Random(0))
    ordinal = plan.turns[3].slots["ordinal"]
    picked = {"first": CHEAP, "second": CHEAP_2, "last": CHEAP_2}[ordinal]
    other = venue("Elsewhere", category=plan.turns[1].slots["category"], cuisine=None)
    answers = [[CHEAP, CHEAP_2], [other], [CHEAP, CHEAP_2], [picked], [picked]]
    _, checks = checks_of(values, answers)
    assert failed(checks) == []
    assert {c.check for c in checks} >= {"content", "reference", "goal"}


def test_a_constraint_forgotten_after_a_detour_is_a_retention_failure():
    values = {**BASE, "detour": "other_request"}
    plan = compile_plan(values, random.Random(0))
    other = venue("Elsewhere", category=plan.turns[1].slots["category"], cuisine=None)
    _, checks = checks_of(values, [[CHEAP, CHEAP_2], [other], [DEAR]])  # the price forgotten
    assert failed(checks) == ["retention"]
    retention = next(c for c in checks if c.check == "retention")
    assert retention.turn == 2 and "price stated at turn 1" in retention.note


def test_an_ignored_correction_is_a_correction_failure():
    values = {
        **BASE,
        "correction": "early",
        "cuisine": "none",
        "price": "none",
        "payment": "none",
        "rating": "none",
    }
    plan = compile_plan(values, random.Random(1))
    assert [t.act for t in plan.turns] == [Act.REQUEST, Act.CORRECT]
    name = next(n for n in plan.turns[1].slots if n != "was")
    old, new = plan.turns[1].slots["was"], plan.turns[1].slots[name]
    stale = venue("Stale", **{name: [old] if name == "payment" else old})
    fresh = venue("Fresh", **{name: [new] if name == "payment" else new})
    _, checks = checks_of(values, [[stale], [stale]], seed=1)
    assert "correction" in failed(checks)
    _, checks = checks_of(values, [[stale], [fresh]], seed=1)
    assert failed(checks) == []


@pytest.mark.parametrize("reference", ["ordinal", "anaphora"])
def test_a_wrong_referent_is_a_reference_failure(reference):
    values = {**BASE, "reference": reference}
    plan = compile_plan(values, random.Random(0))
    ordinal = plan.turns[1].slots.get("ordinal", "first")
    right = {"first": CHEAP, "second": CHEAP_2, "last": CHEAP_2}[ordinal]
    wrong = CHEAP_2 if right is CHEAP else CHEAP
    _, checks = checks_of(values, [[CHEAP, CHEAP_2], [wrong]])
    assert "reference" in failed(checks)
    _, checks = checks_of(values, [[CHEAP, CHEAP_2], [right]])
    assert "reference" not in failed(checks)


def test_a_rejected_venue_offered_again_is_a_reference_failure():
    values = {**BASE, "confirm": "reject_then_accept"}
    _, checks = checks_of(values, [[CHEAP, CHEAP_2], [CHEAP, CHEAP_2], [CHEAP]])
    assert "reference" in failed(checks)
    _, checks = checks_of(values, [[CHEAP, CHEAP_2], [CHEAP_2], [CHEAP_2]])
    assert failed(checks) == []


def test_a_wrong_kind_at_the_first_turn_is_a_content_failure():
    _, checks = checks_of(BASE, [[THAI]])
    assert failed(checks) == ["content", "goal"]


def test_an_attribute_misread_where_it_was_said_is_not_a_lapse_of_memory():
    values = {**BASE, "detour": "other_request"}
    plan = compile_plan(values, random.Random(0))
    other = venue("Elsewhere", category=plan.turns[1].slots["category"], cuisine=None)
    _, checks = checks_of(values, [[DEAR], [other], [DEAR]])  # the price never understood
    assert "retention" not in [c.check for c in checks]


class FakeSession:
    def __init__(self, replies: list[Response]) -> None:
        self.replies, self.sent, self.closed = list(replies), [], False

    async def send(self, text: str) -> Response:
        self.sent.append(text)
        return self.replies.pop(0)

    async def close(self) -> None:
        self.closed = True


async def test_the_fitness_scores_a_run_conversation_and_names_its_mode():
    values = {**BASE, "detour": "other_request"}
    plan = write_plan(values, random.Random(0))
    other = venue("Elsewhere", category=plan.turns[1].slots["category"], cuisine=None)
    replies = [Response(f"Try {v[0]['name']}.", v) for v in ([CHEAP, CHEAP_2], [other], [DEAR])]
    session = FakeSession(replies)
    response = await run_conversation(session, plan)
    assert session.closed and session.sent == plan.texts
    space = load_feature_space("src/stellar/usecases/navi_dialogue/features.yaml")

    class AnyVenue:
        def satisfiable(self, request) -> bool:
            return True

        def query(self, request, limit=None) -> list:
            return []

    from stellar.records import TestInput

    fitness = NaviDialogueFitness(database=AnyVenue())  # type: ignore[arg-type]
    candidate = space.candidate(values)
    evaluation = await fitness.evaluate(candidate, TestInput("x", plan=plan.to_dict()), response)
    assert evaluation.scores["turns"] < PASS
    assert evaluation.details["mode"] == "retention at return (detour: other_request)"
    assert evaluation.details["failing_turn"] == 3


async def test_a_clarifying_question_is_answered_once_from_the_goal_and_marked_unplanned():
    plan = Plan(
        [Turn(Act.REQUEST, text="Somewhere for grub.")], clarification="I need a restaurant."
    )
    session = FakeSession(
        [Response("Sorry, what kind of place?", []), Response("Try Luigi's.", [CHEAP])]
    )
    response = await run_conversation(session, plan)
    turns = response.data["turns"]
    assert [t["planned"] for t in turns] == [True, False]
    assert session.sent == ["Somewhere for grub.", "I need a restaurant."]


async def test_an_error_mid_conversation_keeps_the_turns_so_far():
    plan = Plan([Turn(Act.REQUEST, text="a"), Turn(Act.ADD, text="b")])
    session = FakeSession([Response("ok", [CHEAP]), Response("", error="HTTP 500")])
    response = await run_conversation(session, plan)
    assert response.error == "turn 2: HTTP 500" and len(response.data["turns"]) == 2


def test_the_same_candidate_and_seed_give_the_same_plan_and_words():
    space = load_feature_space("src/stellar/usecases/navi_dialogue/features.yaml")
    rng = random.Random(7)
    for _ in range(30):
        values = space.random_values(rng)
        first = write_plan(values, random.Random("0:3:5")).to_dict()
        assert write_plan(values, random.Random("0:3:5")).to_dict() == first
        assert all(turn["text"].strip() for turn in first["turns"])


def test_signature_names_the_check_the_act_and_the_feature():
    from stellar.usecases.navi_dialogue.checks import Check

    check = Check("reference", 3, "choose", 0.0, "")
    assert signature(check, {"reference": "ordinal"}) == "reference at choose (reference: ordinal)"


def test_an_attribute_some_listed_venue_missed_was_not_understood_so_missing_it_later_is_no_lapse():
    values = {**BASE, "detour": "other_request"}
    plan = compile_plan(values, random.Random(0))
    other = venue("Elsewhere", category=plan.turns[1].slots["category"], cuisine=None)
    _, checks = checks_of(values, [[CHEAP, DEAR], [other], [DEAR]])
    assert "retention" not in [c.check for c in checks]


def test_an_ordinal_is_not_checked_after_an_answer_that_offered_one_venue():
    values = {**BASE, "reference": "ordinal"}
    _, checks = checks_of(values, [[CHEAP], [CHEAP_2]])  # one venue is not a list to count in
    assert [c.check for c in checks if c.check == "reference"] == []


def test_an_attribute_from_a_single_venue_answer_is_not_shown_understood():
    values = {**BASE, "detour": "other_request"}
    plan = compile_plan(values, random.Random(0))
    other = venue("Elsewhere", category=plan.turns[1].slots["category"], cuisine=None)
    _, checks = checks_of(values, [[CHEAP], [other], [DEAR]])  # Luigi's may be cheap by luck
    assert "retention" not in [c.check for c in checks]


def test_another_kind_of_place_is_not_a_correction_failure():
    values = {**BASE, "correction": "early", "cuisine": "none", "price": "low"}
    plan = compile_plan(values, random.Random(2))
    name = next(n for n in plan.turns[1].slots if n != "was")
    old = plan.turns[1].slots["was"]
    stale_bar = venue(
        "Bar", category="bar", cuisine=None, **{name: [old] if name == "payment" else old}
    )
    _, checks = checks_of(values, [[CHEAP, CHEAP_2], [stale_bar]], seed=2)
    kinds = failed(checks)
    assert "correction" not in kinds and "retention" in kinds


def test_after_a_rejection_the_rejected_venue_does_not_count_as_a_fitting_one():
    values = {**BASE, "confirm": "reject_then_accept"}
    plan = compile_plan(values, random.Random(0))
    answers = [[CHEAP, CHEAP_2], [THAI], [THAI]]  # Luigi's turned down, nothing else fits

    def only_luigis(request, excluding) -> bool:
        return "Luigi's" not in excluding

    data = planted(plan, answers)
    assert failed(check_conversation(plan, data, only_luigis)) == []
    assert "retention" in failed(check_conversation(plan, data, lambda request, excluding: True))


def test_an_ordinal_counts_in_the_venues_the_last_answer_named():
    values = {**BASE, "reference": "ordinal"}
    plan = compile_plan(values, random.Random(0))
    ordinal = plan.turns[1].slots["ordinal"]
    heard = [CHEAP, CHEAP_2, DEAR]
    right = {"first": CHEAP, "second": CHEAP_2, "last": DEAR}[ordinal]
    data = planted(plan, [heard, [right]])
    data["turns"][0]["answer"] = "Luigi's, Pasta Bar or Casa Alta?"  # all three said
    assert "reference" not in failed(check_conversation(plan, data, lambda r, e: True))
    data["turns"][0]["answer"] = "How about Luigi's?"  # one said: "the second one" is ambiguous
    checks = check_conversation(plan, data, lambda r, e: True)
    assert [c for c in checks if c.check == "reference"] == []


def test_a_yes_after_an_answer_that_offered_nothing_points_at_nothing():
    values = {**BASE, "confirm": "accept"}
    plan = compile_plan(values, random.Random(0))
    assert [t.act for t in plan.turns] == [Act.REQUEST, Act.CONFIRM]
    _, checks = checks_of(values, [[], [CHEAP]])  # "Sorry, nothing found" then "yes"
    assert [c for c in checks if c.check == "reference"] == []


def test_a_name_inside_a_longer_name_is_not_named():
    from stellar.usecases.navi_dialogue.checks import named

    short, long_ = venue("Da Nang"), venue("Da Nang Hafenviertel")
    assert named("Another option is Da Nang Hafenviertel.", [short, long_]) == [long_]
    assert named("Da Nang or Da Nang Hafenviertel?", [long_, short])[0] == short
