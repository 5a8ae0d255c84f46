"""What the review page is given: a conversation as its transcript, the queue's order."""

from __future__ import annotations

from conftest import cli

from stellar.review.session import ReviewSession


def test_a_conversation_is_shown_as_its_transcript(tmp_path):
    result = cli("run", "navi-dialogue", "--tests", "12", "--out", tmp_path, "--quiet")
    assert result.returncode == 0, result.stderr
    [run_dir] = list(tmp_path.iterdir())
    session = ReviewSession(run_dir, "tester")
    items = session.page_data()["items"]
    assert [i["id"] for i in items] == [q.test_id for q in session.queue]
    assert items and all(i["conversation"] for i in items)
    first = items[0]["answer"]
    assert first.lstrip().startswith("1. ") and "\n     assistant: " in first
    assert "(fails below " in items[0]["scores"]
