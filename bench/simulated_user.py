"""How much of the user a model plays acceptably, and what it costs (issue 43).

    make test-servers   # once: builds llama-cpp-python into .venv-servers (10-30 min)
    .venv-servers/bin/python -m llama_cpp.server --port 8093 --n_ctx 2048 \\
        --model "$(find .venv -name 'SmolLM2-135M-Instruct*.gguf')" &
    .venv/bin/python bench/simulated_user.py \\
        --generator openai-compatible:smollm2@http://127.0.0.1:8093/v1 --tests 20

For each conversation use case it runs ``stellar run USE_CASE --generator MODEL`` (seed 1,
``--no-cache``) and the same run offline (the template's turns), and prints the share of the
turns the model was asked to write that it wrote acceptably (per act), why the others were
rejected (first reason, counted), and the seconds per conversation with and without the
model. Every turn kept as the model's is written to ``OUT/kept.txt``, one per line with its
act, for a person to read: that reading, not this script, says whether they are plausible.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from stellar.archive import open_run
from stellar.records import PLAN_KEY
from stellar.summary import simulated_user_lines

USE_CASES = ("navi-dialogue", "safety-dialogue")


def run(use_case: str, tests: int, out: Path, generator: str | None) -> Path:
    """One run; its run directory (a run already finished in ``out`` is kept: rerun the
    script after an interruption and only what is missing runs)."""
    done = [p.parent for p in out.glob("*/summary.json")]
    if done:
        return done[0]
    command = [sys.executable, "-m", "stellar", "run", use_case, "--tests", str(tests),
               "--seed", "1", "--quiet", "--no-cache", "--out", str(out)]  # fmt: skip
    if generator:
        command += ["--generator", generator]
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode not in (0, 1):  # 1: failures found
        raise SystemExit(f"{use_case}: stellar run failed:\n{finished.stderr[-2000:]}")
    [run_dir] = [p.parent for p in out.glob("*/summary.json")]
    return run_dir


def read(run_dir: Path) -> tuple[dict, list[tuple[str, str]], Counter]:
    """The run's summary, the turns kept as the model's (act, text), the rejections' reasons."""
    summary = json.loads((run_dir / "summary.json").read_text())
    kept, why = [], Counter()
    with open_run(run_dir) as archive:
        for record in archive.records():
            for turn in (record.details.get(PLAN_KEY) or {}).get("turns", []):
                if turn.get("source") != "template":
                    kept.append((turn["act"], turn["text"]))
                elif turn.get("rejected"):
                    why[turn["rejected"].split(";")[0].split(" (")[0]] += 1
    return summary, kept, why


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generator", required=True, help="the model that plays the user")
    parser.add_argument("--tests", type=int, default=20, help="conversations per use case")
    parser.add_argument("--out", type=Path, default=Path("/tmp/simulated-user"))
    parser.add_argument("--use-cases", default=",".join(USE_CASES))
    args = parser.parse_args()
    lines = []
    for use_case in args.use_cases.split(","):
        model_dir = run(use_case, args.tests, args.out / use_case / "model", args.generator)
        plain_dir = run(use_case, args.tests, args.out / use_case / "template", None)
        summary, kept, why = read(model_dir)
        plain = json.loads((plain_dir / "summary.json").read_text())
        per = summary["elapsed"] / max(1, summary["tests"])
        plain_per = plain["elapsed"] / max(1, plain["tests"])
        line, warning = simulated_user_lines(summary.get("simulated_user") or {})
        print(f"\n== {use_case}: {summary['tests']} conversations")
        print(line or "simulated user: no turn was asked of the model")
        if warning:
            print(f"warning: {warning}")
        print(f"seconds per conversation: {per:.1f} with the model, {plain_per:.2f} without")
        print("rejected (first reason):", ", ".join(f"{r} {n}" for r, n in why.most_common()))
        lines += [f"{use_case}\t{act}\t{text}" for act, text in kept]
    (args.out / "kept.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"\n{len(lines)} turns kept as the model's: {args.out / 'kept.txt'} (read them)")


if __name__ == "__main__":
    main()
