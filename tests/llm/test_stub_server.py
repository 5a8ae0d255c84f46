"""The stub server under load: seeded latency, rate limits (429 + Retry-After), many
concurrent slow requests, and the model client honouring its limits."""

from __future__ import annotations

import asyncio
import statistics

import httpx
import pytest

from stellar.llm.client import ModelClient, Models
from stellar.llm.models import EndpointSettings, LLMSettings
from stellar.llm.stub_server import StubLLMServer, main
from stellar.llm.stub_traffic import Latency, RequestRate, parse_latency
from stellar.llm.usage import book_for_test

KEY_ENV = "STELLAR_TEST_KEY"
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
AUTH = {"Authorization": "Bearer test-key"}


def draws(text: str, n: int, seed: int = 0) -> list[float]:
    sampler = parse_latency(text).sampler(seed)
    return [sampler.draw() for _ in range(n)]


def test_latency_forms():
    assert parse_latency("0.5") == parse_latency("fixed:0.5") == Latency(0.5)
    heavy = parse_latency("lognormal:median=0.5,sigma=0.8")
    assert heavy == Latency(0.5, 0.8) and heavy.mean == pytest.approx(0.6886, abs=1e-3)
    assert parse_latency("lognormal:median=1,sigma=2,max=30").cap == 30
    for bad in (
        "slow",
        "fixed:-1",
        "lognormal:median=0.5",
        "lognormal:median=1,sigma=1,x=2",
        "lognormal:median=nan,sigma=1",
        "pareto:1",
        "lognormal:median=1,sigma=1,max=0",
    ):
        with pytest.raises(ValueError, match="latency"):
            parse_latency(bad)


def test_fixed_latency_is_constant():
    assert set(draws("fixed:0.25", 100)) == {0.25}


def test_lognormal_latency_is_seeded_and_heavy_tailed():
    sample = draws("lognormal:median=0.5,sigma=0.8", 20_000, seed=3)
    assert sample == draws("lognormal:median=0.5,sigma=0.8", 20_000, seed=3)
    assert sample[:100] != draws("lognormal:median=0.5,sigma=0.8", 100, seed=4)
    assert min(sample) > 0
    assert statistics.median(sample) == pytest.approx(0.5, rel=0.05)
    assert statistics.fmean(sample) == pytest.approx(0.5 * 1.3771, rel=0.05)  # e^(0.8²/2)
    p99 = statistics.quantiles(sample, n=100)[98]
    assert p99 == pytest.approx(Latency(0.5, 0.8).quantile(0.99), rel=0.1)  # about 3.2 s
    assert p99 > 6 * statistics.median(sample)  # a heavy tail, unlike a fixed delay
    capped = draws("lognormal:median=0.5,sigma=0.8,max=2", 5_000)
    assert max(capped) == 2.0


def test_request_rate_is_a_token_bucket():
    rate = RequestRate(rps=10, burst=2)
    assert rate.admit(0.0) == 0 and rate.admit(0.0) == 0  # the burst
    assert rate.admit(0.0) == pytest.approx(0.1)  # one token every 0.1 s
    assert rate.admit(0.05) == pytest.approx(0.05)
    assert rate.admit(0.1) == 0
    with pytest.raises(ValueError):
        RequestRate(rps=0)


def test_the_server_serves_the_seeded_latencies_and_counts_them():
    spec = "lognormal:median=0.002,sigma=0.5"
    with StubLLMServer(latency=spec, seed=7) as server, httpx.Client(timeout=10) as http:
        for _ in range(20):
            assert http.post(f"{server.url}/chat/completions", json=BODY, headers=AUTH).is_success
        stats = http.get(f"{server.url}/stats").json()
    assert stats["requests"] == stats["answered"] == 20 and stats["rate_limited"] == 0
    assert stats["latency_sum"] == pytest.approx(sum(draws(spec, 20, seed=7)))
    assert stats["latency"].startswith("log-normal")


def test_over_the_request_rate_is_429_with_retry_after():
    with StubLLMServer(rps=2, burst=1) as server, httpx.Client(timeout=10) as http:
        first = http.post(f"{server.url}/chat/completions", json=BODY, headers=AUTH)
        second = http.post(f"{server.url}/chat/completions", json=BODY, headers=AUTH)
    assert first.status_code == 200 and second.status_code == 429
    wait_ms = int(second.headers["retry-after-ms"])
    assert 400 <= wait_ms <= 500  # one request every 0.5 s
    assert second.headers["retry-after"] == "1"  # whole seconds, rounded up
    error = second.json()["error"]
    assert error["code"] == "rate_limit_exceeded" and error["type"] == "requests"
    assert "Please try again in" in error["message"] and server.rate_limited == 1


