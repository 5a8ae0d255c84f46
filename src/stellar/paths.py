"""Where STELLAR keeps its caches: one root for all of them."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$STELLAR_CACHE_DIR``, else ``$XDG_CACHE_HOME/stellar``, else ``~/.cache/stellar``.

    Model answers, covering arrays and the data use cases build live here.
    """
    explicit = os.environ.get("STELLAR_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "stellar"
