"""The framework's own budgets on the offline default: time per test at 1,000 vs 10,000 tests,
and the peak memory of the larger run.

Usage::

    .venv/bin/python bench/scale.py                          # MiniLM duplicates, as the default
    .venv/bin/python bench/scale.py --embedder hashing --suts constant --tests 1000,10000

Each size is one `stellar run` (the built-in navi use case, seed 0) in a process of its own,
``--repeats`` times, with ``--sut constant`` (an instant fixed answer: what is left is the
framework's own work, with the use case's generator and fitness) and ``--sut offline`` (the
use case's own assistant). ``--algorithm random`` (default) asks the same kind of inputs
throughout, so that time per test shows what the archive's size costs; with ``stellar`` the
search moves to longer inputs as it goes (more work per test, printed per tenth of the run).
Printed: the run's own elapsed time (summary.json: the search, after preparation) per test,
the process's wall time (model load and report included) per test, its CPU time (all
threads; no model calls) per test, and its max RSS. The budget: the median time per test at
the largest size at most 10% above that at the smallest.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ALLOWED_GROWTH = 1.10


SUTS = {"offline": "offline", "constant": "scale:constant_answer"}


async def constant_answer(text: str) -> str:
    """A system under test that costs nothing: the same answer at once."""
    return "I could not find a place that matches. Could you say more about what you need?"


def run(tests: int, sut: str, args: argparse.Namespace, out: Path) -> dict[str, float]:
    """One run of ``tests`` tests; its summary, wall time, CPU time and max RSS (MiB)."""
    embedder, seed = args.embedder, args.seed
    command = [sys.executable, "-m", "stellar.cli", "run", "--quiet", "--show", "0"]
    command += ["--algorithm", args.algorithm]
    command += ["--tests", str(tests), "--seed", str(seed), "--out", str(out)]
    command += ["--sut", SUTS[sut], "--set", f"duplicates.embedder={embedder}"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        error = process.stderr.read().decode() if process.stderr else ""
        raise SystemExit(f"stellar run failed with exit code {process.returncode}: {error}")
    [run_dir] = [p for p in out.iterdir() if p.is_dir()]
    summary = json.loads((run_dir / "summary.json").read_text())
    cpu = usage.ru_utime + usage.ru_stime
    return {
        **summary,
        "wall": wall,
        "cpu": cpu,
        "rss": usage.ru_maxrss / 1024,
        "run_dir": str(run_dir),
    }


def tenths(run_dir: str) -> dict[str, str]:
    """Per tenth of the run (by generation): the share of duplicates among the inputs
    screened, the time per screened input (ms, from the end of the tenth before), and the
    mean input length: whether time grows with the archive or with what the search asks."""
    with sqlite3.connect(f"file:{Path(run_dir) / 'archive.sqlite'}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT generation, status, started_at, finished_at, length(input_text) FROM tests"
        ).fetchall()
    last = max(r[0] for r in rows) + 1
    shares, times, lengths, end = [], [], [], None
    for tenth in range(10):
        part = [r for r in rows if tenth * last <= 10 * r[0] < (tenth + 1) * last]
        ran = [r for r in part if r[2]]
        start, end = end or min(r[2] for r in ran), max(r[3] for r in ran)
        shares.append(f"{100 * sum(r[1] == 'duplicate' for r in part) / len(part):.0f}%")
        times.append(f"{1e3 * (end - start) / len(part):.2f}")
        lengths.append(f"{statistics.mean(r[4] or 0 for r in part):.0f}")
    return {"duplicates": " ".join(shares), "ms/input": " ".join(times), "chars": " ".join(lengths)}


def measure(sut: str, sizes: list[int], args: argparse.Namespace) -> None:
    """One table: ``--repeats`` runs per size, then the growth of the median time per test."""
    print(f"\n--sut {sut}")
    print(
        f"{'tests':>7} {'run':>9} {'per test':>9} {'wall':>9} {'per test':>9} {'CPU/test':>9} "
        f"{'max RSS':>9} {'duplicates':>10} {'generations':>11}"
    )
    medians, peaks = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for tests in sizes:
            per_test = []
            for repeat in range(args.repeats):
                result = run(tests, sut, args, Path(tmp) / f"{tests}-{repeat}")
                done = max(int(result["tests"]), 1)
                screened = done + int(result["duplicates"])
                per_test.append(result["elapsed"] / done)
                print(
                    f"{done:>7,} {result['elapsed']:>7.1f} s {1e3 * per_test[-1]:>6.2f} ms "
                    f"{result['wall']:>7.1f} s {1e3 * result['wall'] / done:>6.1f} ms "
                    f"{1e3 * result['cpu'] / done:>6.1f} ms {result['rss']:>5.0f} MiB "
                    f"{100 * int(result['duplicates']) / screened:>9.0f}% "
                    f"{int(result['generations']):>11,}",
                    flush=True,
                )
            medians.append(statistics.median(per_test))
            peaks.append(result["rss"])
            for name, values in tenths(result["run_dir"]).items():
                print(f"    per tenth of the run, {name}: {values}")
    if len(medians) > 1:
        ratio = medians[-1] / medians[0]
        verdict = "within" if ratio <= ALLOWED_GROWTH else "OVER"
        print(
            f"median time per test, {sizes[-1]:,} vs {sizes[0]:,} tests: "
            f"{1e3 * medians[-1]:.2f} vs {1e3 * medians[0]:.2f} ms, x{ratio:.3f} ({verdict} the "
            f"budget of x{ALLOWED_GROWTH:.2f}); peak memory of a {sizes[-1]:,}-test run: "
            f"{peaks[-1]:.0f} MiB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", default="1000,10000", help="comma-separated run sizes")
    parser.add_argument("--suts", default="constant,offline", help="systems under test")
    parser.add_argument("--embedder", default="minilm", help="duplicates.embedder (default's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--algorithm",
        default="random",
        help="random (default): what it asks does not drift, so time per test shows what the "
        "archive's size costs; stellar: the search, whose inputs grow longer as it goes",
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs per size (median)")
    args = parser.parse_args()
    print(
        f"navi, duplicates.embedder={args.embedder}, seed {args.seed}, CPU cores: {os.cpu_count()}"
    )
    for sut in args.suts.split(","):
        measure(sut, [int(s) for s in args.tests.split(",")], args)


if __name__ == "__main__":
    main()
