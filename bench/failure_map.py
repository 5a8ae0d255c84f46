"""Coverage of the failure map: how much of what a large random run finds each search reaches.

    .venv/bin/stellar run navi --algorithm random --tests 5000 --seed 100 --out /tmp/map
    .venv/bin/stellar compare navi --algorithms surrogate,random --seeds 10 --tests 100 \\
        --out /tmp/eval-100
    .venv/bin/python bench/failure_map.py /tmp/map/navi-random-* /tmp/eval-100 [/tmp/eval-300 ...]

The *map* is the large run's failures: their failing 2-way cells (feature = value pairs of a
failing test) and their failure modes (grouped as a run groups them: by the objectives that
failed and the answer's meaning, :class:`stellar.modes.ModeTracker`). For every run of each
experiment it prints the share of the map's failing cells and of its modes that the run's
failures reach (a run's failure joins a map mode when it would join it in the map's own
grouping; a failure that opens a new mode reaches none), then the mean per algorithm and,
against random, the Mann-Whitney U p-value and Vargha-Delaney A12.
"""

from __future__ import annotations

import argparse
import copy
import csv
import statistics
from collections import defaultdict
from pathlib import Path

from stellar.analysis.failure_modes import run_thresholds
from stellar.analysis.interactions import failure_pairs
from stellar.analysis.statistics import a12, mann_whitney
from stellar.archive import open_run
from stellar.modes import ModeTracker, failing_test, mode_embedder


def failures(run_dir: Path) -> list:
    with open_run(run_dir) as archive:
        found = [r for r in archive.records(failures_only=True) if r.is_failure]
    return sorted(found, key=lambda r: (r.generation, r.index))


def map_of(run_dir: Path) -> tuple[ModeTracker, set]:
    tracker = ModeTracker(mode_embedder("minilm-int8"))
    failing = failures(run_dir)
    tracker.assign([failing_test(r, run_thresholds(run_dir)) for r in failing])
    return tracker, failure_pairs(failing)


def reached(run_dir: Path, tracker: ModeTracker, cells: set) -> tuple[float, float]:
    failing = failures(run_dir)
    # the map's modes (its embedder shared, not copied); a run's new ones open after them
    mine = copy.deepcopy(tracker, {id(tracker.embedder): tracker.embedder})
    known = len(tracker)
    ids = mine.assign([failing_test(r, run_thresholds(run_dir)) for r in failing])
    modes = {i for i in ids if i < known}
    return len(failure_pairs(failing) & cells) / len(cells), len(modes) / known


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("map", type=Path, help="the large random run's directory")
    parser.add_argument("experiments", type=Path, nargs="+", help="stellar compare directories")
    args = parser.parse_args()
    tracker, cells = map_of(args.map)
    print(f"map: {len(cells)} failing 2-way cells, {len(tracker)} failure modes")
    for experiment in args.experiments:
        rows = list(csv.DictReader((experiment / "report" / "runs.csv").open()))
        shares: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for row in rows:
            shares[row["algorithm"]].append(reached(Path(row["run_dir"]), tracker, cells))
        tests = rows[0]["tests"] if rows else "?"
        print(f"\n{experiment} ({tests} tests a run)")
        print(f"{'algorithm':16} {'runs':>4} {'cells':>7} {'modes':>7}")
        for algorithm, values in shares.items():
            cell, mode = zip(*values, strict=True)
            line = f"{algorithm:16} {len(values):4} {statistics.mean(cell):7.1%}"
            print(f"{line} {statistics.mean(mode):7.1%}")
        base = shares.get("random")
        for algorithm, values in shares.items():
            if algorithm == "random" or not base:
                continue
            for k, what in ((0, "cells"), (1, "modes")):
                x, y = [v[k] for v in values], [v[k] for v in base]
                print(
                    f"  {algorithm} vs random, {what}: p = {mann_whitney(x, y):.4f}, "
                    f"A12 = {a12(x, y):.2f}"
                )


if __name__ == "__main__":
    main()
