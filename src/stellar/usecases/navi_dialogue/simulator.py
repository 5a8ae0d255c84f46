"""A model as the user: each planned turn rewritten in the driver's words, then checked.

The plan stays the one the candidate compiles to (:func:`~.plan.compile_plan`); a chat model
rewrites each turn's words from the user's earlier turns, the act and what the turn must say
(never what later turns say). Each written turn goes through the turn check
(:mod:`stellar.dialogue.turn_check` and the act rules of :mod:`~.act_check`), is asked again
once with the reason when rejected, and falls back to the template's words when rejected
twice (``Turn.source`` and ``Turn.rejected`` say which and why). Answers are read from the
model cache when repeated, so a rerun writes the same turns.
"""

from __future__ import annotations

import functools
from typing import Any

from stellar.dialogue.plan import Act, Plan, Turn
from stellar.dialogue.turn_check import MeaningCheck
from stellar.generators.turns import TurnChecker, rewrite_turns
from stellar.llm.base import ChatModel
from stellar.usecases.navi_dialogue.act_check import MAX_WORDS, NaviActCheck, meaning_check

ACTS = {
    Act.REQUEST: "ask for {what}",
    Act.ADD: "add that you also want {what}",
    Act.CORRECT: "correct what you said before: you meant {what}",
    Act.DROP: "say that the {attribute} no longer matters",
    Act.DETOUR: "say something unrelated to the search (small talk), or ask for {what}",
    Act.RETURN: "go back to looking for the {category}",
    Act.CHOOSE: "pick the {ordinal} of the places the assistant just listed",
    Act.CONFIRM: "accept the place the assistant proposed",
    Act.REJECT: "turn down the place the assistant proposed and ask for another one",
}
PROMPT = (
    "What you said so far:\n{earlier}\n\nIn your next message, {instruction}. "
    "Speak {style}. Do not mention anything else."
)
SYSTEM = (
    "You play a driver talking to the navigation assistant in the car. Write only the "
    "driver's next message: one or two short spoken sentences, no quotes, no explanations."
)


INSTRUCTIONS = " ".join([SYSTEM, PROMPT, *ACTS.values()])  # what a written turn must not echo


def describe(slots: dict[str, Any]) -> str:
    """What a turn's slots ask for, in words: "a cheap italian restaurant with parking"."""
    parts = [f"{name} {value}" for name, value in slots.items() if name not in ("was", "kind")]
    return ", ".join(parts) or "nothing in particular"


async def rewrite(plan: Plan, model: ChatModel, style: str) -> Plan:
    """``plan`` with every turn the model writes acceptably in the model's words."""

    def ask(turn: Turn, earlier: str) -> str:
        instruction = ACTS.get(turn.act, "continue the conversation").format(
            what=describe(turn.slots),
            attribute=turn.slots.get("attribute", ""),
            category=turn.slots.get("category", "place"),
            ordinal=turn.slots.get("ordinal", "first"),
        )
        return PROMPT.format(earlier=earlier, instruction=instruction, style=style)

    checker = TurnChecker(NaviActCheck(plan), INSTRUCTIONS, MAX_WORDS, _meaning())
    return await rewrite_turns(plan, model, SYSTEM, ask, checker)


@functools.cache
def _meaning() -> MeaningCheck:
    from stellar.usecases.navi_dialogue.turns import PHRASES

    return meaning_check(PHRASES)
