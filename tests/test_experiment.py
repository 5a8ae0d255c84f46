"""Experiments run every algorithm x seed once, in parallel, and resume after interruption."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys

import pytest
from conftest import TOY, cli

from stellar.errors import StellarError
from stellar.experiment import Plan, execute, finished, prepare

ROWS = 'SELECT generation, "index", status, input_text, scores FROM tests'


def plan(**changes) -> Plan:
    settings = {
        "config": str(TOY / "run.yaml"),
        "algorithms": ["stellar", "random"],
        "seeds": [0, 1],
        "tests": 40,
    }
    return Plan(**{**settings, **changes})


def test_runs_every_pair_then_resumes_only_what_is_unfinished(tmp_path):
    experiment = plan()
    prepare(tmp_path, experiment)
    reported = []

    def done(algorithm, seed, summary, error):
        reported.append((algorithm, seed, error))

    runs, skipped = execute(tmp_path, experiment, 2, done)
    assert skipped == 0 and sorted(reported) == [
        ("random", 0, None),
        ("random", 1, None),
        ("stellar", 0, None),
        ("stellar", 1, None),
    ]
    assert {a: [d.name for d in dirs] for a, dirs in runs.items()} == {
        "stellar": ["stellar-s0", "stellar-s1"],
        "random": ["random-s0", "random-s1"],
    }
    for run_dir in runs["stellar"] + runs["random"]:
        assert finished(run_dir)
        assert json.loads((run_dir / "summary.json").read_text())["tests"] == 40

    # simulate a run stopped by Ctrl-C and one that never wrote its summary
    interrupted = runs["random"][1] / "summary.json"
    summary = json.loads(interrupted.read_text())
    interrupted.write_text(json.dumps({**summary, "stop_reason": "interrupted (Ctrl-C)"}))
    (runs["stellar"][0] / "summary.json").unlink()
    killed = runs["stellar"][0] / "archive.sqlite"
    with sqlite3.connect(killed) as db:  # its last tests were in flight at the kill
        before = sorted(db.execute(ROWS))
        db.execute("DELETE FROM tests WHERE id > (SELECT MAX(id) - 5 FROM tests)")
    untouched = runs["stellar"][1] / "archive.sqlite"
    stamp = os.stat(untouched).st_mtime_ns

    reported.clear()
    _, skipped = execute(tmp_path, experiment, 2, done)
    assert skipped == 2
    assert sorted(reported) == [("random", 1, None), ("stellar", 0, None)]
    assert os.stat(untouched).st_mtime_ns == stamp  # a finished run is not redone
    assert all(finished(d) for d in runs["stellar"] + runs["random"])
    with sqlite3.connect(killed) as db:  # resumed, not redone: the same tests, each once
        assert sorted(db.execute(ROWS)) == before


def test_a_resumed_experiment_must_keep_its_settings(tmp_path):
    prepare(tmp_path, plan())
    with pytest.raises(StellarError, match="other settings"):
        prepare(tmp_path, plan(tests=99))
    prepare(tmp_path, plan(algorithms=["twise"], seeds=[2]))  # more runs extend it
    stored = (tmp_path / "experiment.yaml").read_text()
    assert "twise" in stored and "- 2" in stored


def test_a_failing_run_is_reported_and_the_others_finish(tmp_path):
    experiment = plan(algorithms=["random"], overrides={"sut.target": "toy:missing"})
    errors = []
    execute(tmp_path, experiment, 1, lambda a, s, summary, error: errors.append(error))
    assert len(errors) == 2 and all("toy:missing" in e for e in errors)


def test_a_configuration_error_in_a_worker_is_reported_as_such(tmp_path):
    experiment = plan(algorithms=["random"], seeds=[0], settings={"budget.tests": 0})
    errors = []
    execute(tmp_path, experiment, 1, lambda a, s, summary, error: errors.append(error))
    assert len(errors) == 1 and errors[0].startswith("ConfigError")  # not a broken pool


def test_compare_command_prints_the_table_and_resumes(tmp_path):
    args = [
        "compare",
        TOY / "run.yaml",
        "--algorithms",
        "stellar,random",
        "--seeds",
        "2",
        "--tests",
        "40",
        "--dir",
        tmp_path / "exp",
        "--embedder",
        "hashing",
        "--repeats",
        "2",
    ]
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    assert "stellar" in first.stdout and "random" in first.stdout
    report = tmp_path / "exp" / "report"
    for name in ("runs.csv", "statistics.csv", "feature_rates.csv", "failure_types.csv"):
        assert (report / name).stat().st_size > 0
    assert list(report.glob("*.png")) and list(report.glob("*.svg"))
    again = cli(*args)
    assert again.returncode == 0 and "skipped 4 of 4 runs" in again.stderr
    bad = cli("compare", TOY / "run.yaml", "--algorithms", "stellar,nope", "--dir", tmp_path)
    assert bad.returncode == 2 and "nope" in bad.stderr and "Traceback" not in bad.stderr


def test_compare_refuses_an_option_one_of_its_algorithms_lacks_before_any_run(tmp_path, capsys):
    from stellar.cli import main

    args = ["compare", str(TOY / "run.yaml"), "--algorithms", "stellar,random", "--seeds", "1"]
    code = main([*args, "--set", "algorithm.mutation=0.2", "--dir", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 2 and "algorithm.stellar.mutation" in err, err
    assert not (tmp_path / "x").exists()


def test_compare_takes_the_system_options_run_takes_and_out(tmp_path):
    from stellar.cli import main

    code = main(
        ["compare", str(TOY / "run.yaml"), "--algorithms", "random", "--seeds", "1",
         "--tests", "6", "--sut", "toy:slow_answer", "--max-error-rate", "0.5",
         "--out", str(tmp_path / "exp"), "--parallel", "1", "--embedder", "hashing",
         "--repeats", "1"]
    )  # fmt: skip
    assert code == 0
    config = (tmp_path / "exp" / "runs" / "random-s0" / "config.yaml").read_text()
    assert "target: toy:slow_answer" in config and "max_error_rate: 0.5" in config


def test_compare_exits_3_when_the_system_is_not_healthy(tmp_path, capsys):
    import socket

    from stellar.cli import main

    with socket.socket() as probe:  # a port with nothing listening: the system is down
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/query"
    code = main(
        ["compare", str(TOY / "run.yaml"), "--algorithms", "random", "--seeds", "1",
         "--tests", "40", "--sut", url, "--out", str(tmp_path / "exp"), "--parallel", "1"]
    )  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3 and err[-1].startswith("stellar: not healthy: 1 runs stopped (")
    assert "ConnectError" in err[-1]


def test_a_second_compare_on_a_busy_experiment_exits_2_naming_the_first(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        result = cli("compare", TOY / "run.yaml", "--seeds", "1", "--dir", tmp_path)
    finally:
        holder.kill()
        holder.wait(10)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"stellar: error: {tmp_path} is in use by another stellar compare (pid {holder.pid} "
        f"on host {socket.gethostname()}, since " + result.stderr.split("since ")[1].strip()
    ]
    assert not (tmp_path / "experiment.yaml").exists()  # nothing was written


HOLD_LOCK = """
import sys, time
from pathlib import Path
from stellar.locks import DirectoryLock
DirectoryLock(Path(sys.argv[1]), "compare").acquire()
print("held", flush=True)
time.sleep(60)
"""


def test_compare_compares_the_configurations_own_search_by_default(tmp_path):
    from stellar.cli import main

    config = tmp_path / "run.yaml"
    config.write_text(f"use_case: {TOY}\nalgorithm: {{name: mode-balanced}}\n")
    args = ["compare", str(config), "--seeds", "1", "--tests", "6", "--parallel", "1"]
    args += ["--embedder", "hashing", "--repeats", "1", "--out", str(tmp_path / "exp")]
    assert main(args) == 0
    runs = sorted(p.name for p in (tmp_path / "exp" / "runs").iterdir())
    assert runs == ["mode-balanced-s0", "random-s0", "twise-s0"]
