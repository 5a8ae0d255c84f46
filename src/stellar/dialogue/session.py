"""Conversation state with the system under test: ``open()`` a session, ``send`` turns, ``close``.

A system under test that can hold a conversation defines ``async def open(self) -> Session``.
Each conversation gets its own session (never shared), and its turns are sent in order; several
conversations may run at once. What the system must be given to remember is the session's
business: the built-in assistant keeps the state in the session object, a chat model is sent
the message history, an HTTP system a session id or the history (``suts/http.py``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

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


async def open_session(sut: Any) -> Session:
    """A new session with ``sut``; a system that holds no conversation is a ``TypeError``."""
    if not holds_conversations(sut):
        raise TypeError(
            f"{type(sut).__name__} holds no conversation (it has no open() method); "
            "conversations need a system under test that keeps state"
        )
    return await sut.open()
