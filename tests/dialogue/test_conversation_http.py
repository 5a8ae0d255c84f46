"""A conversation search against `stellar serve navi` over real HTTP: the session id read from
the first reply, and a configuration whose server forgets stopped by the probe."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cli, serving

from stellar.archive import open_run
from stellar.records import Status
from stellar.usecases.navi.assistant import navi_assistant
from stellar.usecases.navi.server import make_server


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = make_server(0, assistant=navi_assistant())
    with serving(server) as url:
        yield url


def config(tmp_path: Path, url: str, conversation: str, body: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(
        "use_case: navi-dialogue\n"
        f"sut: {{type: http, url: '{url}', body: {body}, answer: $.answer, data: $.pois,"
        f" conversation: {conversation}}}\n"
        f"out: '{tmp_path / 'runs'}'\n",
        encoding="utf-8",
    )
    return path


def test_conversations_over_http_with_the_session_id_read_from_the_first_reply(base_url, tmp_path):
    path = config(
        tmp_path,
        f"{base_url}/chat",
        "{state: session, session_id: {from: $.session_id}}",
        "{text: '{{input}}', session: '{{session_id}}'}",
    )
    result = cli("run", path, "--tests", "12", "--quiet")
    assert result.returncode == 0, result.stderr
    [run_dir] = (tmp_path / "runs").iterdir()
    with open_run(run_dir) as archive:
        records = [r for _, r in archive.numbered()]
    ran = [r for r in records if r.status == Status.OK]
    assert len(ran) == 12
    # every planned turn was sent (or skipped, its precondition failed), in one server-side
    # conversation (the probe passed)
    assert all(
        len(r.response_data["turns"]) + len(r.response_data.get("skipped", []))
        >= len(r.details["plan"]["turns"])
        for r in ran
    )
    # the run's own config.yaml loads again: replay sends the conversations over HTTP
    replayed = cli("replay", run_dir, "--only", "all", "--out", tmp_path / "replay", "--quiet")
    assert replayed.returncode in (0, 1), replayed.stderr


def test_a_server_sent_the_history_it_does_not_read_is_stopped_with_exit_3(base_url, tmp_path):
    path = config(
        tmp_path,
        f"{base_url}/query",
        "{state: history}",
        "{text: 'hello', messages: '{{messages}}'}",
    )
    result = cli("run", path, "--tests", "5")
    assert result.returncode == 3, result.stderr
    [error] = [line for line in result.stderr.splitlines() if "error" in line]
    assert "memory probe" in error and "history" in error


def test_a_squashed_history_is_run_but_its_results_are_marked_approximate(base_url, tmp_path):
    path = config(tmp_path, f"{base_url}/query", "{state: squash}", "{text: '{{input}}'}")
    result = cli("run", path, "--tests", "4")
    assert result.returncode == 0, result.stderr
    assert "approximate: the system was sent each conversation's history" in result.stdout
    [summary] = (tmp_path / "runs").glob("*/summary.json")
    assert "flattened into one text" in summary.read_text()
