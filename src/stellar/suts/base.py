"""The system-under-test interface."""

from __future__ import annotations

from typing import Protocol

from stellar.records import Response


class SUT(Protocol):
    """Takes the user's text, gives back a Response. Raising or timing out is a ``sut_error``.

    A SUT may also define ``async def warm(self, texts: list[str]) -> None``: the pipeline
    calls it with a generation's inputs before sending them one by one, so that a system
    which works faster in batches (an in-process model) can prepare them together. Its
    faults are ignored: each query then meets them itself.
    """

    async def query(self, text: str) -> Response: ...

    async def aclose(self) -> None: ...
