"""Benchmark MiniLM embedding throughput and DuplicateFilter check cost on this machine.

Usage::

    .venv/bin/python bench/embeddings.py --sizes 1000,10000,100000 --embed-n 512
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable

import numpy as np

from stellar.text.duplicates import DuplicateFilter
from stellar.text.embeddings import MINILM_DIM, MiniLMEmbedder

# Pieces for realistic, varied in-car / assistant utterances.
_TEMPLATES = [
    "navigate to the nearest {place}",
    "find me a {adj} {place} {where}",
    "is there a {place} {where}",
    "how long does it take to get to the {place} {when}",
    "take me to a {adj} {place} but avoid {avoid}",
    "can you show me {adj} {place}s {where} please",
    "I need a {place} {when}, preferably {adj}",
    "add a stop at a {place} on the way {when}",
    "what's the traffic like on the way to the {place} {when}",
    "hey, are there any {adj} {place}s open {when} {where}?",
]
_SLOTS = {
    "place": "gas station|italian restaurant|hospital|pharmacy|parking garage|charging station|"
    "coffee shop|hotel|supermarket|car wash|museum|train station|sushi bar|bakery|airport",
    "adj": "cheap|quiet|family-friendly|well rated|24-hour|vegan|small|popular|open|pet-friendly",
    "where": "nearby|near me|around here|close to downtown|within five miles|along my route|"
    "near the highway exit|in the next town",
    "when": "tonight|right now|tomorrow morning|after work|this weekend|later",
    "avoid": "tolls|highways|the city centre|ferries|construction zones",
}


def make_utterances(n: int, seed: int) -> list[str]:
    """``n`` distinct utterances drawn from templates and slot fillers."""
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    for _ in range(100 * n):
        template = rng.choice(_TEMPLATES)
        seen.setdefault(template.format(**{k: rng.choice(v.split("|")) for k, v in _SLOTS.items()}))
        if len(seen) == n:
            return list(seen)
    raise ValueError(f"could not generate {n} distinct utterances")


def fmt_duration(seconds: float) -> str:
    """Human-readable duration: µs below one millisecond, else ms."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} µs"
    return f"{seconds * 1e3:8.2f} ms"


def time_embedding(embedder: MiniLMEmbedder, texts: list[str], batch_size: int) -> float:
    """Seconds to embed ``texts`` in calls of ``batch_size`` texts."""
    start = time.perf_counter()
    for i in range(0, len(texts), batch_size):
        embedder.embed(texts[i : i + batch_size])
    return time.perf_counter() - start


def bench_embedding(n: int, batch_sizes: list[int], seed: int) -> None:
    """Print MiniLM throughput for each batch size, plus model load and cache-hit figures."""
    import torch

    texts = make_utterances(n, seed)
    embedder = MiniLMEmbedder()
    start = time.perf_counter()
    embedder.embed(["warm up the model", "and its kernels"])
    print(
        f"\n(a) MiniLM embedding throughput: all-MiniLM-L6-v2 on CPU, "
        f"torch threads={torch.get_num_threads()}, {n} distinct generated utterances "
        f"(mean {statistics.mean(len(t) for t in texts):.0f} chars)"
    )
    print(f"    model load + first call: {time.perf_counter() - start:.2f} s")
    print(f"    {'batch size':>10}  {'total':>9}  {'texts/s':>9}  {'per text':>11}")
    for batch_size in batch_sizes:
        embedder.clear_cache()
        embedder.batch_size = batch_size
        elapsed = time_embedding(embedder, texts, batch_size)
        print(
            f"    {batch_size:>10}  {elapsed:>7.2f} s  {n / elapsed:>9.1f}  "
            f"{fmt_duration(elapsed / n):>11}"
        )
    elapsed = time_embedding(embedder, texts, 64)
    print(
        f"    {'64 cached':>10}  {elapsed:>7.2f} s  {n / elapsed:>9.0f}  "
        f"{fmt_duration(elapsed / n):>11}   (all texts already in the cache)"
    )


def random_unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """``n`` random L2-normalised float32 vectors."""
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def time_checks(
    archive: np.ndarray, queries: np.ndarray, per_round: int, check: Callable
) -> list[float]:
    """Per-call seconds of ``check(filter, query)``, refilling a fresh filter every round.

    Each round starts from exactly ``archive`` (rebuilt outside the timed region), so the
    archive grows by at most ``per_round`` accepted queries during measurement. An
    untimed check of a duplicate (which is not stored) warms each fresh filter up.
    """
    times: list[float] = []
    for start in range(0, len(queries), per_round):
        dup = DuplicateFilter(MiniLMEmbedder(), threshold=0.8)  # model is never loaded
        dup.add_vectors(archive)
        dup.check_vector(archive[0])
        for query in queries[start : start + per_round]:
            t0 = time.perf_counter()
            check(dup, query)
            times.append(time.perf_counter() - t0)
    return times


def bench_duplicates(sizes: list[int], rounds: int, seed: int) -> None:
    """Print mean per-call cost of check (1 vector) and check_batch (20 vectors)."""
    rng = np.random.default_rng(seed)
    print(
        f"\n(b) DuplicateFilter check cost. Archive = random unit {MINILM_DIM}-d float32 "
        "vectors (not real embeddings,\n    so it builds fast; cost does not depend on "
        "content). Embedding time excluded: the checks\n    use check_vector / "
        "check_vectors on precomputed query vectors. Mean ± stdev over trials."
    )
    print(
        f"    {'archive':>9}  {'check (1 vector)':>22}  {'check_batch (20)':>22}  "
        f"{'per batch item':>14}  {'trials':>7}"
    )
    for size in sizes:
        archive = random_unit(rng, size, MINILM_DIM)
        singles = random_unit(rng, rounds * 10, MINILM_DIM)
        batches = random_unit(rng, rounds * 20, MINILM_DIM).reshape(rounds, 20, MINILM_DIM)
        one = time_checks(archive, singles, 10, DuplicateFilter.check_vector)
        twenty = time_checks(archive, batches, 1, DuplicateFilter.check_vectors)
        print(
            f"    {size:>9,}  {fmt_duration(statistics.mean(one))} ± "
            f"{fmt_duration(statistics.stdev(one)).strip():>9}  "
            f"{fmt_duration(statistics.mean(twenty))} ± "
            f"{fmt_duration(statistics.stdev(twenty)).strip():>9}  "
            f"{fmt_duration(statistics.mean(twenty) / 20):>14}  {len(one):>3}/{len(twenty):<3}"
        )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="1000,10000,100000",
        help="comma-separated archive sizes for the duplicate check",
    )
    parser.add_argument(
        "--embed-n", type=int, default=512, help="number of utterances to embed (0 skips part a)"
    )
    parser.add_argument("--batch-sizes", default="1,64", help="embedding batch sizes")
    parser.add_argument(
        "--rounds",
        type=int,
        default=30,
        help="rounds per archive size (10 single checks + 1 batch each)",
    )
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(f"CPU cores: {os.cpu_count()}, numpy {np.__version__}")
    started = time.perf_counter()
    if args.embed_n > 0:
        batch_sizes = [int(s) for s in args.batch_sizes.split(",")]
        bench_embedding(args.embed_n, batch_sizes, args.seed)
    bench_duplicates([int(s) for s in args.sizes.split(",")], args.rounds, args.seed)
    print(f"\ntotal bench time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
