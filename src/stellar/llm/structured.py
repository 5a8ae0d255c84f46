"""Structured output in three levels, stepped down per endpoint when the server rejects one.

``json_schema``: the server enforces the schema. ``json_object``: the server guarantees a JSON
object and the schema is written into the prompt. ``prompt``: no ``response_format`` at all;
the caller parses strict JSON. An HTTP error (any 4xx or 5xx) whose message names
``response_format`` or the rejected type moves the endpoint one level down for the rest of
the run; it is not a transient error. What each server kind answers: ``docs/servers.md``.
"""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any

from stellar.llm.base import Message

SCHEMA_INTRO = "Reply with only a JSON object that satisfies this JSON Schema:"


class StructuredLevel(IntEnum):
    """How an endpoint is asked for JSON; a lower level asks the server for less."""

    PROMPT = 0
    JSON_OBJECT = 1
    JSON_SCHEMA = 2

    @property
    def label(self) -> str:
        return "plain prompting" if self is StructuredLevel.PROMPT else self.name.lower()


# words in an error message that blame the response_format of each level
_COMPLAINTS = {
    StructuredLevel.JSON_SCHEMA: ("response_format", "json_schema"),
    StructuredLevel.JSON_OBJECT: ("response_format", "json_object"),
}


def rejects(level: StructuredLevel, status: int | None, text: str) -> bool:
    """Whether an HTTP error ``status`` with ``text`` rejects the ``response_format`` sent."""
    words = _COMPLAINTS.get(level, ())
    lowered = text.lower()
    return status is not None and status >= 400 and any(word in lowered for word in words)


def response_format(level: StructuredLevel, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` argument of a request at ``level`` (None: send none)."""
    if level is StructuredLevel.JSON_SCHEMA:
        return {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema, "strict": True},
        }
    if level is StructuredLevel.JSON_OBJECT:
        return {"type": "json_object"}
    return None


def prompt_messages(
    level: StructuredLevel, messages: list[Message], schema: dict[str, Any] | None
) -> list[Message]:
    """``messages`` as sent at ``level``: for ``json_object`` the schema is appended to the
    last system or user message (it also gives the word "JSON" that OpenAI requires)."""
    if level is not StructuredLevel.JSON_OBJECT or schema is None:
        return messages
    note = f"\n\n{SCHEMA_INTRO}\n{json.dumps(schema, separators=(',', ':'))}"
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") in ("system", "user"):
            sent = list(messages)
            sent[i] = {**messages[i], "content": messages[i].get("content", "") + note}
            return sent
    return [*messages, {"role": "user", "content": note.strip()}]


def prompted_schema(messages: list[Message]) -> dict[str, Any] | None:
    """The schema :func:`prompt_messages` wrote into ``messages``, if any (for the stub)."""
    for message in reversed(messages):
        content = str(message.get("content", ""))
        if SCHEMA_INTRO in content:
            text = content.rsplit(SCHEMA_INTRO, 1)[1].lstrip()
            try:
                schema, _ = json.JSONDecoder().raw_decode(text)
            except json.JSONDecodeError:
                return None
            return schema if isinstance(schema, dict) else None
    return None
