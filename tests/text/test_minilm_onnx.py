"""MiniLM through ONNX Runtime: the same vectors as sentence-transformers, exported once."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from stellar.text import minilm_onnx
from stellar.text.embeddings import MiniLMEmbedder, get_embedder, minilm_model_dir

TEXTS = [
    "Find me a cheap Italian restaurant with parking, rated at least four stars",
    "hotel",
    "",
    "  spaces around  ",
    "Ünïcödé café naïve 東京 🍣",
    "word " * 400,  # longer than the model's 256 tokens: truncated alike
    "I'm starving, where can I eat?",
]


def test_onnx_vectors_equal_sentence_transformers() -> None:
    onnx = MiniLMEmbedder(backend="onnx").embed(TEXTS)
    torch = MiniLMEmbedder(backend="torch").embed(TEXTS)
    np.testing.assert_allclose(onnx, torch, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)


def test_padding_does_not_change_a_vector() -> None:
    model = MiniLMEmbedder().model
    alone = model.encode([TEXTS[1]])
    padded = model.encode([TEXTS[0], TEXTS[1]])[1]  # padded to the first text's length
    np.testing.assert_allclose(alone[0], padded, atol=1e-5)


def test_the_graph_is_written_once_and_reused(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STELLAR_CACHE_DIR", str(tmp_path))
    written = []
    write = minilm_onnx._write_graph  # the real export, in a process of its own
    monkeypatch.setattr(minilm_onnx, "_write_graph", lambda d, p: (written.append(p), write(d, p)))
    first = minilm_onnx.exported(minilm_model_dir())
    second = minilm_onnx.exported(minilm_model_dir())
    assert first == second and first.is_file() and first.parent.parent == tmp_path
    assert len(written) == 1 and not written[0].exists()  # the partial file was moved
    # beside it only the lock the writers wait on (a dot file, kept: removing it would let a
    # waiting process lock a file nobody else sees)
    assert [p for p in first.parent.iterdir() if not p.name.startswith(".")] == [first]


def test_an_unwritable_cache_gets_a_private_copy(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("STELLAR_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(minilm_onnx, "_write_graph", lambda d, p: p.write_bytes(b"graph"))
    graph = minilm_onnx.exported(minilm_model_dir())
    assert graph.read_bytes() == b"graph" and blocker not in graph.parents


def test_a_failed_export_says_why(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STELLAR_CACHE_DIR", str(tmp_path))
    (tmp_path / "model.safetensors").write_bytes(b"not a model")
    with pytest.raises(RuntimeError, match="exporting all-MiniLM-L6-v2 to ONNX failed"):
        minilm_onnx.exported(tmp_path)
    assert not list(tmp_path.rglob("*.partial"))


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="backend"):
        MiniLMEmbedder(backend="tensorflow")


def test_the_8_bit_model_is_a_close_copy_written_once(tmp_path, monkeypatch) -> None:
    exact = MiniLMEmbedder().embed(TEXTS)
    near = get_embedder("minilm-int8").embed(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(near, axis=1), 1.0, atol=1e-5)
    cosines = (exact * near).sum(axis=1)
    assert cosines.min() > 0.95 and not np.allclose(exact, near, atol=1e-3)
    float_graph = minilm_onnx.exported(minilm_model_dir())
    copy = tmp_path / float_graph.name
    copy.write_bytes(float_graph.read_bytes())
    small = minilm_onnx.quantised(copy)
    assert small.parent == tmp_path and small.stat().st_size < copy.stat().st_size / 3
    assert minilm_onnx.quantised(copy) == small
    kept = [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")]  # not the lock
    assert sorted(kept) == sorted([copy.name, small.name])


def test_a_vector_does_not_depend_on_the_texts_embedded_with_it() -> None:
    for name in ("minilm", "minilm-int8"):
        model = get_embedder(name).model  # the model itself: the embedder's cache would hide it
        together = model.encode(TEXTS[:5], batch_size=5)
        alone = np.concatenate([model.encode([text]) for text in TEXTS[:5]])
        np.testing.assert_allclose(together, alone, atol=1e-5, err_msg=name)


def test_processes_converting_into_one_empty_cache_at_once_all_succeed(tmp_path) -> None:
    # the first run on a fresh machine: parallel workers convert at once (issue 42); one
    # converts while the other waits, then both read the same files
    script = (
        "import json; from stellar.text.embeddings import MiniLMEmbedder; "
        "print(json.dumps(MiniLMEmbedder(backend='onnx-int8').embed(['a cheap cafe'])[0].tolist()))"
    )
    env = {**os.environ, "STELLAR_CACHE_DIR": str(tmp_path)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [worker.communicate(timeout=600) for worker in workers]
    assert [w.returncode for w in workers] == [0, 0, 0], [err[-500:] for _, err in outputs]
    first, *others = (json.loads(out) for out, _ in outputs)
    assert all(other == first for other in others)
    assert not list(tmp_path.rglob("*.partial")) and not list(tmp_path.rglob("*-inferred.onnx"))
