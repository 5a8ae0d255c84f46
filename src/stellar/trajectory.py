"""An agent's trajectory as text: its tool calls and the database's changes (report, JUnit).

An agent's turn answers carry ``data = {"calls": [...], "diff": {...}}``
(:class:`stellar.agent.session.AgentSession`): each call with its step, tool, arguments,
result or error and perturbation; the diff of the database since the test began.
"""

from __future__ import annotations

import json
from typing import Any

FAILING_MARK = "▶"
VALUE_LIMIT = 120  # characters of a tool's arguments or result shown


def trajectory_lines(data: Any, failing_call: Any = None) -> list[str]:
    """Every call of a conversation's exchanges, then the final database changes ([] for a
    test that is not an agent's)."""
    exchanges = data.get("turns", []) if isinstance(data, dict) else []
    lines = []
    for number, exchange in enumerate(e for e in exchanges if isinstance(e, dict)):
        turn = exchange.get("data")
        for call in turn.get("calls", []) if isinstance(turn, dict) else []:
            lines.append(f"turn {number + 1}: " + call_line(call, failing_call).strip())
    final = exchanges[-1].get("data") if exchanges and isinstance(exchanges[-1], dict) else None
    if isinstance(final, dict) and "diff" in final:
        lines += ["database changes:", *(diff_lines(final["diff"]) or ["  none"])]
    return lines


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= VALUE_LIMIT else text[: VALUE_LIMIT - 1] + "…"


def call_line(call: dict[str, Any], failing: Any) -> str:
    """One tool call: ``tool: name(args) -> result``, its perturbation, ▶ on the failing step."""
    mark = FAILING_MARK if failing is not None and call.get("step") == failing else " "
    arguments = call.get("arguments")
    shown = (
        ", ".join(f"{k}={_short(v)}" for k, v in arguments.items())
        if isinstance(arguments, dict)
        else _short(arguments)
    )
    outcome = f"error: {call['error']}" if call.get("error") else _short(call.get("result"))
    perturbed = f" [{call['perturbed']}]" if call.get("perturbed") else ""
    return f"   {mark} tool {call.get('step')}: {call.get('name')}({shown}) -> {outcome}{perturbed}"


def diff_lines(diff: Any) -> list[str]:
    """The database's changes, one row per line: added, removed, changed fields."""
    lines = []
    for table, change in (diff or {}).items():
        for kind in ("added", "removed"):
            lines += [f"  {table} {kind}: {_short(row)}" for row in change.get(kind, [])]
        for pair in change.get("changed", []):
            before, after = pair.get("before", {}), pair.get("after", {})
            fields = {
                k: f"{before.get(k)!r} -> {after.get(k)!r}"
                for k in after
                if before.get(k) != after.get(k)
            }
            lines.append(f"  {table} changed {after.get('id')}: {_short(fields)}")
    return lines
