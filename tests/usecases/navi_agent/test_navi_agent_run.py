"""`stellar run navi-agent` end to end, offline; a bad state file or policy stops it at load
with exit code 2 and one line."""

from __future__ import annotations

import json
import sqlite3

import yaml
from conftest import cli

from stellar.usecases.navi_agent.database import build_state
from stellar.usecases.navi_agent.policy import DEFAULT


def test_a_short_run_finds_failures_with_signatures_and_keeps_the_plans(tmp_path):
    result = cli("run", "navi-agent", "--tests", "20", "--seed", "3", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [run] = (tmp_path / "runs").iterdir()
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["tests"] == 20 and summary["sut_errors"] == 0 and summary["judge_errors"] == 0
    assert summary["failures"] > 0
    with sqlite3.connect(run / "archive.sqlite") as db:
        rows = [json.loads(d) for (d,) in db.execute("SELECT details FROM tests")]
    modes = [d["mode"] for d in rows if "mode" in d]
    assert modes and all("[agent]" in m or "[environment]" in m for m in modes)
    assert all("goal" in d["plan"] and "environment" in d["plan"] for d in rows)


def test_a_state_file_of_another_shape_stops_the_run_at_load_in_one_line(tmp_path):
    state = build_state(0)
    state["bookings"][0]["party_size"] = "four"
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    result = cli("run", "navi-agent", "--option", f"state={path}", "--tests", "2", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "bookings/0/party_size" in lines[0], result.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_policy_naming_an_unknown_tool_stops_the_run_at_load_in_one_line(tmp_path):
    policy = yaml.safe_load(DEFAULT.read_text(encoding="utf-8"))
    policy["rules"]["notice"]["tools"].append("refund_payment")
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(policy), encoding="utf-8")
    result = cli("run", "navi-agent", "--option", f"policy={path}", "--tests", "2", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "'refund_payment'" in lines[0], result.stderr
