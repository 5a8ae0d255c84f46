"""``stellar run``: one search, with a progress bar and a table of the failures found."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from stellar import event_loop
from stellar.cli.ci_options import add_ci_flags, check_writable, gate_exit
from stellar.cli.options import (
    add_command,
    add_option_flags,
    add_system_flags,
    duration,
    settings,
    system_overrides,
)
from stellar.cli.output import (
    JudgingProgress,
    add_show_flag,
    console,
    health_exit,
    print_estimate,
    print_summary,
    progress_bar,
    progress_task,
    shown,
    status,
)
from stellar.errors import StellarError
from stellar.rundir import ARCHIVE_NAME
from stellar.termination import StopReason

if TYPE_CHECKING:
    from rich.progress import Progress

    from stellar.cli.line_progress import LineProgress
    from stellar.records import TestRecord
    from stellar.run import Run
    from stellar.summary import RunSummary

# stopped before its budget: `--resume` continues it
RESUMABLE = (
    StopReason.INTERRUPTED,
    StopReason.TERMINATED,
    StopReason.ABORTED,
    StopReason.MODEL_ERROR,
    StopReason.ERROR,
)

HELP = """\
Search the input space of an LLM application for inputs on which it fails.

With no CONFIG, runs the built-in use case fully offline. CONFIG is a YAML file that selects
the use case (feature space), algorithm, generator, system under test, fitness and oracle,
or a use case alone (a name from `stellar list usecase`, or a folder with usecase.yaml);
options given here override it. Every test is committed to RUN_DIR/archive.sqlite as it
completes; Ctrl-C or SIGTERM stops after the tests in flight, and --resume RUN_DIR continues
a stopped or killed run to its budget without running a finished test again.

Models are named provider:model: openai:gpt-4o-mini, azure:DEPLOYMENT, ollama:llama3.1,
openai-compatible:MODEL@http://host:port/v1. Keys come from environment variables
(OPENAI_API_KEY, AZURE_OPENAI_API_KEY, or llm.endpoints.*.api_key_env in CONFIG). Answers
are cached under $STELLAR_CACHE_DIR (default ~/.cache/stellar), so a repeated request is
never paid for twice.

Every run ends by writing RUN_DIR/report.html (open it in a browser; see stellar report).

Exit codes: 0 done (no failures, or none over --max-failure-rate / --max-failures); 1 failures
found with --fail-on-failures, or over a threshold; 2 a usage or configuration error, or a
model refused the key; 3 the system under test or the judges were not healthy (more than
--max-error-rate of the tests were errors, or no test reached a verdict): the results mean
little; or, for conversations, the memory probe found that the system forgets earlier turns;
130 stopped by Ctrl-C, 143 by SIGTERM (both resumable).

examples:
  stellar run                                   built-in use case, offline, 1000 tests
  stellar run --tests 200 --algorithm random    a random-search baseline
  stellar run --option NAME=VALUE               a use-case option (stellar list usecase)
  stellar run --generator openai:gpt-4o-mini --judge openai:gpt-4o-mini --dry-run
  stellar run --sut http://localhost:8000/query --max-cost 2.50
  stellar run --resume runs/NAME-stellar-s0-20261123-101500 --tests 2000
