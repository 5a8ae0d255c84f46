"""Drive a plan through a session: planned turns in order, clarifying questions answered.

The result is one :class:`~stellar.records.Response` for the whole conversation, so the
pipeline, the archive and every view treat a conversation as one test: its ``text`` is the
transcript, its ``data`` the exchanges (``{"turns": [...]}``), each with the user's words,
the answer and its data, the planned turn it belongs to and whether it was planned.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from stellar.dialogue.plan import MAX_UNPLANNED, Act, Plan
from stellar.dialogue.session import Session
from stellar.records import Response

EXPECTS_ANSWER = (Act.REQUEST, Act.ADD, Act.CORRECT, Act.DROP, Act.RETURN)
"""Acts after which a clarifying question of the system is answered from the goal."""


def asks_to_clarify(reply: Response) -> bool:
    """A reply that offers nothing and asks a question (the offline system-act rule)."""
    return not reply.data and "?" in reply.text


def transcript(exchanges: list[dict[str, Any]]) -> str:
    """The conversation as lines ``User: ...`` / ``Assistant: ...``."""
    lines: list[str] = []
    for exchange in exchanges:
        lines += [f"User: {exchange['user']}", f"Assistant: {exchange['answer']}"]
    return "\n".join(lines)


async def run_conversation(
    session: Session,
    plan: Plan,
    *,
    timeout: float | None = None,
    check: Callable[[Response], str | None] | None = None,
) -> Response:
    """Send the plan's turns through ``session`` and close it.

    A turn whose reply is an error, fails ``check`` (the use case's response schema) or
    times out (``timeout`` seconds per turn) ends the conversation: the result carries the
    exchanges so far and ``error`` names the turn. Raising from ``send`` is such an error
    too; the session is closed in every case.
    """
    exchanges: list[dict[str, Any]] = []
    unplanned = 0
    error: str | None = None
    began = time.perf_counter()
    try:
        for index, turn in enumerate(plan.turns):
            text, planned = turn.text, True
            while True:
                reply, error = await _send(session, text, timeout, check)
                exchanges.append(_exchange(index, turn.act, planned, text, reply))
                if error is not None:
                    return _result(exchanges, f"turn {index + 1}: {error}", began)
                if not (
                    turn.act in EXPECTS_ANSWER
                    and plan.clarification
                    and unplanned < MAX_UNPLANNED
                    and asks_to_clarify(reply)
                ):
                    break
                unplanned += 1
                text, planned = plan.clarification, False
    finally:
        with contextlib.suppress(Exception):  # best effort: the answers are what count
            await session.close()
    return _result(exchanges, error, began)


async def _send(
    session: Session,
    text: str,
    timeout: float | None,
    check: Callable[[Response], str | None] | None,
) -> tuple[Response, str | None]:
    try:
        async with asyncio.timeout(timeout):
            reply = await session.send(text)
    except TimeoutError:
        return Response(text=""), f"timed out after {timeout}s"
    except Exception as exc:  # a fault of the system under test is data
        return Response(text=""), f"{type(exc).__name__}: {exc}".rstrip(": ")
    problem = reply.error or (check(reply) if check is not None else None)
    return reply, problem or None


def _exchange(index: int, act: Act, planned: bool, text: str, reply: Response) -> dict[str, Any]:
    return {
        "turn": index,
        "act": str(act) if planned else "clarify",
        "planned": planned,
        "user": text,
        "answer": reply.text,
        "data": reply.data,
    }


def _result(exchanges: list[dict[str, Any]], error: str | None, began: float) -> Response:
    return Response(
        text=transcript(exchanges),
        data={"turns": exchanges},
        error=error,
        latency=time.perf_counter() - began,
    )


def answers_by_turn(data: Any) -> dict[int, dict[str, Any]]:
    """The last exchange of each planned turn (its answer after any clarification)."""
    turns = data.get("turns", []) if isinstance(data, dict) else []
    return {exchange["turn"]: exchange for exchange in turns}


def unplanned_turns(data: Any) -> int:
    """How many turns the conversation needed beyond its plan."""
    turns = data.get("turns", []) if isinstance(data, dict) else []
    return sum(1 for exchange in turns if not exchange["planned"])
