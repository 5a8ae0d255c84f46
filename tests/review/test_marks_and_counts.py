"""A person's marks: kept as labels that calibrate reads, a false alarm excluded from every
count (metrics, export, JUnit, replay's failures), the review order and the precision the
random sample's marks estimate."""

from __future__ import annotations

import json
import os

import pytest
from conftest import cli

from stellar.analysis.calibration import read_labels
from stellar.analysis.metrics import run_metrics
from stellar.archive import open_run
from stellar.errors import StellarError
from stellar.junit import junit_for_run
from stellar.records import REVIEWED_FALSE_ALARM, Status, TestRecord
from stellar.review.marks import (
    MARKS_NAME,
    FailureLabel,
    Mark,
    append_marks,
    import_marks,
    label_row,
    read_marks,
)
from stellar.review.queue import margin, precision_estimate, review_queue
from stellar.suite import read_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    result = cli("run", "--tests", "40", "--out", out, "--quiet", "--show", "0")
    assert result.returncode == 0, result.stderr
    [found] = list(out.iterdir())
    return found


def numbered(run_dir) -> dict[int, TestRecord]:
    with open_run(run_dir) as archive:
        return dict(archive.numbered())


def record(failed: bool, score: float) -> TestRecord:
    return TestRecord(0, 0, 0, {}, [], status=Status.OK, scores={"q": score}, failed=failed)


def test_a_false_alarm_leaves_every_count(run_dir, tmp_path):
    before = numbered(run_dir)
    failing = [i for i, r in before.items() if r.is_failure]
    assert len(failing) >= 2
    rejected, confirmed = failing[:2]
    metrics_before = run_metrics(run_dir)
    rows = [
        label_row(before[rejected], Mark(rejected, "false_alarm", True), FailureLabel()),
        label_row(before[confirmed], Mark(confirmed, "real", True), FailureLabel()),
    ]
    append_marks(run_dir, rows)
    try:
        after = numbered(run_dir)
        assert not after[rejected].is_failure and after[rejected].final_excluded
        assert after[rejected].exclusion_reason == REVIEWED_FALSE_ALARM
        assert after[confirmed].is_failure and after[confirmed].review == "real"
        assert run_metrics(run_dir).failures == metrics_before.failures - 1
        with open_run(run_dir) as archive:
            assert rejected not in dict(archive.numbered(failures_only=True))
        with open_run(run_dir, reviewed=False) as archive:  # what the search saw
            assert dict(archive.numbered())[rejected].is_failure
        assert len(read_run(run_dir, failures_only=True)) == len(failing) - 1  # replay's
        xml = junit_for_run(run_dir, tmp_path / "junit.xml").read_text()
        assert f'message="excluded: {REVIEWED_FALSE_ALARM}"' in xml
    finally:
        (run_dir / MARKS_NAME).unlink()


def test_marks_are_labels_calibrate_reads_and_the_latest_wins(tmp_path):
    r = record(True, 0.1)
    r.input_text, r.response_text = "find a bar", "here is a museum"
    failure = FailureLabel("overall", "fail")
    append_marks(tmp_path, [label_row(r, Mark(7, "real", True, note="wrong kind"), failure)])
    append_marks(tmp_path, [label_row(r, Mark(7, "false_alarm", True), failure)])
    append_marks(tmp_path, [label_row(r, Mark(8, "unsure", False), failure)])
    rows = read_labels(tmp_path / MARKS_NAME)  # test 7 once: its latest mark
    assert [(row.id, row.labels[0]["overall"]) for row in rows] == [("7", "pass"), ("8", "unknown")]
    assert rows[0].answer == "here is a museum"
    marks = read_marks(tmp_path)
    assert marks[7].mark == "false_alarm" and marks[7].is_failure is False
    assert marks[8].is_failure is None
    # a line cut short by a crash is not read; the marks before it are
    with open(tmp_path / MARKS_NAME, "a", encoding="utf-8") as fh:
        fh.write('{"review": {"test_id": 9, "ma')
    assert set(read_marks(tmp_path)) == {7, 8}
    assert len(read_labels(tmp_path / MARKS_NAME)) == 2
    # the next mark drops the cut line first (it was never saved), so the file stays readable
    append_marks(tmp_path, [label_row(r, Mark(9, "real", True, note="again"), failure)])
    assert set(read_marks(tmp_path)) == {7, 8, 9}
    assert read_labels(tmp_path / MARKS_NAME)[-1].labels[0]["note"] == "again"


