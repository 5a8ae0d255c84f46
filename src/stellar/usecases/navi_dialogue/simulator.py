"""A model as the user: each planned turn rewritten in the driver's words, then checked.

The plan stays the one the candidate compiles to (:func:`~.plan.compile_plan`); a chat model
rewrites each turn's words from the user's earlier turns, the act and what the turn must say
(never what later turns say). A written turn is kept only when what it must carry is found in
it (:func:`carries`: the attribute values by their usual words, the ordinal, a category word
for a request); otherwise the template's turn stays (``Turn.source`` says which). Answers are
read from the model cache when repeated, so a rerun writes the same turns.
"""

from __future__ import annotations

import re
from typing import Any

from stellar.dialogue.plan import Act, Plan, Turn
from stellar.generators.turns import rewrite_turns
from stellar.llm.base import ChatModel
from stellar.usecases.navi.vocabulary import CUISINE_NAMES

WORDS: dict[str, dict[Any, tuple[str, ...]]] = {  # words that say an attribute's value
    "price": {
        "low": ("cheap", "inexpensive", "budget", "affordable", "low"),
        "medium": ("mid", "moderate", "medium", "reasonabl", "average"),
        "high": ("expensive", "upscale", "fancy", "high-end", "luxur", "splurge", "pricey"),
    },
    "payment": {
        "cash": ("cash",),
        "credit card": ("credit", "card"),
        "contactless": ("contactless", "tap"),
        "mobile payment": ("phone", "mobile", "apple pay", "google pay"),
    },
    "parking": {"available": ("park",)},
}
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
SYSTEM = (
    "You play a driver talking to the navigation assistant in the car. Write only the "
    "driver's next message: one or two short spoken sentences, no quotes, no explanations."
)


def describe(slots: dict[str, Any]) -> str:
    """What a turn's slots ask for, in words: "a cheap italian restaurant with parking"."""
    parts = [f"{name} {value}" for name, value in slots.items() if name not in ("was", "kind")]
    return ", ".join(parts) or "nothing in particular"


def carries(turn: Turn, text: str) -> bool:
    """Whether ``text`` says what ``turn`` must say (a generator-side check, not the
    assistant's understanding)."""
    lower = text.lower()
    if not lower.strip():
        return False
    for name, value in turn.slots.items():
        if name == "cuisine" and str(CUISINE_NAMES.get(value, value)).lower() not in lower:
            return False
        if name == "rating" and not re.search(rf"\b{float(value):g}\b|\b{value}\b", lower):
            return False
        if name in WORDS and not any(w in lower for w in WORDS[name].get(value, ())):
            return False
        if name == "ordinal" and value not in lower:
            return False
        if name == "attribute" and value.split()[0] not in lower:
            return False
    return True


async def rewrite(plan: Plan, model: ChatModel, style: str) -> Plan:
    """``plan`` with every turn the model writes acceptably in the model's words."""

    def ask(turn: Turn, earlier: str) -> str:
        instruction = ACTS.get(turn.act, "continue the conversation").format(
            what=describe(turn.slots),
            attribute=turn.slots.get("attribute", ""),
            category=turn.slots.get("category", "place"),
            ordinal=turn.slots.get("ordinal", "first"),
        )
        return (
            f"What you said so far:\n{earlier}\n\nIn your next message, {instruction}. "
            f"Speak {style}. Do not mention anything else."
        )

    return await rewrite_turns(plan, model, SYSTEM, ask, carries)
