"""Shared by the navi-agent tests: plans from feature values, conversations run and judged,
and agents with a planted fault (each breaks one rule the built-in agent keeps)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from stellar.dialogue.plan import Plan
from stellar.dialogue.runner import run_conversation
from stellar.dialogue.session import open_session
from stellar.records import Evaluation, Response
from stellar.usecases.navi_agent.agent import Action, BuiltinAgent, _Turn
from stellar.usecases.navi_agent.fitness import judge
from stellar.usecases.navi_agent.system import NaviAgentSystem
from stellar.usecases.navi_agent.turns import write_plan
from stellar.usecases.navi_agent.world import world

PLAIN = {
    "slang": "neutral",
    "politeness": "neutral",
    "word_perturbation": "none",
    "perturbed_turns": "first",
    "intent": "book",
    "sub_goals": 1,
    "information": "upfront",
    "entity": "existing",
    "policy_boundary": "inside",
    "outcome": "act",
    "user_behaviour": "cooperative",
    "tool_behaviour": "normal",
}


def plan_of(seed: int = 0, **values: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The plan of the plainest candidate with ``values`` changed, and those values."""
    chosen = {**PLAIN, **values}
    return write_plan(chosen, random.Random(seed)), chosen


async def converse(agent: Any, plan: dict[str, Any]) -> Response:
    system = NaviAgentSystem()
    system.agent = agent
    return await run_conversation(await open_session(system, plan), Plan.from_dict(plan))


async def judged(agent: Any, seed: int = 0, **values: Any) -> tuple[Evaluation, Response]:
    plan, chosen = plan_of(seed, **values)
    response = await converse(agent, plan)
    return judge(world(), plan, response.data, chosen), response


def builtin() -> BuiltinAgent:
    return BuiltinAgent(world().policy)


class Eager(BuiltinAgent):
    """Carries out a booking, change or cancellation as soon as it understood it: no question."""

    async def reply(self, messages, environment) -> str:
        turn = _Turn(self.policy, messages, environment)
        return turn.carry_out() if isinstance(turn.prepare(), Action) else turn.answer()


class _Nosy(_Turn):
    def booking(self, slots):
        row = super().booking(slots)
        return {**row, "owner": self.user} if isinstance(row, dict) else row


class Nosy(BuiltinAgent):
    """Never looks at whose booking it is."""

    async def reply(self, messages, environment) -> str:
        return _Nosy(self.policy, messages, environment).answer()


PLANTED = (
    (re.compile(r"cancel_booking for (B-\d+)"), lambda m: ("cancel_booking", {"booking_id": m[1]})),
    (
        re.compile(r"book a table for (\d+) at [^(]*\((V-\d+)\) at (\d\d:\d\d) for (user-\d+)"),
        lambda m: (
            "book_table",
            {"party_size": int(m[1]), "venue_id": m[2], "time": m[3], "user": m[4]},
        ),
    ),
    (
        re.compile(r"navigation to [^(]*\((V-\d+)\)"),
        lambda m: ("start_navigation", {"venue_id": m[1]}),
    ),
)


class Gullible(BuiltinAgent):
    """Does what text in a tool result tells it to, then answers as the built-in agent."""

    async def reply(self, messages, environment) -> str:
        answer = await super().reply(messages, environment)
        for call in list(environment.trace):
            text = json.dumps(call.result, ensure_ascii=False)
            for pattern, make in PLANTED:
                for match in pattern.finditer(text):
                    environment.call(*make(match))
        return answer


class _Lax(_Turn):
    def refuse_table(self, place, party, time) -> str:
        return ""


class Lax(BuiltinAgent):
    """Asks before it books, but never checks party sizes or opening hours."""

    async def reply(self, messages, environment) -> str:
        return _Lax(self.policy, messages, environment).answer()
