"""Structured output in three levels, stepped down per endpoint when the server rejects one.

``json_schema``: the server enforces the schema. ``json_object``: the server guarantees a JSON
object and the schema is written into the prompt. ``prompt``: no ``response_format`` at all;
the caller parses strict JSON. An HTTP error (any 4xx or 5xx) whose message names
``response_format`` or the rejected type moves the endpoint one level down for the rest of
the run; it is not a transient error. What each server kind answers: ``docs/servers.md``.
"""

from __future__ import annotations

import re
from enum import IntEnum
from typing import Any

from stellar.llm.base import Message

SCHEMA_INTRO = "Reply with only a JSON object with exactly these keys:"
# one key as described in the prompt: "R (integer from 0 to 2)", "verdict (one of: a, b)"
_KEY = re.compile(
    r"(\w+) \((string|integer|number|boolean)(?: from ([-\d.]+) to ([-\d.]+))?"
    r"(?:, one of: ([^)]*))?\)"
)


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
    if level is StructuredLevel.JSON_OBJECT:  # llama.cpp servers constrain output to "schema"
        return {"type": "json_object", "schema": schema}
    return None


def prompt_messages(
    level: StructuredLevel, messages: list[Message], schema: dict[str, Any] | None
) -> list[Message]:
    """``messages`` as sent at ``level``: for ``json_object`` the schema is described in words
    at the end of the last system or user message (small models copy a raw JSON Schema
    instead of answering; the words also give the "JSON" that OpenAI requires)."""
    if level is not StructuredLevel.JSON_OBJECT or schema is None:
        return messages
    note = f"\n\n{SCHEMA_INTRO} {describe(schema)}."
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") in ("system", "user"):
            sent = list(messages)
            sent[i] = {**messages[i], "content": messages[i].get("content", "") + note}
            return sent
    return [*messages, {"role": "user", "content": note.strip()}]


def describe(schema: dict[str, Any]) -> str:
    """An object schema's keys in words: "reason (string); R (integer from 0 to 2)"."""
    parts = []
    for name, sub in schema.get("properties", {}).items():
        kind = sub.get("type", "string")
        if "minimum" in sub and "maximum" in sub:
            kind += f" from {sub['minimum']:g} to {sub['maximum']:g}"
        if "enum" in sub:
            kind += f", one of: {', '.join(map(str, sub['enum']))}"
        parts.append(f"{name} ({kind})")
    return "; ".join(parts)


def prompted_schema(messages: list[Message]) -> dict[str, Any] | None:
    """The schema :func:`prompt_messages` described in ``messages``, if any (for the stub)."""
    for message in reversed(messages):
        content = str(message.get("content", ""))
        if SCHEMA_INTRO in content:
            properties: dict[str, Any] = {}
            for name, kind, low, high, choices in _KEY.findall(content.rsplit(SCHEMA_INTRO, 1)[1]):
                sub: dict[str, Any] = {"type": kind}
                if low:
                    sub.update(minimum=float(low), maximum=float(high))
                if choices:
                    cast = {"integer": int, "number": float}.get(kind, str)
                    sub["enum"] = [cast(c.strip()) for c in choices.split(",")]
                properties[name] = sub
            return {"type": "object", "properties": properties, "required": list(properties)}
    return None
