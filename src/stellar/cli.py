"""The ``stellar`` command line."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from stellar import __version__
from stellar.archive import export_run, open_run
from stellar.config import OFFLINE, load_config, parse_duration, sut_setting
from stellar.errors import StellarError
from stellar.features import load_feature_space
from stellar.llm.estimate import DISCARD_SHARE, Estimate, estimate_run
from stellar.llm.models import is_model_name
from stellar.records import TestRecord
from stellar.run import Run, RunSummary
from stellar.search import make_algorithm

console = Console(stderr=True, highlight=False, soft_wrap=True)

RUN_HELP = """\
Search the input space of an LLM application for inputs on which it fails.

With no CONFIG, runs the built-in navigation use case fully offline. CONFIG is a YAML file
that selects the use case (feature space), algorithm, generator, system under test, fitness
and oracle; options given here override it. Every test is committed to
RUN_DIR/archive.sqlite as it completes; Ctrl-C stops cleanly and keeps finished tests.

Models are named provider:model: openai:gpt-4o-mini, azure:DEPLOYMENT, ollama:llama3.1,
openai-compatible:MODEL@http://host:port/v1. Keys come from environment variables
(OPENAI_API_KEY, AZURE_OPENAI_API_KEY, or llm.endpoints.*.api_key_env in CONFIG). Answers
are cached in ~/.cache/stellar/, so a repeated request is never paid for twice.

examples:
  stellar run                                   offline navigation use case, 1000 tests
  stellar run --tests 200 --algorithm random    a random-search baseline
  stellar run --generator openai:gpt-4o-mini --judge openai:gpt-4o-mini --dry-run
  stellar run --sut http://localhost:8000/query --max-cost 2.50
"""


COMPARE_HELP = """\
Run every algorithm with every seed on one configuration, then compare them: unique failures,
failure ratio, diversity (share of failure clusters each run hits), Mann-Whitney U and
Vargha-Delaney A12 for every pair, per-feature failure rates, and the failure types.

Each run goes to DIR/runs/ALGORITHM-sSEED; tables (CSV) and plots (PNG, SVG) to DIR/report.
Running the same command again skips finished runs, so an interrupted experiment resumes.

