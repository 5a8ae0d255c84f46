"""The shortest failing conversation: dialogue features made plainer while the failure stays.

A failing conversation is shrunk through its candidate, not by cutting turns out of its
transcript (a cut would leave later turns expecting what the removed one said): a
``dialogue`` feature, or two together, is set to its first value, the plainest one (no
correction, no detour, distance 1...), the plan is compiled and sent again, and the change
is kept when the conversation still fails with the same signature (``details["mode"]``) in
fewer planned turns. It stops when no single feature or pair can be made plainer. Every try
is a real conversation with the system under test, written with the test's own seed.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stellar.dialogue.plan import Plan
from stellar.dialogue.runner import run_conversation
from stellar.dialogue.session import open_session
from stellar.features import FeatureSpace
from stellar.records import Response

MODE_KEY = "mode"  # the fitness's name for what went wrong (stellar.modes.MODE_KEY)


@dataclass
class Attempt:
    """One conversation sent while shrinking."""

    values: dict[str, Any]
    plan: Plan
    response: Response
    failed: bool
    signature: str | None


@dataclass
class Shrunk:
    """The shortest conversation found that fails the same way, and how it was reached."""

    original: Attempt
    shortest: Attempt
    tries: int
    plainer: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # feature: (was, now)

    @property
    def turns(self) -> tuple[int, int]:
        """Planned turns before and after."""
        return len(self.original.plan.turns), len(self.shortest.plan.turns)


class Shrinker:
    """Sends conversations of candidates of ``space`` and judges them as a run would."""

    def __init__(
        self,
        space: FeatureSpace,
        generator: Any,
        sut: Any,
        fitness: Any,
        oracle: Callable[[Mapping[str, float]], bool],
        *,
        timeout: float | None = None,
        check: Callable[[Response], str | None] | None = None,
    ) -> None:
        self.space, self.generator, self.sut = space, generator, sut
        self.fitness, self.oracle = fitness, oracle
        self.timeout, self.check = timeout, check

    async def attempt(self, values: Mapping[str, Any], seed: str) -> Attempt:
        """Write, send and judge the conversation of ``values`` (``seed``: the rng's)."""
        candidate = self.space.candidate(values)
        test_input = await self.generator.generate(candidate, random.Random(seed))
        if test_input.plan is None:
            raise ValueError("the generator wrote no conversation plan: nothing to shrink")
        plan = Plan.from_dict(test_input.plan)
        session = await open_session(self.sut, test_input.plan)
        response = await run_conversation(session, plan, timeout=self.timeout, check=self.check)
        if response.error:
            return Attempt(dict(candidate.values), plan, response, False, None)
        evaluation = await self.fitness.evaluate(candidate, test_input, response)
        failed = bool(self.oracle(evaluation.scores)) and not evaluation.excluded
        signature = evaluation.details.get(MODE_KEY) if failed else None
        return Attempt(dict(candidate.values), plan, response, failed, signature)

    async def shrink(self, values: Mapping[str, Any], seed: str) -> Shrunk:
        """Shrink the conversation of ``values`` (see the module docstring)."""
        original = best = await self.attempt(values, seed)
        tries, plainer = 1, {}
        if not original.failed:
            return Shrunk(original, original, tries)
        dialogue = [f for f in self.space.features if f.kind == "dialogue"]
        while True:
            fancy = [f for f in dialogue if best.values[f.name] != f.values[0]]
            moves = [[f] for f in fancy] + [list(p) for p in itertools.combinations(fancy, 2)]
            for move in moves:  # one feature at a time, then two together
                tried = await self.attempt(
                    {**best.values, **{f.name: f.values[0] for f in move}}, seed
                )
                tries += 1
                if (
                    tried.failed
                    and tried.signature == original.signature
                    and len(tried.plan.turns) < len(best.plan.turns)
                ):
                    plainer.update({f.name: (best.values[f.name], f.values[0]) for f in move})
                    best = tried
                    break
            else:
                return Shrunk(original, best, tries, plainer)
