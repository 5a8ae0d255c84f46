"""Tool calls through the model layer: the openai-SDK client over real HTTP (the stub server
answering with ``tool_calls``), the response cache, and ``local:`` models, which are offered
the tools in words and whose calls are read back from their text."""

from __future__ import annotations

import json
import sqlite3

import pytest
from agent_doubles import make_environment

from stellar.agent.session import AgentSession
from stellar.agent.tool_loop import ChatToolAgent
from stellar.llm.base import Completion, messages_tokens, tool_call_requests
from stellar.llm.cache import ResponseCache
from stellar.llm.client import Models
from stellar.llm.local import LocalClient
from stellar.llm.local_tools import TOOLS_INTRO, parse_tool_calls, tool_messages
from stellar.llm.models import EndpointSettings, LLMSettings, parse_model
from stellar.llm.stub_server import StubLLMServer, ToolCalls

KEY_ENV = "STELLAR_AGENT_TEST_KEY"
SPECS = make_environment().specs()
ASK = [{"role": "user", "content": "what does n1 say?"}]


@pytest.fixture
def server():
    with StubLLMServer() as stub:
        yield stub


@pytest.fixture
def client(server, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")
    settings = LLMSettings(
        cache_path=str(tmp_path / "cache.sqlite"),
        endpoints={"openai-compatible": EndpointSettings(api_key_env=KEY_ENV)},
    )
    models = Models(settings)
    yield models.client(f"openai-compatible:m@{server.url}", "sut")
    models.cache.close()


async def test_the_client_sends_tools_and_reads_tool_calls(server, client):
    server.responder = lambda body: ToolCalls((("get_note", {"id": "n1"}), ("set_note", "{bad")))
    answer = await client.complete(ASK, tools=SPECS)
    assert server.bodies[0]["tools"] == SPECS
    assert answer.text == "" and answer.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in answer.tool_calls] == [
        ("get_note", '{"id": "n1"}'),
        ("set_note", "{bad"),
    ]
    assert len({c.id for c in answer.tool_calls}) == 2


async def test_the_cache_keys_on_the_tools_and_keeps_the_calls(server, client):
    server.responder = lambda body: ToolCalls((("get_note", {"id": "n1"}),), text="looking")
    first = await client.complete(ASK, tools=SPECS)
    again = await client.complete(ASK, tools=SPECS)
    assert again.cached and again.tool_calls == first.tool_calls and again.text == "looking"
    await client.complete(ASK, tools=SPECS[:1])
    await client.complete(ASK)
    assert server.requests == 3
    assert "tools" not in server.bodies[-1]


def test_a_cache_written_before_tool_calls_gets_the_column(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT, text TEXT, "
            "input_tokens INT, output_tokens INT, finish_reason TEXT, structured INT, "
            "created REAL)"
        )
        db.execute("INSERT INTO responses VALUES ('k', 'm', 'old', 1, 2, 'stop', 0, 0)")
    cache = ResponseCache(path)
    assert cache.get("k") == Completion("old", 1, 2, True, "stop", False)
    ResponseCache(path).close()  # a second opener finds the column there
    cache.close()


async def test_the_tool_loop_over_http(server, client):
    def respond(body):
        last = body["messages"][-1]
        if last["role"] == "tool":
            return f"The note says: {json.loads(last['content'])['text']}"
        return ToolCalls((("get_note", {"id": "n1"}),))

    server.responder = respond
    environment = make_environment()
    reply = await AgentSession(ChatToolAgent(client), environment).send("what does n1 say?")
    assert reply.text == "The note says: buy milk"
    sent = server.bodies[1]["messages"]
    assert sent[-2]["tool_calls"][0]["function"] == {
        "name": "get_note",
        "arguments": '{"id": "n1"}',
    }
    assert sent[-1]["tool_call_id"] == sent[-2]["tool_calls"][0]["id"]
    assert [c.name for c in environment.trace] == ["get_note"]


