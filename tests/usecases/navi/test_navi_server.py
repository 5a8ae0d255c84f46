"""Tests for the navigation assistant's HTTP service (stellar.usecases.navi.server)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import serving

from stellar.text.embeddings import get_embedder
from stellar.usecases.navi.assistant import NavigationAssistant, navi_assistant
from stellar.usecases.navi.server import MAX_BODY_BYTES, build_server, make_server
from stellar.usecases.navi.sources import default_database

POI_KEYS = {"name", "category", "cuisine", "rating", "price", "payment", "parking", "address"}


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> NavigationAssistant:
    db = default_database(tmp_path_factory.mktemp("navi") / "pois.sqlite", seed=0)
    return NavigationAssistant(db=db, embedder=get_embedder("hashing"))


@pytest.fixture(scope="module")
def base_url(assistant: NavigationAssistant) -> Iterator[str]:
    server = make_server(0, assistant=assistant)
    with serving(server) as url:
        yield url


def call(url: str, body: bytes | None = None, method: str = "GET") -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=body, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def post(url: str, payload: Any) -> tuple[int, dict[str, Any]]:
    return call(url, json.dumps(payload).encode("utf-8"), "POST")


def test_query_round_trip(base_url: str, assistant: NavigationAssistant) -> None:
    text = "Find me an Italian restaurant rated at least 4 stars with parking"
    status, body = post(f"{base_url}/query", {"text": text})
    assert status == 200
    expected = assistant.answer(text)
    assert body == {"answer": expected.text, "pois": expected.data}
    assert body["pois"] and all(set(poi) == POI_KEYS for poi in body["pois"])
    assert body["pois"][0]["name"] in body["answer"]


def test_query_keeps_non_ascii_text(base_url: str) -> None:
    status, body = post(f"{base_url}/query", {"text": "Ein Café, bitte: a café with parking"})
    assert status == 200
    assert all(poi["category"] == "cafe" for poi in body["pois"])


def test_clarifying_question_has_no_pois(base_url: str) -> None:
    status, body = post(f"{base_url}/query", {"text": "blorf snazzle wibble"})
    assert status == 200 and body["pois"] == [] and "?" in body["answer"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
        (b'{"question": "a bar"}', '"text"'),
        (b'["a bar"]', '"text"'),
        (b'{"text": 42}', "must be a string"),
        (b"", "not valid JSON"),
    ],
)
def test_bad_requests_get_400(base_url: str, body: bytes, message: str) -> None:
    status, reply = call(f"{base_url}/query", body, "POST")
    assert status == 400
    assert message in reply["error"]


def test_too_large_body_gets_413(base_url: str) -> None:
    huge = json.dumps({"text": "a" * (MAX_BODY_BYTES + 1)}).encode()
    status, reply = call(f"{base_url}/query", huge, "POST")
    assert status == 413 and "too large" in reply["error"]


def test_unknown_paths_get_404(base_url: str) -> None:
    assert call(f"{base_url}/nope")[0] == 404
    status, reply = post(f"{base_url}/ask", {"text": "a bar"})
    assert status == 404 and "error" in reply


def test_get_on_query_is_not_allowed(base_url: str) -> None:
    assert call(f"{base_url}/query")[0] == 405


def test_health(base_url: str) -> None:
    assert call(f"{base_url}/health") == (200, {"status": "ok"})


def test_concurrent_queries(base_url: str) -> None:
    texts = ["Find a cheap bakery", "Take me to a hospital", "A bar that accepts cash"] * 4
    results: list[int] = []

    def worker(text: str) -> None:
        results.append(post(f"{base_url}/query", {"text": text})[0])

    threads = [threading.Thread(target=worker, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert results == [200] * len(texts)


def test_requests_are_not_logged(base_url: str, capfd: pytest.CaptureFixture[str]) -> None:
    post(f"{base_url}/query", {"text": "a bar"})
    call(f"{base_url}/health")
    assert "POST" not in capfd.readouterr().err


def test_build_server_serves_the_shared_assistant_of_a_venue_source() -> None:
    server = build_server("127.0.0.1", 0, pois="generated")
    try:
        assert server.assistant is navi_assistant("generated")  # type: ignore[attr-defined]
        assert server.server_address[0] == "127.0.0.1" and server.server_address[1] > 0
    finally:
        server.server_close()
