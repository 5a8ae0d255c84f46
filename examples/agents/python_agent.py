"""An example agent written as a Python function, as STELLAR tests one.

STELLAR calls ``reply(messages, tools)`` for each user turn: ``messages`` is the conversation
so far (the user's turn last), ``tools`` the environment's tools as callables
(``tools["search_venues"](query="thai")``); a call that errs raises ``ToolCallError``. This
one only looks things up: it searches the venues for the user's words, lists the user's
bookings when asked about them, and never books, changes or cancels, so STELLAR finds every
task it leaves undone.

    stellar run navi-agent --option agent=python:examples.agents.python_agent:reply --tests 20
"""

from __future__ import annotations

import re
from typing import Any

from stellar.agent.python_agent import ToolCallError


def reply(messages: list[dict[str, Any]], tools: Any) -> str:
    said = str(messages[-1]["content"]).lower()
    try:
        if "booking" in said:
            bookings = tools["list_bookings"](user="user-1")
            return f"You have {len(bookings)} bookings." if bookings else "You have no bookings."
        words = [w for w in re.findall(r"[a-z]{4,}", said) if w not in STOP]
        for word in words:
            found = tools["search_venues"](query=word)
            if found:
                names = ", ".join(venue["name"] for venue in found[:3])
                return f"I found {names}. I can only look things up, not book."
    except ToolCallError as error:
        return f"Sorry, that did not work: {error}"
    return "Sorry, I found nothing for that."


STOP = {"please", "table", "book", "find", "tonight", "people", "with", "want", "would", "like"}
