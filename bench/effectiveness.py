"""STELLAR versus random search at the same number of tests, over several seeds.

    .venv/bin/python bench/effectiveness.py                       # built-in navigation use case
    .venv/bin/python bench/effectiveness.py tests/fixtures/toy/run.yaml --tests 300 --seeds 10

Prints failures per seed (distinct failing inputs; duplicates, invalid inputs and excluded
requests are not counted), the mean failure ratio, the two-sided Mann-Whitney U p-value and
the Vargha-Delaney A12 effect size of STELLAR over random search.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from stellar import event_loop
from stellar.analysis.metrics import run_metrics
from stellar.analysis.statistics import a12, a12_magnitude, mann_whitney
from stellar.config import load_config
from stellar.run import Run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", help="run configuration (default: built-in navi)")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--tests", type=int, default=300)
    parser.add_argument("--algorithms", default="stellar,random")
    args = parser.parse_args()
    algorithms = args.algorithms.split(",")
    out = tempfile.mkdtemp(prefix="stellar-bench-")
    found: dict[str, list[int]] = {a: [] for a in algorithms}
    ratios: dict[str, list[float]] = {a: [] for a in algorithms}
    print(f"{'seed':>4}  " + "  ".join(f"{a:>10}" for a in algorithms) + "   (failures)")
    began = time.monotonic()
    for seed in range(args.seeds):
        for algorithm in algorithms:
            overrides = {
                "algorithm.name": algorithm,
                "seed": seed,
                "budget.tests": args.tests,
                "budget.time": None,
                "out": out,
            }
            summary = event_loop.run(Run(load_config(args.config, overrides)).execute())
            metrics = run_metrics(summary.run_dir)
            found[algorithm].append(metrics.unique_failures)
            ratios[algorithm].append(metrics.failure_ratio)
        print(f"{seed:>4}  " + "  ".join(f"{found[a][-1]:>10}" for a in algorithms), flush=True)
    print(
        f"\n{args.tests} tests per run, {args.seeds} seeds, "
        f"{time.monotonic() - began:.0f} s in all, runs in {out}"
    )
    for algorithm in algorithms:
        print(
            f"{algorithm:>10}: mean failures {statistics.mean(found[algorithm]):7.2f}  "
            f"mean failure ratio {statistics.mean(ratios[algorithm]):.3f}"
        )
    base = algorithms[0]
    for other in algorithms[1:]:
        effect = a12(found[base], found[other])
        print(
            f"{base} vs {other}: Mann-Whitney U p = {mann_whitney(found[base], found[other]):.2g}"
            f", A12 = {effect:.2f} ({a12_magnitude(effect)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
