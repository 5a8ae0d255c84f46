"""Resume, locks and signals: nothing finished is lost, nothing is run twice."""

import asyncio
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
from conftest import TOY, cli

from stellar.archive import ARCHIVE_NAME
from stellar.errors import StellarError
from stellar.locks import DirectoryLock
from stellar.resume import resume_config
from stellar.run import Run
from stellar.rundir import CONFIG_NAME, SUMMARY_NAME, VECTORS_NAME, read_summary

ROWS = 'SELECT generation, "index", status, input_text, response_text, scores FROM tests'


def run(config, **kwargs):
    return asyncio.run(Run(config, **kwargs).execute())


def rows(run_dir: Path) -> list[tuple]:
    with sqlite3.connect(Path(run_dir) / ARCHIVE_NAME) as db:
        return db.execute(f'{ROWS} ORDER BY generation, "index"').fetchall()


def modes(run_dir: Path) -> list[tuple]:
    with sqlite3.connect(Path(run_dir) / ARCHIVE_NAME) as db:
        return db.execute('SELECT * FROM modes ORDER BY generation, "index"').fetchall()


def matched(run_dir: Path) -> list[tuple]:
    """Each duplicate and the earlier input it names."""
    query = (
        "SELECT generation, \"index\", json_extract(details, '$.duplicate_of') FROM tests "
        "WHERE status = 'duplicate' ORDER BY generation, \"index\""
    )
    with sqlite3.connect(Path(run_dir) / ARCHIVE_NAME) as db:
        return db.execute(query).fetchall()


def executed(run_dir: Path) -> list[tuple]:
    return [r for r in rows(run_dir) if r[2] in ("ok", "sut_error", "judge_error")]


@pytest.mark.parametrize(
    "algorithm",
    ["stellar", "random", "twise", "diverse", "map-elites", "mode-balanced", "surrogate"],
)
def test_resume_extends_a_finished_run_to_the_archive_of_one_long_run(
    toy_config, tmp_path, algorithm
):
    short = run(toy_config(**{"budget.tests": 40, "algorithm.name": algorithm}))
    resumed = run(
        resume_config(short.run_dir, {"budget.tests": 100}),
        run_dir=Path(short.run_dir),
        resume=True,
    )
    whole = run(
        toy_config(
            **{"budget.tests": 100, "algorithm.name": algorithm, "out": str(tmp_path / "whole")}
        )
    )
    assert resumed.tests == whole.tests == 100
    assert resumed.failures == whole.failures and resumed.generations == whole.generations
    assert rows(resumed.run_dir) == rows(whole.run_dir)
    assert modes(resumed.run_dir) == modes(whole.run_dir)  # rebuilt, not re-numbered
    assert matched(resumed.run_dir) == matched(whole.run_dir)
    assert resumed.modes == whole.modes and (whole.modes > 0) == (whole.failures > 0)
    with sqlite3.connect(Path(resumed.run_dir) / ARCHIVE_NAME) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'resumed_at'").fetchone()


@pytest.mark.parametrize("saved_vectors", [True, False])
def test_the_duplicate_filter_resumes_from_saved_vectors_or_the_inputs(
    toy_config, tmp_path, saved_vectors
):
    hashing = {"duplicates.embedder": "hashing", "duplicates.threshold": 0.6}
    short = run(toy_config(**{"budget.tests": 40, **hashing}))
    vectors = Path(short.run_dir) / VECTORS_NAME
    assert vectors.stat().st_size % 4 == 0 and vectors.stat().st_size > 0
    if not saved_vectors:  # a run from before vectors were saved: embedded again
        vectors.unlink()
    resumed = run(
        resume_config(short.run_dir, {"budget.tests": 100}),
        run_dir=Path(short.run_dir),
        resume=True,
    )
    whole = run(toy_config(**{"budget.tests": 100, "out": str(tmp_path / "whole"), **hashing}))
    assert whole.duplicates > 0
    assert rows(resumed.run_dir) == rows(whole.run_dir)


def test_tests_lost_in_flight_are_run_once_on_resume(toy_config, tmp_path):
    whole = run(toy_config(**{"budget.tests": 100}))
    killed = tmp_path / "killed"
    shutil.copytree(whole.run_dir, killed)
    (killed / SUMMARY_NAME).unlink()
    with sqlite3.connect(killed / ARCHIVE_NAME) as db:  # the last tests were in flight
        db.execute("DELETE FROM tests WHERE id > (SELECT MAX(id) - 7 FROM tests)")
    assert len(executed(killed)) < 100
    resumed = run(resume_config(killed), run_dir=killed, resume=True)
    assert resumed.tests == 100
    assert sorted(rows(killed)) == sorted(rows(whole.run_dir))


def test_resume_refuses_a_run_whose_search_changed(toy_config):
    summary = run(toy_config(**{"budget.tests": 40}))
    path = Path(summary.run_dir) / CONFIG_NAME
    config = yaml.safe_load(path.read_text())
    config["seed"] += 1
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(StellarError, match="cannot resume: at generation 0"):
        run(
            resume_config(summary.run_dir, {"budget.tests": 60}),
            run_dir=Path(summary.run_dir),
            resume=True,
        )


