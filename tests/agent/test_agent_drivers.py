"""``build_agent``: each spec form gives its agent; a bad spec is one line."""

from __future__ import annotations

import sys
import types

import pytest
from agent_doubles import ScriptedToolModel, make_environment

from stellar.agent.drivers import build_agent
from stellar.agent.mcp_agent import McpAgent
from stellar.agent.python_agent import PythonAgent
from stellar.agent.tool_loop import ChatToolAgent
from stellar.errors import StellarError


@pytest.fixture
def user_module(monkeypatch):
    module = types.ModuleType("user_agents_for_test")
    module.greet = lambda messages, tools: f"hi ({len(tools)} tools)"
    module.Holder = types.SimpleNamespace(agent=lambda messages, tools: "held")
    module.value = 3
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return module


def test_chat_needs_a_model_and_takes_the_step_limit():
    agent = build_agent("chat", model=ScriptedToolModel([]), max_steps=3)
    assert isinstance(agent, ChatToolAgent) and agent.max_steps == 3
    with pytest.raises(StellarError, match="needs a model"):
        build_agent("chat")
    with pytest.raises(StellarError, match="max_steps 0"):
        build_agent("chat", model=ScriptedToolModel([]), max_steps=0)


@pytest.mark.parametrize(
    ("spec", "reply"),
    [
        ("python:user_agents_for_test:greet", "hi (2 tools)"),
        ("user_agents_for_test:greet", "hi (2 tools)"),
        ("user_agents_for_test:Holder.agent", "held"),
    ],
)
async def test_a_python_target_is_a_python_agent(user_module, spec, reply):
    agent = build_agent(spec)
    assert isinstance(agent, PythonAgent)
    assert await agent.reply([{"role": "user", "content": "x"}], make_environment()) == reply


def test_a_url_is_an_mcp_agent():
    agent = build_agent("http://127.0.0.1:9/agent")
    assert isinstance(agent, McpAgent) and agent.url == "http://127.0.0.1:9/agent"
    assert isinstance(build_agent("https://agents.example/turn"), McpAgent)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "give 'chat'"),
        ("gpt-4o", "give 'chat'"),
        ("python:", "give 'chat'"),
        ("http://", "the URL has no host"),
        ("no_such_module_here:agent", "cannot import no_such_module_here"),
        ("user_agents_for_test:missing", "has no missing"),
        ("user_agents_for_test:value", "value is not callable"),
    ],
)
def test_a_bad_spec_is_one_line(user_module, spec, message):
    with pytest.raises(StellarError, match=message) as caught:
        build_agent(spec)
    assert "\n" not in str(caught.value)
