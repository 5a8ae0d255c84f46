"""How an endpoint's requests travel: straight over pyreqwest, or through the openai SDK.

The SDK's ``post`` turns every call into request options, an httpx request and an httpx
response around its HTTP client: the model client cost 1.9 ms of CPU per call at 64 calls
in flight on 2 cores, against 0.53 ms over aiohttp and 0.31 ms over pyreqwest (Rust's
reqwest, whose HTTP and TLS run outside the interpreter; ``bench/model_calls.py``).
OpenAI and OpenAI-compatible endpoints therefore post their JSON through one pyreqwest
client, with the URL and headers the SDK client would send (its public ``base_url``,
``default_headers`` and ``auth_headers``), and turn an error reply into the SDK's own
exception types, so that retries, messages and key checks behave as through the SDK.
Azure endpoints, whose URLs and keys the SDK rewrites per deployment, go through the SDK.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import re
import urllib.request
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import certifi
import openai
import orjson
from pyreqwest.client import Client, ClientBuilder
from pyreqwest.exceptions import PyreqwestError
from pyreqwest.proxy import ProxyBuilder

from stellar.llm.models import hide

_PEM = re.compile(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.S)
STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}


class SdkPost:
    """Requests through the SDK client's ``post`` (Azure)."""

    def __init__(self, sdk: openai.AsyncOpenAI) -> None:
        self.sdk = sdk

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        return await self.sdk.post(path, body=body, cast_to=object)

    async def aclose(self) -> None:
        await self.sdk.close()


class DirectPost:
    """Requests over one pyreqwest client, with the SDK client's URL, headers and errors."""

    def __init__(self, sdk: openai.AsyncOpenAI, connections: int, timeout: float) -> None:
        self.sdk, self.base = sdk, str(sdk.base_url).rstrip("/")
        headers = {**sdk.default_headers, **sdk.auth_headers}
        self.headers = {k: v for k, v in headers.items() if isinstance(v, str)}  # no Omit
        self.connections, self.timeout = connections, timeout
        self.proxy = env_proxy(self.base)
        self._client: Client | None = None

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        """The JSON reply to ``body`` posted to ``path``; an error reply raises the SDK's error."""
        url = self.base + path
        client = self._client or self._open()
        try:
            reply = await client.post(url).body_bytes(encode(body)).build().send()
            raw = bytes(await reply.bytes())
        except TimeoutError as exc:  # pyreqwest's timeouts are TimeoutErrors
            raise openai.APITimeoutError(request=_request(url)) from exc
        except PyreqwestError as exc:
            raise openai.APIConnectionError(message=_reason(exc), request=_request(url)) from exc
        if 200 <= reply.status < 300:
            return parse_reply(raw)
        raise status_error(url, reply.status, dict(reply.headers.items()), raw)

    def _open(self) -> Client:
        try:  # pyreqwest refuses a malformed header (a key with a newline) or proxy URL
            builder = (
                ClientBuilder()
                .max_connections(self.connections)
                .timeout(timedelta(seconds=self.timeout))
                .default_headers(self.headers)
                .no_proxy()  # env_proxy's, not reqwest's own
            )
            if self.proxy is not None:
                builder = builder.proxy(ProxyBuilder.all(self.proxy))
            for certificate in certifi_roots():
                builder = builder.add_root_certificate_pem(certificate)
            self._client = builder.build()
        except ValueError as exc:
            problem = f"cannot set up HTTP ({exc}); check HTTP(S)_PROXY and the API key"
            problem = hide(problem, self.sdk.api_key)
            raise openai.APIConnectionError(message=problem, request=_request(self.base)) from exc
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
        await self.sdk.close()


def status_error(url: str, status: int, headers: dict[str, str], raw: bytes) -> openai.APIError:
    """The SDK's exception for an HTTP error reply, as its own client would raise it."""
    text = raw.decode(errors="replace").strip()
    message = f"Error code: {status}"
    body: Any = text
    with contextlib.suppress(ValueError):
        body = json.loads(text)
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
        message += f" - {error['message']}"
    response = httpx().Response(status, headers=headers, content=raw, request=_request(url))
    kind = STATUS_ERRORS.get(status)
    if kind is None:
        kind = openai.InternalServerError if status >= 500 else openai.APIStatusError
    return kind(message, response=response, body=error)


def encode(body: dict[str, Any]) -> bytes:
    """``body`` as JSON: by orjson, or by json where a text holds a lone surrogate (an
    answer quoted to a judge may), which orjson refuses."""
    try:
        return orjson.dumps(body)
    except TypeError:
        return json.dumps(body).encode()


def parse_reply(raw: bytes) -> Any:
    """A reply's JSON, or its text where it is not JSON (reported as no chat completion).
    orjson parses 3-5x faster than json, but refuses lone surrogates, which JSON allows."""
    try:
        return orjson.loads(raw)
    except ValueError:
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode(errors="replace")


def env_proxy(url: str) -> str | None:
    """The proxy that HTTP(S)_PROXY and NO_PROXY name for ``url``, as the SDK's httpx client
    reads them (reqwest's own look-up differs); once per endpoint."""
    parts = urlsplit(url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return urllib.request.getproxies().get(parts.scheme)


@cache
def certifi_roots() -> tuple[bytes, ...]:
    """certifi's certificates, the SDK's default trust, one PEM block each. reqwest trusts
    them besides the system's store (or what SSL_CERT_FILE or SSL_CERT_DIR name, which it
    reads itself), so that a machine without CA certificates can still build a client."""
    return tuple(block.encode() for block in _PEM.findall(Path(certifi.where()).read_text()))


def _reason(exc: PyreqwestError) -> str:
    """The error and its root cause: "connection error: Connection refused (os error 111)"."""
    causes = (getattr(exc, "details", None) or {}).get("causes") or []
    root = causes[-1].get("message") if causes and isinstance(causes[-1], dict) else None
    return f"{exc.message}: {root}" if root else exc.message


def _request(url: str) -> Any:
    return httpx().Request("POST", url)


@cache
def httpx() -> Any:
    """The httpx package the SDK is built on (httpx2 from openai 3, httpx before)."""
    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.partition(".")[0])
