import asyncio
import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from stellar.errors import StellarError
from stellar.records import Response
from stellar.suts import HttpSUT
from stellar.suts.http import fill_template


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body["messages"][0]["content"]
        self.server.seen.append((body, dict(self.headers)))
        if text == "crash":
            return self._reply(500, b"internal error")
        if text == "html":
            return self._reply(200, b"<html>oops</html>")
        if text == "huge":
            return self._reply(
                200, b'{"result": {"answer": "' + b"x" * 3_000_000 + b'", "pois": []}}'
            )
        if text == "slow":
            time.sleep(1.0)
        payload = {"result": {"answer": f"echo: {text}", "pois": [{"name": "A"}, {"name": "B"}]}}
        self._reply(200, json.dumps(payload).encode())

    def _reply(self, code, data):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError):  # "slow": the client timed out and left
            self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.seen = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()


def make(server, **kw):
    return HttpSUT(
        f"http://127.0.0.1:{server.server_port}/chat",
        body={"messages": [{"role": "user", "content": "{{input}}"}], "stream": False},
        answer="$.result.answer",
        data="$.result.pois",
        **kw,
    )


def query(sut, text):
    async def go():
        try:
            return await sut.query(text)
        finally:
            await sut.aclose()

    return asyncio.run(go())


def test_answer_and_data_are_selected(server, monkeypatch):
    monkeypatch.setenv("TEST_TOKEN", "s3cret")
    sut = make(server, headers={"Authorization": "Bearer ${TEST_TOKEN}"})
    response = query(sut, 'say "hi"')
    assert response == Response(text='echo: say "hi"', data=[{"name": "A"}, {"name": "B"}])
    body, headers = server.seen[0]
    assert body == {"messages": [{"role": "user", "content": 'say "hi"'}], "stream": False}
    assert headers["Authorization"] == "Bearer s3cret"


def test_a_reply_over_the_size_cap_is_an_error_and_not_read_whole(server):
    response = query(make(server, max_bytes=1_000_000), "huge")
    assert response.error == "reply longer than 1,000,000 bytes" and response.text == ""
    assert len(query(make(server), "huge").text) == 3_000_000  # under the default cap


def test_server_error_and_non_json_are_errors(server):
    assert query(make(server), "crash").error.startswith("HTTP 500")
    assert "not JSON" in query(make(server), "html").error


def test_missing_answer_path_is_an_error(server):
    sut = HttpSUT(
        f"http://127.0.0.1:{server.server_port}/",
        answer="$.nothing",
        body={"messages": [{"content": "{{input}}"}]},
    )
    assert "no answer at" in query(sut, "x").error


def test_timeout_raises(server):
    import httpx

    with pytest.raises(httpx.TimeoutException):
        query(make(server, timeout=0.2), "slow")


def test_missing_environment_variable_is_a_user_error(monkeypatch):
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(StellarError, match="NOT_SET_ANYWHERE is not set"):
        HttpSUT("http://127.0.0.1:1/", headers={"X": "${NOT_SET_ANYWHERE}"})


def test_bad_url_and_bad_jsonpath_are_user_errors():
    with pytest.raises(StellarError, match="must start with http"):
        HttpSUT("localhost:8000")
    with pytest.raises(StellarError, match="not valid JSONPath"):
        HttpSUT("http://127.0.0.1:1/", answer="$[[[")


def test_fill_template_replaces_inside_strings():
    assert fill_template({"q": "Q: {{input}}!", "n": 3, "l": ["{{input}}"]}, "x") == {
        "q": "Q: x!",
        "n": 3,
        "l": ["x"],
    }
