"""Model names (``openai:gpt-4o-mini``) and the endpoint settings that go with them."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, field_validator

from stellar.config_values import url_problem
from stellar.errors import ConfigError

PROVIDERS = ("openai", "azure", "ollama", "openai-compatible", "local")
OLLAMA_URL = "http://localhost:11434/v1"
AZURE_API_VERSION = "2024-10-21"
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "azure": "AZURE_OPENAI_API_KEY"}
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
KEY_PREFIXES = ("sk-", "sk_", "pk_", "rk_", "ghp_", "gho_", "github_pat_", "xox", "hf_", "AIza")


def redact(secret: str) -> str:
    """What may be shown of a secret: its first three characters."""
    return f"{secret[:3]}…"


def hide(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` redacted (keys a server echoes back)."""
    return text.replace(secret, redact(secret)) if secret and len(secret) >= 8 else text


def looks_like_key(value: str) -> bool:
    """Whether ``value`` looks like a pasted key rather than an environment variable's name."""
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    random = len(value) >= 24 and any(c.isdigit() for c in value) and (mixed or "_" not in value)
    return value.startswith(KEY_PREFIXES) or not ENV_NAME.fullmatch(value) or random


class EndpointSettings(BaseModel):
    """Settings of one endpoint (a provider, or a base URL)."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = Field(None, description="API base URL (Azure: the resource endpoint)")
    api_key_env: str | None = Field(None, description="environment variable holding the key")
    api_version: str | None = Field(None, description="Azure OpenAI API version")
    concurrency: int = Field(
        8, ge=1, description="requests in flight at once (in a run, default: the run's concurrency)"
    )
    rpm: int | None = Field(None, ge=1, description="requests per minute")
    tpm: int | None = Field(None, ge=1, description="tokens per minute (estimated before a call)")
    timeout: float = Field(60.0, gt=0, description="seconds per request")
    max_retries: int = Field(6, ge=0, description="retries on 429, 5xx, timeouts")
    backoff: float = Field(1.0, gt=0, description="first retry delay in seconds; doubles")
    max_backoff: float = Field(60.0, gt=0, description="longest delay between retries")

    @field_validator("base_url")
    @classmethod
    def usable_url(cls, url: str | None) -> str | None:
        if url is not None and (problem := url_problem(url)):
            raise ValueError(problem)
        return url

    @field_validator("api_key_env")
    @classmethod
    def env_name(cls, value: str | None) -> str | None:
        """The name of a variable, never a key: a pasted key is refused and not echoed."""
        if value is not None and looks_like_key(value):
            raise ValueError(
                f"expected the name of an environment variable, got {redact(value)!r}; a key "
                "does not belong in a configuration file: export MY_KEY=... and write "
                "api_key_env: MY_KEY"
            )
        return value


class LLMSettings(BaseModel):
    """The ``llm`` section of a run configuration."""

    model_config = ConfigDict(extra="forbid")

    cache: bool = Field(True, description="reuse answers to identical requests")
    cache_path: str | None = Field(None, description="default: ~/.cache/stellar/")
    endpoints: dict[str, EndpointSettings] = Field(
        default_factory=dict, description="by provider name or base URL"
    )
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="USD per million tokens: [input, output]"
    )


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model name: provider, model (Azure: deployment) and the endpoint's base URL."""

    provider: str
    model: str
    base_url: str | None = None

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def __str__(self) -> str:
        return self.name


def is_model_name(text: str) -> bool:
    """Whether ``text`` names a model (rather than a URL or a ``module:function``)."""
    return text.partition(":")[0] in PROVIDERS and bool(text.partition(":")[2])


def parse_model(text: str, where: str = "model") -> ModelSpec:
    """``openai:gpt-4o-mini``, ``azure:DEPLOYMENT``, ``ollama:llama3.1``,
    ``openai-compatible:MODEL@http://host:port/v1``, ``local:smollm2``, ``local:PATH`` (in
    process: a GGUF file or a Hugging Face model folder; no endpoint, no key)."""
    provider, _, model = text.partition(":")
    if provider not in PROVIDERS or not model:
        raise ConfigError(
            where,
            "",
            f"{text!r} is not a model name; use one of "
            "openai:MODEL, azure:DEPLOYMENT, ollama:MODEL, openai-compatible:MODEL@URL, "
            "local:smollm2, local:PATH",
        )
    if provider == "openai-compatible":
        model, at, url = model.rpartition("@")
        if not at or not model or not re.match(r"https?://[^/\s]+", url):
            raise ConfigError(
                where, "", f"{text!r}: write openai-compatible:MODEL@http://host:port/v1"
            )
        if problem := url_problem(url):
            raise ConfigError(where, "", problem)
        return ModelSpec(provider, model, url.rstrip("/"))
    return ModelSpec(provider, model)


@dataclass(frozen=True)
class Endpoint:
    """Where and how to reach a model: the resolved URL, key and limits."""

    provider: str
    base_url: str | None
    api_key: str
    api_version: str | None
    settings: EndpointSettings
    key_env: str | None = None  # the environment variable the key came from

    @property
    def key(self) -> tuple[str, str | None]:
        """Endpoints with the same key share one client, one concurrency limit, one rate limit."""
        return (self.provider, self.base_url)


def resolve_endpoint(spec: ModelSpec, endpoints: dict[str, EndpointSettings]) -> Endpoint:
    """Combine a model name with the configured settings (by base URL, then by provider)."""
    settings = (
        (spec.base_url and endpoints.get(spec.base_url))
        or endpoints.get(spec.provider)
        or EndpointSettings()
    )
    where = f"llm.endpoints.{spec.provider}"
    base_url = settings.base_url or spec.base_url
    if spec.provider == "ollama":
        host = os.environ.get("OLLAMA_HOST")
        base_url = base_url or (_ollama_url(host) if host else OLLAMA_URL)
    if spec.provider == "azure":
        base_url = base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
        if not base_url:
            raise ConfigError(
                where,
                "base_url",
                "Azure needs the resource endpoint: set base_url or "
                "the environment variable AZURE_OPENAI_ENDPOINT",
            )
    key_env = settings.api_key_env or DEFAULT_KEY_ENV.get(spec.provider)
    if key_env:
        api_key = os.environ.get(key_env, "")
        if not api_key:
            raise ConfigError(
                where,
                "api_key_env",
                f"{spec.name} needs an API key in the environment "
                f"variable {key_env}, which is not set",
            )
    else:
        api_key = "unused"  # local servers (Ollama, vLLM) accept any key
    version = None
    if spec.provider == "azure":
        version = settings.api_version or os.environ.get("OPENAI_API_VERSION", AZURE_API_VERSION)
    return Endpoint(spec.provider, base_url, api_key, version, settings, key_env)


def _ollama_url(host: str) -> str:
    url = host if host.startswith(("http://", "https://")) else f"http://{host}"
    return url.rstrip("/") + "/v1"
