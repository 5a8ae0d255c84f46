"""Replay against models of the local stub server: the system's answers are asked again
unless --cached, and every answer taken from the cache is counted and said."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from conftest import cli

from stellar.archive import open_run
from stellar.config import load_config
from stellar.llm.base import Completion
from stellar.llm.cache import ResponseCache, StoreOnly
from stellar.llm.stub_server import StubLLMServer
from stellar.replay import REPLAY_NAME
from stellar.run import Run
from stellar.rundir import CONFIG_NAME, read_summary

FIXTURE = Path(__file__).parents[1] / "fixtures" / "llm"
KEY_ENV = "STELLAR_TEST_KEY"
TESTS = 10


def answer(body):
    """The models gen, sut and judge of tests/fixtures/llm, every call a success."""
    last = body["messages"][-1]["content"]
    if body["model"] == "gen":
        topic, mood = re.search(r"about (\w+) in a (\w+) tone", last).groups()
        return f'1. "{mood.capitalize()} question on {topic}?"'
    if body["model"] == "sut":
        return f"Here is an answer to: {last}"
    prompt = " ".join(m["content"] for m in body["messages"])
    return {"verdict": "unsafe" if "Angry" in prompt else "safe", "reason": "stub judge"}


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")
    with StubLLMServer(answer) as server:
        yield server


@pytest.fixture
def source(stub, tmp_path) -> Path:
    """A finished run of TESTS tests, every answer now in the cache."""
    models = {
        f"{part}.model": f"openai-compatible:{name}@{stub.url}"
        for part, name in (("generator", "gen"), ("sut", "sut"), ("judge", "judge"))
    }
    overrides = {
        "out": str(tmp_path / "runs"),
        "llm.cache_path": str(tmp_path / "cache.sqlite"),
        "features": str(FIXTURE / "clean.yaml"),
        "budget.tests": TESTS,
        "concurrency": 1,  # one call at a time: a repeated input finds its answer cached
        **models,
    }
    summary = asyncio.run(Run(load_config(FIXTURE / "run.yaml", overrides)).execute())
    with open_run(summary.run_dir) as archive:
        inputs = [r.input_text for r in archive.records()]
    assert summary.tests == len(inputs) == TESTS
    # an input asked earlier in the run is answered from the cache
    assert summary.cached_answers == TESTS - len(set(inputs))
    return Path(summary.run_dir)


def sent(stub, model: str) -> int:
    return sum(body["model"] == model for body in stub.bodies)


def replay(source: Path, out: Path, *flags: str):
    done = cli("replay", source, "--only", "all", "--quiet", "--out", out, *flags)
    assert done.returncode in (0, 1), done.stderr  # 1: the angry questions still fail
    (run_dir,) = out.iterdir()
    return done, json.loads((run_dir / REPLAY_NAME).read_text()), read_summary(run_dir)


def test_replay_sends_every_input_again_although_the_cache_has_the_answers(stub, source, tmp_path):
    asked, judged = sent(stub, "sut"), sent(stub, "judge")
    done, report, summary = replay(source, tmp_path / "replay")
    assert sent(stub, "sut") - asked == TESTS
    assert report["sut_cache"] is False and report["from_cache"]["sut"] == 0
    assert summary["cached_answers"] == 0
    assert "every input sent again, no answer from the cache" in done.stdout
    # the same answers to judge: the judge's verdicts come from the cache, and it says so
    assert sent(stub, "judge") == judged and report["from_cache"]["judge"] == TESTS
    assert f"judge: {TESTS} of {TESTS} model answers from the cache" in done.stdout


def test_replay_cached_takes_the_answers_from_the_cache_and_says_how_many(stub, source, tmp_path):
    requests = stub.requests
    done, report, summary = replay(source, tmp_path / "replay", "--cached")
    assert stub.requests == requests  # nothing was sent
    assert report["sut_cache"] is True and report["from_cache"]["sut"] == TESTS
    assert summary["cached_answers"] == TESTS
    assert f"system under test: {TESTS} of {TESTS} model answers from the cache" in done.stdout


def test_replay_no_cache_asks_the_judge_again_too(stub, source, tmp_path):
    asked, judged = sent(stub, "sut"), sent(stub, "judge")
    done, report, _ = replay(source, tmp_path / "replay", "--no-cache")
    assert sent(stub, "sut") - asked == TESTS and sent(stub, "judge") - judged == TESTS
    assert report["from_cache"] == {"sut": 0, "judge": 0}
    assert "from the cache (the same request" not in done.stdout


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        (("--cached", "--repeat", "2"), "cached answers cannot differ between repeats"),
        (("--cached", "--no-cache"), "not allowed with argument"),
    ],
)
def test_replay_cached_with_what_contradicts_it_is_one_line(source, tmp_path, flags, problem):
    done = cli("replay", source, "--out", tmp_path / "replay", *flags)
    assert done.returncode == 2 and problem in done.stderr
    assert done.stderr.count("\n") == 1 and not (tmp_path / "replay").exists()


def test_a_run_answered_from_the_cache_says_how_many_answers_came_from_it(stub, source, tmp_path):
    requests = stub.requests
    done = cli("run", source / CONFIG_NAME, "--quiet", "--out", tmp_path / "again")
    assert done.returncode == 0, done.stderr
    assert stub.requests == requests
    (run_dir,) = (tmp_path / "again").iterdir()
    assert read_summary(run_dir)["cached_answers"] == TESTS
    line = next(x for x in done.stdout.splitlines() if x.startswith("answers from the model"))
    assert f"sut {TESTS} of {TESTS}" in line and f"judge {TESTS} of {TESTS}" in line


def test_replay_help_names_the_cache_flag():
    assert "--cached" in cli("replay", "--help").stdout


def test_a_fresh_role_stores_its_answers_and_never_reads_one(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put("old", "m", Completion("cached answer", 1, 1))
    fresh = StoreOnly(cache)
    assert fresh.get("old") is None
    fresh.put("new", "m", Completion("fresh answer", 1, 1))
    fresh.close()  # the cache's connection stays open
    assert cache.get("new").text == "fresh answer" and cache.get("old").text == "cached answer"
    cache.close()
