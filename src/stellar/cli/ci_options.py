"""Flags for CI, shared by run, compare and replay: JUnit XML and the failure thresholds."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from stellar.errors import StellarError


def add_ci_flags(parser: argparse.ArgumentParser, default: str) -> None:
    """``--junit``, ``--max-failure-rate``, ``--max-failures``; ``default`` says what the
    command does when neither threshold is given."""
    parser.add_argument(
        "--junit", metavar="FILE", help="write JUnit XML: one test case per executed test"
    )
    parser.add_argument(
        "--max-failure-rate",
        type=share,
        metavar="R",
        help=f"exit 1 when failures / verdicts is above R, e.g. 0.05 ({default})",
    )
    parser.add_argument(
        "--max-failures",
        type=count,
        metavar="N",
        help=f"exit 1 when there are more than N failures ({default})",
    )


def gate_exit(args: argparse.Namespace, failures: int, verdicts: int, strict: bool) -> int:
    """Exit code 1 when over a threshold, else 0. With no threshold given, ``strict`` commands
    (replay, ``run --fail-on-failures``) fail on any failure, others pass."""
    from stellar.junit import over_threshold  # yaml, the archive: after the command's work

    rate, most = args.max_failure_rate, args.max_failures
    if rate is None and most is None and not strict:
        return 0
    reason = over_threshold(failures, verdicts, rate, most)
    if reason is None:
        return 0
    print(f"stellar: over the threshold: {reason}", file=sys.stderr)
    return 1


def share(text: str) -> float:
    """A share from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text}: must be from 0 to 1")
    return value


def count(text: str) -> int:
    """A whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: must be 0 or more")
    return value


def check_writable(path: Path, flag: str) -> None:
    """Refuse, before a run, a file it could not write at its end (one line, exit 2)."""
    if path.is_dir():
        raise StellarError(f"{flag} {path}: a folder, not a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as exc:
        raise StellarError(f"{flag} {path}: cannot write there ({exc.strerror or exc})") from None
