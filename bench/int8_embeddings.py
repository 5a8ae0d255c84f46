"""The sentence model with 8-bit weights beside the float one: cost and agreement.

    .venv/bin/python bench/int8_embeddings.py                 # 2,000 navi requests
    .venv/bin/python bench/int8_embeddings.py --n 5000 --seed 3

Both embed the same stream of requests of the built-in use case's offline realiser (random
feature values, so about half of them are near-duplicates of earlier ones, as in a long
run). Printed: CPU ms per text of each (all threads of this process, cache off), the cosine
between the two vectors of each text, how far the similarity of a pair of texts moves, and
how often a duplicate filter at the default threshold gives the same verdict on the stream.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from importlib.resources import files

import numpy as np

from stellar.features import load_feature_space
from stellar.text.duplicates import DuplicateFilter
from stellar.text.embeddings import MiniLMEmbedder
from stellar.usecases.navi.realiser import realise


def requests(n: int, seed: int) -> list[str]:
    space = load_feature_space(str(files("stellar.usecases.navi") / "features.yaml"))
    rng = random.Random(seed)
    return [realise(space.random_values(rng), rng) for _ in range(n)]


def embed(backend: str, texts: list[str]) -> tuple[np.ndarray, float]:
    """The vectors and CPU ms per text, in batches of 20 (a generation)."""
    embedder = MiniLMEmbedder(backend=backend)
    embedder.embed(["warm up the model"])
    began = time.process_time()
    rows = [embedder.embed(texts[i : i + 20]) for i in range(0, len(texts), 20)]
    cpu = time.process_time() - began
    return np.concatenate(rows), cpu / len(texts) * 1000


def verdicts(vectors: np.ndarray, threshold: float) -> np.ndarray:
    screen = DuplicateFilter(MiniLMEmbedder(), threshold=threshold)
    return np.array([d for d, _ in screen.check_vectors(vectors)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="requests (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threshold", type=float, default=0.8)
    args = parser.parse_args()
    texts = list(dict.fromkeys(requests(args.n, args.seed)))  # the cache would hide repeats
    exact, exact_ms = embed("onnx", texts)
    small, small_ms = embed("onnx-int8", texts)
    same = (exact * small).sum(axis=1)
    upper = np.triu_indices(len(texts), 1)
    moved = (small @ small.T)[upper] - (exact @ exact.T)[upper]
    a, b = verdicts(exact, args.threshold), verdicts(small, args.threshold)
    print(f"{len(texts)} distinct requests of navi's realiser (seed {args.seed})")
    print(
        f"CPU per text: float {exact_ms:.1f} ms, int8 {small_ms:.1f} ms "
        f"({exact_ms / small_ms:.2f}x)"
    )
    print(f"cosine of a text's two vectors: mean {same.mean():.4f}, min {same.min():.4f}")
    print(
        f"similarity of a pair, int8 minus float: mean {moved.mean():+.4f}, "
        f"mean |.| {np.abs(moved).mean():.4f}, 99th percentile |.| "
        f"{np.percentile(np.abs(moved), 99):.4f}"
    )
    print(
        f"duplicates at {args.threshold}: float {a.sum()}, int8 {b.sum()}; the same verdict on "
        f"{(a == b).mean():.1%} of the stream"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
