"""Parsing of command-line values shared by several commands."""

from __future__ import annotations

import argparse
from typing import Any

import yaml

from stellar.config import OFFLINE, parse_duration, sut_setting
from stellar.errors import StellarError
from stellar.llm.models import is_model_name


def setting(item: str, flag: str = "--set") -> tuple[str, Any]:
    """``KEY=VALUE`` with a YAML value."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise StellarError(f"{flag} {item!r}: write KEY=VALUE, e.g. {flag} {_EXAMPLE[flag]}")
    try:
        return key.strip(), yaml.safe_load(value)
    except yaml.YAMLError:
        raise StellarError(f"{flag} {item!r}: the value is not valid YAML") from None


_EXAMPLE = {"--set": "judge.votes=3", "--option": "NAME=VALUE"}


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """``--set`` values, then ``--option`` values as ``usecase.NAME``."""
    found = dict(setting(item) for item in args.set)
    for item in getattr(args, "option", []):
        key, value = setting(item, "--option")
        found[f"usecase.{key}"] = value
    return found


def model_choice(value: str | None, what: str) -> dict | str | None:
    if value is None or value == OFFLINE:
        return value
    if not is_model_name(value):
        raise StellarError(
            f"--{what} {value!r}: give a model such as openai:gpt-4o-mini, or offline"
        )
    return {"type": "llm", "model": value}


def sut_choice(value: str | None) -> dict | str | None:
    if value is None:
        return None
    try:
        return sut_setting(value)
    except ValueError as exc:
        raise StellarError(f"--sut: {exc}") from None


def duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_command(
    commands: argparse._SubParsersAction, name: str, summary: str, description: str
) -> argparse.ArgumentParser:
    """A command that takes a run configuration (or a use case) as its CONFIG."""
    parser = commands.add_parser(
        name,
        help=summary,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "config",
        nargs="?",
        metavar="CONFIG",
        help="run configuration (YAML), or a use case: a registered name or a folder",
    )
    return parser


def add_option_flags(parser: argparse.ArgumentParser) -> None:
    """``--set`` and ``--option``, shared by run, compare and serve."""
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an option of the use case (repeatable; see: stellar list usecase)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set any configuration value, e.g. --set judge.votes=3 (repeatable; YAML values)",
    )
