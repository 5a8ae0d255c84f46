"""The fitness of a configuration's ``checks:`` (:mod:`stellar.config_checks`): each check
scores the answer in [0, 1] and says why; the first failing check names the failure mode.

Every check gives a verdict on any answer: an empty, huge or binary text, data that is no
JSON, a JSONPath that matches nothing all fail the check with a reason, never the run. Texts
are read up to ``MAX_CHARS`` (a regular expression over megabytes of text could take minutes).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from stellar.config_checks import (
    CheckSpec,
    ContainsCheck,
    JsonPathCheck,
    JsonSchemaCheck,
    LengthCheck,
    PythonCheck,
    Reference,
    RefusalCheck,
    RegexCheck,
    RubricCheck,
    SimilarCheck,
    check_name,
    parse_checks,
    threshold_of,
)
from stellar.errors import StellarError
from stellar.features import Candidate
from stellar.fitness.json_output import JudgeReply
from stellar.modes import MODE_KEY
from stellar.records import Evaluation, Response, TestInput

if TYPE_CHECKING:
    from stellar.fitness.judges import JudgeModel

MAX_CHARS = 100_000
REFUSAL = re.compile(
    r"\b(I can(?:'|no)t|I(?:'m| am) (?:not able|unable)|I won'?t|I will not|I'm sorry, but|"
    r"as an AI|not able to (?:help|assist|provide))",
    re.IGNORECASE,
)


class RubricVote(JudgeReply):
    reason: str
    meets: bool


@dataclass(frozen=True)
class Outcome:
    score: float
    reason: str


class Checks:
    """Fitness ``checks``: one objective per check (see the module)."""

    def __init__(
        self, checks: Sequence[Mapping[str, Any]], judge: JudgeModel | None = None
    ) -> None:
        self.checks = parse_checks(list(checks))
        self.judge = judge  # the run's judge model, for rubric checks
        if judge is None and any(isinstance(c, RubricCheck) for c in self.checks):
            raise StellarError("a rubric check needs a judge model: --judge MODEL (docs/checks.md)")
        self.names = [check_name(c, i) for i, c in enumerate(self.checks)]
        self.objectives = tuple(self.names)
        self._embedder: Any = None

    async def evaluate(
        self, candidate: Candidate, test_input: TestInput, response: Response
    ) -> Evaluation:
        answer = (response.text or "")[:MAX_CHARS]
        values = dict(candidate.values)
        scores, results, failing = {}, [], None
        for name, check in zip(self.names, self.checks, strict=True):
            outcome = await self._run(check, test_input.text, answer, response.data, values)
            score = float(min(max(outcome.score, 0.0), 1.0))
            scores[name] = score
            passed = score >= threshold_of(check)
            results.append({"check": name, "score": round(score, 4), "reason": outcome.reason})
            if not passed and failing is None:
                failing = (name, check, outcome)
        details: dict[str, Any] = {"checks": results}
        if failing is not None:
            name, check, outcome = failing
            details["reason"] = f"{name}: {outcome.reason}"
            details[MODE_KEY] = _mode(check, name, outcome, values, response.data)
        return Evaluation(scores=scores, details=details)

    async def _run(
        self, check: CheckSpec, question: str, answer: str, data: Any, values: dict
    ) -> Outcome:
        if isinstance(check, ContainsCheck):
            return _contains(check, answer, values)
        if isinstance(check, RegexCheck):
            flags = 0 if check.case else re.IGNORECASE
            found = re.search(check.pattern, answer, flags)
            want = check.kind == "regex"
            said = f"matches {found.group(0)[:60]!r}" if found else "no match"
            return Outcome(float(bool(found) == want), said)
        if isinstance(check, LengthCheck):
            n = len(answer)
            ok = (check.min is None or n >= check.min) and (check.max is None or n <= check.max)
            return Outcome(float(ok), f"{n} characters")
        if isinstance(check, JsonPathCheck):
            return _json_path(check, answer, data, values)
        if isinstance(check, JsonSchemaCheck):
            return _json_schema(check, answer, data)
        if isinstance(check, SimilarCheck):
            return await self._similar(check, answer, values)
        if isinstance(check, RefusalCheck):
            refused = REFUSAL.search(answer) is not None
            said = "refuses" if refused else "does not refuse"
            return Outcome(float(refused == check.present), said)
        if isinstance(check, PythonCheck):
            return await _python(check, answer, data, values)
        if isinstance(check, RubricCheck):
            return await self._rubric(check, question, answer)
        raise TypeError(f"unknown check {check!r}")

    async def _rubric(self, check: RubricCheck, question: str, answer: str) -> Outcome:
        """The judge model's verdict on the rule (its votes, as every LLM judge's)."""
        from stellar.fitness import judge_prompts as prompts
        from stellar.fitness.judges import judge_messages, system_prompt

        assert self.judge is not None  # refused at construction otherwise
        system = system_prompt(
            prompts.RUBRIC_SYSTEM.replace(
                "{rubric}", check.rubric.replace("{", "{{").replace("}", "}}")
            ),
            prompts.RUBRIC_REPLY_FORM,
        )
        messages = judge_messages(system, prompts.TASK, question, answer)
        votes = [p.value for p in await self.judge.ask(messages, RubricVote)]
        meets = sum(v.meets for v in votes) * 2 > len(votes)
        return Outcome(float(meets), votes[0].reason[:200])

    async def _similar(self, check: SimilarCheck, answer: str, values: dict) -> Outcome:
        reference = str(_resolve(check.reference, values))
        if self._embedder is None:
            from stellar.text.embeddings import get_embedder

            self._embedder = get_embedder("minilm")
        vectors = await asyncio.to_thread(self._embedder.embed, [answer, reference])
        cosine = float(np.dot(vectors[0], vectors[1]))
        return Outcome(cosine, f"similarity {cosine:.2f} to {reference[:60]!r}")


def _resolve(ref: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(ref, Reference):
        value = values.get(ref.feature)
        return ref.table.get(str(value)) if ref.table is not None else value
    return ref


def _contains(check: ContainsCheck, answer: str, values: dict) -> Outcome:
    wanted = [str(_resolve(r, values)) for r in (check.any or check.all or [])]
    text = answer if check.case else answer.lower()
    found = [w for w in wanted if (w if check.case else w.lower()) in text]
    present = bool(found) if check.any is not None else len(found) == len(wanted)
    ok = present if check.kind == "contains" else not found
    said = f"has {found[0]!r}" if found else f"has none of {wanted[:3]}"
    return Outcome(float(ok), said)


def _document(of: str, answer: str, data: Any) -> tuple[Any, str | None]:
    """The JSON a check reads: the response's data, or the answer parsed as JSON."""
    if of == "data":
        return data, None if data is not None else "the response has no data"
    try:
        return json.loads(answer), None
    except ValueError:
        return None, "the answer is not JSON"


