"""`stellar review RUN_DIR --labels FILE`: marks imported without a page, all or nothing; bad
input is one line and exit 2 with nothing written; the report shows the review."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli
from review_server import builtin_run

from stellar.review.marks import Mark, label_row, read_marks
from stellar.review.queue import precision_estimate
from stellar.review.session import ReviewSession


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return builtin_run(tmp_path_factory.mktemp("runs"))


@pytest.fixture
def run_dir(made, tmp_path):
    """A copy of the run for each test, so that marks never leak from one to another."""
    return Path(shutil.copytree(made, tmp_path / made.name))


def rows(run_dir: Path, marks: list[str], part: str = "random") -> list[dict]:
    """Label rows marking the first verdicts of the queue's ``part`` as ``marks`` say."""
    session = ReviewSession(run_dir, "ci")
    queued = [q for q in session.queue if q.sample == part]
    picked = zip(queued, marks, strict=False)
    made = [Mark(q.test_id, m, q.failed, "", q.sample, "ci") for q, m in picked]  # type: ignore[arg-type]
    return [label_row(session.records[m.test_id], m, session.failure) for m in made]


def write(path: Path, lines: list[dict | str]) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def report_data(run_dir: Path) -> dict:
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    [data] = re.findall(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    return json.loads(data)


def test_labels_are_imported_and_the_report_shows_the_review(run_dir, tmp_path):
    labels = write(
        tmp_path / "marks.jsonl", rows(run_dir, ["real", "false_alarm", "unsure", "real"])
    )
    result = cli("review", run_dir, "--labels", labels)
    assert result.returncode == 0, result.stderr
    marks = read_marks(run_dir)
    assert len(marks) == 4 and {m.reviewer for m in marks.values()} == {"ci"}
    from stellar.archive import open_run

    with open_run(run_dir, reviewed=False) as archive:
        failures = sum(r.judge_failure for r in archive.records())
    line = precision_estimate(marks).line(failures)
    assert "imported 4 marks" in result.stdout and line in result.stdout
    assert "review: 4 marked of" in result.stdout and "report:" in result.stdout
    review = report_data(run_dir)["review"]
    counts = dict(review["counts"])
    kinds = [m.mark for m in marks.values()]
    assert counts == {k: kinds.count(k) for k in ("real", "false_alarm", "unsure")}
    assert review["marked"] == 4 and review["precision"] == line
    tests = report_data(run_dir)["tests"]
    assert sum(mark >= 0 for mark in tests["review"]) == 4
    alarm = next(m for m in marks.values() if m.mark == "false_alarm")
    if alarm.failed:  # a failure a person rejected: excluded, and said why
        at = tests["review"].index(1)
        assert report_data(run_dir)["verdicts"][tests["verdict"][at]] == "excluded"
        assert tests["reason"][at].startswith("excluded: reviewed: false alarm")


def test_a_later_import_replaces_a_tests_mark(run_dir, tmp_path):
    first = rows(run_dir, ["real"])
    assert cli("review", run_dir, "--labels", write(tmp_path / "a.jsonl", first)).returncode == 0
    again = rows(run_dir, ["unsure"])
    assert cli("review", run_dir, "--labels", write(tmp_path / "b.jsonl", again)).returncode == 0
    [mark] = read_marks(run_dir).values()
    assert mark.mark == "unsure"


def bad_labels(run_dir: Path, tmp_path: Path, case: str) -> list[str]:
    """The arguments of ``stellar review`` for one kind of bad input."""
    good = rows(run_dir, ["real", "false_alarm"])
    row = json.loads(json.dumps(good[1]))
    if case == "not JSON":
        lines = [good[0], "this is not JSON"]
    elif case == "wrong shape":
        lines = [good[0], {"id": "1", "input": "x", "labels": [{"verdict": "fail"}]}]
    elif case == "a test the run does not have":
        row["review"]["test_id"] = 99_999
        lines = [good[0], row]
    elif case == "an unknown mark":
        row["review"]["mark"] = "maybe"
        lines = [good[0], row]
    elif case == "a verdict the run does not have":
        row["review"]["verdict"] = "pass" if row["review"]["verdict"] == "fail" else "fail"
        lines = [good[0], row]
    elif case == "an unknown verdict":
        row["review"]["verdict"] = "excluded"
        lines = [good[0], row]
    elif case == "no marks":
        lines = []
    elif case == "no such file":
        return ["review", str(run_dir), "--labels", str(tmp_path / "missing.jsonl")]
    elif case == "not a run directory":
        return ["review", str(tmp_path), "--labels", str(write(tmp_path / "m.jsonl", good))]
    elif case == "a port out of range":
        return ["review", str(run_dir), "--port", "70000"]
    else:
        raise AssertionError(case)
    return ["review", str(run_dir), "--labels", str(write(tmp_path / "marks.jsonl", lines))]


def state(run_dir: Path) -> dict[str, bytes]:
    """Every file of the run directory but its lock, as bytes."""
    return {p.name: p.read_bytes() for p in run_dir.iterdir() if p.name != ".lock"}


BAD = {  # the kind of bad input: what its one line says
    "not JSON": "line 2 is not a review mark",
    "wrong shape": "line 2 is not a review mark",
    "a test the run does not have": "line 2: the run has no verdict of test 99999",
    "an unknown mark": "mark 'maybe' is not one of",
    "a verdict the run does not have": "line 2: test ",
    "an unknown verdict": "verdict 'excluded' is not fail or pass",
    "no marks": "holds no marks",
    "no such file": "cannot be read",
    "not a run directory": "not a run directory",
    "a port out of range": "--port 70000",
}


@pytest.mark.parametrize("case", BAD)
def test_bad_input_is_one_line_exit_2_and_nothing_written(run_dir, tmp_path, case):
    cli("review", run_dir, "--labels", write(tmp_path / "earlier.jsonl", rows(run_dir, ["unsure"])))
    before = state(run_dir)
    args = bad_labels(run_dir, tmp_path, case)
    result = cli(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.startswith("stellar: error: ") and result.stderr.count("\n") == 1
    assert BAD[case] in result.stderr and result.stdout == ""
    assert state(run_dir) == before


def test_a_run_directory_held_by_another_process_is_refused(run_dir, tmp_path):
    labels = write(tmp_path / "marks.jsonl", rows(run_dir, ["real"]))
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from stellar.locks import DirectoryLock; "
         "DirectoryLock(sys.argv[1], 'run').acquire(); print('held', flush=True); time.sleep(60)",
         str(run_dir)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        before = state(run_dir)
        result = cli("review", run_dir, "--labels", labels)
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and f"pid {holder.pid}" in result.stderr
    assert state(run_dir) == before
