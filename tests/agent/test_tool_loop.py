"""STELLAR's tool loop with a scripted model: what runs, what is recorded, what the model reads
back, and that nothing the model writes crashes a test."""

from __future__ import annotations

import json

import pytest
from agent_doubles import ScriptedToolModel, calls, make_environment

from stellar.agent.session import AgentSession, AgentSystem
from stellar.agent.tool_loop import STEP_LIMIT, ChatToolAgent
from stellar.errors import ModelError

ASK = [{"role": "user", "content": "what does note n1 say?"}]


def tool_results(request):
    """The ``tool`` messages a request carried, as {call id: parsed content}."""
    return {
        m["tool_call_id"]: json.loads(m["content"])
        for m in request["messages"]
        if m["role"] == "tool"
    }


async def test_text_answer_without_tools_is_the_reply():
    model = ScriptedToolModel(["Hello!"])
    environment = make_environment()
    assert await ChatToolAgent(model).reply(ASK, environment) == "Hello!"
    assert environment.trace == []
    request = model.requests[0]
    assert request["messages"][0]["role"] == "system"
    assert request["messages"][1:] == ASK
    assert [t["function"]["name"] for t in request["tools"]] == ["get_note", "set_note"]


async def test_parallel_calls_run_in_order_and_each_result_goes_back():
    model = ScriptedToolModel(
        [
            calls(("get_note", {"id": "n1"}), ("set_note", {"id": "n2", "text": "done"})),
            "n1 says buy milk; n2 updated.",
        ]
    )
    environment = make_environment()
    reply = await ChatToolAgent(model).reply(ASK, environment)
    assert reply == "n1 says buy milk; n2 updated."
    assert [(c.name, c.error) for c in environment.trace] == [
        ("get_note", None),
        ("set_note", None),
    ]
    assert environment.state["notes"][1]["text"] == "done"
    second = model.requests[1]
    assistant = second["messages"][-3]
    assert assistant["role"] == "assistant"
    assert [c["id"] for c in assistant["tool_calls"]] == ["c0", "c1"]
    assert tool_results(second) == {"c0": {"id": "n1", "text": "buy milk"}, "c1": {"ok": True}}


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("get_note", '{"id": "n1"', "not JSON"),  # a malformed call
        ("delete_all", {}, "unknown tool 'delete_all'"),
        ("get_note", {"id": 7}, "bad arguments for get_note"),
        ("get_note", {"id": "n9"}, "no note n9"),  # the tool refuses
        ("broken", {}, "the tool failed: RuntimeError: disk on fire"),
        ("", "", "unknown tool ''"),  # a call with no name at all
    ],
)
async def test_a_bad_call_is_recorded_and_answered_with_an_error(name, arguments, error):
    model = ScriptedToolModel([calls((name, arguments)), "Sorry, that did not work."])
    environment = make_environment(broken=True)
    reply = await ChatToolAgent(model).reply(ASK, environment)
    assert reply == "Sorry, that did not work."
    (call,) = environment.trace
    assert error in call.error and call.result is None
    assert error in tool_results(model.requests[1])["c0"]["error"]
    assert environment.diff() == {}


async def test_non_json_arguments_are_repeated_to_the_model_as_an_empty_object():
    model = ScriptedToolModel([calls(("get_note", "id=n1")), "ok"])
    await ChatToolAgent(model).reply(ASK, make_environment())
    (sent,) = model.requests[1]["messages"][-2]["tool_calls"]
    assert sent["function"]["arguments"] == "{}"


async def test_the_step_limit_stops_the_loop_with_a_clear_reply():
    model = ScriptedToolModel([calls(("get_note", {"id": "n1"}))] * 3)
    environment = make_environment()
    reply = await ChatToolAgent(model, max_steps=3).reply(ASK, environment)
    assert reply == STEP_LIMIT.format(steps=3)
    assert len(model.requests) == 3 and len(environment.trace) == 3
    assert model.replies == []


async def test_a_model_fault_is_raised_for_the_pipeline_to_record():
    model = ScriptedToolModel([calls(("get_note", {"id": "n1"})), ModelError("m: HTTP 500")])
    environment = make_environment()
    with pytest.raises(ModelError, match="HTTP 500"):
        await ChatToolAgent(model).reply(ASK, environment)
    assert [c.name for c in environment.trace] == ["get_note"]


async def test_a_conversation_keeps_earlier_calls_and_results():
    model = ScriptedToolModel([calls(("get_note", {"id": "n1"})), "It says buy milk.", "Yes."])
    system = AgentSystem(ChatToolAgent(model), lambda plan: make_environment())
    session = await system.open()
    first = await session.send("what does n1 say?")
    second = await session.send("sure?")
    assert (first.text, second.text) == ("It says buy milk.", "Yes.")
    sent = model.requests[2]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[-1]["content"] == "sure?"
    assert first.data["calls"][0]["turn"] == 1 and second.data["calls"] == []


async def test_a_history_that_does_not_match_is_rebuilt_from_the_turns():
    model = ScriptedToolModel(["one", "two"])
    agent, environment = ChatToolAgent(model), make_environment()
    await agent.reply(ASK, environment)
    other = [*ASK, {"role": "assistant", "content": "edited"}, {"role": "user", "content": "hm"}]
    await agent.reply(other, environment)
    assert model.requests[1]["messages"][1:] == other


async def test_sessions_do_not_share_histories():
    model = ScriptedToolModel(["a", "b"])
    agent = ChatToolAgent(model)
    for environment in (make_environment(), make_environment()):
        await AgentSession(agent, environment).send("hi")
    assert [len(r["messages"]) for r in model.requests] == [2, 2]


def test_max_steps_must_be_positive():
    with pytest.raises(ValueError, match="max_steps"):
        ChatToolAgent(ScriptedToolModel([]), max_steps=0)
