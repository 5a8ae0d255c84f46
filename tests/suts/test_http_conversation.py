"""Conversations with an HTTP system under test, against a real local server that keeps
sessions (by an id in the body, the URL, a header or a cookie), reads a message history, or
sees one text; and one that forgets. The memory probe passes on each that remembers."""

import asyncio
import json
import threading
import uuid
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from stellar.dialogue.probe import MemoryProbe, probe_memory
from stellar.dialogue.session import holds_conversations
from stellar.errors import MemoryProbeFailed, StellarError
from stellar.suts import HttpSUT
from stellar.suts.http_conversation import fill


def recall(earlier):
    """The server's answer: what the user said before in this conversation."""
    return "I remember: " + (" | ".join(earlier) if earlier else "nothing")


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append((self.path, body, dict(self.headers)))
        if self.path == "/history":
            user = [m["content"] for m in body["messages"] if m["role"] == "user"]
            return self._reply({"answer": recall(user[:-1])})
        if self.path == "/squash":
            return self._reply({"answer": f"You wrote: {body['text']}"})
        if self.path == "/forget":
            return self._reply({"answer": recall([])})
        cookie = SimpleCookie(self.headers.get("Cookie", ""))
        sid = (
            body.get("session")
            or self.headers.get("X-Session")
            or self.headers.get("X-Session-Id")
            or (cookie["sid"].value if "sid" in cookie else None)
            or (self.path.removeprefix("/chat/") if self.path.startswith("/chat/") else None)
        )
        if not sid and self.path == "/issue":  # the server names the session
            sid = f"srv-{uuid.uuid4().hex[:8]}"
        if not sid:
            return self._reply({"error": "no session"}, 400)
        said = self.server.sessions.setdefault(sid, [])
        answer = recall(list(said))
        said.append(body["text"])
        self._reply({"answer": answer, "session_id": sid}, sid=sid)

    def do_DELETE(self):
        self.server.resets.append(self.path)
        self.server.sessions.pop(self.path.removeprefix("/chat/"), None)
        self._reply({}, 200)

    def _reply(self, payload, code=200, sid=None):
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if sid:
            self.send_header("X-Session-Id", sid)
            self.send_header("Set-Cookie", f"sid={sid}; Path=/")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.seen, httpd.sessions, httpd.resets = [], {}, []
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def url(server, path):
    return f"http://127.0.0.1:{server.server_port}{path}"


async def converse(sut, turns):
    """The replies of one conversation (the session closed after it)."""
    session = await sut.open()
    try:
        return [await session.send(turn) for turn in turns]
    finally:
        await session.close()


SESSION_BODY = {"session": "{{session_id}}", "text": "{{input}}"}


async def test_session_id_in_the_body_fresh_per_conversation(server):
    sut = HttpSUT(url(server, "/s"), body=SESSION_BODY, conversation={"state": "session"})
    try:
        assert sut.conversation_state == "session" and not sut.approximate
        await probe_memory(sut, MemoryProbe(), "session")
        first, other = await asyncio.gather(
            converse(sut, ["a1", "a2", "a3"]), converse(sut, ["b1", "b2"])
        )
    finally:
        await sut.aclose()
    assert [r.text for r in first] == [recall([]), recall(["a1"]), recall(["a1", "a2"])]
    assert [r.text for r in other] == [recall([]), recall(["b1"])]  # never shared
    ids = {body["session"] for _, body, _ in server.seen}
    assert len(ids) == 3 and all(uuid.UUID(i).version == 4 for i in ids)


async def test_session_id_in_a_header(server):
    sut = HttpSUT(
        url(server, "/s"),
        body={"text": "{{input}}"},
        conversation={"state": "session", "session_header": "X-Session"},
    )
    try:
        await probe_memory(sut)
    finally:
        await sut.aclose()
    (_, _, h1), (_, _, h2) = server.seen
    assert h1["X-Session"] == h2["X-Session"] and uuid.UUID(h1["X-Session"])


async def test_session_id_in_the_url_and_reset_on_close(server):
    sut = HttpSUT(
        url(server, "/chat/{{session_id}}"),
        body={"text": "{{input}}"},
        conversation={
            "state": "session",
            "reset": {"method": "DELETE", "url": url(server, "/chat/{{session_id}}")},
        },
    )
    try:
        await probe_memory(sut)
        await converse(sut, ["x"])
    finally:
        await sut.aclose()
    paths = [path for path, _, _ in server.seen]
    assert len(set(paths)) == 2 and server.resets == paths[1:]  # one reset per conversation
    assert server.sessions == {}


@pytest.mark.parametrize(
    ("source", "body", "sent"),
    [
        ({"from": "$.session_id"}, SESSION_BODY, lambda body, headers: body["session"]),
        ({"header": "X-Session-Id"}, {"text": "{{input}}"}, lambda b, h: h.get("X-Session-Id")),
        ({"cookie": "sid"}, {"text": "{{input}}"}, lambda b, h: h.get("Cookie", "")[4:]),
    ],
    ids=["jsonpath", "header", "cookie"],
)
async def test_session_id_read_from_the_first_reply(server, source, body, sent):
    conversation = {"state": "session", "session_id": source}
    sut = HttpSUT(url(server, "/issue"), body=body, conversation=conversation)
    try:
        await probe_memory(sut)
        await converse(sut, ["again"])
    finally:
        await sut.aclose()
    (_, b1, h1), (_, b2, h2), (_, _, h3) = server.seen
    assert sent(b2, h2) in server.sessions and sent(b2, h2).startswith("srv-")
    assert b1.get("session", None) is None  # not known yet: null
    assert "X-Session-Id" not in h1 and "Cookie" not in h1
    assert "X-Session-Id" not in h3 and "Cookie" not in h3  # nothing kept between conversations
    assert len(server.sessions) == 2