def test_resume_changes_budgets_only(toy_config, tmp_path):
    summary = run(toy_config(**{"budget.tests": 20}))
    result = cli("run", "--resume", summary.run_dir, "--seed", "4")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "stellar: error: --resume continues a run as it was configured; only budgets may "
        "change, not seed"
    ]
    result = cli("run", "--resume", tmp_path)
    assert result.returncode == 2 and "not a run directory" in result.stderr


def test_a_locked_directory_names_its_holder(tmp_path):
    with (
        DirectoryLock(tmp_path, "run"),
        pytest.raises(
            StellarError,
            match=rf"{tmp_path} is in use by another stellar run "
            rf"\(pid {os.getpid()} on host ",
        ),
    ):
        DirectoryLock(tmp_path, "run").acquire()
    DirectoryLock(tmp_path, "run").acquire().release()  # released: free again


def slow_run(out: Path, tests: int, *extra: str) -> subprocess.Popen:
    config = out.parent / "slow.yaml"
    config.write_text(f"use_case: {TOY}\nsut: {{type: python, target: 'toy:slow_answer'}}\n")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stellar.cli",
            "run",
            str(config),
            "--tests",
            str(tests),
            "--out",
            str(out),
            "--quiet",
            "--show",
            "0",
            *extra,
        ],
        env={**os.environ, "PYTHONPATH": str(TOY)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_rows(out: Path, wanted: int) -> Path:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)
        for archive in out.glob(f"*/{ARCHIVE_NAME}"):
            try:
                with sqlite3.connect(f"file:{archive}?mode=ro", uri=True) as db:
                    if db.execute("SELECT COUNT(*) FROM tests").fetchone()[0] >= wanted:
                        return archive.parent
            except sqlite3.OperationalError:
                pass
    raise AssertionError("the run did not get going")


def test_sigkill_then_resume_gives_the_budget_without_duplicates(tmp_path):
    out = tmp_path / "runs"
    proc = slow_run(out, 150)
    try:
        run_dir = wait_for_rows(out, 40)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        proc.kill()
    assert not (run_dir / SUMMARY_NAME).exists()
    result = cli(
        "run",
        "--resume",
        run_dir,
        "--quiet",
        "--show",
        "0",
        env={**os.environ, "PYTHONPATH": str(TOY)},
    )
    assert result.returncode == 0, result.stderr
    keys = [(r[0], r[1]) for r in rows(run_dir)]
    assert len(keys) == len(set(keys)), "a test was stored twice"
    assert len(executed(run_dir)) == 150
    assert read_summary(run_dir)["stop_reason"] == "test budget reached"


def test_sigterm_stops_after_the_tests_in_flight_and_exits_143(tmp_path):
    out = tmp_path / "runs"
    proc = slow_run(out, 5000)
    try:
        run_dir = wait_for_rows(out, 20)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 143
    summary = read_summary(run_dir)
    assert summary["stop_reason"] == "terminated"
    assert summary["tests"] == len(executed(run_dir))
    assert f"continue with: stellar run --resume {run_dir}" in stderr


def test_a_second_process_on_a_live_run_exits_2_naming_the_first(tmp_path):
    out = tmp_path / "runs"
    proc = slow_run(out, 5000)
    try:
        run_dir = wait_for_rows(out, 5)
        second = cli(
            "run", "--resume", run_dir, "--quiet", env={**os.environ, "PYTHONPATH": str(TOY)}
        )
    finally:
        proc.kill()
        proc.wait(10)
    assert second.returncode == 2
    [line] = second.stderr.strip().splitlines()
    assert line.startswith(
        f"stellar: error: {run_dir} is in use by another stellar run (pid {proc.pid} on host "
    )


def test_resume_never_lowers_the_budget_below_what_is_done(toy_config):
    summary = run(toy_config(**{"budget.tests": 40}))
    with pytest.raises(StellarError, match="--tests 30: the run has done 40 tests already"):
        resume_config(summary.run_dir, {"budget.tests": 30})


def test_resuming_a_run_that_never_finished_a_test_says_it_starts_from_the_first(tmp_path):
    from conftest import TOY, cli

    assert cli("run", TOY / "run.yaml", "--tests", "10", "--out", tmp_path).returncode == 0
    [run_dir] = list(tmp_path.iterdir())
    for name in ("archive.sqlite", "archive.sqlite-wal", "archive.sqlite-shm", "summary.json"):
        (run_dir / name).unlink(missing_ok=True)  # killed before its first test ended
    resumed = cli("run", "--resume", run_dir)
    assert resumed.returncode == 0, resumed.stderr
    assert "no test had finished: from the first" in resumed.stderr


def test_a_released_lock_names_no_holder(tmp_path):
    from stellar.locks import LOCK_NAME, DirectoryLock

    with DirectoryLock(tmp_path, "run"):
        assert '"pid"' in (tmp_path / LOCK_NAME).read_text()
    assert (tmp_path / LOCK_NAME).read_text() == ""  # a dead pid would mislead a reader
