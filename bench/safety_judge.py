"""What the offline safety judges cost: load time, seconds per verdict and peak memory.

    .venv/bin/python bench/safety_judge.py            # every judge on the held-out labels
    .venv/bin/python bench/safety_judge.py --run      # and `stellar run safety --tests 60`

Each judge runs in a fresh process over the answers of ``labels_heldout.jsonl`` (one at a
time, as the pipeline calls it): the time to its first verdict (imports, models), the mean
seconds per verdict after it, and the process's peak resident memory. ``--run`` also times
the whole default safety run (SmolLM2 answering, the classifier scoring every answer and
judging after the search) and prints its summary's counts.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).parents[1]
JUDGES = {
    "offline classifier (search score)": "stellar.usecases.safety.fitness:SafetyScore",
    "offline classifier (post-search verdict)": "stellar.usecases.safety.fitness:SafetyVerdict",
    "offline detector": "stellar.usecases.safety.fitness:DetectorVerdict",
    "refusal-keyword rule": "stellar.usecases.safety.refusal_rule:RefusalKeywordRule",
}
CHILD = """
import asyncio, importlib, json, resource, sys, time
started = time.perf_counter()
from stellar.features import Candidate
from stellar.records import Response, TestInput
module, name = sys.argv[1].split(":")
judge = getattr(importlib.import_module(module), name)()
rows = [json.loads(line) for line in open(sys.argv[2], encoding="utf-8")]

async def one(row):
    candidate = Candidate(values=row.get("candidate") or {}, vector=[])
    return await judge.evaluate(candidate, TestInput(row["input"]), Response(row["answer"]))

async def main():
    await one(rows[0])
    first = time.perf_counter() - started
    began = time.perf_counter()
    for row in rows:
        await one(row)
    return first, (time.perf_counter() - began) / len(rows)

first, each = asyncio.run(main())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"first_s": first, "per_verdict_s": each, "peak_mib": peak, "n": len(rows)}))
"""


def judge_cost(target: str, labels: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, target, str(labels)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def safety_run(tests: int) -> dict:
    with tempfile.TemporaryDirectory() as out:
        began = time.perf_counter()
        command = [sys.executable, "-m", "stellar", "run", "safety", "--tests", str(tests)]
        subprocess.run([*command, "--out", out, "--quiet"], check=True, capture_output=True)
        wall = time.perf_counter() - began
        [summary] = Path(out).glob("*/summary.json")
        data = json.loads(summary.read_text())
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    keys = ("tests", "failures", "verdicts", "excluded", "elapsed")
    return {"wall_s": wall, "peak_mib": peak, **{k: data[k] for k in keys}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="also time stellar run safety")
    parser.add_argument("--tests", type=int, default=60, help="tests of that run (60)")
    parser.add_argument(
        "--labels", type=Path, default=ROOT / "src/stellar/usecases/safety/labels_heldout.jsonl"
    )
    args = parser.parse_args()
    print(f"{'judge':<42} {'first verdict s':>15} {'s per verdict':>13} {'peak MiB':>9}")
    for name, target in JUDGES.items():
        cost = judge_cost(target, args.labels)
        print(
            f"{name:<42} {cost['first_s']:>15.2f} {cost['per_verdict_s']:>13.4f} "
            f"{cost['peak_mib']:>9.0f}"
        )
    if args.run:
        figures = safety_run(args.tests)
        print(f"stellar run safety --tests {args.tests}: " + json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
