"""Tests for stellar.text.duplicates.DuplicateFilter."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from stellar.text.duplicates import EMPTY_SIMILARITY, DuplicateFilter
from stellar.text.embeddings import HashingEmbedder

DIM = 4


def unit_at(cosine: float) -> np.ndarray:
    """A float32 unit vector whose dot product with e1 is exactly float32(cosine).

    The dot product with e1 = (1, 0, 0, 0) is just the first component, so it involves no
    rounding beyond storing ``cosine`` itself as float32.
    """
    c = np.float32(cosine)
    return np.array([c, math.sqrt(1.0 - float(c) ** 2), 0.0, 0.0], dtype=np.float32)


E1 = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)


class FakeEmbedder:
    """Maps known texts to hand-made vectors; counts embed() calls."""

    def __init__(self, table: dict[str, np.ndarray], dim: int = DIM) -> None:
        self.table = table
        self.dim = dim
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return np.stack([self.table[t] for t in texts]).astype(np.float32)


def make_filter(threshold: float = 0.8, **vectors: np.ndarray) -> DuplicateFilter:
    return DuplicateFilter(FakeEmbedder({"anchor": E1, **vectors}), threshold=threshold)


@pytest.mark.parametrize(
    ("cosine", "expected"),
    [(0.8, True), (0.79, False), (0.81, True), (1.0, True), (0.0, False), (-0.5, False)],
)
def test_threshold_is_inclusive(cosine: float, expected: bool) -> None:
    dup = make_filter(0.8, probe=unit_at(cosine))
    assert dup.check("anchor") == (False, EMPTY_SIMILARITY)
    is_dup, similarity = dup.check("probe")
    assert is_dup is expected
    assert similarity == float(np.float32(cosine))


@pytest.mark.parametrize("threshold", [0.3, 0.7, 0.8, 0.9, 0.95, 1.0])
def test_threshold_boundary_at_float32_resolution(threshold: float) -> None:
    """Similarity equal to the (float32) threshold is a duplicate; the next value below is not."""
    at = np.float32(threshold)
    below = np.nextafter(at, np.float32(0.0))
    dup = make_filter(threshold, at=unit_at(at), below=unit_at(below))
    dup.check("anchor")
    assert dup.check("below")[0] is False
    dup = make_filter(threshold, at=unit_at(at), below=unit_at(below))
    dup.check("anchor")
    assert dup.check("at")[0] is True


def test_empty_filter_reports_no_duplicate_and_zero_similarity() -> None:
    dup = make_filter()
    assert len(dup) == 0
    assert dup.check("anchor") == (False, 0.0)
    assert len(dup) == 1


def test_duplicates_are_not_stored() -> None:
    dup = make_filter(near=unit_at(0.9))
    dup.check("anchor")
    assert dup.check("near")[0] is True
    assert dup.check("near")[0] is True
    assert len(dup) == 1
    np.testing.assert_array_equal(dup.vectors, E1[np.newaxis])


def test_within_batch_duplicates_and_rejected_items_not_compared() -> None:
    # "chain" is close to "near" (~0.935) but only 0.7 to "anchor"; "near" is a duplicate
    # of "anchor" and therefore not stored, so "chain" must not be flagged.
    chain = np.array([0.7, 0.7, math.sqrt(0.02), 0.0], dtype=np.float32)
    assert float(unit_at(0.9) @ chain) > 0.9
    dup = make_filter(near=unit_at(0.9), chain=chain, far=np.array([0, 0, 0, 1], np.float32))
    results = dup.check_batch(["anchor", "near", "chain", "far", "anchor"])
    assert [r[0] for r in results] == [False, True, False, False, True]
    assert results[0][1] == EMPTY_SIMILARITY
    assert results[1][1] == float(np.float32(0.9))
    assert results[2][1] == pytest.approx(0.7, abs=1e-6)
    assert results[4][1] == pytest.approx(1.0, abs=1e-6)
    assert len(dup) == 3
    assert dup.embedder.calls == 1  # the whole batch is embedded in one call


def test_check_batch_matches_sequential_checks() -> None:
    rng = np.random.default_rng(0)
    vectors = random_unit(rng, 40, 8)
    vectors[20:] = perturb(rng, vectors[:20], 0.3)  # some near-duplicates of earlier items
    table = {f"t{i}": v for i, v in enumerate(vectors)}
    one_by_one = DuplicateFilter(FakeEmbedder(table, dim=8), threshold=0.9)
    batched = DuplicateFilter(FakeEmbedder(table, dim=8), threshold=0.9)
    sequential = [one_by_one.check(t) for t in table]
    in_batch = batched.check_batch(list(table))
    assert [r[0] for r in in_batch] == [r[0] for r in sequential]
    np.testing.assert_allclose([r[1] for r in in_batch], [r[1] for r in sequential], atol=1e-6)
    assert any(r[0] for r in in_batch) and not all(r[0] for r in in_batch)


def test_growth_past_capacity_matches_brute_force() -> None:
    rng = np.random.default_rng(1)
    dim, threshold = 16, 0.6
    base = random_unit(rng, 150, dim)
    stream = np.concatenate([base, perturb(rng, base[::2], 0.4), random_unit(rng, 60, dim)])
    stream = stream[rng.permutation(len(stream))]
    dup = DuplicateFilter(FakeEmbedder({}, dim=dim), threshold=threshold, initial_capacity=4)
    accepted: list[np.ndarray] = []
    for start in range(0, len(stream), 7):  # mix of batch sizes via check_vectors
        for vector, (is_dup, similarity) in zip(
            stream[start : start + 7], dup.check_vectors(stream[start : start + 7]), strict=True
        ):
            expected = max((float(a.astype(np.float64) @ vector) for a in accepted), default=0.0)
            assert similarity == pytest.approx(expected, abs=1e-5)
            assert is_dup == (expected >= threshold)
            if not is_dup:
                accepted.append(vector)
    assert 4 < len(dup) == len(accepted) < len(stream)
    assert dup.capacity >= len(dup) and dup.capacity & (dup.capacity - 1) == 0
    np.testing.assert_array_equal(dup.vectors, np.array(accepted))


def test_add_preloads_without_checking() -> None:
    dup = make_filter(near=unit_at(0.85))
    dup.add(["anchor", "anchor"])
    assert len(dup) == 2
    assert dup.check("near") == (True, float(np.float32(0.85)))
    dup.add([])
    assert len(dup) == 2


def test_empty_batch() -> None:
    dup = make_filter()
    assert dup.check_batch([]) == []
    assert dup.embedder.calls == 0


@pytest.mark.parametrize("threshold", [0.0, -0.1, 1.0001, 2.0, float("nan")])
def test_invalid_threshold_raises(threshold: float) -> None:
    with pytest.raises(ValueError, match="threshold"):
        make_filter(threshold)


def test_threshold_one_only_flags_identical() -> None:
    dup = make_filter(1.0, near=unit_at(0.999))
    dup.check("anchor")
    assert dup.check("near")[0] is False
    assert dup.check("anchor")[0] is True


def test_wrong_vector_shape_raises() -> None:
    dup = make_filter()
    with pytest.raises(ValueError, match="shape"):
        dup.check_vector(np.ones(DIM + 1, dtype=np.float32))
    with pytest.raises(ValueError, match="shape"):
        dup.add_vectors(np.ones((2, 2, DIM), dtype=np.float32))


def test_with_hashing_embedder() -> None:
    dup = DuplicateFilter(HashingEmbedder(), threshold=0.95)
    assert dup.check("navigate to the nearest gas station")[0] is False
    assert dup.check("Navigate to the nearest gas station!")[0] is True
    assert dup.check("play some jazz music")[0] is False
    assert len(dup) == 2


# ---------------------------------------------------------------- helpers


def random_unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    vectors = rng.standard_normal((n, dim))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def perturb(rng: np.random.Generator, vectors: np.ndarray, scale: float) -> np.ndarray:
    noisy = vectors + scale * random_unit(rng, len(vectors), vectors.shape[1])
    return (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)


def test_screen_names_the_row_a_duplicate_matched_and_the_row_an_input_took() -> None:
    chain = np.array([0.7, 0.7, math.sqrt(0.02), 0.0], dtype=np.float32)
    far = np.array([0, 0, 0, 1], np.float32)
    dup = make_filter(near=unit_at(0.9), chain=chain, far=far)
    dup.check("anchor")  # row 0
    screened = dup.screen(["far", "near", "chain", "far"])
    assert [(d, row) for d, _, row in screened] == [
        (False, 1),  # stored as row 1
        (True, 0),  # matched the anchor
        (False, 2),  # 0.7 to the anchor: stored as row 2
        (True, 1),  # matched the first "far" of this batch
    ]
    assert [r[:2] for r in screened] == [
        r[:2]
        for r in make_filter(near=unit_at(0.9), chain=chain, far=far).check_batch(
            ["anchor", "far", "near", "chain", "far"]
        )[1:]
    ]
