"""A user's Python function as an agent: it gets the conversation and the tools as callables.

The function is ``(messages, tools) -> str``, plain or ``async``: ``messages`` is the
conversation so far (``role``/``content``, the user's turn last) and ``tools`` maps each tool's
name to a callable taking the arguments as keywords (``tools["book"](venue_id="v1")``) or as
one mapping. Every call goes through :meth:`Environment.call`, so it is checked against the
tool's schema and recorded exactly as a model's call would be. A call returns the tool's
result (a copy: changing it changes nothing recorded); a call that errs (an unknown tool, bad
arguments, the tool refused or failed, a perturbation) raises :class:`ToolCallError`, whose
message is the error text the environment recorded, so the function handles it as it would a
failing API. ``tools.specs`` holds the tools in OpenAI's ``tools`` form, for a function that
hands them to a model. A plain function runs on the event loop: keep it quick, or write it
``async`` when it waits on anything (a model, a network).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from stellar.agent.environment import Environment, ToolCall
from stellar.agent.session import Message

AgentFunction = Callable[[list[Message], "Tools"], str | Awaitable[str]]


class ToolCallError(Exception):
    """A tool call that erred; ``call`` is the call as recorded."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__(call.error)
        self.call = call


class Tools(Mapping[str, Callable[..., Any]]):
    """The environment's tools as callables, by name."""

    def __init__(self, environment: Environment) -> None:
        self.environment = environment
        self.specs = environment.specs()
        self._names = [spec["function"]["name"] for spec in self.specs]

    def __getitem__(self, name: str) -> Callable[..., Any]:
        if name not in self._names:
            raise KeyError(name)
        return self.caller(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def caller(self, name: str) -> Callable[..., Any]:
        """A callable for the tool ``name``, known or not (an unknown one errs when called,
        and the call is recorded): ``tools.caller("x")()`` is how a function tries one."""

        def call(arguments: Mapping[str, Any] | None = None, /, **keywords: Any) -> Any:
            sent = {**(arguments or {}), **keywords}
            done = self.environment.call(name, sent)
            if done.error is not None:
                raise ToolCallError(done)
            return copy.deepcopy(done.result)

        call.__name__ = name
        return call


class PythonAgent:
    """An :class:`~stellar.agent.session.Agent` that is a user's function (see the module)."""

    def __init__(self, function: AgentFunction) -> None:
        if not callable(function):
            raise TypeError(f"{function!r} is not callable")
        self.function = function

    async def reply(self, messages: list[Message], environment: Environment) -> str:
        answer = self.function([dict(m) for m in messages], Tools(environment))
        if inspect.isawaitable(answer):
            answer = await answer
        return "" if answer is None else str(answer)
