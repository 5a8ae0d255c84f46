"""A model as the user: turns rewritten, checked, and kept only where they say what they must."""

from __future__ import annotations

import asyncio
import random

from fake_model import FakeModel

from stellar.dialogue.plan import Act, Turn
from stellar.features import load_feature_space
from stellar.usecases.navi_dialogue.simulator import carries
from stellar.usecases.navi_dialogue.turns import NaviDialogueRealiser, write_plan

SPACE = load_feature_space("src/stellar/usecases/navi_dialogue/features.yaml")


def test_a_turn_carries_its_slots_by_their_usual_words():
    add = Turn(Act.ADD, {"price": "low", "payment": "cash"})
    assert carries(add, "Make it somewhere cheap, and I'll pay cash.")
    assert not carries(add, "Make it somewhere cheap.")
    assert carries(Turn(Act.CHOOSE, {"ordinal": "second"}), "The second one sounds good.")
    assert not carries(Turn(Act.CHOOSE, {"ordinal": "second"}), "That one sounds good.")
    assert carries(Turn(Act.ADD, {"rating": 4.5}), "At least 4.5 stars, please.")
    assert not carries(Turn(Act.CONFIRM), "   ")


def test_model_turns_are_kept_where_they_carry_the_slots_else_the_template_stays():
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
    candidate = SPACE.candidate(values)
    template = write_plan(candidate.values, random.Random(0))
    assert [t.act for t in template.turns] == [Act.REQUEST, Act.ADD, Act.ADD]
    model = FakeModel(
        ["I'm hungry, find me a restaurant.", "Something cheap, please.", "Whatever works."],
        name="fake:user",
    )
    written = asyncio.run(NaviDialogueRealiser(model).generate(candidate, random.Random(0)))
    turns = written.plan["turns"]
    assert [t["source"] for t in turns] == ["model", "model", "template"]
    assert turns[1]["text"] == "Something cheap, please."
    assert turns[2]["text"] == template.turns[2].text  # "whatever" says nothing of cash
    prompts = [call["messages"][-1]["content"] for call in model.calls]
    assert "cash" not in prompts[0] and "cash" not in prompts[1]  # later slots never shown
    assert "Something cheap, please." in prompts[2]  # the user's own earlier turns are
