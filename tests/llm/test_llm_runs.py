"""Whole runs against the local stub server: every fault recorded, cached re-runs identical."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import threading
from pathlib import Path

import pytest

from stellar.archive import open_run
from stellar.config import load_config
from stellar.llm.stub_server import Fail, Hang, StubLLMServer
from stellar.records import Status
from stellar.run import Run

FIXTURE = Path(__file__).parents[1] / "fixtures" / "llm"
KEY_ENV = "STELLAR_TEST_KEY"
VOLATILE = {"started_at", "finished_at", "generation_seconds", "sut_seconds", "fitness_seconds"}


class Behaviour:
    """The stub's answers for the models ``gen``, ``sut`` and ``judge`` of tests/fixtures/llm."""

    def __init__(self) -> None:
        self.rate_limited: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, body):
        if body["model"] == "judge":  # the whole conversation: a repair request comes last
            return self.judge(" ".join(m["content"] for m in body["messages"]))
        return getattr(self, body["model"])(body["messages"][-1]["content"])

    def gen(self, prompt: str):
        topic, trouble, mood = re.search(
            r"about (\w+)(?: \((\w+)\))? in a (\w+) tone", prompt
        ).groups()
        if trouble == "empty":
            return '""'
        if trouble == "refuse":
            return "I'm sorry, but I can't help with that request."
        return f'1. "{mood.capitalize()} question on {topic} {trouble or "plain"}?"'

    def sut(self, question: str):
        if "ratelimit" in question:
            with self.lock:
                first = question not in self.rate_limited
                self.rate_limited.add(question)
            if first:
                return Fail(429, "rate limited", {"Retry-After": "0.05"})
        if "crash" in question:
            return Fail(500, "internal error")
        if "hang" in question:
            return Hang(30)
        return f"Here is an answer to: {question}"

    def judge(self, prompt: str):
        if "badjson" in prompt:
            return "The answer looks fine to me."
        verdict = "unsafe" if "Angry" in prompt else "safe"
        return {"verdict": verdict, "reason": "stub judge"}


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")
    with StubLLMServer(Behaviour()) as server:
        yield server


def config_for(server, tmp_path, **overrides):
    models = {
        f"{part}.model": f"openai-compatible:{name}@{server.url}"
        for part, name in (("generator", "gen"), ("sut", "sut"), ("judge", "judge"))
    }
    return load_config(
        FIXTURE / "run.yaml",
        {
            "out": str(tmp_path / "runs"),
            "llm.cache_path": str(tmp_path / "cache.sqlite"),
            **models,
            **overrides,
        },
    )


def records_by_trouble(run_dir):
    with open_run(run_dir) as archive:
        records = list(archive.records())
    grouped: dict[str, list] = {}
    for record in records:
        grouped.setdefault(record.candidate["trouble"], []).append(record)
    return records, grouped


def test_every_fault_is_recorded(stub, tmp_path):
    config = config_for(stub, tmp_path, **{"budget.max_error_rate": 1.0})  # faults on purpose
    summary = asyncio.run(Run(config).execute())
    assert summary.stop_message == "test budget reached (40 tests)" and summary.error is None
    records, grouped = records_by_trouble(summary.run_dir)
    assert set(grouped) == {"none", "ratelimit", "crash", "hang", "badjson", "empty", "refuse"}

    def statuses(trouble):
        return {r.status for r in grouped[trouble]}

    assert statuses("none") == {Status.OK}
    assert statuses("ratelimit") == {Status.OK}  # retried after the 429 and answered
    retried: dict[str, int] = {}  # the stub refuses each distinct question once
    for r in grouped["ratelimit"]:
        retried[r.input_text] = retried.get(r.input_text, 0) + r.usage["sut"]["retries"]
    assert set(retried.values()) == {1}
    assert statuses("crash") == {Status.SUT_ERROR}
    assert all("HTTP 500" in r.error and "1 retries" in r.error for r in grouped["crash"])
    assert statuses("hang") == {Status.SUT_ERROR}
    assert all("timed out after 0.5 s" in r.error for r in grouped["hang"])
    assert statuses("badjson") == {Status.JUDGE_ERROR}
    assert all(r.usage["judge"]["calls"] == 2 for r in grouped["badjson"])  # one repair
    assert statuses("empty") == {Status.INVALID}
    assert all(r.error == "empty input" for r in grouped["empty"])
    assert statuses("refuse") == {Status.INVALID}
    assert all("refused" in r.error for r in grouped["refuse"])

    ok = [r for r in records if r.status == Status.OK]
    for record in ok:  # cleaned generations; verdicts follow the judge
        assert re.fullmatch(r"(Calm|Tense|Angry) question on \w+ \w+\?", record.input_text)
        assert record.failed == record.input_text.startswith("Angry")
        assert set(record.usage) == {"generator", "sut", "judge"}
    assert summary.failures == sum(r.failed for r in ok) > 0
    generator = summary.usage["generator"]  # also inputs generated but left over at the end
    asked = sum(body["model"] == "gen" for body in stub.bodies)
    assert generator["calls"] == asked + generator["cached"] >= len(records)
    assert summary.usage["sut"]["calls"] == summary.tests


def test_cached_rerun_reproduces_the_archive_without_requests(stub, tmp_path):
    clean = {"features": str(FIXTURE / "clean.yaml"), "budget.tests": 30, "seed": 11}
    first = asyncio.run(Run(config_for(stub, tmp_path, **clean)).execute())
    requests = stub.requests
    assert first.tests == 30 and requests > 30
    second = asyncio.run(Run(config_for(stub, tmp_path, **clean)).execute())
    assert stub.requests == requests  # nothing was asked again
    assert all(u["cached"] == u["calls"] for u in second.usage.values())

    def content(run_dir):
        with open_run(run_dir) as archive:  # in test order, not completion order
            records = sorted(archive.records(), key=lambda r: (r.generation, r.index))
        return [
            {k: v for k, v in vars(r).items() if k not in VOLATILE | {"usage"}} for r in records
        ]

    assert content(first.run_dir) == content(second.run_dir)
    assert len(content(first.run_dir)) >= 30


def test_wrong_key_stops_the_run_with_a_clear_error(stub, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "wrong-key")
    summary = asyncio.run(Run(config_for(stub, tmp_path, **{"llm.cache": False})).execute())
    assert "refused the API key (HTTP 401)" in summary.error
    assert summary.stop_message.startswith("model error:")
    records, _ = records_by_trouble(summary.run_dir)
    assert records and all("refused the API key" in (r.error or "") for r in records)
    assert all(r.status == Status.INVALID for r in records)  # the generator was refused
    db = sqlite3.connect(Path(summary.run_dir) / "archive.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_money_budget_stops_the_run(stub, tmp_path):
    priced = {
        "llm.cache": False,
        "llm.prices": {"gen": [1000.0, 1000.0], "sut": [0, 0], "judge": [0, 0]},
        "budget.cost": 0.2,
        "budget.tests": 1000,
    }
    summary = asyncio.run(Run(config_for(stub, tmp_path, **priced)).execute())
    assert summary.stop_reason.startswith("money budget reached")
    assert summary.cost >= 0.2 and summary.tests < 1000
    # at most the calls in flight when the budget ran out are spent beyond it
    with open_run(summary.run_dir) as archive:
        costs = [r.usage["generator"]["cost"] for r in archive.records() if r.usage]
    assert summary.cost <= 0.2 + 8 * max(costs)  # concurrency 8
