"""``stellar replay``: archived inputs sent again, as a regression suite."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from stellar import event_loop
from stellar.cli.ci_options import add_ci_flags, check_writable, gate_exit, share
from stellar.cli.options import OFFLINE, add_option_flags, settings, sut_choice
from stellar.cli.output import (
    clip,
    console,
    health_exit,
    progress_bar,
    progress_task,
    shown,
    stdout,
)
from stellar.errors import StellarError

if TYPE_CHECKING:
    from stellar.replay import ReplayResult
    from stellar.suite import Source

MAX_REPEAT = 1000

HELP = """\
Send the inputs of a run (its failures, or with --only all every test that reached the
system) or of a suite file (stellar export RUN_DIR --suite FILE) again to the system under
test: no generation, no search. The same fitness, oracle and post-search judge score the
answers; the results go to a new run directory NAME-replay-... under --out, whose
replay.json gives each test's outcome against the source:

  fixed           failed in the source, passes now
  still failing   failed in the source, fails now
  newly failing   was not a failure in the source, fails now
  flaky           with --repeat N: the verdict changed between repeats
  error           no repeat reached a verdict (a system or judge fault)

SOURCE's configuration is used (a run's config.yaml, or the one a suite file names) unless
--config gives another; --sut tests another system, as in stellar run.

Every input is sent again: the system's model answers are never read from the model cache
(fresh ones are stored there), unless --cached asks for them (a quick check of the scoring,
not of the system). A judge's model may answer from the cache: the same answer to judge
gets the same verdict; --no-cache asks every model again. With --repeat > 1 nothing is
taken from the cache. The output and replay.json say how many answers came from it.

Exit codes: 0 pass; 1 over a threshold: more than --max-failures failing tests, or a share
of failing tests (still or newly failing, of those with a verdict) above --max-failure-rate;
with neither given, any test that still or newly fails; 2 a usage or configuration error, or
a model refused the key; 3 the system under test or the judges were not healthy (more than
--max-error-rate of the replayed tests were errors, or no test reached a verdict).

examples:
  stellar replay runs/shop-stellar-s0-20261123-101500              its failures, same system
  stellar replay runs/shop-stellar-s0-20261123-101500 --sut http://localhost:8000/query
  stellar replay RUN_DIR --only all --repeat 3                      every test, 3 times
  stellar replay failures.jsonl --junit replay.xml --max-failures 0
  stellar replay failures.jsonl --config my-run.yaml                a suite, another config
