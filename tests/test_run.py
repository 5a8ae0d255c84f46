import asyncio
import gc
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from conftest import TOY, cli
from toy import failing

from stellar.archive import ARCHIVE_NAME, open_run
from stellar.records import Status
from stellar.run import Run
from stellar.rundir import SUMMARY_NAME
from stellar.termination import StopReason


def run(config):
    return asyncio.run(Run(config).execute())


def unique_failures(summary) -> set[str]:
    with open_run(summary.run_dir) as archive:
        return {r.input_text for r in archive.records(failures_only=True)}


def test_stellar_finds_more_failures_than_random(toy_config):
    """Same tests budget, fixed seeds, wide margin: the search must exploit the scores."""
    found = {"stellar": [], "random": []}
    for algorithm in found:
        for seed in range(4):
            summary = run(
                toy_config(**{"algorithm.name": algorithm, "seed": seed, "budget.tests": 300})
            )
            assert summary.tests == 300
            failures = unique_failures(summary)
            found[algorithm].append(len(failures))
    assert sum(found["stellar"]) >= 5 * max(1, sum(found["random"])), found
    assert min(found["stellar"]) > max(found["random"]), found


def test_failures_are_what_the_oracle_says(toy_config):
    summary = run(toy_config(**{"budget.tests": 200}))
    with open_run(summary.run_dir) as archive:
        for record in archive.records():
            assert record.status == Status.OK
            assert record.is_failure == failing(record.candidate)
    assert summary.failures == sum(1 for _ in open_run(summary.run_dir).records(True))


def test_test_budget_is_exact_and_run_directory_is_complete(toy_config):
    summary = run(toy_config(**{"budget.tests": 47, "algorithm.population": 10}))
    assert summary.tests == 47
    assert summary.stop_reason == StopReason.TESTS
    assert summary.stop_message == "test budget reached (47 tests)"
    run_dir = summary.run_dir
    names = set(os.listdir(run_dir))
    assert {"archive.sqlite", "config.yaml", "summary.json"} <= names
    with open(os.path.join(run_dir, SUMMARY_NAME)) as fh:
        saved = json.load(fh)
    assert saved["tests"] == 47
    with open_run(run_dir) as archive:
        assert archive.counts()["ok"] == 47
        meta = archive.meta()
        assert meta["stop_reason"].startswith("test budget") and meta["seed"] == 1


def test_time_budget_stops_the_run(toy_config):
    config = toy_config(
        **{
            "budget.tests": 100_000,
            "budget.time": 1.0,
            "sut.target": "toy:slow_answer",
            "concurrency": 2,
        }
    )
    began = time.monotonic()
    summary = run(config)
    assert time.monotonic() - began < 5
    assert summary.stop_reason.startswith("time budget reached")
    assert 0 < summary.tests < 100_000


def test_discarded_inputs_are_bounded_so_a_run_always_ends(toy_config, tmp_path):
    config = toy_config(
        **{
            "budget.tests": 50,
            "budget.max_discarded": 30,
            "generator.target": "conftest:empty_generator",
        }
    )
    summary = run(config)
    assert summary.tests == 0
    assert summary.invalid >= 30
    assert summary.stop_reason.startswith("discard limit reached")


def test_same_seed_same_archive(toy_config):
    def content(summary):
        with open_run(summary.run_dir) as archive:
            records = sorted(archive.records(), key=lambda r: (r.generation, r.index))
            return [(r.candidate, r.input_text, r.scores) for r in records]

    # in candidate order: rows are stored as tests finish, which a loaded machine reorders
    first = run(toy_config(**{"budget.tests": 60}))
    second = run(toy_config(**{"budget.tests": 60}))
    assert content(first) == content(second)


def test_request_stop_keeps_finished_tests(toy_config):
    config = toy_config(**{"budget.tests": 10_000, "sut.target": "toy:slow_answer"})

    async def interrupt():
        run_ = Run(config)
        task = asyncio.create_task(run_.execute())
        await asyncio.sleep(0.5)
        run_.request_stop()
        return await task

    summary = asyncio.run(interrupt())
    assert summary.stop_reason == "interrupted"
    with open_run(summary.run_dir) as archive:
        assert archive.counts()["ok"] == summary.tests > 0


