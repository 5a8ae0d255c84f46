"""The model client over real HTTP: answers, retries, limits, errors, cache and usage."""

from __future__ import annotations

import asyncio
import time

import pytest

from stellar.errors import ConfigError, ModelAccessError, ModelError
from stellar.llm.client import Models, retry_after
from stellar.llm.models import EndpointSettings, LLMSettings, parse_model, resolve_endpoint
from stellar.llm.structured import StructuredLevel
from stellar.llm.stub_server import Fail, Hang, StubLLMServer
from stellar.llm.usage import PriceTable, book_for_test

KEY_ENV = "STELLAR_TEST_KEY"
PROMPT = StructuredLevel.PROMPT


@pytest.fixture
def server():
    """Start a stub server; ``server.responder`` can be replaced per test."""
    with StubLLMServer() as stub:
        yield stub


@pytest.fixture
def make_models(tmp_path, monkeypatch):
    """Models for the stub server; endpoint settings and the cache are adjustable."""
    monkeypatch.setenv(KEY_ENV, "test-key")
    made = []

    def make(cache: bool = True, **endpoint) -> Models:
        endpoint = {"api_key_env": KEY_ENV, "backoff": 0.01, "max_backoff": 0.05, **endpoint}
        settings = LLMSettings(
            cache=cache,
            cache_path=str(tmp_path / "cache.sqlite"),
            endpoints={"openai-compatible": EndpointSettings(**endpoint)},
            prices={"priced": (1.0, 2.0)},
        )
        models = Models(settings)
        made.append(models)
        return models

    return make


HELLO = [{"role": "user", "content": "hello"}]


def model(models, server, name="m", role="sut"):
    return models.client(f"openai-compatible:{name}@{server.url}", role)


async def ask(client, messages=HELLO, **params):
    book: dict = {}
    with book_for_test(book):
        completion = await client.complete(messages, **params)
    return completion, book.get(client.role, {})


def scripted(*replies):
    """A responder giving ``replies`` in turn, then repeating the last one."""
    queue = list(replies)

    def respond(body):
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return respond


async def test_answer_with_usage_and_cost(server, make_models):
    server.responder = scripted("Hi there, how can I help?")
    client = model(make_models(), server, name="priced")
    completion, usage = await ask(client, temperature=0.0, max_tokens=50)
    assert completion.text == "Hi there, how can I help?"
    assert not completion.cached and completion.finish_reason == "stop"
    assert usage["calls"] == 1 and usage["retries"] == 0
    assert usage["output_tokens"] == len(completion.text) // 4
    expected = (usage["input_tokens"] * 1.0 + usage["output_tokens"] * 2.0) / 1e6
    assert usage["cost"] == pytest.approx(expected)
    sent = server.bodies[0]
    assert sent["model"] == "priced" and sent["temperature"] == 0.0 and sent["max_tokens"] == 50


async def test_429_waits_for_retry_after(server, make_models):
    server.responder = scripted(Fail(429, "slow down", {"Retry-After": "0.3"}), "ok")
    client = model(make_models(cache=False), server)
    began = time.monotonic()
    completion, usage = await ask(client)
    assert completion.text == "ok"
    assert time.monotonic() - began >= 0.3  # waited what the server asked
    assert usage["retries"] == 1 and server.requests == 2


async def test_server_errors_are_retried_then_given_up(server, make_models):
    server.responder = scripted(Fail(500), Fail(503), "recovered")
    completion, usage = await ask(model(make_models(cache=False), server))
    assert completion.text == "recovered" and usage["retries"] == 2

    server.responder = scripted(Fail(500, "always broken"))
    before = server.requests
    with pytest.raises(ModelError, match=r"HTTP 500.*gave up after 2 retries"):
        await ask(model(make_models(cache=False, max_retries=2), server))
    assert server.requests - before == 3


async def test_hanging_request_times_out(server, make_models):
    server.responder = scripted(Hang(30))
    client = model(make_models(cache=False, timeout=0.3, max_retries=1), server)
    began = time.monotonic()
    with pytest.raises(ModelError, match=r"timed out after 0\.3 s"):
        await ask(client)
    assert time.monotonic() - began < 10
    assert server.requests == 2


async def test_wrong_key_is_refused_without_retries(server, make_models, monkeypatch):
    models = make_models(cache=False)
    monkeypatch.setenv(KEY_ENV, "wrong-key")
    client = model(models, server)
    with pytest.raises(ModelAccessError, match=rf"refused the API key \(HTTP 401\).*{KEY_ENV}"):
        await ask(client)
    assert server.requests == 1


async def test_unknown_model_is_a_clear_error(server, make_models):
    server.responder = scripted(Fail(404, "The model `nope` does not exist"))
    with pytest.raises(ModelAccessError, match="model not found"):
        await ask(model(make_models(cache=False), server, name="nope"))


