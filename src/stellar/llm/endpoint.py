"""One endpoint's SDK clients and limits: concurrency slots in connection-pool lanes, rate
limiters, and the structured-output level the server accepts."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import logging
import math
from collections.abc import AsyncIterator
from functools import cache
from typing import Any

import openai
from aiolimiter import AsyncLimiter

from stellar.llm.models import Endpoint
from stellar.llm.structured import StructuredLevel

log = logging.getLogger("stellar.llm.client")
LANE = 8  # HTTP connections per SDK client (connection pool) of an endpoint


class EndpointClient:
    """The SDK clients and the limits of one endpoint.

    ``concurrency`` slots limit the requests in flight. Each slot belongs to a lane: an SDK
    client with its own connection pool of at most ``LANE`` connections. httpcore's pool scans
    every connection it holds twice per request, so one pool of 256 connections costs several
    times the CPU per request of 32 pools of 8; free slots are taken last-in first-out, so a
    request finds a warm connection.
    """

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.url = endpoint.base_url or "https://api.openai.com/v1"
        s = endpoint.settings
        lanes = math.ceil(s.concurrency / LANE)
        self._free: asyncio.LifoQueue[int] = asyncio.LifoQueue()
        for slot in range(s.concurrency):
            self._free.put_nowait(slot % lanes)
        self._sdks: list[openai.AsyncOpenAI | None] = [None] * lanes
        self._tls: Any = None  # one SSL context for every lane
        self.http_client = http_client_class()
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

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[openai.AsyncOpenAI]:
        """A free slot for one request, and the SDK client of its lane."""
        lane = await self._free.get()
        try:
            yield self._sdks[lane] or self._open(lane)
        finally:
            self._free.put_nowait(lane)

    def _open(self, lane: int) -> openai.AsyncOpenAI:
        e, s = self.endpoint, self.endpoint.settings
        httpx = _httpx()
        if self._tls is None:  # loading the CA certificates takes 30 ms: once per endpoint
            self._tls = httpx.create_ssl_context(trust_env=True)
        limits = httpx.Limits(max_connections=LANE, max_keepalive_connections=LANE)
        http = self.http_client(limits=limits, verify=self._tls)
        common: dict[str, Any] = {
            "api_key": e.api_key,
            "timeout": s.timeout,
            "max_retries": 0,
            "http_client": http,
        }
        if e.provider == "azure":
            sdk: openai.AsyncOpenAI = openai.AsyncAzureOpenAI(
                azure_endpoint=e.base_url, api_version=e.api_version, **common
            )
        else:
            sdk = openai.AsyncOpenAI(base_url=e.base_url, **common)
        self._sdks[lane] = sdk
        return sdk

    async def acquire(self, tokens: int) -> None:
        if self.rpm is not None:
            await self.rpm.acquire()
        if self.tpm is not None:
            await self.tpm.acquire(min(tokens, self.tpm.max_rate))

    async def aclose(self) -> None:
        for sdk in self._sdks:
            if sdk is not None:
                await sdk.close()
        self._sdks = [None] * len(self._sdks)


def http_client_class() -> type:
    """The SDK's aiohttp client where aiohttp is installed (``pip install 'openai[aiohttp]'``;
    a third less CPU per request than httpx's own connections), else its httpx client."""
    aiohttp_client = getattr(openai, "DefaultAioHttpClient", None)
    if aiohttp_client is not None and importlib.util.find_spec("aiohttp") is not None:
        return aiohttp_client
    return openai.DefaultAsyncHttpxClient


@cache
def _httpx() -> Any:
    """The httpx package the SDK is built on (httpx2 from openai 3, httpx before)."""
    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.partition(".")[0])