async def test_no_id_in_the_first_reply_is_an_error(server):
    conversation = {"state": "session", "session_id": {"from": "$.nowhere"}}
    sut = HttpSUT(url(server, "/issue"), body=SESSION_BODY, conversation=conversation)
    try:
        (reply,) = await converse(sut, ["hi"])
    finally:
        await sut.aclose()
    assert reply.error == "no session id in the first reply (at $.nowhere)"


async def test_history_sends_every_message(server):
    sut = HttpSUT(
        url(server, "/history"),
        body={"messages": "{{messages}}", "model": "m"},
        conversation={"state": "history"},
    )
    try:
        await probe_memory(sut)
        replies = await converse(sut, ["one", "two"])
    finally:
        await sut.aclose()
    assert [r.text for r in replies] == [recall([]), recall(["one"])]
    assert server.seen[-1][1] == {
        "messages": [
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": recall([])},
            {"role": "user", "content": "two"},
        ],
        "model": "m",
    }


async def test_squash_sends_the_history_as_one_text_and_is_approximate(server):
    sut = HttpSUT(
        url(server, "/squash"), body={"text": "{{input}}"}, conversation={"state": "squash"}
    )
    try:
        assert sut.approximate
        await probe_memory(sut)
        await converse(sut, ["one", "two"])
    finally:
        await sut.aclose()
    assert server.seen[-2][1]["text"] == "one"
    assert server.seen[-1][1]["text"] == "User: one\nAssistant: You wrote: one\nUser: two"


@pytest.mark.parametrize(
    ("conversation", "body", "mistake"),
    [
        ({"state": "session"}, SESSION_BODY, "session id is likely not sent where the server"),
        ({"state": "history"}, {"messages": "{{messages}}"}, "history is likely not placed"),
        ({"state": "squash"}, {"text": "{{input}}"}, "does not see the earlier turns"),
    ],
    ids=["session", "history", "squash"],
)
async def test_a_server_that_forgets_fails_the_probe(server, conversation, body, mistake):
    sut = HttpSUT(url(server, "/forget"), body=body, conversation=conversation)
    try:
        with pytest.raises(MemoryProbeFailed) as raised:
            await probe_memory(sut)
    finally:
        await sut.aclose()
    line = str(raised.value)
    assert mistake in line and "'teal'" in line and "\n" not in line
    assert raised.value.exit_code == 3


async def test_a_failing_turn_fails_the_probe(server):
    sut = HttpSUT(
        url(server, "/s"),
        body={"text": "{{input}}"},  # the id is sent nowhere the server reads: HTTP 400
        conversation={"state": "session", "session_header": "X-Other"},
    )
    try:
        with pytest.raises(MemoryProbeFailed, match=r"turn 1 failed: HTTP 400"):
            await probe_memory(sut)
    finally:
        await sut.aclose()


async def test_a_single_turn_system_holds_no_conversation_and_keeps_no_cookie(server):
    sut = HttpSUT(url(server, "/issue"), body={"text": "{{input}}"})
    try:
        assert not holds_conversations(sut) and sut.conversation_state is None
        with pytest.raises(StellarError, match="holds no conversation"):
            await probe_memory(sut)
        await sut.query("one")
        reply = await sut.query("two")
    finally:
        await sut.aclose()
    assert reply.text == recall([])  # a fresh session: the first reply's cookie is not sent
    assert "Cookie" not in server.seen[-1][2]


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"conversation": {"state": "memory"}}, ("conversation.state",)),
        ({"conversation": {"state": "session"}}, ("{{session_id}}", "session_header")),
        ({"conversation": {"state": "history"}}, ("{{messages}}",)),
        (
            {"conversation": {"state": "session", "session_id": {"from": "$[[["}}},
            ("conversation.session_id.from", "JSONPath"),
        ),
        ({"conversation": {"state": "history", "colour": 1}}, ("conversation.colour",)),
        ({"body": {"m": "{{messages}}", "t": "{{input}}"}}, ("{{messages}}", "history")),
    ],
)
def test_malformed_conversation_settings_are_one_line(kwargs, names):
    with pytest.raises(StellarError) as raised:
        HttpSUT("http://127.0.0.1:9/x", **kwargs)
    line = str(raised.value)
    assert "\n" not in line and all(name in line for name in names), line


async def test_a_single_query_is_a_conversation_of_one_turn(server):
    sut = HttpSUT(
        url(server, "/chat/{{session_id}}"),
        body={"text": "{{input}}"},
        conversation={
            "state": "session",
            "reset": {"url": url(server, "/chat/{{session_id}}")},
        },
    )
    try:
        replies = [await sut.query("one"), await sut.query("two")]
    finally:
        await sut.aclose()
    assert [r.text for r in replies] == [recall([]), recall([])]  # a fresh id per test
    assert len({path for path, _, _ in server.seen}) == 2 and len(server.resets) == 2
    assert "{{" not in json.dumps([body for _, body, _ in server.seen])


def test_placeholders_are_filled_in_one_pass():
    values = {"{{input}}": "say {{session_id}}", "{{session_id}}": "ID", "{{messages}}": [1]}
    template = {"a": "{{session_id}}: {{input}}", "m": "{{messages}}", "t": "n={{messages}}"}
    assert fill(template, values) == {"a": "ID: say {{session_id}}", "m": [1], "t": "n=[1]"}
    assert fill({"s": "{{session_id}}", "u": "id={{session_id}}"}, {"{{session_id}}": None}) == {
        "s": None,
        "u": "id=",
    }
