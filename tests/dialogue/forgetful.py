"""Systems under test for the conversation run tests (imported by dotted path)."""

from __future__ import annotations

from stellar.records import Response
from stellar.usecases.navi.assistant import navi_assistant


class Forgetful:
    """Opens sessions, but each turn is answered as a first turn: it remembers nothing."""

    async def open(self) -> Forgetful:
        return self

    async def send(self, text: str) -> Response:
        return await navi_assistant().query(text)

    async def close(self) -> None:
        pass

    async def query(self, text: str) -> Response:
        return await self.send(text)


def single_turn(text: str) -> Response:
    """A plain function: it cannot hold a conversation."""
    return navi_assistant().answer(text)
