"""The MCP path end to end on this machine: STELLAR serves a test's tools over MCP, POSTs the
turn to an agent service (examples/agents/mcp_agent.py), and the agent's calls land in the
test's own environment, checked and recorded; concurrent tests never share an environment."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from agent_doubles import make_environment
from conftest import serving

pytest.importorskip("mcp")

from mcp import Client

from stellar.agent.mcp_agent import AgentError, McpAgent
from stellar.agent.mcp_tools import McpToolServer
from stellar.agent.session import AgentSession

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agents" / "mcp_agent.py"


def load_example():
    spec = importlib.util.spec_from_file_location("stellar_example_mcp_agent", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def agent_url():
    """The example agent, served by uvicorn in a thread."""
    import uvicorn

    sock = socket.create_server(("127.0.0.1", 0))
    config = uvicorn.Config(load_example().app, log_config=None, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.01)
    assert server.started, "the example agent did not start"
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def tools():
    server = McpToolServer().start()
    yield server
    server.stop()


async def test_an_agent_over_http_calls_the_tests_tools_over_mcp(agent_url, tools):
    environment = make_environment()
    session = AgentSession(McpAgent(agent_url, tools=tools), environment)
    listed = await session.send("what can you do?")
    assert listed.text == "I can use these tools: get_note, set_note."
    done = await session.send('get_note {"id": "n1"}\nset_note {"id": "n2", "text": "call Bob"}')
    first, second = done.text.splitlines()
    assert json.loads(first.removeprefix("get_note: ")) == {"id": "n1", "text": "buy milk"}
    assert second == 'set_note: {"ok": true}'
    called = [(c["name"], c["turn"]) for c in done.data["calls"]]
    assert called == [("get_note", 2), ("set_note", 2)]
    assert done.data["diff"]["notes"]["changed"][0]["after"]["text"] == "call Bob"


async def test_bad_calls_over_mcp_are_recorded_and_answered_as_errors(tools):
    environment = make_environment()
    with tools.session(environment) as url:
        async with Client(url) as client:
            unknown = await client.call_tool("drop_table", {})
            bad = await client.call_tool("get_note", {"id": 7})
            refused = await client.call_tool("set_note", {"id": "n9", "text": "x"})
    assert all(r.is_error for r in (unknown, bad, refused))
    assert "unknown tool 'drop_table'" in unknown.content[0].text
    assert [c.name for c in environment.trace] == ["drop_table", "get_note", "set_note"]
    assert environment.trace[1].error.startswith("bad arguments for get_note")
    assert environment.trace[2].error == "no note n9"
    assert environment.diff() == {}


async def test_an_address_stops_working_when_its_turn_ends(tools):
    environment = make_environment()
    with tools.session(environment) as url:
        pass
    async with Client(url) as client:
        result = await client.call_tool("get_note", {"id": "n1"})
    assert result.is_error and "ended" in result.content[0].text
    assert environment.trace == []


async def test_concurrent_tests_never_share_an_environment(agent_url, tools):
    agent = McpAgent(agent_url, tools=tools)
    environments = [make_environment() for _ in range(4)]
    replies = await asyncio.gather(
        *(
            AgentSession(agent, env).send(f'set_note {{"id": "n1", "text": "from {i}"}}')
            for i, env in enumerate(environments)
        )
    )
    assert all(r.text == 'set_note: {"ok": true}' for r in replies)
    for i, environment in enumerate(environments):
        assert [c.arguments["text"] for c in environment.trace] == [f"from {i}"]
        assert environment.state["notes"][0]["text"] == f"from {i}"


class Answers(BaseHTTPRequestHandler):
    """An agent service that answers badly: the path says how."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        status, body = {
            "/error": (500, b"boom"),
            "/text": (200, b"not json"),
            "/noreply": (200, b'{"answer": "hi"}'),
        }[self.path]
        self.send_response(status)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/error", "HTTP 500: boom"),
        ("/text", "the answer is not JSON"),
        ("/noreply", 'no text "reply"'),
    ],
)
async def test_a_bad_answer_from_the_agent_is_one_line(tools, path, message):
    with (
        serving(ThreadingHTTPServer(("127.0.0.1", 0), Answers)) as base,
        pytest.raises(AgentError, match=message) as caught,
    ):
        await McpAgent(base + path, tools=tools).reply([], make_environment())
    assert "\n" not in str(caught.value)


async def test_an_unreachable_agent_is_one_line(tools):
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with pytest.raises(AgentError, match=f"127.0.0.1:{port}/: ConnectError") as caught:
        await McpAgent(f"http://127.0.0.1:{port}/", tools=tools).reply([], make_environment())
    assert "\n" not in str(caught.value)
