"""Structured output steps down per endpoint as each server kind rejects it (docs/servers.md)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from pydantic import Field

from stellar.errors import ModelError
from stellar.fitness.json_output import JudgeReply, complete_json, strict_schema
from stellar.llm.client import Models
from stellar.llm.models import EndpointSettings, LLMSettings
from stellar.llm.structured import (
    SCHEMA_INTRO,
    StructuredLevel,
    prompt_messages,
    prompted_schema,
    rejects,
)
from stellar.llm.stub_server import Fail, StubLLMServer, default_responder
from stellar.llm.usage import book_for_test

KEY_ENV = "STELLAR_TEST_KEY"
SCHEMA_LEVEL, OBJECT_LEVEL, PROMPT_LEVEL = (
    StructuredLevel.JSON_SCHEMA,
    StructuredLevel.JSON_OBJECT,
    StructuredLevel.PROMPT,
)
MESSAGES = [
    {"role": "system", "content": "You grade answers."},
    {"role": "user", "content": 'Grade this answer. Reply with only {"score": 0-2}.'},
]


class Score(JudgeReply):
    score: int = Field(ge=0, le=2)


def obedient_model(body):
    """Honours a response_format it receives (score 2); without one it follows the prompt
    (score 1) and fences its JSON, as small local models do."""
    if body.get("response_format"):
        return default_responder(body)
    return '```json\n{"score": 1}\n```'


@pytest.fixture
async def models(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")
    endpoint = EndpointSettings(api_key_env=KEY_ENV, backoff=0.01, max_backoff=0.05)
    made = Models(LLMSettings(cache=False, endpoints={"openai-compatible": endpoint}))
    yield made
    await made.aclose()


async def judge(client, book=None):
    with book_for_test(book if book is not None else {}):
        parsed = await complete_json(
            client,
            MESSAGES,
            Score,
            structured=True,
            temperature=0.0,
            max_tokens=50,
            seed=None,
            sample=0,
        )
    return parsed.value.score


# one row per row of the table in docs/servers.md:
# server kind, requests for the first judgement, level then remembered, score (2: the server
# honoured a response_format, 1: the model followed the prompt)
ROWS = [
    ("openai", 1, SCHEMA_LEVEL, 2),
    ("azure-old-api", 2, OBJECT_LEVEL, 2),
    ("azure-model", 3, PROMPT_LEVEL, 1),
    ("vllm-old", 2, OBJECT_LEVEL, 2),
    ("ollama-old", 1, SCHEMA_LEVEL, 1),  # ignored, not rejected: nothing to step down from
    ("llama-cpp-python", 2, OBJECT_LEVEL, 2),
    ("llama.cpp-old", 2, OBJECT_LEVEL, 2),
]


@pytest.mark.parametrize(("kind", "requests", "level", "score"), ROWS, ids=[r[0] for r in ROWS])
async def test_each_server_kind_still_gets_a_parsed_answer(models, kind, requests, level, score):
    with StubLLMServer(obedient_model, reject_structured=kind) as server:
        client = models.client(f"openai-compatible:judge@{server.url}", "judge")
        book: dict = {}
        assert await judge(client, book) == score
        assert server.requests == requests  # one request per level tried, no retries
        assert book["judge"]["retries"] == 0 and book["judge"]["errors"] == 0
        assert client.endpoint.structured is level
        # the endpoint remembers: the next judgement asks at that level at once
        assert await judge(client) == score
        assert server.requests == requests + 1
        sent = (server.bodies[-1].get("response_format") or {}).get("type")
        assert sent == {SCHEMA_LEVEL: "json_schema", OBJECT_LEVEL: "json_object"}.get(level)


async def test_json_object_requests_carry_the_schema_in_the_prompt(models):
    with StubLLMServer(obedient_model, reject_structured="llama-cpp-python") as server:
        await judge(models.client(f"openai-compatible:judge@{server.url}", "judge"))
        rejected, accepted = server.bodies
    assert rejected["messages"] == MESSAGES and "response_format" in rejected
    assert accepted["messages"][0] == MESSAGES[0]  # the system prompt is left alone
    assert accepted["messages"][1]["content"].startswith(MESSAGES[1]["content"])
    assert SCHEMA_INTRO in accepted["messages"][1]["content"]
    assert set(prompted_schema(accepted["messages"])["properties"]) == set(
        strict_schema(Score)["properties"]
    )


class TogetherStub(StubLLMServer):
    """Answers none of the first ``together`` requests before all of them have arrived (or
    2 s have passed): they are in flight at once however busy the machine is."""

    together = 5

    async def answer(self, headers, body):
        self.arrived = getattr(self, "arrived", 0) + 1
        if self.arrived <= self.together:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 2
            while self.arrived < self.together and loop.time() < deadline:
                await asyncio.sleep(0.005)
        return await super().answer(headers, body)


async def test_concurrent_rejections_step_down_once_and_log_once(models, caplog):
    with TogetherStub(obedient_model, reject_structured="llama-cpp-python", delay=0.05) as s:
        client = models.client(f"openai-compatible:judge@{s.url}", "judge")
        book: dict = {}
        with caplog.at_level(logging.WARNING, logger="stellar.llm.client"):
            scores = await asyncio.gather(*(judge(client, book) for _ in range(5)))
        assert scores == [2] * 5 and s.requests == 10  # each: one 500, one json_object
    assert book["judge"]["retries"] == 0
    warnings = [r.getMessage() for r in caplog.records if r.name == "stellar.llm.client"]
    assert len(warnings) == 1 and "rejects response_format json_schema" in warnings[0]
    assert "HTTP 500" in warnings[0] and "using json_object" in warnings[0]


async def test_other_server_errors_stay_transient(models):
    replies = [Fail(500, "CUDA error: out of memory"), Fail(503, "loading model")]

    def flaky(body):
        return replies.pop(0) if replies else default_responder(body)

    with StubLLMServer(flaky) as server:
        client = models.client(f"openai-compatible:judge@{server.url}", "judge")
        book: dict = {}
        assert await judge(client, book) == 2
        assert server.requests == 3 and book["judge"]["retries"] == 2
        assert client.endpoint.structured is SCHEMA_LEVEL


async def test_a_json_object_rejection_that_blames_something_else_is_an_error(models):
    def refuse(body):
        return Fail(400, "context length exceeded")

    with StubLLMServer(refuse, reject_structured="azure-old-api") as server:
        client = models.client(f"openai-compatible:judge@{server.url}", "judge")
        with pytest.raises(ModelError, match="context length exceeded"):
            await judge(client)
        assert server.requests == 2 and client.endpoint.structured is OBJECT_LEVEL


def test_rejections_are_recognised_by_level():
    literal = "Input should be 'text' or 'json_object' (loc: body.response_format.type)"
    assert rejects(SCHEMA_LEVEL, 500, literal)
    assert rejects(SCHEMA_LEVEL, 400, "json_schema is not supported")
    assert rejects(OBJECT_LEVEL, 400, "json_object is not supported with this model")
    assert not rejects(OBJECT_LEVEL, 400, "json_schema is not supported")
    assert not rejects(SCHEMA_LEVEL, 500, "CUDA error: out of memory")
    assert not rejects(SCHEMA_LEVEL, None, "response_format")  # a connection error
    assert not rejects(PROMPT_LEVEL, 400, "response_format")  # nothing left to step down


def test_the_schema_goes_into_the_last_system_or_user_message():
    schema = strict_schema(Score)
    history = [*MESSAGES, {"role": "assistant", "content": "{}"}]
    sent = prompt_messages(OBJECT_LEVEL, history, schema)
    assert sent[2] == history[2] and sent[0] == history[0]
    assert sent[1]["content"].startswith(MESSAGES[1]["content"]) and "JSON" in sent[1]["content"]
    described = prompted_schema(sent)["properties"]
    assert {k: v["type"] for k, v in described.items()} == {
        k: v["type"] for k, v in schema["properties"].items()
    }
    assert prompt_messages(SCHEMA_LEVEL, MESSAGES, schema) is MESSAGES
    assert prompt_messages(PROMPT_LEVEL, MESSAGES, schema) is MESSAGES
    assert MESSAGES[1]["content"].endswith("0-2}.")  # the caller's messages are not changed
