"""Model clients for the openai API: limits, retries, cache and usage in one place.

One :class:`Models` registry per run hands out a :class:`ModelClient` per (model, role).
Clients of the same endpoint share its transport, one concurrency limit and one
requests/tokens-per-minute limiter (``aiolimiter``). Requests carry a plain JSON body and
come back as plain JSON (:mod:`stellar.llm.transport`): the typed parameter transform and
the pydantic reply objects of the SDK's ``chat.completions.create`` cost more CPU than the
HTTP exchange. The SDK's own retries are off: this module retries 408, 409, 429, 5xx,
timeouts and connection errors with exponential backoff and full jitter, waiting what a
``Retry-After`` header asks for, so that every retry is counted in the usage of the test
that made it. An error that rejects the requested ``response_format`` is no retry: the
endpoint steps down a structured-output level (:mod:`stellar.llm.structured`) and asks
again at once."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import sqlite3
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import openai

from stellar.errors import ModelAccessError, ModelError, StellarError
from stellar.llm.base import Completion, Message, messages_tokens, tool_call_requests
from stellar.llm.cache import (
    ResponseCache,
    StoreOnly,
    cached_answer,
    call_params,
    default_cache_path,
)
from stellar.llm.endpoint import EndpointClient
from stellar.llm.models import (
    Endpoint,
    EndpointSettings,
    LLMSettings,
    ModelSpec,
    hide,
    parse_model,
    resolve_endpoint,
)
from stellar.llm.structured import StructuredLevel, prompt_messages, rejects, response_format
from stellar.llm.usage import PriceTable, record_call

log = logging.getLogger(__name__)
MAX_RETRY_AFTER = 600.0  # seconds; a longer Retry-After is capped
RETRY_STATUS = (408, 409, 429)
HOSTED = ("openai", "azure")
REASONING_MODELS = ("o1", "o3", "o4", "gpt-5")  # reject temperature
CHAT_PATH = "/chat/completions"


@dataclass
class Spend:
    """Money spent by a run's model calls so far, as the calls complete (for the budget)."""

    total: float = 0.0


_jitter = random.Random()  # timing only: never affects what a run generates


