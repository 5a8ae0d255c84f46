"""A model rewrites a conversation plan's turns, each kept only when a check accepts it."""

from __future__ import annotations

from collections.abc import Callable

from stellar.dialogue.plan import Plan, Turn
from stellar.llm.base import ChatModel
from stellar.text.cleaning import clean_generation


async def rewrite_turns(
    plan: Plan,
    model: ChatModel,
    system: str,
    ask: Callable[[Turn, str], str],
    keeps: Callable[[Turn, str], bool],
    max_tokens: int = 60,
) -> Plan:
    """Each turn in order: ``ask(turn, earlier)`` is the prompt (``earlier``: the user's turns
    so far, one per line); the model's answer replaces the turn's words when ``keeps``
    accepts it (``Turn.source`` becomes "model"), else the template's words stay. Temperature
    0 and the model cache make a rerun write the same turns."""
    said: list[str] = []
    for turn in plan.turns:
        earlier = "\n".join(f"- {text}" for text in said) or "(nothing yet)"
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": ask(turn, earlier)},
        ]
        completion = await model.complete(messages, temperature=0.0, max_tokens=max_tokens)
        written = clean_generation(completion.text)
        if keeps(turn, written):
            turn.text, turn.source = written, "model"
        said.append(turn.text)
    return plan
