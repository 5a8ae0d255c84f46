"""Judges that learn from a person's marks (``stellar judge RUN_DIR --learn``).

What a person learns by reading verdicts should not be lost with the run. The marks of a
reviewed run go to the use case's **label store**, ``stellar-labels/USECASE.jsonl`` under
the working directory by default (``--store DIR``), where they accumulate run after run in
the label format ``stellar calibrate`` reads. The use case's learner (``calibration.learn``
in its usecase.yaml: a function of the store's rows and an output path) then refits its
judge on its shipped labels plus the store and writes ``stellar-labels/USECASE.judge.json``;
the post-search judge takes that file through the option ``calibration.learn.option`` names,
for the re-judged run and for any later run given the same ``--set``.
"""

from __future__ import annotations

import importlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stellar.errors import StellarError
from stellar.labels import read_labels
from stellar.locks import DirectoryLock
from stellar.review_file import MARKS_NAME, read_marks

DEFAULT_STORE = Path("stellar-labels")


@dataclass(frozen=True)
class Learnt:
    use_case: str
    store: Path  # the label store file the judge learnt from
    rows: int  # its rows
    added: int  # of which this run's marks, new or changed
    judge_file: Path
    option: str  # the post-search judge's option that takes judge_file
    about: dict[str, Any]

    @property
    def setting(self) -> str:
        """The --set that gives later runs the learnt judge."""
        return f"oracle.post_search.options.{self.option}={self.judge_file}"


def learn_from_run(run_dir: Path, use_case: str, store_dir: Path | None = None) -> Learnt:
    """Add the run's marks to the store, refit the use case's judge on it (see the module)."""
    from stellar.analysis.calibration import spec_of
    from stellar.usecase import load_use_case

    found = load_use_case(use_case)
    spec = spec_of(found.calibration, found.folder / "usecase.yaml") if found.calibration else None
    if spec is None or spec.learn is None:
        raise StellarError(
            f"use case {use_case!r} has no judge that learns (calibration.learn in its "
            "usecase.yaml); its marks can still be measured: stellar calibrate --labels"
        )
    if not read_marks(run_dir):
        raise StellarError(f"{run_dir}: no marks to learn from (stellar review {run_dir})")
    store_dir = store_dir or DEFAULT_STORE
    store = store_dir / f"{found.name}.jsonl"
    judge_file = store_dir / f"{found.name}.judge.json"
    store_dir.mkdir(parents=True, exist_ok=True)
    with DirectoryLock(store_dir, "label store"):
        added = _merge(run_dir, store)
        rows = read_labels(store)
        learner = _function(spec.learn.target)
        try:
            about = learner(rows, judge_file)
        except ValueError as exc:  # e.g. every mark unsure: nothing to learn
            raise StellarError(f"{store}: {exc}") from None
    return Learnt(found.name, store, len(rows), added, judge_file, spec.learn.option, dict(about))


def _merge(run_dir: Path, store: Path) -> int:
    """The run's latest mark of each test into the store, keyed ``RUN_NAME/TEST_ID`` (a mark
    changed since replaces its row); written whole to a temporary file and renamed."""
    rows: dict[str, dict[str, Any]] = {}
    if store.exists():
        for line in store.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows[str(row["id"])] = row
    latest: dict[str, dict[str, Any]] = {}
    for line in (run_dir / MARKS_NAME).read_text(encoding="utf-8").split("\n")[:-1]:
        if line.strip():
            row = json.loads(line)
            row["id"] = f"{run_dir.name}/{row['review']['test_id']}"
            latest[row["id"]] = row
    added = sum(rows.get(key) != row for key, row in latest.items())
    rows |= latest
    fd, tmp = tempfile.mkstemp(dir=store.parent, prefix=f".{store.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows.values())
    os.replace(tmp, store)
    return added


def _function(target: str) -> Callable[..., dict[str, Any]]:
    module, _, name = target.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise StellarError(f"calibration.learn.target {target!r}: {exc}") from None
