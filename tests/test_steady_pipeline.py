"""Overlapping generations: the endpoint stays busy, and the archive does not depend on timing."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import JitterySUT

from stellar.archive import ARCHIVE_NAME
from stellar.pipeline import in_flight
from stellar.resume import resume_config
from stellar.run import Run
from stellar.rundir import SUMMARY_NAME

ROWS = 'SELECT generation, "index", status, input_text, response_text, scores FROM tests'


def run(config, **kwargs):
    return asyncio.run(Run(config, **kwargs).execute())


def rows(run_dir) -> list[tuple]:
    with sqlite3.connect(Path(run_dir) / ARCHIVE_NAME) as db:
        return db.execute(f'{ROWS} ORDER BY generation, "index"').fetchall()


def jittery(toy_config, tmp_path, name: str, **overrides):
    settings = {
        "sut.target": "conftest:JitterySUT",
        "concurrency": 16,
        "algorithm.population": 4,
        "budget.tests": 90,
        "out": str(tmp_path / name),
        **overrides,
    }
    return toy_config(**settings)


def test_generations_in_flight_fill_the_concurrency():
    assert in_flight(8, 20) == 1  # a generation fills the slots: generational, as the paper
    assert in_flight(10, 20) == 1
    assert in_flight(64, 20) == 26
    assert in_flight(16, 4) == 32
    assert in_flight(64, 20, tests=640) == 8  # a quarter of the 32 generations of the budget
    assert in_flight(64, 20, tests=40) == 1 and in_flight(8, 20, tests=10_000) == 1


@pytest.mark.parametrize("algorithm", ["stellar", "diverse", "map-elites", "random"])
def test_the_same_seed_gives_the_same_archive_whatever_the_latencies(
    toy_config, tmp_path, algorithm
):
    JitterySUT.most_in_flight = 0
    first = run(jittery(toy_config, tmp_path, "a", **{"algorithm.name": algorithm}))
    assert JitterySUT.most_in_flight > 4  # more than one generation ran at once
    second = run(jittery(toy_config, tmp_path, "b", **{"algorithm.name": algorithm}))
    assert first.tests == second.tests == 90
    assert rows(first.run_dir) == rows(second.run_dir)


def test_one_generation_in_flight_is_generational(toy_config, tmp_path):
    JitterySUT.most_in_flight = 0
    run(jittery(toy_config, tmp_path, "a", generations_in_flight=1))
    assert JitterySUT.most_in_flight <= 4


def test_overlap_changes_the_search_but_not_the_budget(toy_config, tmp_path):
    overlapped = run(jittery(toy_config, tmp_path, "a"))
    generational = run(jittery(toy_config, tmp_path, "b", generations_in_flight=1))
    assert overlapped.tests == generational.tests == 90
    assert rows(overlapped.run_dir) != rows(generational.run_dir)


def test_no_input_is_generated_beyond_the_test_budget(toy_config, tmp_path):
    summary = run(jittery(toy_config, tmp_path, "a", **{"budget.tests": 10}))
    with sqlite3.connect(Path(summary.run_dir) / ARCHIVE_NAME) as db:
        statuses = dict(db.execute("SELECT status, COUNT(*) FROM tests GROUP BY status"))
    assert summary.tests == 10 and statuses.get("ok") == 10


def test_a_kill_with_several_generations_in_flight_resumes_to_the_same_archive(
    toy_config, tmp_path
):
    whole = run(jittery(toy_config, tmp_path, "whole"))
    killed = tmp_path / "killed"
    shutil.copytree(whole.run_dir, killed)
    (killed / SUMMARY_NAME).unlink()
    with sqlite3.connect(killed / ARCHIVE_NAME) as db:  # records of 3 generations lost
        last = db.execute("SELECT MAX(generation) FROM tests").fetchone()[0]
        db.execute('DELETE FROM tests WHERE generation >= ? AND "index" % 2 = 0', (last - 3,))
    resumed = run(resume_config(killed), run_dir=killed, resume=True)
    assert resumed.tests == 90
    assert rows(killed) == rows(whole.run_dir)


def test_a_resume_with_a_larger_budget_keeps_the_run_s_depth(toy_config, tmp_path):
    """The depth follows the budget, but a resume with a larger one goes on in the order the
    run began with, so it ends with the archive of one run at that depth."""
    short = run(jittery(toy_config, tmp_path, "short", **{"budget.tests": 40}))
    resumed = run(
        resume_config(short.run_dir, {"budget.tests": 90}), run_dir=Path(short.run_dir), resume=True
    )
    whole = run(jittery(toy_config, tmp_path, "whole", generations_in_flight=2))
    with sqlite3.connect(Path(short.run_dir) / ARCHIVE_NAME) as db:
        depth = db.execute("SELECT value FROM meta WHERE key = 'depth'").fetchone()[0]
    assert depth == "2" and resumed.tests == 90  # 40 tests // 4 per generation // 4
    assert rows(short.run_dir) == rows(whole.run_dir)


def test_endpoints_get_the_run_concurrency_unless_they_set_their_own(toy_config):
    from stellar.assembly import run_endpoints

    model = "openai-compatible:m@http://127.0.0.1:9/v1"
    config = toy_config(**{"sut": {"type": "chat", "model": model}, "concurrency": 48})
    assert run_endpoints(config).endpoints["http://127.0.0.1:9/v1"].concurrency == 48
    config = toy_config(
        **{
            "sut": {"type": "chat", "model": model},
            "concurrency": 48,
            "llm.endpoints": {"openai-compatible": {"concurrency": 4}},
        }
    )
    [settings] = run_endpoints(config).endpoints.values()
    assert settings.concurrency == 4
