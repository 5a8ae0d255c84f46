"""Text from a system under test or a model is untrusted: cleaned before it is stored,
escaped before people see it.

- Stored: SQLite and every file STELLAR writes need valid UTF-8, but an answer may hold a
  lone UTF-16 surrogate (valid JSON: ``"\\ud800"``) or NUL bytes; :class:`Cleaner` removes
  NULs and replaces lone surrogates, counting what it changed.
- Shown: :func:`for_terminal` strips what a terminal would obey instead of show (escape
  sequences, controls, bidi overrides); :func:`csv_cell` applies the OWASP rule against
  CSV injection to one cell; :func:`for_xml` keeps only what XML 1.0 can hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
REPLACEMENT = "\ufffd"

_ESCAPE = re.compile(
    r"""
      \x1b\[[0-?]*[ -/]*[@-~]                           # CSI: ESC [ params final
    | \x9b[0-?]*[ -/]*[@-~]                             # CSI, 8-bit
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])            # OSC, DCS, SOS, PM, APC strings ...
      [^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)              # ... up to BEL or ST
    | \x1b[ -/]*[0-~]                                   # any other ESC sequence
    """,
    re.VERBOSE,
)
# C0 controls but tab and newline, DEL, C1 controls, bidi overrides and isolates
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# what XML 1.0 forbids (C0 controls but tab, newline and CR; lone surrogates; U+FFFE, U+FFFF)
# or discourages (DEL, C1 controls)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def for_terminal(text: str) -> str:
    """``text`` without escape sequences, control characters (but newline and tab) and bidi
    overrides; lone surrogates become U+FFFD, so printing it never raises."""
    text = _CONTROL.sub("", _ESCAPE.sub("", text))
    return _SURROGATE.sub(REPLACEMENT, text)


def for_xml(text: str) -> str:
    """``text`` as XML 1.0 can hold it: escape sequences, the characters XML forbids or
    discourages and lone surrogates removed (markup is left to the XML writer to escape)."""
    return _NOT_XML.sub("", _ESCAPE.sub("", text))


def csv_cell(value: T) -> T | str:
    """A string a spreadsheet would read as a formula gets a leading ``'``; others as given."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def csv_rows(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Rows for ``csv.DictWriter.writerows``, every cell through :func:`csv_cell`."""
    for row in rows:
        yield {key: csv_cell(value) for key, value in row.items()}


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
