"""Planted faulty assistants for the conversation checks: the built-in assistant with one
fault each, as a stateful assistant written elsewhere might have it (issue 41)."""

from __future__ import annotations

import re

from stellar.records import Response
from stellar.usecases.navi.assistant import navi_assistant
from stellar.usecases.navi.conversation import NaviConversation


class _Wrapped:
    """Opens a conversation with the built-in assistant and passes each turn through
    :meth:`turn`, where the fault lives."""

    def __init__(self) -> None:
        self.inner: NaviConversation | None = None
        self.last = Response(text="")

    async def open(self) -> _Wrapped:
        fresh = type(self)()
        fresh.inner = await navi_assistant().open()
        return fresh

    async def send(self, text: str) -> Response:
        assert self.inner is not None
        reply = await self.turn(text)
        self.last = reply
        return reply

    async def turn(self, text: str) -> Response:
        assert self.inner is not None
        return await self.inner.send(text)

    async def close(self) -> None:
        if self.inner is not None:
            await self.inner.close()


class HearsOrdinals(_Wrapped):
    """Reads "let me think for a second" as "let's go with the second one": it starts the
    route to the second venue offered, and stays consistent with that afterwards."""

    async def turn(self, text: str) -> Response:
        assert self.inner is not None
        if re.search(r"\bfor a second\b", text, re.IGNORECASE):
            text = "Let's go with the second one."
        return await self.inner.send(text)


class ListsOnYes(_Wrapped):
    """Answers an acceptance ("yes, let's go") with the list it offered before, never
    starting the route."""

    async def turn(self, text: str) -> Response:
        assert self.inner is not None
        if re.search(r"\b(?:yes|let's go|go ahead|sounds good|perfect)\b", text, re.IGNORECASE):
            return self.last
        return await self.inner.send(text)
