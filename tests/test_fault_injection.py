"""A system under test that answers with every kind of fault: each one is a recorded row,
none is counted as a failure, and nothing hostile reaches the terminal or the exports."""

import csv
import hashlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import TOY
from toy import answer

from stellar.archive import open_run
from stellar.cli.main import main
from stellar.records import Status

LIMIT = 5_000  # max_answer_chars of the run
FAULTS = ("http_500", "hang", "not_json", "no_answer", "cut")  # must be sut_error
HOSTILE = ("huge", "surrogate", "nul", "escapes", "formula")  # must be scored, cleaned
KINDS = ("ok", *FAULTS, *HOSTILE)
PREFIX = {
    "surrogate": "\ud800 lone ",
    "nul": "nul\x00 byte ",
    "escapes": "\x1b[2J\x1b]0;pwned\x07\x9b31m ",
    "formula": '=HYPERLINK("http://evil")',
    "huge": "x" * (3 * LIMIT),
}


def kind_of(text: str) -> str:
    """The fault an input gets, decided by the input itself (repeats get the same one)."""
    return KINDS[int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(KINDS)]


class Hostile(BaseHTTPRequestHandler):
    def do_POST(self):
        text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["text"]
        kind = kind_of(text)
        self.server.seen.append(kind)
        if kind == "cut":
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if kind == "hang":
            time.sleep(3)
        if kind == "http_500":
            return self.reply(500, b"internal error \x1b[2J")
        if kind == "not_json":
            return self.reply(200, b"<html>\x1b]0;pwned\x07</html>")
        if kind == "no_answer":
            return self.reply(200, b'{"other": 1}')
        toy = answer(text)
        body = json.dumps({"answer": PREFIX.get(kind, "") + toy.text, "data": toy.data})
        self.reply(200, body.encode())

    def reply(self, code, data):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    request_queue_size = 128  # every connection is accepted: faults come from the handler

    def handle_error(self, request, client_address):
        pass  # a client that timed out on a hanging reply: expected


@pytest.fixture
def hostile_url():
    httpd = Server(("127.0.0.1", 0), Hostile)
    httpd.seen = []
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.shutdown()


def test_every_fault_is_a_row_and_none_is_a_failure(hostile_url, tmp_path, capfd):
    config = tmp_path / "hostile.yaml"
    url = f"http://127.0.0.1:{hostile_url.server_port}/chat"
    config.write_text(
        f"use_case: {TOY}\n"
        f"sut: {{type: http, url: '{url}', answer: $.answer, data: $.data, timeout: 1.0}}\n"
        f"max_answer_chars: {LIMIT}\n"
        "budget: {tests: 80, max_error_rate: 1.0}\n"
        "oracle: {below: {quality: 0.8}}\n"  # many failures, so that a miscount shows
    )
    code = main(["run", str(config), "--out", str(tmp_path / "runs"), "--quiet", "--show", "50"])
    printed = capfd.readouterr()
    assert code == 0, printed.err
    [run_dir] = (tmp_path / "runs").iterdir()
    with open_run(run_dir) as archive:
        records = [r for r in archive.records() if r.executed]
    assert len(records) == len(hostile_url.seen) == 80
    by_kind = {kind: [r for r in records if kind_of_record(r) == kind] for kind in KINDS}
    assert all(by_kind[kind] for kind in KINDS), "every kind of fault was sent"
    for kind in FAULTS:
        assert {r.status for r in by_kind[kind]} == {Status.SUT_ERROR}, kind
        assert not any(r.is_failure for r in by_kind[kind])
    for kind in HOSTILE:
        assert {r.status for r in by_kind[kind]} == {Status.OK}, kind
    assert sum(r.is_failure for r in records) > 0
    for record in by_kind["surrogate"]:
        assert record.response_text.startswith("\ufffd lone ")
        assert record.details["stored_text"] == {"invalid_code_points_replaced": 1}
    for record in by_kind["nul"]:
        assert "\x00" not in record.response_text and record.details["stored_text"]
    for record in by_kind["huge"]:
        assert len(record.response_text) == LIMIT
        assert record.details["answer_truncated_from"] > LIMIT
    for stream in (printed.out, printed.err):
        assert not any(c in stream for c in "\x1b\x9b\x9d\x00\ud800")
    assert main(["export", str(run_dir)]) == 0
    for path in (run_dir / "export").glob("*.csv"):
        with path.open(encoding="utf-8") as fh:
            cells = [cell for row in csv.reader(fh) for cell in row]
        assert not any(cell.startswith(("=", "+", "@")) for cell in cells), path


def kind_of_record(record) -> str:
    return kind_of(record.input_text)