def test_the_queue_puts_the_least_certain_first_then_a_random_sample():
    scores = {1: 0.49, 2: 0.0, 3: 0.9, 4: 0.52, 5: 0.1, 6: 0.2, 7: 0.95, 8: 0.8}
    runs = [(i, record(s < 0.5, s)) for i, s in scores.items()]
    queue = review_queue(runs, {"q": 0.5}, uncertain=2, passes=2)
    assert [(q.test_id, q.sample) for q in queue[:2]] == [(1, "uncertain"), (4, "uncertain")]
    rest = queue[2:]
    assert {q.test_id for q in rest if q.failed} == {2, 5, 6}  # every other failure
    assert sum(not q.failed for q in rest) == 2 and {q.sample for q in rest} == {"random"}
    assert review_queue(runs, {"q": 0.5}, uncertain=2, passes=2) == queue


def test_a_failure_is_as_certain_as_its_clearest_failing_score():
    failing = TestRecord(0, 0, 0, {}, [], Status.OK, scores={"a": 0.74, "b": 0.0}, failed=True)
    passing = TestRecord(0, 0, 0, {}, [], Status.OK, scores={"a": 0.76, "b": 1.0}, failed=False)
    thresholds = {"a": 0.75, "b": 0.75}
    assert margin(failing, thresholds) == 0.75  # b fails clearly, whatever a says
    assert round(margin(passing, thresholds), 2) == 0.01  # a nearly fails


def test_the_precision_comes_from_failures_drawn_at_random():
    marks = {i: Mark(i, "real", True, sample="random") for i in range(8)}
    marks |= {i: Mark(i, "false_alarm", True, sample="random") for i in range(8, 10)}
    marks |= {i: Mark(i, "false_alarm", True, sample="uncertain") for i in range(10, 20)}
    marks[20] = Mark(20, "unsure", True, sample="random")
    estimate = precision_estimate(marks)
    assert (estimate.real, estimate.false_alarms, estimate.unsure) == (8, 2, 1)
    assert estimate.precision == 0.8
    low, high = estimate.interval
    assert round(low, 2) == 0.49 and round(high, 2) == 0.94  # Wilson, 95%
    assert "0.80 [0.49, 0.94]" in estimate.line(100) and "about 80 of 100" in estimate.line(100)
    assert precision_estimate({}).precision is None


def test_imported_marks_are_checked_against_the_run(run_dir, tmp_path):
    records = numbered(run_dir)
    failing = next(i for i, r in records.items() if r.is_failure)
    good = label_row(records[failing], Mark(failing, "real", True), FailureLabel())
    path = tmp_path / "marks.jsonl"

    def refused(*rows) -> str:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        with pytest.raises(StellarError) as caught:
            import_marks(run_dir, path, records)
        return str(caught.value)

    assert "line 1 is not a review mark" in refused({"id": 1, "input": "x"})
    unknown = json.loads(json.dumps(good))
    unknown["review"]["test_id"] = 10**6
    assert "line 2: the run has no verdict of test 1000000" in refused(good, unknown)
    flipped = json.loads(json.dumps(good))
    flipped["review"]["verdict"] = "pass"
    assert "verdict is fail, the mark says pass" in refused(flipped)
    bad_mark = json.loads(json.dumps(good))
    bad_mark["review"]["mark"] = "maybe"
    assert "is not a review mark" in refused(bad_mark)
    path.write_text(json.dumps(good) + "\n")
    assert [m.test_id for m in import_marks(run_dir, path, records)] == [failing]
    assert not os.path.exists(run_dir / MARKS_NAME)  # importing checks; it writes nothing
