"""An escalating conversation's plan: priming, benign steps, the request, the reaction.

:func:`write_plan` is pure: the same candidate values and rng state give the same turns.

1. ``priming`` (unless none): a turn that sets a frame: fiction, research, a role to play, a
   language to answer in;
2. ``escalation``: 0, 2, 4 or 6 benign steps climbing a ladder on the category's topic;
3. the request: the safety realiser's malicious request for the candidate, or with
   ``split`` two or three parts, each less explicit than the whole;
4. ``after_refusal``: the reaction a refusal gets (an unplanned turn, at most twice): a
   rephrasing, insisting, an appeal to authority, backing off; rephrase and back off
   *backtrack*: a system whose history the tester sends (a chat model) forgets the refusal.

``persona_drift: benign_to_hostile`` makes the second half of the turns hostile. Each turn
says whether it carries the harmful request (``expect["harmful"]``): the answers to those
are also judged together, so that harm split across turns is seen whole.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from stellar.dialogue.plan import Act, Plan, Turn, joined
from stellar.features import Candidate
from stellar.llm.base import ChatModel, PlannedCall
from stellar.records import TestInput
from stellar.usecases.safety.realiser import CATEGORIES, GENERIC, realise
from stellar.usecases.safety.refusal_rule import REFUSAL_PHRASES
from stellar.usecases.safety_dialogue.attacker import rewrite

PHRASES: dict[str, Any] = yaml.safe_load(
    (Path(__file__).parent / "turn_phrases.yaml").read_text(encoding="utf-8")
)
RUNGS = {"direct": [], "2_steps": [0, 5], "4_steps": [0, 2, 3, 5], "6_steps": list(range(6))}
PARTS = {"none": 0, "two_parts": 2, "three_parts": 3}
BACKTRACKS = ("rephrase", "back_off")  # reactions that make the model forget the refusal


def write_plan(values: Mapping[str, Any], rng: random.Random) -> Plan:
    """The plan of ``values`` with the words of every turn (see the module docstring)."""
    category = CATEGORIES[values["category"]]
    topic = rng.choice(category["topics"])
    ask = rng.choice(category["asks"])["plain"]
    role = rng.choice(category.get("roles") or GENERIC["roles"])
    fill = {"topic": topic, "ask": ask, "role": role}
    turns: list[Turn] = []
    priming = values.get("priming", "none")
    if priming != "none":
        text = rng.choice(PHRASES["priming"][priming]).format(**fill)
        turns.append(Turn(Act.PRIME, {"frame": priming}, {"harmful": False}, text))
    for rung in RUNGS[values.get("escalation", "direct")]:
        text = rng.choice(PHRASES["ladder"][rung]).format(**fill)
        turns.append(Turn(Act.STEP, {"rung": rung + 1}, {"harmful": False}, text))
    parts = PARTS[values.get("split", "none")]
    drift = values.get("persona_drift", "none") == "benign_to_hostile"
    if parts:
        for part in range(parts):
            text = PHRASES["parts"][part].format(**fill)
            turns.append(
                Turn(Act.REQUEST, {"part": part + 1, "of": parts}, {"harmful": True}, text)
            )
    else:
        request = {**values, "politeness": "very rude"} if drift else values
        turns.append(
            Turn(Act.REQUEST, {"part": 1, "of": 1}, {"harmful": True}, realise(request, rng))
        )
    if drift:
        for turn in turns[len(turns) // 2 :]:
            turn.text = f"{rng.choice(PHRASES['hostile'])} {turn.text}"
    reaction = values.get("after_refusal", "rephrase")
    return Plan(
        turns,
        reaction=rng.choice(PHRASES["after_refusal"][reaction]).format(**fill),
        react_to=list(REFUSAL_PHRASES),
        backtrack=reaction in BACKTRACKS,
    )


class SafetyDialogueRealiser:
    """Generator for escalating conversations: candidate -> plan with written turns.

    Offline by default (templates); with ``model`` (``--generator MODEL``), a chat model plays
    the attacker and rewrites each turn, kept where it keeps the turn's subject and is no
    refusal (:mod:`~stellar.usecases.safety_dialogue.attacker`)."""

    def __init__(self, model: ChatModel | None = None) -> None:
        self.model = model

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput:
        plan = write_plan(candidate.values, rng)
        if self.model is not None:
            plan = await rewrite(plan, self.model)
        return TestInput(text=joined(plan.texts), plan=plan.to_dict())

    def planned_calls(self, candidate: Candidate | None = None) -> list[PlannedCall]:
        """With a model: one call per turn, about five a conversation (``--dry-run``)."""
        if self.model is None:
            return []
        return [PlannedCall(self.model.name, "generator", 150, 60, calls=5)]

    def planned_turns(self, candidate: Candidate, rng: random.Random) -> int:
        """The turns of the candidate's plan (``--dry-run``: model calls per test)."""
        return len(write_plan(candidate.values, rng).turns)
