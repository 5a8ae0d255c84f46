"""``stellar init``: a use case folder for an HTTP system, written from flags (or asked on a
terminal), then a smoke run against it; a non-empty folder and bad flags refused in one line."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import cli, json_handler, serving

from stellar.cli.init_command import FILES

FAQ = {  # keyword: answer
    "open": "We are open 9 to 18, Monday to Saturday.",
    "price": "A bike is 20 euros a day.",
    "return": "Returns are free within 30 days.",
}


def faq_reply(text: str, requests: list[str]) -> dict:
    """A keyword FAQ bot: {"answer": ..., "entry": ...} for a question."""
    requests.append(text)
    entry = next((key for key in FAQ if key in text.lower()), None)
    return {"answer": FAQ[entry] if entry else "Sorry, I didn't understand.", "entry": entry}


@pytest.fixture
def bot() -> Iterator[tuple[str, list[str]]]:
    """The bot's URL and the questions it was sent."""
    requests: list[str] = []
    handler = json_handler(lambda text: faq_reply(text, requests))
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as base:
        yield f"{base}/ask", requests


@pytest.fixture(autouse=True)
def fresh_writer() -> Iterator[None]:
    """Every scaffold's writer is a module `questions`: each test imports its own."""
    yield
    sys.modules.pop("questions", None)


def test_init_with_flags_writes_a_runnable_folder_and_the_smoke_run_passes(tmp_path, bot):
    url, asked = bot
    result = cli("init", "faq", "--url", url, "--data-path", "$", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "faq"
    assert sorted(p.name for p in folder.iterdir()) == sorted(FILES)
    written = (folder / "usecase.yaml").read_text()
    assert f'url: "{url}"' in written and 'data: "$"' in written
    assert "kind: not-contains" in written and "#   kind: similar" in written
    assert "stellar preview faq -n 20" in (folder / "README.md").read_text()
    [line] = result.stdout.splitlines()[1:]  # after "wrote faq: ..."
    assert line.startswith("smoke run: the system answered 10 of 10 questions (0 errors")
    assert len(asked) == 10
    [run_dir] = (tmp_path / "runs").iterdir()
    assert run_dir.name.startswith("faq-stellar-s0-") and str(run_dir.relative_to(tmp_path)) in line
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["tests"] == 10 and summary["sut_errors"] == 0
    assert summary["failures"] > 0  # the placeholder topics: "delivery" is not understood


def test_the_written_configuration_has_checks_and_the_chosen_request(tmp_path, bot):
    from stellar.config import load_config

    url, _ = bot
    args = ("--request-field", "message", "--answer-path", "$.answer", "--name", "bikes")
    result = cli("init", tmp_path / "f", "--url", url, *args, "--no-smoke")
    assert result.returncode == 0, result.stderr
    config = load_config(str(tmp_path / "f"))
    assert config.name == "bikes"
    assert config.sut.options["body"] == {"message": "{{input}}"}
    assert config.fitness.target == "checks" and config.objectives == ["answers"]
    kinds = {f.name: f.kind for f in config.feature_space().features}
    assert kinds == {"topic": "content", "style": "style", "noise": "perturbation"}


def test_a_system_that_does_not_answer_is_told_in_one_line_with_exit_3(tmp_path, bot):
    url, _ = bot
    result = cli("init", "faq", "--url", url, "--answer-path", "$.reply", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    line = result.stdout.splitlines()[-1]
    assert line.startswith("smoke run: the system did not answer: 10 of 10 questions were errors")
    assert "no answer at $.reply" in line


def test_a_folder_with_something_in_it_is_refused(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    result = cli("init", tmp_path / "mine", "--url", "http://127.0.0.1:9/ask", "--no-smoke")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "exists and is not empty" in result.stderr
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--url", "localhost:8000"], "--url 'localhost:8000': must start with http://"),
        (["--url", "http://x:80/", "--answer-path", "$[["], "--answer-path '$[[': not valid"),
        (["--url", "http://x:80/", "--data-path", "entry"], "--data-path 'entry': not valid"),
        (["--url", "http://x:80/", "--request-field", ""], "--request-field '': give a JSON key"),
        (["--url", "http://x:80/", "--name", "my bot"], "--name 'my bot': letters, digits"),
        ([], "--url is needed"),  # stdin is no terminal here
        (["--url", "http://x:80/", "--smoke"], "unrecognized arguments: --smoke"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2_with_nothing_written(tmp_path, flags, said):
    result = cli("init", tmp_path / "new", *flags, "--no-smoke")
    assert result.returncode == 2
    assert result.stderr.startswith("stellar: error: ") and result.stderr.count("\n") == 1
    assert said in result.stderr
    assert not (tmp_path / "new").exists()


def test_on_a_terminal_what_no_flag_gives_is_asked(tmp_path, monkeypatch):
    replies = iter(["http://127.0.0.1:8000/chat", "", "$.reply.text", "", ""])
    asked: list[str] = []

    def answer(prompt: str) -> str:
        asked.append(prompt)
        return next(replies)

    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", answer)
    result = cli("init", tmp_path / "Bike Bot", "--no-smoke")
    assert result.returncode == 0, result.stderr
    assert len(asked) == 5 and asked[-1] == "name of the use case [Bike-Bot]: "
    written = (tmp_path / "Bike Bot" / "usecase.yaml").read_text()
    assert 'name: "Bike-Bot"' in written and 'answer: "$.reply.text"' in written
    assert 'body: {"text": "{{input}}"}' in written and '\n  # data: "$"' in written


def test_help_and_usage_errors_import_no_heavy_library():
    from test_startup import CLI, imported_by

    for argv, code in (
        (["init", "--help"], 0),
        (["preview", "--help"], 0),
        (["init", str(Path("never-written")), "--url", "nope"], 2),
    ):
        assert imported_by(CLI, json.dumps(argv)) == {"code": code, "heavy": []}
