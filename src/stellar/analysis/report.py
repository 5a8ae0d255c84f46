"""An experiment's report: CSV tables, plots and a terminal table from its run directories.

Files written into ``out_dir``:

* ``runs.csv`` -- one row per run: algorithm, seed, tests, unique failures, failure ratio,
  elapsed seconds, cluster coverage, failure modes hit, 2-way failure pairs and the pairs
  its space allows
  (:mod:`stellar.analysis.interactions`), run directory;
* ``statistics.csv`` -- pairwise Mann-Whitney U and A12 on failures, failure ratio, failure
  modes, 2-way failure pairs and cluster coverage (:mod:`stellar.analysis.comparison`);
* ``feature_rates.csv`` -- failure rate per algorithm, feature and value;
* ``failure_modes.csv`` -- the failure modes (:mod:`stellar.analysis.failure_modes`), with
  who found them and the examples nearest their centre;
* ``failure_types.csv`` -- the paper's k-means clusters of the failing answers, with
  example (input, answer)s;
* plots, each as PNG and SVG: ``failures_over_tests``, ``failures_over_time``,
  ``failure_ratio``, ``cluster_coverage``, ``feature_rates``.
"""

from __future__ import annotations

import csv
import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from rich.table import Table

from stellar.analysis import plots
from stellar.analysis.comparison import ALPHA, PairRow, Summary, pairwise, summary_rows
from stellar.analysis.diversity import (
    DiversityResult,
    FailureType,
    cluster_coverage,
    failure_types,
)
from stellar.analysis.failure_modes import (
    FailingTest,
    FailureMode,
    failing_test,
    failure_modes,
    run_failure_modes,
    run_thresholds,
)
from stellar.analysis.interactions import failure_pairs, run_space, valid_pairs
from stellar.analysis.metrics import (
    CurvePoint,
    FeatureRate,
    RunData,
    RunMetrics,
    failure_curve,
    feature_failure_rates,
    load_run,
    run_metrics,
    unique_failure_texts,
)
from stellar.errors import StellarError
from stellar.text.embeddings import Embedder
from stellar.untrusted import csv_rows

# compared in statistics.csv
METRICS = ("failures", "failure_ratio", "failure_modes", "failure_pairs", "cluster_coverage")
DIVERSE = ("failure_modes", "failure_pairs")
LABELS = {
    "failures": "unique failures",
    "failure_modes": "failure modes",
    "failure_pairs": "2-way failure pairs",
}
TYPE_COLUMNS = ["type", "label", "size", "found_by", "example", "input", "answer"]


@dataclass(frozen=True)
class RunRow:
    """One row of runs.csv."""

    algorithm: str
    seed: int
    tests: int
    unique_failures: int
    failure_ratio: float
    elapsed: float
    cluster_coverage: float
    failure_modes: int  # distinct failure modes among the run's failures
    failure_pairs: int  # distinct 2-way (feature = value) pairs among the failures
    valid_pairs: int  # 2-way pairs a valid candidate of the run's space can have
    run_dir: Path


