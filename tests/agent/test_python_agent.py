"""A user's function as an agent: tools as callables, errors as exceptions, calls recorded."""

from __future__ import annotations

import pytest
from agent_doubles import make_environment

from stellar.agent.python_agent import PythonAgent, ToolCallError, Tools
from stellar.agent.session import AgentSession

ASK = [{"role": "user", "content": "rename n1"}]


async def test_a_plain_function_calls_tools_by_keyword_and_by_mapping():
    def agent(messages, tools):
        note = tools["get_note"](id="n1")
        tools["set_note"]({"id": "n1"}, text=note["text"].upper())
        return f"{messages[-1]['content']}: done"

    environment = make_environment()
    assert await PythonAgent(agent).reply(ASK, environment) == "rename n1: done"
    assert [(c.name, c.arguments) for c in environment.trace] == [
        ("get_note", {"id": "n1"}),
        ("set_note", {"id": "n1", "text": "BUY MILK"}),
    ]
    assert environment.state["notes"][0]["text"] == "BUY MILK"


async def test_an_async_function_is_awaited():
    async def agent(messages, tools):
        return str(tools["get_note"](id="n2")["text"])

    assert await PythonAgent(agent).reply(ASK, make_environment()) == "call Ada"


async def test_a_failing_call_raises_with_the_recorded_error():
    seen = []

    def agent(messages, tools):
        for attempt in (lambda: tools["get_note"](id=3), lambda: tools.caller("nope")()):
            try:
                attempt()
            except ToolCallError as exc:
                seen.append((str(exc), exc.call.step))
        return "gave up"

    environment = make_environment()
    assert await PythonAgent(agent).reply(ASK, environment) == "gave up"
    assert seen[0][0].startswith("bad arguments for get_note") and seen[0][1] == 1
    assert seen[1][0].startswith("unknown tool 'nope'") and seen[1][1] == 2
    assert [c.error for c in environment.trace] == [seen[0][0], seen[1][0]]


async def test_an_uncaught_tool_error_fails_the_turn():
    def agent(messages, tools):
        tools["get_note"](id="n9")

    with pytest.raises(ToolCallError, match="no note n9"):
        await AgentSession(PythonAgent(agent), make_environment()).send("hi")


async def test_the_result_is_a_copy_and_the_tools_are_a_mapping():
    captured = {}

    def agent(messages, tools):
        captured["names"], captured["specs"] = list(tools), tools.specs
        tools["get_note"](id="n1")["text"] = "tampered"
        return None

    environment = make_environment()
    assert await PythonAgent(agent).reply(ASK, environment) == ""
    assert environment.trace[0].result == {"id": "n1", "text": "buy milk"}
    assert captured["names"] == ["get_note", "set_note"]
    assert captured["specs"][0]["function"]["name"] == "get_note"
    with pytest.raises(KeyError):
        Tools(environment)["nope"]


def test_a_function_is_required():
    with pytest.raises(TypeError, match="not callable"):
        PythonAgent("not a function")
