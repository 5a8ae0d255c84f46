"""The default path's speed beside a recorded baseline, so that a regression shows as a ratio.

    .venv/bin/python bench/speed.py                      # everything (about 20 minutes)
    .venv/bin/python bench/speed.py --skip default-large,large,stub  # 1,000 tests
    .venv/bin/python bench/speed.py --source /tmp/old --record old.json   # another checkout

Measured, each in a fresh process:
- the command line: wall time of `stellar --help`, `stellar run --help`, `stellar list` and a
  usage error (median of ``--repeats``);
- the default run (`stellar run`: navi offline, its default search (NSGA-II in the baseline,
  mode-balanced since issue 30), 8-bit MiniLM duplicates, seed 0, 1,000 tests): its
  run time (summary.json's `elapsed`: the search, after models load), the time per test,
  the process's wall time and peak RSS (``wait4``); the same at 10,000 tests;
- `--algorithm surrogate` at 1,000 tests, with the time its model takes (fitting the
  forest, building and scoring each batch's pool: ``surrogate_seconds`` in the run's
  ``algorithm_report``) as a share of the run (issue 40 bounds it at 10%);
- the same with `--algorithm random` at 1,000 and 10,000 tests, which asks the same kind of
  inputs throughout, so that the ratio of their times per test shows what a larger archive
  costs. Most of a test's time is its embedding, and a larger archive turns more of the
  realiser's paraphrases into duplicates, each embedded too: the time per screened input
  (tests and duplicates) shows the framework's own cost apart from that. The default search
  mutates failures, whose children are nearer earlier inputs still: its duplicates grow
  from 0.75 a test in the first 1,000 tests to 3.7 in the tenth 1,000. (The paper's NSGA-II
  converges: at 10,000 tests 8 of 9 inputs it asks are duplicates.);
- the built-in use case against the stub model server answering in 0.5 s, 64 in flight,
  population 20, 640 tests (``bench/throughput.py --setups navi --levels 64``): the search's
  wall time. Since issue 28 the stub writes the built-in assistant's answers (a chat model
  alone gives navi no venue data and is refused); the baseline's figure was a chat model
  alone, which did less work a test.

The baseline (``--baseline``, default ``bench/speed_baseline.json``) holds the same figures
for an older commit, measured on the same kind of machine with ``--record``; ``--source DIR``
measures the checkout in DIR (its ``src`` first on the path) with this environment.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).parent
BASELINE = BENCH / "speed_baseline.json"
CLI = {
    "stellar --help": ["--help"],
    "stellar run --help": ["run", "--help"],
    "stellar list": ["list"],
    "usage error": ["run", "--tests", "-1"],
}
RUNS = {  # name: (algorithm, tests); None: the use case's default
    "default": (None, 1000),
    "surrogate": ("surrogate", 1000),
    "default-large": (None, 10_000),
    "random": ("random", 1000),
    "large": ("random", 10_000),
}
PARTS = ("cli", *RUNS, "stub")


def environment(source: Path | None) -> dict[str, str]:
    """This environment, less PYTHONDONTWRITEBYTECODE: an installed package keeps its
    bytecode, and a process that compiles every module it imports pays ~0.2 s for it."""
    paths = [str(source / "src")] if source else []
    keep = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**keep, "PYTHONPATH": os.pathsep.join([*paths, str(BENCH)])}


def stellar(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MiB) and exit code of one `stellar` process."""
    command = [sys.executable, "-m", "stellar.cli", *args]
    began = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - began
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1, 2):
        raise SystemExit(f"stellar {' '.join(args)}: exit {code}: {process.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024, code


def command_line(env: dict[str, str], repeats: int) -> dict[str, float]:
    return {
        name: statistics.median(stellar(args, env)[0] for _ in range(repeats))
        for name, args in CLI.items()
    }


def default_run(algorithm: str | None, tests: int, env: dict[str, str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        args = ["run", "--quiet", "--show", "0", "--tests", str(tests), "--out", out]
        args += ["--algorithm", algorithm] if algorithm else []
        wall, rss, _ = stellar(args, env)
        [summary_file] = Path(out).glob("*/summary.json")
        summary = json.loads(summary_file.read_text())
    done = max(1, int(summary["tests"]))
    return {
        "run s": summary["elapsed"],
        "ms per test": 1000 * summary["elapsed"] / done,
        "wall s": wall,
        "peak MiB": rss,
        "failures": summary["failures"],
        "duplicates": summary["duplicates"],
        "ms per screened input": 1000 * summary["elapsed"] / (done + summary["duplicates"]),
        **model_share(summary),
    }


def model_share(summary: dict) -> dict[str, float]:
    """The surrogate search's own cost (fitting its forest, building and scoring the pool),
    in seconds and as a share of the run; issue 40 bounds it at 10%."""
    seconds = (summary.get("algorithm_report") or {}).get("surrogate_seconds")
    if seconds is None:
        return {}
    return {"surrogate s": seconds, "surrogate % of run": 100 * seconds / summary["elapsed"]}


def stub_run(env: dict[str, str]) -> dict[str, float]:
    command = [sys.executable, str(BENCH / "throughput.py"), "--setups", "navi"]
    command += ["--latencies", "fixed", "--levels", "64"]
    with tempfile.NamedTemporaryFile(suffix=".json") as rows:
        subprocess.run([*command, "--json", rows.name], env=env, check=True, capture_output=True)
        [row] = json.loads(Path(rows.name).read_text())
    return {"run s": row["wall_s"], "tests": row["tests"]}


def measure(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    env, skip = environment(args.source), set(args.skip.split(",")) if args.skip else set()
    figures: dict[str, dict[str, float]] = {}
    if "cli" not in skip:
        figures["command line (s)"] = command_line(env, args.repeats)
    for name, (algorithm, tests) in RUNS.items():
        if name not in skip:
            figures[f"default run, {algorithm or 'default'}, {tests:,} tests"] = default_run(
                algorithm, tests, env
            )
    if "stub" not in skip:
        figures["navi vs stub 0.5 s, 64 in flight, 640 tests"] = stub_run(env)
    return figures


def show(figures: dict[str, dict[str, float]], baseline: dict[str, dict[str, float]]) -> None:
    print(f"{'':52} {'baseline':>9} {'now':>9} {'ratio':>6}")
    for group, values in figures.items():
        print(group)
        for name, value in values.items():
            old = baseline.get(group, {}).get(name)
            ratio = f"{value / old:6.2f}" if old else ""
            before = f"{old:9.2f}" if old is not None else f"{'-':>9}"
            print(f"  {name:50} {before} {value:9.2f} {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--skip", default="", help=f"of {','.join(PARTS)} (comma-separated)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per command-line figure")
    parser.add_argument("--source", type=Path, help="measure the checkout in this folder")
    parser.add_argument("--baseline", type=Path, default=BASELINE)
    parser.add_argument("--record", type=Path, help="write the figures to this JSON file")
    args = parser.parse_args()
    if unknown := set(filter(None, args.skip.split(","))) - set(PARTS):
        known = ", ".join(PARTS)
        parser.error(f"--skip: unknown {', '.join(sorted(unknown))}; choose from {known}")
    baseline = json.loads(args.baseline.read_text()) if args.baseline.is_file() else {}
    print(f"CPU cores: {os.cpu_count()}; baseline: {baseline.get('commit', 'none')}", flush=True)
    figures = measure(args)
    show(figures, baseline.get("figures", {}))
    for search in ("default", "random"):
        small, large = (figures.get(f"default run, {search}, {n:,} tests") for n in (1000, 10_000))
        if small and large:
            growth = large["ms per test"] / small["ms per test"]
            screened = large["ms per screened input"] / small["ms per screened input"]
            print(
                f"{search} search, 10,000 vs 1,000 tests: time per test x{growth:.2f} (budget "
                f"x1.20); per screened input (a test or a duplicate) x{screened:.2f}"
            )
    if args.record:
        where = str(args.source or BENCH)
        commit = subprocess.run(
            ["git", "-C", where, "rev-parse", "--short", "HEAD"], text=True, capture_output=True
        ).stdout.strip()
        record = {"commit": commit, "cores": os.cpu_count(), "figures": figures}
        args.record.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
