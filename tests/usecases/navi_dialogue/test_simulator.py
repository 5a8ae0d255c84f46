"""A model as the user: each written turn checked (act, echo, voice, repeat, length), asked
again once with the reason, then the template's words with the reason kept."""

from __future__ import annotations

import asyncio
import random

import pytest
from fake_model import FakeModel

from stellar.dialogue.plan import Act, Plan, Turn
from stellar.dialogue.turn_check import Judgement
from stellar.features import load_feature_space
from stellar.generators.turns import TurnChecker
from stellar.usecases.navi_dialogue.act_check import MAX_WORDS, NaviActCheck
from stellar.usecases.navi_dialogue.simulator import INSTRUCTIONS
from stellar.usecases.navi_dialogue.turns import NaviDialogueRealiser, write_plan

SPACE = load_feature_space("src/stellar/usecases/navi_dialogue/features.yaml")
GOAL = Turn(Act.REQUEST, {"category": "restaurant", "cuisine": "italian", "price": "low"})
TURNS = {
    "request": GOAL,
    "add": Turn(Act.ADD, {"payment": "cash"}),
    "correct": Turn(Act.CORRECT, {"price": "high", "was": "low"}),
    "drop": Turn(Act.DROP, {"attribute": "price"}),
    "detour": Turn(Act.DETOUR, {"kind": "chit_chat"}),
    "other_request": Turn(Act.DETOUR, {"kind": "other_request", "category": "bakery"}),
    "return": Turn(Act.RETURN, {"category": "restaurant"}),
    "choose": Turn(Act.CHOOSE, {"ordinal": "second"}),
    "point": Turn(Act.CHOOSE, {"anaphora": True}),
    "confirm": Turn(Act.CONFIRM),
    "reject": Turn(Act.REJECT),
}
PLAN = Plan([GOAL, *(t for name, t in TURNS.items() if name != "request")])


def check(turn: str, text: str, earlier: list[str] | None = None) -> Judgement:
    checker = TurnChecker(NaviActCheck(PLAN), INSTRUCTIONS, MAX_WORDS)
    return checker(TURNS[turn], text, earlier or [])


@pytest.mark.parametrize(
    ("turn", "text"),
    [
        ("request", "Find me a cheap Italian restaurant, please."),
        ("add", "Oh, and I'll be paying cash."),
        ("correct", "Actually, make it somewhere fancy, not cheap."),
        ("drop", "Forget about the price."),
        ("detour", "How's the traffic looking today?"),
        ("other_request", "Is there a bakery around here?"),
        ("return", "Anyway, back to the restaurant."),
        ("choose", "I'll take the second one."),
        ("point", "Sounds good, take me there."),
        ("confirm", "Yes, let's go."),
        ("reject", "No, show me a different one."),
    ],
)
def test_a_plausible_turn_for_each_act_is_kept(turn, text):
    assert check(turn, text).kept, check(turn, text).reason


@pytest.mark.parametrize(
    ("turn", "text", "reason"),
    [
        ("request", "Find me an Italian restaurant.", "does not say price low"),
        ("request", "A cheap Italian restaurant that takes cash.", "adds a wish"),
        ("add", "Something with parking and cash.", "adds a wish the plan does not have"),
        ("correct", "Actually, somewhere fancy with parking.", "adds a wish"),
        ("drop", "The price is very important to me.", "does not withdraw the price"),
        ("drop", "Never mind.", "does not name the price"),
        ("detour", "Any cheap Italian place, really.", "restates the goal in a detour"),
        ("other_request", "Nice weather today.", "does not ask for the bakery"),
        ("return", "What a song on the radio.", "does not go back to the search"),
        ("choose", "That one sounds good.", "does not pick the second"),
        ("confirm", "No, not that one.", "does not affirm"),
        ("reject", "Yes, let's go there.", "does not reject"),
        ("correct", "Something fancy. I'd still like it cheap.", "still asks for the old price"),
        ("return", "Back to it. Find me a car repair shop nearby.", "asks for another place"),
        ("add", "I am a museum of the past. I'll pay cash.", "speaks as the place"),
        ("detour", "I'm looking for a place to eat.", "asks for something in a detour"),
        ("reject", "Hmm, well.", "UNDECIDED"),  # no cue either way: the rules cannot tell
    ],
)
def test_a_turn_that_does_not_do_what_its_act_says_is_rejected(turn, text, reason):
    judgement = check(turn, text)
    if reason == "UNDECIDED":  # without a meaning check such a turn is not kept
        assert judgement.reason == "does not clearly read as a reject"
    else:
        assert judgement.reason is not None and judgement.reason.startswith(reason)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("I'm going to the hospital. (no more than 20 words)", "echoes its instructions"),
        ("Yes. In your next message, accept the place.", "echoes its instructions"),
        ("Driver: yes, let's go.", "echoes its instructions"),
        ("Yes, accept the place the assistant proposed.", 'echoes its instructions ("accept'),
        ("I'm sorry, but I don't have the ability to access your location.", "speaks as"),
        ("Yes! Is there anything else I can help you with?", "speaks as the assistant"),
        ("Sure, here are some great options nearby.", "speaks as the assistant"),
        ("(I'm going to the supermarket) Yes.", "holds a remark in brackets"),
        ("Sure. - You're right. - Just go", "holds several messages"),
        ("I'm sorry for the confusion. I'll make sure to be helpful.", "speaks as the assistant"),
        ("Yes. You're right, I left it out of my next message.", "echoes its instructions"),
        ("I'm just a driver. Yes, let's go.", "echoes its instructions"),
        ("The answer to this question is yes.", "speaks as the assistant"),
        ("   ", "empty"),
        ("Yes " + "really " * 40 + "let's go.", "too long"),
    ],
)
def test_echoes_the_assistants_voice_empty_and_long_turns_are_rejected(text, reason):
    judgement = check("confirm", text)
    assert judgement.reason is not None and judgement.reason.startswith(reason)


