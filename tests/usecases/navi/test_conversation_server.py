"""The navigation server's conversations (stellar.usecases.navi.server): session ids in the
body and the reply, over real HTTP, and the bounded store of conversations."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import serving

from stellar.text.embeddings import get_embedder
from stellar.usecases.navi.assistant import NavigationAssistant
from stellar.usecases.navi.server import Conversations, make_server
from stellar.usecases.navi.sources import default_database


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> NavigationAssistant:
    db = default_database(tmp_path_factory.mktemp("navi") / "pois.sqlite", seed=0)
    return NavigationAssistant(db=db, embedder=get_embedder("hashing"))


@pytest.fixture(scope="module")
def base_url(assistant: NavigationAssistant) -> Iterator[str]:
    server = make_server(0, assistant=assistant, max_sessions=3)
    with serving(server) as url:
        yield url


def call(url: str, payload: Any = None, method: str = "POST") -> tuple[int, dict[str, Any]]:
    body = None if payload is None else json.dumps(payload).encode("utf-8")
    request = urllib.request.Request(url, data=body, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_chat_without_session_starts_one(base_url: str) -> None:
    status, first = call(f"{base_url}/chat", {"text": "Find a cheap Italian restaurant"})
    assert status == 200 and set(first) == {"answer", "pois", "session_id"}
    session = first["session_id"]
    assert isinstance(session, str) and session
    status, second = call(f"{base_url}/chat", {"text": "the second one", "session": session})
    assert status == 200 and second["session_id"] == session
    assert second["pois"][0] == first["pois"][1]
    _, other = call(f"{base_url}/chat", {"text": "the second one"})
    assert other["session_id"] != session and other["pois"] == []


def test_query_with_a_session_holds_a_conversation(base_url: str) -> None:
    status, single = call(f"{base_url}/query", {"text": "Find a bakery"})
    assert status == 200 and set(single) == {"answer", "pois"}
    _, first = call(f"{base_url}/query", {"text": "Find a bakery", "session": "client-1"})
    assert first["session_id"] == "client-1" and first["pois"] == single["pois"]
    _, go = call(f"{base_url}/query", {"text": "take me there", "session": "client-1"})
    assert go["pois"] == [first["pois"][0]] and go["answer"].startswith("Starting navigation")


def test_sessions_are_kept_apart_and_deleted(base_url: str) -> None:
    _, cafe = call(f"{base_url}/chat", {"text": "Find a cafe", "session": "a"})
    _, bar = call(f"{base_url}/chat", {"text": "Find a bar", "session": "b"})
    _, cafe_2 = call(f"{base_url}/chat", {"text": "the second one", "session": "a"})
    assert cafe_2["pois"][0] == cafe["pois"][1] and bar["pois"][0]["category"] == "bar"
    status, deleted = call(f"{base_url}/chat/a", method="DELETE")
    assert (status, deleted) == (200, {"session_id": "a", "deleted": True})
    assert call(f"{base_url}/chat/a", method="DELETE")[0] == 404
    _, fresh = call(f"{base_url}/chat", {"text": "the second one", "session": "a"})
    assert fresh["pois"] == []


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"text": "hi", "session": 7}, '"session" must be a string'),
        ({"text": "hi", "session": ""}, '"session" must be a string'),
        ({"text": "hi", "session": "x" * 129}, '"session" must be a string'),
        ({"session": "a"}, 'expected a JSON object with "text"'),
    ],
)
def test_bad_sessions_are_400(base_url: str, payload: dict[str, Any], message: str) -> None:
    status, body = call(f"{base_url}/chat", payload)
    assert status == 400 and message in body["error"]


def test_wrong_methods_on_chat(base_url: str) -> None:
    assert call(f"{base_url}/chat", method="GET")[0] == 405
    assert call(f"{base_url}/chat", method="DELETE")[0] == 405
    assert call(f"{base_url}/chat/a/b", method="DELETE")[0] == 404


def test_the_oldest_conversations_are_forgotten(assistant: NavigationAssistant) -> None:
    conversations = Conversations(assistant, limit=2)
    for session in ("one", "two", "one", "three"):
        conversations.reply(session, "Find a cafe")
    assert len(conversations) == 2 and "two" not in conversations and "one" in conversations
    with pytest.raises(ValueError):
        Conversations(assistant, limit=0)