"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "replay",
        help="send archived inputs again: fixed, still failing, newly failing, flaky",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("source", metavar="SOURCE", help="a run directory, or a suite file (JSONL)")
    parser.add_argument(
        "--config", metavar="CONFIG", help="the run configuration or use case to score with"
    )
    parser.add_argument(
        "--sut",
        metavar="TARGET",
        help="system under test: a model, an http(s) URL, module:function, or 'offline'",
    )
    parser.add_argument(
        "--judge", metavar="MODEL", help="an LLM judge scores the answers; 'offline': rules"
    )
    parser.add_argument(
        "--only",
        choices=("failures", "all"),
        default="failures",
        help="the source's failures (default), or every test that reached the system",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="send each input N times (flaky)"
    )
    parser.add_argument(
        "--out", metavar="DIR", help="folder for the new run directory (default: runs)"
    )
    add_ci_flags(parser, "default: any test still or newly failing")
    parser.add_argument(
        "--max-error-rate",
        type=share,
        metavar="SHARE",
        help="exit 3 when more than this share of tests are errors (default 0.2)",
    )
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument(
        "--cached",
        action="store_true",
        help="take the system's model answers from the cache where it has them (no request)",
    )
    cache.add_argument(
        "--no-cache", action="store_true", help="no model answer from the cache, judges' too"
    )
    add_option_flags(parser)
    parser.add_argument(
        "--show", type=int, default=10, metavar="N", help="examples to list (default 10)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=cmd_replay)


def cmd_replay(args: argparse.Namespace) -> int:
    # the configuration's and the pipeline's modules (models): imported here, not for --help
    from stellar.config import load_config
    from stellar.replay import candidates, replay
    from stellar.suite import read_source

    if not 1 <= args.repeat <= MAX_REPEAT:
        raise StellarError(f"--repeat {args.repeat}: must be from 1 to {MAX_REPEAT:,}")
    if args.cached and args.repeat > 1:
        raise StellarError("--cached with --repeat: cached answers cannot differ between repeats")
    if args.junit:
        check_writable(Path(args.junit), "--junit")
    source = read_source(args.source, args.only)
    overrides = {
        "sut": sut_choice(args.sut),
        "judge.model": "" if args.judge == OFFLINE else args.judge,
        "budget.max_error_rate": args.max_error_rate,
        "llm.cache": False if args.no_cache or args.repeat > 1 else None,
        "out": args.out or "runs",
    }
    # an empty suite (of a run without failures) names no configuration: nothing regressed
    if source.tests or source.config is not None or args.config is not None:
        config = load_config(config_file(args.config, source), overrides, settings(args))
    if not source.tests:
        none = "failures" if source.only == "failures" else "test that reached the system"
        console.print(f"{shown(source.path)}: nothing to replay (no {none})")
        return 0
    try:  # tests of another feature space: one line naming the source, before the header
        candidates(source.tests, config.feature_space())
    except StellarError as exc:
        raise StellarError(f"{source.path}: {exc}") from None
    progress = progress_bar(args.quiet)
    update = progress_task(progress, "replaying", len(source.tests) * args.repeat)

    console.print(
        f"[bold]stellar replay[/] {len(source.tests)} tests of {shown(source.path)}"
        f"{f' x {args.repeat}' if args.repeat > 1 else ''}"
    )
    try:
        with progress:
            result = event_loop.run(
                replay(config, source, args.repeat, on_record=update, cached=args.cached)
            )
    except KeyboardInterrupt:
        console.print("[yellow]Interrupted[/]: the tests sent so far are in the new run directory")
        return 130
    print_replay(result, args.show)
    from stellar.analysis.html_report import write_report  # pandas, matplotlib: when needed

    console.print(f"report: {shown(write_report(result.run_dir))}")  # as a run's
    if args.junit:
        write_result_junit(result, Path(args.junit), config.name)
    return exit_code(args, result)


def config_file(given: str | None, source: Source) -> str:
    """``--config``, else the configuration the source ran with."""
    if given is not None:
        return given
    if source.config is None:
        raise StellarError(f"{source.path}: names no single configuration; give --config")
    if not source.config.is_file():
        raise StellarError(
            f"{source.path}: its configuration {source.config} is gone; give --config"
        )
    return str(source.config)


def exit_code(args: argparse.Namespace, result: ReplayResult) -> int:
    summary = result.summary
    if (code := health_exit(summary)) is not None:
        return code
    return gate_exit(args, result.failing, result.verdicts, strict=True)


def write_result_junit(result: ReplayResult, path: Path, name: str) -> None:
    """One test case per replayed input and repeat; failures say still or newly failing."""
    from stellar.junit import write_junit
    from stellar.replay import FAILING

    labels = {
        i: o.outcome.replace("_", " ")
        for i, o in enumerate(result.outcomes)
        if o.outcome in FAILING
    }
    write_junit(
        path,
        result.records,
        result.run_dir.name,
        classname=name,
        time=result.summary.elapsed,
        properties={"replay_of": result.source.path, "repeat": result.repeat},
        labels=labels,
    )
    console.print(f"JUnit XML: {shown(path)}")


def print_replay(result: ReplayResult, show: int) -> None:
    """The counts, then up to ``show`` examples, the most urgent first."""
    from stellar.replay import OUTCOMES

    out = stdout()
    counts = result.counts()
    table = Table(title=f"Replay of {shown(result.source.path)}")
    table.add_column("outcome")
    table.add_column("tests", justify="right")
    for name in OUTCOMES:
        if counts[name]:
            table.add_row(name.replace("_", " "), str(counts[name]))
    out.print(table)
    order = {name: n for n, name in enumerate(OUTCOMES)}
    examples = sorted(result.outcomes, key=lambda o: order[o.outcome])[:show]
    if examples:
        shown_table = Table(title=f"Examples ({len(examples)} of {len(result.outcomes)})")
        for column in ("outcome", "input", "answer now", "scores now"):
            shown_table.add_column(column, overflow="fold")
        for o in examples:
            record = o.record
            answer = (record.error or record.response_text or "") if record else ""
            scores = ", ".join(f"{k} {v:.2f}" for k, v in (record.scores if record else {}).items())
            shown_table.add_row(
                o.outcome.replace("_", " "),
                shown(clip(o.test.text, 200)),
                shown(clip(answer, 200)),
                shown(scores),
            )
        out.print(shown_table)
    s = result.summary
    out.print(
        f"failing {result.failing} of {result.verdicts} with a verdict  "
        f"errors {s.sut_errors} sut / {s.judge_errors} judge  time {s.elapsed:.1f} s\n"
        f"{cache_lines(result)}"
        f"results: {shown(result.run_dir)}/replay.json"
    )


def cache_lines(result: ReplayResult) -> str:
    """How many answers came from the model cache: the system's always, a judge's if any."""
    used = result.from_cache()
    cached, calls = used.pop("sut", (0, 0))
    if cached:
        lines = [f"system under test: {cached} of {calls} model answers from the cache (--cached)"]
    elif result.cached:
        lines = ["system under test: no answer from the cache (none cached), every one sent"]
    else:
        lines = ["system under test: every input sent again, no answer from the cache"]
    for role, (cached, calls) in used.items():
        if cached:
            lines.append(
                f"{role}: {cached} of {calls} model answers from the cache (an identical "
                "answer gets its stored verdict; --no-cache asks again)"
            )
    return "".join(f"{line}\n" for line in lines)
