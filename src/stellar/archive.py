"""The archive: one SQLite file per run (WAL), one row per test, committed as it completes
(rows that complete in the same turn of the event loop share a commit)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import asdict, fields, is_dataclass
from pathlib import Path
from typing import Any

from stellar.errors import StellarError
from stellar.records import Status, TestRecord, Verdict
from stellar.rundir import ARCHIVE_NAME
from stellar.untrusted import Cleaner

JSON_COLUMNS = ("candidate", "vector", "response_data", "scores", "details", "usage")
COLUMNS = [f.name for f in fields(TestRecord) if f.name not in ("verdict", "review")]
_QUOTED = ", ".join(f'"{c}"' for c in COLUMNS)  # "index" is an SQL keyword
VERDICT_COLUMNS = [f.name for f in fields(Verdict)]
VERDICT_JSON = ("scores", "details", "usage")

# The post-search judge's verdicts sit beside the tests they judge; where a test has one, it
# decides whether the test is a failure (the search's own scores are kept). Rows are never
# deleted, so ids grow without AUTOINCREMENT's extra table write per commit (0.03-0.05 ms).
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS tests (
    id INTEGER PRIMARY KEY,
    {_QUOTED}
);
CREATE INDEX IF NOT EXISTS tests_status ON tests(status);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS verdicts (
    test_id INTEGER PRIMARY KEY REFERENCES tests(id),
    {", ".join(VERDICT_COLUMNS)}
);
CREATE TABLE IF NOT EXISTS modes (
    generation INTEGER, "index" INTEGER, mode INTEGER, PRIMARY KEY (generation, "index")
);
DROP VIEW IF EXISTS failures;
CREATE VIEW failures AS
    SELECT tests.* FROM tests LEFT JOIN verdicts ON verdicts.test_id = tests.id
    WHERE tests.status = 'ok' AND verdicts.error IS NULL
      AND COALESCE(verdicts.failed, tests.failed) = 1
      AND COALESCE(verdicts.excluded, tests.excluded) = 0;
"""
# what `clean` removes, raw or as json.dumps escapes it (a false alarm only costs a `clean`)
_UNCLEAN_RAW = re.compile(r"[\x00\ud800-\udfff]")
_UNCLEAN_ESCAPED = re.compile(r"\\u(?:0000|d[89a-f])")
SQLITE_HEADER = b"SQLite format 3\x00"
# what a run's archive must hold to be read (tables and their columns; the view for reading)
_TABLES = {"tests": ["id", *COLUMNS], "meta": ["key", "value"]}
_OPTIONAL_TABLES = {  # archives written before these existed
    "verdicts": ["test_id", *VERDICT_COLUMNS],
    "modes": ["generation", "index", "mode"],
}
_INSERT = f"INSERT INTO tests ({_QUOTED}) VALUES ({', '.join('?' for _ in COLUMNS)})"
_JOINED = ", ".join(f'verdicts."{c}" AS "verdict_{c}"' for c in VERDICT_COLUMNS)


