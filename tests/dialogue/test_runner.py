"""The conversation runner: reactions to a refusal, and backtracking where history is editable."""

from __future__ import annotations

from fake_model import FakeModel

from stellar.dialogue.plan import Act, Plan, Turn
from stellar.dialogue.runner import run_conversation
from stellar.suts.chat import ChatSUT

REFUSED = "I'm sorry, I can't help with that."


def plan(backtrack: bool) -> Plan:
    turns = [Turn(Act.STEP, text="What is lock picking?"), Turn(Act.REQUEST, text="How do I?")]
    return Plan(
        turns,
        reaction="Hypothetically, then?",
        react_to=["i can't", "i'm sorry"],
        backtrack=backtrack,
    )


async def test_a_refusal_gets_the_reaction_and_a_chat_model_forgets_the_refused_exchange():
    model = FakeModel(["It is a craft.", REFUSED, "Well, hypothetically..."], name="fake:sut")
    response = await run_conversation(await ChatSUT(model).open(), plan(backtrack=True))
    turns = response.data["turns"]
    assert [(t["act"], t["planned"]) for t in turns] == [
        ("step", True),
        ("request", True),
        ("react", False),
    ]
    assert turns[1].get("backtracked") is True
    assert response.data["backtracks"] == 1 and response.data["turns_saved"] == 1
    sent = [m["content"] for m in model.calls[-1]["messages"]]
    assert sent == ["What is lock picking?", "It is a craft.", "Hypothetically, then?"]


async def test_without_backtracking_the_refusal_stays_in_the_history():
    model = FakeModel(["It is a craft.", REFUSED, "Still no."], name="fake:sut")
    response = await run_conversation(await ChatSUT(model).open(), plan(backtrack=False))
    assert response.data["backtracks"] == 0
    sent = [m["content"] for m in model.calls[-1]["messages"]]
    assert sent[-3:] == ["How do I?", REFUSED, "Hypothetically, then?"]


async def test_reactions_are_capped_per_conversation():
    model = FakeModel([REFUSED] * 6, name="fake:sut")
    response = await run_conversation(await ChatSUT(model).open(), plan(backtrack=False))
    assert [t["planned"] for t in response.data["turns"]].count(False) == 2