async def test_bad_request_is_not_retried(server, make_models):
    server.responder = scripted(Fail(400, "context length exceeded"))
    with pytest.raises(ModelError, match="context length exceeded"):
        await ask(model(make_models(cache=False), server))
    assert server.requests == 1


SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 2}},
    "required": ["score"],
    "additionalProperties": False,
}


async def test_structured_output_where_supported(server, make_models):
    completion, _ = await ask(model(make_models(), server), json_schema=SCHEMA)
    assert completion.structured and completion.text == '{"score": 2}'
    assert server.bodies[0]["response_format"]["json_schema"]["schema"] == SCHEMA


async def test_structured_output_falls_back_when_unsupported(server, make_models):
    server.structured = False
    client = model(make_models(cache=False), server)
    first, usage = await ask(client, json_schema=SCHEMA)
    second, _ = await ask(client, json_schema=SCHEMA)
    assert not first.structured and not second.structured and usage["retries"] == 0
    sent = [body["response_format"]["type"] for body in server.bodies]
    assert sent == ["json_schema", "json_object", "json_object"]
    assert client.endpoint.structured is StructuredLevel.JSON_OBJECT


async def test_cache_answers_repeated_requests(server, make_models):
    client = model(make_models(), server)
    first, _ = await ask(client, temperature=0.2, seed=7)
    again, usage = await ask(client, temperature=0.2, seed=7)
    assert again.cached and again.text == first.text and server.requests == 1
    assert usage["cached"] == 1 and usage["cost"] == 0
    await ask(client, temperature=0.2, seed=8)  # other parameters: another request
    await ask(client, temperature=0.2, seed=7, sample=1)  # another vote sample
    assert server.requests == 3
    # a new registry (a later run) finds the answer on disk
    later = make_models().client(f"openai-compatible:m@{server.url}", "sut")
    cached, _ = await ask(later, temperature=0.2, seed=7)
    assert cached.cached and cached.text == first.text and server.requests == 3
    # another server with a model of the same name has answers of its own
    with StubLLMServer() as other:
        elsewhere = make_models().client(f"openai-compatible:m@{other.url}", "sut")
        fresh, _ = await ask(elsewhere, temperature=0.2, seed=7)
        assert not fresh.cached and other.requests == 1


async def test_no_cache_always_asks(server, make_models):
    client = model(make_models(cache=False), server)
    await ask(client)
    await ask(client)
    assert server.requests == 2


async def test_failures_are_not_cached(server, make_models):
    server.responder = scripted(Fail(400, "bad"), "fine")
    client = model(make_models(), server)
    with pytest.raises(ModelError):
        await ask(client)
    completion, _ = await ask(client)
    assert completion.text == "fine" and not completion.cached


async def test_concurrency_limit_per_endpoint(make_models):
    with StubLLMServer(delay=0.05) as server:
        models = make_models(cache=False, concurrency=3)
        generator = model(models, server, role="generator")
        judge = model(models, server, name="other", role="judge")  # same endpoint, same limit
        messages = [[{"role": "user", "content": f"q{i}"}] for i in range(12)]
        await asyncio.gather(
            *(ask(generator if i % 2 else judge, m) for i, m in enumerate(messages))
        )
        assert server.requests == 12 and server.max_in_flight == 3


async def test_token_limit_accepts_prompts_larger_than_a_minute(server, make_models):
    client = model(make_models(cache=False, tpm=10, rpm=100), server)
    completion, _ = await ask(client, [{"role": "user", "content": "x" * 400}])
    assert completion.text