example:
  stellar compare --algorithms stellar,random,twise --seeds 10 --tests 300
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stellar", description="STELLAR: search-based testing of LLM applications."
    )
    parser.add_argument("--version", action="version", version=f"stellar {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="search for failure-inducing inputs",
        description=RUN_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("config", nargs="?", metavar="CONFIG", help="run configuration (YAML)")
    run.add_argument(
        "--algorithm", help="stellar (NSGA-II, default), random, twise, astral, or module:Class"
    )
    run.add_argument("--seed", type=int, help="seed for every random choice of the run")
    run.add_argument("--tests", type=int, help="stop after this many inputs sent to the SUT")
    run.add_argument("--time", type=_duration, help="stop after this wall time: 90s, 15m, 2h")
    run.add_argument("--population", type=int, help="population size k (tests per generation)")
    run.add_argument("--concurrency", type=int, help="tests run at the same time")
    run.add_argument("--out", type=Path, help="folder for run directories (default: runs)")
    run.add_argument(
        "--generator",
        metavar="MODEL",
        help="a model writes the inputs (the use case's prompt); 'offline': the use case's own",
    )
    run.add_argument(
        "--sut",
        metavar="TARGET",
        help="system under test: a model, an http(s) URL (JSON {'text': input} in, "
        "'answer' out), module:function, or 'offline' (the use case's own)",
    )
    run.add_argument(
        "--judge", metavar="MODEL", help="an LLM judge scores the answers; 'offline': rules"
    )
    run.add_argument(
        "--max-cost", type=float, metavar="USD", help="stop when model calls have cost this much"
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="estimate model calls, tokens and cost of the budget; send nothing",
    )
    run.add_argument("--no-cache", action="store_true", help="do not reuse cached model answers")
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set any configuration value, e.g. --set judge.votes=3 (repeatable; YAML values)",
    )
    run.add_argument(
        "--show", type=int, default=10, metavar="N", help="failures to list at the end (default 10)"
    )
    run.add_argument(
        "--pois",
        metavar="SOURCE",
        help="navigation use case: venues from generated (default), multiwoz, multiwoz:DIR "
        "or yelp:FILE (Yelp business JSON lines)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument(
        "--fail-on-failures",
        action="store_true",
        help="exit with code 1 when failures were found (for CI pipelines)",
    )

    serve = commands.add_parser(
        "serve-navi",
        help="serve the built-in navigation assistant over HTTP",
        description='POST /query with {"text": ...} answers {"answer": ..., "pois": [...]}; '
        'GET /health answers {"status": "ok"}.',
    )
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument(
        "--pois",
        default="generated",
        metavar="SOURCE",
        help="generated (default), multiwoz, multiwoz:DIR or yelp:FILE",
    )

    compare = commands.add_parser(
        "compare",
        help="run several algorithms over several seeds and compare them",
        description=COMPARE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compare.add_argument("config", nargs="?", metavar="CONFIG", help="run configuration (YAML)")
    compare.add_argument(
        "--algorithms",
        default="stellar,random,twise",
        help="comma-separated: stellar, random, twise, astral (default: stellar,random,twise)",
    )
    compare.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default 10)")
    compare.add_argument("--tests", type=int, help="test budget of every run")
    compare.add_argument("--time", type=_duration, help="time budget of every run: 90s, 15m")
    compare.add_argument(
        "--dir",
        type=Path,
        help="experiment directory (default: experiments/NAME); the same one resumes",
    )
    compare.add_argument(
        "--parallel", type=int, default=2, help="runs at the same time (default 2)"
    )
    compare.add_argument("--population", type=int, help="population size k")
    compare.add_argument("--pois", metavar="SOURCE", help="navigation use case: venue source")
    compare.add_argument(
        "--embedder", default="minilm", help="embedder for diversity: minilm (default) or hashing"
    )
    compare.add_argument(
        "--repeats", type=int, default=10, help="clusterings with different seeds (default 10)"
    )
    compare.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="any configuration value"
    )

    export = commands.add_parser(
        "export",
        help="write a run's tests and failures as JSONL and CSV",
        description="Write tests.jsonl, tests.csv, failures.jsonl and failures.csv.",
    )
    export.add_argument("run_dir", metavar="RUN_DIR", type=Path)
    export.add_argument("--out", type=Path, help="output folder (default: RUN_DIR/export)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "run":
            return cmd_run(args)
        if args.command == "serve-navi":
            return cmd_serve_navi(args)
        if args.command == "compare":
            return cmd_compare(args)
        return cmd_export(args)
    except StellarError as exc:
        print(f"stellar: error: {exc}", file=sys.stderr)
        return 2


def cmd_run(args: argparse.Namespace) -> int:
    overrides = {
        "algorithm.name": args.algorithm,
        "seed": args.seed,
        "budget.tests": args.tests,
        "budget.time": args.time,
        "algorithm.population": args.population,
        "concurrency": args.concurrency,
        "out": str(args.out) if args.out else None,
        "sut.options.pois": args.pois,
        "fitness.options.pois": args.pois,
        "generator": _model_choice(args.generator, "generator"),
        "sut": _sut_choice(args.sut),
        "judge.model": args.judge,
        "budget.cost": args.max_cost,
        "llm.cache": False if args.no_cache else None,
    }
    if args.judge == OFFLINE:
        overrides["judge.model"] = ""
    config = load_config(args.config, overrides, dict(map(_setting, args.set)))
    if args.dry_run:
        _print_estimate(estimate_run(config), config.name)
        return 0
    progress = _progress(args.quiet, config.budget.tests)
    task = progress.add_task("testing", total=config.budget.tests, failures=0, ratio=0.0)

    def update(record: TestRecord, summary: RunSummary) -> None:
        progress.update(
            task, completed=summary.tests, failures=summary.failures, ratio=summary.failure_ratio
        )

    run = Run(config, on_record=update)
    console.print(
        f"[bold]stellar[/] {config.name}: algorithm {config.algorithm.name}, "
        f"seed {config.seed}, run directory {escape(str(run.run_dir))}"
    )
    with progress:
        summary = asyncio.run(_execute(run))
    _print_summary(summary, args.show)
    if summary.error:
        print(f"stellar: error: {summary.error}", file=sys.stderr)
        return 2
    return 1 if args.fail_on_failures and summary.failures else 0


def _model_choice(value: str | None, what: str) -> dict | str | None:
    if value is None or value == OFFLINE:
        return value
    if not is_model_name(value):
        raise StellarError(
            f"--{what} {value!r}: give a model such as openai:gpt-4o-mini, or offline"
        )
    return {"type": "llm", "model": value}


def _sut_choice(value: str | None) -> dict | str | None:
    if value is None:
        return None
    try:
        return sut_setting(value)
    except ValueError as exc:
        raise StellarError(f"--sut: {exc}") from None


def _setting(item: str) -> tuple[str, object]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise StellarError(f"--set {item!r}: write KEY=VALUE, e.g. --set judge.votes=3")
    try:
        return key.strip(), yaml.safe_load(value)
    except yaml.YAMLError:
        raise StellarError(f"--set {item!r}: the value is not valid YAML") from None


def _print_estimate(estimate: Estimate, name: str) -> None:
    out = Console(highlight=False, soft_wrap=True)
    unit = f"per {estimate.tests} tests" if estimate.assumed_tests else f"{estimate.tests} tests"
    if not estimate.rows:
        out.print(f"{name}: no model is configured; the run makes no model calls and costs $0.")
        return
    table = Table(title=f"Dry run of {name}: estimated model use for {unit}")
    table.add_column("role")
    table.add_column("model", no_wrap=True)
    for column in ("calls", "tokens in", "tokens out", "USD"):
        table.add_column(column, justify="right")
    for row in estimate.rows:
        cost = "no price" if row.cost is None else f"{row.cost:.4f}"
        table.add_row(
            row.role,
            escape(row.model),
            f"{row.calls:,.0f}",
            f"{row.input_tokens:,.0f}",
            f"{row.output_tokens:,.0f}",
            cost,
        )
    out.print(table)
    total = estimate.cost
    out.print(
        (
            "total cost: unknown (add prices under llm.prices)"
            if total is None
            else f"total cost: about ${total:.4f}"
        )
        + f"\nassumes ~4 characters per token and {DISCARD_SHARE:.0%} of generated inputs "
        "discarded; retries, judge repairs and cached answers are not counted"
    )


async def _execute(run: Run) -> RunSummary:
    loop = asyncio.get_running_loop()
    main_task = asyncio.current_task()

    def on_sigint() -> None:
        if run.stop.is_set() and main_task is not None:
            run.stop_reason = "aborted (Ctrl-C twice)"
            main_task.cancel()  # second Ctrl-C: do not wait for tests in flight
        else:
            console.print("[yellow]Stopping after the tests in flight (Ctrl-C again to abort).[/]")
            run.request_stop("interrupted (Ctrl-C)")

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        return await run.execute()
    except asyncio.CancelledError:
        return run.summary
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def cmd_compare(args: argparse.Namespace) -> int:
    from stellar.analysis.report import experiment_report
    from stellar.experiment import Plan, execute, finished, prepare

    algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    if not algorithms or args.seeds < 1 or args.parallel < 1:
        raise StellarError("compare needs at least one algorithm, one seed and --parallel >= 1")
    overrides = {
        "algorithm.population": args.population,
        "sut.options.pois": args.pois,
        "fitness.options.pois": args.pois,
    }
    overrides = {k: v for k, v in overrides.items() if v is not None}
    settings = dict(map(_setting, args.set))
    config_path = str(Path(args.config).resolve()) if args.config else None
    config = load_config(config_path, overrides, settings)  # mistakes show now, not in workers
    space = load_feature_space(config.features)
    algorithm_settings = config.algorithm.model_dump(exclude={"name"})
    for algorithm in algorithms:  # unknown names and bad settings fail before any run
        make_algorithm(algorithm, space, len(config.objectives), 0, **algorithm_settings)
    plan = Plan(
        config_path,
        algorithms,
        list(range(args.seeds)),
        args.tests or config.budget.tests,
        args.time,
        overrides,
        settings,
    )
    root = args.dir or Path("experiments") / config.name
    prepare(root, plan)
    total = len(algorithms) * args.seeds
    console.print(
        f"[bold]stellar compare[/] {config.name}: {', '.join(algorithms)} x {args.seeds} seeds, "
        f"{plan.tests} tests each, {args.parallel} in parallel, in {escape(str(root))}"
    )

    def done(algorithm: str, seed: int, summary: dict | None, error: str | None) -> None:
        if error:
            console.print(f"[red]{algorithm} seed {seed} failed:[/] {escape(error)}")
        else:
            console.print(
                f"{algorithm} seed {seed}: {summary['failures']} failures in "
                f"{summary['tests']} tests ({summary['failure_ratio']:.1%}), "
                f"{summary['elapsed']:.0f} s"
            )

    try:
        runs, skipped = execute(root, plan, args.parallel, done)
    except KeyboardInterrupt:
        console.print("[yellow]Interrupted.[/] Run the same command again to resume.")
        return 130
    if skipped:
        console.print(f"skipped {skipped} of {total} runs: already finished")
    incomplete = [d for dirs in runs.values() for d in dirs if not finished(d)]
    if incomplete:
        raise StellarError(
            f"{len(incomplete)} runs did not finish (see above); run the command again"
        )
    console.print("analysing (embedding failures, clustering) ...")
    report = experiment_report(runs, root / "report", embedder=args.embedder, repeats=args.repeats)
    Console(highlight=False, soft_wrap=True).print(report.to_rich_table())
    console.print(f"tables and plots: {escape(str(root / 'report'))}")
    return 0


def cmd_serve_navi(args: argparse.Namespace) -> int:
    from stellar.usecases.navi.assistant import navi_assistant
    from stellar.usecases.navi.server import make_server

    server = make_server(args.port, args.host, navi_assistant(pois=args.pois))
    host, port = server.server_address[:2]
    console.print(f"navigation assistant on http://{host}:{port}/query (Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    for path in export_run(args.run_dir, args.out):
        console.print(str(path))
    return 0


def _progress(quiet: bool, total: int | None) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("failures {task.fields[failures]} ({task.fields[ratio]:.1%})"),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    )


def _print_summary(summary: RunSummary, show: int) -> None:
    out = Console(highlight=False, soft_wrap=True)
    if show and summary.failures:
        with open_run(summary.run_dir) as archive:
            failures = list(archive.records(failures_only=True))
        failures.sort(key=lambda r: min(r.scores.values(), default=1.0))
        table = Table(
            title=f"Failures found (lowest scores first, {min(show, len(failures))} "
            f"of {len(failures)})",
            show_lines=True,
        )
        for column in ("input", "answer", "scores"):
            table.add_column(column, overflow="fold")
        for record in failures[:show]:
            scores = ", ".join(f"{k} {v:.2f}" for k, v in record.scores.items())
            table.add_row(
                escape(record.input_text or ""),
                escape(_clip(record.response_text or "", 300)),
                scores,
            )
        out.print(table)
    s = summary
    out.print(
        f"\n[bold]Stopped:[/] {escape(s.stop_reason)}\n"
        f"tests {s.tests}  failures {s.failures}  ratio {s.failure_ratio:.1%}  "
        f"duplicates {s.duplicates}  invalid {s.invalid}  "
        f"errors {s.sut_errors} sut / {s.judge_errors} judge  excluded {s.excluded}  "
        f"time {s.elapsed:.1f} s\n{_usage_line(s)}results: {escape(s.run_dir)}  "
        f"(export with: stellar export {escape(s.run_dir)})"
    )


def _usage_line(summary: RunSummary) -> str:
    """Model calls, tokens and cost per role; empty for an offline run."""
    if not summary.usage:
        return ""
    parts = []
    for role, u in summary.usage.items():
        cached = f", {u.get('cached', 0):.0f} cached" if u.get("cached") else ""
        errors = f", {u.get('errors', 0):.0f} failed" if u.get("errors") else ""
        parts.append(
            f"{role} {u.get('calls', 0):.0f} calls{cached}{errors} "
            f"({u.get('input_tokens', 0):,.0f} in / {u.get('output_tokens', 0):,.0f} out)"
        )
    unknown = (
        f" (no price for {', '.join(summary.unpriced)}: add llm.prices)" if summary.unpriced else ""
    )
    return f"model calls: {'; '.join(parts)}  cost ${summary.cost:.4f}{unknown}\n"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


if __name__ == "__main__":
    sys.exit(main())
