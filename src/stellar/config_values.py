"""Values that both the run configuration and the command line check: the bounds of the
numeric settings, the duration syntax and the word ``offline``.

It imports nothing of STELLAR's, so the command line can check its flags (and answer a usage
error) without loading the configuration's models.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

OFFLINE = "offline"  # --generator/--sut offline: the use case's own component
MAX_POPULATION = 100_000
MAX_SEED = 2**32 - 1  # what numpy and pymoo take
MAX_CONCURRENCY = 1024
MAX_REPEATS = 100  # repeats of each test (pass^k)


def parse_duration(text: str) -> float:
    """'90', '90s', '15m', '2h' -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if not match:
        raise ValueError(f"not a duration: {text!r} (use 90, 90s, 15m or 2h)")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be an http(s) endpoint (None: it can): no host, a space or a
    control character, a port outside 1..65535."""
    if not url.startswith(("http://", "https://")):
        return f"{url!r}: must start with http:// or https://"
    if re.search(r"[\s\x00-\x1f\x7f]", url):
        return f"{url!r} contains a space or a control character"
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # a bad [IPv6] address
        return f"{url!r}: {exc}"
    if not parts.hostname:
        return f"{url!r} names no host"
    try:
        port = parts.port
    except ValueError:  # not a number, or beyond 65535
        port = 0
    if port is not None and not 1 <= port <= 65535:
        return f"{url!r}: the port must be a number from 1 to 65535"
    return None
