"""Which agent a spec names: the one place that turns a user's ``--agent`` text into an agent.

``chat``: the model given, with tools, in STELLAR's loop (:mod:`stellar.agent.tool_loop`);
``python:module:attr`` or ``module:attr``: a user's function ``(messages, tools) -> str``
(:mod:`stellar.agent.python_agent`); ``http://...`` or ``https://...``: a service that reaches
its tools over MCP (:mod:`stellar.agent.mcp_agent`). Anything else is refused in one line.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

from stellar.agent.mcp_agent import McpAgent
from stellar.agent.python_agent import PythonAgent
from stellar.agent.session import Agent
from stellar.agent.tool_loop import ChatToolAgent
from stellar.errors import StellarError
from stellar.llm.base import ChatModel

FORMS = "'chat', 'python:module:function', 'module:function' or an http(s):// URL"
_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def build_agent(spec: str, model: ChatModel | None = None, max_steps: int = 8) -> Agent:
    """The agent ``spec`` names; ``model`` and ``max_steps`` serve ``chat``."""
    text = str(spec or "").strip()
    if text == "chat":
        if model is None:
            raise StellarError("agent 'chat' needs a model (set the system's model)")
        if max_steps < 1:
            raise StellarError(f"agent 'chat': max_steps {max_steps} must be at least 1")
        return ChatToolAgent(model, max_steps=max_steps)
    if text.startswith(("http://", "https://")):
        if len(text.split("://", 1)[1].strip("/")) == 0:
            raise StellarError(f"agent {text!r}: the URL has no host")
        return McpAgent(text)
    target = text.removeprefix("python:")
    if _TARGET.match(target):
        return PythonAgent(_load(target))
    raise StellarError(f"agent {text!r}: give {FORMS}")


def _load(target: str) -> Callable[..., Any]:
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a missing module, or one that fails while it is imported
        problem = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        raise StellarError(f"agent {target!r}: cannot import {module_name}: {problem}") from None
    found: Any = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise StellarError(f"agent {target!r}: {module_name} has no {attribute}")
        found = getattr(found, part)
    if not callable(found):
        raise StellarError(f"agent {target!r}: {attribute} is not callable")
    return found
