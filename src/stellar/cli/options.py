"""Parsing of command-line values shared by several commands."""

from __future__ import annotations

import argparse
from typing import Any

from stellar.cli.ci_options import share
from stellar.config_values import (
    MAX_CONCURRENCY,
    MAX_POPULATION,
    MAX_REPEATS,
    MAX_SEED,
    OFFLINE,
    parse_duration,
)
from stellar.errors import StellarError
from stellar.yaml_loading import key_value

# the bounds of every whole-number flag of every command (None: no upper bound)
BOUNDS: dict[str, tuple[int, int | None]] = {
    "seed": (0, MAX_SEED),
    "tests": (1, None),
    "population": (1, MAX_POPULATION),
    "concurrency": (1, MAX_CONCURRENCY),
    "show": (0, None),
    "seeds": (1, 10_000),
    "parallel": (1, 256),
    "repeats": (1, MAX_REPEATS),  # run: sends of each test; compare: clusterings
    "port": (0, 65535),
}


def setting(item: str, flag: str = "--set") -> tuple[str, Any]:
    """``KEY=VALUE`` with a YAML value."""
    return key_value(item, flag)


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """``--set`` values, then ``--option`` values as ``usecase.NAME``."""
    found = dict(setting(item) for item in args.set)
    for item in getattr(args, "option", []):
        key, value = setting(item, "--option")
        found[f"usecase.{key}"] = value
    return found


def positive(text: str) -> float:
    """A number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:  # NaN too
        raise argparse.ArgumentTypeError(f"{text}: must be above 0")
    return value


def check_bounds(args: argparse.Namespace) -> None:
    """Every whole-number flag given within its bounds (``BOUNDS``), before anything starts."""
    for name, (low, high) in BOUNDS.items():
        value = getattr(args, name, None)
        if isinstance(value, int) and not (low <= value and (high is None or value <= high)):
            allowed = f"from {low} to {high:,}" if high is not None else f"at least {low}"
            flag = "--" + name.replace("_", "-")
            raise StellarError(f"{flag} {value}: must be {allowed}")


def model_choice(value: str | None, what: str) -> dict | str | None:
    from stellar.llm.models import is_model_name  # pydantic: not for --help or a usage error

    if value is None or value == OFFLINE:
        return value
    if not is_model_name(value):
        raise StellarError(
            f"--{what} {value!r}: give a model such as openai:gpt-4o-mini, or offline"
        )
    return {"type": "llm", "model": value}


def sut_choice(value: str | None) -> dict | str | None:
    from stellar.config_sut import sut_setting  # the configuration's models: when read

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


def add_system_flags(parser: argparse.ArgumentParser) -> None:
    """What is tested and how: shared by run and compare."""
    parser.add_argument("--population", type=int, help="population size k (tests per generation)")
    parser.add_argument("--concurrency", type=int, help="tests run at the same time")
    parser.add_argument(
        "--generator",
        metavar="MODEL",
        help="a model writes the inputs (the use case's prompt); 'offline': the use case's own",
    )
    parser.add_argument(
        "--sut",
        metavar="TARGET",
        help="system under test: a model, an http(s) URL (JSON {'text': input} in, "
        "'answer' out), module:function, or 'offline' (the use case's own)",
    )
    parser.add_argument(
        "--judge", metavar="MODEL", help="an LLM judge scores the answers; 'offline': rules"
    )
    parser.add_argument(
        "--max-cost", type=positive, metavar="USD", help="stop when model calls have cost this much"
    )
    parser.add_argument(
        "--max-error-rate",
        type=share,
        metavar="SHARE",
        help="stop with exit code 3 when more than this share of tests are SUT or judge "
        "errors (default 0.2)",
    )
    parser.add_argument("--no-cache", action="store_true", help="do not reuse cached model answers")


def system_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings ``add_system_flags`` gives (None: not given)."""
    return {
        "algorithm.population": args.population,
        "concurrency": args.concurrency,
        "generator": model_choice(args.generator, "generator"),
        "sut": sut_choice(args.sut),
        "judge.model": "" if args.judge == OFFLINE else args.judge,
        "budget.cost": args.max_cost,
        "budget.max_error_rate": args.max_error_rate,
        "llm.cache": False if args.no_cache else None,
    }


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
        help="set any configuration value, e.g. --set judge.votes=3 (repeatable; YAML values; "
        "not what an option here sets too)",
    )