class ModelClient:
    """A :class:`~stellar.llm.base.ChatModel` for one model and one role."""

    def __init__(
        self,
        spec: ModelSpec,
        role: str,
        endpoint: EndpointClient,
        cache: ResponseCache | None,
        prices: PriceTable,
        spend: Spend | None = None,
    ) -> None:
        self.spec, self.role, self.endpoint = spec, role, endpoint
        self.name = spec.name
        self.cache, self.prices = cache, prices
        self.spend = spend if spend is not None else Spend()
        # hosted OpenAI models are the same everywhere; any other server's answers are its own
        self.cache_name = self.name if spec.provider == "openai" else f"{self.name}@{endpoint.url}"

    async def complete(
        self,
        messages: list[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        json_schema: dict[str, Any] | None = None,
        sample: int = 0,
        tools: list[dict[str, Any]] | None = None,
    ) -> Completion:
        params = call_params(temperature, max_tokens, seed, json_schema, sample, tools)
        key, hit = cached_answer(self.cache, self.cache_name, self.role, messages, params)
        if hit is not None:
            return hit
        attempts = [0]  # retries so far, also when the call finally fails
        try:
            completion = await self._request(messages, params, attempts)
        except ModelError:
            record_call(self.role, calls=1, errors=1, retries=attempts[0])
            raise
        retries = attempts[0]
        cost = self.prices.cost(
            self.spec.provider, self.spec.model, completion.input_tokens, completion.output_tokens
        )
        self.spend.total += cost
        record_call(
            self.role,
            calls=1,
            retries=retries,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            cost=cost,
        )
        if self.cache is not None:
            self.cache.put(key, self.name, completion)
        return completion

    async def _request(
        self, messages: list[Message], params: dict[str, Any], attempts: list[int]
    ) -> Completion:
        endpoint = self.endpoint
        estimate = 0
        if endpoint.tpm is not None:
            estimate = messages_tokens(messages) + int(params.get("max_tokens") or 256)
            if params.get("tools"):  # the tools' schemas are part of the prompt
                estimate += messages_tokens([{"content": json.dumps(params["tools"])}])
        schema = params.get("json_schema")
        while True:
            level = endpoint.structured if schema is not None else StructuredLevel.PROMPT
            body = {
                "model": self.spec.model,
                "messages": prompt_messages(level, messages, schema),
                **self._arguments(params, level),
            }
            try:
                reply = await endpoint.post(CHAT_PATH, body, estimate)
                return self._completion(reply, messages, level is StructuredLevel.JSON_SCHEMA)
            except (openai.APIStatusError, openai.APIConnectionError) as exc:
                secret = endpoint.endpoint.api_key
                status, message = getattr(exc, "status_code", None), _message(exc, limit=None)
                message = hide(message, secret)  # a server may echo the key
                if rejects(level, status, message):
                    endpoint.step_down(level, f"HTTP {status}: {' '.join(message.split())[:120]}")
                    continue  # not a transient error: no backoff, no retry counted
                try:
                    delay = self._retry_delay(exc, attempts[0])
                except ModelError as error:
                    raise type(error)(hide(str(error), secret)) from None
                await asyncio.sleep(delay)
                attempts[0] += 1

    def _retry_delay(self, exc: openai.APIError, retries: int) -> float:
        """Seconds to wait before retrying ``exc``; raises when a retry cannot help."""
        endpoint, settings = self.endpoint, self.endpoint.endpoint.settings
        status = getattr(exc, "status_code", None)
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            raise ModelAccessError(
                f"{self.name}: the endpoint refused the API key (HTTP {status}); "
                f"check {endpoint.endpoint.key_env or 'llm.endpoints'}"
            )
        if isinstance(exc, openai.NotFoundError):
            raise ModelAccessError(
                f"{self.name}: model not found at {endpoint.url} "
                "(HTTP 404); check the model or deployment name"
            )
        if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
            raise ModelError(f"{self.name}: request rejected: {_message(exc)}")
        if status == 429 and _code(exc) == "insufficient_quota":
            raise ModelAccessError(f"{self.name}: {_message(exc)} (HTTP 429)")
        if status is not None and status not in RETRY_STATUS and status < 500:
            raise ModelError(f"{self.name}: HTTP {status}: {_message(exc)}")
        unreachable = _unreachable(exc)  # down or wrong URL, not slow
        refused_here = unreachable and _on_this_machine(endpoint.url)
        if retries >= settings.max_retries or (refused_here and retries >= 1):
            if unreachable:
                reason = exc if type(exc) is openai.APIConnectionError else "connection refused"
                raise ModelAccessError(
                    f"{self.name}: cannot connect ({reason}); is the server at {endpoint.url} "
                    "running?"
                )
            failure = f"{self.name}: {_failure(exc, settings.timeout)}"
            raise ModelError(f"{failure} (gave up after {retries} retries)")
        return retry_delay(exc, retries, settings)

    def _arguments(self, params: dict[str, Any], structured: StructuredLevel) -> dict[str, Any]:
        args = {k: params[k] for k in ("temperature", "max_tokens", "seed", "tools") if k in params}
        if self.spec.provider in HOSTED and "max_tokens" in args:  # max_tokens is deprecated
            args["max_completion_tokens"] = args.pop("max_tokens")
        if self.spec.model.startswith(REASONING_MODELS):  # they take no temperature
            args.pop("temperature", None)
        if structured and (fmt := response_format(structured, params["json_schema"])):
            args["response_format"] = fmt
        return args

    def _completion(self, reply: Any, messages: list[Message], structured: bool) -> Completion:
        """The answer in a chat completion's JSON (``reply``)."""
        choices = reply.get("choices") if isinstance(reply, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict):
            raise ModelError(f"{self.name}: the reply is not a chat completion: {str(reply)[:80]}")
        message = choice.get("message") or {}
        text = message.get("content") or message.get("refusal") or ""
        text = text if isinstance(text, str) else json.dumps(text)
        calls = tool_call_requests(message.get("tool_calls"))
        usage = reply.get("usage") or {}
        tokens_in = usage.get("prompt_tokens") or messages_tokens(messages)
        tokens_out = usage.get("completion_tokens") or messages_tokens(
            [{"content": text, "tool_calls": message.get("tool_calls")}]
        )
        return Completion(
            text, tokens_in, tokens_out, False, choice.get("finish_reason"), structured, calls
        )


def retry_delay(exc: Exception, attempt: int, settings: EndpointSettings) -> float:
    """Seconds to wait: what Retry-After asks (plus up to 10%), else full-jitter backoff."""
    asked = retry_after(getattr(exc, "response", None))
    if asked is not None:
        return min(asked, MAX_RETRY_AFTER) * _jitter.uniform(1.0, 1.1)
    return _jitter.uniform(0, min(settings.max_backoff, settings.backoff * 2**attempt))


def retry_after(response: Any) -> float | None:
    """The delay a response asks for in ``retry-after-ms`` or ``retry-after`` (seconds or date)."""
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())


