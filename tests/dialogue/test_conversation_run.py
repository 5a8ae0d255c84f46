"""Conversation runs end to end: offline navi-dialogue, replay, the memory probe, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli

from stellar.archive import open_run
from stellar.records import PLAN_KEY, Status

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def conversation_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dialogue")
    result = cli("run", "navi-dialogue", "--tests", "40", "--quiet", "--out", out)
    assert result.returncode == 0, result.stderr
    [run_dir] = out.iterdir()
    return run_dir


def test_every_test_is_a_planned_conversation_with_its_transcript(conversation_run):
    with open_run(conversation_run) as archive:
        records = [r for _, r in archive.numbered() if r.status == Status.OK]
    assert len(records) == 40
    for record in records:
        plan = record.details[PLAN_KEY]
        turns = record.response_data["turns"]
        planned = [t for t in turns if t["planned"]]
        skipped = {s["turn"] for s in record.response_data.get("skipped", [])}
        sent = [turn["text"] for i, turn in enumerate(plan["turns"]) if i not in skipped]
        assert [t["user"] for t in planned] == sent  # a turn not sent was skipped, and marked
        assert record.input_text == "\n".join(t["text"] for t in plan["turns"])
        assert "checks" in record.details
    failing = [r for r in records if r.is_failure]
    assert failing, "40 conversations with the built-in assistant found no failure"
    assert all(r.details["mode"] and r.details["failing_turn"] >= 1 for r in failing)


def test_a_replayed_failing_conversation_fails_again(conversation_run, tmp_path):
    result = cli("replay", conversation_run, "--out", tmp_path, "--quiet")
    assert result.returncode in (0, 1), result.stderr
    [replay_dir] = tmp_path.iterdir()
    outcomes = json.loads((replay_dir / "replay.json").read_text())
    assert outcomes["counts"]["still_failing"] == len(outcomes["tests"]) > 0
    summary = json.loads((replay_dir / "summary.json").read_text())
    assert summary["modes"] >= 1  # the modes of what failed again are counted


def test_the_report_shows_conversations_with_the_failing_turn_marked(conversation_run):
    page = (conversation_run / "report.html").read_text(encoding="utf-8")
    assert "▶" in page and "| user:" in page


def write_config(tmp_path: Path, target: str) -> Path:
    config = tmp_path / "run.yaml"
    config.write_text(
        f"use_case: navi-dialogue\nsut: {{target: '{target}'}}\n"
        f"import_paths: ['{HERE}']\nout: '{tmp_path / 'runs'}'\n",
        encoding="utf-8",
    )
    return config


def test_a_system_that_forgets_is_stopped_by_the_memory_probe_with_exit_3(tmp_path):
    result = cli("run", write_config(tmp_path, "forgetful:Forgetful"), "--tests", "5")
    assert result.returncode == 3, result.stderr
    error = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(error) == 1 and "memory probe" in error[0] and "forgot" in error[0], error
    assert "Traceback" not in result.stderr
    assert not any((tmp_path / "runs").glob("*")), "a half-made run directory was left"


def test_a_system_that_holds_no_conversation_is_refused_with_exit_2(tmp_path):
    result = cli("run", write_config(tmp_path, "forgetful:single_turn"), "--tests", "5")
    assert result.returncode == 2
    assert "holds no conversation" in result.stderr and "Traceback" not in result.stderr


def test_shrink_finds_a_shorter_conversation_that_fails_the_same_way(conversation_run):
    result = cli("shrink", conversation_run, "--limit", "3")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(x) for x in (conversation_run / "shrunk.jsonl").read_text().splitlines()]
    assert lines and all(x["turns_after"] <= x["turns_before"] for x in lines)
    assert any(x["turns_after"] < x["turns_before"] for x in lines)
    for line in lines:
        assert line["signature"] and line["transcript"].startswith("User: ")
        assert len(line["plan"]["turns"]) == line["turns_after"]


def test_shrink_refuses_what_is_not_a_run_directory(tmp_path):
    result = cli("shrink", tmp_path)
    assert result.returncode == 2 and "not a run directory" in result.stderr


def test_a_dry_run_counts_one_system_call_per_planned_turn():
    sut = 'sut={type: navi, llm: "openai:gpt-4o-mini"}'
    result = cli("run", "navi-dialogue", "--dry-run", "--tests", "100", "--set", sut)
    assert result.returncode == 0, result.stderr
    assert "planned turns each on average" in result.stdout
    calls = next(line for line in result.stdout.splitlines() if "gpt-4o-mini" in line)
    assert int(calls.split("│")[3].strip().replace(",", "")) > 300  # 100 conversations
