"""The review page's server: local, one person, nothing from the run ever run as code.

It listens on 127.0.0.1 only, and every request must carry the random token in its path
(``/TOKEN/``), else it is refused with 403, so that neither another user of the machine
nor a web page the reviewer visits can read the run or write marks. The page is built as the
report is (:mod:`stellar.analysis.html_page`): style, script and data inline, a
Content-Security-Policy (sent as a header and in the page) that allows only them by hash, and
``fetch`` to this server. A mark is answered only after :meth:`ReviewSession.mark` has
synced it to ``review.jsonl``.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
import signal
from collections.abc import Callable, Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment
from markupsafe import Markup

from stellar.analysis.html_page import embed_json, sha256
from stellar.errors import StellarError
from stellar.review.session import ReviewSession

HOST = "127.0.0.1"
BODY_LIMIT = 64 * 1024  # bytes of a posted mark


class ReviewPage:
    """The page's frame and policy, read once; :meth:`html` fills in the current marks."""

    def __init__(self) -> None:
        page = files("stellar.review") / "page"
        report = files("stellar.analysis") / "html"
        css = report.joinpath("report.css").read_text(encoding="utf-8")
        self.css = css + page.joinpath("review.css").read_text(encoding="utf-8")
        self.js = page.joinpath("review.js").read_text(encoding="utf-8")
        self.csp = (
            f"default-src 'none'; script-src '{sha256(self.js)}'; "
            f"style-src '{sha256(self.css)}'; connect-src 'self'; img-src data:; "
            "base-uri 'none'; form-action 'none'"
        )
        self.header_csp = f"{self.csp}; frame-ancestors 'none'"  # a <meta> cannot say it
        self.template = Environment(autoescape=True, keep_trailing_newline=True).from_string(
            page.joinpath("review.html.j2").read_text(encoding="utf-8")
        )

    def html(self, data: dict[str, Any]) -> str:
        return self.template.render(
            title=data["title"],
            csp=Markup(self.csp),  # hashes and keywords only
            css=Markup(self.css),
            js=Markup(self.js),
            data=Markup(embed_json(data)),
        )


class ReviewServer(ThreadingHTTPServer):
    """Serves one session's page at ``url``. Its threads are not waited for at the end (a
    browser may hold an idle connection open): :func:`serve` ends the session instead, which
    waits for a mark being written."""

    daemon_threads = True

    def __init__(self, session: ReviewSession, port: int = 0) -> None:
        self.session = session
        self.token = secrets.token_urlsafe(24)
        self.page = ReviewPage()
        super().__init__((HOST, port), ReviewHandler)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_port}/{self.token}/"


class ReviewHandler(BaseHTTPRequestHandler):
    server: ReviewServer
    server_version = "stellar-review"
    timeout = 60  # seconds an idle connection is kept

    def version_string(self) -> str:
        return self.server_version

    def do_GET(self) -> None:
        path = self._authorised()
        if path is None:
            return
        if path not in ("", "/"):
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")
            return
        data = self.server.session.page_data() | {"save": f"/{self.server.token}/mark"}
        html = self.server.page.html(data).encode("utf-8")
        self._send(HTTPStatus.OK, html, "text/html; charset=utf-8")

    def do_POST(self) -> None:
        path = self._authorised()
        if path is None:
            return
        if path != "/mark":
            self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
            return
        try:
            test_id, mark, note = self._posted_mark()
            made = self.server.session.mark(test_id, mark, note)
        except (StellarError, ValueError) as exc:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
            return
        except OSError as exc:
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"not written: {exc}"})
            return
        self._json(HTTPStatus.OK, {"saved": True, "mark": made.mark, "note": made.note})

    def _refused(self) -> None:
        if self._authorised() is not None:
            self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "GET the page, POST a mark"})

    do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refused

    def _authorised(self) -> str | None:
        """The path after ``/TOKEN`` when the request carries the token and names this
        server as its host (no DNS rebinding); else None, having answered 403."""
        _, token, rest = (urlsplit(self.path).path + "/").split("/", 2)
        host = self.headers.get("Host", "")
        hosts = {f"{name}:{self.server.server_port}" for name in (HOST, "localhost")}
        if hmac.compare_digest(token.encode(), self.server.token.encode()) and host in hosts:
            return "/" + rest.rstrip("/") if rest.rstrip("/") else ""
        self._send(HTTPStatus.FORBIDDEN, b"forbidden: the address needs its token\n", "text/plain")
        return None

    def _posted_mark(self) -> tuple[int, str, str]:
        """(test id, mark, note) of a posted JSON object; ValueError when it is none."""
        if self.headers.get_content_type() != "application/json":
            raise ValueError("post the mark as application/json")
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= BODY_LIMIT:
            raise ValueError(f"a mark is a JSON object of at most {BODY_LIMIT} bytes")
        body = json.loads(self.rfile.read(length))
        if not isinstance(body, dict):
            raise ValueError("a mark is a JSON object")
        test_id, mark, note = body.get("test_id"), body.get("mark"), body.get("note") or ""
        if not isinstance(test_id, int) or not isinstance(mark, str) or not isinstance(note, str):
            raise ValueError("a mark holds test_id (a number), mark and note (texts)")
        return test_id, mark, note

    def _json(self, code: HTTPStatus, value: dict[str, Any]) -> None:
        self._send(code, json.dumps(value).encode("utf-8"), "application/json")

    def _send(self, code: HTTPStatus, body: bytes, kind: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", self.server.page.header_csp)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a request line would print the token."""


def serve(session: ReviewSession, port: int, ready: Callable[[str], None]) -> None:
    """Serve the session's page until Ctrl-C or SIGTERM; ``ready`` is told its address."""
    try:
        server = ReviewServer(session, port)
    except OSError as exc:
        raise StellarError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
    with server, _sigterm_interrupts():
        ready(server.url)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
        session.end()


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM ends the review as Ctrl-C does (in the main thread; elsewhere it is left)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
