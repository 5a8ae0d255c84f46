"""Exports of a run's archive: every test and the failures, as JSONL and CSV; its failure
conditions (:mod:`stellar.analysis.failure_rules`, found by the caller) likewise."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from stellar.archive import open_run
from stellar.records import TestRecord
from stellar.rundir import EXPORT_DIR
from stellar.untrusted import csv_rows


def export_run(
    run_dir: str | Path,
    out_dir: str | Path | None = None,
    mode_of: Mapping[str, int] | None = None,
) -> list[Path]:
    """Write tests and failures as JSONL and CSV; return the files written. ``mode_of``: each
    failing input's failure mode, as the tables number them (``stellar export`` gives it)."""
    run_dir = Path(run_dir)
    out = Path(out_dir) if out_dir else run_dir / EXPORT_DIR
    modes = mode_of or {}
    with open_run(run_dir) as archive:  # every row read before anything is written
        tables = {
            name: [_flat(r, modes) for r in archive.records(failures_only)]
            for name, failures_only in (("tests", False), ("failures", True))
        }
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in tables.items():
        written.append(_write_jsonl(out / f"{name}.jsonl", rows))
        written.append(_write_csv(out / f"{name}.csv", rows))
    return written


RULE_COLUMNS = [
    "rule",
    "tests",
    "failed",
    "precision",
    "held_back_tests",
    "held_back_failed",
    "held_back_precision",
    "modes",
]


def export_failure_rules(out_dir: str | Path, rules: Sequence[Mapping[str, Any]]) -> list[Path]:
    """Write ``failure_rules.jsonl`` (each rule as ``FailureRule.to_dict()`` gives it) and
    ``failure_rules.csv`` (a row per rule; its modes as ``2 (39), 3 (28)``: failures by mode
    number, as failure_modes.csv numbers them)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = [
        {key: rule[key] for key in RULE_COLUMNS[:-1]}
        | {"modes": ", ".join(f"{mode} ({n})" for mode, n in rule["modes"].items())}
        for rule in rules
    ]
    path = out / "failure_rules.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=RULE_COLUMNS)
        writer.writeheader()
        writer.writerows(csv_rows(rows))
    return [_write_jsonl(out / "failure_rules.jsonl", list(rules)), path]


def _flat(record: TestRecord, modes: Mapping[str, int]) -> dict[str, Any]:
    row = asdict(record)
    row["mode"] = modes.get(record.input_text or "") if record.is_failure else None
    row["status"] = str(record.status)
    row["oracle_failed"] = row["failed"]  # the search's oracle, before exclusion and judge
    row["failed"] = record.is_failure  # the count's meaning: an excluded test never fails
    row["excluded"] = record.final_excluded
    row["excluded_reason"] = record.exclusion_reason
    return row


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    return path


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """One column per field; candidate values and scores are spread into their own columns.
    A text cell a spreadsheet would run as a formula gets a leading ``'``."""

    flat_rows = []
    for row in rows:
        flat = {k: v for k, v in row.items() if k not in ("candidate", "scores", "verdict")}
        flat.update({f"feature.{k}": v for k, v in row["candidate"].items()})
        flat.update({f"score.{k}": v for k, v in (row["scores"] or {}).items()})
        for key in ("vector", "response_data", "details", "usage"):
            flat[key] = json.dumps(flat[key], ensure_ascii=False, default=str)
        if row.get("verdict"):  # the post-search judge's, in columns of their own
            verdict = row["verdict"]
            flat.update({f"verdict.score.{k}": v for k, v in verdict["scores"].items()})
            for key in ("failed", "excluded", "error"):
                flat[f"verdict.{key}"] = verdict[key]
            flat["verdict.details"] = json.dumps(verdict["details"], ensure_ascii=False)
        flat_rows.append(flat)
    header: list[str] = []
    for flat in flat_rows:
        header.extend(k for k in flat if k not in header)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header or ["id"])
        writer.writeheader()
        writer.writerows(csv_rows(flat_rows))
    return path
