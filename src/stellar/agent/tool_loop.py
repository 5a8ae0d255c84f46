"""A chat model with tools as an agent: STELLAR runs the loop, as an application would.

Each step asks the model with the environment's tools offered (OpenAI's ``tools`` form);
when the answer asks for calls, each is run through :meth:`Environment.call` in the order
given (several in one answer: parallel calls) and its result goes back as a ``tool``
message; when the answer is text, that text is the reply. Nothing the model writes stops
the run: an unknown tool, arguments that are not JSON or break the schema, a tool that
raises, each is answered with an error the model reads and recorded in the environment's
trace. After ``max_steps`` model calls that still ask for tools, the calls of the last step
are run and the reply says that the agent stopped (:data:`STEP_LIMIT`), so a test sees it.
Within a conversation the model sees its earlier calls and results, as an application keeps
them: the history is kept per environment (one per test) and dropped with it.
A model fault (:class:`~stellar.errors.ModelError`) is raised: the pipeline records it as the
test's error (``sut_error``), with no traceback.
"""

from __future__ import annotations

import json
import logging
import weakref
from typing import Any

from stellar.agent.environment import Environment
from stellar.agent.session import Message
from stellar.llm.base import ChatModel, Completion, ToolCallRequest

log = logging.getLogger(__name__)

DEFAULT_PROMPT = (
    "You are an assistant that acts for the user with the tools you are given. "
    "Call a tool when you need data or to act; answer the user in plain text."
)
STEP_LIMIT = "[the agent stopped: {steps} steps without an answer to the user]"


class ChatToolAgent:
    """An :class:`~stellar.agent.session.Agent`: ``model`` called with tools, up to
    ``max_steps`` model calls per user turn."""

    def __init__(
        self,
        model: ChatModel,
        system_prompt: str = DEFAULT_PROMPT,
        max_steps: int = 8,
        *,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps {max_steps}: must be at least 1")
        self.model, self.system_prompt, self.max_steps = model, system_prompt, max_steps
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self._histories: dict[int, list[Message]] = {}  # id(environment) -> what the model saw

    async def reply(self, messages: list[Message], environment: Environment) -> str:
        """Model, calls, results, model again, until the model answers in text."""
        conversation = self._conversation(messages, environment)
        tools = environment.specs()
        text = STEP_LIMIT.format(steps=self.max_steps)
        for _ in range(self.max_steps):
            answer = await self.model.complete(
                list(conversation),
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                seed=self.seed,
                tools=tools,
            )
            if not answer.tool_calls:
                text = answer.text
                break
            conversation.append(assistant_message(answer))
            for request in answer.tool_calls:
                call = environment.call(request.name, request.arguments)
                conversation.append(
                    {"role": "tool", "tool_call_id": request.id, "content": call.answer()}
                )
        else:
            log.info("%s: stopped after %d steps", self.model.name, self.max_steps)
        conversation.append({"role": "assistant", "content": text})
        return text

    def _conversation(self, messages: list[Message], environment: Environment) -> list[Message]:
        """The request for this turn: the environment's history so far (calls and results
        included) and the new user turn; the turns as given when they differ from it."""
        turns = [_plain(m) for m in messages]
        key = id(environment)
        history = self._histories.get(key)
        if history is None or _visible(history) != turns[:-1]:
            if history is None:
                weakref.finalize(environment, self._histories.pop, key, None)
            history = [{"role": "system", "content": self.system_prompt}, *turns[:-1]]
            self._histories[key] = history
        history.append(turns[-1] if turns else {"role": "user", "content": ""})
        return history


def assistant_message(answer: Completion) -> Message:
    """The model's answer as the next request repeats it (OpenAI's form). Arguments that are
    not a JSON object are repeated as ``{}``: a server may refuse a conversation holding
    them, and the call's result already says what was wrong with them."""
    calls = [_repeatable(request).to_dict() for request in answer.tool_calls]
    return {"role": "assistant", "content": answer.text or None, "tool_calls": calls}


def _repeatable(request: ToolCallRequest) -> ToolCallRequest:
    try:
        parsed: Any = json.loads(request.arguments)
    except json.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict):
        return request
    return ToolCallRequest(request.id, request.name, "{}")


def _visible(history: list[Message]) -> list[Message]:
    """The turns of a history that the user saw: no system message, calls or results."""
    return [m for m in history if m["role"] in ("user", "assistant") and not m.get("tool_calls")]


def _plain(message: Message) -> Message:
    """A conversation turn as the model gets it: its role and text only."""
    return {"role": message.get("role", "user"), "content": str(message.get("content") or "")}
