"""``stellar run --dry-run``: the model calls, tokens and cost a run's budget implies.

Nothing is sent. Components that call models say which calls they make for a candidate
(``planned_calls``); prompts are rendered for a sample of random candidates and measured at
about four characters per token. Generation is also paid for inputs that are then discarded
as duplicates or invalid, assumed to be ``DISCARD_SHARE`` of all generated inputs (the
built-in use case discards about 28%). Retries and judge repair calls are not
included, so the real numbers can be somewhat higher. A conversation calls the system
once per planned turn (a generator's ``planned_turns``; unplanned turns not counted), each
turn sending the history so far (as a chat model is sent it).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from stellar.assembly import build_components, build_post_search
from stellar.config import RunConfig
from stellar.llm.base import PlannedCall

DISCARD_SHARE = 0.3
SAMPLE = 20
PER_TESTS = 100  # the unit used when the budget has no test count


@dataclass
class EstimateRow:
    role: str
    model: str
    calls: float
    input_tokens: float
    output_tokens: float
    cost: float | None  # None: no price known


@dataclass
class Estimate:
    tests: int
    rows: list[EstimateRow]
    assumed_tests: bool  # the budget sets no test count: estimated per PER_TESTS tests
    turns: float | None = None  # conversations: mean planned turns (system calls per test)

    @property
    def cost(self) -> float | None:
        costs = [row.cost for row in self.rows]
        return None if None in costs else sum(c for c in costs if c is not None)


def estimate_run(config: RunConfig) -> Estimate:
    parts = build_components(config, check_keys=False)
    rng = random.Random(config.seed)
    candidates = [parts.space.candidate(parts.space.random_values(rng)) for _ in range(SAMPLE)]
    totals: dict[tuple[str, str], list[float]] = {}
    post_search = build_post_search(config, parts.models)
    post_judge = post_search.judge if post_search else None
    counted = getattr(parts.generator, "planned_turns", None)  # a conversation's system calls
    turns = [counted(c, random.Random(config.seed)) if counted else 1 for c in candidates]
    for component in (parts.generator, parts.sut, parts.fitness, post_judge):
        plan = getattr(component, "planned_calls", None)
        if plan is None:
            continue
        for candidate, per_turn in zip(candidates, turns, strict=True):
            call: PlannedCall
            for call in plan(candidate):
                entry = totals.setdefault((call.role, call.model), [0.0, 0.0, 0.0])
                n = per_turn if call.role == "sut" else 1  # a turn sends the history so far
                history = n * (n - 1) / 2 * (call.input_tokens + call.output_tokens)
                entry[0] += call.calls * n
                entry[1] += call.calls * (n * call.input_tokens + history)
                entry[2] += call.calls * n * call.output_tokens
    tests = config.budget.tests or PER_TESTS
    rows = []
    for (role, model), (calls, tokens_in, tokens_out) in totals.items():
        scale = tests / SAMPLE / (1 - DISCARD_SHARE if role == "generator" else 1)
        provider, _, name = model.partition(":")
        price = parts.models.prices.lookup(provider, name)
        tokens_in, tokens_out = tokens_in * scale, tokens_out * scale
        cost = None if price is None else (tokens_in * price[0] + tokens_out * price[1]) / 1e6
        rows.append(EstimateRow(role, model, calls * scale, tokens_in, tokens_out, cost))
    mean_turns = sum(turns) / len(turns) if counted else None
    return Estimate(tests, rows, config.budget.tests is None, mean_turns)