def test_malformed_tool_calls_are_read_leniently_for_the_environment_to_answer():
    entries = [
        {"id": "a", "function": {"name": "get_note", "arguments": {"id": "n1"}}},
        "not a call",
        {"function": {"arguments": "{}"}},
    ]
    read = tool_call_requests(entries)
    assert [(c.id, c.name, c.arguments) for c in read] == [
        ("a", "get_note", '{"id": "n1"}'),
        ("call_1", "", ""),
        ("call_2", "", "{}"),
    ]
    assert tool_call_requests({"not": "a list"}) == ()
    environment = make_environment()
    for call in read:
        environment.call(call.name, call.arguments)
    assert environment.trace[0].error is None and len(environment.trace) == 3
    assert all("unknown tool ''" in c.error for c in environment.trace[1:])


def test_messages_with_calls_are_counted():
    message = {"role": "assistant", "content": None, "tool_calls": [{"id": "x" * 400}]}
    assert messages_tokens([message]) > 100


def test_a_local_prompt_describes_tools_and_writes_calls_and_results_as_text():
    conversation = [
        {"role": "system", "content": "Be brief."},
        *ASK,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "function": {"name": "get_note", "arguments": '{"id": "n1"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": '{"text": "buy milk"}'},
    ]
    out = tool_messages(conversation, SPECS)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert all(isinstance(m["content"], str) for m in out)
    assert out[0]["content"].startswith("Be brief.") and TOOLS_INTRO in out[0]["content"]
    assert '"name": "set_note"' in out[0]["content"]
    assert json.loads(out[2]["content"]) == {"name": "get_note", "arguments": {"id": "n1"}}
    assert out[3]["content"] == 'Result of get_note: {"text": "buy milk"}'
    assert tool_messages(ASK, SPECS)[-1]["content"].endswith(
        "(Tools: get_note, set_note. To call one, reply with only JSON like "
        '{"name": "get_note", "arguments": {"id": "..."}}.)'
    )


@pytest.mark.parametrize(
    ("text", "rest", "found"),
    [
        ('{"name": "get_note", "arguments": {"id": "n1"}}', "", [("get_note", '{"id": "n1"}')]),
        (
            'Sure.\n<tool_call>{"name": "a", "parameters": {}}</tool_call> and '
            '[{"name": "b", "arguments": "{\\"x\\": 1}"}]',
            "Sure. and",
            [("a", "{}"), ("b", '{"x": 1}')],
        ),
        ('I found {"id": "n1"} for you.', 'I found {"id": "n1"} for you.', []),
        ('{"name": "get_note", "arguments": {', '{"name": "get_note", "arguments": {', []),
    ],
)
def test_calls_are_read_from_a_local_models_text(text, rest, found):
    left, calls = parse_tool_calls(text)
    assert left == rest
    assert [(c.name, c.arguments) for c in calls] == found


async def test_a_local_model_gets_the_rewritten_prompt_and_answers_calls(monkeypatch):
    seen = []

    def generate(requests):
        seen.extend(requests)
        return [Completion('{"name": "get_note", "arguments": {"id": "n2"}}', 9, 9, False, "stop")]

    client = LocalClient(parse_model("local:smollm2"), "sut", cache=None)
    monkeypatch.setattr(client, "_generate_greedy", generate)
    answer = await client.complete(ASK, tools=SPECS, temperature=0.0)
    assert answer.finish_reason == "tool_calls" and answer.text == ""
    assert [(c.name, c.arguments) for c in answer.tool_calls] == [("get_note", '{"id": "n2"}')]
    ((messages, _),) = seen
    assert TOOLS_INTRO in messages[0]["content"]
    plain = await client.complete(ASK, temperature=0.0)  # no tools: the text is the answer
    assert plain.tool_calls == () and plain.text.startswith('{"name"')
    assert seen[1][0] == ASK


async def test_smollm2_runs_the_tool_loop_without_a_fault():
    """The real 135M model: it seldom calls a tool (docs), but every turn ends in a reply
    and whatever it asked for is in the trace."""
    environment = make_environment()
    client = LocalClient(parse_model("local:smollm2"), "sut", cache=None)
    agent = ChatToolAgent(client, max_steps=2, max_tokens=48)
    reply = await AgentSession(agent, environment).send("Read note n1 for me.")
    assert isinstance(reply.text, str) and reply.text.strip()
    assert all(call.step == i + 1 for i, call in enumerate(environment.trace))
