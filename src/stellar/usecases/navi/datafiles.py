"""The use case's data files (``data/*.yaml``), each read once."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).parent / "data"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def load_data(name: str) -> Any:
    """The parsed ``data/NAME``; shared between callers, so never change it."""
    with (DATA / name).open(encoding="utf-8") as file:
        return yaml.load(file, Loader=_LOADER)  # a safe loader
