import pytest
from scipy.stats import mannwhitneyu

from stellar.analysis.statistics import a12, a12_magnitude, mann_whitney


def test_a12_by_hand():
    # 3 x 3 pairs: (3>1, 3>2, 3=3 -> 0.5), (2>1, 2=2 -> 0.5), (1=1 -> 0.5) => 4.5 + ... / 9
    first, second = [1, 2, 3], [1, 2, 3]
    assert a12(first, second) == 0.5
    assert a12([5, 6], [1, 2]) == 1.0
    assert a12([1, 2], [5, 6]) == 0.0
    # wins: 4>3, 4>1, 2>1, 2=2 (0.5), 4>2 => (1+1+1+0.5+1 + 0 for 2<3) / 6
    assert a12([4, 2], [3, 1, 2]) == pytest.approx(4.5 / 6)


@pytest.mark.parametrize(
    ("value", "label"),
    [(0.5, "negligible"), (0.6, "small"), (0.3, "medium"), (0.85, "large"), (0.0, "large")],
)
def test_a12_magnitude(value, label):
    assert a12_magnitude(value) == label


def test_mann_whitney_agrees_with_scipy():
    first, second = [12, 15, 9, 20, 17, 11], [3, 5, 8, 2, 9, 4]
    expected = mannwhitneyu(first, second, alternative="two-sided").pvalue
    assert mann_whitney(first, second) == pytest.approx(expected)
    assert mann_whitney([1, 1], [1, 1]) == 1.0


def test_a12_rejects_empty():
    with pytest.raises(ValueError):
        a12([], [1])
