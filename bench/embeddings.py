"""MiniLM embedding throughput, and the cost and verdicts of DuplicateFilter checks by archive size.

Usage::

    .venv/bin/python bench/embeddings.py                      # (a), (b): 10k, 100k, 1M (~1 h)
    .venv/bin/python bench/embeddings.py --embed-n 0 --sizes 5000,20000,50000 --kinds minilm

(b) prints, per archive size and kind of vector, the cost per check (a batch of 20 checked
with ``check_vectors``, divided by 20; embedding excluded) of the plain NumPy scan (one float32
matrix product over every stored vector: the floor of an exact scan), of the filter on its
full scan (``index_from=None``) and on its scan of projections (the default ``index_from``),
and how often the two agree on the same stream of checks: all of them, and those whose exact
similarity lies within 0.02 of the threshold. Half the checks are
held-out vectors of the kind, half planted at a cosine drawn from [t - 0.05, t + 0.05] to a
random stored vector. Kinds:

* ``random``: random unit 384-d vectors (the worst case for projections: no structure);
* ``minilm``: MiniLM embeddings of generated navi utterances (``--real-n`` of them, embedded
  once and cached), then Gaussian samples with their mean and covariance for larger sizes;
* ``hashing``: the hashing embedder (512-d) on distinct navi utterances, at every size.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import time
from collections.abc import Callable
from importlib.resources import files

import numpy as np

from stellar.features import load_feature_space
from stellar.paths import cache_root
from stellar.text.duplicates import INDEX_FROM, DuplicateFilter
from stellar.text.embeddings import MINILM_DIM, HashingEmbedder, MiniLMEmbedder
from stellar.usecases.navi.realiser import realise

BATCH = 20  # a generation


def navi_utterances(n: int, seed: int) -> list[str]:
    """``n`` distinct utterances of the built-in use case's offline realiser."""
    space = load_feature_space(str(files("stellar.usecases.navi") / "features.yaml"))
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen.setdefault(realise(space.random_values(rng), rng))
    return list(seen)


def fmt_duration(seconds: float) -> str:
    """Human-readable duration: µs below one millisecond, else ms."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:6.1f} µs"
    return f"{seconds * 1e3:6.2f} ms"


# ------------------------------------------------------------------ (a) embedding throughput


def bench_embedding(n: int, batch_sizes: list[int], seed: int) -> None:
    """Print MiniLM throughput for each batch size, plus model load and cache-hit figures."""
    import torch

    texts = navi_utterances(n, seed)
    embedder = MiniLMEmbedder()
    start = time.perf_counter()
    embedder.embed(["warm up the model", "and its kernels"])
    print(
        f"\n(a) MiniLM embedding throughput: all-MiniLM-L6-v2 on CPU, torch threads="
        f"{torch.get_num_threads()}, {n} distinct navi utterances "
        f"(mean {statistics.mean(len(t) for t in texts):.0f} chars)"
    )
    print(f"    model load + first call: {time.perf_counter() - start:.2f} s")
    print(f"    {'batch size':>10}  {'total':>9}  {'texts/s':>9}  {'per text':>9}")
    for batch_size in [*batch_sizes, 0]:
        if batch_size:  # 0: a second pass, every text already cached
            embedder.clear_cache()
            embedder.batch_size = batch_size
        start = time.perf_counter()
        for i in range(0, n, batch_size or 64):
            embedder.embed(texts[i : i + (batch_size or 64)])
        elapsed = time.perf_counter() - start
        label = batch_size or "64 cached"
        per_text = fmt_duration(elapsed / n)
        print(f"    {label:>10}  {elapsed:>7.2f} s  {n / elapsed:>9.0f}  {per_text}")


# ------------------------------------------------------------------ vectors


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def minilm_vectors(n: int, seed: int) -> np.ndarray:
    """MiniLM embeddings of ``n`` navi utterances, cached under the STELLAR cache root."""
    path = cache_root() / "bench" / f"navi-minilm-{n}-s{seed}.npy"
    if path.exists():
        return np.load(path)
    print(f"    embedding {n:,} navi utterances with MiniLM once (cached in {path}) ...")
    embedder = MiniLMEmbedder()
    texts = navi_utterances(n, seed)
    vectors = np.concatenate([embedder.embed(texts[i : i + 512]) for i in range(0, n, 512)])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


class Source:
    """Vectors of one kind for one archive size: the archive, held-out checks, and directions
    for planted checks, none given twice."""

    def __init__(self, kind: str, rng: np.random.Generator, real_n: int, seed: int) -> None:
        self.kind, self.rng, self.seed, self.real_n = kind, rng, seed, real_n
        self.dim = 512 if kind == "hashing" else MINILM_DIM

    def split(self, archive_n: int, checks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(archive, held_out, directions)`` of ``archive_n``, ``checks`` and ``checks`` rows."""
        total = archive_n + 2 * checks
        if self.kind == "random":
            pool = self.sample(self.rng.standard_normal, total)
            return pool[:archive_n], pool[archive_n:-checks], pool[-checks:]
        if self.kind == "hashing":
            texts = navi_utterances(total, self.seed)
            pool = np.concatenate(
                [HashingEmbedder().embed(texts[i : i + 4096]) for i in range(0, total, 4096)]
            )
            return pool[:archive_n], pool[archive_n:-checks], pool[-checks:]
        real = minilm_vectors(self.real_n, self.seed)  # held out: its last ``checks`` rows
        real, held_out = real[:-checks], real[-checks:]
        mean = real.mean(axis=0, dtype=np.float64)
        factor = np.linalg.cholesky(np.cov(real.T.astype(np.float64)) + 1e-9 * np.eye(self.dim))

        def gaussian(shape: tuple[int, int]) -> np.ndarray:
            return mean + self.rng.standard_normal(shape) @ factor.T

        extra = self.sample(gaussian, max(archive_n - len(real), 0) + checks)
        archive = np.concatenate([real[:archive_n], extra[:-checks]])
        return archive, held_out, extra[-checks:]

    def sample(self, draw: Callable[[tuple[int, int]], np.ndarray], n: int) -> np.ndarray:
        """``n`` unit rows of ``draw((rows, dim))``, drawn 65,536 rows at a time."""
        out = np.empty((n, self.dim), dtype=np.float32)
        for start in range(0, n, 65536):
            rows = min(65536, n - start)
            out[start : start + rows] = unit(draw((rows, self.dim)))
        return out


