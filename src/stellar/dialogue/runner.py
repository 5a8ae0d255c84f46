"""Drive a plan through a session: planned turns in order, unplanned replies answered.

The result is one :class:`~stellar.records.Response` for the whole conversation, so the
pipeline, the archive and every view treat a conversation as one test: its ``text`` is the
transcript, its ``data`` the exchanges (``{"turns": [...]}``), each with the user's words,
the answer and its data, the planned turn it belongs to and whether it was planned; the
planned turns not sent because their precondition failed (``skipped``: the turn, its act
and words, ``after``: how many exchanges came before it, ``why``); and ``backtracks``:
refused exchanges the system was made to forget (``Plan.backtrack``) with ``turns_saved``,
the turns a restart from the beginning would have sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from stellar.dialogue.plan import MAX_UNPLANNED, Act, Plan
from stellar.dialogue.preconditions import unmet
from stellar.dialogue.session import Session
from stellar.records import Response

EXPECTS_ANSWER = (Act.REQUEST, Act.ADD, Act.CORRECT, Act.DROP, Act.RETURN)
"""Acts after which a clarifying question of the system is answered from the goal; a
reaction (to a refusal) follows only a turn that makes the request."""


def asks_to_clarify(reply: Response) -> bool:
    """A reply that offers nothing and asks a question (the offline system-act rule)."""
    return not reply.data and "?" in reply.text


def transcript(exchanges: list[dict[str, Any]], skipped: list[dict[str, Any]] | None = None) -> str:
    """The conversation as lines ``User: ...`` / ``Assistant: ...``; a skipped turn as a
    bracketed line where it would have been sent (it takes no turn's number)."""
    lines: list[str] = []
    for position in range(len(exchanges) + 1):
        for skip in skipped or []:
            if skip["after"] == position:
                lines.append(f'[not sent, {skip["act"]}: {skip["why"]}: "{skip["user"]}"]')
        if position < len(exchanges):
            exchange = exchanges[position]
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
    exchanges so far and ``error`` names the turn (numbered as the transcript shows it).
    Raising from ``send`` is such an error too; the session is closed in every case. A
    planned turn whose precondition (``Turn.requires``) fails is not sent, and is marked.
    """
    exchanges: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    unplanned, backtracks, saved = 0, 0, 0
    error: str | None = None
    began = time.perf_counter()
    try:
        for index, turn in enumerate(plan.turns):
            text, act = turn.text, str(turn.act)
            why = unmet(turn.requires, exchanges)
            if why is not None:
                skipped.append(
                    {"turn": index, "act": act, "user": text, "after": len(exchanges), "why": why}
                )
                continue
            while True:
                reply, error = await _send(session, text, timeout, check)
                exchanges.append(_exchange(index, act, act == str(turn.act), text, reply))
                if error is not None:
                    return _result(exchanges, skipped, f"turn {len(exchanges)}: {error}", began)
                follow = _follow_up(plan, turn.act, reply) if unplanned < MAX_UNPLANNED else None
                if follow is None or (follow[0] == CLARIFY and act == CLARIFY):
                    break  # a clarification is not said twice in a row
                act, text = follow
                if act == REACT and plan.backtrack and await _rewind(session):
                    exchanges[-1]["backtracked"] = True
                    backtracks, saved = backtracks + 1, saved + index
                unplanned += 1
    finally:
        with contextlib.suppress(Exception):  # best effort: the answers are what count
            await session.close()
    result = _result(exchanges, skipped, error, began)
    result.data.update(backtracks=backtracks, turns_saved=saved)
    return result


CLARIFY, REACT = "clarify", "react"  # the acts of unplanned turns


def _follow_up(plan: Plan, act: Act, reply: Response) -> tuple[str, str] | None:
    """The unplanned turn ``reply`` calls for: (its act, its text), or None."""
    if act in EXPECTS_ANSWER and plan.clarification and asks_to_clarify(reply):
        return CLARIFY, plan.clarification
    if act is Act.REQUEST and plan.reacts_to(reply.text):
        return REACT, plan.reaction
    return None


async def _rewind(session: Session) -> bool:
    """Make the session forget its last exchange, where it can (``rewind() -> bool``)."""
    rewind = getattr(session, "rewind", None)
    return bool(rewind is not None and await rewind())


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


def _exchange(index: int, act: str, planned: bool, text: str, reply: Response) -> dict[str, Any]:
    return {
        "turn": index,
        "act": act,
        "planned": planned,
        "user": text,
        "answer": reply.text,
        "data": reply.data,
    }


def _result(
    exchanges: list[dict[str, Any]],
    skipped: list[dict[str, Any]],
    error: str | None,
    began: float,
) -> Response:
    data: dict[str, Any] = {"turns": exchanges}
    if skipped:
        data["skipped"] = skipped
    return Response(
        text=transcript(exchanges, skipped),
        data=data,
        error=error,
        latency=time.perf_counter() - began,
    )


def answers_by_turn(data: Any) -> dict[int, dict[str, Any]]:
    """The last exchange of each planned turn (its answer after any clarification)."""
    return {exchange["turn"]: exchange for exchange in exchanges_of(data)}


def exchanges_of(data: Any) -> list[dict[str, Any]]:
    """Every exchange in the order sent: exchange ``i`` is turn ``i + 1`` of the transcript."""
    turns = data.get("turns", []) if isinstance(data, dict) else []
    return [exchange for exchange in turns if isinstance(exchange, dict)]


def skipped_turns(data: Any) -> list[dict[str, Any]]:
    """The planned turns not sent because their precondition failed."""
    skipped = data.get("skipped", []) if isinstance(data, dict) else []
    return [skip for skip in skipped if isinstance(skip, dict)]


def unplanned_turns(data: Any) -> int:
    """How many turns the conversation needed beyond its plan."""
    turns = data.get("turns", []) if isinstance(data, dict) else []
    return sum(1 for exchange in turns if not exchange["planned"])
