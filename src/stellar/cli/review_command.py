"""``stellar review``: a person marks a run's verdicts real, false alarm or unsure, on a local
page or from a file; the marks go to ``RUN_DIR/review.jsonl`` and into the run's report."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from stellar.cli.output import shown, stdout
from stellar.errors import StellarError

if TYPE_CHECKING:
    from stellar.review.session import ReviewSession

HELP = """\
Review a run's verdicts: is each failure real, or a false alarm of the judge? The command
serves a page on this machine only (127.0.0.1, a free port, a random token in the address:
open the address it prints) showing each verdict's input, answer (or conversation), verdict
and the judge's reason. Mark it with the buttons or the keys r (real), f (false alarm),
u (unsure), n (a note), j / k (next, previous). The least certain verdicts come first, then
a random sample of failures and passes, whose marks estimate the share of the run's failures
that are real.

Each mark is appended to RUN_DIR/review.jsonl and synced to disk before the page shows it
saved, so stopping or killing the server loses nothing; marking a verdict again replaces its
mark. Ctrl-C (or SIGTERM) ends the review: the marks so far and the precision estimate are
printed and the run's report is written again, with false alarms excluded from its counts.
The file is a label file: stellar calibrate USECASE --labels RUN_DIR/review.jsonl measures
the judges against it. With --labels FILE, marks in that format are imported without a page
(every line is checked before anything is written).

examples:
  stellar review runs/my-run-stellar-s0-20261123-120000
  stellar review RUN_DIR --open --reviewer alice     open the page in the default browser
  stellar review RUN_DIR --port 8765                 a fixed port (e.g. for an SSH tunnel)
  stellar review RUN_DIR --labels marks.jsonl        import marks, e.g. in CI
"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    review = commands.add_parser(
        "review",
        help="mark a run's verdicts real or false alarm on a local page (or import marks)",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    review.add_argument("run_dir", metavar="RUN_DIR", type=Path, help="a run directory")
    review.add_argument(
        "--labels",
        type=Path,
        metavar="FILE",
        help="import the marks of this file (review.jsonl's format) instead of serving a page",
    )
    review.add_argument(
        "--port", type=int, default=0, metavar="N", help="the page's port (default: a free one)"
    )
    review.add_argument(
        "--open",
        action="store_true",
        help="open the page in the default browser (default: only print its address, which "
        "also works over SSH and where no browser is set up)",
    )
    review.add_argument(
        "--reviewer",
        metavar="NAME",
        help="who marks, kept with each mark (default: the OS user's name)",
    )
    review.set_defaults(handler=cmd_review)


def cmd_review(args: argparse.Namespace) -> int:
    from stellar.rundir import ARCHIVE_NAME

    run_dir: Path = args.run_dir
    if not (run_dir / ARCHIVE_NAME).is_file():  # told before anything heavy is imported
        raise StellarError(f"{run_dir}: not a run directory (no {ARCHIVE_NAME})")
    from stellar.locks import DirectoryLock
    from stellar.review.session import ReviewSession

    with DirectoryLock(run_dir, "review"):
        try:
            session = ReviewSession(run_dir, args.reviewer)
        except sqlite3.DatabaseError as exc:
            raise StellarError(f"{run_dir / ARCHIVE_NAME}: cannot be read ({exc})") from None
        if args.labels is not None:
            import_labels(session, args.labels)
        else:
            serve_page(session, args.port, args.open)
        end_review(session)
    return 0


def import_labels(session: ReviewSession, labels: Path) -> None:
    """Append a file's marks, every line checked first (nothing written on any problem)."""
    from stellar.review.marks import import_marks

    marks = import_marks(session.run_dir, labels, session.records)
    session.add(marks)
    stdout().print(f"imported {len(marks)} marks from {shown(labels)}")


def serve_page(session: ReviewSession, port: int, open_browser: bool) -> None:
    from stellar.review.server import serve

    def ready(url: str) -> None:
        print(f"review page: {url}", flush=True)  # plain: a terminal must not wrap the address
        print("Ctrl-C ends the review (every mark is already saved).", flush=True)
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    serve(session, port, ready)


def end_review(session: ReviewSession) -> None:
    """The marks so far and what they say, then the run's report written again."""
    from stellar.analysis.html_report import write_report
    from stellar.review.marks import MARKS_NAME

    out = stdout()
    for line in session.summary():
        out.print(shown(line))
    out.print(f"marks: {shown(session.run_dir / MARKS_NAME)}")
    try:
        path = write_report(session.run_dir)
    except (OSError, sqlite3.DatabaseError) as exc:
        raise StellarError(f"cannot write the report: {exc}") from None
    out.print(f"report: {shown(path)}")
