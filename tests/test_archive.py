"""The archive: rows committed per turn of the event loop, read back whole, counted, exported."""

import asyncio
import csv
import json
import re
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stellar.archive import Archive, _unclean, open_run
from stellar.errors import StellarError
from stellar.export import export_run
from stellar.records import Status, TestRecord
from stellar.rundir import ARCHIVE_NAME


def record(index: int, status: Status = Status.OK, failed: bool | None = False, **kw):
    return TestRecord(
        generation=0,
        index=index,
        seed=1,
        candidate={"colour": "red", "size": index},
        vector=[0.0, float(index)],
        input_text=f"input {index}",
        status=status,
        failed=failed,
        scores={"quality": 0.1 * index} if status == Status.OK else {},
        **kw,
    )


def test_rows_round_trip_and_failures_exclude_excluded_tests(tmp_path):
    with Archive(tmp_path / ARCHIVE_NAME) as archive:
        archive.add(record(0, failed=True, response_data={"items": [1, 2]}))
        archive.add(record(1, failed=True, excluded=True))
        archive.add(record(2, Status.SUT_ERROR, failed=None, error="timeout"))
        archive.add(record(3))
        archive.set_meta(seed=1, summary={"tests": 3})
    with open_run(tmp_path) as archive:
        rows = list(archive.records())
        assert [r.index for r in rows] == [0, 1, 2, 3]
        assert rows[0].candidate == {"colour": "red", "size": 0}
        assert rows[0].response_data == {"items": [1, 2]} and rows[2].error == "timeout"
        assert [r.index for r in archive.records(failures_only=True)] == [0]
        counts = archive.counts()
        assert counts["ok"] == 3 and counts["sut_error"] == 1 and counts["failures"] == 1
        assert archive.meta() == {"seed": 1, "summary": {"tests": 3}}


def test_open_run_refuses_a_folder_without_archive(tmp_path):
    with pytest.raises(StellarError, match="not a run directory"):
        open_run(tmp_path)


def test_export_writes_jsonl_and_csv_with_one_column_per_feature(tmp_path):
    with Archive(tmp_path / ARCHIVE_NAME) as archive:
        archive.add(record(0, failed=True))
        archive.add(record(1))
    files = export_run(tmp_path)
    assert sorted(p.name for p in files) == [
        "failures.csv",
        "failures.jsonl",
        "tests.csv",
        "tests.jsonl",
    ]
    lines = (tmp_path / "export" / "failures.jsonl").read_text().splitlines()
    assert [json.loads(line)["index"] for line in lines] == [0]
    with (tmp_path / "export" / "tests.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows[1]["feature.colour"] == "red" and rows[1]["score.quality"] == "0.1"


def visible(tmp_path) -> int:
    """Rows another process would see now."""
    with open_run(tmp_path) as reader:
        return reader.counts()["ok"]


def test_without_an_event_loop_every_row_is_committed_at_once(tmp_path):
    with Archive(tmp_path / ARCHIVE_NAME) as archive:
        archive.add(record(0))
        assert visible(tmp_path) == 1


async def test_rows_added_in_one_turn_of_the_loop_share_a_commit_at_its_end(tmp_path):
    with Archive(tmp_path / ARCHIVE_NAME) as archive:
        archive.add(record(0))
        archive.add(record(1))
        assert visible(tmp_path) == 0
        await asyncio.sleep(0)
        assert visible(tmp_path) == 2
        archive.add(record(2))
    assert visible(tmp_path) == 3  # close commits what is left


class FailingCommit:
    """A connection whose commits fail, as on a full disk."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __getattr__(self, name: str):
        return getattr(self.db, name)

    def commit(self) -> None:
        raise sqlite3.OperationalError("database or disk is full")


async def test_a_failed_commit_makes_every_later_add_raise(tmp_path):
    archive = Archive(tmp_path / ARCHIVE_NAME)
    archive.db = FailingCommit(archive.db)
    archive.add(record(0))
    await asyncio.sleep(0)
    with pytest.raises(sqlite3.OperationalError, match="disk is full"):
        archive.add(record(1))
    archive.db = archive.db.db
    archive.close()
    assert visible(tmp_path) == 0


# the unclean test as one regular expression: raw NUL or surrogate, or as json.dumps escapes them
UNCLEAN = re.compile(r"[\x00\ud800-\udfff]|\\u(?:0000|d[89a-f])")
PIECES = ["a", "é", "\x00", "\ud800", "\udfff", "\\", "u", "0", "d", "8", "f", "\\u0000", "\\ud83d"]


@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_the_quick_unclean_test_agrees_with_the_expression(text):
    assert _unclean(text) == bool(UNCLEAN.search(text))


@pytest.mark.parametrize(
    "where", [{"response_text": "nul \x00 here"}, {"details": {"note": "half \ud800 a pair"}}]
)
def test_unclean_text_is_cleaned_before_it_is_stored(tmp_path, where):
    with Archive(tmp_path / ARCHIVE_NAME) as archive:
        archive.add(record(1, **where))
        (stored,) = archive.records()
    assert "\x00" not in (stored.response_text or "")
    assert "\ud800" not in json.dumps(stored.details, ensure_ascii=False, default=str)
    assert stored.details["stored_text"]
