"""A local OpenAI-compatible server (real HTTP, the real SDK) for the model-layer tests."""

from __future__ import annotations

import pytest

from stellar.llm.client import LLMSettings, Models
from stellar.llm.models import EndpointSettings
from stellar.llm.stub_server import StubLLMServer

KEY_ENV = "STELLAR_TEST_KEY"


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
