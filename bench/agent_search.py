"""Does the search find more of an agent's faults than random and a fixed task list?

    .venv/bin/stellar compare navi-agent --algorithms surrogate,random,task-list \\
        --seeds 10 --tests 200 --out /tmp/agent-cmp --parallel 1
    .venv/bin/python bench/agent_search.py /tmp/agent-cmp [--read 20]

Per algorithm (mean ± std over seeds): failing tests, distinct signatures (the fitness's
``mode``: first violated check, tool and argument, who is at fault, the feature behind it),
distinct faults (the signature without the feature behind it: check, tool, argument, who),
and Mann-Whitney U with Vargha-Delaney A12 of each against random. ``--read N`` prints N
failures of the first algorithm drawn at random over its runs, with their transcripts and
tool calls, for a person to read and say whose fault each is.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections import defaultdict
from pathlib import Path

from scipy.stats import mannwhitneyu

from stellar.analysis.conversation_view import conversation_view
from stellar.analysis.statistics import a12
from stellar.archive import open_run
from stellar.records import MODE_KEY, TestRecord


def fault(signature: str) -> str:
    """A signature without the feature behind it: "state: not done book_table [agent]"."""
    return signature.split(" (")[0]


def run_failures(run_dir: Path) -> list[TestRecord]:
    with open_run(run_dir) as archive:
        return [record for record in archive.records() if record.is_failure]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", type=Path, help="a `stellar compare` folder")
    parser.add_argument("--read", type=int, default=0, help="failures to print for reading")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    by_algorithm: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    failures_of: dict[str, list[TestRecord]] = defaultdict(list)
    for run_dir in sorted((args.experiment / "runs").iterdir()):
        algorithm = run_dir.name.rsplit("-s", 1)[0]
        failed = run_failures(run_dir)
        signatures = {r.details.get(MODE_KEY, "") for r in failed}
        numbers = by_algorithm[algorithm]
        numbers["failures"].append(len(failed))
        numbers["signatures"].append(len(signatures))
        numbers["faults"].append(len({fault(s) for s in signatures}))
        failures_of[algorithm] += failed
    baseline = by_algorithm.get("random")
    for algorithm, numbers in by_algorithm.items():
        print(f"\n{algorithm} ({len(numbers['failures'])} seeds)")
        for name, values in numbers.items():
            line = f"  {name:10} {statistics.mean(values):7.1f} ± {statistics.stdev(values):5.1f}"
            if baseline is not None and algorithm != "random":
                p = mannwhitneyu(values, baseline[name], alternative="two-sided").pvalue
                ratio = statistics.mean(values) / max(statistics.mean(baseline[name]), 1e-9)
                effect = a12(values, baseline[name])
                line += f"   vs random: {ratio:4.2f}x, p = {p:.4f}, A12 = {effect:.2f}"
            print(line)
    if args.read:
        first = next(iter(by_algorithm))
        sample = random.Random(args.seed).sample(failures_of[first], args.read)
        for number, record in enumerate(sample, 1):
            print(f"\n--- {number}. {record.details.get(MODE_KEY)}")
            print(f"values: {record.candidate}")
            print(f"reason: {record.details.get('reason')}")
            print(conversation_view(record))


if __name__ == "__main__":
    main()
