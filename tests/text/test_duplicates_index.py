"""DuplicateFilter on its graph index: agreement with the exact scan, order, persistence."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from stellar.text.duplicates import DuplicateFilter
from stellar.text.vector_index import GraphIndex

DIM = 32


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
    """Unit vectors around ``clusters`` centres: structured, like text embeddings."""
    centres = unit(rng.standard_normal((clusters, DIM)))
    return unit(centres[rng.integers(0, clusters, n)] + 0.35 * rng.standard_normal((n, DIM)))


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


def test_graph_verdicts_equal_the_exact_scan_across_the_threshold() -> None:
    rng = np.random.default_rng(3)
    threshold = 0.8
    archive = clustered(rng, 3000)
    checks = stream(rng, archive, 1200, threshold)
    exact = DuplicateFilter(Dim(), threshold, index_from=None)
    graph = DuplicateFilter(Dim(), threshold, index_from=500)
    for dup in (exact, graph):
        dup.add_vectors(archive)
    expected, got = run_checks(exact, checks), run_checks(graph, checks)
    assert graph.indexed and not exact.indexed
    similarities = np.array([s for _, s in expected])
    near = np.abs(similarities - threshold) < 0.01
    assert near.sum() > 100 and 0.2 < np.mean([d for d, _ in expected]) < 0.8  # crosses it
    assert [d for d, _ in got] == [d for d, _ in expected]
    found = np.array([s for _, s in got])
    assert (found <= similarities).all()  # a max over candidates: never above the true one
    close = similarities >= threshold - 0.05  # found exactly near and above the threshold
    np.testing.assert_array_equal(found[close], similarities[close])
    assert len(graph) == len(exact)


def test_graph_starts_at_index_from() -> None:
    rng = np.random.default_rng(0)
    dup = DuplicateFilter(Dim(), 0.9, index_from=100)
    dup.add_vectors(clustered(rng, 99))
    assert not dup.indexed
    dup.check_vectors(unit(rng.standard_normal((1, DIM))))
    assert dup.indexed and len(dup) == 100


def test_batch_order_on_the_graph() -> None:
    """Each item is compared with the earlier accepted items of its batch; a rejected item
    is compared with nothing later; accepted items are found through the graph later on."""
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
    assert len(dup) == 203 == len(dup._index)  # anchor, chain, far now in the graph
    probe = np.zeros(DIM, dtype=np.float32)
    probe[2:4] = [math.sqrt(1 - 0.85**2), 0.85]  # 0.85 to far, < 0.1 to the others
    assert dup.check_vector(probe) == (True, pytest.approx(0.85, abs=1e-6))


def test_graph_follows_every_stored_row() -> None:
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
            if index_from is None or best > threshold - 0.1:
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


def test_reloaded_graph_gives_the_same_verdicts(tmp_path: Path) -> None:
    """A filter refilled from its saved rows at once (a resume) builds the same graph as
    one that grew batch by batch, so it goes on with the same verdicts and similarities."""
    rng = np.random.default_rng(6)
    threshold, dim = 0.3, 256
    data = unit(rng.standard_normal((4000, dim)))  # no structure: the graph is approximate
    grown = DuplicateFilter(Dim(dim), threshold, index_from=100, candidates=1)
    run_checks(grown, data[:3000], batch=7)
    assert grown.indexed and len(grown) > 1000
    grown.save_new(tmp_path / "v.f32")
    reloaded = DuplicateFilter(Dim(dim), threshold, index_from=100, candidates=1)
    assert reloaded.load(tmp_path / "v.f32")
    later = data[3000:]
    assert run_checks(reloaded, later) == run_checks(grown, later)


def test_graph_index_pads_missing_keys() -> None:
    rng = np.random.default_rng(7)
    rows = unit(rng.standard_normal((12, DIM)))
    index = GraphIndex(DIM)
    assert (index.nearest(rows[:2], 4) == -1).all()
    index.follow(rows[:10])
    index.follow(rows[:10])  # nothing new
    assert len(index) == 10 and index.memory_bytes > 0
    for queries in (rows[:3], rows[:1]):  # usearch answers one query differently
        keys = index.nearest(queries, 15)
        assert keys.shape == (len(queries), 15)
        assert list(keys[:, 0]) == list(range(len(queries)))  # each row is its own nearest
        assert (keys[:, 10:] == -1).all() and sorted(keys[0, :10]) == list(range(10))


@pytest.mark.parametrize(("option", "value"), [("index_from", 0), ("candidates", 0)])
def test_invalid_index_options(option: str, value: int) -> None:
    with pytest.raises(ValueError, match=option):
        DuplicateFilter(Dim(), 0.8, **{option: value})


def test_empty_filter_with_index_from_one() -> None:
    dup = DuplicateFilter(Dim(), 0.8, index_from=1)
    vector = unit(np.ones((1, DIM)))
    assert dup.check_vector(vector[0]) == (False, 0.0)
    assert dup.check_vector(vector[0]) == (True, pytest.approx(1.0, abs=1e-6))
    assert dup.check_vectors(np.empty((0, DIM), np.float32)) == []
