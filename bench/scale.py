"""The framework's own budgets on the offline default: time per test at 1,000 vs 10,000 tests,
and the peak memory of the larger run.

Usage::

    .venv/bin/python bench/scale.py                          # MiniLM duplicates, as the default
    .venv/bin/python bench/scale.py --embedder hashing --suts constant --tests 1000,10000

Each size is one `stellar run` (the built-in navi use case, seed 0) in a process of its own,
with ``--sut constant`` (an instant fixed answer: what is left is the framework's own work,
with the use case's generator and fitness) and ``--sut offline`` (the use case's own
assistant, whose cost per test grows as the search moves to longer inputs). Printed: the
run's own elapsed time (summary.json: the search, after preparation) per test, the process's
wall time (model load and report included) per test, its CPU time (all threads; no model
calls) per test, and its max RSS. The budget: time per test at the largest size at most 10%
above the smallest.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
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


def run(tests: int, sut: str, embedder: str, seed: int, out: Path) -> dict[str, float]:
    """One run of ``tests`` tests; its summary, wall time, CPU time and max RSS (MiB)."""
    command = [sys.executable, "-m", "stellar.cli", "run", "--quiet", "--show", "0"]
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


def duplicate_curve(run_dir: str, tests: int) -> str:
    """Share of duplicates among the inputs screened, per tenth of the run (by generation)."""
    with sqlite3.connect(f"file:{Path(run_dir) / 'archive.sqlite'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT generation, status FROM tests ORDER BY generation").fetchall()
    if not rows:
        return "-"
    last = max(g for g, _ in rows) + 1
    shares = []
    for tenth in range(10):
        part = [s for g, s in rows if tenth * last <= 10 * g < (tenth + 1) * last]
        shares.append(f"{100 * sum(s == 'duplicate' for s in part) / max(len(part), 1):.0f}%")
    return " ".join(shares)


def measure(sut: str, sizes: list[int], args: argparse.Namespace) -> None:
    """One table: a run per size, then the growth of time per test."""
    print(f"\n--sut {sut}")
    print(
        f"{'tests':>7} {'run':>9} {'per test':>9} {'wall':>9} {'per test':>9} {'CPU/test':>9} "
        f"{'max RSS':>9} {'duplicates':>10} {'generations':>11}"
    )
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for tests in sizes:
            result = run(tests, sut, args.embedder, args.seed, Path(tmp) / str(tests))
            done = max(int(result["tests"]), 1)
            screened = done + int(result["duplicates"])
            result["per_test"] = result["elapsed"] / done
            print(
                f"{done:>7,} {result['elapsed']:>7.1f} s {1e3 * result['per_test']:>6.1f} ms "
                f"{result['wall']:>7.1f} s {1e3 * result['wall'] / done:>6.1f} ms "
                f"{1e3 * result['cpu'] / done:>6.1f} ms "
                f"{result['rss']:>5.0f} MiB {100 * int(result['duplicates']) / screened:>9.0f}% "
                f"{int(result['generations']):>11,}",
                flush=True,
            )
            result["curve"] = duplicate_curve(result["run_dir"], done)
            results.append(result)
    for result in results:
        print(f"duplicates per tenth of the {int(result['tests']):,}-test run: {result['curve']}")
    if len(results) > 1:
        ratio = results[-1]["per_test"] / results[0]["per_test"]
        verdict = "within" if ratio <= ALLOWED_GROWTH else "OVER"
        print(
            f"time per test, {int(results[-1]['tests']):,} vs {int(results[0]['tests']):,} "
            f"tests: x{ratio:.3f} ({verdict} the budget of x{ALLOWED_GROWTH:.2f}); "
            f"peak memory of the {int(results[-1]['tests']):,}-test run: "
            f"{results[-1]['rss']:.0f} MiB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", default="1000,10000", help="comma-separated run sizes")
    parser.add_argument("--suts", default="constant,offline", help="systems under test")
    parser.add_argument("--embedder", default="minilm", help="duplicates.embedder (default's)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        f"navi, duplicates.embedder={args.embedder}, seed {args.seed}, CPU cores: {os.cpu_count()}"
    )
    for sut in args.suts.split(","):
        measure(sut, [int(s) for s in args.tests.split(",")], args)


if __name__ == "__main__":
    main()