async def test_over_the_concurrency_limit_is_429_until_the_first_answer_is_due():
    with StubLLMServer(delay=0.5, max_concurrent=2) as server:
        async with httpx.AsyncClient(timeout=10) as http:
            url = f"{server.url}/chat/completions"
            first = [asyncio.create_task(http.post(url, json=BODY, headers=AUTH)) for _ in "ab"]
            await asyncio.sleep(0.2)
            over = await http.post(url, json=BODY, headers=AUTH)
            answered = await asyncio.gather(*first)
    assert [r.status_code for r in answered] == [200, 200] and over.status_code == 429
    assert 100 <= int(over.headers["retry-after-ms"]) <= 400  # the first answer is due then
    assert over.json()["error"]["code"] == "rate_limit_exceeded"
    assert server.max_in_flight == 2 and server.rate_limited == 1


async def test_hundreds_of_slow_requests_are_in_flight_at_once():
    n = 300
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    with StubLLMServer(delay=2.5) as server:
        async with httpx.AsyncClient(timeout=30, limits=limits) as http:
            url = f"{server.url}/chat/completions"
            replies = await asyncio.gather(
                *(http.post(url, json=BODY, headers=AUTH) for _ in range(n))
            )
    assert all(r.status_code == 200 for r in replies)
    assert server.max_in_flight == n


@pytest.fixture
def make_models(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")

    def make(**endpoint) -> Models:
        endpoint = {"api_key_env": KEY_ENV, "backoff": 5.0, "max_backoff": 5.0, **endpoint}
        settings = LLMSettings(
            cache=False, endpoints={"openai-compatible": EndpointSettings(**endpoint)}
        )
        return Models(settings)

    return make


async def ask(client, text: str = "hi"):
    book: dict = {}
    with book_for_test(book):
        completion = await client.complete([{"role": "user", "content": text}])
    return completion, book[client.role]


async def test_the_client_waits_what_the_rate_limit_asks(make_models, monkeypatch):
    waits: list[float] = []
    decide = ModelClient._retry_delay

    def recorded(self, exc, retries):
        waits.append(decide(self, exc, retries))
        return waits[-1]

    monkeypatch.setattr(ModelClient, "_retry_delay", recorded)
    with StubLLMServer(rps=4, burst=1) as server:
        models = make_models(concurrency=2)
        client = models.client(f"openai-compatible:m@{server.url}", "sut")
        answers = await asyncio.gather(ask(client, "a"), ask(client, "b"))
        await models.aclose()
    assert all(completion.text for completion, _ in answers)
    assert sorted(usage["retries"] for _, usage in answers) == [0, 1]
    assert len(waits) == 1 and 0.24 <= waits[0] <= 0.25 * 1.1  # retry-after-ms, not backoff
    assert server.rate_limited == 1 and server.requests == 3  # the retry was let through


async def test_the_client_retries_past_a_concurrency_limit(make_models):
    with StubLLMServer(delay=0.1, max_concurrent=2) as server:
        models = make_models(concurrency=6, max_retries=20)
        client = models.client(f"openai-compatible:m@{server.url}", "sut")
        answers = await asyncio.gather(*(ask(client, str(i)) for i in range(6)))
        await models.aclose()
    assert len(answers) == 6 and server.answered == 6
    assert sum(usage["retries"] for _, usage in answers) == server.rate_limited > 0
    assert server.max_in_flight == 2


async def test_requests_share_an_endpoints_slots(make_models):
    with StubLLMServer(delay=0.2) as server:
        models = make_models(concurrency=12)
        client = models.client(f"openai-compatible:m@{server.url}", "judge")
        answers = await asyncio.gather(*(ask(client, f"q{i}") for i in range(30)))
        await models.aclose()
    assert [c.text for c, _ in answers] == [
        f"Here is what I found for: q{i}. Anything else?" for i in range(30)
    ]
    assert server.max_in_flight == 12


async def test_azure_requests_go_to_the_deployment(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "azure-key")
    with StubLLMServer(api_key=None) as server:
        root = server.url.removesuffix("/v1")
        endpoints = {"azure": EndpointSettings(base_url=root, api_key_env=KEY_ENV)}
        models = Models(LLMSettings(cache=False, endpoints=endpoints))
        completion, _ = await ask(models.client("azure:my-deployment", "sut"))
        await models.aclose()
    assert completion.text
    assert server.paths[0].startswith("/openai/deployments/my-deployment/chat/completions?")
    assert "api-version=" in server.paths[0]


def test_the_command_line_documents_and_checks_its_flags(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    shown = capsys.readouterr().out
    assert done.value.code == 0
    for flag in ("--latency", "--seed", "--rps", "--burst", "--max-concurrent", "lognormal"):
        assert flag in shown
    for bad in (
        ["--latency", "slow"],
        ["--delay", "1", "--latency", "fixed:1"],
        ["--rps", "0"],
        ["--burst", "3"],
    ):
        with pytest.raises(SystemExit) as done:
            main(bad)
        assert done.value.code == 2 and "error:" in capsys.readouterr().err