def _code(exc: Exception) -> str | None:
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    return error.get("code") if isinstance(error, dict) else None


def _message(exc: Exception, limit: int | None = 200) -> str:
    """The error's message (and the parameter it blames), at most ``limit`` characters."""
    body = getattr(exc, "body", None)
    text = str(exc)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            text = str(error["message"])
            if isinstance(error.get("param"), str) and error["param"] not in text:
                text += f" (param: {error['param']})"
    return text[:limit]


def _unreachable(exc: Exception) -> bool:
    """A connection that failed outright, not a slow answer; an HTTP client may report a refused
    connection as a timeout, so its causes are searched for the refusal."""
    if type(exc) is openai.APIConnectionError:
        return True
    cause = exc.__cause__ or exc.__context__
    for _ in range(8):  # a short chain: SDK error, httpx error, transport error, OS error
        if cause is None or isinstance(cause, ConnectionRefusedError):
            break
        cause = cause.__cause__ or cause.__context__
    return isinstance(cause, ConnectionRefusedError)


def _on_this_machine(url: str) -> bool:
    """A server on this machine that refuses connections is not running: no use waiting."""
    host = urlsplit(url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def _failure(exc: Exception, timeout: float) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return f"timed out after {timeout:g} s"
    status = getattr(exc, "status_code", "?")
    if status == 429:
        return "rate limited (HTTP 429)"
    return f"server error (HTTP {status}): {_message(exc)}"


class Models:
    """The model clients of one run, sharing endpoints, the cache and the price table."""

    def __init__(
        self,
        settings: LLMSettings | None = None,
        check_keys: bool = True,
        fresh: Collection[str] = (),
    ) -> None:
        """``fresh``: roles whose answers are never read from the cache (still stored)."""
        self.settings = settings or LLMSettings()
        self.check_keys = check_keys
        self.fresh = frozenset(fresh)
        self.prices = PriceTable(self.settings.prices)
        self._cache: ResponseCache | None = None
        self._endpoints: dict[tuple[str, str | None], EndpointClient] = {}
        self.clients: list[ModelClient] = []
        self.spend = Spend()

    @property
    def cache(self) -> ResponseCache | None:
        if self.settings.cache and self._cache is None:
            path = self.settings.cache_path or default_cache_path()
            try:
                self._cache = ResponseCache(path)
            except (OSError, sqlite3.Error) as exc:
                raise StellarError(
                    f"cannot use the response cache {path} ({exc}); "
                    "set llm.cache_path or run with --no-cache"
                ) from None
        return self._cache

    def _cache_for(self, role: str) -> ResponseCache | None:
        """The cache as ``role`` sees it: none for estimates, store-only for a fresh role."""
        cache = self.cache if self.check_keys else None
        if cache is not None and role in self.fresh:
            return StoreOnly(cache)
        return cache

    def client(self, name: str, role: str, where: str = "model") -> ModelClient:
        """A client for the model ``name`` booking its usage to ``role``."""
        spec = parse_model(name, where)
        if spec.provider == "local":  # in this process: no endpoint, no key
            from stellar.llm.local import LocalClient

            cache = self._cache_for(role)
            local = LocalClient(spec, role, cache, self.prices, self.spend, where)
            self.clients.append(local)  # type: ignore[arg-type]
            return local  # type: ignore[return-value]
        if self.check_keys:
            endpoint = resolve_endpoint(spec, self.settings.endpoints)
        else:  # estimates only: nothing will be sent
            endpoint = Endpoint(spec.provider, spec.base_url, "", None, EndpointSettings())
        shared = self._endpoints.setdefault(endpoint.key, EndpointClient(endpoint))
        cache = self._cache_for(role)
        client = ModelClient(spec, role, shared, cache, self.prices, self.spend)
        self.clients.append(client)
        return client

    def unpriced(self) -> list[str]:
        """Models whose cost is unknown (hosted, no price in the table)."""
        return sorted(
            {
                c.name
                for c in self.clients
                if self.prices.lookup(c.spec.provider, c.spec.model) is None
            }
        )

    async def aclose(self) -> None:
        for endpoint in self._endpoints.values():
            await endpoint.aclose()
        if self._cache is not None:
            self._cache.close()
            self._cache = None
