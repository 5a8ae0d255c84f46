"""An environment's tools served over MCP, for an agent that reaches its tools that way.

One :class:`McpToolServer` (the official ``mcp`` SDK's low-level server, streamable HTTP,
stateless, JSON answers) listens on 127.0.0.1 at a free port, in a thread of its own, for an
agent system's whole run. Each turn of a test gets its own address, ``/mcp/<token>`` with a
random token (:meth:`McpToolServer.session`), that names the test's environment: concurrent
tests never share one, and a token stops working when its turn ends (a late call is answered
with an error and recorded nowhere). ``tools/list`` gives the environment's tools with their
JSON schemas; ``tools/call`` runs :meth:`Environment.call` on the event loop that owns the
environment (so the environment is only ever touched from one thread) and answers the
result as JSON text, an error as a result marked ``isError``: the call is recorded in the
trace exactly as a model's call would be, bad arguments and unknown tools included.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from stellar.agent.environment import Environment, ToolCall
from stellar.errors import StellarError

PATH = "/mcp/{token}"
START_SECONDS = 30.0  # for the server to listen


class McpToolServer:
    """``with server.session(environment) as url: ...``: ``url`` serves that environment's
    tools until the block ends. The server starts on the first session."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self._live: dict[str, tuple[Environment, asyncio.AbstractEventLoop]] = {}
        self._lock = threading.Lock()
        self._uvicorn: Any = None
        self._thread: threading.Thread | None = None
        self._port = 0

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self._port}"

    def start(self) -> McpToolServer:
        """Listen (once; later calls return at once). Seconds at most: call it off the loop."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return self
            import uvicorn

            sock = socket.create_server((self.host, 0))
            self._port = sock.getsockname()[1]
            config = uvicorn.Config(
                self._app(), log_config=None, log_level="warning", access_log=False
            )
            self._uvicorn = server = uvicorn.Server(config)
            self._thread = threading.Thread(
                target=lambda: asyncio.run(server.serve(sockets=[sock])),
                name="stellar-mcp-tools",
                daemon=True,
            )
            self._thread.start()
            deadline = time.monotonic() + START_SECONDS
            while not server.started:
                if not self._thread.is_alive() or time.monotonic() > deadline:
                    raise StellarError(f"the MCP tool server on {self.base} did not start")
                time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop listening (sessions still open get refused connections)."""
        with self._lock:
            if self._thread is None:
                return
            self._uvicorn.should_exit = True
            self._thread.join(timeout=10)
            self._thread = None

    @contextlib.contextmanager
    def session(self, environment: Environment) -> Iterator[str]:
        """The address that serves ``environment``'s tools while the block runs (call it on
        the event loop that owns the environment; it starts the server if :meth:`start` has
        not, blocking the loop that long)."""
        self.start()
        token = secrets.token_urlsafe(16)
        self._live[token] = (environment, asyncio.get_running_loop())
        try:
            yield self.base + PATH.format(token=token)
        finally:
            self._live.pop(token, None)

    def _app(self) -> Any:
        from mcp.server.lowlevel import Server

        server = Server("stellar", on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        return server.streamable_http_app(
            streamable_http_path=PATH, stateless_http=True, json_response=True, host=self.host
        )

    def _find(self, ctx: Any) -> tuple[Environment, asyncio.AbstractEventLoop] | None:
        request = getattr(ctx, "request", None)
        token = getattr(request, "path_params", {}).get("token", "")
        return self._live.get(token)

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        from mcp import types
        from mcp.shared.exceptions import MCPError

        found = self._find(ctx)
        if found is None:
            raise MCPError(types.INVALID_REQUEST, ENDED)
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
                for t in found[0].tools
            ]
        )

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        from mcp import types

        found = self._find(ctx)
        if found is None:
            return _result(ENDED, error=True)
        environment, loop = found
        arguments = params.arguments if params.arguments is not None else {}
        pending = _call(environment, params.name, arguments)
        try:
            future = asyncio.run_coroutine_threadsafe(pending, loop)
        except RuntimeError:  # the owning loop is closed: the test is over
            pending.close()
            return _result(ENDED, error=True)
        call = await asyncio.wrap_future(future)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=call.answer())],
            is_error=call.error is not None,
        )


ENDED = "this tool session has ended (each turn of a test has its own MCP address)"


async def _call(environment: Environment, name: str, arguments: Any) -> ToolCall:
    return environment.call(name, arguments)


def _result(text: str, error: bool) -> Any:
    from mcp import types

    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)
