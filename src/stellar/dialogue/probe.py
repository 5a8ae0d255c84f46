"""The memory probe: before a conversation search, check that the system remembers a turn.

A system under test set up so that it forgets (a session id sent where the server does not
read it, a history the server never sees) would make every conversation a row of single
turns, and the search would test nothing. :func:`probe_memory` tells a fact, asks for it
back, and stops the run with one line naming the likely mistake when the reply lacks it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from stellar.dialogue.session import Session, open_session
from stellar.errors import MemoryProbeFailed, StellarError
from stellar.records import Response


@dataclass
class MemoryProbe:
    """Turns sent in one conversation, and a word the last reply must contain
    (case-insensitive, in its text or its JSON-serialised data)."""

    turns: list[str] = field(
        default_factory=lambda: [
            "Please remember that my favourite colour is teal.",
            "What is my favourite colour?",
        ]
    )
    expect: str = "teal"

    def __post_init__(self) -> None:
        if len(self.turns) < 2 or not self.expect.strip():
            raise ValueError("a memory probe needs two turns or more and a word to expect")
        if self.expect.lower() in self.turns[-1].lower():
            raise ValueError("the last turn gives the expected word away: it must be recalled")


LIKELY_MISTAKE = {
    "session": "the session id is likely not sent where the server reads it, or read from "
    "the wrong place (check sut.conversation.session_id, session_header, session_cookie and "
    "{{session_id}} in sut.body)",
    "history": "the history is likely not placed where the server reads it (check "
    "{{messages}} in sut.body)",
    "squash": "the endpoint does not see the earlier turns flattened into {{input}} (try "
    "sut.conversation state: session or history)",
}
NO_STATE = (
    "the system does not see earlier turns (for an HTTP system, set sut.conversation to "
    "how the server keeps a conversation: state session or history)"
)


def recalls(reply: Response, word: str) -> bool:
    """Whether ``word`` is in the reply's text or its data, ignoring case."""
    data = "" if reply.data is None else json.dumps(reply.data, ensure_ascii=False, default=str)
    return word.lower() in f"{reply.text}\n{data}".lower()


def _shown(reply: Response) -> str:
    text = " ".join(reply.text.split())
    return repr(text[:80] + ("..." if len(text) > 80 else ""))


def _line(text: str, limit: int = 200) -> str:
    return " ".join(text.split())[:limit]


async def probe_memory(
    sut: Any, probe: MemoryProbe | None = None, state: str | None = None
) -> None:
    """Open a session with ``sut``, send the probe's turns and close it; raise
    :class:`MemoryProbeFailed` (one line) when a turn or the closing fails, or the last reply
    lacks the expected word. ``state`` is the HTTP conversation state, by default the
    system's ``conversation_state`` (None for other systems); it picks the likely mistake
    named. A system that holds no conversation is a StellarError."""
    probe = probe or MemoryProbe()
    state = state if state is not None else getattr(sut, "conversation_state", None)
    try:
        session = await open_session(sut)
    except TypeError as exc:
        raise StellarError(str(exc)) from None
    try:
        reply = await _converse(session, probe)
    finally:
        closing = await _close(session)
    if not recalls(reply, probe.expect):
        mistake = LIKELY_MISTAKE.get(state or "", NO_STATE)
        raise MemoryProbeFailed(
            f"memory probe: the system under test forgot an earlier turn (asked to recall "
            f"{probe.expect!r}, it answered {_shown(reply)}): {mistake}"
        )
    if closing is not None:
        raise MemoryProbeFailed(f"memory probe: closing the conversation failed: {closing}")


async def _converse(session: Session, probe: MemoryProbe) -> Response:
    """The last reply; a failed turn is a MemoryProbeFailed."""
    reply = Response(text="")
    for number, turn in enumerate(probe.turns, 1):
        try:
            reply = await session.send(turn)
        except Exception as exc:  # a fault of the system under test
            reply = Response(text="", error=f"{type(exc).__name__}: {exc}".rstrip(": "))
        if reply.error is not None:
            raise MemoryProbeFailed(f"memory probe: turn {number} failed: {_line(reply.error)}")
    return reply


async def _close(session: Session) -> str | None:
    """Close the session; what went wrong, in a line (None: nothing)."""
    try:
        await session.close()
    except Exception as exc:  # a failed reset
        return _line(f"{type(exc).__name__}: {exc}")
    return None
