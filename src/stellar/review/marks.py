"""A person's marks on a run's verdicts, kept in the run directory as labels.

A reviewer marks a verdict *real* (the judge was right), *false alarm* (it was wrong) or
*unsure*, with an optional note. Each mark is one JSON line appended to
``RUN_DIR/review.jsonl`` and synced before the page hears it was saved, so a killed server
loses nothing; a later mark of the same test replaces the earlier one when read. A line is
in the label format of ``stellar calibrate`` (``docs/calibration.md``): the test's input,
answer and candidate, and a label whose failure verdict follows from the mark (a real
failure and a false-alarm pass are failures), so the same file teaches and measures the
judges. The ``review`` object beside it keeps what the person said about the verdict.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stellar.errors import StellarError
from stellar.records import TestRecord
from stellar.review_file import MARKS, MARKS_NAME, Mark, append_marks, mark_of, read_marks

__all__ = [
    "MARKS_NAME", "FailureLabel", "Mark", "append_marks", "failure_label", "import_marks",
    "label_row", "read_marks",
]  # fmt: skip

SAMPLES = ("uncertain", "random", "imported")
PASS_VALUE = "pass"  # a label value that is not the failure value
UNKNOWN = "unknown"  # calibrate's value for "no verdict"


@dataclass(frozen=True)
class FailureLabel:
    """Which label holds a verdict and which value means failure (the use case's
    ``calibration.failure``; ``verdict: fail`` for a use case without one)."""

    label: str = "verdict"
    value: str = "fail"


def failure_label(use_case: str) -> FailureLabel:
    """The run's use case's failure label, or the default when it declares none."""
    from stellar.usecase import load_use_case

    try:
        failure = load_use_case(use_case).calibration.get("failure") or {}
    except StellarError:
        failure = {}
    if isinstance(failure, Mapping) and failure.get("label") and failure.get("value"):
        return FailureLabel(str(failure["label"]), str(failure["value"]))
    return FailureLabel()


def label_row(record: TestRecord, mark: Mark, failure: FailureLabel) -> dict[str, Any]:
    """The mark as a line of the label format, with the review beside it."""
    truth = mark.is_failure
    value = UNKNOWN if truth is None else failure.value if truth else PASS_VALUE
    label: dict[str, Any] = {"rater": mark.reviewer, failure.label: value}
    if mark.note:
        label["note"] = mark.note
    return {
        "id": str(mark.test_id),
        "input": record.input_text or "",
        "answer": record.response_text or "",
        "candidate": record.candidate,
        "response_data": record.response_data,
        "labels": [label],
        "review": {
            "test_id": mark.test_id,
            "mark": mark.mark,
            "verdict": "fail" if mark.failed else "pass",
            "note": mark.note,
            "sample": mark.sample,
            "at": mark.at or time.time(),
        },
    }


def import_marks(run_dir: str | Path, path: Path, records: Mapping[int, TestRecord]) -> list[Mark]:
    """The marks of a file written by ``stellar review`` (or by hand in its format), each
    checked against the run's tests (``records``: by archive id). Any problem raises a
    StellarError naming the line, before anything is written."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise StellarError(f"{path}: cannot be read ({exc})") from None
    marks = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            mark = mark_of(json.loads(line))
        except (ValueError, KeyError, TypeError) as exc:
            raise StellarError(
                f"{path}: line {n} is not a review mark: expected a label row with a "
                f"'review' object holding test_id, mark ({', '.join(MARKS)}) and verdict "
                f"(fail or pass) ({exc})"
            ) from None
        record = records.get(mark.test_id)
        if record is None or not record.judged or record.judge_excluded:
            raise StellarError(f"{path}: line {n}: the run has no verdict of test {mark.test_id}")
        if mark.failed != record.judge_failure:
            said = "fail" if record.judge_failure else "pass"
            raise StellarError(
                f"{path}: line {n}: test {mark.test_id}'s verdict is {said}, the mark says "
                f"{'fail' if mark.failed else 'pass'}"
            )
        marks.append(mark)
    if not marks:
        raise StellarError(f"{path}: holds no marks")
    return marks
