"""The words of a navi conversation: each planned turn written offline, deterministically.

The first request is written by the single-turn realiser (``navi.realiser.realise``)
from the attributes that turn states, so it has the candidate's style; later turns come
from per-act phrases (``turn_phrases.yaml``) with the realiser's attribute phrases ("that
takes cash"). ``perturbed_turns`` says which turns get the candidate's word perturbation,
``style_drift: ruder`` makes the second half of the turns rude.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import yaml

from stellar.dialogue.plan import Act, Plan, Turn, joined
from stellar.features import Candidate
from stellar.llm.base import ChatModel, PlannedCall
from stellar.records import TestInput
from stellar.usecases.navi.realiser import realise
from stellar.usecases.navi.realiser_content import (
    ContentPhrases,
    capitalise,
    decapitalise,
    pick,
    tidy,
)
from stellar.usecases.navi.realiser_lexicon import (
    ATTRIBUTES,
    CATEGORY_NOUNS,
    PERTURBATION_OPERATORS,
)
from stellar.usecases.navi_dialogue.plan import compile_plan
from stellar.usecases.navi_dialogue.simulator import rewrite

PHRASES: dict[str, Any] = yaml.safe_load(
    (Path(__file__).parent / "turn_phrases.yaml").read_text(encoding="utf-8")
)


def write_plan(values: Mapping[str, Any], rng: random.Random) -> Plan:
    """The plan of ``values`` with every turn's words (pure: the same rng state, the same
    words)."""
    plan = compile_plan(values, rng)
    writer = _Writer(values, rng)
    writer.later = {n for t in plan.turns for n in t.slots if n in ATTRIBUTES}
    last = len(plan.turns) - 1
    chosen = perturbed(values, len(plan.turns))
    for index, turn in enumerate(plan.turns):
        turn.text = writer.write(turn)
        if values.get("style_drift") == "ruder" and index > last // 2:
            turn.text = writer.ruder(turn.text)
        if index in chosen and turn.act is not Act.REQUEST:  # the realiser perturbs requests
            turn.text = capitalise(writer.perturb(turn.text))
    plan.clarification = writer.clarification()
    return plan


class _Writer:
    def __init__(self, values: Mapping[str, Any], rng: random.Random) -> None:
        self.values, self.rng = values, rng
        self.slang = values.get("slang", "neutral")
        self.later: set[str] = set()  # attributes some turn states

    def _phrase(self, name: str, value: Any) -> ContentPhrases:
        return ContentPhrases({**self.values, name: value}, self.rng)

    def place(self, category: str | None = None) -> str:
        return pick(self.rng, CATEGORY_NOUNS[category or self.values["category"]], self.slang)

    def write(self, turn: Turn) -> str:
        slots, rng, act = turn.slots, self.rng, turn.act
        if act is Act.REQUEST:
            return self.request(slots, self.later)
        if act is Act.ADD and slots.get("elliptic"):
            name = next(n for n in slots if n in ATTRIBUTES)
            post = self._phrase(name, slots[name]).post(name)
            return rng.choice(PHRASES["elliptic"]).format(post=post)
        if act is Act.ADD:
            return " ".join(self._phrase(n, slots[n]).say(n) for n in slots if n in ATTRIBUTES)
        if act is Act.CORRECT:
            name = next(n for n in slots if n in ATTRIBUTES)
            say = self._phrase(name, slots[name]).say(name)
            return tidy(rng.choice(PHRASES["correct"]).format(say=decapitalise(say)))
        if act is Act.DROP:
            attribute = rng.choice(PHRASES["attribute_names"][slots["attribute"]])
            return rng.choice(PHRASES["drop"]).format(attribute=attribute)
        if act is Act.DETOUR and slots["kind"] == "other_request":
            return realise({"category": slots["category"], "slang": self.slang}, rng)
        if act is Act.DETOUR:
            return rng.choice(PHRASES[slots["kind"]])
        if act is Act.RETURN:
            return rng.choice(PHRASES["return"]).format(place=self.place())
        if act is Act.CHOOSE and "ordinal" in slots:
            return rng.choice(PHRASES["choose"][slots["ordinal"]])
        if act is Act.CHOOSE:
            return rng.choice(PHRASES["anaphora"])
        return rng.choice(PHRASES[str(act)])  # confirm, reject

    def request(self, slots: Mapping[str, Any], later: Collection[str]) -> str:
        """The first turn: the realiser's utterance for the category and the stated values,
        with no "don't care" remark on the attributes said ``later``."""
        values = {**self.values, **{n: slots.get(n, "none") for n in ATTRIBUTES}}
        if self.values.get("perturbed_turns", "first") == "last":
            values["word_perturbation"] = "none"
        return realise(values, self.rng, quiet=later)

    def perturb(self, text: str) -> str:
        return PERTURBATION_OPERATORS[self.values.get("word_perturbation", "none")](text, self.rng)

    def ruder(self, text: str) -> str:
        rude = PHRASES["ruder"]
        if self.rng.random() < 0.5:
            return f"{self.rng.choice(rude['openers'])} {decapitalise(text)}"
        return f"{text} {self.rng.choice(rude['closers'])}"

    def clarification(self) -> str:
        place = self.place()
        a_place = f"{'an' if place[:1].lower() in 'aeiou' else 'a'} {place}"
        return self.rng.choice(PHRASES["clarify"]).format(a_place=a_place)


def perturbed(values: Mapping[str, Any], turns: int) -> set[int]:
    """The turns that get the word perturbation (``perturbed_turns``)."""
    which = values.get("perturbed_turns", "first")
    return {"first": {0}, "last": {turns - 1}, "all": set(range(turns))}[which]


class NaviDialogueRealiser:
    """Generator for navi conversations: candidate -> plan with written turns.

    Offline by default (templates); with ``model``, a chat model plays the user and rewrites
    each turn, kept where it says what the turn must (:mod:`~.simulator`), then perturbed as
    the template's turn would be."""

    def __init__(self, model: ChatModel | None = None) -> None:
        self.model = model

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput:
        values = candidate.values
        plan = write_plan(values, rng)
        if self.model is not None:
            style = f"{values.get('politeness', 'neutral')}ly, {values.get('slang', 'neutral')}"
            plan = await rewrite(plan, self.model, style.replace("neutrally", "plainly"))
            operator = PERTURBATION_OPERATORS[values.get("word_perturbation", "none")]
            for index in perturbed(values, len(plan.turns)):
                if plan.turns[index].by_model:
                    plan.turns[index].text = capitalise(operator(plan.turns[index].text, rng))
        return TestInput(text=joined(plan.texts), plan=plan.to_dict())

    def planned_turns(self, candidate: Candidate, rng: random.Random) -> int:
        """The turns of the candidate's plan (``--dry-run``: system calls per test)."""
        return len(compile_plan(candidate.values, rng).turns)

    def planned_calls(self, candidate: Candidate | None = None) -> list[PlannedCall]:
        """With a model: one call per turn, about six a conversation (``--dry-run``)."""
        if self.model is None:
            return []
        return [PlannedCall(self.model.name, "generator", 120, 30, calls=6)]