@dataclass
class ExperimentReport:
    out_dir: Path
    algorithms: list[str]
    runs: list[RunRow]
    diversity: DiversityResult
    statistics: list[PairRow]
    summary: Summary
    feature_rates: dict[str, list[FeatureRate]]
    failure_types: list[FailureType]
    failure_modes: list[FailureMode] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    def values(self, metric: str) -> dict[str, list[float]]:
        """Per algorithm, one value of a RunRow field per run (``failures`` is an alias)."""
        return _per_algorithm(self.runs, metric, self.algorithms)

    def to_rich_table(self) -> Table:
        """Per algorithm means ± standard deviations over seeds; the headline as caption."""
        table = Table(title="Algorithms compared (mean ± std over seeds)")
        table.add_column("algorithm")
        columns = ("runs", "tests", "failure modes hit", "unique failures", "failure ratio")
        for column in (*columns, "2-way failure pairs", "cluster coverage"):
            table.add_column(column, justify="right")
        table.add_column("elapsed", justify="right")
        names = ("tests", "failures", "failure_ratio", "failure_modes", "failure_pairs")
        values = {m: self.values(m) for m in (*names, "cluster_coverage", "elapsed")}
        for algorithm in self.algorithms:
            tests, failures, ratio, modes, pairs = (values[m][algorithm] for m in names)
            coverage = values["cluster_coverage"][algorithm]
            elapsed = values["elapsed"][algorithm]
            table.add_row(
                algorithm,
                str(len(tests)),
                f"{_mean(tests):.0f}" if tests else "-",
                _mean_std(modes, "{:.1f}"),
                _mean_std(failures, "{:.1f}"),
                _mean_std(ratio, "{:.1%}"),
                _mean_std(pairs, "{:.0f}"),
                _mean_std(coverage, "{:.0%}"),
                f"{_mean(elapsed):.0f} s" if elapsed else "-",
            )
        table.caption = "\n".join(self.caption())
        return table

    def caption(self) -> list[str]:
        """The best algorithm versus the next on failures and on diversity; the clustering."""
        lines = []
        head = self.summary.headline
        if head is not None:
            if head.ratio is not None:
                found = f"{head.ratio:.2f}x the failures"
            elif head.mean_best:
                found = f"{head.mean_best:.1f} failures on average against none"
            else:
                found = "no failures either"
            verdict = "significant" if head.significant else "not significant"
            lines.append(
                f"{head.best} vs {head.other}: {self._versus(DIVERSE[0], head.best, head.other)}"
            )
            lines.append(
                f"  {found}, Mann-Whitney p = {head.p_value:.3g} "
                f"({verdict} at {ALPHA}), A12 = {head.a12:.2f} ({head.magnitude})"
            )
            lines.append(f"  {self._versus(DIVERSE[1], head.best, head.other)}")
            for other in self.algorithms:  # the best against each of the rest, in one line
                if other in (head.best, head.other) or not self.values("failures")[other]:
                    continue
                metrics = (DIVERSE[0], "failures", DIVERSE[1])
                found = "; ".join(self._versus(m, head.best, other) for m in metrics)
                lines.append(f"{head.best} vs {other}: {found}")
        lines.append(
            "failure modes hit: of the modes all runs found together, how many each run's "
            "failures fall in (a run's own summary groups its failures alone)"
        )
        div = self.diversity
        if div.note:
            lines.append(f"diversity: {div.note}")
        else:
            silhouette = f", silhouette {div.silhouette:.2f}" if div.silhouette is not None else ""
            lines.append(
                f"diversity: {div.failures} distinct failures in k = {div.k} clusters"
                f"{silhouette}, {div.repeats} k-means repeats"
            )
        return lines

    def _versus(self, metric: str, best: str, other: str) -> str:
        """``best`` against ``other`` on one metric: means, p and A12 for ``best``."""
        row = next(
            r
            for r in self.statistics
            if r.metric == metric and {r.first, r.second} == {best, other}
        )
        means = (row.mean_first, row.mean_second)
        mean_best, mean_other = means if row.first == best else means[::-1]
        effect = row.a12 if row.first == best else 1 - row.a12
        verdict = "significant" if row.significant else "not significant"
        return (
            f"{LABELS[metric]}: {mean_best:.1f} vs {mean_other:.1f}, p = {row.p_value:.3g} "
            f"({verdict}), A12 = {effect:.2f}"
        )


def experiment_report(
    runs: dict[str, list[Path]],
    out_dir: Path,
    embedder: Embedder | str = "minilm",
    repeats: int = 10,
    seed: int = 0,
) -> ExperimentReport:
    """Analyse the runs of each algorithm (its seeds in list order) and write the report."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    metrics: dict[str, list[tuple[int, Path, RunMetrics]]] = {}
    curves: dict[str, list[list[CurvePoint]]] = {}
    texts: dict[str, list[list[str]]] = {}
    rates: dict[str, list[FeatureRate]] = {}
    pairs: dict[str, list[tuple[int, int]]] = {}  # per run: failure pairs, valid pairs
    answers: dict[str, tuple[str, set[str]]] = {}  # failing input -> (answer, found by)
    failing: dict[str, FailingTest] = {}  # failing input -> its first failing test
    for algorithm, run_dirs in runs.items():
        loaded = [load_run(d) for d in run_dirs]  # each archive read once
        metrics[algorithm] = [
            (int(data.meta.get("seed", i)), data.run_dir, run_metrics(data))
            for i, data in enumerate(loaded)
        ]
        curves[algorithm] = [failure_curve(data) for data in loaded]
        texts[algorithm] = [unique_failure_texts(data) for data in loaded]
        rates[algorithm] = feature_failure_rates(loaded)
        pairs[algorithm] = [_pair_counts(data) for data in loaded]
        for data in loaded:
            thresholds = run_thresholds(data.run_dir)
            for record in data.failures:
                text = record.input_text or ""
                answers.setdefault(text, (record.response_text or "", set()))[1].add(algorithm)
                failing.setdefault(text, failing_test(record, thresholds))

    diversity = cluster_coverage(texts, embedder, repeats=repeats, seed=seed)
    inputs = sorted(answers)  # results do not depend on the order of algorithms or runs
    modes = failure_modes([failing[t] for t in inputs], embedder)
    mode_of = {inputs[i]: n for n, mode in enumerate(modes) for i in mode.members}
    rows = [
        RunRow(
            algorithm,
            run_seed,
            m.tests,
            m.unique_failures,
            m.failure_ratio,
            m.elapsed,
            diversity.coverage[algorithm].runs[i],
            len({mode_of[t] for t in texts[algorithm][i]}),
            *pairs[algorithm][i],
            run_dir,
        )
        for algorithm, items in metrics.items()
        for i, (run_seed, run_dir, m) in enumerate(items)
    ]
    types = failure_types([answers[t][0] for t in inputs], inputs, embedder, seed=seed)
    values = {metric: _per_algorithm(rows, metric, list(runs)) for metric in METRICS}
    report = ExperimentReport(
        out_dir=out_dir,
        algorithms=list(runs),
        runs=rows,
        diversity=diversity,
        statistics=[row for metric in METRICS for row in pairwise(values[metric], metric)],
        summary=summary_rows(
            values["failures"], values["failure_ratio"], values["cluster_coverage"]
        ),
        feature_rates=rates,
        failure_types=types,
        failure_modes=modes,
    )
    report.files = _write_tables(report, [answers[t][1] for t in inputs])
    report.files.append(
        _write_groups(out_dir / "failure_modes.csv", modes, [answers[t][1] for t in inputs], "mode")
    )
    report.files += _write_plots(report, curves, values)
    return report


def _pair_counts(data: RunData) -> tuple[int, int]:
    """Distinct 2-way pairs among a run's failures, and those its space allows."""
    try:
        valid = len(valid_pairs(run_space(data.run_dir)))
    except (OSError, ValueError, StellarError):  # a run without a readable configuration
        valid = 0
    return len(failure_pairs(data.records)), valid


