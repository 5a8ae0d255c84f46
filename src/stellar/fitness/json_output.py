"""Strict JSON answers from a judge model: parse, validate, and one repair attempt.

A reply is accepted when it is exactly one JSON object, optionally in a ```json fenced block
and surrounded by whitespace; nothing is guessed from prose. The object is validated by a
pydantic model (types and ranges; extra keys are ignored). A reply that fails gets ONE repair
call that shows the model its reply and what was wrong; a second failure raises
:class:`JudgeError`, which the pipeline records as a ``judge_error``. There is never a
default score for an unparseable reply.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from stellar.llm.base import ChatModel, Message

FENCED = re.compile(r"\A```(?:json)?[ \t]*\n?(.*?)\n?[ \t]*```\Z", re.DOTALL | re.IGNORECASE)
SHOWN_CHARS = 80  # how much of a bad reply an error message quotes

T = TypeVar("T", bound=BaseModel)


class JudgeError(ValueError):
    """A judge model gave no usable answer, even after one repair attempt."""


class JudgeReply(BaseModel):
    """Base of the judges' reply models: strict types, unknown keys ignored."""

    model_config = ConfigDict(strict=True, extra="ignore")


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """A validated reply, and whether it took the repair call to get it."""

    value: T
    repaired: bool


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in ``text`` (bare or in one ```json fence); ValueError otherwise."""
    body = text.strip()
    fenced = FENCED.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body:
        raise ValueError("the reply is empty")
    try:
        data = json.loads(body, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not valid JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(data, dict):
        raise ValueError(f"the reply is JSON {type(data).__name__}, not an object")
    return data


def _reject_constant(name: str) -> Any:
    raise ValueError(f"the reply uses {name}, which is not a JSON number")


def parse_reply(text: str, schema: type[T]) -> T:
    """Parse and validate ``text``; ValueError with a short, model-readable problem."""
    data = parse_json_object(text)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(map(str, e['loc'])) or 'object'}: {e['msg']}" for e in exc.errors()[:3]
        ]
        raise ValueError("; ".join(problems)) from None


@functools.cache
def strict_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema in the strict form structured-output endpoints require:
    every property required, no additional properties (also in nested definitions).
    Built once per model class and shared by every request: read it, never change it."""
    result = copy.deepcopy(schema.model_json_schema())
    for node in [result, *result.get("$defs", {}).values()]:
        if node.get("type") == "object" and "properties" in node:
            node["required"] = list(node["properties"])
            node["additionalProperties"] = False
    return result


async def complete_json(
    model: ChatModel,
    messages: list[Message],
    schema: type[T],
    *,
    structured: bool,
    temperature: float | None,
    max_tokens: int | None,
    seed: int | None,
    sample: int,
) -> Parsed[T]:
    """Ask ``model`` for a ``schema`` object; one repair call, then :class:`JudgeError`."""
    options: dict[str, Any] = {
        "temperature": temperature,
        "max_tokens": max_tokens,
        "seed": seed,
        "json_schema": strict_schema(schema) if structured else None,
        "sample": sample,
    }
    first = await model.complete(messages, **options)
    try:
        return Parsed(parse_reply(first.text, schema), repaired=False)
    except ValueError as exc:
        problem = str(exc)
    repair = [
        *messages,
        {"role": "assistant", "content": first.text},
        {"role": "user", "content": repair_request(problem)},
    ]
    second = await model.complete(repair, **options)
    try:
        return Parsed(parse_reply(second.text, schema), repaired=True)
    except ValueError as exc:
        shown = second.text.strip()[:SHOWN_CHARS]
        raise JudgeError(
            f"judge {model.name} gave no valid JSON after one repair ({exc}): {shown!r}"
        ) from None


def repair_request(problem: str) -> str:
    return (
        f"Your previous reply could not be used: {problem}. Reply again with only the JSON "
        "object in the requested format: no prose, no markdown, nothing before or after it."
    )
