"""Conversation state with the system under test: ``open()`` a session, ``send`` turns, ``close``.

A system under test that can hold a conversation defines ``async def open(self) -> Session``
(or ``open(self, plan)``, to be handed the test's plan).
Each conversation gets its own session (never shared), and its turns are sent in order; several
conversations may run at once. What the system must be given to remember is the session's
business: the built-in assistant keeps the state in the session object, a chat model is sent
the message history, an HTTP system a session id or the history (``suts/http.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

from stellar.errors import StellarError
from stellar.records import Response


@runtime_checkable
class Session(Protocol):
    """One conversation with the system under test."""

    async def send(self, text: str) -> Response:
        """The system's reply to the user's next turn. Raising is a ``sut_error``."""
        ...

    async def close(self) -> None:
        """End the conversation (free the server's state); called once, also after an error."""
        ...


def holds_conversations(sut: Any) -> bool:
    """Whether ``sut`` can open a session."""
    return callable(getattr(sut, "open", None))


def conversation_run(space: Any, sut: Any, generator: str) -> bool:
    """Whether a run of ``space`` tests conversations (it has ``dialogue`` features); a setup
    that cannot hold them (the single-request llm generator, a system without ``open()``)
    is refused in one line."""
    if not any(feature.kind == "dialogue" for feature in space.features):
        return False
    if generator == "llm":
        raise StellarError(
            "the feature space describes conversations, and the llm generator writes single "
            "requests: for a model that plays the user, keep the use case's generator and give "
            "it the model (--set generator.model=MODEL; docs/dialogue.md)"
        )
    if not holds_conversations(sut):
        raise StellarError(
            f"the feature space has dialogue features, but the system under test "
            f"({type(sut).__name__}) holds no conversation: give one that does "
            "(an HTTP system needs sut.conversation; docs/dialogue.md)"
        )
    return True


async def open_session(sut: Any, plan: dict[str, Any] | None = None) -> Session:
    """A new session with ``sut``; a system that holds no conversation is a ``TypeError``.
    A system whose ``open`` takes ``plan`` gets the test's plan (an agent's environment is
    built from it)."""
    if not holds_conversations(sut):
        raise TypeError(
            f"{type(sut).__name__} holds no conversation (it has no open() method); "
            "conversations need a system under test that keeps state"
        )
    if "plan" in inspect.signature(sut.open).parameters:
        return await sut.open(plan=plan)
    return await sut.open()


Message = dict[str, str]  # {"role": "user" | "assistant", "content": ...}


class HistorySession:
    """A conversation whose history the tester keeps and hands over each turn (a chat model,
    a Python function taking ``history``): ``answer(text, history)`` gives the reply."""

    def __init__(self, answer: Callable[[str, list[Message]], Awaitable[Response]]) -> None:
        self.answer = answer
        self.history: list[Message] = []

    async def send(self, text: str) -> Response:
        response = await self.answer(text, [dict(m) for m in self.history])  # a copy each turn
        self.history += [
            {"role": "user", "content": text},
            {"role": "assistant", "content": response.text},
        ]
        return response

    async def rewind(self) -> bool:
        """Forget the last exchange, as if it had never been sent (backtracking)."""
        if not self.history:
            return False
        del self.history[-2:]
        return True

    async def close(self) -> None:
        """Nothing to free: the history lives here."""
