"""`stellar review`'s server without a browser: the token, its answers to bad posts, a mark on
disk before its answer, the lock it holds, and the summary and report when it ends."""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import pytest
from conftest import cli
from review_server import builtin_run, request, serving

from stellar.review.marks import MARKS_NAME, read_marks


@pytest.fixture
def run_dir(tmp_path):
    return builtin_run(tmp_path / "runs")


def page_csp(html: str) -> str:
    [csp] = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    return csp.replace("&#39;", "'")


def first_queued(html: str) -> dict:
    [data] = re.findall(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    return json.loads(data)["items"][0]


def test_every_request_needs_the_token(run_dir):
    with serving(run_dir) as server:
        base = server.url.rsplit("/", 2)[0]
        token = urlsplit(server.url).path.strip("/")
        mark = {"test_id": 1, "mark": "real", "note": ""}
        for url in (
            f"{base}/",
            f"{base}/favicon.ico",
            f"{base}/x{token}/",
            f"{base}/{token[:-1]}/",
        ):
            assert request(url)[0] == 403, url
            assert request(url.rstrip("/") + "/mark", mark)[0] == 403, url
        assert request(f"{base}/?token={token}")[0] == 403
        # the right token under another host name (DNS rebinding) is refused too
        assert (
            request(server.url, headers={"Host": f"evil.example:{urlsplit(base).port}"})[0] == 403
        )
        assert not (run_dir / MARKS_NAME).exists()
        assert request(server.url)[0] == 200
        assert request(server.url + "nothing")[0] == 404


def test_the_page_carries_its_policy_as_a_header_too(run_dir):
    import urllib.request

    with serving(run_dir) as server, urllib.request.urlopen(server.url, timeout=30) as response:
        html = response.read().decode()
        header = response.headers["Content-Security-Policy"]
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Cache-Control"] == "no-store"
    csp = page_csp(html)
    assert header == f"{csp}; frame-ancestors 'none'"
    rules = dict(rule.strip().split(" ", 1) for rule in csp.split(";"))
    assert rules["default-src"] == "'none'" and rules["connect-src"] == "'self'"
    assert rules["script-src"].startswith("'sha256-") and " " not in rules["script-src"]


def test_a_mark_is_on_disk_before_it_is_answered_and_bad_posts_write_nothing(run_dir):
    with serving(run_dir) as server:
        item = first_queued(request(server.url)[1])
        save = server.url + "mark"
        for bad in (
            {"test_id": item["id"], "mark": "maybe"},
            {"test_id": 99_999, "mark": "real"},
            {"test_id": str(item["id"]), "mark": "real"},
            {"test_id": item["id"], "mark": "real", "note": 5},
            ["not", "an", "object"],
        ):
            code, body = request(save, bad)
            assert code == 400 and json.loads(body)["error"], bad
        assert not (run_dir / MARKS_NAME).exists()
        code, body = request(save, {"test_id": item["id"], "mark": "false_alarm", "note": " n "})
        assert code == 200 and json.loads(body) == {
            "saved": True,
            "mark": "false_alarm",
            "note": "n",
        }
        mark = read_marks(run_dir)[item["id"]]  # before the server was stopped
        assert (mark.mark, mark.note, mark.sample, mark.reviewer) == (
            "false_alarm",
            "n",
            item["sample"],
            "tester",
        )
        assert mark.failed == item["failed"]
        # the page, loaded again, shows the mark
        assert first_queued(request(server.url)[1])["mark"] == "false_alarm"


def test_the_review_holds_the_run_directory(run_dir, tmp_path):
    with serving(run_dir) as server:
        (tmp_path / "m.jsonl").write_text("{}\n", encoding="utf-8")
        result = cli("review", run_dir, "--labels", tmp_path / "m.jsonl")
        assert result.returncode == 2 and result.stderr.count("\n") == 1
        assert f"pid {server.process.pid}" in result.stderr
        assert request(server.url)[0] == 200  # still serving


def test_ending_the_review_prints_the_counts_and_writes_the_report(run_dir):
    with serving(run_dir) as server:
        item = first_queued(request(server.url)[1])
        assert request(server.url + "mark", {"test_id": item["id"], "mark": "real"})[0] == 200
        before = (run_dir / "report.html").stat().st_mtime_ns
        out, err = server.stop()  # SIGTERM
    assert server.process.returncode == 0, err
    assert "review: 1 marked of" in out and "(1 real, 0 false alarm, 0 unsure)" in out
    assert "precision of the failures:" in out and "report:" in out
    assert (run_dir / "report.html").stat().st_mtime_ns > before
    assert '"review":{"counts"' in (run_dir / "report.html").read_text(encoding="utf-8")
