"""What every part of STELLAR that talks to a model relies on: a chat model and its answers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}


@dataclass(frozen=True)
class Completion:
    """One model answer. ``cached``: it came from the response cache, no request was made."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False
    finish_reason: str | None = None
    structured: bool = False  # the server enforced the requested JSON schema


class ChatModel(Protocol):
    """An async chat-completion model, named like ``openai:gpt-4o-mini``.

    ``json_schema`` asks for structured output (used where the endpoint supports it; the
    caller must still validate the text). ``sample`` distinguishes repeated samples of the
    same request (majority votes) in the response cache; it is not sent to the server.
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
    """Rough token count of a chat request (content plus a few tokens per message)."""
    return sum(estimate_tokens(m.get("content", "")) + 4 for m in messages)
