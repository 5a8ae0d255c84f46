"""What the report page shows of an experiment (``stellar compare``'s directory).

The comparison is read from the tables and plots ``stellar compare`` wrote into ``report/``
(``stellar.analysis.report``): per algorithm, the means of ``runs.csv``; every pair of
algorithms from ``statistics.csv`` (Mann-Whitney p, A12); ``failure_modes.csv``; the SVG
plots as ``data:`` images (an ``<img>`` runs no script of its own). Each run is listed with
a link to its own page.
"""

from __future__ import annotations

import base64
import csv
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

from stellar.analysis.html_page import cut, duration
from stellar.rundir import CONFIG_NAME, read_summary
from stellar.summary import added_writers, simulated_user_lines
from stellar.untrusted import FORMULA_START

EXPERIMENT_FILE = "experiment.yaml"  # as stellar.experiment names it (a sibling layer)
EXAMPLE_LIMIT = 5000  # characters of a text kept in a failure mode's examples
PLOTS = {  # report/ SVGs of an experiment, in the page's order
    "failures_over_tests": "Unique failures over tests",
    "failures_over_time": "Unique failures over time",
    "failure_ratio": "Failure ratio",
    "cluster_coverage": "Cluster coverage",
    "feature_rates": "Failure rate per feature value",
}
RUN_COLUMNS = ["run", "algorithm", "seed", "tests", "failures", "ratio", "time", "stopped"]
RUN_COLUMNS += ["report"]
NO_COMPARISON = "No comparison yet: stellar compare writes it when every run has finished."


def is_experiment(directory: Path) -> bool:
    return (Path(directory) / EXPERIMENT_FILE).is_file()


def run_dirs(root: Path) -> list[Path]:
    """The experiment's run directories, by name."""
    return sorted(p for p in (root / "runs").glob("*") if (p / CONFIG_NAME).is_file())


def experiment_payload(root: Path, page_dir: Path, run_pages: dict[Path, Path]) -> dict[str, Any]:
    """What the page in ``page_dir`` shows of an experiment; ``run_pages``: each run
    directory's own page, linked from it."""
    try:
        plan = yaml.safe_load((root / EXPERIMENT_FILE).read_text(encoding="utf-8"))
    except yaml.YAMLError:
        plan = None
    plan = plan if isinstance(plan, dict) else {}
    report = root / "report"
    runs, summaries = [], []
    for run_dir in run_dirs(root):
        page = run_pages.get(run_dir)
        s = read_summary(run_dir)
        summaries.append(s)
        runs.append(
            [
                run_dir.name,
                str(s.get("algorithm", "-")),
                str(s.get("seed", "-")),
                f"{s.get('tests', 0):,}",
                f"{s.get('failures', 0):,}",
                f"{float(s.get('failure_ratio', 0.0)):.1%}",
                duration(float(s.get("elapsed") or 0.0)),
                str(s.get("stop_message") or s.get("stop_reason") or "not finished"),
                _link(page, page_dir) if page else "",
            ]
        )
    summary = [
        ["configuration", str(plan.get("config") or "built-in default")],
        ["algorithms", ", ".join(map(str, plan.get("algorithms") or []))],
        ["seeds", ", ".join(map(str, plan.get("seeds") or []))],
        ["test budget per run", str(plan.get("tests") or "-")],
        ["time budget per run", duration(float(plan["time"])) if plan.get("time") else "-"],
        ["runs", f"{len(runs)}"],
    ]
    written, warning = simulated_user_lines(added_writers(summaries))
    if written:
        summary.append(["simulated user", written.removeprefix("simulated user: ")])
    return {
        "kind": "experiment",
        "title": f"STELLAR experiment: {root.resolve().name}",
        "summary": summary,
        "notes": ([] if (report / "statistics.csv").is_file() else [NO_COMPARISON])
        + ([f"Simulated user: {warning}"] if warning else []),
        "algorithms": _algorithm_table(_read_csv(report / "runs.csv")),
        "statistics": _statistics_table(_read_csv(report / "statistics.csv")),
        "plots": [
            {
                "title": title,
                "src": _data_uri(report / f"{stem}.svg"),
                "wide": stem == "feature_rates",
            }
            for stem, title in PLOTS.items()
            if (report / f"{stem}.svg").is_file()
        ],
        "modes": _csv_modes(_read_csv(report / "failure_modes.csv")),
        "runs": {"header": RUN_COLUMNS, "rows": runs},
    }


