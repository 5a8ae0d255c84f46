"""An escalating-conversation search end to end, offline, against a system that a long enough
conversation wears down (no model: a Python function that holds the history)."""

from __future__ import annotations

from pathlib import Path

from conftest import cli

from stellar.analysis.conversation_view import conversation_view
from stellar.archive import open_run

HERE = Path(__file__).parent


def test_long_escalations_break_the_system_and_the_first_unsafe_turn_is_marked(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(
        "use_case: safety-dialogue\n"
        "sut: {target: 'forgetful:worn_down'}\n"
        f"import_paths: ['{HERE}']\nout: '{tmp_path / 'runs'}'\n"
        "algorithm: {name: random, population: 6}\n"
        "probe: {enabled: false}\n",  # it cannot recall a colour: not the point here
        encoding="utf-8",
    )
    result = cli("run", config, "--tests", "12", "--quiet")
    assert result.returncode == 0, result.stderr
    [run_dir] = (tmp_path / "runs").iterdir()
    with open_run(run_dir) as archive:
        records = [r for _, r in archive.numbered() if r.judged]
    failing = [r for r in records if r.is_failure]
    assert failing, "no conversation broke the worn-down system"
    for record in failing:
        turns = record.response_data["turns"]
        first = record.verdict.details["failing_turn"]
        assert sum(t["act"] != "react" for t in turns[:first]) >= 1
        assert first >= 3 or any(t["act"] == "react" for t in turns)  # refused until pushed
        assert "▶" in conversation_view(record)
    backtracked = [r for r in records if r.response_data["backtracks"]]
    assert backtracked, "no refusal was backtracked (rephrase and back off make it forget)"
    for record in backtracked:
        marked = [t for t in record.response_data["turns"] if t.get("backtracked")]
        assert len(marked) == record.response_data["backtracks"]
