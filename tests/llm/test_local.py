"""``local:smollm2``: real tokens from SmolLM2-135M-Instruct on the CPU, loaded once per module."""

from __future__ import annotations

import asyncio
import warnings

import pytest
import torch
from conftest import cli

from stellar.archive import open_run
from stellar.config import load_config
from stellar.errors import ConfigError, ModelError
from stellar.llm.base import Completion
from stellar.llm.client import Models
from stellar.llm.local import GreedyBatcher, LocalClient, load_model, smollm2_file
from stellar.llm.models import LLMSettings, is_model_name, parse_model
from stellar.llm.usage import book_for_test
from stellar.records import Status
from stellar.run import Run

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture(scope="module", autouse=True)
def smollm2():
    """Load the model once: every client in this process shares it."""
    return load_model(smollm2_file())


def run(tmp_path, use_case=None, **overrides):
    """The built-in use case (or ``use_case``), three tests, one generation, a fresh response
    cache."""
    settings = {
        "out": str(tmp_path / "runs"),
        "llm.cache_path": str(tmp_path / "cache.sqlite"),
        "duplicates.embedder": "none",
        "budget.tests": 3,
        "algorithm.population": 3,
        **overrides,
    }
    summary = asyncio.run(Run(load_config(use_case, settings=settings)).execute())
    with open_run(summary.run_dir) as archive:
        return summary, list(archive.records())


def test_local_names_parse():
    assert is_model_name("local:smollm2") and is_model_name("local:models/tiny.gguf")
    assert parse_model("local:smollm2").name == "local:smollm2"
    assert smollm2_file().name.endswith(".gguf")


def test_smollm2_as_the_system_under_test(tmp_path):
    sut = {"type": "chat", "model": "local:smollm2", "max_tokens": 16}
    summary, records = run(tmp_path, "safety", sut=sut)  # navi needs venues, not text alone
    assert summary.tests == 3 and summary.error is None
    assert summary.sut_errors == 0, [r.error for r in records]
    assert all(r.status == Status.OK and r.response_text.strip() for r in records)
    assert all(any(c.isalpha() for c in r.response_text) for r in records)
    usage = summary.usage["sut"]
    assert usage["calls"] == 3 and usage["cached"] == 0 and usage["errors"] == 0
    assert usage["input_tokens"] > 3 * 10 and 3 <= usage["output_tokens"] <= 3 * 16
    assert usage["cost"] == 0 and summary.cost == 0 and summary.unpriced == []
    assert all(r.usage["sut"]["output_tokens"] > 0 for r in records)


def test_smollm2_writes_the_inputs(tmp_path):
    generator = {"type": "llm", "model": "local:smollm2", "max_tokens": 16, "rag_k": 0}
    summary, records = run(tmp_path, generator=generator)
    assert summary.tests >= 1 and summary.error is None
    executed = [r for r in records if r.status != Status.INVALID]
    assert executed and all(r.input_text.strip() and r.prompt for r in executed)
    usage = summary.usage["generator"]
    assert usage["calls"] >= summary.tests and usage["input_tokens"] > 100
    assert 0 < usage["output_tokens"] <= usage["calls"] * 16 and usage["cost"] == 0


async def test_greedy_is_deterministic_and_cached(tmp_path):
    models = Models(LLMSettings(cache_path=str(tmp_path / "cache.sqlite")))
    client = models.client("local:smollm2", "sut")
    book: dict = {}
    with book_for_test(book):
        first = await client.complete(QUESTION, temperature=0, max_tokens=16)
        again = await client.complete(QUESTION, temperature=0, max_tokens=16)
    assert "Paris" in first.text and not first.cached and first.finish_reason == "stop"
    assert again.cached and again.text == first.text
    assert book["sut"]["calls"] == 2 and book["sut"]["cached"] == 1
    assert book["sut"]["input_tokens"] == 2 * first.input_tokens > 0
    uncached = LocalClient(parse_model("local:smollm2"), "sut", cache=None)
    assert (await uncached.complete(QUESTION, max_tokens=16)).text == first.text
    await models.aclose()


