"""Kinds of failure of a venue finder, grouped by what went wrong rather than by the words of
the answer: the kind of place asked for, what came back (the judged venue's kind, or
nothing) and the wishes the judged venue breaks. An assistant whose answers are templates
("I found 5 places. The best is X") gives a run three or four answer-text modes, however
different its faults; these kinds tell them apart.

    .venv/bin/python bench/failure_kinds.py /tmp/foreign       # a `stellar compare` folder

prints, per algorithm, the kinds each run found (mean ± std over seeds) and Mann-Whitney U
with Vargha-Delaney A12 of every algorithm against random.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path

from scipy.stats import mannwhitneyu

from stellar.analysis.statistics import a12
from stellar.archive import open_run


def broken_wishes(request: dict, venue: dict) -> tuple[str, ...]:
    checks = {
        "cuisine": lambda x: venue.get("cuisine") == x,
        "price": lambda x: venue.get("price") == x,
        "rating": lambda x: (venue.get("rating") or 0) >= float(x),
        "payment": lambda x: x in (venue.get("payment") or []),
        "parking": lambda x: not x or bool(venue.get("parking")),
    }
    return tuple(k for k, ok in checks.items() if request.get(k) is not None and not ok(request[k]))


def failure_kind(details: dict, data: object) -> tuple:
    request = details.get("request") or {}
    judged = details.get("judged_venue") or {}
    venues = data if isinstance(data, list) else []
    if not venues or judged.get("index") is None or judged["index"] >= len(venues):
        return (request.get("category"), "nothing")
    venue = venues[judged["index"]]
    return (request.get("category"), venue.get("category"), broken_wishes(request, venue))


def run_kinds(run_dir: Path) -> set[tuple]:
    with open_run(run_dir) as archive:
        return {
            failure_kind(r.details, r.response_data)
            for r in archive.records()
            if r.is_failure and not r.final_excluded
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiment", type=Path, help="a stellar compare --out folder")
    args = parser.parse_args()
    counts: dict[str, list[int]] = defaultdict(list)
    for run_dir in sorted((args.experiment / "runs").iterdir()):
        algorithm = run_dir.name.rsplit("-s", 1)[0]
        counts[algorithm].append(len(run_kinds(run_dir)))
    for algorithm, found in counts.items():
        line = f"{algorithm:15} {statistics.mean(found):6.1f} ± {statistics.pstdev(found):4.1f}"
        if algorithm != "random" and "random" in counts:
            p = mannwhitneyu(found, counts["random"]).pvalue
            line += f"   vs random: p = {p:.3g}, A12 = {a12(found, counts['random']):.2f}"
        print(line)


if __name__ == "__main__":
    main()