"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    run = add_command(commands, "run", "search for failure-inducing inputs", HELP)
    run.add_argument(
        "--algorithm",
        help="default: the one the use case names (the built-in assistant: mode-balanced), "
        "else stellar, the paper's NSGA-II; also surrogate, mode-balanced, random, twise, astral, "
        "diverse, map-elites, persona, crescendo (conversation baselines), or module:Class: "
        "stellar list algorithm",
    )
    run.add_argument("--seed", type=int, help="seed for every random choice of the run")
    run.add_argument(
        "--tests", type=int, help="stop after this many inputs (conversations) sent to the SUT"
    )
    run.add_argument("--time", type=duration, help="stop after this wall time: 90s, 15m, 2h")
    run.add_argument("--out", help="folder for run directories (default: runs)")
    run.add_argument(
        "--repeats",
        type=int,
        metavar="K",
        help="send each test K times, each in a fresh session (a non-deterministic agent or "
        "model): a test fails when any repeat fails; the summary gives pass^k (default 1)",
    )
    add_system_flags(run)
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="estimate model calls, tokens and cost of the budget; send nothing",
    )
    add_option_flags(run)
    add_show_flag(run)
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="continue a killed or interrupted run to its budget (--tests/--time may raise it)",
    )
    run.add_argument(
        "--fail-on-failures",
        action="store_true",
        help="exit with code 1 when failures were found (for CI pipelines)",
    )
    add_ci_flags(run, "default: exit 0 unless --fail-on-failures")
    run.set_defaults(handler=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    # the search's modules (models, numpy, ...): imported when a run starts, not for --help
    from stellar.config import load_config
    from stellar.estimate import estimate_run
    from stellar.junit import junit_for_run
    from stellar.resume import resume_config
    from stellar.run import Run

    started = time.monotonic()
    overrides = {
        "algorithm.name": args.algorithm,
        "seed": args.seed,
        "budget.tests": args.tests,
        "budget.time": args.time,
        "out": args.out,
        "repeats": args.repeats,
        **system_overrides(args),
    }
    if args.resume is not None:
        if args.config is not None or settings(args):
            raise StellarError(
                "--resume takes the run's own configuration: give no CONFIG, --set or --option"
            )
        config = resume_config(args.resume, overrides)
    else:
        config = load_config(args.config, overrides, settings(args))
    if args.junit:
        check_writable(Path(args.junit), "--junit")
    if args.dry_run:
        print_estimate(estimate_run(config), config.name)
        return 0
    progress = progress_bar(args.quiet)
    update = progress_task(progress, "testing", config.budget.tests)

    judging = JudgingProgress(progress)
    building = "building the components (feature space, algorithm, models)"
    with status(args.quiet, building, line=False):
        run = Run(
            config,
            run_dir=args.resume,
            on_record=update,
            on_verdict=judging.update,
            resume=args.resume is not None,
        )
    doing = "resuming" if args.resume is not None else "run directory"
    if args.resume is not None and not (Path(args.resume) / ARCHIVE_NAME).exists():
        doing = "resuming (no test had finished: from the first)"
    console.print(
        f"[bold]stellar[/] {config.name}: algorithm {config.algorithm.name}, "
        f"seed {config.seed}, {doing} {shown(run.run_dir)}"
    )
    marks: dict[str, float] = {}
    summary = event_loop.run(execute(run, progress, args.quiet, update, marks))
    finished = time.monotonic()
    del run  # its components are not needed for what follows, which reads the archive
    from stellar.analysis.failure_modes import run_failure_modes  # when needed
    from stellar.analysis.html_report import write_report  # pandas, matplotlib: when needed

    modes = run_failure_modes(summary.run_dir) if summary.failures else []  # grouped once
    print_summary(summary, args.show, modes)
    console.print(f"report: {shown(write_report(summary.run_dir, modes=modes))}")
    prepared = marks.get("prepared", finished)
    console.print(time_line(prepared - started, finished - prepared, time.monotonic() - finished))
    if args.junit:
        console.print(f"JUnit XML: {shown(junit_for_run(summary.run_dir, args.junit))}")
    if summary.stop_reason in RESUMABLE:
        print(f"continue with: stellar run --resume {summary.run_dir}", file=sys.stderr)
    if summary.stop_reason == StopReason.TERMINATED:
        return 128 + signal.SIGTERM
    if summary.stop_reason in (StopReason.INTERRUPTED, StopReason.ABORTED):
        return 128 + signal.SIGINT  # unfinished: never a passing CI step
    if (code := health_exit(summary)) is not None:
        return code
    return gate_exit(args, summary.failures, summary.verdicts, strict=args.fail_on_failures)


def time_line(loading: float, testing: float, after: float) -> str:
    """Where this command's time went: loading, the search with the judge after it (the
    summary's time, which counts earlier sessions of a resumed run too), then the report."""
    return (
        f"time: {loading + testing + after:.1f} s in all = {loading:.1f} s loading "
        f"(configuration, models, data) + {testing:.1f} s testing and judging + {after:.1f} s "
        "grouping failures and writing the report"
    )


async def execute(
    run: Run,
    progress: Progress | LineProgress,
    quiet: bool,
    update: Callable[[TestRecord | None, RunSummary], None],
    marks: dict[str, float],
) -> RunSummary:
    """Prepare, then run with Ctrl-C and SIGTERM handling: the first stops after the tests in
    flight, the second aborts. The bar ends on the summary's counts (``update``); ``marks``
    gets the time the preparation ended ("prepared")."""
    loop = asyncio.get_running_loop()
    main_task = asyncio.current_task()

    def on_signal(reason: StopReason, name: str) -> None:
        if run.stop.event.is_set() and main_task is not None:
            run.stop.stop = None
            run.request_stop(
                reason if reason != StopReason.INTERRUPTED else StopReason.ABORTED,
                f"aborted ({name} twice)",
            )
            main_task.cancel()  # do not wait for tests in flight
        else:
            console.print(f"[yellow]Stopping after the tests in flight ({name} again to abort).[/]")
            run.request_stop(reason, f"{reason} ({name})")

    loop.add_signal_handler(signal.SIGINT, on_signal, StopReason.INTERRUPTED, "Ctrl-C")
    loop.add_signal_handler(signal.SIGTERM, on_signal, StopReason.TERMINATED, "SIGTERM")
    try:
        with status(quiet, "preparing (loading models, opening data)"):
            await run.prepare()  # before the budgets start
        marks["prepared"] = time.monotonic()
        with progress:
            summary = await run.execute()
            update(None, summary)  # after the post-search judge's recount
            return summary
    except asyncio.CancelledError:
        return run.summary
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
