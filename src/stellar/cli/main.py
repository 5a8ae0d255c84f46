"""The ``stellar`` command line: the parser and the one place that turns errors into exit 2.

A usage error (argparse's), a flag out of its bounds and every ``StellarError`` end the same
way: one line ``stellar: error: ...`` on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from stellar import __version__
from stellar.cli import (
    calibrate_command,
    compare_command,
    explain_command,
    init_command,
    judge_command,
    preview_command,
    replay_command,
    report_command,
    review_command,
    run_command,
    shrink_command,
    tools_commands,
)
from stellar.cli.options import check_bounds
from stellar.errors import StellarError

# what would break the line or steer the terminal: controls, line and paragraph separators,
# bidi overrides (a message may quote a user's key or value)
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def one_line(message: str) -> str:
    """``message`` as one printable line: what would break or steer it is shown escaped."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode(), message)


class Parser(argparse.ArgumentParser):
    """argparse with usage errors in one line (subcommands' parsers are of this class too)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"stellar: error: {one_line(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="stellar", description="STELLAR: search-based testing of LLM applications."
    )
    parser.add_argument("--version", action="version", version=f"stellar {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    init_command.add_parser(commands)
    run_command.add_parser(commands)
    preview_command.add_parser(commands)
    compare_command.add_parser(commands)
    judge_command.add_parser(commands)
    calibrate_command.add_parser(commands)
    replay_command.add_parser(commands)
    report_command.add_parser(commands)
    explain_command.add_parser(commands)
    review_command.add_parser(commands)
    shrink_command.add_parser(commands)
    tools_commands.add_parsers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        check_bounds(args)
        return args.handler(args)
    except StellarError as exc:
        print(f"stellar: error: {one_line(str(exc))}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)  # 143 for SIGTERM (Terminated)


if __name__ == "__main__":
    sys.exit(main())
