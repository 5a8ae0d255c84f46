"""``stellar report``: a run's or an experiment's results as one self-contained HTML page."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from stellar.cli.output import console, shown
from stellar.errors import StellarError

HELP = """\
Write the results of a run or an experiment as one HTML file that opens from disk, offline:
the summary, the failure modes with examples, the failure rate per feature value, a heat map
over any two features, failures over tests and over time, and every test in a table with
filters and search. For an experiment directory (stellar compare made it): the comparison of
the algorithms (means, Mann-Whitney p-values, A12), its plots, and a page for each run.

Nothing from the system under test or a model can run in the page: every text is shown as
text, and a Content-Security-Policy allows only the page's own script and style.
`stellar run` and `stellar compare` write DIR/report.html themselves at the end.

examples:
  stellar report runs/my-run-stellar-s0-20261123-120000
  stellar report experiments/my-run -o comparison.html
  stellar report RUN_DIR --embedder hashing          failure modes without loading a model
"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    report = commands.add_parser(
        "report",
        help="write a run's or an experiment's results as one HTML page",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument(
        "directory", metavar="DIR", type=Path, help="a run directory or an experiment directory"
    )
    report.add_argument(
        "-o", "--out", type=Path, metavar="FILE", help="the HTML file (default: DIR/report.html)"
    )
    report.add_argument(
        "--embedder",
        help="embedder that groups failing answers into modes (default: the run's own; "
        "hashing: no model)",
    )
    report.set_defaults(handler=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from stellar.analysis.html_experiment import EXPERIMENT_FILE, is_experiment
    from stellar.analysis.html_report import write_report
    from stellar.rundir import ARCHIVE_NAME
    from stellar.text.embeddings import embedder_factory

    directory: Path = args.directory
    if not (directory / ARCHIVE_NAME).exists() and not is_experiment(directory):
        raise StellarError(
            f"{directory}: neither a run directory (no {ARCHIVE_NAME}) nor an experiment "
            f"directory (no {EXPERIMENT_FILE})"
        )
    if args.out is not None and args.out.is_dir():
        raise StellarError(f"-o {args.out}: a folder; give the HTML file's name")
    if args.embedder is not None:
        try:
            embedder_factory(args.embedder)
        except StellarError as exc:
            raise StellarError(f"--embedder: {exc}") from None
    try:
        path = write_report(directory, args.out, embedder=args.embedder)
    except sqlite3.DatabaseError as exc:
        raise StellarError(f"{directory}: an archive cannot be read ({exc})") from None
    except OSError as exc:
        raise StellarError(f"cannot write the report: {exc.strerror or exc}") from None
    console.print(f"report: {shown(str(path))}")
    return 0
