"""The navigation assistant as a small HTTP service (standard library only).

Endpoints:

* ``POST /query`` with ``{"text": "..."}`` answers ``{"answer": "...", "pois": [...]}``, each
  POI with name, category, cuisine, rating, price, payment, parking and address (one turn,
  nothing remembered). With ``"session": "ID"`` the text is a turn of that conversation and
  the reply adds ``"session_id": "ID"``;
* ``POST /chat`` with ``{"text": "...", "session": "ID"}`` answers in conversation ``ID``
  (:class:`~stellar.usecases.navi.conversation.NaviConversation`); without ``session`` (or
  with null) it starts a new conversation. The reply is ``{"answer", "pois", "session_id"}``:
  a client reads its id from the first reply and sends it with every later turn. An unknown
  id starts a conversation under that id; the :data:`MAX_SESSIONS` most recently used are
  kept, older ones are forgotten;
* ``DELETE /chat/ID`` forgets conversation ``ID`` (``{"session_id": "ID", "deleted": true}``;
  404 when unknown);
* ``GET /health`` answers ``{"status": "ok"}``.

Errors are JSON too: ``{"error": "..."}`` with 400 (bad JSON, missing or non-string text, a
session id that is not a string of 1 to 128 characters), 404 (unknown path or session), 405
(wrong method), 413 (body too large) or 500 (the assistant failed).
Run it with ``stellar serve navi`` (:func:`build_server`) or
``python -m stellar.usecases.navi.server --port 8080``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import threading
import urllib.parse
import uuid
from collections import OrderedDict
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from stellar.records import Response
from stellar.usecases.navi.assistant import NavigationAssistant, navi_assistant
from stellar.usecases.navi.conversation import NaviConversation

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20
DISCARD_LIMIT_BYTES = 16 << 20  # larger rejected bodies are not read: the connection is closed
QUERY_PATH, CHAT_PATH, HEALTH_PATH = "/query", "/chat", "/health"
MAX_SESSIONS = 10_000
"""Conversations a server keeps; the least recently used is forgotten beyond."""
MAX_SESSION_ID = 128


class Conversations:
    """The server's conversations by id, the ``limit`` most recently used kept; turns of one
    conversation are answered one at a time, different conversations in parallel."""

    def __init__(self, assistant: NavigationAssistant, limit: int = MAX_SESSIONS) -> None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.assistant, self.limit = assistant, limit
        self._lock = threading.Lock()
        self._items: OrderedDict[str, tuple[NaviConversation, threading.Lock]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._items

    def reply(self, session_id: str | None, text: str) -> tuple[str, Response]:
        """The reply in conversation ``session_id`` (a new one, with a fresh id, for None)."""
        with self._lock:
            if session_id is None:
                session_id = uuid.uuid4().hex
            entry = self._items.get(session_id)
            if entry is None:
                entry = (NaviConversation(self.assistant), threading.Lock())
                self._items[session_id] = entry
                while len(self._items) > self.limit:
                    self._items.popitem(last=False)
            self._items.move_to_end(session_id)
        conversation, turn_lock = entry
        with turn_lock:
            return session_id, conversation.reply(text)

    def delete(self, session_id: str) -> bool:
        """Forget a conversation; whether it was known."""
        with self._lock:
            return self._items.pop(session_id, None) is not None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    assistant: NavigationAssistant
    conversations: Conversations
    verbose: bool


class NaviHandler(BaseHTTPRequestHandler):
    """Serves the assistant of its server (see the module docstring)."""

    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self._path() == HEALTH_PATH:
            self._send(HTTPStatus.OK, {"status": "ok"})
        elif self._path() in (QUERY_PATH, CHAT_PATH):
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"use POST for {self._path()}"})
        else:
            self._not_found()

    def do_POST(self) -> None:
        path = self._path()
        if path not in (QUERY_PATH, CHAT_PATH):
            self._not_found()
            return
        text, session, problem = self._read_request()
        if problem is not None:
            too_large = problem.startswith("request body too large")
            status = HTTPStatus.REQUEST_ENTITY_TOO_LARGE if too_large else HTTPStatus.BAD_REQUEST
            self._send(status, {"error": problem})
            return
        conversational = path == CHAT_PATH or session is not None
        try:
            if conversational:
                session, response = self.server.conversations.reply(session, text)
            else:
                response = self.server.assistant.answer(text)
        except Exception as error:  # report, keep serving
            log.exception("the assistant failed on %r", text)
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"assistant failed: {error}"})
            return
        payload: dict[str, Any] = {"answer": response.text, "pois": response.data or []}
        if conversational:
            payload["session_id"] = session
        self._send(HTTPStatus.OK, payload)

    def do_DELETE(self) -> None:
        path = self._path()
        prefix = CHAT_PATH + "/"
        if not path.startswith(prefix) or "/" in path[len(prefix) :]:
            if path in (QUERY_PATH, CHAT_PATH, HEALTH_PATH):
                self._send(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"cannot DELETE {path}"})
            else:
                self._not_found()
            return
        session = urllib.parse.unquote(path[len(prefix) :])
        if self.server.conversations.delete(session):
            self._send(HTTPStatus.OK, {"session_id": session, "deleted": True})
        else:
            self._send(HTTPStatus.NOT_FOUND, {"error": f"no such session: {session}"})

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/") or "/"

    def _read_request(self) -> tuple[str, str | None, str | None]:
        """The request's text and session id (None: none given), or an error message."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return "", None, "invalid Content-Length"
        if length > MAX_BODY_BYTES:
            self._discard(length)
            return "", None, f"request body too large (limit {MAX_BODY_BYTES} bytes)"
        try:
            body = json.loads(self.rfile.read(length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            return "", None, f"request body is not valid JSON ({error})"
        if not isinstance(body, dict) or "text" not in body:
            return "", None, 'expected a JSON object with "text"'
        if not isinstance(body["text"], str):
            return "", None, '"text" must be a string'
        session = body.get("session")
        if session is not None and (
            not isinstance(session, str) or not 0 < len(session) <= MAX_SESSION_ID
        ):
            problem = f'"session" must be a string of 1 to {MAX_SESSION_ID} characters'
            return "", None, problem
        return body["text"], session, None

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
    max_sessions: int = MAX_SESSIONS,
) -> ThreadingHTTPServer:
    """A ready (not yet serving) server; port 0 picks a free port (see ``server_address``);
    it keeps the ``max_sessions`` most recently used conversations."""
    server = _Server((host, port), NaviHandler)
    server.assistant = assistant if assistant is not None else NavigationAssistant()
    server.conversations = Conversations(server.assistant, max_sessions)
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
