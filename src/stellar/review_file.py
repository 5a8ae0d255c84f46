"""The file of a person's marks on a run's verdicts, ``RUN_DIR/review.jsonl`` (written by
``stellar review``: :mod:`stellar.review`). Kept apart from the review package so that the
archive can apply the marks whenever a run is read: a false alarm is then excluded from
every count.

Each line is one mark, appended and synced before the reviewer hears it was saved; a later
mark of the same test replaces the earlier one when read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from stellar.errors import StellarError

MARKS_NAME = "review.jsonl"
MARKS = ("real", "false_alarm", "unsure")

MarkName = Literal["real", "false_alarm", "unsure"]


@dataclass(frozen=True)
class Mark:
    test_id: int
    mark: MarkName
    failed: bool  # the verdict the person marked: a failure or a pass
    note: str = ""
    sample: str = "random"  # where the review queue took it from
    reviewer: str = "reviewer"
    at: float = 0.0

    @property
    def is_failure(self) -> bool | None:
        """What the person says the test is: None when unsure."""
        if self.mark == "unsure":
            return None
        return self.failed if self.mark == "real" else not self.failed


def append_marks(run_dir: str | Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Append label rows to the run's marks file in one write, synced to disk (the caller
    holds the run directory's lock)."""
    data = "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows)
    path = Path(run_dir) / MARKS_NAME
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":  # a line cut short by a crash, never
            whole = os.pread(fd, size, 0)  # acknowledged to the reviewer: drop it
            os.ftruncate(fd, whole.rfind(b"\n") + 1)
        os.write(fd, data.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def read_marks(run_dir: str | Path) -> dict[int, Mark]:
    """The run's marks by archive test id, the latest of each test; {} when none. A line cut
    short by a crash (the last one, not ending in a newline) is skipped."""
    path = Path(run_dir) / MARKS_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise StellarError(f"{path}: cannot be read ({exc})") from None
    marks: dict[int, Mark] = {}
    lines = text.split("\n")
    for n, line in enumerate(lines[:-1], 1):  # the part after the last newline is unfinished
        if not line.strip():
            continue
        try:
            mark = mark_of(json.loads(line))
        except (ValueError, KeyError, TypeError) as exc:
            raise StellarError(f"{path}: line {n} is not a review mark ({exc})") from None
        marks[mark.test_id] = mark
    return marks


def mark_of(row: Mapping[str, Any]) -> Mark:
    """The mark of a marks-file line (ValueError, KeyError or TypeError when it is none)."""
    review = row["review"]
    if review["mark"] not in MARKS:
        raise ValueError(f"mark {review['mark']!r} is not one of {', '.join(MARKS)}")
    if review["verdict"] not in ("fail", "pass"):
        raise ValueError(f"verdict {review['verdict']!r} is not fail or pass")
    labels = row.get("labels") or [{}]
    return Mark(
        test_id=int(review["test_id"]),
        mark=review["mark"],
        failed=review["verdict"] == "fail",
        note=str(review.get("note") or ""),
        sample=str(review.get("sample") or "random"),
        reviewer=str(labels[0].get("rater") or "reviewer"),
        at=float(review.get("at") or 0.0),
    )


@dataclass(frozen=True)
class PrecisionEstimate:
    real: int  # failures of the random part marked real
    false_alarms: int
    unsure: int
    precision: float | None  # None before any failure of the random part is marked
    interval: tuple[float, float] | None  # Wilson 95%

    def line(self, failures: int) -> str:
        """'precision of the failures: 0.72 [0.55, 0.85] (18 real, 7 false alarms of 25
        reviewed at random; about 108 of 150 failures real)'."""
        if self.precision is None or self.interval is None:
            return (
                "precision of the failures: not estimated (no failure of the random sample marked)"
            )
        low, high = self.interval
        marked = self.real + self.false_alarms
        return (
            f"precision of the failures: {self.precision:.2f} [{low:.2f}, {high:.2f}] "
            f"({self.real} real, {self.false_alarms} false alarms of {marked} reviewed at "
            f"random; about {round(self.precision * failures)} of {failures} failures real)"
        )


def precision_estimate(marks: Mapping[int, Mark]) -> PrecisionEstimate:
    """The run's precision from the marks of failures drawn at random (see the module)."""
    from statsmodels.stats.proportion import proportion_confint

    sampled = [m for m in marks.values() if m.failed and m.sample == "random"]
    real = sum(m.mark == "real" for m in sampled)
    false_alarms = sum(m.mark == "false_alarm" for m in sampled)
    unsure = sum(m.mark == "unsure" for m in sampled)
    if real + false_alarms == 0:
        return PrecisionEstimate(real, false_alarms, unsure, None, None)
    low, high = proportion_confint(real, real + false_alarms, alpha=0.05, method="wilson")
    return PrecisionEstimate(
        real, false_alarms, unsure, real / (real + false_alarms), (float(low), float(high))
    )
