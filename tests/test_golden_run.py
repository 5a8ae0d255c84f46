"""The default run is reproducible: seed 0, 200 tests give the archive recorded in the fixture.

Re-record a fixture (see ``record()`` below) only for a deliberate change of behaviour, and
say so in the commit. The float fixture was recorded before the package was reshaped around
plugins and still holds with the paper's NSGA-II and the float sentence model; the default
one was recorded when the duplicate filter and the assistant moved to the model with 8-bit
weights (issue 27) and navi's default search to mode-balanced (issue 30).
"""

import gzip
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

from conftest import FIXTURES, stellar

GOLDEN = FIXTURES / "golden" / "navi-seed0-200.jsonl.gz"
FLOAT = FIXTURES / "golden" / "navi-seed0-200-float.jsonl.gz"
FLOAT_NSGA2 = (
    "--algorithm",
    "stellar",
    "--set",
    "duplicates.embedder=minilm",
    "--set",
    "sut.embedder=minilm",
)


def rows(archive: Path) -> list[str]:
    """The comparable content of every archived test, in candidate order."""
    db = sqlite3.connect(archive)
    db.row_factory = sqlite3.Row
    out = []
    for r in db.execute('SELECT * FROM tests ORDER BY generation, "index"'):
        row = {
            "generation": r["generation"],
            "index": r["index"],
            "candidate": json.loads(r["candidate"]),
            "input": r["input_text"],
            "answer": r["response_text"],
            "data": hashlib.sha256((r["response_data"] or "").encode()).hexdigest()[:16],
            "scores": json.loads(r["scores"]),
            "failed": r["failed"],
            "excluded": r["excluded"],
            "status": r["status"],
        }
        out.append(json.dumps(row, sort_keys=True))
    db.close()
    return out


def test_default_run_gives_the_recorded_archive(tmp_path):
    assert_recorded(tmp_path, GOLDEN)


def test_nsga2_and_the_float_model_give_the_archive_recorded_before_either_changed(tmp_path):
    assert_recorded(tmp_path, FLOAT, *FLOAT_NSGA2)


def assert_recorded(tmp_path: Path, fixture: Path, *settings: str) -> None:
    options = ("--seed", "0", "--tests", "200", "--quiet", "--out", tmp_path)
    result = stellar("run", *options, *settings)
    assert result.returncode == 0, result.stderr
    [archive] = tmp_path.glob("*/archive.sqlite")
    expected = gzip.decompress(fixture.read_bytes()).decode().splitlines()
    got = rows(archive)
    assert len(got) == len(expected)
    first = next((i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b), None)
    assert first is None, f"row {first} differs:\n{got[first]}\n{expected[first]}"


def record(archive: str) -> None:
    """python tests/test_golden_run.py RUN_DIR/archive.sqlite: write a new fixture."""
    GOLDEN.write_bytes(gzip.compress(("\n".join(rows(Path(archive))) + "\n").encode()))


if __name__ == "__main__":
    record(sys.argv[1])
