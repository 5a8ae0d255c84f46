"""Text from a system under test or a model, made safe to store: no NUL, valid code points.

SQLite and every file STELLAR writes need valid UTF-8; an answer may hold a lone UTF-16
surrogate (valid JSON: ``"\\ud800"``) or NUL bytes. Both are replaced before a record is
stored, and what was changed is said in the record's details.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def clean_text(text: str) -> tuple[str, int, int]:
    """``text`` without NULs and with lone surrogates replaced; the counts of both."""
    nuls = text.count("\x00")
    if nuls:
        text = text.replace("\x00", "")
    text, surrogates = _SURROGATE.subn(REPLACEMENT, text)
    return text, nuls, surrogates


class Cleaner:
    """Cleans strings anywhere in nested data (keys included) and tallies what it changed."""

    def __init__(self) -> None:
        self.nuls = self.surrogates = 0

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            text, nuls, surrogates = clean_text(value)
            self.nuls += nuls
            self.surrogates += surrogates
            return text
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        return value

    def report(self) -> dict[str, int]:
        """What was changed, for a record's details; empty when nothing was."""
        found = {"nul_removed": self.nuls, "invalid_code_points_replaced": self.surrogates}
        return {k: v for k, v in found.items() if v}
