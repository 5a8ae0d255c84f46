"""Plans: pure, consistent with the feature space's derived outcome, and a simulated user that
lost a fact is excluded, not blamed on the agent; a yes is sent only to a yes/no question."""

from __future__ import annotations

import copy
import random

import pytest
from navi_agent_helpers import builtin, converse, plan_of

from stellar.dialogue.preconditions import ASKED, asks_yes_no, unmet
from stellar.features import load_feature_space
from stellar.usecases.navi_agent.fitness import judge
from stellar.usecases.navi_agent.turns import write_plan
from stellar.usecases.navi_agent.world import world

SPACE = load_feature_space("src/stellar/usecases/navi_agent/features.yaml")


def test_a_plan_is_a_pure_function_of_the_values_and_the_seed():
    rng = random.Random(1)
    for index in range(30):
        values = SPACE.candidate(SPACE.random_values(rng)).values
        first = write_plan(values, random.Random(index))
        assert write_plan(values, random.Random(index)) == first
        assert first["goal"]["outcome"] == values["outcome"]  # the constraints agree


def test_the_goal_follows_the_facts_and_the_tool_behaviour():
    plan, _ = plan_of(0, policy_boundary="just_outside")
    assert plan["goal"]["subgoals"][0]["effects"] == []
    plan, _ = plan_of(0, tool_behaviour="error")
    first = plan["goal"]["subgoals"][0]
    assert first["outcome"] == "act" and first["effects"] == []  # the booking tool is down
    assert first["told"][0]["kind"] == "failure"
    assert plan["environment"]["perturbation"]["scope"]["venue_id"]
    plan, _ = plan_of(2, intent="cancel", user_behaviour="changes_mind")
    assert [t["act"] for t in plan["turns"]] == ["request", "reject"]  # "no wait, keep it"
    assert plan["goal"]["subgoals"][0]["effects"] == []


async def test_a_simulated_user_who_lost_a_fact_is_excluded_with_the_reason():
    plan, values = plan_of(0)
    broken = copy.deepcopy(plan)
    request = broken["turns"][0]
    party = request["slots"]["says"]["party_size"]
    request["text"] = request["text"].replace(party, "some people")
    response = await converse(builtin(), broken)
    evaluation = judge(world(), broken, response.data, values)
    assert evaluation.excluded
    reason = evaluation.details["excluded_reason"]
    assert reason.startswith("simulated user: turn 1 (request) does not say the party size")
    kept = await converse(builtin(), plan)
    assert not judge(world(), plan, kept.data, values).excluded


def test_a_typo_a_person_reads_through_still_says_a_name_but_not_a_number():
    from stellar.usecases.navi_agent.checks import said

    assert said("Golden Barrel Pub", "a table at Golden Barrle Pub please")
    assert not said("Golden Barrel Pub", "a table at the pub please")
    assert said("4 ppl", "for 4 ppl at 7") and said("4 people", "for 4 peple at 7")
    assert not said("4 people", "for for people at 7")


@pytest.mark.parametrize(
    ("answer", "asked"),
    [
        ("Shall I book a table at X for 4 people at 19:00? Please say yes to confirm.", True),
        ("Do you want me to cancel it?", True),
        ("Booking B-1 at 19:00, please confirm?", True),
        ("Which venue do you mean?", False),
        ("For how many people should I book it?", False),
        ("Done: booked.", False),
    ],
)
def test_a_yes_is_sent_only_after_a_yes_no_question(answer, asked):
    assert asks_yes_no(answer) is asked
    exchanges = [{"act": "request", "answer": answer, "data": {"calls": []}}]
    assert (unmet(ASKED, exchanges) is None) is asked


def test_a_wanted_change_is_never_what_the_booking_already_holds():
    """A change of mind to another booking must change something there: asked to set a
    booking to the size or time it already has, any agent "fails" to change it."""
    for seed in range(150):
        for entity in ("non_existing", "someone_elses", "existing"):
            plan, _ = plan_of(seed, intent="change", entity=entity, user_behaviour="changes_mind")
            seeded = {row["id"]: row for row in plan["environment"]["bookings"]}
            for goal in plan["goal"]["subgoals"]:
                for effect in goal["effects"]:
                    row = seeded.get(effect["id"]) if effect["op"] == "change" else None
                    if row is not None:
                        assert any(row[k] != v for k, v in effect["set"].items()), (seed, effect)