def planted(rng: np.random.Generator, archive: np.ndarray, fresh: np.ndarray, t: float):
    """One vector per ``fresh`` row at a cosine in [t - 0.05, t + 0.05] to an archive row."""
    base = archive[rng.integers(0, len(archive), len(fresh))]
    cosine = rng.uniform(t - 0.05, min(t + 0.05, 1.0), (len(fresh), 1)).astype(np.float32)
    away = unit(fresh - np.sum(fresh * base, axis=1, keepdims=True) * base)
    return unit(cosine * base + np.sqrt(1 - cosine**2) * away)


# ------------------------------------------------------------------ (b) duplicate checks


def per_check(check: Callable[[np.ndarray], object], batches: np.ndarray) -> float:
    """Mean seconds per check of ``check(batch)`` over ``batches`` (the first one warms up)."""
    times = []
    for batch in batches:
        start = time.perf_counter()
        check(batch)
        times.append(time.perf_counter() - start)
    return statistics.mean(times[1:]) / BATCH


def filled(archive: np.ndarray, index_from: int | None, t: float) -> tuple[DuplicateFilter, float]:
    """A filter holding ``archive``, and the seconds it took to load (and index) it."""

    class Dim:  # the checks use vectors only; no embedder is ever called
        dim = archive.shape[1]

    dup = DuplicateFilter(Dim(), t, len(archive) + 4096, index_from=index_from)
    start = time.perf_counter()
    dup.add_vectors(archive)
    return dup, time.perf_counter() - start


