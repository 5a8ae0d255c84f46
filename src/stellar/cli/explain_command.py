"""``stellar explain``: a run's failure conditions, the rules over feature values under which
its tests failed (:mod:`stellar.analysis.failure_rules`), for a run of any algorithm."""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from stellar.archive import check_archive, open_run
from stellar.cli.output import shown, stdout
from stellar.errors import StellarError
from stellar.rundir import ARCHIVE_NAME

if TYPE_CHECKING:
    from stellar.analysis.failure_rules import FailureRule, Verdict

HELP = """\
Print a run's failure conditions: short rules over the feature values under which its tests
failed, most failures first, e.g.

  category=cafe & implicitness!=not: 247 of 254 tests failed (held back: 120 of 126)

reads: of the run's verdicts (tests judged pass or fail) whose category was cafe and whose
implicitness was anything but 'not', 247 of 254 failed. A rule is mined on a random half of
the verdicts and shown only when the other half, held back, agrees: at least 3 held-back
tests match it (here 126, of which 120 failed), their failure share is within 0.1 of the
stated one, both shares are at least 0.5 and at least 0.05 above the run's failure rate.
The table also gives the failure modes its
failures fall in, numbered as the end-of-run table, the report and stellar export number
them (1: the largest), each with its failures under the rule.

The counts are the run's own tests, which an adaptive search does not draw uniformly: a rule
says where the run's failures lie, not how often a user would meet them. Works for a run of
any algorithm; nothing is sent to a model. The end-of-run summary shows the first five;
stellar export writes them all (failure_rules.jsonl, failure_rules.csv).

examples:
  stellar explain runs/my-run-stellar-s0-20261123-120000
  stellar explain RUN_DIR --show 3
  stellar explain RUN_DIR --json > rules.json
"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    explain = commands.add_parser(
        "explain",
        help="print the conditions (feature values) under which a run's tests failed",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    explain.add_argument("run_dir", metavar="RUN_DIR", type=Path, help="a run directory")
    explain.add_argument(
        "--show", type=int, metavar="N", help="rules shown, most failures first (default: all)"
    )
    explain.add_argument(
        "--json", action="store_true", help="the rules as a JSON list on standard output"
    )
    explain.set_defaults(handler=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    from stellar.analysis.failure_rules import failure_rules  # scikit-learn: when run

    run_dir: Path = args.run_dir
    archive = run_dir / ARCHIVE_NAME
    if not archive.exists():
        raise StellarError(f"{run_dir}: not a run directory (no {ARCHIVE_NAME})")
    check_archive(archive, reading=True)
    try:
        verdicts = run_verdicts(run_dir)
    except sqlite3.DatabaseError as exc:
        raise StellarError(f"{archive}: cannot be read ({exc})") from None
    rules = failure_rules(verdicts)
    if args.json:
        rows = [rule.to_dict() for rule in rules[: args.show]]
        stdout().out(json.dumps(rows, indent=2), highlight=False)  # rich: `| head` ends quietly
    else:
        print_rules(run_dir, verdicts, rules, args.show)
    return 0


def run_verdicts(run_dir: Path) -> list[Verdict]:
    """The run's verdicts, each failure with its mode (grouped only when something failed:
    grouping may load the run's embedder)."""
    from stellar.analysis.failure_modes import mode_numbers, run_failure_modes
    from stellar.analysis.failure_rules import verdicts_of

    with open_run(run_dir) as archive:
        records = [r for r in archive.records() if r.judged and not r.final_excluded]
    if not any(r.is_failure for r in records):
        return verdicts_of(records)
    return verdicts_of(records, mode_numbers(run_failure_modes(run_dir)))


def print_rules(
    run_dir: Path, verdicts: Sequence[Verdict], rules: Sequence[FailureRule], show: int | None
) -> None:
    """A line of counts, then the rules (``show`` at most) as a table and how they were
    checked, or why there are none."""
    from stellar.analysis.reading import rules_checked

    out = stdout()
    failed = sum(v.failed for v in verdicts)
    share = f" ({failed / len(verdicts):.1%})" if verdicts else ""
    out.print(f"{shown(run_dir)}: {len(verdicts)} verdicts, {failed} failed{share}")
    if not failed:
        out.print("No test failed: there are no failure conditions to find.")
        return
    if rules:
        out.print(rules_table(rules, show))
    else:
        out.print("No rule over the feature values held on the held-back tests.")
    out.print(rules_checked())


def rules_table(rules: Sequence[FailureRule], show: int | None = None) -> Table:
    listed = rules[:show]
    table = Table(title=f"Failure conditions (most failures first, {len(listed)} of {len(rules)})")
    table.add_column("#", justify="right")
    table.add_column("rule", overflow="fold")
    for column in ("tests", "failed", "precision", "held back"):
        table.add_column(column, justify="right")
    table.add_column("modes (failures)", overflow="fold")
    for n, rule in enumerate(listed, start=1):
        table.add_row(
            str(n),
            shown(rule.text),
            str(rule.tests),
            str(rule.failed),
            f"{rule.precision:.0%}",
            f"{rule.held_failed} of {rule.held_tests} ({rule.held_precision:.0%})",
            modes_text(rule.modes),
        )
    return table


def modes_text(modes: Mapping[Hashable, int]) -> str:
    """``2 (39), 3 (28)``: the failure modes by number, each with its failures."""
    return ", ".join(f"{mode} ({count})" for mode, count in modes.items())
