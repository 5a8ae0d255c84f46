import numpy as np
import pytest

from stellar.analysis.diversity import (
    choose_k,
    cluster_coverage,
    failure_types,
    pick_k,
    silhouette_scores,
)
from stellar.text.embeddings import get_embedder


def blobs(*centres, n=40, spread=0.5, seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(c, spread, (n, len(c))) for c in centres])


class TableEmbedder:
    """Texts "<cluster>:<n>" map to one of three far-apart points, plus a little noise."""

    dim = 3

    def embed(self, texts):
        rows = []
        for text in texts:
            cluster, n = text.split(":")
            row = np.eye(3)[int(cluster)] * 10 + 0.01 * np.sin([int(n), 2 * int(n), 3])
            rows.append(row / np.linalg.norm(row))
        return np.array(rows, dtype=np.float32)


def test_choose_k_finds_three_well_separated_blobs():
    X = blobs([0, 0], [10, 0], [0, 10])
    assert choose_k(X) == 3
    assert choose_k(X, k_min=2, k_max=2) == 2


def test_margin_rule_on_scores():
    assert pick_k({2: 0.50, 3: 0.51, 4: 0.49}) == 2  # 3 is better, but by less than 0.02
    assert pick_k({2: 0.50, 3: 0.51, 4: 0.49}, margin=0) == 3
    assert pick_k({2: 0.50, 3: 0.53, 4: 0.54}) == 3  # 4 beats 3, the best so far, by 0.01
    assert pick_k({2: 0.50, 3: 0.51, 4: 0.53}) == 4  # beats the best (k=2) by 0.03
    assert pick_k({}) == 1


def test_a_slightly_better_larger_k_under_the_margin_stays_smaller():
    # two blobs 5.4 apart and a third far away: three clusters score just above two
    X = blobs([0, 0], [5.4, 0], [20, 0])
    scores = silhouette_scores(X, 2, 4)
    assert 0 < scores[3] - scores[2] < 0.02
    assert choose_k(X) == 2
    assert choose_k(X, margin=0.0) == 3
    assert choose_k(blobs([0, 0], [6.5, 0], [20, 0])) == 3  # by more than the margin


def test_choose_k_with_too_few_points_is_one():
    assert choose_k(np.array([[0.0, 1.0], [1.0, 0.0]])) == 1  # no k in [2, 1]
    assert choose_k(np.zeros((10, 2))) == 1  # one distinct point


def test_coverage_of_failures_in_one_of_three_clusters_is_one_third():
    texts = {
        "narrow": [[f"0:{i}" for i in range(5)], [f"0:{i}" for i in range(5, 8)]],
        "wide": [[f"{c}:{i}" for c in range(3) for i in range(4)], ["1:9", "2:9"]],
        "none": [[], []],
    }
    result = cluster_coverage(texts, TableEmbedder(), repeats=3)
    assert (result.k, result.repeats, result.note) == (3, 3, "")
    assert result.failures == 5 + 3 + 12 - 4 + 2  # distinct texts: "0:0".."0:3" are shared
    assert result.silhouette > 0.9
    narrow, wide, none = (result.coverage[a] for a in ("narrow", "wide", "none"))
    assert narrow.runs == pytest.approx([1 / 3, 1 / 3])
    assert (narrow.mean, narrow.std, narrow.union) == pytest.approx((1 / 3, 0, 1 / 3))
    assert wide.runs == pytest.approx([1, 2 / 3])
    assert wide.std == pytest.approx(np.std([1, 2 / 3], ddof=1))
    assert (none.runs, none.mean, none.union) == ([0.0, 0.0], 0.0, 0.0)


def test_coverage_with_too_few_or_no_failures():
    few = cluster_coverage({"a": [["0:1"], []], "b": [["1:1"]]}, TableEmbedder())
    assert few.k == 1 and "too few" in few.note and few.silhouette is None
    assert few.coverage["a"].runs == [1.0, 0.0]
    assert few.coverage["b"].runs == [1.0]
    empty = cluster_coverage({"a": [[], []], "b": []}, TableEmbedder())
    assert (empty.k, empty.failures) == (0, 0) and "no failures" in empty.note
    assert empty.coverage["a"].runs == [0.0, 0.0]
    assert empty.coverage["b"].runs == [] and empty.coverage["b"].mean == 0.0


def test_coverage_with_a_given_k():
    texts = {"a": [[f"{c}:{i}" for c in range(3) for i in range(3)]]}
    assert cluster_coverage(texts, TableEmbedder(), k=2).coverage["a"].runs == [1.0]


THEMES = {
    "weather": "the weather forecast says sunny weather in paris {}",
    "endpoint": "error endpoint timeout from the search endpoint {}",
    "language": "desole je ne parle pas francais langue {}",
}


def test_failure_types_are_named_by_their_cluster_words():
    answers, inputs = [], []
    for theme, template in THEMES.items():
        size = {"weather": 6, "endpoint": 4, "language": 3}[theme]
        for i in range(size):
            answers.append(template.format(i))
            inputs.append(f"{theme} question {i}")
    types = failure_types(answers, inputs, get_embedder("hashing"), k=3, examples=2)
    assert [t.size for t in types] == [6, 4, 3]  # largest first
    assert "weather" in types[0].label
    assert "endpoint" in types[1].label
    assert any(w in types[2].label for w in ("francais", "langue", "parle", "desole"))
    for kind, theme in zip(types, THEMES, strict=True):
        assert len(kind.examples) == 2
        assert all(i.startswith(theme) and a in answers for i, a in kind.examples)
        assert sorted(answers[m] for m in kind.members) == sorted(
            a for a in answers if a.startswith(THEMES[theme].split()[0])
        )
    assert [t.size for t in failure_types(answers, inputs, get_embedder("hashing"))] == [6, 4, 3]


def test_failure_types_edge_cases():
    assert failure_types([], [], get_embedder("hashing")) == []
    (only,) = failure_types(["", ""], ["a", "b"], get_embedder("hashing"))
    assert (only.label, only.size) == ("(empty answer)", 2)
    types = failure_types(
        ["", "", "wrong rating", "wrong rating again"], list("abcd"), "hashing", k=2
    )
    assert "(empty answer)" in [t.label for t in types]
    with pytest.raises(ValueError):
        failure_types(["x"], [], get_embedder("hashing"))


def test_coverage_does_not_depend_on_the_order_of_algorithms():
    texts = {
        "a": [[f"{c}:{i}" for c in range(2) for i in range(5)]],
        "b": [[f"2:{i}" for i in range(5)], [f"0:{i}" for i in range(3)]],
    }
    forward = cluster_coverage(texts, get_embedder("hashing"), repeats=2)
    backward = cluster_coverage(dict(reversed(texts.items())), get_embedder("hashing"), repeats=2)
    assert forward.k == backward.k
    assert forward.coverage == backward.coverage
