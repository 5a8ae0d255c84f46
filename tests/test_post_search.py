"""The post-search oracle: a second judge after the search decides the failures."""

import asyncio
import csv
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import yaml
from conftest import cli

from stellar.archive import ARCHIVE_NAME, export_run, open_run
from stellar.config import load_config
from stellar.post_search import judge_run_dir
from stellar.records import Status
from stellar.run import Run
from stellar.rundir import CONFIG_NAME, read_summary

STRICT = {"target": "toy:strict", "below": {"strict": 0.8}}


def run(config):
    return asyncio.run(Run(config).execute())


def with_post_search(run_dir: str, target: str) -> Path:
    """Give a finished run's stored configuration a post-search judge."""
    path = Path(run_dir) / CONFIG_NAME
    data = yaml.safe_load(path.read_text())
    data["oracle"]["post_search"] = {**STRICT, "target": target}
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_post_search_judge_decides_failures_and_both_scores_are_kept(toy_config):
    summary = run(toy_config(**{"budget.tests": 60, "oracle.post_search": STRICT}))
    with open_run(summary.run_dir) as archive:
        records = list(archive.records())
        failures = list(archive.records(failures_only=True))
    ok = [r for r in records if r.status == Status.OK]
    assert ok and all(r.verdict is not None for r in ok)
    for record in ok:
        assert set(record.scores) == {"quality"}  # the search's own score stays
        strict = record.verdict.scores["strict"]
        assert record.verdict.failed == (strict < 0.8)
        assert record.verdict.excluded == record.input_text.isupper()
        assert record.is_failure == (strict < 0.8 and not record.input_text.isupper())
    expected = sum(r.is_failure for r in records)
    # the search's oracle (quality < 0.1) finds far fewer than the stricter judge after it
    assert expected > sum(r.failed and not r.excluded for r in ok)
    assert summary.failures == expected == len(failures)
    assert summary.excluded == sum(r.input_text.isupper() for r in ok)
    assert summary.post_search["judged"] == len(ok) and summary.post_search["pending"] == 0
    assert read_summary(summary.run_dir)["failures"] == expected


def test_export_has_the_verdict_in_columns_of_its_own(toy_config, tmp_path):
    summary = run(toy_config(**{"budget.tests": 20, "oracle.post_search": STRICT}))
    export_run(summary.run_dir, tmp_path / "export")
    with open(tmp_path / "export" / "tests.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert {"score.quality", "verdict.score.strict", "verdict.failed"} <= set(rows[0])
    assert {row["failed"] for row in rows} >= {"True"}


def test_judge_command_judges_a_finished_run_once(toy_config):
    summary = run(toy_config(**{"budget.tests": 40}))
    assert not summary.post_search
    config = load_config(with_post_search(summary.run_dir, "toy:strict"))
    seen = []
    judged = asyncio.run(judge_run_dir(Path(summary.run_dir), config, lambda r, n: seen.append(r)))
    assert len(seen) == judged.tests == 40
    assert judged.failures == sum(r.is_failure for r in seen) > summary.failures
    again = []
    asyncio.run(judge_run_dir(Path(summary.run_dir), config, lambda r, n: again.append(r)))
    assert again == []  # nothing left to judge
    stricter = load_config(
        Path(summary.run_dir) / CONFIG_NAME, {}, {"oracle.post_search.below": {"strict": 0.95}}
    )
    anew = asyncio.run(judge_run_dir(Path(summary.run_dir), stricter, again=True))
    assert anew.post_search["judged"] == 40 and anew.failures > judged.failures


def test_judge_errors_are_data_and_judged_again_next_time(toy_config, monkeypatch):
    summary = run(toy_config(**{"budget.tests": 40}))
    config = load_config(with_post_search(summary.run_dir, "toy:picky_strict"))
    monkeypatch.setenv("TOY_JUDGE_FAILS", "about food")
    first = asyncio.run(judge_run_dir(Path(summary.run_dir), config))
    with open_run(summary.run_dir) as archive:
        about_food = [r for r in archive.records() if "about food" in r.input_text]
    assert about_food and all(r.verdict.error == "RuntimeError: judge down" for r in about_food)
    assert first.judge_errors == len(about_food) and first.post_search["pending"] == len(about_food)
    assert "post-search judge: RuntimeError" in first.first_error
    monkeypatch.delenv("TOY_JUDGE_FAILS")
    retried = []
    second = asyncio.run(
        judge_run_dir(Path(summary.run_dir), config, lambda r, n: retried.append(r))
    )
    assert sorted(r.input_text for r in retried) == sorted(r.input_text for r in about_food)
    assert second.judge_errors == 0 and second.post_search["pending"] == 0


def test_judge_killed_half_way_judges_only_what_is_left(toy_config, tmp_path):
    summary = run(toy_config(**{"budget.tests": 60}))
    with_post_search(summary.run_dir, "toy:logged_strict")
    log = tmp_path / "judged.log"
    env = {
        **os.environ,
        "TOY_JUDGE_LOG": str(log),
        "PYTHONPATH": str(Path(__file__).parent / "fixtures" / "toy"),
    }
    command = [sys.executable, "-m", "stellar.cli", "judge", summary.run_dir, "--quiet"]
    command += ["--concurrency", "2"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    db = Path(summary.run_dir) / ARCHIVE_NAME
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _verdicts(db) < 10:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = _verdicts(db)
    assert 10 <= kept < 60
    first = log.read_text().splitlines()
    log.unlink()
    done = cli("judge", summary.run_dir, "--quiet", env=env)
    assert done.returncode == 0, done.stderr
    second = log.read_text().splitlines()
    assert len(second) == 60 - kept  # only the tests without a verdict
    assert not set(second) & set(first[: kept - 2])  # committed verdicts were not redone
    assert read_summary(summary.run_dir)["post_search"]["pending"] == 0


def _verdicts(db: Path) -> int:
    try:
        with sqlite3.connect(db) as con:
            return con.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_judge_command_explains_a_run_without_post_search_judge(toy_config):
    summary = run(toy_config(**{"budget.tests": 10}))
    result = cli("judge", summary.run_dir)
    assert result.returncode == 2
    assert "no oracle.post_search" in result.stderr and "Traceback" not in result.stderr
    missing = cli("judge", "/nonexistent/run")
    assert missing.returncode == 2 and "not a run directory" in missing.stderr
