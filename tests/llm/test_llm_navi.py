"""The navigation use case with models: LLM mode of the assistant, LLM generator and judge."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from stellar.archive import open_run
from stellar.config import load_config
from stellar.llm.client import Models
from stellar.llm.models import EndpointSettings, LLMSettings
from stellar.llm.stub_server import StubLLMServer, default_responder
from stellar.records import Status
from stellar.run import Run
from stellar.usecases.navi.assistant import NavigationAssistant, navi_assistant

KEY_ENV = "STELLAR_TEST_KEY"


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")
    with StubLLMServer(respond) as s:
        yield s


def respond(body):
    """The judge gets a schema-valid verdict, the generator the requested attributes as a
    sentence, the assistant's LLM mode a fixed answer."""
    if body.get("response_format"):
        return default_responder(body)
    prompt = body["messages"][-1]["content"]
    if "Write one request" in prompt:
        wishes = re.findall(r"^- (.+)$", prompt.split("How the driver speaks")[0], re.M)
        return f'"I need {"; ".join(wishes)}."'
    return "Try Bella Vista, 0.4 km away. Shall I start navigation?"


def client(server, role="sut"):
    settings = LLMSettings(
        cache=False, endpoints={"openai-compatible": EndpointSettings(api_key_env=KEY_ENV)}
    )
    return Models(settings).client(f"openai-compatible:m@{server.url}", role)


async def test_llm_mode_writes_the_answer_from_the_retrieved_pois(server):
    offline = navi_assistant()
    assistant = NavigationAssistant(db=offline.db, llm=client(server))
    text = "Find me a cheap Italian restaurant with parking"
    reply = await assistant.query(text)
    assert reply.text == "Try Bella Vista, 0.4 km away. Shall I start navigation?"
    assert reply.data == offline.answer(text).data and reply.data  # same retrieval
    prompt = server.bodies[0]["messages"][-1]["content"]
    assert prompt.endswith(f"Driver: {text}") and "Venues found:" in prompt
    for poi in reply.data:
        assert poi["name"] in prompt


async def test_llm_mode_keeps_the_guard_and_handles_unclear_requests(server):
    assistant = NavigationAssistant(db=navi_assistant().db, llm=client(server))
    await assistant.query("Hmm, what do you think?")
    assert "Venues found: none" in server.bodies[-1]["messages"][-1]["content"]
    before = server.requests
    abusive = await assistant.query("screw you, find me a bar")
    assert server.requests == before  # the guard answers without the model
    assert abusive.data == [] and abusive.text


def test_navi_run_with_llm_generator_and_judge(server, tmp_path):
    model = f"openai-compatible:m@{server.url}"
    config = load_config(
        None,
        {
            "generator": {"type": "llm", "model": model},
            "judge.model": model,
            "budget.tests": 12,
            "algorithm.population": 6,
            "out": str(tmp_path),
            "llm.cache": False,
            "llm.endpoints": {"openai-compatible": {"api_key_env": KEY_ENV}},
        },
    )
    summary = asyncio.run(Run(config).execute())
    assert summary.tests == 12 and summary.error is None
    with open_run(summary.run_dir) as archive:
        records = [r for r in archive.records() if r.status == Status.OK]
    assert records
    for record in records:
        assert "Write one request" in record.prompt  # the use case's template
        assert not record.input_text.startswith('"')  # cleaned
        if record.candidate["word_perturbation"] == "none":
            assert record.input_text.startswith("I need the kind of place")
        assert record.details["source"] == "llm"  # f1 from the LLM judge
        assert set(record.usage) == {"generator", "judge"}


async def test_content_is_not_scored_without_venue_data():
    from stellar.features import load_feature_space
    from stellar.records import Response, TestInput
    from stellar.usecases.navi.fitness import NaviFitness

    space = load_feature_space(
        Path(__file__).parents[2] / "src/stellar/usecases/navi/features.yaml"
    )
    values = {f.name: f.values[0] for f in space.features} | {"category": "restaurant"}
    candidate = space.candidate(values)
    fitness = NaviFitness()
    chat = await fitness.evaluate(
        candidate, TestInput("Find a restaurant"), Response("Sure!", data={"finish_reason": "stop"})
    )
    assert chat.scores["content"] == 1.0 and chat.details["content_scored"] is False
    empty = await fitness.evaluate(
        candidate, TestInput("Find a restaurant"), Response("No.", data=[])
    )
    assert empty.scores["content"] == 0.0 and empty.details["content_scored"] is True
