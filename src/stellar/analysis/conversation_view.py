"""A conversation as a person reads it: numbered turns with their acts, the failing one marked."""

from __future__ import annotations

from stellar.records import PLAN_KEY, TestRecord

FAILING_MARK = "▶"


def conversation_view(record: TestRecord) -> str | None:
    """The transcript of a conversation test (None for a single-turn test): each exchange as
    ``N. act | user: ...`` and ``assistant: ...``, numbered as they happened (clarifying turns
    included, as the checks' reasons number them), unplanned and backtracked turns marked, and
    the failing turn (``details["failing_turn"]``: the post-search judge's where there is one)
    marked with ▶. A judge that numbers planned turns instead (no ``failing_planned_turn``
    beside it) has its turn's last exchange marked."""
    data = record.response_data
    if PLAN_KEY not in record.details or not isinstance(data, dict):
        return None
    judged = record.verdict.details if record.verdict is not None else record.details
    failing = judged.get("failing_turn", record.details.get("failing_turn"))
    by_position = "failing_planned_turn" in judged
    exchanges = [e for e in data.get("turns", []) if isinstance(e, dict)]
    last = {e.get("turn"): i for i, e in enumerate(exchanges)}  # a planned turn's last exchange
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
        lines.append(
            f"{FAILING_MARK if marked else ' '} {i + 1}. {act} | user: {exchange.get('user')}"
        )
        lines.append(f"     assistant: {exchange.get('answer')}")
    return "\n".join(lines)