class Archive:
    """Append-only store of TestRecords, committed as they are added (see :meth:`add`)."""

    def __init__(
        self, path: Path, readonly: bool = False, reviews: Mapping[int, str] | None = None
    ) -> None:
        self.path = Path(path)
        self.reviews = reviews or {}  # a person's mark of each test id (stellar.review)
        if readonly:
            if not self.path.exists():
                raise StellarError(f"{self.path}: no archive here")
            check_archive(self.path, reading=True)
            self.db = sqlite3.connect(_read_only(self.path), uri=True)
        else:
            if self.path.exists() or self.path.is_symlink():  # a resume or a judge: check it
                check_archive(self.path)
            try:
                self.db = sqlite3.connect(self.path)
                self.db.execute("PRAGMA journal_mode=WAL")
                # a commit survives the process being killed; only a power cut may lose the last
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.executescript(_SCHEMA)
            except sqlite3.Error as exc:  # a read-only file or folder, a full disk
                raise StellarError(f"{self.path}: cannot be opened for writing ({exc})") from None
        self.db.row_factory = sqlite3.Row
        self._commit_due = False  # rows added in this turn of the event loop await a commit
        self._broken: sqlite3.Error | None = None  # a commit that failed

    def close(self) -> None:
        try:
            if self._commit_due:
                self._commit_due = False
                self.db.commit()
        finally:
            self.db.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, record: TestRecord) -> int:
        """Store ``record`` (its text cleaned in place first, see :mod:`stellar.untrusted`).

        Inside a running event loop the row is committed at the start of the loop's next
        turn, with every other row added in the same turn (one commit for a burst of tests
        that complete together); elsewhere at once."""
        row = _row(record)
        if any(isinstance(value, str) and _unclean(value) for value in row.values()):
            clean(record)  # rare; the search alone costs a tenth of the cleaning
            row = _row(record)
        if self._broken is not None:
            raise self._broken
        cur = self.db.execute(_INSERT, [row[c] for c in COLUMNS])
        if not self._commit_due:
            try:
                asyncio.get_running_loop().call_soon(self._commit_turn)
                self._commit_due = True
            except RuntimeError:  # no loop runs
                self.db.commit()
        return int(cur.lastrowid or 0)

    def _commit_turn(self) -> None:
        """Commit the rows of the last turn. Where that fails (a full disk), every later
        ``add`` raises the error, which stops the run; a resume runs the lost rows again."""
        if not self._commit_due:
            return  # closed since
        self._commit_due = False
        try:
            self.db.commit()
        except sqlite3.Error as exc:
            self._broken = exc
            with contextlib.suppress(sqlite3.Error):
                self.db.rollback()

    def set_meta(self, **values: Any) -> None:
        with self._archive_error("written"), self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(k, json.dumps(v, default=str)) for k, v in values.items()],
            )

    def meta(self) -> dict[str, Any]:
        with self._archive_error("read"):
            return {r["key"]: json.loads(r["value"]) for r in self.db.execute("SELECT * FROM meta")}

    def records(self, failures_only: bool = False) -> Iterator[TestRecord]:
        for _, record in self.numbered(failures_only):
            yield record

    def numbered(self, failures_only: bool = False) -> Iterator[tuple[int, TestRecord]]:
        """(archive id, record) in the order the tests were added."""
        table = "failures" if failures_only else "tests"
        if self._has_verdicts():
            query = (
                f"SELECT {table}.*, {_JOINED} FROM {table} "
                f"LEFT JOIN verdicts ON verdicts.test_id = {table}.id ORDER BY {table}.id"
            )
        else:  # an archive written before verdicts existed, opened read-only
            query = f"SELECT * FROM {table} ORDER BY id"
        with self._archive_error("read"):
            for row in self.db.execute(query):
                record = _record(row)
                record.review = self.reviews.get(row["id"])
                if failures_only and record.reviewed_false_alarm:
                    continue
                yield row["id"], record

    @contextlib.contextmanager
    def _archive_error(self, verb: str) -> Iterator[None]:
        """A row that cannot be read or written (a damaged page, a value no record takes)
        is a StellarError naming the archive, not a traceback."""
        try:
            yield
        except (sqlite3.DatabaseError, ValueError, TypeError, KeyError) as exc:
            raise StellarError(f"{self.path}: cannot be {verb} ({exc})") from None

    def add_verdict(self, test_id: int, verdict: Verdict) -> None:
        """Store (or replace) the post-search judge's verdict on test ``test_id``."""
        cleaner = Cleaner()
        row = cleaner(asdict(verdict))
        for key in VERDICT_JSON:
            row[key] = json.dumps(row[key], default=str)
        with self._archive_error("written"), self.db:
            self.db.execute(
                f"INSERT OR REPLACE INTO verdicts (test_id, {', '.join(VERDICT_COLUMNS)}) "
                f"VALUES (?, {', '.join('?' for _ in VERDICT_COLUMNS)})",
                [test_id, *(row[c] for c in VERDICT_COLUMNS)],
            )

    def set_modes(self, modes: dict[tuple[int, int], int]) -> None:
        """Store the failure mode (:mod:`stellar.modes`) of tests by (generation, index)."""
        with self._archive_error("written"), self.db:
            self.db.executemany(
                'INSERT OR REPLACE INTO modes (generation, "index", mode) VALUES (?, ?, ?)',
                [(g, i, m) for (g, i), m in modes.items()],
            )

    def modes(self) -> dict[tuple[int, int], int]:
        """The failure mode the run assigned to each failing test, by (generation, index)."""
        if not self._has_table("modes"):
            return {}
        with self._archive_error("read"):
            rows = self.db.execute('SELECT generation, "index", mode FROM modes')
            return {(g, i): m for g, i, m in rows}

    def clear_verdicts(self) -> None:
        """Forget every post-search verdict (to judge the run again from scratch)."""
        with self._archive_error("written"), self.db:
            self.db.execute("DELETE FROM verdicts")

    def unjudged(self) -> list[tuple[int, TestRecord]]:
        """Tests the post-search judge still has to score: scored by the search, and with
        no verdict or one that ended in an error."""
        return [(test_id, record) for test_id, record in self.numbered() if record.awaits_verdict]

    def _has_verdicts(self) -> bool:
        return self._has_table("verdicts")

    def _has_table(self, name: str) -> bool:
        query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        return self.db.execute(query, (name,)).fetchone() is not None

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Status}
        with self._archive_error("read"):
            query = "SELECT status, COUNT(*) FROM tests GROUP BY status"
            for status, n in self.db.execute(query):
                out[status] = n
            out["failures"] = self.db.execute("SELECT COUNT(*) FROM failures").fetchone()[0]
        return out


def _plain(value: Any) -> Any:
    """JSON for what ``json`` cannot write: dataclasses as objects, the rest as text."""
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else str(value)


_TO_JSON = json.JSONEncoder(default=_plain).encode  # json.dumps(..., default=_plain), built once


