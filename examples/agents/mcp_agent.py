"""An example agent that STELLAR tests over HTTP, reaching its tools over MCP.

STELLAR POSTs ``{"messages": [...], "mcp_url": "..."}`` for each user turn and reads
``{"reply": "..."}``. This agent is deterministic and knows no domain, so that it runs with
any tools: each line of the user's last message of the form ``TOOL {"arg": ...}`` (a tool's
name, then its arguments as a JSON object) becomes a call, made in order over MCP; the reply
gives each result, or the tools it has when the message names none. A real agent would put a
model where ``plan`` is.

Run it with ``python examples/agents/mcp_agent.py --port 8765`` and give STELLAR the agent
spec ``http://127.0.0.1:8765/`` (a URL names an agent reached this way:
``stellar.agent.drivers.build_agent``).

It needs the ``mcp`` package (a dependency of STELLAR) and uvicorn (one of ``mcp``'s).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def plan(text: str, tools: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """The calls the user's message asks for: lines ``TOOL {json}`` naming an offered tool."""
    planned = []
    for line in text.splitlines():
        name, _, rest = line.strip().partition(" ")
        if name in tools:
            try:
                arguments = json.loads(rest or "{}")
            except json.JSONDecodeError:
                arguments = {"raw": rest}  # sent as is: the tool server answers the error
            planned.append((name, arguments if isinstance(arguments, dict) else {}))
    return planned


async def answer(messages: list[dict[str, Any]], mcp_url: str) -> str:
    """One turn: connect to the test's MCP server, call the planned tools, report results."""
    from mcp import Client

    last = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    async with Client(mcp_url) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        calls = plan(str(last.get("content", "")), tools)
        if not calls:
            return f"I can use these tools: {', '.join(tools)}."
        lines = []
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            text = " ".join(getattr(c, "text", "") for c in result.content)
            lines.append(f"{name}: {'error: ' if result.is_error else ''}{text}")
    return "\n".join(lines)


async def turn(request: Request) -> JSONResponse:
    body = await request.json()
    if not isinstance(body, dict) or not isinstance(body.get("mcp_url"), str):
        return JSONResponse({"error": "expected messages and mcp_url"}, status_code=400)
    return JSONResponse({"reply": await answer(body.get("messages") or [], body["mcp_url"])})


app = Starlette(routes=[Route("/", turn, methods=["POST"])])


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
