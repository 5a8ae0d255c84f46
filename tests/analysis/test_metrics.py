import asyncio
import itertools
import json

import pytest

from stellar.analysis.metrics import (
    CurvePoint,
    FeatureRate,
    elapsed,
    failure_curve,
    feature_failure_rates,
    load_run,
    run_metrics,
    unique_failure_texts,
)
from stellar.archive import ARCHIVE_NAME, Archive
from stellar.records import Status, TestRecord
from stellar.run import Run
from stellar.rundir import SUMMARY_NAME
from stellar.summary import RunSummary

SIZES = ["small", "large"]  # ordinal: encoded index / 2
COLORS = ["red", "blue", "green"]  # categorical: encoded index


def record(n, text, status=Status.OK, failed=False, excluded=False, size="small", color="red"):
    """A test started at 100 + n seconds and finished 0.5 s later."""
    return TestRecord(
        generation=0,
        index=n,
        seed=0,
        candidate={"size": size, "color": color},
        vector=[SIZES.index(size) / 2, float(COLORS.index(color))],
        status=status,
        input_text=text,
        response_text="answer",
        failed=failed,
        excluded=excluded,
        started_at=100.0 + n,
        finished_at=100.5 + n,
    )


@pytest.fixture
def run_dir(tmp_path):
    """Eight records: 6 executed, 3 failing tests of which 2 distinct texts."""
    records = [
        record(0, "a", failed=True, size="large", color="green"),
        record(1, "b"),
        record(2, "a", failed=True, size="large"),  # same text again: one unique failure
        record(3, "c", failed=True, excluded=True),  # excluded: not a failure
        record(4, "d", Status.DUPLICATE, failed=None),  # not executed
        record(5, "", Status.INVALID, failed=None),  # not executed
        record(6, "e", Status.SUT_ERROR, failed=None, color="blue"),
        record(7, "f", failed=True, size="large", color="blue"),
    ]
    with Archive(tmp_path / ARCHIVE_NAME) as archive:
        for r in records:
            archive.add(r)
    return tmp_path


def test_run_metrics_counts_executed_tests_and_distinct_failing_inputs(run_dir):
    metrics = run_metrics(run_dir)
    assert (metrics.tests, metrics.unique_failures) == (6, 2)
    summary = RunSummary(run_dir=str(run_dir), algorithm="x", seed=0)
    summary.recount(load_run(run_dir).records)  # the ratio is the summary's own
    assert (metrics.failures, metrics.verdicts) == (summary.failures, summary.verdicts)
    assert summary.failure_ratio > 0
    assert metrics.failure_ratio == pytest.approx(summary.failure_ratio)
    assert unique_failure_texts(run_dir) == ["a", "f"]


def test_elapsed_from_summary_or_record_times(run_dir):
    assert elapsed(run_dir) == pytest.approx(107.5 - 100.0)  # first start to last finish
    (run_dir / SUMMARY_NAME).write_text(json.dumps({"elapsed": 12.5}))
    assert run_metrics(run_dir).elapsed == 12.5


def test_failure_curve_one_point_per_executed_test_in_completion_order(run_dir):
    assert failure_curve(run_dir) == [
        CurvePoint(1, 0.5, 1),
        CurvePoint(2, 1.5, 1),
        CurvePoint(3, 2.5, 1),  # "a" again
        CurvePoint(4, 3.5, 1),  # excluded
        CurvePoint(5, 6.5, 1),  # sut_error; the discarded tests are skipped
        CurvePoint(6, 7.5, 2),
    ]


def test_failure_curve_follows_finish_times_not_ids(tmp_path):
    with Archive(tmp_path / ARCHIVE_NAME) as archive:
        late = record(0, "x", failed=True)
        late.finished_at = 110.0
        archive.add(late)
        archive.add(record(1, "y"))
    curve = failure_curve(tmp_path)
    assert [(p.tests, p.unique_failures) for p in curve] == [(1, 0), (2, 1)]
    assert curve[-1].seconds == pytest.approx(10.0)


def test_feature_failure_rates_in_feature_space_order(run_dir):
    rates = feature_failure_rates([run_dir, load_run(run_dir)])  # paths or loaded runs
    assert rates == [
        FeatureRate("size", "small", 6, 0, 0.0),
        FeatureRate("size", "large", 6, 6, 1.0),
        FeatureRate("color", "red", 6, 2, 2 / 6),
        FeatureRate("color", "blue", 4, 2, 0.5),
        FeatureRate("color", "green", 2, 2, 1.0),
    ]


def test_metrics_of_a_real_run_match_its_summary(toy_config):
    summary = asyncio.run(Run(toy_config(**{"budget.tests": 60})).execute())
    data = load_run(summary.run_dir)
    metrics = run_metrics(data)
    assert metrics.tests == summary.tests == 60
    assert metrics.elapsed == pytest.approx(summary.elapsed)
    curve = failure_curve(data)
    assert len(curve) == 60
    assert curve[-1].unique_failures == metrics.unique_failures
    assert all(a.seconds <= b.seconds for a, b in itertools.pairwise(curve))
