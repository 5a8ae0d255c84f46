"""Conversations with a chat model and with Python callables, and the memory probe's own
rules (the HTTP system's conversations: test_http_conversation.py)."""

import pytest
from fake_model import FakeModel

from stellar.dialogue.probe import MemoryProbe, probe_memory
from stellar.dialogue.session import holds_conversations
from stellar.errors import MemoryProbeFailed, StellarError
from stellar.records import Response
from stellar.registry import options_model
from stellar.suts import ChatSUT, PythonSUT


async def converse(sut, turns):
    session = await sut.open()
    try:
        return [await session.send(turn) for turn in turns]
    finally:
        await session.close()


async def test_a_chat_model_is_sent_the_whole_history():
    model = FakeModel(["Noted.", "Teal, you said.", "single"])
    sut = ChatSUT(model, system_prompt="Be brief.")
    replies = await converse(sut, ["My colour is teal.", "Which colour?"])
    assert [r.text for r in replies] == ["Noted.", "Teal, you said."]
    assert model.calls[1]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "My colour is teal."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Which colour?"},
    ]
    assert await sut.query("alone") == Response(text="single")  # single turns: unchanged
    assert model.calls[2]["messages"][1:] == [{"role": "user", "content": "alone"}]


async def test_the_probe_passes_a_chat_model_that_remembers_and_names_one_that_forgets():
    await probe_memory(ChatSUT(FakeModel(["Noted.", "It is TEAL."])), MemoryProbe(), None)
    with pytest.raises(MemoryProbeFailed, match="does not see earlier turns"):
        await probe_memory(ChatSUT(FakeModel(["Noted.", "I do not know."])))


def remembering(text, history):
    said = [m["content"] for m in history if m["role"] == "user"]
    return {"text": f"{text} after {said}", "data": {"turns": len(history)}}


async def async_remembering(text, history=None):
    return remembering(text, history or [])


@pytest.mark.parametrize("func", [remembering, async_remembering])
async def test_a_function_with_history_is_given_the_earlier_turns(func):
    sut = PythonSUT(func)
    try:
        replies = await converse(sut, ["a", "b", "c"])
        single = await sut.query("d")
    finally:
        await sut.aclose()
    assert [r.text for r in replies] == ["a after []", "b after ['a']", "c after ['a', 'b']"]
    assert [r.data for r in replies] == [{"turns": 0}, {"turns": 2}, {"turns": 4}]
    assert single.text == "d after []"


async def test_a_function_that_mutates_its_history_does_not_change_the_conversation():
    def greedy(text, history):
        said = len(history)
        history.clear()
        return str(said)

    sut = PythonSUT(greedy)
    try:
        assert [r.text for r in await converse(sut, ["a", "b", "c"])] == ["0", "2", "4"]
    finally:
        await sut.aclose()


class OwnSessions:
    """An application that keeps its conversations itself."""

    def __call__(self, text):
        return "single"

    async def open(self):
        return Remembers()


class Remembers:
    def __init__(self):
        self.said = []

    async def send(self, text):
        self.said.append(text)
        return Response(text=" / ".join(self.said))

    async def close(self):
        pass


async def test_an_object_with_open_is_opened_as_it_is_and_a_plain_function_is_not():
    sut = PythonSUT(OwnSessions())
    try:
        assert [r.text for r in await converse(sut, ["a", "b"])] == ["a", "a / b"]
        await probe_memory(sut)
    finally:
        await sut.aclose()
    plain = PythonSUT(lambda text: text)
    try:
        assert not holds_conversations(plain) and not hasattr(plain, "open")
        assert (await plain.query("x")).text == "x"
        with pytest.raises(StellarError, match="holds no conversation"):
            await probe_memory(plain)
    finally:
        await plain.aclose()


def test_history_is_not_an_option_of_a_function_under_test():
    def answer(text, history, tone="plain"):
        return text

    assert list(options_model(answer, "sut").model_fields) == ["tone"]


def test_a_probe_that_gives_its_answer_away_is_refused():
    with pytest.raises(ValueError, match="gives the expected word away"):
        MemoryProbe(["My colour is teal.", "Is it teal?"], "teal")
    with pytest.raises(ValueError, match="two turns"):
        MemoryProbe(["What is my colour?"], "teal")
