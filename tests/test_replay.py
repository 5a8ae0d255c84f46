"""Replay: archived inputs sent again, against the same, a changed, a flaky and a down system."""

import argparse
import asyncio
import importlib
import json
from pathlib import Path

import pytest
from changed import breaks, fixes
from conftest import TOY
from junitparser import JUnitXml

from stellar.archive import open_run
from stellar.cli import replay_command
from stellar.config import load_config
from stellar.errors import StellarError
from stellar.replay import (
    ERROR,
    EXCLUDED,
    FIXED,
    FLAKY,
    NEWLY_FAILING,
    PASSING,
    REPLAY_NAME,
    STILL_FAILING,
    classify,
    replay,
)
from stellar.run import Run
from stellar.rundir import CONFIG_NAME
from stellar.suite import export_suite, read_source

cli_main = importlib.import_module("stellar.cli.main")  # the module; stellar.cli.main is main()


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A toy run of 200 tests with failures: (run directory, {id: input} of failures and of
    passes)."""
    out = tmp_path_factory.mktemp("source")
    config = load_config(TOY / "run.yaml", {"out": str(out), "budget.tests": 200})
    summary = asyncio.run(Run(config).execute())
    with open_run(summary.run_dir) as archive:
        records = list(archive.numbered())
    failures = {i: r.input_text for i, r in records if r.is_failure}
    passes = {i: r.input_text for i, r in records if r.judged and not r.is_failure}
    assert len(failures) >= 10 and len(passes) >= 100
    return Path(summary.run_dir), failures, passes


@pytest.fixture
def cli(monkeypatch):
    """``stellar.cli.main.main`` with ``replay`` registered (until main.py registers it)."""
    build = cli_main.build_parser

    def with_replay() -> argparse.ArgumentParser:
        parser = build()
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        if "replay" not in commands.choices:
            replay_command.add_parser(commands)
        return parser

    monkeypatch.setattr(cli_main, "build_parser", with_replay)
    return lambda *argv: cli_main.main([str(a) for a in argv])


def replayed(run_dir, out, only="failures", repeat=1, **overrides):
    source = read_source(run_dir, only)
    config = load_config(source.config, {"out": str(out), **overrides})
    return asyncio.run(replay(config, source, repeat))


def ids(result, outcome) -> set[int]:
    return {o.test.source_id for o in result.outcomes if o.outcome == outcome}


def test_the_same_system_fails_on_the_same_inputs(source, tmp_path):
    run_dir, failures, _ = source
    result = replayed(run_dir, tmp_path)
    assert ids(result, STILL_FAILING) == set(failures)
    assert result.counts()[NEWLY_FAILING] == 0
    assert sum(result.counts().values()) == len(failures)
    assert result.run_dir.parent == tmp_path and "-replay-" in result.run_dir.name
    with open_run(result.run_dir) as archive:
        assert archive.meta()["replay_of"] == str(run_dir)
        assert [r.input_text for r in archive.records()] == list(failures.values())
    report = json.loads((result.run_dir / REPLAY_NAME).read_text())
    assert report["counts"][STILL_FAILING] == len(failures)
    assert {t["source_id"] for t in report["tests"] if t["outcome"] == STILL_FAILING} == set(
        failures
    )
    assert (result.run_dir / CONFIG_NAME).is_file()  # the replay is a run directory itself


def test_every_test_against_the_same_system_changes_nothing(source, tmp_path):
    run_dir, failures, passes = source
    result = replayed(run_dir, tmp_path, only="all")
    assert ids(result, STILL_FAILING) == set(failures)
    assert ids(result, PASSING) == set(passes)
    assert result.counts()[NEWLY_FAILING] == result.counts()[FIXED] == 0


def test_a_changed_system_shows_the_planted_fixes_and_regressions_exactly(source, tmp_path):
    run_dir, failures, passes = source
    result = replayed(run_dir, tmp_path, only="all", sut={"target": "changed:answer"})
    fixed = {i for i, text in failures.items() if fixes(text)}
    broken = {i for i, text in passes.items() if breaks(text)}
    assert fixed and fixed != set(failures) and broken  # the fixture plants all three
    assert ids(result, FIXED) == fixed
    assert ids(result, STILL_FAILING) == set(failures) - fixed
    assert ids(result, NEWLY_FAILING) == broken
    assert ids(result, PASSING) == set(passes) - broken


def test_repeats_that_disagree_are_flaky(source, tmp_path):
    run_dir, failures, _ = source
    result = replayed(run_dir, tmp_path, repeat=3, sut={"target": "changed:flaky"})
    assert ids(result, FLAKY) == set(failures)
    assert all(len(o.now) == 3 and len(set(o.now)) == 2 for o in result.outcomes)
    with open_run(result.run_dir) as archive:
        assert archive.counts()["ok"] == 3 * len(failures)


@pytest.mark.parametrize(
    ("was", "now", "outcome"),
    [
        (True, ["fail"], STILL_FAILING),
        (True, ["pass", "pass"], FIXED),
        (False, ["fail"], NEWLY_FAILING),
        (None, ["fail"], NEWLY_FAILING),
        (None, ["pass"], PASSING),
        (True, ["fail", "error", "fail"], STILL_FAILING),
        (True, ["fail", "pass"], FLAKY),
        (True, ["error", "error"], ERROR),
        (True, [], ERROR),
        (True, ["excluded"], EXCLUDED),
        (True, ["excluded", "error"], ERROR),
    ],
)
def test_outcomes(was, now, outcome):
    assert classify(was, now) == outcome


def test_exit_codes(source, tmp_path, cli):
    run_dir, failures, _ = source
    out = ("--out", tmp_path, "--quiet")
    assert cli("replay", run_dir, *out) == 1  # still failing, no threshold
    assert cli("replay", run_dir, *out, "--max-failures", len(failures)) == 0
    assert cli("replay", run_dir, *out, "--max-failures", len(failures) - 1) == 1
    assert cli("replay", run_dir, *out, "--max-failure-rate", 1) == 0
    assert cli("replay", run_dir, *out, "--only", "all", "--max-failure-rate", 0.5) == 0
    assert cli("replay", run_dir, *out, "--only", "all", "--max-failure-rate", 0.01) == 1
    assert cli("replay", run_dir, *out, "--sut", "changed:down") == 3
    assert cli("replay", tmp_path / "nothing-here", *out) == 2
    assert cli("replay", run_dir, *out, "--repeat", 0) == 2
    with pytest.raises(SystemExit) as stopped:
        cli("replay", run_dir, *out, "--max-failure-rate", 2)
    assert stopped.value.code == 2


def test_a_fixed_system_passes_the_suite(source, tmp_path, cli):
    run_dir, failures, _ = source
    suite = tmp_path / "failures.jsonl"
    assert export_suite(run_dir, suite) == len(failures)
    assert cli("replay", suite, "--out", tmp_path, "--quiet", "--sut", "changed:answer") == 1
    # the toy's own answer where the fixed topics are left out: every failure fixed
    lines = [json.loads(line) for line in suite.read_text().splitlines()]
    fixed_only = tmp_path / "fixed.jsonl"
    fixed_only.write_text("".join(json.dumps(x) + "\n" for x in lines if fixes(x["input"])))
    code = cli("replay", fixed_only, "--out", tmp_path / "f", "--sut", "changed:answer")
    assert code == 0
    (report,) = (tmp_path / "f").glob(f"*/{REPLAY_NAME}")
    assert json.loads(report.read_text())["counts"][FIXED] == len(
        fixed_only.read_text().splitlines()
    )


def test_a_suite_file_replays_like_its_run(source, tmp_path, cli):
    run_dir, failures, _ = source
    suite = tmp_path / "failures.jsonl"
    export_suite(run_dir, suite)
    lines = [json.loads(line) for line in suite.read_text().splitlines()]
    assert [x["input"] for x in lines] == list(failures.values())
    assert {x["test_id"] for x in lines} == set(failures) and all(x["failed"] for x in lines)
    assert cli("replay", suite, "--out", tmp_path, "--quiet", "--max-failures", 0) == 1
    (report,) = tmp_path.glob(f"*/{REPLAY_NAME}")
    assert json.loads(report.read_text())["counts"][STILL_FAILING] == len(failures)
    # without its configuration: --config names one (a use case folder also does)
    for line in lines:
        line["config"] = None
    suite.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert cli("replay", suite, "--out", tmp_path, "--quiet") == 2
    assert cli("replay", suite, "--config", TOY / "run.yaml", "--out", tmp_path, "--quiet") == 1


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"candidate": {}}', "'input' must be a non-empty text"),
        ('{"input": "hi", "candidate": 3}', "'candidate' must be a mapping"),
        ('{"input": "hi", "candidate": {}, "failed": "yes"}', "'failed' must be"),
        ('{"input": "hi", "candidate": {}, "vector": ["a"]}', "'vector' must be"),
    ],
)
def test_a_bad_suite_line_is_one_line_error(tmp_path, line, problem):
    suite = tmp_path / "suite.jsonl"
    suite.write_text('{"input": "fine", "candidate": {}}\n' + line + "\n")
    with pytest.raises(StellarError, match=f"line 2: {problem}"):
        read_source(suite)


TOY_VALUES = {
    "color": "red",
    "shape": "star",
    "size": "huge",
    "mood": "angry",
    "politeness": "rude",
    "topic": "art",
    "noise": "none",
}


@pytest.mark.parametrize(
    ("candidate", "problem"),
    [
        ({"colour": "red"}, "the configuration's space has"),
        ({**TOY_VALUES, "size": "gigantic"}, "'gigantic' is not a value of feature 'size'"),
    ],
)
def test_a_suite_of_another_feature_space_is_refused(tmp_path, cli, capsys, candidate, problem):
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps({"input": "hi", "candidate": candidate}) + "\n")
    assert cli("replay", suite, "--config", TOY / "run.yaml", "--out", tmp_path) == 2
    assert problem in capsys.readouterr().err
    assert not list(tmp_path.glob("*/archive.sqlite"))  # refused before anything is written


def test_replay_writes_junit(source, tmp_path, cli):
    run_dir, failures, _ = source
    report = tmp_path / "replay.xml"
    assert cli("replay", run_dir, "--out", tmp_path, "--quiet", "--junit", report) == 1
    suite = next(iter(JUnitXml.fromfile(str(report))))
    assert (suite.tests, suite.failures, suite.errors) == (len(failures), len(failures), 0)
    messages = [r.message for case in suite for r in case.result]
    assert all(m.startswith("still failing: quality") for m in messages)


def test_the_post_search_judge_decides_as_in_the_run(tmp_path):
    """Failures decided by a second judge after the search (which excludes shouting)."""
    strict = {"target": "toy:strict", "below": {"strict": 0.8}}
    config = load_config(
        TOY / "run.yaml",
        {"out": str(tmp_path), "budget.tests": 60, "oracle.post_search": strict},
    )
    summary = asyncio.run(Run(config).execute())
    with open_run(summary.run_dir) as archive:
        records = list(archive.numbered())
    failures = {i for i, r in records if r.is_failure}
    excluded = {i for i, r in records if r.judged and r.final_excluded}
    assert failures and excluded
    result = replayed(summary.run_dir, tmp_path, only="all")
    assert ids(result, STILL_FAILING) == failures
    assert ids(result, EXCLUDED) == excluded
    assert result.counts()[NEWLY_FAILING] == result.counts()[FIXED] == 0
    assert result.summary.post_search["judged"] == len(records)
    assert all(r.verdict is not None for r in result.records)


def test_the_suite_of_a_run_without_failures_replays_as_nothing_to_do(tmp_path):
    from conftest import cli

    never = "oracle.below={quality: 0.0}"  # no score is below 0: no failure
    args = ("--tests", "20", "--out", tmp_path / "runs", "--set", never)
    assert cli("run", TOY / "run.yaml", *args).returncode == 0
    [run_dir] = list((tmp_path / "runs").iterdir())
    suite = tmp_path / "suite.jsonl"
    assert cli("export", run_dir, "--suite", suite).returncode == 0
    assert suite.read_text() == ""
    replayed = cli("replay", suite)
    assert replayed.returncode == 0, replayed.stderr
    assert "nothing to replay (no failures)" in replayed.stderr


def test_a_replay_writes_its_report_as_a_run_does(source, tmp_path, cli):
    run_dir = source[0]
    cli("replay", run_dir, "--out", tmp_path, "--quiet")
    [replayed] = [d for d in tmp_path.iterdir() if d.is_dir()]
    page = (replayed / "report.html").read_text("utf-8")
    assert replayed.name in page and "<script" in page