def _read_csv(path: Path) -> list[dict[str, str]]:
    """A table ``stellar compare`` wrote, with the quote that guards formulas taken off."""
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    except OSError:
        return []
    return [{k: _unguard(v) for k, v in row.items()} for row in rows]


def _unguard(value: str) -> str:
    return value[1:] if value[:1] == "'" and value[1:2].startswith(FORMULA_START) else value


def _algorithm_table(rows: list[dict[str, str]]) -> dict[str, Any]:
    """Per algorithm, the means over its runs of runs.csv's columns."""
    columns = {
        "tests": "{:,.0f}",
        "failure_modes": "{:.1f}",
        "unique_failures": "{:.1f}",
        "failure_ratio": "{:.1%}",
        "failure_pairs": "{:.0f}",
        "cluster_coverage": "{:.0%}",
        "elapsed": "{:.0f} s",
    }
    out = []
    for algorithm in dict.fromkeys(r["algorithm"] for r in rows):
        mine = [r for r in rows if r["algorithm"] == algorithm]
        cells = [algorithm, str(len(mine))]
        for column, fmt in columns.items():
            values = [float(r[column]) for r in mine if r.get(column) not in (None, "")]
            cells.append(fmt.format(sum(values) / len(values)) if values else "-")
        out.append(cells)
    header = ["algorithm", "runs", "tests", "failure modes hit", "unique failures", "failure ratio"]
    return {"header": [*header, "2-way failure pairs", "cluster coverage", "time"], "rows": out}


def _statistics_table(rows: list[dict[str, str]]) -> dict[str, Any]:
    """statistics.csv: every pair of algorithms on every metric, p and A12."""
    out = [
        [
            r["metric"].replace("_", " "),
            r["first"],
            r["second"],
            f"{float(r['mean_first']):.3g}",
            f"{float(r['mean_second']):.3g}",
            f"{float(r['p_value']):.3g}",
            f"{float(r['a12']):.2f}",
            r["magnitude"],
            "yes" if r.get("significant") == "True" else "no",
        ]
        for r in rows
    ]
    header = ["metric", "first", "second", "mean first", "mean second", "p (Mann-Whitney)"]
    return {"header": [*header, "A12", "magnitude", "significant"], "rows": out}


def _csv_modes(rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    """failure_modes.csv (a row per example) as the page's modes."""
    modes: dict[str, dict[str, Any]] = {}
    for row in rows:
        mode = modes.setdefault(
            row.get("mode") or row["type"],  # "type" in experiments written before issue 30
            {"label": row["label"], "size": int(row["size"] or 0), "found_by": row["found_by"]},
        )
        mode.setdefault("examples", []).append(
            {
                "input": cut(row["input"], EXAMPLE_LIMIT),
                "answer": cut(row["answer"], EXAMPLE_LIMIT),
            }
        )
    total = sum(m["size"] for m in modes.values())
    for mode in modes.values():
        mode["share"] = mode["size"] / total if total else 0.0
    return list(modes.values())


def _data_uri(path: Path) -> str:
    """An SVG as a ``data:`` image: shown by an ``<img>``, where no script of it can run."""
    return "data:image/svg+xml;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _link(page: Path, page_dir: Path) -> str:
    """A relative link from the experiment's page to a run's page, every unsafe character
    percent-encoded (so it can never be a ``javascript:`` URL)."""
    return quote(Path(os.path.relpath(page, page_dir)).as_posix(), safe="/")
