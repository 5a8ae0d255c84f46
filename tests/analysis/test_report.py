import asyncio
import csv
from pathlib import Path

import pytest
from rich.console import Console

from stellar.analysis.interactions import failure_pairs, run_space, valid_pairs
from stellar.analysis.metrics import (
    feature_failure_rates,
    load_run,
    run_metrics,
    unique_failure_texts,
)
from stellar.analysis.report import experiment_report
from stellar.run import Run

PLOTS = ["failures_over_tests", "failures_over_time", "failure_ratio", "cluster_coverage"]
PLOTS += ["feature_rates"]
CSVS = ["runs.csv", "statistics.csv", "feature_rates.csv", "failure_types.csv", "failure_modes.csv"]


def make_runs(toy_config, algorithms=("stellar", "random"), **overrides) -> dict[str, list[Path]]:
    """2 algorithms x 2 seeds x 60 tests of the toy use case."""
    runs: dict[str, list[Path]] = {}
    for algorithm in algorithms:
        for seed in (0, 1):
            settings = {"algorithm.name": algorithm, "seed": seed, "budget.tests": 60}
            config = toy_config(**settings, **overrides)
            runs.setdefault(algorithm, []).append(Path(asyncio.run(Run(config).execute()).run_dir))
    return runs


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def runs(toy_config):
    return make_runs(toy_config, **{"oracle.below": {"quality": 0.5}})  # many failures


def test_report_writes_consistent_tables_and_plots(runs, tmp_path):
    out = tmp_path / "report"
    report = experiment_report(runs, out, embedder="hashing", repeats=3)
    for name in CSVS + [f"{stem}.{ext}" for stem in PLOTS for ext in ("png", "svg")]:
        assert (out / name).stat().st_size > 0, name
        assert out / name in report.files

    rows = read_csv(out / "runs.csv")
    assert [(r["algorithm"], r["seed"]) for r in rows] == [
        ("stellar", "0"),
        ("stellar", "1"),
        ("random", "0"),
        ("random", "1"),
    ]
    run_dirs = [d for dirs in runs.values() for d in dirs]
    for row, run_dir, coverage in zip(
        rows, run_dirs, [c for a in runs for c in report.diversity.coverage[a].runs], strict=True
    ):
        metrics = run_metrics(run_dir)
        assert int(row["tests"]) == metrics.tests == 60
        assert int(row["unique_failures"]) == metrics.unique_failures
        assert float(row["failure_ratio"]) == pytest.approx(metrics.failure_ratio)
        assert float(row["elapsed"]) == pytest.approx(metrics.elapsed)
        assert float(row["cluster_coverage"]) == pytest.approx(coverage)
        assert 0 < coverage <= 1
        assert int(row["failure_pairs"]) == len(failure_pairs(load_run(run_dir).records)) > 0
        assert 0 < int(row["failure_modes"]) <= len(report.failure_modes)
        assert int(row["valid_pairs"]) == len(valid_pairs(run_space(run_dir)))
        assert row["run_dir"] == str(run_dir)

    distinct = {t for d in run_dirs for t in unique_failure_texts(d)}
    assert report.diversity.failures == len(distinct) > 0
    assert report.diversity.repeats == 3

    stats = read_csv(out / "statistics.csv")
    assert [(s["metric"], s["first"], s["second"]) for s in stats] == [
        ("failures", "stellar", "random"),
        ("failure_ratio", "stellar", "random"),
        ("failure_modes", "stellar", "random"),
        ("failure_pairs", "stellar", "random"),
        ("cluster_coverage", "stellar", "random"),
    ]
    means = report.values("failures")
    assert float(stats[0]["mean_first"]) == pytest.approx(sum(means["stellar"]) / 2)

    rates = read_csv(out / "feature_rates.csv")
    expected = feature_failure_rates(runs["random"])
    got = [r for r in rates if r["algorithm"] == "random"]
    assert [(r["feature"], r["value"], int(r["failures"])) for r in got] == [
        (e.feature, e.value, e.failures) for e in expected
    ]

    modes = read_csv(out / "failure_modes.csv")
    assert sum(m.size for m in report.failure_modes) == len(distinct)
    assert {m["label"] for m in modes} == {m.label for m in report.failure_modes}
    assert all(m["label"].startswith("quality failed: ") for m in modes)  # the toy's objective

    types = read_csv(out / "failure_types.csv")
    assert sum(t.size for t in report.failure_types) == len(distinct)
    assert {t["label"] for t in types} == {t.label for t in report.failure_types}
    assert all(t["input"] in distinct for t in types)

    head = report.summary.headline
    assert {head.best, head.other} == {"stellar", "random"}
    text = render(report)
    assert "stellar" in text and "random" in text and "clusters" in text
    caption = report.caption()
    modes = next(r for r in report.statistics if r.metric == "failure_modes")
    assert caption[0].startswith(f"{head.best} vs {head.other}: failure modes: ")  # modes lead
    assert any(f"p = {modes.p_value:.3g}" in line for line in caption if "modes" in line)
    assert any(line.strip().startswith("2-way failure pairs: ") for line in caption)


def test_caption_puts_the_best_against_every_other_algorithm(toy_config, tmp_path):
    runs = make_runs(
        toy_config, ("stellar", "random", "diverse"), **{"oracle.below": {"quality": 0.5}}
    )
    report = experiment_report(runs, tmp_path / "report", embedder="hashing", repeats=2)
    head = report.summary.headline
    [third] = {"stellar", "random", "diverse"} - {head.best, head.other}
    [line] = [line for line in report.caption() if line.startswith(f"{head.best} vs {third}: ")]
    for metric, label in (
        ("failures", "unique failures"),
        ("failure_pairs", "2-way failure pairs"),
    ):
        row = next(
            r
            for r in report.statistics
            if r.metric == metric and {r.first, r.second} == {head.best, third}
        )
        assert f"{label}: " in line and f"p = {row.p_value:.3g}" in line


def test_report_without_any_failure(toy_config, tmp_path):
    runs = make_runs(toy_config, **{"oracle.below": {"quality": 0.0}})  # nothing fails
    report = experiment_report(runs, tmp_path / "report", embedder="hashing")
    assert report.diversity.k == 0 and report.failure_types == []
    assert all(r.unique_failures == 0 and r.cluster_coverage == 0 for r in report.runs)
    assert read_csv(tmp_path / "report" / "failure_types.csv") == []
    assert (tmp_path / "report" / "failures_over_time.svg").stat().st_size > 0
    assert "no failures" in render(report)


def render(report) -> str:
    console = Console(record=True, width=160)
    console.print(report.to_rich_table())
    return console.export_text()
