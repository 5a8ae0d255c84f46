"""A local OpenAI-compatible chat server, for tests, benchmarks and trying a configuration.

It is not a model: a ``responder`` decides each answer from the request body. Replies can be
text, a JSON object, an HTTP error with headers (``Fail``) or a hang (``Hang``), so the tests
can play rate limits, server errors, timeouts and malformed output over real HTTP. It counts
the requests it receives. ``reject_structured`` names a server kind (``SERVER_KINDS``) whose
answer to an unsupported ``response_format`` it imitates (docs/servers.md). Run it alone with
``python -m stellar.llm.stub_server --delay 0.05``.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from stellar.llm.structured import prompted_schema


@dataclass
class Fail:
    """Answer with an HTTP error (OpenAI error body) and optional headers."""

    status: int
    message: str = "stub failure"
    headers: dict[str, str] = field(default_factory=dict)
    code: str = "stub"


@dataclass
class Hang:
    """Answer nothing for ``seconds`` (released early when the server stops)."""

    seconds: float = 3600.0


Reply = str | dict | Fail | Hang
Responder = Callable[[dict[str, Any]], Reply]


@dataclass(frozen=True)
class Rejection:
    """How a server kind answers the ``response_format`` types it does not support.

    ``status`` None: the field is silently ignored (the request is answered without it).
    ``body``: the JSON error body, ``{type}`` in its strings replaced by the type sent.
    """

    types: tuple[str, ...]
    status: int | None = None
    body: dict[str, Any] = field(default_factory=dict)


_LITERAL_ERROR = (
    "1 validation error:\n  {{'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': '{type}', "
    "'ctx': {{'expected': \"'text' or 'json_object'\"}}}}"
)

# what each server kind answers to a response_format it does not support (docs/servers.md)
SERVER_KINDS: dict[str, Rejection] = {
    "openai": Rejection(()),  # supports json_schema and json_object
    "azure-old-api": Rejection(
        ("json_schema",),
        400,
        {
            "error": {
                "message": "response_format value as json_schema is enabled only for api "
                "versions 2024-08-01-preview and later",
                "type": "",
                "param": "",
                "code": "BadRequest",
            }
        },
    ),
    "azure-model": Rejection(
        ("json_schema", "json_object"),
        400,
        {
            "error": {
                "message": "Invalid parameter: 'response_format' of type '{type}' is not "
                "supported with this model.",
                "type": "invalid_request_error",
                "param": "response_format",
                "code": None,
            }
        },
    ),
    "vllm-old": Rejection(
        ("json_schema",),
        400,
        {"object": "error", "message": _LITERAL_ERROR, "type": "BadRequestError", "code": 400},
    ),
    "ollama-old": Rejection(("json_schema",)),  # ignored: the model answers unconstrained
    "llama-cpp-python": Rejection(
        ("json_schema",),
        500,
        {
            "error": {
                "message": _LITERAL_ERROR,
                "type": "internal_server_error",
                "param": None,
                "code": None,
            }
        },
    ),
    "llama.cpp-old": Rejection(
        ("json_schema",),
        500,
        {
            "error": {
                "code": 500,
                "message": 'response_format type must be one of "text" or "json_object", '
                "but got: {type}",
                "type": "server_error",
            }
        },
    ),
}


def schema_example(schema: dict[str, Any]) -> Any:
    """A value that satisfies a simple JSON schema (the stub's structured answers)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {name: schema_example(sub) for name, sub in schema.get("properties", {}).items()}
    if kind == "integer":
        return int(schema.get("maximum", 1))
    if kind == "number":
        return float(schema.get("maximum", 1.0))
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    return "stub"


def default_responder(body: dict[str, Any]) -> Reply:
    """Structured requests get a schema-valid object (``json_object``: valid for the schema in
    the prompt, if any); others an answer naming the question."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return schema_example(response_format["json_schema"]["schema"])
    if response_format.get("type") == "json_object":
        return schema_example(prompted_schema(body.get("messages", [])) or {})
    last = body["messages"][-1]["content"] if body.get("messages") else ""
    return f"Here is what I found for: {last[:60]}. Anything else?"


class StubLLMServer:
    """``with StubLLMServer(delay=0.05) as server: ... server.url ... server.requests``."""

    def __init__(
        self,
        responder: Responder = default_responder,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        delay: float = 0.0,
        api_key: str | None = "test-key",
        structured: bool = True,
        reject_structured: str | None = None,
    ) -> None:
        if reject_structured is not None and reject_structured not in SERVER_KINDS:
            raise ValueError(f"unknown server kind {reject_structured!r}: {list(SERVER_KINDS)}")
        self.responder, self.delay, self.api_key = responder, delay, api_key
        self.structured = structured  # False: reject json_schema with a plain 400
        self.reject_structured = reject_structured
        self.requests = 0
        self.in_flight = self.max_in_flight = 0
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server((host, port), _handler(self))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> StubLLMServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> StubLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, headers: Any, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        """Status, headers and JSON body for one request."""
        with self._lock:
            self.requests += 1
            self.bodies.append(body)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return self._answer(headers, body)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, headers: Any, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        if self.api_key is not None and headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        kind = (body.get("response_format") or {}).get("type")
        if not self.structured and kind == "json_schema":
            return _error(400, "response_format json_schema is not supported", "bad_request")
        rejection = SERVER_KINDS.get(self.reject_structured or "")
        if rejection is not None and kind in rejection.types:
            if rejection.status is not None:
                return rejection.status, {}, _filled(rejection.body, kind)
            body = {k: v for k, v in body.items() if k != "response_format"}
        if self.delay:
            time.sleep(self.delay)
        reply = self.responder(body)
        if isinstance(reply, Hang):
            self._stopping.wait(reply.seconds)
            return _error(504, "stub hang ended", "timeout")
        if isinstance(reply, Fail):
            status, _, error = _error(reply.status, reply.message, reply.code)
            return status, reply.headers, error
        text = reply if isinstance(reply, str) else json.dumps(reply)
        prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        return 200, {}, _completion(body.get("model", "stub"), text, prompt // 4, len(text) // 4)


def _completion(model: str, text: str, tokens_in: int, tokens_out: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
    }


def _error(status: int, message: str, code: str) -> tuple[int, dict[str, str], Any]:
    return status, {}, {"error": {"message": message, "type": "stub_error", "code": code}}


def _filled(value: Any, kind: str) -> Any:
    """``value`` with ``{type}`` in its strings replaced by ``kind``."""
    if isinstance(value, dict):
        return {key: _filled(item, kind) for key, item in value.items()}
    return value.format(type=kind) if isinstance(value, str) else value


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # bursts of new connections at high concurrency


def _handler(server: StubLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms stalls

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                return self._send(*_error(400, "body is not JSON", "bad_json"))
            if not self.path.rstrip("/").endswith("/chat/completions"):
                return self._send(*_error(404, f"no route {self.path}", "not_found"))
            self._send(*server.answer(self.headers, body))

        def _send(self, status: int, headers: dict[str, str], payload: Any) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up (timeout); nothing to do
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument(
        "--api-key", help="refuse requests without this key (default: accept any key)"
    )
    parser.add_argument(
        "--reject-structured",
        choices=list(SERVER_KINDS),
        help="answer an unsupported response_format as this server kind does",
    )
    args = parser.parse_args()
    server = StubLLMServer(
        port=args.port,
        delay=args.delay,
        api_key=args.api_key,
        reject_structured=args.reject_structured,
    ).start()
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
