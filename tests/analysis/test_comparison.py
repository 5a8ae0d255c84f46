import pytest
from scipy.stats import mannwhitneyu

from stellar.analysis.comparison import ALPHA, THRESHOLDS, PairRow, pairwise, summary_rows
from stellar.analysis.statistics import A12_THRESHOLDS


def test_a12_on_known_samples():
    rows = pairwise({"x": [1, 2, 3], "y": [1, 2, 3], "z": [4, 5], "w": [1, 2]}, "m")
    a12 = {(r.first, r.second): r.a12 for r in rows}
    assert a12["x", "y"] == 0.5
    assert a12["z", "w"] == 1.0
    assert a12["x", "z"] == 0.0


def test_a12_with_ties_by_hand():
    # [2, 3, 3] vs [1, 3]: the six pairs score
    #   2>1: 1, 2<3: 0, 3>1: 1, 3=3: 0.5, 3>1: 1, 3=3: 0.5  ->  4 / 6
    (row,) = pairwise({"a": [2, 3, 3], "b": [1, 3]}, "failures")
    assert row.a12 == pytest.approx(4 / 6)
    assert row.magnitude == "medium"  # |0.667 - 0.5| = 0.167 is in [0.14, 0.21)


def test_p_values_agree_with_scipy_two_sided():
    values = {
        "stellar": [12.0, 15, 9, 20, 17, 11],
        "random": [3.0, 5, 8, 2, 9, 4],
        "twise": [6.0, 7, 9, 5, 8, 10],
    }
    rows = pairwise(values, "failures")
    assert [(r.first, r.second) for r in rows] == [
        ("stellar", "random"),
        ("stellar", "twise"),
        ("random", "twise"),
    ]
    for row in rows:
        expected = mannwhitneyu(values[row.first], values[row.second], alternative="two-sided")
        assert row.p_value == pytest.approx(expected.pvalue)
        assert row.metric == "failures"
        assert row.significant == (row.p_value < ALPHA)
    first = rows[0]
    assert (first.mean_first, first.mean_second) == (14.0, 31 / 6)
    assert first.a12 > 0.9 and first.magnitude == "large" and first.significant


def test_constant_equal_samples_and_empty_algorithms():
    rows = pairwise({"a": [1.0, 1.0], "b": [1.0, 1.0], "none": []}, "ratio")
    assert rows == [PairRow("ratio", "a", "b", 1.0, 1.0, 1.0, 0.5, "negligible")]
    assert not rows[0].significant


def test_thresholds_are_stated():
    assert ALPHA == 0.05
    assert THRESHOLDS == {"alpha": 0.05, "a12": A12_THRESHOLDS}
    assert A12_THRESHOLDS == ((0.06, "negligible"), (0.14, "small"), (0.21, "medium"))


def test_summary_rows_headline_is_best_versus_runner_up():
    failures = {"random": [2.0, 4], "stellar": [10.0, 12], "twise": [4.0, 6]}
    ratios = {"random": [0.02, 0.04], "stellar": [0.1, 0.12], "twise": [0.04, 0.06]}
    coverage = {"random": [0.2, 0.4], "stellar": [0.6, 0.8], "twise": [0.5, 0.5]}
    summary = summary_rows(failures, ratios, coverage)
    assert [r.algorithm for r in summary.rows] == ["random", "stellar", "twise"]
    stellar = summary.rows[1]
    assert (stellar.runs, stellar.mean_failures) == (2, 11.0)
    assert stellar.mean_failure_ratio == pytest.approx(0.11)
    assert stellar.mean_coverage == pytest.approx(0.7)
    head = summary.headline
    assert (head.best, head.other) == ("stellar", "twise")
    assert head.ratio == pytest.approx(11 / 5)
    assert head.a12 == 1.0 and head.magnitude == "large"
    expected = mannwhitneyu(failures["stellar"], failures["twise"], alternative="two-sided")
    assert head.p_value == pytest.approx(expected.pvalue)


def test_summary_rows_edge_cases():
    summary = summary_rows({"a": [3.0], "b": [0.0]}, {"a": [0.3], "b": [0.0]})
    assert summary.headline.ratio is None  # the runner-up found nothing
    assert summary.rows[0].mean_coverage is None
    assert summary_rows({"a": [1.0]}, {"a": [0.1]}).headline is None
    assert summary_rows({"a": [1.0], "b": []}, {}).headline is None
