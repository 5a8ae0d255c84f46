"""The files of a run directory, named in one place."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

ARCHIVE_NAME = "archive.sqlite"
CONFIG_NAME = "config.yaml"
SUMMARY_NAME = "summary.json"
VECTORS_NAME = "duplicates.f32"  # the duplicate filter's vectors, reloaded on resume
EXPORT_DIR = "export"


def new_run_dir(out: Path, name: str, algorithm: str, seed: int) -> Path:
    """A fresh directory name ``NAME-ALGORITHM-sSEED-TIMESTAMP`` under ``out``."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = out / f"{name}-{algorithm.split(':')[-1]}-s{seed}-{stamp}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    (run_dir / SUMMARY_NAME).write_text(json.dumps(summary, indent=2), encoding="utf-8")


def read_summary(run_dir: Path) -> dict[str, Any]:
    """The run's summary, or {} when it has none (yet) or it cannot be read."""
    try:
        data = json.loads((Path(run_dir) / SUMMARY_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
