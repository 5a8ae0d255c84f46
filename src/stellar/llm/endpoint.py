"""One endpoint's limits and requests: concurrency slots, rate limiters, the structured-output
level the server accepts, and the transport that carries the requests."""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Any

import openai
from aiolimiter import AsyncLimiter

from stellar.llm.models import Endpoint
from stellar.llm.structured import StructuredLevel
from stellar.llm.transport import DirectPost, SdkPost, httpx

log = logging.getLogger("stellar.llm.client")
_NO_ROOTS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, and trusts no certificate


class EndpointClient:
    """The transport and the limits of one endpoint: ``concurrency`` requests in flight, each
    after the requests and tokens per minute allow it."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.url = endpoint.base_url or "https://api.openai.com/v1"
        s = endpoint.settings
        self._slots = asyncio.Semaphore(s.concurrency)
        self._transport: DirectPost | SdkPost | None = None
        self.rpm = AsyncLimiter(s.rpm, 60) if s.rpm else None
        self.tpm = AsyncLimiter(s.tpm, 60) if s.tpm else None
        self.structured = StructuredLevel.JSON_SCHEMA  # lowered as the server rejects levels

    def step_down(self, rejected: StructuredLevel, problem: str) -> None:
        """Ask one level below ``rejected`` from now on; logged once per step."""
        lower = StructuredLevel(rejected - 1)
        if lower < self.structured:  # concurrent requests may report the same rejection
            self.structured = lower
            log.warning(
                "%s rejects response_format %s (%s); using %s from now on",
                self.url,
                rejected.label,
                problem,
                lower.label,
            )

    async def post(self, path: str, body: dict[str, Any], tokens: int = 0) -> Any:
        """The JSON reply to ``body``, sent in a free slot once the rate limits allow."""
        async with self._slots:
            if self.rpm is not None:
                await self.rpm.acquire()
            if self.tpm is not None:
                await self.tpm.acquire(min(tokens, self.tpm.max_rate))
            return await (self._transport or self._open()).post(path, body)

    def _open(self) -> DirectPost | SdkPost:
        e, s = self.endpoint, self.endpoint.settings
        common: dict[str, Any] = {"api_key": e.api_key, "timeout": s.timeout, "max_retries": 0}
        if e.provider == "azure":
            tls = httpx().create_ssl_context(trust_env=True)  # the SDK's certificates
            limits = httpx().Limits(max_connections=s.concurrency)
            http = openai.DefaultAsyncHttpxClient(limits=limits, verify=tls)
            azure = openai.AsyncAzureOpenAI(
                azure_endpoint=e.base_url, api_version=e.api_version, http_client=http, **common
            )
            self._transport = SdkPost(azure)
        else:  # the SDK client only gives the URL and headers: its HTTP client never connects
            unused = openai.DefaultAsyncHttpxClient(verify=_NO_ROOTS)  # loading roots: ~0.1 s
            sdk = openai.AsyncOpenAI(base_url=e.base_url, http_client=unused, **common)
            self._transport = DirectPost(sdk, s.concurrency, s.timeout)
        return self._transport

    async def aclose(self) -> None:
        if self._transport is not None:
            await self._transport.aclose()
            self._transport = None