def test_a_turn_that_repeats_an_earlier_one_is_rejected():
    judgement = check("confirm", "Yes, let's go there.", ["Find me food.", "Yes let's go there!"])
    assert judgement.reason == "repeats the user's turn 2"
    earlier = ["I'm going to the museum.", "Find me a bakery if there is one nearby."]
    said_again = "Yes. Find me a bakery if there is one nearby."  # SmolLM2 copies its turns
    assert check("confirm", said_again, earlier).reason == "repeats the user's turn 2"


def test_where_rules_cannot_tell_the_sentence_model_decides_and_says_when_it_doubts():
    from stellar.usecases.navi_dialogue.simulator import _meaning

    checker = TurnChecker(NaviActCheck(PLAN), INSTRUCTIONS, MAX_WORDS, _meaning())
    assert checker(TURNS["confirm"], "Lovely, that'll do nicely.", []).kept
    rejected = checker(TURNS["confirm"], "Hmm, I don't like that one, what else?", [])
    assert rejected.reason == "does not affirm"  # a refusal cue and no yes: the rule decides
    mixed = checker(TURNS["reject"], "Okay, but not that one, another please.", [])
    assert mixed.kept or mixed.reason.startswith("reads as a confirm")
    rambling = "I'm going the museum. I've been driving hours, and I think can park it."
    assert checker(TURNS["confirm"], rambling, []).reason == "does not read as a confirm"


def test_every_explicit_template_turn_passes_the_act_check():
    """The template's own turns do what their acts say (asides may repeat one another)."""
    rng = random.Random(1)
    for seed in range(300):
        values = {
            **SPACE.random_values(rng),
            "implicitness": "not",
            "word_perturbation": "none",
            "style_drift": "none",
        }
        try:
            plan = write_plan(SPACE.candidate(values).values, random.Random(seed))
        except ValueError:
            continue
        act_check = NaviActCheck(plan)
        for turn in plan.turns:
            judgement = act_check(turn, turn.text)
            assert judgement.kept, (turn.act, turn.slots, turn.text, judgement.reason)


def _candidate():
    values = {
        **SPACE.random_values(random.Random(3)),
        "reveal": "incremental",
        "category": "restaurant",
        "price": "low",
        "cuisine": "none",
        "rating": "none",
        "payment": "cash",
        "parking": "none",
        "word_perturbation": "none",
        "correction": "none",
        "drop": "none",
        "detour": "none",
        "reference": "none",
        "confirm": "none",
        "distance": 1,
    }
    return SPACE.candidate(values)


def test_a_rejected_turn_is_asked_again_with_the_reason_then_falls_back_to_the_template():
    candidate = _candidate()
    template = write_plan(candidate.values, random.Random(0))
    assert [t.act for t in template.turns] == [Act.REQUEST, Act.ADD, Act.ADD]
    model = FakeModel(
        [
            "I'm hungry, find me a restaurant.",  # kept
            "Something cheap, please. (no more than 10 words)",  # an echo: asked again
            "Something cheap, please.",  # kept on retry
            "Whatever works.",  # says nothing of cash: asked again
            "I'm sorry, but I can't help with that.",  # the assistant's voice: template
        ],
        name="fake:user",
    )
    written = asyncio.run(NaviDialogueRealiser(model).generate(candidate, random.Random(0)))
    turns = written.plan["turns"]
    assert [t["source"] for t in turns] == ["model", "model after retry", "template"]
    assert turns[1]["text"] == "Something cheap, please."
    assert turns[2]["text"] == template.turns[2].text
    assert turns[2]["rejected"] == (
        "does not say payment cash; on retry: speaks as the assistant"
    )
    assert [t["rejected"] for t in turns[:2]] == ["", ""]
    retry = model.calls[2]["messages"]
    assert retry[-2] == {"role": "assistant", "content": model.calls[2]["messages"][-2]["content"]}
    assert "echoes its instructions" in retry[-1]["content"]
    prompts = [call["messages"][1]["content"] for call in model.calls]
    assert "cash" not in prompts[0] and "cash" not in prompts[1]  # later slots never shown
    assert "Something cheap, please." in prompts[3]  # the user's own earlier turns are
