"""Failure conditions where a developer meets them: `stellar explain`, the end-of-run summary
and `stellar export` (the report's section: tests/analysis/test_html_report.py)."""

from __future__ import annotations

import csv
import json

import pytest
from conftest import TOY, cli

import stellar.analysis.failure_rules as fr
from stellar.analysis.failure_rules import Condition, FailureRule, run_failure_rules
from stellar.cli.output import RULES_SHOWN, conditions_block
from stellar.export import export_failure_rules


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A 60-test offline run of the built-in use case: (its directory, what `stellar run`
    printed)."""
    out = tmp_path_factory.mktemp("runs")
    result = cli("run", "--tests", "60", "--out", out, "--quiet")
    assert result.returncode == 0, result.stderr
    [run_dir] = list(out.iterdir())
    return run_dir, result.stdout


@pytest.fixture(scope="module")
def rules(run):
    found = run_failure_rules(run[0])
    assert found  # the built-in use case fails under a few feature values
    return found


@pytest.fixture(scope="module")
def passing_run(tmp_path_factory):
    """A toy run whose oracle never fails a test."""
    out = tmp_path_factory.mktemp("passing")
    result = cli(
        "run", TOY / "run.yaml", "--tests", "20", "--out", out, "--quiet",
        "--set", "oracle.below={quality: 0}",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [run_dir] = list(out.iterdir())
    return run_dir, result.stdout


def held_line(rule: FailureRule) -> str:
    return f"{rule.line()} (held back: {rule.held_failed} of {rule.held_tests})"


def test_the_run_summary_shows_the_conditions_after_the_modes_table(run, rules):
    _, out = run
    after_modes = out.split("Failure modes (largest first", 1)[1]
    block, rest = after_modes.split("Failure conditions", 1)[1].split("Stopped:", 1)
    lines = [line.strip() for line in block.strip().splitlines()[1:]]
    assert lines[: len(rules[:RULES_SHOWN])] == [held_line(r) for r in rules[:RULES_SHOWN]]
    assert "Failure conditions" not in rest


def test_a_run_without_failures_shows_no_conditions(passing_run):
    _, out = passing_run
    assert "failures 0" in out and "Failure conditions" not in out


def test_the_summary_block_lists_five_rules_and_points_to_explain_for_more():
    many = [synthetic_rule(f"value{i}", 10 - i) for i in range(RULES_SHOWN + 2)]
    lines = conditions_block(many, "runs/r").splitlines()
    assert [line.strip() for line in lines[2:-1]] == [held_line(r) for r in many[:RULES_SHOWN]]
    assert lines[-1].strip() == f"stellar explain runs/r for all {RULES_SHOWN + 2}"
    few = conditions_block(many[:2], "runs/r")
    assert "stellar explain" not in few and held_line(many[1]) in few
    assert "no rule over the feature values held" in conditions_block([], "runs/r")


def synthetic_rule(value: str, failed: int) -> FailureRule:
    return FailureRule((Condition("kind", value),), failed + 1, failed, 4, 3, {1: failed})


def test_explain_prints_every_rule_and_how_rules_are_checked(run, rules, monkeypatch):
    monkeypatch.setenv("COLUMNS", "240")
    result = cli("explain", run[0])
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert len(rows) == len(rules)
    for row, rule in zip(rows, rules, strict=True):
        cells = [cell.strip() for cell in row.strip("│").split("│")]
        modes = ", ".join(f"{mode} ({n})" for mode, n in rule.modes.items())
        held = f"{rule.held_failed} of {rule.held_tests} ({rule.held_precision:.0%})"
        stated = [rule.text, str(rule.tests), str(rule.failed), f"{rule.precision:.0%}"]
        assert cells[1:] == [*stated, held, modes]
    assert "mined on a random half of the verdicts" in result.stdout
    assert "within 0.1 of the stated one" in result.stdout


def test_explain_json_is_the_rules(run, rules):
    result = cli("explain", run[0], "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [rule.to_dict() for rule in rules]
    shown = json.loads(cli("explain", run[0], "--json", "--show", "1").stdout)
    assert shown == [rules[0].to_dict()]


def test_explain_says_so_when_nothing_failed(passing_run):
    result = cli("explain", passing_run[0])
    assert result.returncode == 0, result.stderr
    assert "0 failed" in result.stdout
    assert "No test failed: there are no failure conditions to find." in result.stdout
    assert json.loads(cli("explain", passing_run[0], "--json").stdout) == []


@pytest.mark.parametrize("archive", [None, b"", b"not a database at all"])
def test_explain_of_what_is_no_run_exits_2_in_one_line(tmp_path, archive):
    if archive is not None:
        (tmp_path / "archive.sqlite").write_bytes(archive)
    result = cli("explain", tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"stellar: error: {tmp_path}"), result.stderr
    assert result.stdout == ""


def test_explain_help_says_what_a_rule_is_with_an_example():
    result = cli("explain", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    example = "category=cafe & implicitness!=not: 247 of 254 tests failed (held back: 120 of 126)"
    assert example in text and "--json" in text and "--show" in text
    # the checks it states are the ones applied
    assert f"at least {fr.MIN_HELD} held-back tests" in text
    assert f"within {fr.TOLERANCE} of the stated one" in text
    assert f"at least {fr.MIN_PRECISION} and at least {fr.MIN_LIFT} above" in text


def test_run_show_limits_the_conditions_too(tmp_path):
    result = cli("run", "--tests", "40", "--out", tmp_path, "--quiet", "--show", "1")
    assert result.returncode == 0, result.stderr
    block = result.stdout.split("Failure conditions", 1)[1].split("Stopped:", 1)[0]
    assert len([line for line in block.splitlines()[1:] if "tests failed" in line]) <= 1
    result = cli("run", "--tests", "40", "--out", tmp_path, "--quiet", "--show", "0")
    assert "Failure conditions" not in result.stdout and "Failure modes" not in result.stdout


def test_export_writes_the_rules_as_jsonl_and_csv(run, rules, tmp_path):
    result = cli("export", run[0], "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (tmp_path / "failure_rules.jsonl").open()]
    assert rows == [rule.to_dict() for rule in rules]
    with (tmp_path / "failure_rules.csv").open(newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [(row["rule"], int(row["tests"]), int(row["failed"])) for row in table] == [
        (rule.text, rule.tests, rule.failed) for rule in rules
    ]
    assert table[0]["modes"] == ", ".join(f"{m} ({n})" for m, n in rules[0].modes.items())


def test_the_rules_csv_neutralises_formulas(tmp_path):
    rule = FailureRule((Condition("=HYPERLINK(1)", "x"),), 4, 4, 2, 2, {2: 3, 1: 1})
    export_failure_rules(tmp_path, [rule.to_dict()])
    with (tmp_path / "failure_rules.csv").open(newline="") as fh:
        [row] = list(csv.DictReader(fh))
    assert row["rule"] == "'=HYPERLINK(1)=x" and row["modes"] == "2 (3), 1 (1)"


def test_export_of_a_run_without_failures_writes_empty_rule_files(passing_run, tmp_path):
    assert cli("export", passing_run[0], "--out", tmp_path).returncode == 0
    assert (tmp_path / "failure_rules.jsonl").read_text() == ""
    [header] = (tmp_path / "failure_rules.csv").read_text().splitlines()
    assert header.split(",") == [
        "rule",
        "tests",
        "failed",
        "precision",
        "held_back_tests",
        "held_back_failed",
        "held_back_precision",
        "modes",
    ]