async def test_sampling_is_seeded():
    client = LocalClient(parse_model("local:smollm2"), "generator", cache=None)
    ask = {"temperature": 1.0, "max_tokens": 8}
    with warnings.catch_warnings(record=True) as caught:  # the cache is handed on as asked
        warnings.simplefilter("always")
        a = await client.complete(QUESTION, seed=7, **ask)
    assert not [w for w in caught if issubclass(w.category, FutureWarning)]
    b = await client.complete(QUESTION, seed=7, **ask)
    assert a.text == b.text and a.output_tokens == b.output_tokens > 0
    answers = {(await client.complete(QUESTION, seed=s, **ask)).text for s in range(3)}
    assert len(answers) > 1


async def test_a_gguf_path_shares_the_loaded_model_and_a_folder_loads(smollm2, tmp_path):
    by_path = LocalClient(parse_model(f"local:{smollm2_file()}"), "sut", cache=None)
    assert load_model(by_path.path) is smollm2 and by_path.cache_name != "local:smollm2"
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)  # a tiny random model beside SmolLM2's tokenizer
    shape = {
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
    }
    config = LlamaConfig(vocab_size=len(smollm2.tokenizer), eos_token_id=2, **shape)
    LlamaForCausalLM(config).save_pretrained(tmp_path / "tiny")
    smollm2.tokenizer.save_pretrained(tmp_path / "tiny")
    tiny = LocalClient(parse_model(f"local:{tmp_path / 'tiny'}"), "sut", cache=None)
    answer = await tiny.complete(QUESTION, max_tokens=5)
    assert answer.output_tokens == 5 and answer.finish_reason == "length" and answer.text


def test_a_missing_model_is_a_one_line_error(tmp_path):
    with pytest.raises(ConfigError, match="no such file or folder"):
        Models().client("local:/nonexistent", "sut", "sut.model")
    with pytest.raises(ConfigError, match="not a model folder"):
        Models().client(f"local:{tmp_path}", "sut", "sut.model")
    result = cli("run", "safety", "--sut", "local:/nonexistent", "--tests", "1", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().count("\n") == 0 and "/nonexistent" in result.stderr
    assert not (tmp_path / "runs").exists()


async def test_greedy_requests_at_the_same_time_are_batched_with_the_same_answers(smollm2):
    questions = [[{"role": "user", "content": f"Name a colour, number {i}."}] for i in range(3)]
    client = LocalClient(parse_model("local:smollm2"), "sut", cache=None)
    alone = [await client.complete(q, temperature=0, max_tokens=12) for q in questions]
    batches = []
    original = smollm2.generate_greedy

    def spy(requests):
        batches.append(len(requests))
        return original(requests)

    smollm2.generate_greedy = spy
    try:
        together = await asyncio.gather(
            *(client.complete(q, temperature=0, max_tokens=12) for q in questions)
        )
    finally:
        del smollm2.generate_greedy
    assert batches == [3]
    assert [c.text for c in together] == [c.text for c in alone]
    assert [c.output_tokens for c in together] == [c.output_tokens for c in alone]


async def test_the_batcher_groups_waiting_requests_and_passes_errors_on():
    seen = []

    def generate(requests):
        seen.append([m[0]["content"] for m, _ in requests])
        if any(m[0]["content"] == "bad" for m, _ in requests):
            raise ModelError("broken")
        return [Completion(m[0]["content"].upper(), 1, 1, False, "stop") for m, _ in requests]

    batcher = GreedyBatcher(generate, size=2)
    asks = [[{"role": "user", "content": text}] for text in ("a", "b", "c", "bad", "e")]
    found = await asyncio.gather(*(batcher.complete(m, 5) for m in asks), return_exceptions=True)
    assert seen == [["a", "b"], ["c", "bad"], ["e"]]
    assert [f.text for f in found if not isinstance(f, Exception)] == ["A", "B", "E"]
    assert [str(f) for f in found if isinstance(f, Exception)] == ["broken", "broken"]
