"""A model rewrites a conversation plan's turns; each is checked, retried once, or falls back.

Each turn in order: the model writes it from the prompt ``ask(turn, earlier)``; the check
(:mod:`stellar.dialogue.turn_check`: the general rules, then the use case's act check) keeps
it (``Turn.source`` "model") or names why not. A rejected turn is asked again once, with the
reason; kept then, its source is "model after retry". Rejected twice, the template's words
stay (``source`` "template") and ``Turn.rejected`` says why, so the run's summary can say how
much of the user the model really played. Temperature 0 and the model cache make a rerun
write the same turns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from stellar.dialogue.plan import MODEL, MODEL_RETRY, Plan, Turn
from stellar.dialogue.turn_check import UNDECIDED, Judgement, MeaningCheck, general_problem
from stellar.llm.base import ChatModel
from stellar.text.cleaning import clean_generation

DEFAULT_MAX_WORDS = 40


class TurnChecker:
    """The whole check of one written turn: the general rules, the act rule, and the meaning
    check where the act rule cannot tell (``meaning``: None, such turns are rejected).
    ``instructions``: the fixed words of the prompts (not the turn's content), which a turn
    must not echo; ``max_words``: the length bound per act."""

    def __init__(
        self,
        act_check: Callable[[Turn, str], Judgement],
        instructions: str,
        max_words: Mapping[str, int] | None = None,
        meaning: MeaningCheck | None = None,
    ) -> None:
        self.act_check, self.instructions, self.meaning = act_check, instructions, meaning
        self.max_words = dict(max_words or {})

    def __call__(self, turn: Turn, text: str, earlier: list[str]) -> Judgement:
        limit = self.max_words.get(str(turn.act), DEFAULT_MAX_WORDS)
        problem = general_problem(text, earlier, self.instructions, limit)
        if problem is not None:
            return Judgement(reason=problem)
        judgement = self.act_check(turn, text)
        if judgement is not UNDECIDED:
            return judgement
        if self.meaning is None:
            return Judgement(reason=f"does not clearly read as a {turn.act}")
        return self.meaning(str(turn.act), text)


async def rewrite_turns(
    plan: Plan,
    model: ChatModel,
    system: str,
    ask: Callable[[Turn, str], str],
    check: TurnChecker,
    max_tokens: int = 60,
) -> Plan:
    """``plan`` with each turn the model writes acceptably in its words (see the module
    docstring); ``earlier`` in ``ask`` is the user's turns so far, one per line."""
    said: list[str] = []
    for turn in plan.turns:
        earlier = "\n".join(f"- {text}" for text in said) or "(nothing yet)"
        prompt = ask(turn, earlier)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        written, judgement = await _write(model, messages, max_tokens, check, turn, said)
        source = MODEL
        if not judgement.kept:
            messages += [
                {"role": "assistant", "content": written},
                {
                    "role": "user",
                    "content": f"That message was not usable: it {judgement.reason}. Write "
                    "only the user's message again, doing just what was asked.",
                },
            ]
            first = judgement.reason
            written, judgement = await _write(model, messages, max_tokens, check, turn, said)
            source = MODEL_RETRY
            if not judgement.kept:
                judgement = Judgement(reason=f"{first}; on retry: {judgement.reason}")
        if judgement.kept:
            turn.text, turn.source, turn.doubt = written, source, judgement.doubt
        else:
            turn.rejected = str(judgement.reason)
        said.append(turn.text)
    return plan


async def _write(
    model: ChatModel,
    messages: list[dict[str, str]],
    max_tokens: int,
    check: TurnChecker,
    turn: Turn,
    said: list[str],
) -> tuple[str, Judgement]:
    completion = await model.complete(messages, temperature=0.0, max_tokens=max_tokens)
    written = clean_generation(completion.text)
    return written, check(turn, written, said)