def test_retry_after_forms():
    class Response:
        def __init__(self, **headers):
            self.headers = headers

    assert retry_after(Response(**{"retry-after": "2"})) == 2.0
    assert retry_after(Response(**{"retry-after-ms": "250"})) == 0.25
    assert retry_after(Response(**{"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    assert retry_after(Response(**{"retry-after": "soon"})) is None
    assert retry_after(Response()) is None
    assert retry_after(None) is None


@pytest.mark.parametrize(
    ("text", "provider", "name", "url"),
    [
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini", None),
        ("azure:my-deployment", "azure", "my-deployment", None),
        ("ollama:llama3.1:8b", "ollama", "llama3.1:8b", None),
        (
            "openai-compatible:meta/llama@http://gpu:8000/v1/",
            "openai-compatible",
            "meta/llama",
            "http://gpu:8000/v1",
        ),
    ],
)
def test_model_names(text, provider, name, url):
    spec = parse_model(text)
    assert (spec.provider, spec.model, spec.base_url) == (provider, name, url)


@pytest.mark.parametrize(
    "text",
    ["gpt-4o", "anthropic:claude", "openai:", "openai-compatible:m", "openai-compatible:m@x"],
)
def test_bad_model_names(text):
    with pytest.raises(ConfigError, match="openai"):
        parse_model(text)


def test_endpoints_resolve_keys_and_urls(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY, which is not set"):
        resolve_endpoint(parse_model("openai:gpt-4o-mini"), {})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert resolve_endpoint(parse_model("openai:gpt-4o-mini"), {}).api_key == "sk-test"

    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    ollama = resolve_endpoint(parse_model("ollama:llama3.1"), {})
    assert ollama.base_url == "http://localhost:11434/v1" and ollama.api_key == "unused"
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5:11434")
    assert resolve_endpoint(parse_model("ollama:x"), {}).base_url == "http://10.0.0.5:11434/v1"

    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    with pytest.raises(ConfigError, match="AZURE_OPENAI_ENDPOINT"):
        resolve_endpoint(parse_model("azure:dep"), {})
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az")
    settings = {"azure": EndpointSettings(base_url="https://r.openai.azure.com", rpm=60)}
    azure = resolve_endpoint(parse_model("azure:dep"), settings)
    assert azure.base_url == "https://r.openai.azure.com" and azure.api_version
    assert azure.settings.rpm == 60

    by_url = {"http://gpu:8000/v1": EndpointSettings(concurrency=32)}
    compat = resolve_endpoint(parse_model("openai-compatible:m@http://gpu:8000/v1"), by_url)
    assert compat.settings.concurrency == 32


def test_prices():
    table = PriceTable({"my-deployment": (1.0, 3.0)})
    assert table.lookup("openai", "gpt-4o-mini-2024-07-18") == (0.15, 0.60)  # longest prefix
    assert table.lookup("openai", "gpt-4o-2024-08-06") == (2.50, 10.00)
    assert table.lookup("azure", "my-deployment") == (1.0, 3.0)
    assert table.lookup("openai", "unheard-of") is None
    assert table.lookup("ollama", "llama3.1") == (0.0, 0.0)
    assert table.cost("openai", "gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)


async def test_only_a_complaint_about_response_format_turns_structured_output_off(
    server, make_models
):
    server.responder = scripted(Fail(400, "The response was filtered (content policy)"))
    client = model(make_models(cache=False), server)
    with pytest.raises(ModelError, match="filtered"):
        await ask(client, json_schema=SCHEMA)
    assert client.endpoint.structured is StructuredLevel.JSON_SCHEMA and server.requests == 1


async def test_exhausted_quota_is_fatal(server, make_models):
    server.responder = scripted(Fail(429, "You exceeded your quota", code="insufficient_quota"))
    with pytest.raises(ModelAccessError, match="exceeded your quota"):
        await ask(model(make_models(cache=False), server))
    assert server.requests == 1  # not retried like a rate limit


async def test_a_reply_that_is_not_a_completion_is_a_model_error(server, make_models):
    server.responder = scripted(Fail(200, "a proxy page"))
    with pytest.raises(ModelError, match="not a chat completion"):
        await ask(model(make_models(cache=False), server))


async def test_a_server_that_is_not_there_stops_the_run(make_models):
    client = make_models(cache=False, max_retries=1).client(
        "openai-compatible:m@http://127.0.0.1:9/v1", "sut"
    )
    with pytest.raises(
        ModelAccessError, match=r"is the server at http://127\.0\.0\.1:9/v1 running"
    ):
        await ask(client)


def test_hosted_and_reasoning_models_get_their_parameters(make_models, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    models = make_models()
    params = {"temperature": 0.0, "max_tokens": 50, "seed": 1}
    chat = models.client("openai:gpt-4o-mini", "judge")._arguments(params, PROMPT)
    assert chat == {"temperature": 0.0, "max_completion_tokens": 50, "seed": 1}
    reasoning = models.client("openai:o4-mini", "judge")._arguments(params, PROMPT)
    assert reasoning == {"max_completion_tokens": 50, "seed": 1}
    local = models.client("ollama:llama3.1", "judge")._arguments(params, PROMPT)
    assert local == params


def test_an_unusable_cache_file_is_a_one_line_error(tmp_path):
    from stellar.errors import StellarError

    broken = tmp_path / "cache.sqlite"
    broken.write_text("not a database")
    models = Models(LLMSettings(cache_path=str(broken)))
    with pytest.raises(StellarError, match="--no-cache"):
        models.client("ollama:llama3.1", "sut")


async def test_a_local_server_that_is_not_running_fails_fast():
    import socket
    import time

    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    models = Models(LLMSettings(cache=False))
    client = models.client(f"openai-compatible:m@http://127.0.0.1:{port}/v1", "sut")
    began = time.monotonic()
    with pytest.raises(ModelAccessError, match=r"is the server at http://127\.0\.0\.1:\d+/v1 run"):
        await client.complete([{"role": "user", "content": "hi"}])
    assert time.monotonic() - began < 5
    await models.aclose()