def bench_size(source: Source, size: int, rounds: int, t: float, rng: np.random.Generator):
    archive, fresh, directions = source.split(size, rounds * BATCH // 2)
    checks = np.concatenate([fresh, planted(rng, archive, directions, t)])
    order = rng.permutation(len(checks))
    batches = checks[order].reshape(rounds, BATCH, -1)
    exact, _ = filled(archive, None, t)
    projected, load = filled(archive, min(INDEX_FROM, size), t)
    del archive, fresh, directions, checks
    stored = exact.vectors
    floor = per_check(lambda b: np.max(stored @ b.T, axis=0), batches)
    verdicts: dict[str, list] = {"exact": [], "projected": []}
    times: dict[str, list[float]] = {"exact": [], "projected": []}
    for batch in batches:
        for name, dup in (("exact", exact), ("projected", projected)):
            start = time.perf_counter()
            verdicts[name] += dup.check_vectors(batch)
            times[name].append(time.perf_counter() - start)
    (e_dup, e_sim), (g_dup, g_sim) = (np.array(verdicts[k]).T for k in ("exact", "projected"))
    e_dup, g_dup = e_dup.astype(bool), g_dup.astype(bool)
    agree, same = e_dup == g_dup, np.abs(e_sim - g_sim) <= 1e-6
    held_out = order < rounds * BATCH // 2
    assert projected._index is not None
    found = [c for b in batches for c in projected._index.candidates(b, t, size)]
    left = [size if c is None else len(c) for c in found]
    near = np.abs(e_sim - t) <= 0.02
    cost = {k: statistics.mean(v[1:]) / BATCH for k, v in times.items()}
    print(
        f"    {source.kind:>7} {size:>9,}  {fmt_duration(floor)}  {fmt_duration(cost['exact'])}"
        f"  {fmt_duration(cost['projected'])}  {100 * agree.mean():6.2f}% "
        f"{100 * agree[held_out].mean():6.2f}% {100 * agree[~held_out].mean():6.2f}% "
        f"{100 * agree[near].mean():6.2f}% of {near.sum():>4}  {100 * e_dup.mean():4.0f}%"
        f"  {int(np.sum(e_dup & ~g_dup)):>3}  {100 * same.mean():4.0f}%  {np.mean(left):6.1f}"
        f"  {load:6.1f} s  "
        f"{exact.memory_bytes / 2**20:6.0f} MiB  "
        f"{(projected.memory_bytes - exact.memory_bytes) / 2**20:6.0f} MiB"
    )


def bench_duplicates(kinds: list[str], sizes: list[int], args: argparse.Namespace) -> None:
    print(
        f"\n(b) DuplicateFilter checks, threshold {args.threshold}: cost per check in batches "
        f"of {BATCH}, {args.rounds * BATCH} checks per row. The filter's default scans "
        f"below {INDEX_FROM:,} stored vectors and scans their projections from then on."
    )
    print(
        f"    {'kind':>7} {'archive':>9}  {'numpy scan':>9}  {'full':>9}  {'projected':>9}  "
        f"{'agree':>7} {'held':>7} {'planted':>7} {'near threshold':>15}  {'dups':>4}  "
        f"{'missed':>3}  {'same':>5}  {'left':>6}  "
        f"{'load':>8}  {'matrix':>10}  {'index':>10}"
    )
    for kind in kinds:
        rng = np.random.default_rng(args.seed)
        for size in sizes:
            source = Source(kind, rng, args.real_n, args.seed)
            bench_size(source, size, args.rounds, args.threshold, rng)
    print(
        "    numpy scan: one float32 matrix product over every stored vector (the floor of a\n"
        "    scan); full/projected: the filter with index_from=None / its default; agree: the\n"
        "    verdicts of the two are equal; dups: share of checks the full scan calls\n"
        "    duplicates; missed: duplicates the projected scan called new; same: it reported\n"
        "    the exact maximum similarity; left: stored vectors compared exactly per check;\n"
        "    load: add_vectors(archive) with projections (what a resume pays); matrix: the\n"
        "    float32 vectors both keep; index: what the projections add."
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="archive sizes")
    parser.add_argument("--kinds", default="random,minilm,hashing", help="kinds of vectors")
    parser.add_argument("--rounds", type=int, default=100, help="batches of 20 checks per row")
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument(
        "--real-n", type=int, default=20000, help="navi utterances embedded with MiniLM"
    )
    parser.add_argument("--embed-n", type=int, default=512, help="utterances for (a); 0 skips")
    parser.add_argument("--batch-sizes", default="1,64", help="embedding batch sizes for (a)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(f"CPU cores: {os.cpu_count()}, numpy {np.__version__}")
    started = time.perf_counter()
    if args.embed_n > 0:
        bench_embedding(args.embed_n, [int(s) for s in args.batch_sizes.split(",")], args.seed)
    sizes = [int(s) for s in args.sizes.split(",")]
    bench_duplicates(args.kinds.split(","), sizes, args)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"\ntotal bench time: {time.perf_counter() - started:.1f} s, peak RSS {peak:.1f} GiB")


if __name__ == "__main__":
    main()
