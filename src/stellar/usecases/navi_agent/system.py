"""The system under test of navi-agent: an agent in the use case's environment.

``sut: {type: navi-agent}`` is :class:`NaviAgentSystem`, an
:class:`~stellar.agent.session.AgentSystem` whose environments come from the use case's
world (database, tools, policy) and each test's plan. ``agent`` says which agent acts:
``builtin`` (the offline rule-based one, :mod:`~.agent`), or anything the generic drivers
build (:func:`build_agent`: a chat model with tools, a Python agent, an MCP agent), which
are then given the written policy as their instructions where they take them.
"""

from __future__ import annotations

from typing import Any

from stellar.agent.session import Agent, AgentSystem
from stellar.records import Response
from stellar.usecases.navi_agent.agent import BuiltinAgent
from stellar.usecases.navi_agent.world import World, world

BUILTIN = "builtin"


def build_agent(
    spec: str, model: Any = None, max_steps: int = 8, where: World | None = None
) -> Agent:
    """The agent ``spec`` names: the built-in one, else the generic drivers' (imported only
    then: they pull in model and MCP clients); a driven agent that takes a system prompt is
    told the policy."""
    where = where or world()
    if str(spec or BUILTIN).strip() == BUILTIN:
        return BuiltinAgent(where.policy)
    from stellar.agent.drivers import build_agent as driver

    agent = driver(spec, model, max_steps)
    if hasattr(agent, "system_prompt"):
        agent.system_prompt = where.policy.text
    return agent


class NaviAgentSystem(AgentSystem):
    """An agent acting in the navi-agent world; each conversation gets its own environment."""

    probe_needed = False  # the session keeps the whole conversation and hands it over each turn

    def __init__(
        self,
        agent: str = BUILTIN,
        model: Any = None,
        max_steps: int = 8,
        state: str = "",
        policy: str = "",
    ) -> None:
        self.world = world(state, policy)
        super().__init__(build_agent(agent, model, max_steps, self.world), self.world.environment)

    async def query(self, text: str) -> Response:
        """One request as a conversation of one turn, on the use case's database."""
        session = await self.open(None)
        try:
            return await session.send(text)
        finally:
            await session.close()

    async def aclose(self) -> None:
        """Nothing to free: environments belong to their tests."""


def build_system(
    agent: str = BUILTIN, model: Any = None, max_steps: int = 8, state: str = "", policy: str = ""
) -> NaviAgentSystem:
    """The hook other agents plug in through: the system under test for ``agent``."""
    return NaviAgentSystem(agent, model, max_steps, state, policy)
