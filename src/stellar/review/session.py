"""One review of a run: its verdicts in queue order, the marks so far, and each new mark
written to ``review.jsonl`` before anyone is told it was saved.

The page (:mod:`stellar.review.server`) and ``stellar review --labels`` both go through a
``ReviewSession``, so a mark from a browser and one from a file are the same line. The
caller holds the run directory's lock for the session's life.
"""

from __future__ import annotations

import getpass
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from stellar.analysis.conversation_view import conversation_view
from stellar.analysis.html_page import cut
from stellar.analysis.reading import score_meanings, verdict_rules
from stellar.archive import open_run
from stellar.errors import StellarError
from stellar.records import TestRecord
from stellar.review.marks import (
    MARKS,
    Mark,
    append_marks,
    failure_label,
    label_row,
    read_marks,
)
from stellar.review.queue import QueueItem, precision_estimate, review_queue
from stellar.rundir import CONFIG_NAME, read_summary

TEXT_LIMIT = 20_000  # characters of an input, answer or transcript shown on the page
NOTE_LIMIT = 2_000  # characters of a note kept
PARTS = {
    "uncertain": "least certain first: its scores lie nearest the thresholds",
    "random": "random sample: its marks estimate the share of failures that are real",
}
MARK_WORDS = {"real": "real", "false_alarm": "false alarm", "unsure": "unsure"}


def default_reviewer() -> str:
    """The OS user's name, or ``reviewer`` when the OS does not say."""
    try:
        return getpass.getuser() or "reviewer"
    except (OSError, KeyError):
        return "reviewer"


def run_config(run_dir: Path) -> dict[str, Any]:
    """The run's ``config.yaml`` as a mapping ({} when missing or unreadable)."""
    try:
        config = yaml.safe_load((run_dir / CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return config if isinstance(config, dict) else {}


def thresholds_of(config: Mapping[str, Any]) -> dict[str, float]:
    """The oracle's ``below`` thresholds, the scores under which a test fails."""
    below = (config.get("oracle") or {}).get("below") or {}
    if not isinstance(below, Mapping):
        return {}
    return {str(k): float(v) for k, v in below.items() if isinstance(v, int | float)}


class ReviewSession:
    """A run's review queue and marks; :meth:`mark` is safe to call from several threads."""

    def __init__(self, run_dir: Path, reviewer: str | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.reviewer = reviewer or default_reviewer()
        config = run_config(self.run_dir)
        self.thresholds = thresholds_of(config)
        sources = (read_summary(self.run_dir).get("post_search") or {}).get("sources")
        self.reading = {"rules": verdict_rules(config, sources), "scores": score_meanings(config)}
        self.failure = failure_label(str(config.get("use_case") or config.get("name") or ""))
        with open_run(self.run_dir, reviewed=False) as archive:
            self.records: dict[int, TestRecord] = dict(archive.numbered())
        self.queue: list[QueueItem] = review_queue(list(self.records.items()), self.thresholds)
        self.parts = {item.test_id: item.sample for item in self.queue}
        self.marks: dict[int, Mark] = read_marks(self.run_dir)
        self._writing = threading.Lock()
        self._ended = False

    @property
    def verdicts(self) -> int:
        """The run's verdicts a person can mark (judged, not excluded by the judge)."""
        return sum(r.judged and not r.judge_excluded for r in self.records.values())

    @property
    def failures(self) -> int:
        return sum(r.judge_failure for r in self.records.values())

    def mark(self, test_id: int, mark: str, note: str = "") -> Mark:
        """Write a person's mark of a queued verdict, synced to disk, and return it."""
        if test_id not in self.parts:
            raise StellarError(f"test {test_id} is not in the review queue")
        if mark not in MARKS:
            raise StellarError(f"mark {mark!r} is not one of {', '.join(MARKS)}")
        record = self.records[test_id]
        made = Mark(
            test_id=test_id,
            mark=mark,  # type: ignore[arg-type]  # checked against MARKS above
            failed=record.judge_failure,
            note=note.strip()[:NOTE_LIMIT],
            sample=self.parts[test_id],
            reviewer=self.reviewer,
            at=time.time(),
        )
        with self._writing:
            if self._ended:
                raise StellarError("the review has ended: start stellar review again")
            append_marks(self.run_dir, [label_row(record, made, self.failure)])
            self.marks[test_id] = made
        return made

    def end(self) -> None:
        """Refuse marks from now on, once a mark being written is on disk."""
        with self._writing:
            self._ended = True

    def add(self, marks: list[Mark]) -> None:
        """Append checked marks (``import_marks``'s) in one synced write."""
        rows = [label_row(self.records[m.test_id], m, self.failure) for m in marks]
        with self._writing:
            append_marks(self.run_dir, rows)
            self.marks.update({m.test_id: m for m in marks})

    def counts(self) -> dict[str, int]:
        """Marks so far by kind, and of how many verdicts."""
        kinds = {name: sum(m.mark == name for m in self.marks.values()) for name in MARKS}
        return kinds | {"marked": len(self.marks), "verdicts": self.verdicts}

    def summary(self) -> list[str]:
        """What the review has said so far, as lines for the terminal."""
        c = self.counts()
        words = ", ".join(f"{c[name]} {MARK_WORDS[name]}" for name in MARKS)
        return [
            f"review: {c['marked']} marked of {c['verdicts']} verdicts ({words}); "
            f"{len(self.queue)} in the review queue",
            precision_estimate(self.marks).line(self.failures),
        ]

    def page_data(self) -> dict[str, Any]:
        """What the review page shows: every queued verdict with its texts and mark."""
        return {
            "title": f"STELLAR review: {self.run_dir.name}",
            "reviewer": self.reviewer,
            "parts": PARTS,
            "reading": self.reading,
            "items": [self.item(q) for q in self.queue],
        }

    def item(self, queued: QueueItem) -> dict[str, Any]:
        record = self.records[queued.test_id]
        view = conversation_view(record)
        mark = self.marks.get(queued.test_id)
        return {
            "id": queued.test_id,
            "sample": queued.sample,
            "failed": queued.failed,
            "input": cut(record.input_text, TEXT_LIMIT),
            "answer": cut(view or record.response_text, TEXT_LIMIT),
            "conversation": view is not None,
            "reason": reason_of(record),
            "scores": self.scores_of(record),
            "mark": mark.mark if mark else None,
            "note": mark.note if mark else "",
        }

    def scores_of(self, record: TestRecord) -> str:
        """``response 0.72 (fails below 0.75), content 0.00 (fails below 0.75)``, and the
        post-search judge's scores where it scored the test."""
        parts = []
        for name, value in record.scores.items():
            if isinstance(value, int | float) and value == value:
                below = self.thresholds.get(name)
                parts.append(f"{name} {value:.2f}" + (f" (fails below {below})" if below else ""))
        text = ", ".join(parts)
        if record.verdict is not None and record.verdict.scores:
            after = ", ".join(
                f"{k} {v:.2f}"
                for k, v in record.verdict.scores.items()
                if isinstance(v, int | float)
            )
            text = f"{text}; after the search: {after}" if text else after
        return text


def reason_of(record: TestRecord) -> str:
    """The last judge's verdict and reason, as the report shows them."""
    details = record.verdict.details if record.verdict is not None else {}
    parts = [details.get("verdict"), details.get("reason") or record.details.get("reason")]
    return cut(": ".join(p for p in parts if isinstance(p, str) and p), TEXT_LIMIT)