def _per_algorithm(
    rows: list[RunRow], metric: str, algorithms: list[str]
) -> dict[str, list[float]]:
    """One value of a RunRow field per run, per algorithm (``failures``: unique failures)."""
    name = "unique_failures" if metric == "failures" else metric
    out: dict[str, list[float]] = {a: [] for a in algorithms}
    for row in rows:
        out.setdefault(row.algorithm, []).append(float(getattr(row, name)))
    return out


def _write_tables(report: ExperimentReport, found_by: list[set[str]]) -> list[Path]:
    out = report.out_dir
    runs = [asdict(r) for r in report.runs]
    stats = [{**asdict(s), "significant": s.significant} for s in report.statistics]
    rates = [
        {"algorithm": algorithm, **asdict(r)}
        for algorithm, rows in report.feature_rates.items()
        for r in rows
    ]
    return [
        _write_csv(out / "runs.csv", [f.name for f in fields(RunRow)], runs),
        _write_csv(
            out / "statistics.csv", [*(f.name for f in fields(PairRow)), "significant"], stats
        ),
        _write_csv(
            out / "feature_rates.csv", ["algorithm", *(f.name for f in fields(FeatureRate))], rates
        ),
        _write_groups(out / "failure_types.csv", report.failure_types, found_by),
    ]


def export_failure_modes(
    run_dir: Path, out_dir: Path, modes: list[FailureMode] | None = None
) -> Path:
    """A run's failure modes (``modes`` if grouped already) as ``failure_modes.csv`` in
    ``out_dir`` (stellar export)."""
    modes = run_failure_modes(run_dir) if modes is None else modes
    return _write_groups(out_dir / "failure_modes.csv", modes, None, "mode")


def _write_groups(
    path: Path,
    groups: list[FailureType] | list[FailureMode],
    found_by: list[set[str]] | None = None,
    kind: str = "type",
) -> Path:
    """Failure types or modes, a row per example, with who found the group's failures; the
    first column (``kind``) numbers the groups as the tables do, largest first."""
    rows = []
    for n, group in enumerate(groups, start=1):
        counts = Counter(a for i in group.members for a in (found_by[i] if found_by else ()))
        found = "; ".join(f"{a}: {c}" for a, c in counts.most_common())
        for e, (text, answer) in enumerate(group.examples, start=1):
            rows.append(
                {kind: n, "label": group.label, "size": group.size, "found_by": found}
                | {"example": e, "input": text, "answer": answer}
            )
    return _write_csv(path, [kind, *TYPE_COLUMNS[1:]], rows)


def _write_plots(
    report: ExperimentReport,
    curves: dict[str, list[list[CurvePoint]]],
    values: dict[str, dict[str, list[float]]],
) -> list[Path]:
    out = report.out_dir
    coverage = {a: v for a, v in values["cluster_coverage"].items() if v}
    return [
        *plots.plot_failure_curves(curves, out, axis="tests"),
        *plots.plot_failure_curves(curves, out, axis="seconds"),
        *plots.plot_failure_ratios({a: v for a, v in values["failure_ratio"].items() if v}, out),
        *plots.plot_distribution(coverage, out, "cluster_coverage", "cluster coverage"),
        *plots.plot_feature_rates(report.feature_rates, out),
    ]


def _write_csv(path: Path, header: list[str], rows: list[dict[str, Any]]) -> Path:
    """The rows under ``header``; no cell a spreadsheet would run as a formula."""
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows(csv_rows(rows))
    return path


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def _mean_std(values: list[float], fmt: str) -> str:
    if not values:
        return "-"
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{fmt.format(_mean(values))} ± {fmt.format(std)}"
