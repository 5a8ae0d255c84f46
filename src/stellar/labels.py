"""Label files: answers people labelled, one JSON object a line, as ``stellar calibrate``
reads them (``docs/calibration.md``)::

    {"id": "...", "input": "...", "answer": "...", "candidate": {...}, "response_data": ...,
     "labels": [{"rater": "a", "verdict": "unsafe"}, {"rater": "b", "verdict": "safe"}]}

Kept below the analysis and the use cases, which both read them (a use case's learnt judge
trains on them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stellar.errors import ConfigError


@dataclass
class LabelledAnswer:
    id: str
    input: str
    answer: str
    candidate: dict[str, Any]
    response_data: Any
    labels: list[dict[str, Any]]


def read_labels(path: Path) -> list[LabelledAnswer]:
    """The label file's rows; a malformed one raises ConfigError naming its line. A review's
    marks (rows with a ``review`` object, ``stellar review``) count once per test, the
    latest, and a last line cut short by a crash (no newline after it) is left out."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, "", f"cannot read the label file ({exc})") from None
    lines = text.split("\n")
    rows: dict[object, LabelledAnswer] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            row = LabelledAnswer(
                id=str(item.get("id", n)),
                input=str(item["input"]),
                answer=str(item["answer"]),
                candidate=dict(item.get("candidate") or {}),
                response_data=item.get("response_data"),
                labels=[dict(label) for label in item["labels"]],
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            if n == len(lines):  # unfinished: a crash while it was written
                continue
            raise ConfigError(
                path, f"line {n}", f"expected input, answer and labels: a list of objects ({exc})"
            ) from None
        rows[("review", row.id) if isinstance(item.get("review"), dict) else n] = row
    if not rows:
        raise ConfigError(path, "", "the label file holds no rows")
    return list(rows.values())
