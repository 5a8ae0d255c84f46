"""``stellar init DIR``: a runnable use case folder for a system over HTTP, then a smoke run.

A newcomer should not have to copy a worked example by hand to test their own system: this
writes the use case, its features, a question writer and checks from a few answers (URL,
request field, answer path, data path), then sends ten questions to say at once whether the
system answers at all, before a long run is spent on a wrong URL or JSONPath.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stellar.errors import StellarError

HELP = """\
Write a use case folder for a system under test reached over HTTP, then run 10 tests.

DIR gets usecase.yaml (what a run is made of, commented), features.yaml (a `topic` with
placeholder values to edit, a `style`, a `noise`), questions.py (the question writer; it
adds the noise with STELLAR's perturbation functions), checks in usecase.yaml (the answer
must not say "sorry, I didn't understand": put your system's words there) and README.md
(what each file is, the next commands). Each question is POSTed as JSON {FIELD: QUESTION};
the answer is read from the JSON reply at a JSONPath. Nothing needs a model or an API key.

On a terminal the values not given as flags are asked for; elsewhere (or with --yes) --url
is needed and the rest take their defaults. A DIR that exists and is not empty is refused.
Unless --no-smoke, a smoke run (stellar run DIR --tests 10, into runs/) follows and one line
says whether the system answered.

Exit codes: 0 written (and the system answered); 2 a usage error, nothing written; 3 written,
but the system answered none of the smoke run's questions, or too few.

examples:
  stellar init faq-bot                                        asks on a terminal
  stellar init faq-bot --url http://localhost:8000/ask --yes  every default
  stellar init faq-bot --url http://localhost:8000/chat --request-field message \\
      --answer-path '$.reply.text' --data-path '$.reply' --no-smoke
"""

SMOKE_TESTS = 10
TOPICS = ("opening hours", "prices", "returns", "delivery")  # placeholders the user edits
FILES = ("usecase.yaml", "features.yaml", "questions.py", "README.md")  # each from FILE.j2
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # it names run directories


@dataclass
class Answers:
    """What the scaffold is written from."""

    url: str
    request_field: str = "text"
    answer_path: str = "$.answer"
    data_path: str | None = None
    name: str = "app"


def add_parser(commands: argparse._SubParsersAction) -> None:
    init = commands.add_parser(
        "init",
        help="write a use case folder for your HTTP system, then a 10-test smoke run",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    init.add_argument("dir", metavar="DIR", type=Path, help="the folder to write (new or empty)")
    init.add_argument("--url", help="http(s) URL the questions are POSTed to")
    init.add_argument(
        "--request-field", metavar="KEY", help="JSON key the question goes in (default: text)"
    )
    init.add_argument(
        "--answer-path",
        metavar="JSONPATH",
        help="where the reply keeps the answer (default: $.answer)",
    )
    init.add_argument(
        "--data-path",
        metavar="JSONPATH",
        help="where the reply keeps structured data, for json-path checks (default: none)",
    )
    init.add_argument("--name", help="the use case's name (default: DIR's name)")
    init.add_argument("--no-smoke", action="store_true", help="write the folder, run nothing")
    init.add_argument(
        "--yes", action="store_true", help="ask nothing: defaults for what is not given"
    )
    init.set_defaults(handler=cmd_init)


def cmd_init(args: argparse.Namespace) -> int:
    folder: Path = args.dir
    check_folder(folder)
    answers = answers_from(args, interactive=sys.stdin.isatty() and not args.yes)
    write_scaffold(folder, answers)
    print(f"wrote {_shown(folder)}: {', '.join(FILES)} (see {_shown(folder / 'README.md')})")
    if args.no_smoke:
        print(f"next: stellar preview {_shown(folder)} -n 20; stellar run {_shown(folder)}")
        return 0
    return smoke_run(folder)


def check_folder(folder: Path) -> None:
    """Refuse a DIR that is a file or a folder with anything in it: nothing is overwritten."""
    try:
        if folder.exists() and not folder.is_dir():
            raise StellarError(f"{folder}: exists and is not a folder")
        if folder.is_dir() and any(folder.iterdir()):
            raise StellarError(f"{folder}: exists and is not empty (give a new or empty folder)")
    except OSError as exc:
        raise StellarError(f"{folder}: cannot be used ({exc.strerror or exc})") from None


def answers_from(args: argparse.Namespace, interactive: bool) -> Answers:
    """The flags, with what they leave out asked for on a terminal, checked."""
    default_name = _name_from(args.dir)
    given: dict[str, Any] = {
        "url": args.url,
        "request_field": args.request_field,
        "answer_path": args.answer_path,
        "data_path": args.data_path,
        "name": args.name,
    }
    if interactive:
        given = ask_missing(given, default_name)
    if not given["url"]:
        raise StellarError("--url is needed (stdin is not a terminal, or --yes was given)")
    answers = Answers(
        url=given["url"].strip(),
        request_field=_or(given["request_field"], "text"),
        answer_path=_or(given["answer_path"], "$.answer").strip(),
        data_path=(given["data_path"] or "").strip() or None,
        name=_or(given["name"], default_name).strip(),
    )
    check_answers(answers)
    return answers


PROMPTS = (  # key, question, default shown
    ("url", "URL your system answers at (POST, JSON)", None),
    ("request_field", "JSON key the question goes in", "text"),
    ("answer_path", "JSONPath of the answer in the reply", "$.answer"),
    ("data_path", "JSONPath of structured data in the reply (Enter: none)", ""),
    ("name", "name of the use case", None),
)


def ask_missing(given: dict[str, Any], default_name: str) -> dict[str, Any]:
    """Ask on the terminal for each value no flag gave (Enter takes the default)."""
    asked = dict(given)
    for key, question, default in PROMPTS:
        if asked[key] is not None:
            continue
        default = default_name if key == "name" else default
        shown = f" [{default}]" if default else ""
        try:
            reply = input(f"{question}{shown}: ").strip()
        except (EOFError, KeyboardInterrupt):
            print(file=sys.stderr)
            raise StellarError("stopped before anything was written") from None
        asked[key] = reply or default
    return asked


def check_answers(answers: Answers) -> None:
    """One line for a value the scaffold could not run with, before anything is written."""
    from stellar.config_values import url_problem

    for flag, value in (
        ("--url", answers.url),
        ("--request-field", answers.request_field),
        ("--answer-path", answers.answer_path),
        ("--data-path", answers.data_path or ""),
        ("--name", answers.name),
    ):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise StellarError(f"{flag} {value!r}: not valid UTF-8") from None
    if problem := url_problem(answers.url):
        raise StellarError(f"--url {problem}")
    field = answers.request_field
    if not field.strip() or field != field.strip() or any(ord(c) < 32 for c in field):
        raise StellarError(f"--request-field {field!r}: give a JSON key, e.g. text or message")
    for flag, path in (("--answer-path", answers.answer_path), ("--data-path", answers.data_path)):
        if path is not None and (problem := jsonpath_problem(path)):
            raise StellarError(f"{flag} {path!r}: not valid JSONPath ({problem}); e.g. $.answer")
    if not NAME.fullmatch(answers.name):
        raise StellarError(
            f"--name {answers.name!r}: letters, digits, '.', '_' and '-' (it names run folders)"
        )


def jsonpath_problem(path: str) -> str | None:
    """Why ``path`` does not parse as the HTTP system's JSONPath (None: it does)."""
    from jsonpath_ng.ext import parse  # the HTTP system's own parser

    if not path.startswith("$"):
        return "it starts with $"
    try:
        parse(path)
    except Exception as exc:  # the parser raises several types
        return " ".join(str(exc).split()) or type(exc).__name__
    return None


def write_scaffold(folder: Path, answers: Answers) -> None:
    """Render every file of the scaffold into ``folder`` (made if missing)."""
    from importlib.resources import files

    import jinja2

    templates = files("stellar").joinpath("scaffold")
    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
    )
    env.filters["tojson"] = _quoted  # JSON strings are YAML strings; Jinja's own escapes HTML
    values = {
        "name": answers.name,
        "description": f"The system at {answers.url}, tested with questions about its topics.",
        "folder": _shown(folder),
        "url": answers.url,
        "body": json.dumps({answers.request_field: "{{input}}"}),
        "answer": answers.answer_path,
        "data": answers.data_path,
        "topics": TOPICS,
    }
    rendered = {
        name: env.from_string(templates.joinpath(f"{name}.j2").read_text("utf-8")).render(values)
        for name in FILES
    }
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in rendered.items():
            (folder / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise StellarError(f"{folder}: cannot write ({exc.strerror or exc})") from None


def smoke_run(folder: Path) -> int:
    """Ten tests of the new use case; one line: did the system answer (and how many failed
    the checks)? Exit code 3 when it answered none, or fewer than the run's error rate allows."""
    from stellar import event_loop
    from stellar.config import load_config
    from stellar.run import Run

    print(f"smoke run: {SMOKE_TESTS} questions to the system ...", file=sys.stderr, flush=True)
    config = load_config(str(folder), {"budget.tests": SMOKE_TESTS})
    run = Run(config)
    try:
        summary = event_loop.run(run.execute())
    except KeyboardInterrupt:
        print(f"smoke run stopped; continue with: stellar run --resume {run.run_dir}")
        return 130
    answered = summary.tests - summary.sut_errors
    first = f"; first error: {_one_line(summary.first_error)}" if summary.first_error else ""
    where = f"run directory {_shown(Path(summary.run_dir))}"
    if summary.tests and not answered:
        print(
            f"smoke run: the system did not answer: {summary.tests} of {summary.tests} "
            f"questions were errors{first}; check that it runs, and the URL, the request "
            f"and the answer path (sut: in {_shown(folder / 'usecase.yaml')})"
        )
        return 3
    trouble = summary.error or summary.unhealthy
    print(
        f"smoke run: the system answered {answered} of {summary.tests} questions "
        f"({summary.sut_errors} errors, {summary.judge_errors} check errors); "
        f"{summary.failures} failed the checks{first}"
        + (f"; not healthy: {_one_line(trouble)}" if trouble else "")
        + f"; {where}"
    )
    return 3 if trouble else 0


def _or(value: str | None, default: str) -> str:
    """A flag's value, or ``default`` when it was not given (an empty one is checked)."""
    return default if value is None else value


def _name_from(folder: Path) -> str:
    """A use case name from a folder's name: what NAME refuses becomes '-'."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", folder.resolve().name).strip("-._")[:64]
    return name or "app"


def _quoted(value: Any) -> str:
    """``value`` as a JSON string (ASCII, so no character can break the YAML line)."""
    return json.dumps(value, ensure_ascii=True)


def _shown(path: Path) -> str:
    return _one_line(str(path))


def _one_line(text: str) -> str:
    from stellar.untrusted import for_terminal

    return " ".join(for_terminal(text).split())