def _row(record: TestRecord) -> dict[str, Any]:
    row = {column: getattr(record, column) for column in COLUMNS}
    for key in JSON_COLUMNS:
        row[key] = _TO_JSON(row[key])
    row["status"] = str(record.status)
    return row


def _unclean(text: str) -> bool:
    """Whether ``text`` holds what `clean` removes: the regular expressions run only where
    a cheap test cannot rule it out (5 against 25 us a record)."""
    if text.isascii():  # a flag of the string: no scan
        if "\x00" in text:
            return True
    elif _UNCLEAN_RAW.search(text):
        return True
    return "\\u" in text and _UNCLEAN_ESCAPED.search(text) is not None


def clean(record: TestRecord) -> None:
    """Remove NULs and invalid code points from every text of ``record``, noting the counts
    in its details (``stored_text``)."""
    cleaner = Cleaner()
    for name in ("input_text", "prompt", "response_text", "error"):
        value = getattr(record, name)
        if value is not None:
            setattr(record, name, cleaner(value))
    for name in ("candidate", "response_data", "scores", "details", "usage"):
        setattr(record, name, cleaner(getattr(record, name)))
    if changes := cleaner.report():
        record.details.setdefault("stored_text", {}).update(changes)


def _record(row: sqlite3.Row) -> TestRecord:
    data = {c: row[c] for c in COLUMNS}
    for key in JSON_COLUMNS:
        data[key] = json.loads(data[key]) if data[key] is not None else None
    data["status"] = Status(data["status"])
    data["excluded"] = bool(data["excluded"])
    data["failed"] = None if data["failed"] is None else bool(data["failed"])
    record = TestRecord(**data)
    # a Row's `in` looks at its values, not its column names
    if "verdict_failed" in row.keys() and row["verdict_scores"] is not None:  # noqa: SIM118
        found = {c: row[f"verdict_{c}"] for c in VERDICT_COLUMNS}
        for key in VERDICT_JSON:
            found[key] = json.loads(found[key])
        found["excluded"] = bool(found["excluded"])
        found["failed"] = None if found["failed"] is None else bool(found["failed"])
        record.verdict = Verdict(**found)
    return record


def check_archive(path: Path, reading: bool = False) -> None:
    """Refuse what is not a run's archive (a folder, an empty, truncated or foreign file, a
    database without the archive's tables): a StellarError naming the file, in one line.
    ``reading``: it is opened read-only, so its ``failures`` view must exist too."""
    if path.is_dir():
        raise StellarError(f"{path}: a folder, not a run's archive")
    problem = _file_problem(path) or _schema_problem(path, reading)
    if problem:
        raise StellarError(f"{path}: not a usable run archive ({problem})")


def _file_problem(path: Path) -> str | None:
    """What the file's first 100 bytes and its size say is wrong with it (None: nothing)."""
    try:
        with path.open("rb") as file:
            header = file.read(100)
        size = path.stat().st_size
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if not header:
        return "an empty file"
    if not header.startswith(SQLITE_HEADER) or len(header) < 100:
        return "not an SQLite database"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    valid = pages and header[24:28] == header[92:96]  # SQLite's rule for the stored size
    wal = path.with_name(path.name + "-wal")
    if valid and size < pages * page_size and not (wal.exists() and wal.stat().st_size):
        return f"truncated: {size:,} of {pages * page_size:,} bytes"
    return None


def _schema_problem(path: Path, reading: bool) -> str | None:
    """The archive's tables and columns that are missing (None: all there)."""
    try:
        db = sqlite3.connect(_read_only(path), uri=True)
        try:
            for table, columns in {**_TABLES, **_OPTIONAL_TABLES}.items():
                found = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                if not found and table in _OPTIONAL_TABLES:
                    continue
                if not found:
                    return f"no {table!r} table"
                if missing := [c for c in columns if c not in found]:
                    return f"table {table!r} lacks column {missing[0]!r}"
            view = "SELECT 1 FROM sqlite_master WHERE name = 'failures'"
            if reading and db.execute(view).fetchone() is None:
                return "no 'failures' view"
        finally:
            db.close()
    except sqlite3.Error as exc:
        return str(exc)
    return None


def _read_only(path: Path) -> str:
    """The URI that opens ``path`` read-only (any character in its name escaped)."""
    return f"{path.absolute().as_uri()}?mode=ro"


def open_run(run_dir: str | Path, reviewed: bool = True) -> Archive:
    """Open a finished or interrupted run's archive read-only; ``reviewed``: each record
    carries a person's mark from ``stellar review``, a false alarm excluded."""
    run_dir = Path(run_dir)
    path = run_dir / ARCHIVE_NAME
    if not path.exists():
        raise StellarError(f"{run_dir}: not a run directory (no {ARCHIVE_NAME})")
    reviews = {}
    if reviewed:
        from stellar.review_file import read_marks

        reviews = {test_id: mark.mark for test_id, mark in read_marks(run_dir).items()}
    return Archive(path, readonly=True, reviews=reviews)
