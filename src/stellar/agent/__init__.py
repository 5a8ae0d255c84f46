"""Tool-using agents under test: the environment STELLAR owns, the loops that drive an agent
through it, and the oracles that judge the state it leaves (docs/agents.md)."""
