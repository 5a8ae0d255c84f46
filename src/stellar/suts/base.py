"""The system-under-test interface."""

from __future__ import annotations

from typing import Protocol

from stellar.records import Response


class SUT(Protocol):
    """Takes the user's text, gives back a Response. Raising or timing out is a ``sut_error``."""

    async def query(self, text: str) -> Response: ...

    async def aclose(self) -> None: ...
