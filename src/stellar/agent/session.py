"""An agent as a system under test: each conversation gets its own environment.

An :class:`Agent` answers the user's latest turn, calling the environment's tools as it likes
(``environment.call``), and returns what it says to the user. :class:`AgentSystem` is the
system under test the pipeline talks to: ``open(plan)`` builds the test's environment from
its plan (the use case's ``environment`` function) and a session whose ``send`` runs the
agent for one user turn. Each reply's ``data`` holds that turn's calls, the agent's steps and
the database diff so far, so the last reply carries the final state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from stellar.agent.environment import Environment
from stellar.records import Response

Message = dict[str, Any]


class Agent(Protocol):
    """Anything that answers a user turn by acting in an environment."""

    async def reply(self, messages: list[Message], environment: Environment) -> str:
        """The agent's answer to ``messages`` (the conversation so far, the user's turn
        last); it may call ``environment.call`` any number of times first."""
        ...


class AgentSession:
    """One conversation of an agent in its own environment."""

    def __init__(self, agent: Agent, environment: Environment) -> None:
        self.agent, self.environment = agent, environment
        self.messages: list[Message] = []
        self.turn = 0

    async def send(self, text: str) -> Response:
        self.turn += 1
        first = len(self.environment.trace)
        self.messages.append({"role": "user", "content": text})
        answer = await self.agent.reply([dict(m) for m in self.messages], self.environment)
        answer = str(answer or "")
        self.messages.append({"role": "assistant", "content": answer})
        calls = self.environment.trace[first:]
        for call in calls:
            call.turn = self.turn
        data = {"calls": [c.to_dict() for c in calls], "diff": self.environment.diff()}
        return Response(text=answer, data=data)

    async def close(self) -> None:
        """Nothing to free: the environment is the test's own."""


class AgentSystem:
    """The system under test for an agent use case: ``environment(plan)`` builds a test's
    environment (the plan's ``environment`` section says what to seed and perturb)."""

    def __init__(self, agent: Agent, environment: Callable[[dict[str, Any] | None], Environment]):
        self.agent, self.environment = agent, environment

    async def open(self, plan: dict[str, Any] | None = None) -> AgentSession:
        return AgentSession(self.agent, self.environment(plan))