def test_sigkill_leaves_an_archive_with_every_finished_test(tmp_path):
    out = tmp_path / "runs"
    config = tmp_path / "slow.yaml"
    config.write_text(f"use_case: {TOY}\nsut: {{type: python, target: 'toy:slow_answer'}}\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stellar.cli",
            "run",
            str(config),
            "--tests",
            "5000",
            "--out",
            str(out),
            "--quiet",
        ],
        env={**os.environ, "PYTHONPATH": str(TOY)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        rows = 0
        while time.monotonic() < deadline and rows < 40:
            time.sleep(0.05)
            archives = list(out.glob(f"*/{ARCHIVE_NAME}"))
            if archives:
                try:
                    with sqlite3.connect(f"file:{archives[0]}?mode=ro", uri=True) as db:
                        rows = db.execute("SELECT COUNT(*) FROM tests").fetchone()[0]
                except sqlite3.OperationalError:
                    rows = 0
        assert rows >= 40, "the run did not get going"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        proc.kill()
    [archive_path] = out.glob(f"*/{ARCHIVE_NAME}")
    db = sqlite3.connect(archive_path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    with open_run(archive_path.parent) as archive:
        records = list(archive.records())
    assert len(records) >= rows
    assert all(r.response_text and r.scores for r in records)


@pytest.mark.parametrize("algorithm", ["stellar", "random"])
def test_sut_faults_do_not_stop_the_run(toy_config, algorithm):
    config = toy_config(
        **{
            "budget.tests": 40,
            "budget.max_error_rate": 1.0,
            "algorithm.name": algorithm,
            "sut.target": "conftest:crashing_sut",
        }
    )
    summary = run(config)
    assert summary.tests == 40 and summary.unhealthy is None
    assert summary.sut_errors > 0 and summary.tests - summary.sut_errors > 0
    assert summary.verdicts == summary.tests - summary.sut_errors - summary.excluded


def test_too_many_sut_errors_stop_the_run_as_not_healthy(toy_config):
    summary = run(toy_config(**{"budget.tests": 200, "sut.target": "conftest:crashing_sut"}))
    assert summary.stop_reason == StopReason.UNHEALTHY and summary.tests < 200
    assert summary.unhealthy.startswith(f"{summary.errors} of {summary.tests} tests ended in")
    assert summary.first_error == "sut_error: ConnectionError: endpoint unreachable"


def test_a_dead_http_sut_exits_3_quickly_with_one_line(tmp_path):
    import socket

    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    began = time.monotonic()
    result = cli(
        "run", TOY / "run.yaml", "--sut", f"http://127.0.0.1:{port}/query", "--quiet",
        "--out", tmp_path,
    )  # fmt: skip
    assert time.monotonic() - began < 30  # the check itself: well under 10 s on its own
    assert result.returncode == 3, result.stderr
    lines = result.stderr.strip().splitlines()
    assert re.match(r"stellar: not healthy: (\d+) of \1 tests ended in errors", lines[-1])
    assert "ConnectError" in lines[-1]
    assert "failures 0" in result.stdout


@pytest.mark.parametrize(
    ("fitness", "named"),
    [("details_among_scores", "'details'"), ("wrong_score_name", "'quality'")],
)
def test_a_fitness_whose_scores_cannot_fit_stops_at_once_in_one_line(tmp_path, fitness, named):
    result = cli(
        "run", TOY / "run.yaml", "--quiet", "--out", tmp_path, "--tests", "100",
        "--set", f"fitness.target=misfit:{fitness}",
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("stellar: error")]
    assert len(errors) == 1 and named in errors[0] and "Traceback" not in result.stderr
    assert "Stopped: error: " in result.stdout
    [summary] = tmp_path.glob("*/summary.json")
    assert json.loads(summary.read_text())["tests"] <= 8  # the first batch in flight at most


def test_tiny_space_ends_when_exhausted(toy_config, tmp_path):
    features = tmp_path / "tiny.yaml"
    features.write_text(
        "features:\n  - {name: a, kind: content, values: [x, y]}\n"
        "  - {name: b, kind: style, values: [p, q]}\n"
    )
    config = toy_config(
        **{
            "features": str(features),
            "budget.tests": 50,
            "algorithm.population": 4,
            "generator": {"type": "template", "templates": ["{a} {b}"]},
            "sut.target": "toy:answer",
            "fitness.target": "conftest:AsyncQuality",
        }
    )
    summary = run(config)
    assert summary.stop_reason.startswith(("search space exhausted", "discard limit"))
    assert summary.tests <= 50


def test_custom_sut_object_returning_text(toy_config):
    summary = run(
        toy_config(
            **{
                "budget.tests": 20,
                "sut.target": "conftest:EchoSUT",
                "fitness.target": "conftest:AsyncQuality",
            }
        )
    )
    assert summary.tests == 20 and summary.judge_errors == 0 and summary.sut_errors == 0
    assert os.path.exists(os.path.join(summary.run_dir, SUMMARY_NAME))


def test_a_missing_objective_stops_the_run_after_its_first_tests(toy_config):
    summary = run(toy_config(**{"budget.tests": 100, "fitness.objectives": ["qualty"]}))
    assert summary.stop_reason == StopReason.ERROR and summary.tests < 20
    assert "gave no score 'qualty'" in summary.error
    with open_run(summary.run_dir) as archive:  # the tests run are kept, as judge errors
        assert "no score 'qualty'" in next(archive.records()).error


def test_budgets_start_after_preparation(toy_config):
    config = toy_config(
        **{"budget.time": 1.5, "budget.tests": 100_000, "sut.target": "conftest:SlowToLoad"}
    )
    summary = run(config)
    assert summary.stop_reason == StopReason.TIME and summary.tests >= 20
    assert summary.elapsed < 2  # the 2 s of preparation are not counted


def test_a_run_leaves_the_garbage_collector_as_it_found_it(toy_config):
    """A run freezes what exists and collects the young generation less often while it runs;
    a program that embeds runs gets its own settings back."""
    before = gc.get_threshold()
    seen = []

    def look(record, summary):
        seen.append((gc.get_threshold()[0], gc.get_freeze_count() > 0))

    asyncio.run(Run(toy_config(**{"budget.tests": 20}), on_record=look).execute())
    assert seen and all(young > before[0] and frozen for young, frozen in seen)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_new_run_that_cannot_prepare_its_system_leaves_no_directory(tmp_path):
    result = cli("run", "--tests", "5", "--set", "sut.embedder=nope", "--out", tmp_path / "runs")
    assert result.returncode == 2 and "unknown embedder 'nope'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not list((tmp_path / "runs").glob("*"))
