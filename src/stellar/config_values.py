"""Values that both the run configuration and the command line check: the bounds of the
numeric settings, the duration syntax and the word ``offline``.

It imports nothing of STELLAR's, so the command line can check its flags (and answer a usage
error) without loading the configuration's models.
"""

from __future__ import annotations

import re

OFFLINE = "offline"  # --generator/--sut offline: the use case's own component
MAX_POPULATION = 100_000
MAX_SEED = 2**32 - 1  # what numpy and pymoo take
MAX_CONCURRENCY = 1024


def parse_duration(text: str) -> float:
    """'90', '90s', '15m', '2h' -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if not match:
        raise ValueError(f"not a duration: {text!r} (use 90, 90s, 15m or 2h)")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
