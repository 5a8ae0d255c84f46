"""The environment an agent acts in: tools over a per-test copy of a database, every call kept.

STELLAR, not the agent, owns the tools. A test gets its own :class:`Environment`: a deep copy
of the use case's database (``State``: table name -> rows), the tools described by JSON
schemas, and the test's tool perturbations (an error, a timeout, stale data, an instruction
planted in a text field). The agent only asks for calls; :meth:`Environment.call` checks the
arguments against the tool's schema, runs the tool and records the call and its result in
``trace``, so the oracles judge what happened, not what the agent says happened. A bad call
(an unknown tool, arguments that are not JSON or break the schema, a tool that raises) is
answered with an error result the agent can read, and recorded as such: it never raises.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import jsonschema

from stellar.errors import StellarError

State = dict[str, list[dict[str, Any]]]  # table name -> rows


class ToolError(Exception):
    """A tool refuses a call (a closed shop, an unknown id): its message is the result."""


@dataclass(frozen=True)
class Tool:
    """One tool: its name, what it does, the JSON Schema of its arguments (an object), the
    function run on ``(state, arguments)``, and whether it changes the state."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[[State, dict[str, Any]], Any]
    writes: bool = False

    def spec(self) -> dict[str, Any]:
        """The tool as the OpenAI-compatible ``tools`` list describes it."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def check_tools(tools: list[Tool]) -> None:
    """Refuse, in one line each, a tool whose parameters are not a valid JSON Schema of an
    object, and two tools of one name (a :class:`StellarError`: exit 2 at load)."""
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise StellarError(f"tool {tool.name!r} is defined twice")
        seen.add(tool.name)
        try:
            jsonschema.Draft202012Validator.check_schema(tool.parameters)
        except jsonschema.SchemaError as exc:
            raise StellarError(
                f"tool {tool.name!r}: parameters are not a valid JSON Schema: {exc.message}"
            ) from None
        if tool.parameters.get("type") != "object":
            raise StellarError(f"tool {tool.name!r}: parameters must describe an object")


@dataclass
class Perturbation:
    """How one tool misbehaves in a test: ``error`` (answers an error), ``timeout`` (answers
    that it timed out), ``stale`` (answers from the database as it was when the test began),
    ``inject`` (``text`` is planted in every string field named ``field`` of its result)."""

    kind: str
    text: str = ""
    field: str = ""


KINDS = ("error", "timeout", "stale", "inject")


@dataclass
class ToolCall:
    """One call the agent asked for, as run: its arguments as sent, the result or the error,
    and the perturbation that shaped it."""

    step: int
    name: str
    arguments: Any
    result: Any = None
    error: str | None = None
    perturbed: str | None = None
    turn: int = 0  # the user turn it answered (set by the session)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def answer(self) -> str:
        """The result as the agent reads it (JSON text; an error as ``{"error": ...}``)."""
        body = {"error": self.error} if self.error is not None else self.result
        return json.dumps(body, ensure_ascii=False, default=str)


@dataclass
class Environment:
    """A test's own copy of the database and tools; ``trace`` holds every call in order."""

    tools: list[Tool]
    state: State
    perturbations: Mapping[str, Perturbation] = field(default_factory=dict)
    trace: list[ToolCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.state = copy.deepcopy(self.state)
        self.initial: State = copy.deepcopy(self.state)
        self._by_name = {tool.name: tool for tool in self.tools}
        unknown = sorted(set(self.perturbations) - set(self._by_name))
        if unknown:
            raise StellarError(f"a perturbation names an unknown tool: {', '.join(unknown)}")

    def specs(self) -> list[dict[str, Any]]:
        return [tool.spec() for tool in self.tools]

    def call(self, name: str, arguments: Any) -> ToolCall:
        """Run one call (``arguments``: a mapping, or its JSON text as a model writes it)."""
        call = ToolCall(len(self.trace) + 1, str(name), arguments)
        self.trace.append(call)
        tool = self._by_name.get(call.name)
        if tool is None:
            call.error = f"unknown tool {call.name!r}; the tools are {', '.join(self._by_name)}"
            return call
        parsed, problem = _arguments(tool, arguments)
        if problem is not None:
            call.error = problem
            return call
        call.arguments = parsed
        perturbation = self.perturbations.get(tool.name)
        if perturbation is not None and perturbation.kind in ("error", "timeout"):
            call.perturbed = perturbation.kind
            call.error = {
                "error": "the service is unavailable, please try again later",
                "timeout": "the call timed out",
            }[perturbation.kind]
            return call
        stale = perturbation is not None and perturbation.kind == "stale" and not tool.writes
        state = copy.deepcopy(self.initial) if stale else self.state
        try:
            call.result = tool.function(state, parsed)
        except ToolError as exc:
            call.error = str(exc)
        except Exception as exc:  # a broken tool is recorded, the agent reads an error
            call.error = f"the tool failed: {type(exc).__name__}: {exc}".rstrip(": ")
        if stale:
            call.perturbed = "stale"
        if perturbation is not None and perturbation.kind == "inject" and call.error is None:
            call.result, planted = _plant(call.result, perturbation)
            call.perturbed = "inject" if planted else None
        return call

    def diff(self) -> dict[str, Any]:
        """What changed since the test began, per table: rows ``added``, ``removed`` and
        ``changed`` (``{"before": row, "after": row}``), matched by ``id``."""
        changes: dict[str, Any] = {}
        for table in sorted(set(self.initial) | set(self.state)):
            before = {row.get("id"): row for row in self.initial.get(table, [])}
            after = {row.get("id"): row for row in self.state.get(table, [])}
            added = [after[k] for k in after if k not in before]
            removed = [before[k] for k in before if k not in after]
            changed = [
                {"before": before[k], "after": after[k]}
                for k in after
                if k in before and before[k] != after[k]
            ]
            if added or removed or changed:
                changes[table] = {"added": added, "removed": removed, "changed": changed}
        return changes


def _arguments(tool: Tool, arguments: Any) -> tuple[dict[str, Any], str | None]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return {}, f"the arguments of {tool.name} are not JSON: {exc.msg}"
    if not isinstance(arguments, dict):
        return {}, f"the arguments of {tool.name} must be an object"
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(tool.parameters).iter_errors(arguments)
    )
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "arguments"
        return {}, f"bad arguments for {tool.name}: {where}: {error.message}"
    return dict(arguments), None


def _plant(result: Any, perturbation: Perturbation) -> tuple[Any, bool]:
    """``result`` with ``perturbation.text`` appended to each string field it names."""
    planted = False

    def walk(value: Any) -> Any:
        nonlocal planted
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key == perturbation.field and isinstance(item, str):
                    out[key], planted = f"{item} {perturbation.text}".strip(), True
                else:
                    out[key] = walk(item)
            return out
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    return walk(copy.deepcopy(result)), planted
