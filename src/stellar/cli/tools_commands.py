"""``stellar list``, ``stellar serve`` and ``stellar export``."""

from __future__ import annotations

import argparse
import contextlib
import re
import sqlite3
from pathlib import Path
from typing import Any

from rich.markup import escape

from stellar.archive import check_archive
from stellar.cli.options import setting
from stellar.cli.output import console, shown, stdout
from stellar.errors import StellarError
from stellar.export import export_failure_rules, export_run
from stellar.registry import KINDS, Plugin, describe_options, plugins
from stellar.rundir import ARCHIVE_NAME, EXPORT_DIR
from stellar.usecase import UseCase, hook, load_use_case


def add_parsers(commands: argparse._SubParsersAction) -> None:
    listing = commands.add_parser(
        "list",
        help="list the plugins: algorithms, generators, SUTs, fitness, ... and their options",
        description="Every registered plugin (built-in or from an installed package) with its "
        "one-line description and options. Plugins register through the Python entry point "
        "group stellar.KIND; see docs/plugins.md.",
    )
    listing.add_argument("kind", nargs="?", choices=list(KINDS), help="only this kind")
    listing.set_defaults(handler=cmd_list)

    serve = commands.add_parser(
        "serve",
        help="serve a use case's own system under test over HTTP",
        description="Serve the system under test that a use case ships (e.g. "
        "`stellar serve USECASE --port 8000`), for trying the HTTP adapter; a server that holds "
        "conversations keeps one per session id (the use case's docs give its endpoints, "
        "docs/dialogue.md an HTTP conversation set-up).",
    )
    add_use_case(serve)
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free)")
    serve.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    serve.set_defaults(handler=cmd_serve)

    data = commands.add_parser(
        "export-data",
        help="write a use case's data as JSON, to load into your own system",
        description="Write the data a use case's fitness scores against (for the built-in "
        "use case, the places its assistant may recommend), e.g. stellar export-data "
        "USECASE data.json --option NAME=VALUE.",
    )
    add_use_case(data)
    data.add_argument("file", metavar="FILE", type=Path, help="the JSON file to write")
    data.set_defaults(handler=cmd_export_data)

    export = commands.add_parser(
        "export",
        help="write a run's tests and failures as JSONL and CSV",
        description="Write tests.jsonl, tests.csv, failures.jsonl, failures.csv, "
        "failure_modes.csv (the failing answers grouped: each mode's size and examples) and "
        "failure_rules.jsonl and failure_rules.csv (the failure conditions: rules over feature "
        "values under which the tests failed, as stellar explain prints them). "
        "A failure's `mode` is its mode's number in failure_modes.csv and the end-of-run "
        "table (1: the largest); a duplicate's details.duplicate_of names the earlier input "
        "it matched (its generation and index).",
    )
    export.add_argument("run_dir", metavar="RUN_DIR", type=Path)
    export.add_argument("--out", type=Path, help="output folder (default: RUN_DIR/export)")
    export.add_argument(
        "--suite",
        type=Path,
        metavar="FILE",
        help="instead, write the failures as a suite file (JSONL) for stellar replay",
    )
    export.set_defaults(handler=cmd_export)


def add_use_case(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("usecase", metavar="USECASE", help="a use case name or folder")
    parser.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="a use-case option"
    )


def use_case_and_options(args: argparse.Namespace) -> tuple[UseCase, dict[str, Any]]:
    use_case = load_use_case(args.usecase)
    given = dict(setting(item, "--option") for item in args.option)
    return use_case, use_case.option_values(given, "--option")


def cmd_list(args: argparse.Namespace) -> int:
    out = stdout()
    for kind in [args.kind] if args.kind else list(KINDS):
        out.print(f"[bold]{kind}[/] - {KINDS[kind]}")
        for name, plugin in plugins(kind).items():
            try:
                lines = _use_case_lines(name) if kind == "usecase" else _plugin_lines(plugin)
            except StellarError as exc:  # one broken plugin does not hide the others
                lines = [f"  {name}  [red]cannot be loaded:[/] {escape(str(exc))}"]
            for line in lines:
                out.print(line)
        out.print()
    return 0


def _plugin_lines(plugin: Plugin) -> list[str]:
    lines = [f"  [bold]{escape(plugin.name)}[/]  {escape(plain(plugin.description))}"]
    lines += [f"      {name}: {escape(plain(about))}" for name, about in describe_options(plugin)]
    return lines


def _use_case_lines(name: str) -> list[str]:
    use_case = load_use_case(name)
    lines = [f"  [bold]{escape(name)}[/]  {escape(use_case.description)}"]
    for option, decl in use_case.options.items():
        about = f" - {decl['description']}" if decl.get("description") else ""
        lines.append(f"      --option {option}=...  default {decl.get('default')!r}{escape(about)}")
    return lines


def plain(text: str) -> str:
    """Docstring markup as plain text: ``name`` -> name."""
    return re.sub(r"``(.+?)``", r"\1", text)


def cmd_serve(args: argparse.Namespace) -> int:
    use_case, options = use_case_and_options(args)
    server = hook(use_case, "serve")(args.host, args.port, **options)
    host, port = server.server_address[:2]
    console.print(f"{use_case.name}: serving on http://{host}:{port}/ (Ctrl-C to stop)")
    try:
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
    finally:
        server.server_close()
    return 0


def cmd_export_data(args: argparse.Namespace) -> int:
    from stellar.config import folder_problem  # the configuration's models: not for `list`

    use_case, options = use_case_and_options(args)
    problem = folder_problem(args.file.parent) or (args.file.is_dir() and "a folder")
    if problem:
        raise StellarError(f"{args.file}: cannot be written ({problem})")
    count = hook(use_case, "export")(args.file, **options)
    console.print(f"{use_case.name}: wrote {count} records to {escape(str(args.file))}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from stellar.analysis.failure_modes import mode_numbers, run_failure_modes
    from stellar.analysis.failure_rules import run_failure_rules
    from stellar.analysis.report import export_failure_modes  # sklearn: only when needed
    from stellar.config import folder_problem

    archive = args.run_dir / ARCHIVE_NAME
    if not archive.exists():
        raise StellarError(f"{args.run_dir}: not a run directory (no {ARCHIVE_NAME})")
    check_archive(archive, reading=True)
    if args.suite is not None:
        from stellar.suite import export_suite

        count = export_suite(args.run_dir, args.suite)
        suite = shown(args.suite)
        console.print(f"{count} failures: {suite} (replay with: stellar replay {suite})")
        return 0
    out = args.out or args.run_dir / EXPORT_DIR
    if problem := folder_problem(out):
        raise StellarError(f"--out {out}: {problem}")
    try:
        modes = run_failure_modes(args.run_dir)
        paths = export_run(args.run_dir, out, mode_numbers(modes))
        paths.append(export_failure_modes(args.run_dir, out, modes))
        rules = run_failure_rules(args.run_dir, modes)
        paths += export_failure_rules(out, [rule.to_dict() for rule in rules])
    except sqlite3.DatabaseError as exc:
        raise StellarError(f"{archive}: cannot be read ({exc})") from None
    for path in paths:
        console.print(str(path))
    return 0
