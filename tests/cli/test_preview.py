"""``stellar preview``: the inputs a configuration would send, with their feature values,
while nothing reaches the system under test; the first generation is what a run sends."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import cli, json_handler, serving
from test_init import faq_reply


@pytest.fixture
def use_case(tmp_path) -> Iterator[tuple[Path, list[str]]]:
    """A folder written by `stellar init` for a running FAQ bot, and the bot's requests."""
    requests: list[str] = []
    handler = json_handler(lambda text: faq_reply(text, requests))
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as base:
        made = cli("init", tmp_path / "faq", "--url", f"{base}/ask", "--no-smoke")
        assert made.returncode == 0, made.stderr
        yield tmp_path / "faq", requests
    sys.modules.pop("questions", None)


def test_preview_prints_n_inputs_with_their_features_and_sends_nothing(use_case):
    folder, asked = use_case
    result = cli("preview", folder, "-n", "15")
    assert result.returncode == 0, result.stderr
    numbered = re.findall(r"^ ?(\d+)  (.+)\n {4}\[(.+)\]$", result.stdout, re.MULTILINE)
    assert [int(n) for n, _, _ in numbered] == list(range(1, 16))
    for _, text, pairs in numbered:
        values = dict(pair.split("=", 1) for pair in pairs.split("  "))
        assert set(values) == {"topic", "style", "noise"} and text.strip()
    assert "-- generation 1:" in result.stdout  # population 10: a second generation
    assert "nothing was sent" in result.stderr
    assert asked == []


def test_json_is_one_document_and_a_seed_gives_the_same_inputs(use_case):
    folder, asked = use_case
    first = cli("preview", folder, "-n", "6", "--seed", "4", "--json", "--algorithm", "random")
    again = cli("preview", folder, "-n", "6", "--seed", "4", "--json", "--algorithm", "random")
    other = cli("preview", folder, "-n", "6", "--seed", "5", "--json", "--algorithm", "random")
    assert first.returncode == 0, first.stderr
    document = json.loads(first.stdout)
    assert {k: document[k] for k in ("config", "algorithm", "seed", "generator", "sent")} == {
        "config": "faq",
        "algorithm": "random",
        "seed": 4,
        "generator": "questions:ask",
        "sent": 0,
    }
    assert [i["number"] for i in document["inputs"]] == [1, 2, 3, 4, 5, 6]
    assert all(set(i["features"]) == {"topic", "style", "noise"} for i in document["inputs"])
    assert again.stdout == first.stdout and other.stdout != first.stdout
    assert asked == []


def test_the_first_generation_is_what_a_run_with_that_seed_sends_first(use_case, tmp_path):
    from stellar import event_loop
    from stellar.config import load_config
    from stellar.run import Run

    folder, asked = use_case
    shown = json.loads(cli("preview", folder, "-n", "10", "--seed", "2", "--json").stdout)
    config = load_config(str(folder), {"seed": 2, "budget.tests": 5, "out": str(tmp_path)})
    summary = event_loop.run(Run(config).execute())
    with sqlite3.connect(Path(summary.run_dir) / "archive.sqlite") as db:
        sent = db.execute(
            'SELECT "index", input_text FROM tests WHERE generation = 0 AND status = "ok"'
        ).fetchall()
    first = {i["index"]: i["text"] for i in shown["inputs"] if i["generation"] == 0}
    assert len(sent) == 5 and all(first[index] == text for index, text in sent)
    assert sorted(asked) == sorted(text for _, text in sent)


def test_a_model_generator_is_refused_without_allow_model():
    result = cli("preview", "safety", "--generator", "openai:gpt-4o-mini", "-n", "3")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "the generator calls a model (openai:gpt-4o-mini): give --allow-model" in result.stderr


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["-n", "0"], "argument -n: 0: must be from 1 to 10,000"),
        (["-n", "many"], "argument -n: 'many' is not a whole number"),
        (["--seed", "-1"], "--seed -1: must be from 0"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(argv, said):
    result = cli("preview", "no-such-use-case", *argv)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and said in result.stderr
