"""Issue 43: a verdict never rests on a user turn the check doubted (fidelity)."""

from __future__ import annotations

import random

from test_checks import BASE
from test_checks_point_at_the_right_turn import (
    CHEAP,
    CHEAP_2,
    DEAR,
    Replies,
    judged,
    listing,
    venue,
)

from stellar.dialogue.plan import MODEL, Act
from stellar.records import EXCLUDED_REASON
from stellar.usecases.navi_dialogue.turns import write_plan


def _plan(doubt_at: int):
    values = {**BASE, "detour": "other_request"}
    plan = write_plan(values, random.Random(0))
    assert [t.act for t in plan.turns] == [Act.REQUEST, Act.DETOUR, Act.RETURN]
    plan.turns[doubt_at].source = MODEL
    plan.turns[doubt_at].doubt = "barely reads as a return (against detour)"
    other = venue("Elsewhere", category=plan.turns[1].slots["category"], cuisine=None)
    replies = [listing(CHEAP, CHEAP_2), listing(other), listing(DEAR)]  # the return forgets
    return values, plan, Replies(replies)


async def test_a_failure_resting_on_a_doubted_turn_is_excluded_with_the_reason():
    values, plan, session = _plan(doubt_at=2)
    _, evaluation = await judged(values, plan, session)
    assert evaluation.excluded
    assert evaluation.details[EXCLUDED_REASON] == (
        "simulated user: turn 3 (return) barely reads as a return (against detour)"
    )
    [aside] = evaluation.details["set_aside"]
    assert aside["check"] == "retention" and aside["planned_turn"] == 3
    assert evaluation.scores["turns"] == 1.0  # the set-aside check no longer scores


async def test_the_same_failure_without_a_doubt_fails():
    values, plan, session = _plan(doubt_at=2)
    plan.turns[2].doubt = ""
    _, evaluation = await judged(values, plan, session)
    assert not evaluation.excluded and evaluation.scores["turns"] < 0.75
    assert "set_aside" not in evaluation.details


async def test_a_doubt_after_the_failing_turn_leaves_the_verdict_alone():
    values = {**BASE, "detour": "other_request"}
    plan = write_plan(values, random.Random(0))
    plan.turns[2].doubt = "barely reads as a return"
    other = venue("Elsewhere", category=plan.turns[1].slots["category"], cuisine=None)
    wrong = venue("Casa Alta", price="high", cuisine="german")
    wrong_first = [listing(wrong), listing(other), listing(CHEAP)]  # fails at turn 1
    _, evaluation = await judged(values, plan, Replies(wrong_first))
    assert not evaluation.excluded
    assert evaluation.details["failing_planned_turn"] == 1
