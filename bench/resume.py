"""Resume: SIGKILL at a random moment, then --resume; and the cost of rebuilding a run's state.

  python bench/resume.py trials --trials 5 --tests 500
      each trial (seed = trial number): an uninterrupted run for reference, then the same run
      killed with SIGKILL at a random moment and resumed; prints tests, duplicates (generation,
      index stored twice), lost and extra tests against the reference, and whether the resumed
      archive equals the uninterrupted one.
  python bench/resume.py rebuild RUN_DIR
      time to rebuild the state of a run from its archive (read it, re-tell the search, refill
      the duplicate filter) with no test left to run, on a copy of RUN_DIR: with the duplicate
      filter's saved vectors, and without them (every input embedded again).

Both use the built-in use case offline; `trials` uses the hashing embedder for duplicates so
that a trial takes about a minute.
"""

from __future__ import annotations

import argparse
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stellar import event_loop
from stellar.archive import ARCHIVE_NAME
from stellar.resume import archived_generations, resume_config
from stellar.run import Run
from stellar.rundir import VECTORS_NAME

EXECUTED = "status IN ('ok', 'sut_error', 'judge_error')"
HASHING = ["--set", "duplicates.embedder=hashing"]


def stellar(*args: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "stellar.cli", "run", "--quiet", "--show", "0", *args]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def archive_rows(run_dir: Path, where: str = "1") -> list[tuple]:
    query = f'SELECT generation, "index", status, input_text, scores FROM tests WHERE {where}'
    if not (run_dir / ARCHIVE_NAME).exists():  # killed while preparing
        return []
    with sqlite3.connect(f"file:{run_dir / ARCHIVE_NAME}?mode=ro", uri=True) as db:
        return db.execute(query).fetchall()


def only_run(out: Path) -> Path:
    [run_dir] = out.iterdir()
    return run_dir


def trial(root: Path, seed: int, tests: int, rng: random.Random) -> dict[str, object]:
    began = time.monotonic()
    stellar("--tests", str(tests), "--seed", str(seed), "--out", str(root / "ref"), *HASHING).wait()
    duration = time.monotonic() - began
    killed_out = root / "killed"
    proc = stellar("--tests", str(tests), "--seed", str(seed), "--out", str(killed_out), *HASHING)
    delay = rng.uniform(0.1, 0.9) * duration
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    run_dir = only_run(killed_out)
    at_kill = len(archive_rows(run_dir, EXECUTED))
    resumed = subprocess.run(
        [sys.executable, "-m", "stellar.cli", "run", "--quiet", "--show", "0",
         "--resume", str(run_dir)],
        capture_output=True, text=True,
    )  # fmt: skip
    reference = archive_rows(only_run(root / "ref"))
    rows = archive_rows(run_dir)
    keys = [(r[0], r[1]) for r in rows]
    return {
        "seed": seed,
        "killed after s": round(delay, 1),
        "tests at kill": at_kill,
        "exit": resumed.returncode,
        "tests": len(archive_rows(run_dir, EXECUTED)),
        "duplicates": len(keys) - len(set(keys)),
        "lost": len(set(reference) - set(rows)),
        "extra": len(set(rows) - set(reference)),
        "same as uninterrupted": sorted(rows) == sorted(reference),
    }


def trials(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    print(f"SIGKILL at a random moment of a {args.tests}-test run, then --resume")
    for number in range(args.trials):
        with tempfile.TemporaryDirectory() as folder:
            print(trial(Path(folder), number, args.tests, rng), flush=True)


def rebuild(args: argparse.Namespace) -> None:
    """Resume a copy of the run with its budget set to what it has done: all rebuild, no test.
    Once with the duplicate filter's saved vectors, once without (every input embedded again)."""
    for saved in (True, False):
        with tempfile.TemporaryDirectory() as folder:
            run_dir = Path(folder) / "run"
            shutil.copytree(args.run_dir, run_dir)
            if not saved:
                (run_dir / VECTORS_NAME).unlink(missing_ok=True)
            print(rebuild_once(run_dir, (run_dir / VECTORS_NAME).exists()), flush=True)


def rebuild_once(run_dir: Path, saved: bool) -> str:
    began = time.perf_counter()
    archived = archived_generations(run_dir)
    read = time.perf_counter() - began
    rows = sum(len(done) for done in archived.values())
    tests = sum(r.executed for done in archived.values() for r in done.values())
    config = resume_config(run_dir, {"budget.tests": tests})
    run = Run(config, run_dir=run_dir, resume=True)
    event_loop.run(run.prepare())  # loading models is not part of the rebuild
    began = time.perf_counter()
    summary = event_loop.run(run.execute())
    total = time.perf_counter() - began
    return (
        f"{rows} archived rows ({tests} tests) in {len(archived)} generations, duplicates by "
        f"{config.duplicates.embedder}, saved vectors {'used' if saved else 'absent'}: "
        f"reading the archive {read:.2f} s; rebuilding the run's state {total:.2f} s "
        f"({summary.tests} tests counted, stop: {summary.stop_reason})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    first = commands.add_parser("trials")
    first.add_argument("--trials", type=int, default=5)
    first.add_argument("--tests", type=int, default=500)
    first.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    first.set_defaults(handler=trials)
    second = commands.add_parser("rebuild")
    second.add_argument("run_dir")
    second.set_defaults(handler=rebuild)
    args = parser.parse_args()
    args.handler(args)


if __name__ == "__main__":
    main()
