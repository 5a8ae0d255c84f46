"""What every part of STELLAR that talks to a model relies on: a chat model and its answers."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Protocol

# {"role": "system" | "user" | "assistant" | "tool", "content": ...}; an assistant message that
# calls tools also holds "tool_calls" (OpenAI's form), a tool's result "tool_call_id"
Message = dict[str, Any]


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call a model asked for: ``arguments`` as the text it wrote (maybe not JSON)."""

    id: str
    name: str
    arguments: str

    def to_dict(self) -> dict[str, Any]:
        """The call as an assistant message's ``tool_calls`` entry holds it."""
        function = {"name": self.name, "arguments": self.arguments}
        return {"id": self.id, "type": "function", "function": function}


def tool_call_requests(entries: Any) -> tuple[ToolCallRequest, ...]:
    """The calls in a message's ``tool_calls`` (OpenAI's form), read leniently: a missing id
    or name becomes ``""`` and arguments that are not text are written as JSON, so a
    malformed call still reaches the environment, which answers it with an error."""
    calls = []
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        entry = entry if isinstance(entry, dict) else {}
        function = entry.get("function") if isinstance(entry.get("function"), dict) else {}
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False, default=str)
        call_id = str(entry.get("id") or f"call_{i}")
        calls.append(ToolCallRequest(call_id, str(function.get("name") or ""), arguments))
    return tuple(calls)


@dataclass(frozen=True)
class Completion:
    """One model answer. ``cached``: it came from the response cache, no request was made.
    ``tool_calls``: the tools it asked to call (only when the request offered ``tools``)."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False
    finish_reason: str | None = None
    structured: bool = False  # the server enforced the requested JSON schema
    tool_calls: tuple[ToolCallRequest, ...] = ()


class ChatModel(Protocol):
    """An async chat-completion model, named like ``openai:gpt-4o-mini``.

    ``json_schema`` asks for structured output (used where the endpoint supports it; the
    caller must still validate the text). ``tools`` offers tools in OpenAI's ``tools`` form;
    the answer's ``tool_calls`` holds the calls the model asked for. ``sample`` distinguishes
    repeated samples of the same request (majority votes) in the response cache; it is not
    sent to the server.
    Raises :class:`stellar.errors.ModelError` when the call fails after its retries and
    :class:`stellar.errors.ModelAccessError` for a refused key or an unknown model.
    """

    name: str
    role: str  # "generator", "sut" or "judge": usage is booked to it

    async def complete(
        self,
        messages: list[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        json_schema: dict[str, Any] | None = None,
        sample: int = 0,
        tools: list[dict[str, Any]] | None = None,
    ) -> Completion: ...


@dataclass(frozen=True)
class PlannedCall:
    """A model call a component expects to make for one test (for ``stellar run --dry-run``)."""

    model: str
    role: str
    input_tokens: int
    output_tokens: int
    calls: float = 1.0


def estimate_tokens(text: str) -> int:
    """Rough token count for estimates: about four characters per token for English."""
    return max(1, math.ceil(len(text) / 4))


def messages_tokens(messages: list[Message]) -> int:
    """Rough token count of a chat request (content and tool calls, plus a few tokens per
    message)."""
    return sum(estimate_tokens(_message_text(m)) + 4 for m in messages)


def _message_text(message: Message) -> str:
    content = message.get("content") or ""
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    if message.get("tool_calls"):
        text += json.dumps(message["tool_calls"], default=str)
    return text
