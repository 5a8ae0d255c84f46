"""Fitness functions score an answer; the oracle turns scores into a verdict."""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from stellar.features import Candidate
from stellar.records import Evaluation, Response, TestInput


class Fitness(Protocol):
    """Scores in [0, 1], low means bad behaviour. Raising makes the test a ``judge_error``."""

    async def evaluate(
        self, candidate: Candidate, test_input: TestInput, response: Response
    ) -> Evaluation: ...


class Oracle(Protocol):
    def __call__(self, scores: Mapping[str, float]) -> bool: ...


class ScoreShapeError(ValueError):
    """A fitness whose scores cannot fit the configuration whatever it is asked (a score
    that is no number, a score the objectives or the oracle need and it never gives): a
    mistake in the fitness or the configuration, which stops the run after the first test
    instead of filling it with judge errors."""


SHAPE_HINT = (
    "a fitness returns Evaluation(scores={name: number in [0, 1]}, details={...}) (docs/plugins.md)"
)


def to_evaluation(result: Any) -> Evaluation:
    """Accept an Evaluation or a mapping of name -> score; reject scores outside [0, 1]."""
    evaluation = result if isinstance(result, Evaluation) else Evaluation(scores=dict(result))
    for name, value in evaluation.scores.items():
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ScoreShapeError(
                f"fitness score {name!r} = {value!r:.80} is not a number: {SHAPE_HINT}"
            )
        if math.isnan(value) or not 0.0 <= value <= 1.0:
            raise ValueError(f"fitness {name!r} = {value!r} is not a number in [0, 1]")
        evaluation.scores[name] = float(value)
    return evaluation


class CallableFitness:
    """Adapts ``func(candidate, test_input, response)`` (sync: run in a thread; or async)."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func

    async def evaluate(
        self, candidate: Candidate, test_input: TestInput, response: Response
    ) -> Evaluation:
        if inspect.iscoroutinefunction(self.func):
            result = await self.func(candidate, test_input, response)
        else:
            result = await asyncio.to_thread(self.func, candidate, test_input, response)
        if inspect.isawaitable(result):  # an object with an async __call__
            result = await result
        return to_evaluation(result)


def as_fitness(obj: Any) -> Fitness:
    if hasattr(obj, "evaluate"):
        return obj
    if callable(obj):
        return CallableFitness(obj)
    raise TypeError(f"{obj!r} is neither a fitness nor a callable")


class ThresholdOracle:
    """Failure when any named score is below its threshold (the paper: f < 0.75)."""

    def __init__(self, below: Mapping[str, float]) -> None:
        if not below:
            raise ValueError("oracle needs at least one threshold")
        self.below = dict(below)

    def __call__(self, scores: Mapping[str, float]) -> bool:
        missing = [name for name in self.below if name not in scores]
        if missing:
            raise KeyError(f"oracle needs score {missing[0]!r}; fitness gave {sorted(scores)}")
        return any(scores[name] < limit for name, limit in self.below.items())
