"""Runs and an experiment of the toy use case whose inputs and answers attack an HTML page
(``tests/fixtures/toy/html_hostile.py``), for the report's tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml
from conftest import TOY

from stellar.analysis.report import experiment_report
from stellar.config import load_config
from stellar.run import Run

HOSTILE = {
    "generator.target": "html_hostile:describe",
    "sut.target": "html_hostile:answer",
    "oracle.below": {"quality": 0.5},  # many failures
}


def hostile_run(out: Path, tests: int = 150, algorithm: str = "stellar", seed: int = 1,
                run_dir: Path | None = None) -> Path:  # fmt: skip
    overrides = {"out": str(out), "budget.tests": tests, "algorithm.name": algorithm}
    config = load_config(TOY / "run.yaml", {**overrides, "seed": seed, **HOSTILE})
    return Path(asyncio.run(Run(config, run_dir=run_dir).execute()).run_dir)


def hostile_experiment(root: Path, algorithms=("stellar", "random"), seeds=(0, 1)) -> Path:
    """An experiment directory as ``stellar compare`` leaves it, made in this process."""
    runs: dict[str, list[Path]] = {}
    for algorithm in algorithms:
        for seed in seeds:
            run_dir = root / "runs" / f"{algorithm}-s{seed}"
            runs.setdefault(algorithm, []).append(
                hostile_run(root / "runs", 40, algorithm, seed, run_dir)
            )
    experiment_report(runs, root / "report", embedder="hashing", repeats=2)
    plan = {"config": str(TOY / "run.yaml"), "algorithms": list(algorithms)}
    plan |= {"seeds": list(seeds), "tests": 40, "time": None, "overrides": {}, "settings": {}}
    (root / "experiment.yaml").write_text(yaml.safe_dump(plan), encoding="utf-8")
    return root
