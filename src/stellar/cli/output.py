"""What the command line prints: progress, the failures table, the summary, the dry run."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from stellar.archive import open_run
from stellar.llm.usage import from_cache, total_cost
from stellar.untrusted import for_terminal

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from stellar.analysis.failure_modes import FailureMode
    from stellar.analysis.failure_rules import FailureRule
    from stellar.cli.line_progress import LineProgress
    from stellar.estimate import Estimate
    from stellar.records import TestRecord
    from stellar.summary import RunSummary

console = Console(stderr=True, highlight=False, soft_wrap=True)  # messages and progress
RULES_SHOWN = 5  # failure conditions the end-of-run summary lists (stellar explain: all)


LOG_WIDTH = 160  # a table written to a file or CI log, which has no width of its own


def stdout() -> Console:
    """Results go to standard output (as wide as the terminal; off one, ``COLUMNS`` or
    :data:`LOG_WIDTH`, so that tables in a CI log are not cut to 80 columns)."""
    out = Console(highlight=False, soft_wrap=True)
    if not out.is_terminal and not os.environ.get("COLUMNS"):
        out.width = LOG_WIDTH
    return out


def shown(text: object) -> str:
    """Untrusted text as rich markup that prints as itself: no escape sequences, no markup."""
    return escape(for_terminal(str(text)))


def status(quiet: bool, what: str, line: bool = True) -> AbstractContextManager[Any]:
    """A spinner saying what takes long; when not on a terminal a plain line instead, or
    nothing unless ``line`` (a step that may still end in a one-line usage error); nothing
    when quiet."""
    if quiet or not (line or console.is_terminal):
        return nullcontext()
    if not console.is_terminal:
        console.print(f"{what} ...")
        return nullcontext()
    return console.status(f"{what} ...")


def progress_bar(quiet: bool) -> Progress | LineProgress:
    """A live bar on a terminal; elsewhere lines at a steady interval (:mod:`line_progress`)."""
    if not quiet and not console.is_terminal:
        from stellar.cli.line_progress import LineProgress

        return LineProgress(console)
    from rich.progress import (  # only for a command that runs tests
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("modes {task.fields[modes]}"),
        TextColumn("failures {task.fields[failures]} ({task.fields[ratio]:.1%})"),
        TextColumn("errors {task.fields[errors]}"),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    )


def add_show_flag(parser: argparse.ArgumentParser) -> None:
    """``--show N``: how much of the failure modes and conditions the summary lists."""
    parser.add_argument(
        "--show",
        type=int,
        default=10,
        metavar="N",
        help=f"failure modes shown at the end (10), and as many failure conditions, "
        f"{RULES_SHOWN} at most (0: neither)",
    )


def print_summary(summary: RunSummary, show: int, modes: list[FailureMode] | None = None) -> None:
    """The failure modes (one row each, ``show`` at most), the failure conditions (as many,
    ``RULES_SHOWN`` at most), the counts and where results are."""
    out = stdout()
    if summary.failures and modes is None:
        from stellar.analysis.failure_modes import run_failure_modes  # when needed

        modes = run_failure_modes(summary.run_dir)
    if show and modes:
        out.print(modes_table(modes, show, _failure_scores(summary.run_dir)))
    if summary.failures and show:  # --show 0: neither modes nor conditions
        from stellar.analysis.failure_rules import run_failure_rules  # scikit-learn: when needed

        rules = run_failure_rules(summary.run_dir, modes)
        out.print(conditions_block(rules, summary.run_dir, min(show, RULES_SHOWN)))
    s = summary
    out.print(
        f"\n[bold]Stopped:[/] {shown(s.stop_message or s.stop_reason)}\n"
        f"{diversity_line(s, modes)}"
        f"tests {s.tests}{f' (conversations, {s.turns} turns)' if s.turns else ''}  "
        f"verdicts {s.verdicts}  failures {s.failures}  "
        f"ratio {s.failure_ratio:.1%} of verdicts  "
        f"duplicates {s.duplicates}  invalid {s.invalid}  "
        f"errors {s.sut_errors} sut / {s.judge_errors} judge  excluded {s.excluded}  "
        f"testing time {s.elapsed:.1f} s\n"
        f"{simulated_user_line(s)}{repeated_line(s)}"
        f"{post_search_line(s)}{usage_line(s)}{cache_line(s)}{approximate_line(s)}"
        f"results: {shown(s.run_dir)}  "
        f"(export with: stellar export {shown(s.run_dir)})"
    )


def repeated_line(summary: RunSummary) -> str:
    from stellar.summary import pass_k_line

    line = pass_k_line(summary.repeated, summary.repeated_modes)
    return f"{shown(line)}\n" if line else ""


def simulated_user_line(summary: RunSummary) -> str:
    """How much of the user the model played, and a warning when it played too little."""
    from stellar.summary import simulated_user_lines

    line, warning = simulated_user_lines(summary.simulated_user)
    warned = f"[yellow]warning:[/] {shown(warning)}\n" if warning else ""
    return (f"{shown(line)}\n" if line else "") + warned


def modes_table(modes: list[FailureMode], show: int, scores: dict[str, str]) -> Table:
    """One row per failure mode, largest first: its title, size and most typical example
    (``scores``: the scores shown for each failing input)."""
    table = Table(
        title=f"Failure modes (largest first, {min(show, len(modes))} of {len(modes)}; "
        "tests: distinct failing inputs)",
        show_lines=True,
    )
    table.add_column("#", justify="right")
    table.add_column("failure mode", overflow="fold")
    table.add_column("tests", justify="right")
    for column in ("example input", "scores"):
        table.add_column(column, overflow="fold")
    for rank, mode in enumerate(modes[:show], start=1):
        text = mode.examples[0][0] if mode.examples else ""
        table.add_row(
            str(rank),
            shown(mode.label),
            str(mode.size),
            shown(clip(text, 200)),
            shown(scores.get(text, "")),
        )
    return table


def conditions_block(rules: Sequence[FailureRule], run_dir: str, limit: int = RULES_SHOWN) -> str:
    """Where the failures lie: the first ``limit`` failure conditions, each with its check on
    the held-back tests, so that a developer sees what to fix before the counts."""
    if not rules:
        return (
            "\n[bold]Failure conditions:[/] no rule over the feature values held on held-back tests"
        )
    lines = ["\n[bold]Failure conditions[/] (where the failures lie, checked on held-back tests):"]
    lines += [
        f"  {shown(r.line())} (held back: {r.held_failed} of {r.held_tests})" for r in rules[:limit]
    ]
    if len(rules) > limit:
        lines.append(f"  stellar explain {shown(run_dir)} for all {len(rules)}")
    return "\n".join(lines)


def _failure_scores(run_dir: str) -> dict[str, str]:
    """The scores of each failing input (its first test), with the post-search verdict."""
    with open_run(run_dir) as archive:
        failures = [r for r in archive.records(failures_only=True) if r.is_failure]
    scores: dict[str, str] = {}
    for record in failures:
        text = ", ".join(f"{k} {v:.2f}" for k, v in record.scores.items())
        if record.verdict is not None:
            text += f"; after the search: {record.verdict.details.get('verdict', 'failed')}"
        scores.setdefault(record.input_text or "", text)
    return scores


def diversity_line(summary: RunSummary, modes: list[FailureMode] | None = None) -> str:
    """How different the failures are: modes (``modes``, if already grouped), and feature
    pairs among them."""
    if not summary.failures:
        return ""
    from stellar.analysis.failure_modes import run_diversity  # when needed

    count, pairs, valid = run_diversity(summary.run_dir, modes)
    allowed = f" of {valid}" if valid else ""
    largest = max((m.size for m in modes), default=0) if modes else 0
    share = f" (the largest holds {largest / summary.failures:.0%})" if largest else ""
    return (
        f"[bold]found: {count} failure mode{'s' * (count != 1)}[/] among {summary.failures} "
        f"failures{share}, "
        f"{pairs}{allowed} 2-way feature pairs among the failures\n"
    )


def post_search_line(summary: RunSummary) -> str:
    """What the post-search judge decided, and what it has still to judge."""
    post = summary.post_search
    if not post:
        return ""
    pending = post.get("pending", 0)
    todo = f", {pending} still to judge: stellar judge {shown(summary.run_dir)}" if pending else ""
    cost = total_cost(post.get("usage") or {})
    spent = f", cost ${cost:.4f}" if cost else ""
    sources = post.get("sources") or {}
    by = ", ".join(f"{shown(name)}: {count}" for name, count in sources.items())
    return (
        f"failures decided after the search by {shown(post.get('judge'))}"
        f"{f' ({by})' if by else ''}: {post.get('judged', 0)} tests judged{todo}{spent}\n"
    )


def health_exit(summary: RunSummary) -> int | None:
    """Exit code 2 (a model error stopped it) or 3 (not healthy), said in one line; else None."""
    if summary.error:
        print(f"stellar: error: {for_terminal(summary.error)}", file=sys.stderr)
        return 2
    if summary.unhealthy:
        hint = f"; first: {for_terminal(summary.first_error)}" if summary.first_error else ""
        print(f"stellar: not healthy: {summary.unhealthy}{hint}", file=sys.stderr)
        return 3
    return None


def progress_task(
    progress: Progress | LineProgress, description: str, total: int | None
) -> Callable[[TestRecord | None, RunSummary], None]:
    """A task on ``progress`` and the callback that moves it as tests complete (the record
    is not read: the bar shows the summary's counts)."""
    task = progress.add_task(description, total=total, modes=0, failures=0, ratio=0.0, errors=0)

    def update(record: TestRecord | None, summary: RunSummary) -> None:
        progress.update(
            task,
            completed=summary.tests,
            modes=summary.modes,
            failures=summary.failures,
            ratio=summary.failure_ratio,
            errors=summary.errors,
        )

    return update


class JudgingProgress:
    """A second progress bar, for the post-search judge, shown once it starts."""

    def __init__(self, progress: Progress | LineProgress) -> None:
        self.progress = progress
        self.task: TaskID | int | None = None
        self.failures = self.verdicts = self.done = 0

    def update(self, record: TestRecord, total: int) -> None:
        if self.task is None:
            self.task = self.progress.add_task(
                "judging", total=total, failures=0, ratio=0.0, errors=0
            )
        self.failures += record.is_failure
        self.verdicts += record.judged and not record.final_excluded
        self.done += 1
        ratio = self.failures / self.verdicts if self.verdicts else 0.0  # the summary's ratio
        self.progress.update(self.task, advance=1, failures=self.failures, ratio=ratio)


def approximate_line(summary: RunSummary) -> str:
    """Why the results are approximate, when they are; empty otherwise."""
    return f"approximate: {summary.approximate}\n" if summary.approximate else ""


def cache_line(summary: RunSummary) -> str:
    """How many model answers came from the response cache, per role; empty when none did."""
    used = from_cache(summary.usage, summary.post_search.get("usage") or {})
    taken = [f"{role} {cached} of {calls}" for role, (cached, calls) in used.items() if cached]
    if not taken:
        return ""
    return (
        f"answers from the model cache (no request sent): {', '.join(taken)}; "
        "--no-cache sends every request\n"
    )


def usage_line(summary: RunSummary) -> str:
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
        f" (no price for {shown(', '.join(summary.unpriced))}: add llm.prices)"
        if summary.unpriced
        else ""
    )
    return f"model calls: {'; '.join(parts)}  cost ${summary.cost:.4f}{unknown}\n"


def print_estimate(estimate: Estimate, name: str) -> None:
    from stellar.estimate import DISCARD_SHARE  # the models' modules: only for a dry run

    out = stdout()
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
            shown(row.model),
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
        + (
            f"\nconversations: {estimate.turns:.1f} planned turns each on average, one system "
            "call per turn with the history so far (unplanned turns: clarifications, reactions "
            "to a refusal, not counted)"
            if estimate.turns
            else ""
        )
    )


def clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
