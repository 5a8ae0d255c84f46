"""An agent under test that runs as a service of its own and reaches its tools over MCP.

For each user turn STELLAR POSTs ``{"messages": [...], "mcp_url": "..."}`` (JSON) to the
agent's URL and reads ``{"reply": "..."}``. ``messages`` is the conversation so far, the
user's turn last; ``mcp_url`` is a streamable-HTTP MCP server on this machine that serves the
test's tools for this turn only (:mod:`stellar.agent.mcp_tools`): the agent connects to it,
lists the tools and calls them, and every call is checked and recorded as STELLAR's own
loop would. An agent that cannot be reached, answers an HTTP error or a body without a text
``reply`` fails that test with one line (:class:`AgentError`), as any system under test.
"""

from __future__ import annotations

import asyncio
from typing import Any

from stellar.agent.environment import Environment
from stellar.agent.mcp_tools import McpToolServer
from stellar.agent.session import Message
from stellar.errors import StellarError

DEFAULT_TIMEOUT = 120.0  # seconds for one turn, the agent's tool calls included


class AgentError(StellarError):
    """The agent's service failed a turn (unreachable, an HTTP error, a bad answer)."""


class McpAgent:
    """An :class:`~stellar.agent.session.Agent` reached at ``url`` (see the module); one MCP
    tool server serves all its tests, started on the first turn."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        headers: dict[str, str] | None = None,
        tools: McpToolServer | None = None,
    ) -> None:
        self.url, self.timeout, self.headers = url, timeout, dict(headers or {})
        self.tools = tools or McpToolServer()

    async def reply(self, messages: list[Message], environment: Environment) -> str:
        import httpx

        await asyncio.to_thread(self.tools.start)
        with self.tools.session(environment) as mcp_url:
            body = {"messages": [dict(m) for m in messages], "mcp_url": mcp_url}
            try:
                async with httpx.AsyncClient(timeout=self.timeout, headers=self.headers) as http:
                    response = await http.post(self.url, json=body)
            except httpx.HTTPError as exc:
                raise AgentError(f"{self.url}: {type(exc).__name__}: {exc}".rstrip(": ")) from None
        return _reply(self.url, response)

    def close(self) -> None:
        """Stop the tool server (a daemon thread: the process ends it anyway)."""
        self.tools.stop()


def _reply(url: str, response: Any) -> str:
    if response.status_code != 200:
        text = " ".join(response.text.split())[:200]
        raise AgentError(f"{url}: HTTP {response.status_code}: {text}")
    try:
        payload = response.json()
    except ValueError:
        raise AgentError(f"{url}: the answer is not JSON: {response.text[:80]!r}") from None
    reply = payload.get("reply") if isinstance(payload, dict) else None
    if not isinstance(reply, str):
        raise AgentError(f'{url}: the answer has no text "reply": {str(payload)[:80]}')
    return reply
