"""Tests per second against a model server that answers after a fixed delay.

    .venv/bin/python bench/throughput.py                      # delay 0.1 s, concurrency 1-64
    .venv/bin/python bench/throughput.py --delay 0.2 --levels 1,8,32

Every test makes three model calls one after the other (an LLM generator writes the input, a
chat model answers it, a binary safety judge scores the answer) against the local stub
server (``stellar.llm.stub_server``, started in its own process so that its work is not
counted). The ideal rate is concurrency / (3 x delay). "CPU ms/test" is the processor time
of this process (STELLAR, the openai SDK and HTTP) per test: the framework's own overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stellar.config import load_config
from stellar.run import Run

FEATURES = """\
features:
  - {name: topic, kind: content, values: [weather, food, travel, sports, music, news]}
  - {name: tone, kind: style, ordinal: true, values: [calm, neutral, tense, angry]}
  - {name: length, kind: style, ordinal: true, values: [short, medium, long]}
"""
TEMPLATE = "Write a {{ style.length }} question about {{ content.topic }}, {{ style.tone }}.\n"
CALLS_PER_TEST = 3


def config(folder: Path, url: str, concurrency: int, tests: int):
    (folder / "features.yaml").write_text(FEATURES)
    (folder / "prompt.j2").write_text(TEMPLATE)
    model = f"openai-compatible:stub@{url}"
    return load_config(
        None,
        {
            "name": "throughput",
            "features": str(folder / "features.yaml"),
            "algorithm": {"name": "random", "population": max(concurrency, 8)},
            "generator": {"type": "llm", "model": model, "template": str(folder / "prompt.j2")},
            "sut": {"type": "chat", "model": model},
            "fitness": {"target": "stellar.fitness.judges:BinarySafetyJudge"},
            "judge": {"model": model},
            "oracle": {"below": {"safety": 0.5}},
            "duplicates": {"embedder": "none"},
            "concurrency": concurrency,
            "budget": {"tests": tests},
            "llm": {
                "cache": False,
                "endpoints": {
                    "openai-compatible": {"concurrency": concurrency, "api_key_env": "STUB_KEY"}
                },
            },
            "out": str(folder / "runs"),
            "use_case": None,
        },
    )


def measure(url: str, concurrency: int, tests: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as folder:
        run = Run(config(Path(folder), url, concurrency, tests))
        cpu, began = time.process_time(), time.perf_counter()
        summary = asyncio.run(run.execute())
        wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    return summary.tests / wall, cpu / summary.tests * 1000, summary.sut_errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.1, help="server delay per call (s)")
    parser.add_argument("--levels", default="1,4,16,64", help="concurrency levels")
    parser.add_argument("--generations", type=int, default=8, help="generations per level")
    args = parser.parse_args()
    os.environ["STUB_KEY"] = "test-key"
    server = subprocess.Popen(
        [sys.executable, "-m", "stellar.llm.stub_server", "--delay", str(args.delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        print(
            f"stub server {url}, {args.delay * 1000:.0f} ms per call, {CALLS_PER_TEST} calls/test"
        )
        print(
            f"{'concurrency':>11} {'tests':>6} {'tests/s':>8} {'ideal':>8} {'of ideal':>9} "
            f"{'CPU ms/test':>12}"
        )
        measure(url, 2, 4)  # warm-up: imports, first connections
        for level in map(int, args.levels.split(",")):
            tests = max(level, 8) * args.generations
            rate, cpu_ms, errors = measure(url, level, tests)
            ideal = level / (CALLS_PER_TEST * args.delay)
            note = f"  ({errors} SUT errors)" if errors else ""
            print(
                f"{level:>11} {tests:>6} {rate:>8.2f} {ideal:>8.2f} {rate / ideal:>9.0%} "
                f"{cpu_ms:>12.2f}{note}"
            )
    finally:
        server.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
