"""DuplicateFilter on its projected scan: the full scan's verdicts, order, persistence."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from stellar.text.duplicates import DuplicateFilter
from stellar.text.projected_scan import ProjectedScan

DIM = 96


class Dim:
    """An embedder that is never called: these tests check vectors."""

    def __init__(self, dim: int = DIM) -> None:
        self.dim = dim

    def embed(self, texts: object) -> np.ndarray:
        raise AssertionError("the vector API embeds nothing")


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def at_cosine(rng: np.random.Generator, base: np.ndarray, cosine: np.ndarray) -> np.ndarray:
    """Per ``base`` row, a unit vector at exactly-ish ``cosine`` to it."""
    noise = rng.standard_normal(base.shape)
    away = unit(noise - np.sum(noise * base, axis=1, keepdims=True) * base)
    return unit(cosine[:, np.newaxis] * base + np.sqrt(1 - cosine[:, np.newaxis] ** 2) * away)


def clustered(rng: np.random.Generator, n: int, clusters: int = 40) -> np.ndarray:
    """Unit vectors around ``clusters`` centres, most of their energy in 24 dimensions and
    the rest spread over all: structured, like text embeddings."""
    basis = np.linalg.qr(np.random.default_rng(99).standard_normal((DIM, 24)))[0].T
    centres = rng.standard_normal((clusters, 24)) @ basis
    spread = 0.25 * rng.standard_normal((n, 24)) @ basis + 0.04 * rng.standard_normal((n, DIM))
    return unit(unit(centres)[rng.integers(0, clusters, n)] + spread)


def stream(rng: np.random.Generator, archive: np.ndarray, n: int, threshold: float) -> np.ndarray:
    """Checks: half fresh clustered vectors, half planted within 0.03 of the threshold
    (and some at it exactly) to a random archive row, shuffled."""
    base = archive[rng.integers(0, len(archive), n // 2)]
    cosine = rng.uniform(threshold - 0.03, threshold + 0.03, len(base))
    cosine[::10] = threshold
    checks = np.concatenate([clustered(rng, n - len(base)), at_cosine(rng, base, cosine)])
    return checks[rng.permutation(n)]


def run_checks(dup: DuplicateFilter, checks: np.ndarray, batch: int = 20) -> list:
    return [
        r for i in range(0, len(checks), batch) for r in dup.check_vectors(checks[i : i + batch])
    ]


def test_projected_verdicts_equal_the_full_scan_across_the_threshold() -> None:
    rng = np.random.default_rng(3)
    threshold = 0.8
    archive = clustered(rng, 3000)
    checks = stream(rng, archive, 1200, threshold)
    full = DuplicateFilter(Dim(), threshold, index_from=None)
    projected = DuplicateFilter(Dim(), threshold, index_from=500)
    for dup in (full, projected):
        dup.add_vectors(archive)
    left = projected._index.candidates(checks[:100], threshold, most=len(archive))
    assert np.mean([len(rows) for rows in left]) < len(archive) / 20  # they do rule out
    expected, got = run_checks(full, checks), run_checks(projected, checks)
    assert projected.indexed and not full.indexed
    similarities = np.array([s for _, s in expected])
    near = np.abs(similarities - threshold) < 0.01
    assert near.sum() > 100 and 0.2 < np.mean([d for d, _ in expected]) < 0.8  # crosses it
    assert [d for d, _ in got] == [d for d, _ in expected]
    found = np.array([s for _, s in got])
    assert (found <= similarities).all()  # one stored vector's similarity: never above the max
    above = similarities >= threshold  # every duplicate's maximum is found exactly
    np.testing.assert_array_equal(found[above], similarities[above])
    assert np.mean(found == similarities) > 0.9  # and most others'
    assert len(projected) == len(full)


def test_vectors_without_structure_fall_back_to_the_full_scan() -> None:
    rng = np.random.default_rng(8)
    archive, checks = unit(rng.standard_normal((2000, DIM))), unit(rng.standard_normal((200, DIM)))
    checks[::2] = at_cosine(rng, archive[:100], np.full(100, 0.3))
    full = DuplicateFilter(Dim(), 0.3, index_from=None)
    projected = DuplicateFilter(Dim(), 0.3, index_from=100)
    for dup in (full, projected):
        dup.add_vectors(archive)
    found = projected._index.candidates(checks[:20], 0.3, most=len(archive) // 8)
    assert projected._index.pays and any(rows is None for rows in found)  # too many left
    assert run_checks(projected, checks) == run_checks(full, checks)


def test_projections_start_at_index_from() -> None:
    rng = np.random.default_rng(0)
    dup = DuplicateFilter(Dim(), 0.9, index_from=100)
    dup.add_vectors(clustered(rng, 99))
    assert not dup.indexed
    dup.check_vectors(unit(rng.standard_normal((1, DIM))))
    assert dup.indexed and len(dup) == 100


def test_batch_order_on_the_projections() -> None:
    """Each item is compared with the earlier accepted items of its batch; a rejected item
    is compared with nothing later; accepted items are found through the projections later."""
    rng = np.random.default_rng(1)
    filler = clustered(rng, 200)
    filler[:, :4] = 0.0  # orthogonal to the four vectors below
    dup = DuplicateFilter(Dim(), 0.8, index_from=1)
    dup.add_vectors(unit(filler))
    anchor, near, chain, far = np.zeros((4, DIM), dtype=np.float32)
    anchor[0], far[3] = 1.0, 1.0
    near[:2] = [0.9, math.sqrt(1 - 0.81)]  # 0.9 to anchor
    chain[:3] = [0.7, 0.7, math.sqrt(0.02)]  # ~0.94 to near, 0.7 to anchor
    results = dup.check_vectors(np.stack([anchor, near, chain, far, anchor]))
    assert [r[0] for r in results] == [False, True, False, False, True]
    assert results[1][1] == pytest.approx(0.9, abs=1e-6)
    assert results[2][1] == pytest.approx(0.7, abs=1e-6)
    assert len(dup) == 203 == len(dup._index)  # anchor, chain, far now projected
    probe = np.zeros(DIM, dtype=np.float32)
    probe[2:4] = [math.sqrt(1 - 0.85**2), 0.85]  # 0.85 to far, < 0.1 to the others
    assert dup.check_vector(probe) == (True, pytest.approx(0.85, abs=1e-6))


def test_projections_follow_every_stored_row() -> None:
    rng = np.random.default_rng(2)
    rows = unit(rng.standard_normal((70, DIM)))
    dup = DuplicateFilter(Dim(), 0.99, index_from=1)
    dup.add_vectors(rows[:50])
    assert len(dup._index) == 50
    dup.check_vectors(rows[40:70])  # 10 duplicates, 20 new
    assert len(dup) == len(dup._index) == 70
    for row in rows:
        assert dup.check_vector(row) == (True, pytest.approx(1.0, abs=1e-6))


@pytest.mark.parametrize("index_from", [None, 8])
def test_growth_past_matrix_and_index_capacity(index_from: int | None) -> None:
    rng = np.random.default_rng(4)
    threshold = 0.7
    data = clustered(rng, 1500)
    dup = DuplicateFilter(Dim(), threshold, initial_capacity=4, index_from=index_from)
    accepted: list[np.ndarray] = []
    for start in range(0, len(data), 13):
        for vector, (is_dup, similarity) in zip(
            data[start : start + 13], dup.check_vectors(data[start : start + 13]), strict=True
        ):
            best = max((float(a @ vector) for a in accepted), default=0.0)
            if index_from is None or best >= threshold:
                assert similarity == pytest.approx(best, abs=1e-5)
            assert similarity <= best + 1e-6 and is_dup == (best >= threshold)
            if not is_dup:
                accepted.append(vector)
    assert 1000 < len(dup) == len(accepted) < len(data)
    assert dup.capacity >= len(dup) and dup.indexed == (index_from is not None)
    np.testing.assert_array_equal(dup.vectors, np.array(accepted))


def test_save_new_upto_and_load_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    path = tmp_path / "duplicates.f32"
    dup = DuplicateFilter(Dim(), 0.8, index_from=None)
    dup.add_vectors(unit(rng.standard_normal((10, DIM))))
    dup.save_new(path, upto=4)
    assert path.stat().st_size == 4 * DIM * 4
    dup.save_new(path, upto=3)  # nothing before what is saved is written again
    dup.add_vectors(unit(rng.standard_normal((5, DIM))))
    dup.save_new(path, upto=12)
    with pytest.raises(ValueError, match="upto"):
        dup.save_new(path, upto=16)
    with pytest.raises(ValueError, match="upto"):
        dup.save_new(path, upto=-1)
    loaded = DuplicateFilter(Dim(), 0.8, index_from=None)
    assert loaded.load(path)
    np.testing.assert_array_equal(loaded.vectors, dup.vectors[:12])
    dup.save_new(path)  # the rest
    again = DuplicateFilter(Dim(), 0.8, index_from=None)
    assert again.load(path)
    np.testing.assert_array_equal(again.vectors, dup.vectors)
    loaded.save_new(path)  # load counts its rows as saved: nothing is appended twice
    assert path.stat().st_size == 15 * DIM * 4


def test_reloaded_projections_give_the_same_verdicts(tmp_path: Path) -> None:
    """A filter refilled from its saved rows at once (a resume) fits the same basis as one
    that grew batch by batch, so it goes on with the same verdicts and similarities."""
    rng = np.random.default_rng(6)
    data = clustered(rng, 4000)
    grown = DuplicateFilter(Dim(), 0.8, index_from=100)
    run_checks(grown, data[:3000], batch=7)
    assert grown.indexed and len(grown) > 1000
    grown.save_new(tmp_path / "v.f32")
    reloaded = DuplicateFilter(Dim(), 0.8, index_from=100)
    assert reloaded.load(tmp_path / "v.f32")
    np.testing.assert_array_equal(reloaded._index._basis, grown._index._basis)
    later = data[3000:]
    assert run_checks(reloaded, later) == run_checks(grown, later)


def test_candidates_hold_every_row_that_reaches_the_cut() -> None:
    rng = np.random.default_rng(7)
    rows = clustered(rng, 3000)
    scan = ProjectedScan(DIM, fit_from=700, rank=32)
    scan.follow(rows[:1500])
    assert scan._fitted_on == 700 and len(scan) == 1500
    scan.follow(rows)  # 4 x 700 reached: fitted again on the first 2800
    assert scan._fitted_on == 2800 and len(scan) == 3000 and scan.memory_bytes > 0
    queries = np.concatenate([clustered(rng, 40), at_cosine(rng, rows[:40], np.full(40, 0.9))])
    exact = queries @ rows.T
    for cut in (0.5, 0.8, 0.9):
        found = scan.candidates(queries, cut, most=len(rows))
        for query, candidates in enumerate(found):
            assert candidates is not None
            reaching = np.flatnonzero(exact[query] >= cut)
            assert set(reaching) <= set(candidates)
            assert len(candidates) <= len(reaching) + len(rows) / 10  # and few others
    assert scan.candidates(queries[:3], 0.0, most=10) == [None, None, None]
    assert scan.pays and scan.energy > 0.9
    unstructured = ProjectedScan(DIM, fit_from=100, rank=16)
    unstructured.follow(unit(rng.standard_normal((200, DIM))))
    assert not unstructured.pays and 0.1 < unstructured.energy < 0.5


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"rank": 0}, "rank"), ({"rank": DIM + 1}, "rank"), ({"fit_from": 0}, "fit_from")],
)
def test_invalid_projection_options(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ProjectedScan(DIM, **{"fit_from": 10, **kwargs})
    with pytest.raises(ValueError, match="fit_from"):
        ProjectedScan(DIM, fit_from=10).follow(np.zeros((9, DIM), np.float32))


def test_embedders_of_fewer_dimensions_than_the_rank_keep_them_all() -> None:
    rng = np.random.default_rng(9)
    dup = DuplicateFilter(Dim(16), 0.8, index_from=50)
    dup.add_vectors(unit(rng.standard_normal((60, 16))))
    assert dup.indexed and dup._index.rank == 16
    assert dup.check_vector(dup.vectors[3].copy()) == (True, pytest.approx(1.0, abs=1e-6))


def test_invalid_index_from() -> None:
    with pytest.raises(ValueError, match="index_from"):
        DuplicateFilter(Dim(), 0.8, index_from=0)


def test_empty_filter_with_index_from_one() -> None:
    dup = DuplicateFilter(Dim(), 0.8, index_from=1)
    vector = unit(np.ones((1, DIM)))
    assert dup.check_vector(vector[0]) == (False, 0.0)
    assert dup.check_vector(vector[0]) == (True, pytest.approx(1.0, abs=1e-6))
    assert dup.check_vectors(np.empty((0, DIM), np.float32)) == []
