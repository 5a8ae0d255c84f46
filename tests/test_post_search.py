"""The post-search oracle: a second judge after the search decides the failures."""

import asyncio
import csv
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import cli

from stellar.archive import ARCHIVE_NAME, open_run
from stellar.config import load_config
from stellar.export import export_run
from stellar.locks import DirectoryLock
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
    done = asyncio.run(judge_run_dir(Path(summary.run_dir), config, lambda r, n: seen.append(r)))
    judged = done.summary
    assert len(seen) == judged.tests == done.judged == 40 and done.already == 0
    assert judged.failures == sum(r.is_failure for r in seen) > summary.failures
    again = []
    once_more = asyncio.run(
        judge_run_dir(Path(summary.run_dir), config, lambda r, n: again.append(r))
    )
    assert again == []  # nothing left to judge
    assert (once_more.judged, once_more.already) == (0, 40)
    stricter = load_config(
        Path(summary.run_dir) / CONFIG_NAME, {}, {"oracle.post_search.below": {"strict": 0.95}}
    )
    anew = asyncio.run(judge_run_dir(Path(summary.run_dir), stricter, again=True))
    assert (anew.judged, anew.already) == (40, 0)
    assert anew.summary.post_search["judged"] == 40 and anew.summary.failures > judged.failures


def test_judge_errors_are_data_and_judged_again_next_time(toy_config, monkeypatch):
    summary = run(toy_config(**{"budget.tests": 40}))
    config = load_config(with_post_search(summary.run_dir, "toy:picky_strict"))
    monkeypatch.setenv("TOY_JUDGE_FAILS", "about food")
    first = asyncio.run(judge_run_dir(Path(summary.run_dir), config)).summary
    with open_run(summary.run_dir) as archive:
        about_food = [r for r in archive.records() if "about food" in r.input_text]
    assert about_food and all(r.verdict.error == "RuntimeError: judge down" for r in about_food)
    assert first.judge_errors == len(about_food) and first.post_search["pending"] == len(about_food)
    assert "post-search judge: RuntimeError" in first.first_error
    monkeypatch.delenv("TOY_JUDGE_FAILS")
    retried = []
    second = asyncio.run(
        judge_run_dir(Path(summary.run_dir), config, lambda r, n: retried.append(r))
    ).summary
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
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "no oracle.post_search" in result.stderr and "Traceback" not in result.stderr
    # the hint names what the command has: the run's config.yaml, not a --set it lacks
    assert "--set" not in result.stderr
    assert f"add one to {Path(summary.run_dir) / CONFIG_NAME}" in result.stderr
    missing = cli("judge", "/nonexistent/run")
    assert missing.returncode == 2 and "not a run directory" in missing.stderr


def judged_run(toy_config, tests: int = 20, **overrides) -> Path:
    """A finished run whose configuration has a post-search judge that has not run yet."""
    summary = run(toy_config(**{"budget.tests": tests, **overrides}))
    with_post_search(summary.run_dir, "toy:strict")
    return Path(summary.run_dir)


def verdicts_in(run_dir: Path) -> int:
    return _verdicts(run_dir / ARCHIVE_NAME)


def test_judge_of_a_moved_run_judges_and_writes_where_the_run_is_now(toy_config, tmp_path):
    moved = tmp_path / "moved"
    old = judged_run(toy_config)
    shutil.move(old, moved)
    done = cli("judge", moved, "--quiet")
    assert done.returncode == 0, done.stderr
    assert str(old) not in done.stdout + done.stderr
    assert f"results: {moved}" in done.stdout
    assert read_summary(moved)["run_dir"] == str(moved)
    assert verdicts_in(moved) == 20


def test_judge_of_a_moved_run_never_reads_the_run_now_at_its_old_path(toy_config, tmp_path):
    moved = tmp_path / "moved"
    old = judged_run(toy_config)
    shutil.move(old, moved)
    other = judged_run(toy_config, tests=10, out=str(tmp_path / "other"))
    shutil.copytree(other, old)  # another run where the moved one was
    (old / ARCHIVE_NAME).write_bytes(b"not this run's archive")  # any read of it fails
    before = (old / "summary.json").read_text()
    done = cli("judge", moved, "--quiet")
    assert done.returncode == 0, done.stderr
    assert read_summary(moved)["failures"] > 0  # the failures were listed: from moved
    assert str(old) not in done.stdout + done.stderr
    assert (old / "summary.json").read_text() == before
    assert verdicts_in(moved) == 20


def test_judge_says_how_many_tests_it_judged_also_when_none_was_left(toy_config):
    run_dir = judged_run(toy_config)
    first = cli("judge", run_dir, "--quiet")
    assert first.returncode == 0, first.stderr
    assert "stellar judge: 20 tests judged now, 0 had a verdict already" in first.stdout
    second = cli("judge", run_dir, "--quiet")
    assert second.returncode == 0, second.stderr
    assert "stellar judge: 0 tests judged now, 20 had a verdict already" in second.stdout
    assert "--all judges every test anew" in second.stdout


def test_judge_counts_the_tests_it_could_not_judge(toy_config):
    summary = run(
        toy_config(
            **{
                "budget.tests": 20,
                "budget.max_error_rate": 1.0,
                "sut.target": "conftest:crashing_sut",
            }
        )
    )
    with_post_search(summary.run_dir, "toy:strict")
    done = cli("judge", summary.run_dir, "--quiet")
    assert done.returncode == 0, done.stderr
    crashed = summary.sut_errors
    assert 0 < crashed < 20
    assert f"{20 - crashed} tests judged now" in done.stdout
    assert f"{crashed} not judged (a system or search judge error)" in done.stdout


@pytest.mark.parametrize("holder", ["run", "judge"])
def test_judge_refuses_a_run_another_process_holds(toy_config, holder):
    run_dir = judged_run(toy_config)
    with DirectoryLock(run_dir, holder):
        done = cli("judge", run_dir, "--quiet")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"is in use by another stellar {holder}" in done.stderr
    assert verdicts_in(run_dir) == 0  # nothing judged
    assert cli("judge", run_dir, "--quiet").returncode == 0  # once it ends
    assert verdicts_in(run_dir) == 20


def test_the_summary_and_report_say_which_judge_gave_the_verdicts(toy_config):
    from stellar.analysis.reading import verdict_rules

    summary = run(toy_config(**{"budget.tests": 20, "oracle.post_search": STRICT}))
    sources = read_summary(summary.run_dir)["post_search"]["sources"]
    assert sources == {"toy:strict": summary.post_search["judged"]}  # no source of its own
    config = {"oracle": {"below": {"quality": 0.1}, "post_search": STRICT}}
    assert "given by: toy:strict: 20" in verdict_rules(config, {"toy:strict": 20})[-1]


def test_judge_writes_the_report_again_on_its_verdicts(toy_config):
    import json
    import re

    summary = run(toy_config(**{"budget.tests": 30}))
    with_post_search(summary.run_dir, "toy:strict")
    done = cli("judge", summary.run_dir, "--quiet")
    assert done.returncode == 0, done.stderr
    page = (Path(summary.run_dir) / "report.html").read_text("utf-8")
    [data] = re.findall(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    counts = json.loads(data)["counts"]
    assert counts["failures"] == read_summary(summary.run_dir)["failures"] > summary.failures
