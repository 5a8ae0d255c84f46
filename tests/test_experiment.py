"""Experiments run every algorithm x seed once, in parallel, and resume after interruption."""

from __future__ import annotations

import json
import os

import pytest
from conftest import TOY

from stellar.errors import StellarError
from stellar.experiment import Plan, execute, finished, prepare


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
    untouched = runs["stellar"][1] / "archive.sqlite"
    stamp = os.stat(untouched).st_mtime_ns

    reported.clear()
    _, skipped = execute(tmp_path, experiment, 2, done)
    assert skipped == 2
    assert sorted(reported) == [("random", 1, None), ("stellar", 0, None)]
    assert os.stat(untouched).st_mtime_ns == stamp  # a finished run is not redone
    assert all(finished(d) for d in runs["stellar"] + runs["random"])


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
