"""What the stub server answers: replies, errors and the server kinds it can imitate.

``SERVER_KINDS`` holds, per server kind, how it answers a ``response_format`` it does not
support (docs/servers.md); ``default_responder`` answers structured requests with a
schema-valid object and others with a sentence naming the question. A responder that returns
:class:`ToolCalls` answers with OpenAI-style ``tool_calls`` (the agent tests' scripted models).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

from stellar.llm.structured import prompted_schema

Answer = tuple[int, dict[str, str], Any]  # status, headers, JSON body


@dataclass(frozen=True)
class Rejection:
    """How a server kind answers the ``response_format`` types it does not support.

    ``status`` None: the field is silently ignored (the request is answered without it).
    ``body``: the JSON error body, ``{type}`` in its strings replaced by the type sent.
    """

    types: tuple[str, ...]
    status: int | None = None
    body: dict[str, Any] = field(default_factory=dict)


_LITERAL_ERROR = (
    "1 validation error:\n  {{'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': '{type}', "
    "'ctx': {{'expected': \"'text' or 'json_object'\"}}}}"
)

# what each server kind answers to a response_format it does not support (docs/servers.md)
SERVER_KINDS: dict[str, Rejection] = {
    "openai": Rejection(()),  # supports json_schema and json_object
    "azure-old-api": Rejection(
        ("json_schema",),
        400,
        {
            "error": {
                "message": "response_format value as json_schema is enabled only for api "
                "versions 2024-08-01-preview and later",
                "type": "",
                "param": "",
                "code": "BadRequest",
            }
        },
    ),
    "azure-model": Rejection(
        ("json_schema", "json_object"),
        400,
        {
            "error": {
                "message": "Invalid parameter: 'response_format' of type '{type}' is not "
                "supported with this model.",
                "type": "invalid_request_error",
                "param": "response_format",
                "code": None,
            }
        },
    ),
    "vllm-old": Rejection(
        ("json_schema",),
        400,
        {"object": "error", "message": _LITERAL_ERROR, "type": "BadRequestError", "code": 400},
    ),
    "ollama-old": Rejection(("json_schema",)),  # ignored: the model answers unconstrained
    "llama-cpp-python": Rejection(
        ("json_schema",),
        500,
        {
            "error": {
                "message": _LITERAL_ERROR,
                "type": "internal_server_error",
                "param": None,
                "code": None,
            }
        },
    ),
    "llama.cpp-old": Rejection(
        ("json_schema",),
        500,
        {
            "error": {
                "code": 500,
                "message": 'response_format type must be one of "text" or "json_object", '
                "but got: {type}",
                "type": "server_error",
            }
        },
    ),
}


def schema_example(schema: dict[str, Any]) -> Any:
    """A value that satisfies a simple JSON schema (the stub's structured answers)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {name: schema_example(sub) for name, sub in schema.get("properties", {}).items()}
    if kind == "integer":
        return int(schema.get("maximum", 1))
    if kind == "number":
        return float(schema.get("maximum", 1.0))
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    return "stub"


def default_responder(body: dict[str, Any]) -> Any:
    """Structured requests get a schema-valid object (``json_object``: valid for the schema in
    the prompt, if any); others an answer naming the question."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return schema_example(response_format["json_schema"]["schema"])
    if response_format.get("type") == "json_object":
        return schema_example(prompted_schema(body.get("messages", [])) or {})
    last = body["messages"][-1]["content"] if body.get("messages") else ""
    return f"Here is what I found for: {last[:60]}. Anything else?"


@dataclass(frozen=True)
class ToolCalls:
    """A reply that calls tools: ``calls`` holds (name, arguments) pairs, the arguments a
    mapping or text sent as is (text that is not JSON plays a malformed call); ``text`` is
    sent beside them as the message's content."""

    calls: tuple[tuple[str, Any], ...]
    text: str = ""


def reply_completion(body: dict[str, Any], reply: str | dict | ToolCalls) -> dict[str, Any]:
    """The chat completion a responder's reply stands for (text, a JSON object, tool calls)."""
    calls = reply.calls if isinstance(reply, ToolCalls) else ()
    if isinstance(reply, ToolCalls):
        text = reply.text
    else:
        text = reply if isinstance(reply, str) else json.dumps(reply)
    messages = body.get("messages", [])
    prompt = sum(len(str(m.get("content", ""))) for m in messages)
    answer = completion(body.get("model", "stub"), text, prompt // 4, len(text) // 4)
    if calls:
        choice = answer["choices"][0]
        choice["finish_reason"] = "tool_calls"
        choice["message"]["content"] = text or None
        choice["message"]["tool_calls"] = [
            {
                "id": f"call_{len(messages)}_{i}",  # unique within a conversation
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
            for i, (name, arguments) in enumerate(calls)
        ]
    return answer


def completion(model: str, text: str, tokens_in: int, tokens_out: int) -> dict[str, Any]:
    """A chat completion body."""
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
    }


def error(status: int, message: str, code: str) -> Answer:
    """An error in OpenAI's format."""
    return status, {}, {"error": {"message": message, "type": "stub_error", "code": code}}


def too_many(wait: float, limit: str) -> Answer:
    """HTTP 429 as OpenAI sends it: ``retry-after`` (whole seconds) and ``retry-after-ms``."""
    ms = max(1, math.ceil(wait * 1000))
    message = f"Rate limit reached for {limit}. Please try again in {ms}ms."
    error = {"message": message, "type": "requests", "param": None, "code": "rate_limit_exceeded"}
    headers = {"retry-after": str(max(1, math.ceil(wait))), "retry-after-ms": str(ms)}
    return 429, headers, {"error": error}


def filled(value: Any, kind: str) -> Any:
    """``value`` with ``{type}`` in its strings replaced by ``kind``."""
    if isinstance(value, dict):
        return {key: filled(item, kind) for key, item in value.items()}
    return value.format(type=kind) if isinstance(value, str) else value
