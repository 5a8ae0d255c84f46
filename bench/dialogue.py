"""Conversations against single-turn tests: run time, failures and modes, side by side.

    .venv/bin/python bench/dialogue.py                  # 200 tests each, 3 repeats
    .venv/bin/python bench/dialogue.py --tests 100 --repeats 1

Runs `stellar run navi` and `stellar run navi-dialogue` (offline, seed 0) with the same
test budget and prints the median run time (testing and judging, from summary.json), the
ratio (issue 31's budget: a conversation run at most 3x the single-turn run), and what each
found. A test of navi-dialogue is one whole conversation.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BUDGET = 3.0  # conversations may take at most this many times the single-turn run


def run(use_case: str, tests: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "stellar.cli", "run", use_case, "--quiet"]
        command += ["--show", "0", "--tests", str(tests), "--out", out]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        [summary_file] = Path(out).glob("*/summary.json")
        summary = json.loads(summary_file.read_text())
    return {
        "run s": summary["elapsed"],
        "failures": summary["failures"],
        "modes": summary.get("modes", 0),
        "duplicates": summary["duplicates"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = {}
    for use_case in ("navi", "navi-dialogue"):
        runs = [run(use_case, args.tests) for _ in range(args.repeats)]
        rows[use_case] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"{args.tests} tests, median of {args.repeats} runs, seed 0")
    print(f"{'':16}" + "".join(f"{k:>12}" for k in rows["navi"]))
    for name, row in rows.items():
        print(f"{name:16}" + "".join(f"{v:12.1f}" for v in row.values()))
    ratio = rows["navi-dialogue"]["run s"] / rows["navi"]["run s"]
    print(f"conversation / single-turn run time: x{ratio:.2f} (budget x{BUDGET:.0f})")


if __name__ == "__main__":
    main()
