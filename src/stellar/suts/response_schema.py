"""A use case's JSON Schema for the data its fitness reads from every answer.

A system under test whose answers carry that data in another shape would be scored wrong
without a word; checked per answer, such an answer becomes a ``sut_error`` that names the
field. (An HTTP reply without data at the mapped path is one too: see ``suts/http.py``.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from stellar.records import Response


class ResponseSchema:
    """Checks ``Response.data`` against a JSON Schema file."""

    def __init__(self, path: str | Path) -> None:
        schema = json.loads(Path(path).read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        self.validator = Draft202012Validator(schema)
        self.path = Path(path)

    def problem(self, response: Response) -> str | None:
        """Why the answer's data does not fit, or None when it does (or has none: a chat
        model answers in text only, and the fitness knows it)."""
        if response.data is None:
            return None
        error = next(iter(self.validator.iter_errors(response.data)), None)
        if error is None:
            return None
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
        return f"the answer's data does not fit {self.path.name} at data{where}: {_short(error)}"


def _short(error: Any) -> str:
    message = str(error.message)
    return message if len(message) <= 200 else message[:199] + "…"
