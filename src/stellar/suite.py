"""The tests a replay sends: a run directory's, or a suite file's.

A suite file (:func:`export_suite`, ``stellar export --suite``) is JSONL, one test a line:
``input`` (required), ``prompt``, ``candidate`` (feature values, required), ``vector``, the
source's ``scores`` and ``failed`` (its verdict, default true), ``verdict`` (the post-search
judge's), and the source run's ``run`` name, ``test_id`` and ``config`` path (a relative path
is read from the suite file's folder), which replay loads unless it is given another
configuration. Lines may be written by hand: ``failed: false`` marks a test that should pass.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from stellar.archive import open_run
from stellar.errors import StellarError
from stellar.records import PLAN_KEY, TestRecord
from stellar.rundir import CONFIG_NAME
from stellar.untrusted import Cleaner


@dataclass
class ReplayTest:
    """One archived test to send again."""

    text: str
    candidate: dict[str, Any]
    vector: list[float] | None = None
    prompt: str | None = None
    failed: bool | None = None  # the source's verdict; None: an error, or excluded
    source_id: int | None = None  # its id in the source archive
    scores: dict[str, float] = field(default_factory=dict)  # the source's
    plan: dict[str, Any] | None = None  # a conversation's plan: its turns are sent again


@dataclass
class Source:
    """A run directory or a suite file, and the configuration its tests ran with."""

    path: Path
    config: Path | None
    tests: list[ReplayTest]
    only: str = "failures"  # or "all"


def read_source(path: str | Path, only: str = "failures") -> Source:
    """The tests of a run directory or a suite file (``only``: "failures" or "all")."""
    path = Path(path)
    if path.is_dir():
        return Source(path, path / CONFIG_NAME, read_run(path, only == "failures"), only)
    if path.is_file():
        tests, config = read_suite(path)
        return Source(path, config, [t for t in tests if only == "all" or t.failed], only)
    raise StellarError(f"{path}: no such run directory or suite file")


def read_run(run_dir: Path, failures_only: bool) -> list[ReplayTest]:
    """The run's failures (or every test that reached the system under test)."""
    try:
        with open_run(run_dir) as archive:
            found = list(archive.numbered(failures_only))
    except sqlite3.DatabaseError as exc:
        raise StellarError(f"{run_dir}: its archive cannot be read ({exc})") from None
    return [_from_record(test_id, r) for test_id, r in found if r.executed]


def _from_record(test_id: int, record: TestRecord) -> ReplayTest:
    verdict = record.judged and not record.final_excluded
    return ReplayTest(
        text=record.input_text or "",
        candidate=dict(record.candidate),
        vector=list(record.vector),
        prompt=record.prompt,
        failed=record.is_failure or (False if verdict else None),
        source_id=test_id,
        scores=dict(record.scores),
        plan=record.details.get(PLAN_KEY),
    )


def export_suite(run_dir: str | Path, path: str | Path) -> int:
    """Write the run's failures to ``path`` as a suite file (JSONL); returns how many."""
    run_dir, path = Path(run_dir), Path(path)
    config = (run_dir / CONFIG_NAME).resolve()
    with open_run(run_dir) as archive:
        failures = list(archive.numbered(failures_only=True))
    lines = [
        {
            "input": record.input_text,
            "prompt": record.prompt,
            "candidate": record.candidate,
            "vector": record.vector,
            "scores": record.scores,
            **({PLAN_KEY: record.details[PLAN_KEY]} if PLAN_KEY in record.details else {}),
            "failed": True,
            "verdict": asdict(record.verdict) if record.verdict is not None else None,
            "run": run_dir.name,
            "test_id": test_id,
            "config": str(config),
        }
        for test_id, record in failures
    ]
    text = "".join(json.dumps(x, ensure_ascii=False, default=str) + "\n" for x in lines)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise StellarError(f"{path}: cannot write the suite file ({exc.strerror or exc})") from None
    return len(failures)


def read_suite(path: Path) -> tuple[list[ReplayTest], Path | None]:
    """The tests of a suite file and the one configuration its lines name (or None)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise StellarError(f"{path}: cannot read the suite file: {exc}") from None
    tests, configs = [], set()
    for n, line in enumerate(lines, 1):
        if line.strip():
            test, config = _suite_line(line, f"{path} line {n}")
            tests.append(test)
            if config:
                configs.add(config)
    config = Path(configs.pop()) if len(configs) == 1 else None  # else --config decides
    if config is not None and not config.is_absolute():
        config = path.parent / config
    return tests, config


def _suite_line(line: str, where: str) -> tuple[ReplayTest, str | None]:
    try:
        item = Cleaner()(json.loads(line))  # no NULs, no lone surrogates
    except (ValueError, RecursionError) as exc:
        raise StellarError(f"{where}: not JSON ({exc})") from None
    if not isinstance(item, dict):
        raise StellarError(f"{where}: expected a JSON object")
    text, candidate, failed = item.get("input"), item.get("candidate"), item.get("failed", True)
    if not isinstance(text, str) or not text.strip():
        raise StellarError(f"{where}: 'input' must be a non-empty text")
    if not isinstance(candidate, dict):
        raise StellarError(f"{where}: 'candidate' must be a mapping of feature values")
    if failed is not None and not isinstance(failed, bool):
        raise StellarError(f"{where}: 'failed' must be true, false or null")
    config = item.get("config")
    if config is not None and not isinstance(config, str):
        raise StellarError(f"{where}: 'config' must be a path")
    vector = item.get("vector")
    if vector is not None and not (
        isinstance(vector, list) and all(isinstance(x, int | float) for x in vector)
    ):
        raise StellarError(f"{where}: 'vector' must be a list of numbers")
    test_id = item.get("test_id")
    scores = item.get("scores")
    plan = item.get(PLAN_KEY)
    if plan is not None and not (isinstance(plan, dict) and isinstance(plan.get("turns"), list)):
        raise StellarError(f"{where}: '{PLAN_KEY}' must be a conversation plan with 'turns'")
    return ReplayTest(
        text=text,
        candidate=candidate,
        vector=vector,
        prompt=item.get("prompt") if isinstance(item.get("prompt"), str) else None,
        failed=failed,
        source_id=test_id if isinstance(test_id, int) else None,
        scores=scores if isinstance(scores, dict) else {},
        plan=plan,
    ), config
