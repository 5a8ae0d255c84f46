"""The navigation assistant as a small HTTP service (standard library only).

Endpoints:

* ``POST /query`` with ``{"text": "..."}`` answers ``{"answer": "...", "pois": [...]}``, each
  POI with name, category, cuisine, rating, price, payment, parking and address;
* ``GET /health`` answers ``{"status": "ok"}``.

Errors are JSON too: ``{"error": "..."}`` with 400 (bad JSON, missing or non-string text),
404 (unknown path), 405 (wrong method), 413 (body too large) or 500 (the assistant failed).
Run it with ``stellar serve navi`` (:func:`build_server`) or
``python -m stellar.usecases.navi.server --port 8080``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from stellar.usecases.navi.assistant import NavigationAssistant, navi_assistant

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20
DISCARD_LIMIT_BYTES = 16 << 20  # larger rejected bodies are not read: the connection is closed
QUERY_PATH, HEALTH_PATH = "/query", "/health"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    assistant: NavigationAssistant
    verbose: bool


class NaviHandler(BaseHTTPRequestHandler):
    """Serves the assistant of its server (see the module docstring)."""

    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self._path() == HEALTH_PATH:
            self._send(HTTPStatus.OK, {"status": "ok"})
        elif self._path() == QUERY_PATH:
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "use POST for /query"})
        else:
            self._not_found()

    def do_POST(self) -> None:
        if self._path() != QUERY_PATH:
            self._not_found()
            return
        text, problem = self._read_text()
        if problem is not None:
            too_large = problem.startswith("request body too large")
            status = HTTPStatus.REQUEST_ENTITY_TOO_LARGE if too_large else HTTPStatus.BAD_REQUEST
            self._send(status, {"error": problem})
            return
        try:
            response = self.server.assistant.answer(text)
        except Exception as error:  # report, keep serving
            log.exception("the assistant failed on %r", text)
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"assistant failed: {error}"})
            return
        self._send(HTTPStatus.OK, {"answer": response.text, "pois": response.data or []})

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/") or "/"

    def _read_text(self) -> tuple[str, str | None]:
        """The request's text, or an error message."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return "", "invalid Content-Length"
        if length > MAX_BODY_BYTES:
            self._discard(length)
            return "", f"request body too large (limit {MAX_BODY_BYTES} bytes)"
        try:
            body = json.loads(self.rfile.read(length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            return "", f"request body is not valid JSON ({error})"
        if not isinstance(body, dict) or "text" not in body:
            return "", 'expected a JSON object with "text"'
        if not isinstance(body["text"], str):
            return "", '"text" must be a string'
        return body["text"], None

    def _discard(self, length: int) -> None:
        """Read and drop a rejected body (so the client sees the reply), or hang up."""
        self.close_connection = True
        if length > DISCARD_LIMIT_BYTES:
            return
        while length > 0:
            chunk = self.rfile.read(min(length, 1 << 16))
            if not chunk:
                break
            length -= len(chunk)

    def _not_found(self) -> None:
        self._send(HTTPStatus.NOT_FOUND, {"error": f"no such endpoint: {self._path()}"})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)


def make_server(
    port: int = 0,
    host: str = "127.0.0.1",
    assistant: NavigationAssistant | None = None,
    verbose: bool = False,
) -> ThreadingHTTPServer:
    """A ready (not yet serving) server; port 0 picks a free port (see ``server_address``)."""
    server = _Server((host, port), NaviHandler)
    server.assistant = assistant if assistant is not None else NavigationAssistant()
    server.verbose = verbose
    return server


def build_server(host: str, port: int, pois: str = "generated") -> ThreadingHTTPServer:
    """A ready (not yet serving) server with the shared assistant for the venue source ``pois``
    (the use case's ``serve`` hook)."""
    return make_server(port, host, navi_assistant(pois=pois))


def serve(
    port: int,
    host: str = "127.0.0.1",
    assistant: NavigationAssistant | None = None,
    verbose: bool = False,
) -> None:
    """Serve until interrupted (Ctrl-C)."""
    with make_server(port, host, assistant, verbose) as server:
        bound_host, bound_port = server.server_address[:2]
        print(f"navigation assistant on http://{bound_host}:{bound_port}{QUERY_PATH}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the STELLAR navigation assistant.")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    serve(args.port, args.host, verbose=args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
