"""A local OpenAI-compatible chat server, for tests, benchmarks and trying a configuration.

Not a model: a ``responder`` decides each answer from the request body: text, a JSON object,
tool calls (``ToolCalls``), an HTTP error with headers (``Fail``) or a hang (``Hang``), so the
tests can play rate limits, server errors, timeouts and malformed output over real HTTP.
``reject_structured`` names a server kind (``SERVER_KINDS``) whose answer to an unsupported
``response_format`` it imitates (docs/servers.md). For benchmarks it answers after a fixed or
a seeded heavy-tailed latency and can enforce rate limits (HTTP 429 with ``Retry-After``);
``GET /v1/stats`` counts requests, rate-limited ones and the latency served. One asyncio loop
in a background thread serves every connection, so thousands of slow requests can be in
flight at once. Run it alone with ``python -m stellar.llm.stub_server --delay 0.05``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http
import json
import math
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stellar.llm.stub_kinds import (
    SERVER_KINDS,
    Answer,
    Rejection,
    ToolCalls,
    default_responder,
    error,
    filled,
    reply_completion,
    schema_example,
    too_many,
)
from stellar.llm.stub_traffic import LATENCY_FORMS, Latency, RequestRate, parse_latency

__all__ = [
    "SERVER_KINDS",
    "Fail",
    "Hang",
    "Rejection",
    "StubLLMServer",
    "ToolCalls",
    "default_responder",
    "schema_example",
]
MAX_HEAD = 1 << 20  # bytes of request line and headers


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


Reply = str | dict | ToolCalls | Fail | Hang
Responder = Callable[[dict[str, Any]], Reply]


class StubLLMServer:
    """``with StubLLMServer(delay=0.05) as server: ... server.url ... server.requests``.

    ``latency`` (a :class:`Latency` or its text, ``lognormal:median=0.5,sigma=0.8``) replaces
    the fixed ``delay``; ``seed`` seeds its draws. ``rps`` (with ``burst``) and
    ``max_concurrent`` answer requests over the limit with 429 and the wait in ``Retry-After``;
    ``tls`` (a server SSL context) serves HTTPS."""

    def __init__(
        self,
        responder: Responder = default_responder,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        delay: float = 0.0,
        latency: Latency | str | None = None,
        seed: int = 0,
        rps: float | None = None,
        burst: int | None = None,
        max_concurrent: int | None = None,
        api_key: str | None = "test-key",
        structured: bool = True,
        reject_structured: str | None = None,
        keep_bodies: bool = True,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        if reject_structured is not None and reject_structured not in SERVER_KINDS:
            raise ValueError(f"unknown server kind {reject_structured!r}: {list(SERVER_KINDS)}")
        if max_concurrent is not None and max_concurrent < 1:
            raise ValueError(f"max_concurrent {max_concurrent}: must be >= 1")
        self.responder, self.api_key = responder, api_key
        if isinstance(latency, str):
            latency = parse_latency(latency)
        self.latency = latency if latency is not None else parse_latency(repr(float(delay)))
        self._draws = self.latency.sampler(seed)
        self.rate = RequestRate(rps, burst) if rps else None
        self.max_concurrent = max_concurrent
        self.structured = structured  # False: reject json_schema with a plain 400
        self.reject_structured, self.keep_bodies, self.tls = reject_structured, keep_bodies, tls
        self.requests = self.answered = self.rate_limited = self.in_flight = self.max_in_flight = 0
        self.latency_sum = 0.0  # seconds of latency served to answered requests
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []  # of chat requests, with their query
        self._due: dict[object, float] = {}  # requests in flight: when each answer is due
        self._sock = socket.create_server((host, port), backlog=4096)
        self._loop = asyncio.new_event_loop()
        self._stopping = asyncio.Event()
        self._connections: set[asyncio.Task] = set()
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        host, port = self._sock.getsockname()[:2]
        return f"{'https' if self.tls else 'http'}://{host}:{port}/v1"

    def start(self) -> StubLLMServer:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve_forever, args=(ready,), daemon=True)
        self._thread.start()
        ready.wait()
        return self

    def stop(self) -> None:
        if self._thread is None:
            self._sock.close()
            return
        if self._loop.is_running():
            asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> StubLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stats(self) -> dict[str, Any]:
        """Counts so far: what ``GET /v1/stats`` answers."""
        return {
            "requests": self.requests,
            "answered": self.answered,
            "rate_limited": self.rate_limited,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "latency_sum": self.latency_sum,
            "latency_mean": self.latency_sum / self.answered if self.answered else 0.0,
            "latency": str(self.latency),
        }

    async def answer(self, headers: dict[str, str], body: dict[str, Any]) -> Answer:
        """Status, headers and JSON body for one chat request (``headers`` in lower case)."""
        self.requests += 1
        if self.keep_bodies:
            self.bodies.append(body)
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return error(401, "Incorrect API key provided.", "invalid_api_key")
        kind = (body.get("response_format") or {}).get("type")
        if not self.structured and kind == "json_schema":
            return error(400, "response_format json_schema is not supported", "bad_request")
        rejection = SERVER_KINDS.get(self.reject_structured or "")
        if rejection is not None and kind in rejection.types:
            if rejection.status is not None:
                return rejection.status, {}, filled(rejection.body, kind)
            body = {k: v for k, v in body.items() if k != "response_format"}
        if (limited := self._over_limit()) is not None:
            self.rate_limited += 1
            return limited
        seconds, ticket = self._draws.draw(), object()
        self._due[ticket] = time.monotonic() + seconds
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if seconds:
                await asyncio.sleep(seconds)
            reply = self.responder(body)
            if isinstance(reply, Hang):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), reply.seconds)
                return error(504, "stub hang ended", "timeout")
        finally:
            self.in_flight -= 1
            del self._due[ticket]
        if isinstance(reply, Fail):
            status, _, failure = error(reply.status, reply.message, reply.code)
            return status, reply.headers, failure
        self.answered += 1
        self.latency_sum += seconds
        return 200, {}, reply_completion(body, reply)

    def _over_limit(self) -> Answer | None:
        """A 429 for a request over the concurrency or the rate limit, else None."""
        now = time.monotonic()
        if self.max_concurrent is not None and self.in_flight >= self.max_concurrent:
            wait = max(0.0, min(self._due.values()) - now)
            return too_many(wait, f"concurrent requests: Limit {self.max_concurrent}")
        if self.rate is not None and (wait := self.rate.admit(now)):
            return too_many(wait, f"requests per second (RPS): Limit {self.rate.rps:g}")
        return None

    def _serve_forever(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        connect, sock, tls = self._connection, self._sock, self.tls
        start = asyncio.start_server(connect, sock=sock, limit=MAX_HEAD, ssl=tls)
        self._server = self._loop.run_until_complete(start)
        ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    async def _close(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)  # type: ignore[arg-type]
        try:
            while await self._exchange(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away or sent too much
        except asyncio.CancelledError:
            pass  # stopping (Python 3.11 logs a traceback for a cancelled connection task)
        finally:
            self._connections.discard(task)  # type: ignore[arg-type]
            writer.close()

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """One request and its answer; False when the connection is to be closed."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        line, *lines = head.decode("latin-1").split("\r\n")
        method, path, version = [*line.split(" ", 2), "", ""][:3]
        headers = {}
        for header in lines:
            name, _, value = header.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = headers.get("content-length", "0")
        data = await reader.readexactly(int(length)) if length.isdigit() else b""
        status, extra, payload = await self._route(method, path, headers, data)
        close = headers.get("connection", "").lower() == "close" or version != "HTTP/1.1"
        writer.write(_response(status, extra, payload, close))
        await writer.drain()
        return not close

    async def _route(self, method: str, uri: str, headers: dict[str, str], data: bytes) -> Answer:
        path = uri.split("?", 1)[0].rstrip("/")
        if method == "GET" and path.endswith("/stats"):
            return 200, {}, self.stats()
        if method != "POST" or not path.endswith("/chat/completions"):
            return error(404, f"no route {method} {path}", "not_found")
        if self.keep_bodies:
            self.paths.append(uri)
        try:
            body = json.loads(data or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return error(400, "body is not JSON", "bad_json")
        if not isinstance(body, dict):
            return error(400, "body is not a JSON object", "bad_json")
        try:
            return await self.answer(headers, body)
        except Exception as exc:  # a responder's bug: an answer, not a dropped connection
            return error(500, f"stub responder failed: {exc!r}", "stub_error")


def _response(status: int, headers: dict[str, str], payload: Any, close: bool) -> bytes:
    data = json.dumps(payload).encode()
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = "Status"
    lines = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json"]
    lines += [f"Content-Length: {len(data)}", *(f"{k}: {v}" for k, v in headers.items())]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data


def _latency(text: str) -> Latency:
    try:
        return parse_latency(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(kind: type) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not value > 0 or not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r}: must be a number > 0")
        return value

    return parse


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m stellar.llm.stub_server",
        description=__doc__.splitlines()[0],
        epilog="It prints its URL (http://HOST:PORT/v1) on the first line of stdout.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument(
        "--delay",
        type=lambda text: _latency(f"fixed:{text}"),
        metavar="SECONDS",
        help="fixed seconds before each answer (default 0; the same as --latency fixed:SECONDS)",
    )
    parser.add_argument(
        "--latency",
        type=_latency,
        metavar="SPEC",
        help=f"seconds per answer: {LATENCY_FORMS} (heavy-tailed; mean = median x "
        "exp(sigma^2/2); e.g. lognormal:median=0.5,sigma=0.8 has mean 0.69 s, p99 3.2 s)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the latency draws")
    parser.add_argument(
        "--rps", type=_positive(float), help="requests per second; over it: HTTP 429"
    )
    parser.add_argument(
        "--burst", type=_positive(int), help="requests at once within --rps (default: --rps)"
    )
    parser.add_argument(
        "--max-concurrent",
        type=_positive(int),
        metavar="N",
        help="requests in flight at once; over it: HTTP 429",
    )
    parser.add_argument(
        "--api-key", help="refuse requests without this key (default: accept any key)"
    )
    parser.add_argument(
        "--reject-structured",
        choices=list(SERVER_KINDS),
        help="answer an unsupported response_format as this server kind does",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    cli = parser()
    args = cli.parse_args(argv)
    if args.delay is not None and args.latency is not None:
        cli.error("give --delay or --latency, not both")
    if args.burst is not None and args.rps is None:
        cli.error("--burst needs --rps")
    server = StubLLMServer(
        host=args.host,
        port=args.port,
        latency=args.latency or args.delay,
        seed=args.seed,
        rps=args.rps,
        burst=args.burst,
        max_concurrent=args.max_concurrent,
        api_key=args.api_key,
        reject_structured=args.reject_structured,
        keep_bodies=False,
    ).start()
    print(server.url, flush=True)
    print(f"stub: latency {server.latency}", file=sys.stderr, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
