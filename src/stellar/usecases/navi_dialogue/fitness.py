"""Fitness of a navi conversation: the worst turn, and the worst reference or end.

* ``turns``: the lowest of the content, retention and correction checks
  (:mod:`~stellar.usecases.navi_dialogue.checks`): what each turn proposed against the goal
  as it stood then;
* ``conversation``: the lowest of the reference, unasked and goal checks.

Both are 1 when nothing could be checked. ``details`` holds every check, the failing turn
(``failing_turn``, numbered as the transcript numbers it: every exchange, clarifying ones
included; ``failing_planned_turn``, as the plan does), the unplanned turns the conversation
needed (``efficiency``), the planned turns not sent because their precondition failed
(``skipped_turns``), the signature of its first failing check (``mode``: the check, the act
of its turn and the dialogue feature behind it), which the failure modes group by: later
checks often fail only because of it; and a ``reason`` that lists every failing check in
the transcript's order, the first one first, so that a later, different fault stays in
sight. A conversation none of whose turns could be checked (no venue satisfies any goal it
stated) is excluded.

Fidelity: a failing check at a planned turn rests on what the user said up to it; when a
model wrote one of those turns and the turn check kept it with a doubt (``Turn.doubt``), the
check is set aside (``set_aside``, with why) and, when nothing else fails, the conversation
is excluded with that reason: it is not the system's failure until the user said the plan.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from stellar.dialogue.plan import Plan
from stellar.dialogue.runner import skipped_turns, unplanned_turns
from stellar.features import Candidate
from stellar.modes import MODE_KEY
from stellar.records import EXCLUDED_REASON, Evaluation, Response, TestInput
from stellar.usecases.navi.request import VenueRequest
from stellar.usecases.navi.sources import open_pois
from stellar.usecases.navi.store import POIDatabase
from stellar.usecases.navi_dialogue.checks import (
    CONVERSATION_CHECKS,
    PASS,
    STATE_CHECKS,
    Check,
    check_conversation,
)

BEHIND = {  # the dialogue feature behind the turn where a check failed, by the turn's act
    "request": "reveal",
    "add": "reveal",
    "correct": "correction",
    "drop": "drop",
    "detour": "detour",
    "return": "detour",
    "choose": "reference",
    "reject": "confirm",
    "confirm": "confirm",
    "end": "confirm",
}


def signature(check: Check, values: dict[str, Any]) -> str:
    """What went wrong, at which act, and the dialogue feature that made that act: "reference
    at choose (reference: ordinal)", "retention at return (detour: other_request)"."""
    feature = BEHIND.get(check.act, "reveal")
    return f"{check.check} at {check.act} ({feature}: {values.get(feature, 'none')})"


def _skipped(skip: dict[str, Any]) -> dict[str, Any]:
    """A turn not sent: its planned number, act and words, the transcript turn it would have
    followed (``after_turn``) and why it was not sent."""
    return {
        "planned_turn": skip["turn"] + 1,
        "act": skip["act"],
        "after_turn": skip["after"],
        "user": skip["user"],
        "why": skip["why"],
    }


def reason(check: Check) -> str:
    """One failing check as the reason says it: "turn 3 (return): retention: ..."."""
    return f"turn {check.turn + 1} ({check.act}): {check.check}: {check.note}"


class NaviDialogueFitness:
    """Scores a navi conversation (see the module docstring)."""

    objectives = ("turns", "conversation")

    def __init__(self, pois: str = "generated", database: POIDatabase | None = None) -> None:
        self.db = database or open_pois(pois)

    def satisfiable(self, request: VenueRequest, excluding: Collection[str] = ()) -> bool:
        """Whether a venue satisfies ``request``, the venues named in ``excluding`` left out."""
        if not excluding:
            return self.db.satisfiable(request)
        found = self.db.query(request, limit=len(set(excluding)) + 1)
        return any(poi.name not in excluding for poi in found)

    async def evaluate(
        self, candidate: Candidate, test_input: TestInput, response: Response
    ) -> Evaluation:
        if test_input.plan is None:
            raise ValueError("navi-dialogue scores conversations: the input has no plan")
        plan = Plan.from_dict(test_input.plan)
        checks = check_conversation(plan, response.data, self.satisfiable)
        checks, set_aside = faithful(plan, checks)
        scores = {
            "turns": min((c.score for c in checks if c.check in STATE_CHECKS), default=1.0),
            "conversation": min(
                (c.score for c in checks if c.check in CONVERSATION_CHECKS), default=1.0
            ),
        }
        planned = len(plan.turns)
        details: dict[str, Any] = {
            "checks": [c.to_dict() for c in checks],
            "efficiency": round(planned / (planned + unplanned_turns(response.data)), 4),
        }
        skipped = skipped_turns(response.data)
        if skipped:
            details["skipped_turns"] = [_skipped(skip) for skip in skipped]
        failed = sorted((c for c in checks if c.score < PASS), key=lambda c: (c.turn, c.score))
        if failed:
            first = failed[0]  # the first thing gone wrong names the mode
            details["failing_turn"] = first.turn + 1
            if first.planned is not None:
                details["failing_planned_turn"] = first.planned + 1
            details[MODE_KEY] = signature(first, dict(candidate.values))
            details["reason"] = "; ".join(reason(check) for check in failed)
        if set_aside:
            details["set_aside"] = set_aside
        excluded = not checks or (bool(set_aside) and not failed)
        if not checks and not set_aside:  # every turn asked for what no venue offers
            details[EXCLUDED_REASON] = "no venue satisfies any goal the conversation stated"
        elif excluded:  # it would fail only on checks that rest on a doubtful turn
            details[EXCLUDED_REASON] = set_aside[0]["why"]
        return Evaluation(scores=scores, excluded=excluded, details=details)


def faithful(plan: Plan, checks: list[Check]) -> tuple[list[Check], list[dict[str, Any]]]:
    """The checks a verdict may rest on, and the failing ones set aside because a user turn
    up to theirs was kept with a doubt (the goal they check is what those turns said; a
    passing check is kept: a doubt cannot make it fail)."""
    kept, set_aside = [], []
    for check in checks:
        why = plan.doubtful(check.planned) if check.planned is not None else ""
        if why and check.score < PASS:
            set_aside.append({**check.to_dict(), "why": why})
        else:
            kept.append(check)
    return kept, set_aside
