"""A conversation as a person reads it: numbered turns with their acts, the failing one marked;
for an agent, its tool calls under each turn and the database's changes (a trajectory)."""

from __future__ import annotations

from typing import Any

from stellar.records import PLAN_KEY, TestRecord
from stellar.trajectory import FAILING_MARK, call_line, diff_lines


def conversation_view(record: TestRecord) -> str | None:
    """The transcript of a conversation test (None for a single-turn test): each exchange as
    ``N. act | user: ...`` and ``assistant: ...``, numbered as they happened (clarifying turns
    included, as the checks' reasons number them), unplanned and backtracked turns marked, and
    the failing turn (``details["failing_turn"]``: the post-search judge's where there is one)
    marked with ▶. A judge that numbers planned turns instead (no ``failing_planned_turn``
    beside it) has its turn's last exchange marked. A user turn a model wrote says so; an
    agent's tool calls follow its answer (``failing_call``: the step marked), and its last
    answer's database diff ends the view."""
    data = record.response_data
    if PLAN_KEY not in record.details or not isinstance(data, dict):
        return None
    judged = record.verdict.details if record.verdict is not None else record.details
    failing = judged.get("failing_turn", record.details.get("failing_turn"))
    by_position = "failing_planned_turn" in judged
    exchanges = [e for e in data.get("turns", []) if isinstance(e, dict)]
    last = {e.get("turn"): i for i, e in enumerate(exchanges)}  # a planned turn's last exchange
    plan_turns = record.details[PLAN_KEY].get("turns") or []
    lines = []
    for i, exchange in enumerate(exchanges):
        planned = int(exchange.get("turn", 0)) + 1
        marked = (
            failing == i + 1 if by_position else failing == planned and last.get(planned - 1) == i
        )
        act = exchange.get("act")
        if not exchange.get("planned"):
            act = f"{act} (unplanned)"
        if exchange.get("backtracked"):
            act = f"{act}, then forgotten (backtracked)"
        who = _writer(plan_turns, planned - 1) if exchange.get("planned") else ""
        lines.append(
            f"{FAILING_MARK if marked else ' '} {i + 1}. {act} | user{who}: {exchange.get('user')}"
        )
        lines.append(f"     assistant: {exchange.get('answer')}")
        turn_data = exchange.get("data")
        for call in turn_data.get("calls", []) if isinstance(turn_data, dict) else []:
            lines.append(call_line(call, judged.get("failing_call")))
    final = exchanges[-1].get("data") if exchanges else None
    if isinstance(final, dict) and "diff" in final:
        lines += ["database changes:", *(diff_lines(final["diff"]) or ["  none"])]
    return "\n".join(lines)


def _writer(turns: list[Any], index: int) -> str:
    """`` (model)`` where a model wrote the turn, `` (template; model rejected: why)``."""
    turn = turns[index] if 0 <= index < len(turns) and isinstance(turns[index], dict) else {}
    if turn.get("rejected"):
        return f" (template; the model's rejected: {turn['rejected']})"
    source = turn.get("source", "template")
    return "" if source == "template" else f" ({source})"
