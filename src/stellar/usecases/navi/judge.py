"""The LLM judge of the navigation use case: NaviQA's f1 scored by a chat model.

Relevance R, directness D and proactivity P of an answer, each 0, 1 or 2 in the reply and
0, 0.5 or 1 in the score; ``response`` = 0.55 R + 0.30 D + 0.15 P (paper). The rubric and
examples are in :mod:`~stellar.usecases.navi.judge_prompts`; asking, fencing, repairing and
voting are the generic judge machinery of :mod:`stellar.fitness.judges`.
"""

from __future__ import annotations

from typing import Any, Literal

from stellar.fitness.json_output import JudgeReply
from stellar.fitness.judges import (
    JudgeModel,
    judge_messages,
    ordinal_vote,
    system_prompt,
    vote_details,
)
from stellar.llm.base import Message, PlannedCall
from stellar.usecases.navi import judge_prompts as prompts

RESPONSE_WEIGHTS = {"R": 0.55, "D": 0.30, "P": 0.15}  # NaviQA f1 (paper)


Level = Literal[0, 1, 2]  # an enum, so that grammar-constrained servers can enforce it


class NaviVote(JudgeReply):
    reason: str
    R: Level
    D: Level
    P: Level


class NaviResponseJudge:
    """NaviQA's f1 by an LLM: relevance R, directness D, proactivity P of an answer."""

    def __init__(self, judge: JudgeModel) -> None:
        self.judge = judge
        self.system = system_prompt(prompts.SYSTEM, prompts.REPLY_FORM)

    def messages(self, user_input: str, answer: str) -> list[Message]:
        return judge_messages(self.system, prompts.TASK, user_input, answer, prompts.EXAMPLES)

    async def score(self, user_input: str, answer: str) -> dict[str, Any]:
        """R, D, P as 0, 0.5 or 1; ``response`` = 0.55 R + 0.30 D + 0.15 P; votes, reason."""
        parsed = await self.judge.ask(self.messages(user_input, answer), NaviVote)
        votes = [p.value for p in parsed]
        levels = {k: ordinal_vote([getattr(v, k) for v in votes]) for k in RESPONSE_WEIGHTS}
        dims = {k: level / 2 for k, level in levels.items()}
        agreeing = [v for v in votes if all(getattr(v, k) == levels[k] for k in levels)]
        return {
            **dims,
            "response": round(sum(RESPONSE_WEIGHTS[k] * dims[k] for k in dims), 6),
            "reason": (agreeing or votes)[0].reason,
            **vote_details(self.judge, parsed),
        }

    def planned_calls(self) -> list[PlannedCall]:
        messages = self.messages(prompts.TYPICAL_INPUT, prompts.TYPICAL_ANSWER)
        return [self.judge.planned(messages)]
