"""What must hold before a planned turn is sent, read from the replies so far.

A plan is written before the conversation runs, so a turn that reacts to what the system
offered ("not that one", "the second one", "yes, let's go") may find nothing to react to:
the system offered nothing, or one item. Sending it anyway makes the simulated user say
something no person would, and the system's answer to it tells nothing. The runner skips
such a turn and marks it (``data["skipped"]``, a line in the transcript).

Preconditions look at the last reply that is not small talk (act ``detour``: an answer to
an aside keeps what was offered before it), and at its ``data`` only as items, so they hold
for any system that returns a list (a list, or a mapping holding one):

* ``offered``: the reply returned at least one item;
* ``listed``: its text names two or more of the items it returned (by their ``name``), so
  that "the second one" counts in something the user heard;
* ``asked``: its text asks the user a yes/no question ("Shall I do ...?", "Do you want me
  to ...?", "... please confirm?"), so that a "yes" answers something: an agent that did not
  understand and asked "which one?" is not told "yes, go ahead".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

OFFERED, LISTED, ASKED = "offered", "listed", "asked"
SMALL_TALK = "detour"
YES_NO_OPENERS = ("shall", "should", "do", "does", "would", "will", "can", "could", "may",
                  "is", "are", "want", "ok", "okay", "right")  # fmt: skip


def unmet(requires: str, exchanges: Sequence[dict[str, Any]]) -> str | None:
    """Why ``requires`` does not hold after ``exchanges`` (None: it holds, or none asked)."""
    if not requires:
        return None
    reply = next((e for e in reversed(exchanges) if e.get("act") != SMALL_TALK), None)
    if requires == ASKED:
        asked = reply is not None and asks_yes_no(str(reply.get("answer", "")))
        return None if asked else "the last answer asked no yes/no question"
    items = [] if reply is None else _items(reply.get("data"))
    if not items:
        return "the last answer offered nothing"
    if requires == LISTED:
        text = str(reply.get("answer", "") if reply else "").lower()
        names = {str(i.get("name")).lower() for i in items if isinstance(i, dict) and i.get("name")}
        if sum(1 for name in names if name in text) < 2:
            return "the last answer named fewer than two to choose from"
    return None


def asks_yes_no(text: str) -> bool:
    """Whether ``text`` holds a question one answers with yes or no (its first word an
    auxiliary verb, or it asks to confirm)."""
    for question in re.findall(r"[^.!?]*\?", text):
        words = re.findall(r"[a-z']+", question.lower())
        if words and (words[0] in YES_NO_OPENERS or "confirm" in words):
            return True
    return False


def _items(data: Any) -> list[Any]:
    if isinstance(data, dict):
        data = next((v for v in data.values() if isinstance(v, list)), [])
    return list(data) if isinstance(data, list) else []
