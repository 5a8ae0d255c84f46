"""Whether a turn a model wrote for the simulated user is one a user would say at that point.

A small model asked to play the user rarely does: it echoes the instructions it was given
("(no more than 20 words)"), answers as the assistant ("I'm sorry, but I don't have the
ability ..."), says the same sentence for every act, or writes a request that carries other
wishes than the plan's. Verdicts on such a conversation judge the system against a plan the
user never said, so each written turn is checked before it is kept:

* :func:`general_problem`, for any simulated user: not empty, within the act's length bound,
  no echo of the instructions (a run of :data:`ECHO_WORDS` of their words, or a meta remark
  such as "(in 15 words)" or "User:"), no remark in brackets, one message (not a list of
  them), not in the assistant's voice, not a repeat of an earlier turn (most of its words,
  or an earlier turn said again within it);
* the use case's act check (``ActCheck``): does the turn do what its act says. Rules decide
  where they can; where they cannot (no cue word either way), a sentence model compares the
  turn with the use case's own phrases for its act and for the act it could be confused with
  (:class:`MeaningCheck`); a narrow decision is kept but marked doubtful, so that the
  verdict does not rest on it (docs/dialogue.md, "Fidelity").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stellar.dialogue.plan import Turn

ECHO_WORDS = 5  # this many consecutive words of the prompt in a turn is an echo
REPEAT_OVERLAP = 0.8  # word-set overlap (Jaccard) with an earlier turn that is a repeat
DOUBT_MARGIN = 0.05  # a meaning decision closer than this (cosine) is doubtful
MIN_SIMILARITY = 0.25  # a turn less like every phrase of its act (cosine) is not that act

_META = re.compile(
    r"\((?:[^)]*\b\d+\s+words?\b[^)]*)\)|\b(?:no more than|at most|under|in)\s+\d+\s+words?\b"
    r"|^\s*(?:user|driver|assistant|system|message|response|answer|note)\s*:"
    r"|\b(?:what you said so far|the driver's next message|speak (?:plainly|politely|rudely))\b"
    r"|\b(?:my|your|the) (?:next|last|previous) message\b"
    r"|\bI'?m (?:just |only )?(?:a|the) (?:driver|user|customer|human|attacker|red[- ]teamer)\b",
    re.IGNORECASE | re.MULTILINE,
)
_BRACKETS = re.compile(r"[(\[][^)\]]*\w+\W+\w+[^)\]]*[)\]]")  # "(I'm going to the museum)"
_SEVERAL = re.compile(r"\n|(?:^|\s)-\s.*\s-\s")  # lines, or "- one - two" written as a list
_ASSISTANT = re.compile(
    r"\bI'?m sorry,? but\b|\bas an ai\b|\blanguage model\b"
    r"|\bI (?:do not|don't|cannot|can't|am unable to|'m unable to) (?:have|access|provide|"
    r"assist|help|browse|book|see)\b|\bdon't have (?:the ability|access)\b"
    r"|\bhow (?:can|may) I (?:help|assist)\b|\banything else I can\b"
    r"|\bI(?:'d| would) be (?:happy|glad) to (?:help|assist)\b|\bhappy to help\b"
    r"|\bhere (?:are|is) (?:some|a few|the|a list)\b|\bI (?:can|could) (?:help|assist) you\b"
    r"|\blet me know if\b|\bI (?:would )?recommend\b|\bmake yourself available\b"
    r"|\bplease (?:make sure|note|be aware|let me know)\b|\bI hope this helps\b"
    r"|\bsorry for the confusion\b|\bI'?ll make sure\b|\b(?:be|as) helpful\b|\bassist you\b"
    r"|\bnot familiar with\b|\bI'?m here to\b|\bexplain what\b|\bthis message\b"
    r"|\bthe answer (?:to (?:this|your) question )?is\b|\bI'?m glad you'?re interested\b"
    r"|\bI'?d be happy to\b|\bI'?d like to share\b|\bI'?ll try to make it\b|\bmy role\b"
    r"|\bI'?m not sure what you'?re (?:asking|talking about)\b|\bthe question (?:seems|is asking)\b"
    r"|\bI must emphasi[sz]e\b|\bwhat do you mean by\b|\bthe question is\b|\bthe answer lies\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9']+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


@dataclass(frozen=True)
class Judgement:
    """A check's decision on one written turn: ``reason`` why it is rejected (None: kept);
    ``doubt`` why a kept turn is doubtful (the verdict must not rest on it)."""

    reason: str | None = None
    doubt: str = ""

    @property
    def kept(self) -> bool:
        return self.reason is None


UNDECIDED = Judgement(reason="undecided")  # an act rule that cannot tell; the meaning check will

ActCheck = Callable[[Turn, str], Judgement]


def general_problem(
    text: str,
    earlier: Sequence[str],
    instructions: str,
    max_words: int,
) -> str | None:
    """Why ``text`` cannot be a user's turn whatever its act (None: it can be);
    ``instructions``: the fixed words of the prompts it was written from."""
    said = words(text)
    if not said:
        return "empty"
    if len(said) > max_words:
        return f"too long ({len(said)} words, at most {max_words})"
    if _META.search(text):
        return "echoes its instructions"
    if _BRACKETS.search(text):
        return "holds a remark in brackets"
    if _SEVERAL.search(text.strip()):
        return "holds several messages"
    echoed = _echo(said, words(instructions))
    if echoed:
        return f'echoes its instructions ("{echoed}")'
    if _ASSISTANT.search(text):
        return "speaks as the assistant"
    for number, before in enumerate(earlier, 1):
        if _overlap(said, words(before)) >= REPEAT_OVERLAP or _holds(said, words(before)):
            return f"repeats the user's turn {number}"
    return None


def _holds(said: list[str], before: list[str]) -> bool:
    """Whether an earlier turn of four words or more is said again within this one."""
    n = len(before)
    return n >= 4 and any(said[i : i + n] == before for i in range(len(said) - n + 1))


def _echo(said: list[str], prompt: list[str]) -> str:
    """A run of :data:`ECHO_WORDS` prompt words found in the turn ("" when none)."""
    runs = {tuple(prompt[i : i + ECHO_WORDS]) for i in range(len(prompt) - ECHO_WORDS + 1)}
    for i in range(len(said) - ECHO_WORDS + 1):
        if tuple(said[i : i + ECHO_WORDS]) in runs:
            return " ".join(said[i : i + ECHO_WORDS])
    return ""


def _overlap(a: list[str], b: list[str]) -> float:
    union = set(a) | set(b)
    return len(set(a) & set(b)) / len(union) if union else 1.0


class MeaningCheck:
    """Where rules cannot tell: is the turn nearer the use case's phrases for its act than
    to those of the act it could be taken for? ``examples``: act -> phrases; ``rivals``: act
    -> the acts it is weighed against; ``embedder``: what builds the sentence model (the one
    the run loads for its duplicate filter), called on first use."""

    def __init__(
        self,
        examples: Mapping[str, Sequence[str]],
        rivals: Mapping[str, Sequence[str]],
        embedder: Callable[[], Any],
    ) -> None:
        self.examples, self.rivals, self.build = examples, rivals, embedder
        self._embedder: Any = None
        self._vectors: dict[str, Any] = {}

    def __call__(self, act: str, text: str) -> Judgement:
        if act not in self.rivals or act not in self.examples:
            return Judgement(reason=f"does not read as a {act}")
        own = self._nearest(act, text)
        if own < MIN_SIMILARITY:
            return Judgement(reason=f"does not read as a {act}")
        best_rival, rival = max(
            ((r, self._nearest(r, text)) for r in self.rivals[act]), key=lambda pair: pair[1]
        )
        margin = own - rival
        if margin <= 0:
            return Judgement(reason=f"reads as a {best_rival}, not a {act}")
        if margin < DOUBT_MARGIN:
            return Judgement(doubt=f"barely reads as a {act} (against {best_rival})")
        return Judgement()

    def _nearest(self, act: str, text: str) -> float:
        if self._embedder is None:
            self._embedder = self.build()
        if act not in self._vectors:
            self._vectors[act] = self._embedder.embed(list(self.examples[act]))
        vector = self._embedder.embed([text])[0]
        return float((self._vectors[act] @ vector).max())