def _json_path(check: JsonPathCheck, answer: str, data: Any, values: dict) -> Outcome:
    from jsonpath_ng.ext import parse

    document, problem = _document(check.of, answer, data)
    if problem:
        return Outcome(0.0, problem)
    try:
        found = [m.value for m in parse(check.path).find(document)]
    except Exception as exc:  # a document the expression cannot walk: a verdict
        return Outcome(0.0, f"{check.path}: {type(exc).__name__}")
    if check.equals is not None or check.in_ is not None:
        allowed = (
            [_resolve(check.equals, values)]
            if check.equals is not None
            else [_resolve(r, values) for r in check.in_ or []]
        )
        ok = bool(found) and any(_same(v, a) for v in found for a in allowed)
        return Outcome(float(ok), f"{check.path} = {_short(found)}, wanted {_short(allowed)}")
    ok = bool(found) == check.exists
    return Outcome(float(ok), f"{check.path} {'matches' if found else 'matches nothing'}")


def _json_schema(check: JsonSchemaCheck, answer: str, data: Any) -> Outcome:
    from jsonschema import Draft202012Validator

    document, problem = _document(check.of, answer, data)
    if problem:
        return Outcome(0.0, problem)
    error = next(iter(Draft202012Validator(check.schema_).iter_errors(document)), None)
    return Outcome(float(error is None), "valid" if error is None else error.message[:120])


async def _python(check: PythonCheck, answer: str, data: Any, values: dict) -> Outcome:
    module, _, name = check.function.partition(":")
    function = getattr(importlib.import_module(module), name)
    result = function(answer, data, values)
    if asyncio.iscoroutine(result):
        result = await result
    if isinstance(result, bool):
        return Outcome(float(result), "true" if result else "false")
    return Outcome(float(result), f"{float(result):.2f}")


def _same(found: Any, wanted: Any) -> bool:
    return found == wanted or str(found).strip().lower() == str(wanted).strip().lower()


def _short(items: list[Any]) -> str:
    return json.dumps(items[:3], ensure_ascii=False, default=str)[:120]


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def _mode(check: CheckSpec, name: str, outcome: Outcome, values: dict, data: Any) -> str:
    """The failure mode's label: the check's ``mode`` with features and data filled in."""
    if not check.mode:
        return f"{name} failed"
    fields = _Blank(values)
    fields["data"] = _Blank(data) if isinstance(data, dict) else _Blank()
    try:
        return string.Formatter().vformat(check.mode, (), fields)
    except (ValueError, IndexError, AttributeError, KeyError):
        return check.mode
