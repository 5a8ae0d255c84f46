"""The use case's world: database, tools and policy, loaded once; a test's environment from
its plan.

A plan's ``environment`` section says what the test adds to the database (``bookings``: the
user's and other users' bookings the conversation is about), what changes behind the
agent's back once the test has begun (``background``: a venue closes, a booking is cancelled
by the venue; listings perturbed ``stale`` still show the database as it was), and how one
tool misbehaves (``perturbation``). Generator, system under test and fitness each ask
:func:`world` for the same ``(state, policy)`` and get the same object, so a user's state
file or policy is read and checked once, at load.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass, field
from typing import Any

from stellar.agent.environment import Environment, Perturbation, State, check_tools
from stellar.usecases.navi_agent.database import build_state, load_state
from stellar.usecases.navi_agent.policy import Policy, load_policy
from stellar.usecases.navi_agent.tools import make_tools


class World:
    """The base database, the tools and the policy of a run."""

    def __init__(self, state: str = "", policy: str = "") -> None:
        self.tools = make_tools()
        check_tools(self.tools)
        self.policy: Policy = load_policy(policy or None, self.tools)
        self.base: State = load_state(state) if state else build_state()

    def start(self, plan: dict[str, Any] | None) -> State:
        """The database as the test begins: the base and the plan's own rows."""
        section = (plan or {}).get("environment") or {}
        state = {table: list(rows) for table, rows in self.base.items()}
        state["bookings"] = state["bookings"] + copy.deepcopy(section.get("bookings", []))
        return state

    def environment(self, plan: dict[str, Any] | None = None) -> Environment:
        """A test's own environment (a plan of ``None``: the base database, as a probe or a
        single request gets)."""
        section = (plan or {}).get("environment") or {}
        raw = section.get("perturbation")
        perturbations = {}
        if raw:
            perturbations[raw["tool"]] = Perturbation(
                raw["kind"], raw.get("text", ""), raw.get("field", "")
            )
        scope = {raw["tool"]: raw["scope"]} if raw and raw.get("scope") else {}
        env = ScopedEnvironment(self.tools, self.start(plan), perturbations, scope=scope)
        apply_background(env.state, section.get("background", []))
        return env

    def live(self, plan: dict[str, Any] | None) -> State:
        """The database just after the test began (its background changes made)."""
        state = copy.deepcopy(self.start(plan))
        apply_background(state, ((plan or {}).get("environment") or {}).get("background", []))
        return state


@dataclass
class ScopedEnvironment(Environment):
    """An environment whose tool perturbation may be limited to calls about one thing
    (``scope``: tool -> the arguments a call must have, a value or a list of values, e.g. the
    booking the first goal is about), so that a test's other goals meet the tool working."""

    scope: dict[str, dict[str, Any]] = field(default_factory=dict)

    def call(self, name: str, arguments: Any) -> Any:
        wanted = self.scope.get(str(name))
        if wanted is None or _within(arguments, wanted):
            return super().call(name, arguments)
        kept = self.perturbations
        self.perturbations = {k: v for k, v in kept.items() if k != name}
        try:
            return super().call(name, arguments)
        finally:
            self.perturbations = kept


def _within(arguments: Any, wanted: dict[str, Any]) -> bool:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            return True
    if not isinstance(arguments, dict):
        return True
    return all(
        str(arguments.get(k, "")).upper()
        in {str(x).upper() for x in (v if isinstance(v, list) else [v])}
        for k, v in wanted.items()
    )


def apply_background(state: State, changes: list[dict[str, Any]]) -> None:
    """Make each change (``{"table", "id", "set"}``) to the row of that id."""
    for change in changes:
        for row in state.get(change["table"], []):
            if row.get("id") == change["id"]:
                row.update(change["set"])


@functools.cache
def world(state: str = "", policy: str = "") -> World:
    """The run's world for these options (read once per process)."""
    return World(state, policy)
