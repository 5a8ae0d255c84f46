"""A chat model as the system under test; in a conversation it is sent the whole history."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from stellar.dialogue.session import HistorySession
from stellar.llm.base import ChatModel, Message, PlannedCall, estimate_tokens
from stellar.records import Response

TYPICAL_INPUT_TOKENS = 30  # a generated user request (10-40 tokens)
TYPICAL_ANSWER_TOKENS = 150


class ChatSUT:
    """A chat model: each input is the user's message, after an optional system prompt."""

    probe_needed = False  # a conversation sends the model its whole history: nothing to set up

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        model: str = Field(description="the model, e.g. openai:gpt-4o-mini")
        system_prompt: str | None = None
        temperature: float = Field(0.0, ge=0, le=2)
        max_tokens: int = Field(512, ge=1)

    def __init__(
        self,
        model: ChatModel,
        system_prompt: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
    ) -> None:
        self.model, self.system_prompt = model, system_prompt
        self.temperature, self.max_tokens = temperature, max_tokens

    def messages(self, text: str, history: list[Message] | None = None) -> list[Message]:
        """The system prompt, the earlier turns (``history``), then the user's ``text``."""
        system = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return [*system, *(history or []), {"role": "user", "content": text}]

    async def query(self, text: str, history: list[Message] | None = None) -> Response:
        completion = await self.model.complete(
            self.messages(text, history), temperature=self.temperature, max_tokens=self.max_tokens
        )
        return Response(text=completion.text)  # a model answers in text: no structured data

    async def open(self) -> HistorySession:
        """A conversation: each turn sends the system prompt and every turn so far."""
        return HistorySession(self.query)

    def planned_calls(self, candidate: Any = None) -> list[PlannedCall]:
        prompt = estimate_tokens(self.system_prompt or "") + TYPICAL_INPUT_TOKENS + 8
        answer = min(self.max_tokens, TYPICAL_ANSWER_TOKENS)
        return [PlannedCall(self.model.name, "sut", prompt, answer)]

    async def aclose(self) -> None:
        """The model clients are closed by the run."""
