"""A tiny environment (notes in a dict database) and a scripted tool-calling model, for the
agent driver tests; nothing here knows a use case."""

from __future__ import annotations

import json

from stellar.agent.environment import Environment, Tool, ToolError
from stellar.llm.base import Completion, ToolCallRequest, messages_tokens

DATABASE = {"notes": [{"id": "n1", "text": "buy milk"}, {"id": "n2", "text": "call Ada"}]}


def _get_note(state, arguments):
    for row in state["notes"]:
        if row["id"] == arguments["id"]:
            return dict(row)
    raise ToolError(f"no note {arguments['id']}")


def _set_note(state, arguments):
    for row in state["notes"]:
        if row["id"] == arguments["id"]:
            row["text"] = arguments["text"]
            return {"ok": True}
    raise ToolError(f"no note {arguments['id']}")


def _broken(state, arguments):
    raise RuntimeError("disk on fire")


def make_tools(broken: bool = False) -> list[Tool]:
    object_of = {"type": "object", "additionalProperties": False}
    tools = [
        Tool(
            "get_note",
            "Read one note by id.",
            {**object_of, "properties": {"id": {"type": "string"}}, "required": ["id"]},
            _get_note,
        ),
        Tool(
            "set_note",
            "Replace a note's text.",
            {
                **object_of,
                "properties": {"id": {"type": "string"}, "text": {"type": "string"}},
                "required": ["id", "text"],
            },
            _set_note,
            writes=True,
        ),
    ]
    if broken:
        tools.append(Tool("broken", "Always fails.", {"type": "object"}, _broken))
    return tools


def make_environment(broken: bool = False) -> Environment:
    return Environment(make_tools(broken), DATABASE)


def calls(*pairs, text: str = "") -> Completion:
    """A model answer asking for ``(name, arguments)`` calls (a dict is written as JSON, text
    is sent as is)."""
    requests = tuple(
        ToolCallRequest(f"c{i}", name, args if isinstance(args, str) else json.dumps(args))
        for i, (name, args) in enumerate(pairs)
    )
    return Completion(text, 10, 5, finish_reason="tool_calls", tool_calls=requests)


class ScriptedToolModel:
    """A chat model answering with scripted completions (a ``str`` is a text answer, an
    exception is raised); records every request."""

    role = "sut"

    def __init__(self, replies, name="scripted:tools"):
        self.name, self.replies, self.requests = name, list(replies), []

    async def complete(self, messages, *, tools=None, **params):
        self.requests.append({"messages": [dict(m) for m in messages], "tools": tools, **params})
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, str):
            return Completion(reply, messages_tokens(messages), 5)
        return reply
