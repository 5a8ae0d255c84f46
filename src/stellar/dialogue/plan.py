"""A conversation as a plan: the user's turns, each with its act and what the answer must satisfy.

A use case compiles a candidate (its ``dialogue`` features beside the content, style and
perturbation ones) and a seed into a :class:`Plan` with a pure function, and writes each
turn's words; the plan is stored with the test (``details["plan"]``), so a conversation is
replayed and judged from what was stored, never drawn again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from stellar.records import PLAN_KEY  # noqa: F401 - the details key of a stored plan

TEMPLATE, MODEL, MODEL_RETRY = "template", "model", "model after retry"  # Turn.source


class Act(StrEnum):
    """What a user turn does to the conversation."""

    REQUEST = "request"  # states a goal
    ADD = "add"  # adds a constraint to the goal
    CORRECT = "correct"  # changes the value of a constraint stated earlier
    DROP = "drop"  # withdraws a constraint
    DETOUR = "detour"  # small talk or another request in between
    RETURN = "return"  # back to the goal after a detour
    CHOOSE = "choose"  # picks one of the offered answers by reference
    CONFIRM = "confirm"  # accepts what is proposed
    REJECT = "reject"  # refuses what is proposed
    STOP = "stop"  # ends the conversation
    PRIME = "prime"  # sets a frame for what follows (fiction, research, role play)
    STEP = "step"  # a step of an escalation towards the request


@dataclass
class Turn:
    """One planned user turn: its act, what it says (``slots``), what the answer must satisfy
    (``expect``, read by the use case's fitness), its words once written, and what must hold
    before it is sent (``requires``: a precondition of :mod:`~stellar.dialogue.preconditions`;
    a turn whose precondition fails is skipped, never sent as if it held)."""

    act: Act
    slots: dict[str, Any] = field(default_factory=dict)
    expect: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    source: str = "template"  # who wrote the words: TEMPLATE, MODEL or MODEL_RETRY
    requires: str = ""  # "" (always sent), "offered" or "listed"
    rejected: str = ""  # why the model's words were not kept (the template's are used)
    doubt: str = ""  # why the check doubts the model's words it kept (see Plan.doubtful)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "act": str(self.act)}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Turn:
        return cls(
            Act(raw["act"]),
            dict(raw.get("slots", {})),
            dict(raw.get("expect", {})),
            str(raw.get("text", "")),
            str(raw.get("source", "template")),
            str(raw.get("requires", "")),
            str(raw.get("rejected", "")),
            str(raw.get("doubt", "")),
        )

    @property
    def by_model(self) -> bool:
        """Whether a simulated user's model wrote the words (first time or on retry)."""
        return self.source in (MODEL, MODEL_RETRY)


@dataclass
class Plan:
    """The turns of one conversation, and what the user says to replies it did not plan for.

    Two kinds of *unplanned* turn, at most :data:`MAX_UNPLANNED` a conversation, never
    counted as planned turns:

    * ``clarification`` answers a clarifying question of the system from the goal (empty:
      such questions are left unanswered);
    * ``reaction`` answers a reply to a request turn that holds one of the ``react_to``
      phrases (a refusal: insist, rephrase ...). With ``backtrack``, a session that can edit
      its history (``rewind``) first forgets the refused exchange, as if never sent.
    """

    turns: list[Turn]
    clarification: str = ""
    reaction: str = ""
    react_to: list[str] = field(default_factory=list)
    backtrack: bool = False

    @property
    def texts(self) -> list[str]:
        return [turn.text for turn in self.turns]

    def to_dict(self) -> dict[str, Any]:
        return {
            "turns": [t.to_dict() for t in self.turns],
            "clarification": self.clarification,
            "reaction": self.reaction,
            "react_to": list(self.react_to),
            "backtrack": self.backtrack,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Plan:
        return cls(
            [Turn.from_dict(t) for t in raw["turns"]],
            str(raw.get("clarification", "")),
            str(raw.get("reaction", "")),
            [str(p) for p in raw.get("react_to", [])],
            bool(raw.get("backtrack", False)),
        )

    def doubtful(self, upto: int) -> str:
        """Why a verdict on planned turn ``upto`` (0-based) cannot rest on what the user said:
        the first doubtful turn up to it, "" when none (docs/dialogue.md, "Fidelity")."""
        for index, turn in enumerate(self.turns[: upto + 1]):
            if turn.doubt:
                return f"simulated user: turn {index + 1} ({turn.act}) {turn.doubt}"
        return ""

    def reacts_to(self, reply: str) -> bool:
        """Whether ``reply`` calls for the reaction (it holds a ``react_to`` phrase)."""
        text = reply.lower().replace("\u2019", "'")
        return bool(self.reaction) and any(phrase in text for phrase in self.react_to)


MAX_UNPLANNED = 2  # unplanned turns (clarifications, reactions) per conversation


def joined(texts: list[str]) -> str:
    """The user's turns as one text (the test's input, screened for duplicates)."""
    return "\n".join(" ".join(text.split()) for text in texts)
