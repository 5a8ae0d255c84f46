"""Continuing a run that was killed or interrupted (``stellar run --resume RUN_DIR``).

A run's state is its archive. Resuming builds the same components from the run's own
``config.yaml``, then re-tells the search every complete archived generation, asking and
telling in the order the run did (``stellar.run``): the search asks again with the same
seed, so it asks the same candidates, and is told the archived scores instead of running
them again. The duplicate filter is refilled from its saved vectors or the archived inputs
and the budgets count the archived tests, time and cost. The generations that were in flight
at the kill are completed by running only their candidates that have no record; the run
then goes on to its budget, so nothing is lost and nothing is run twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stellar.archive import open_run
from stellar.config import RunConfig, load_config
from stellar.errors import StellarError
from stellar.features import Candidate
from stellar.records import TestRecord
from stellar.rundir import CONFIG_NAME

Archived = dict[int, dict[int, TestRecord]]  # generation -> index -> record


def resume_config(run_dir: Path, overrides: dict[str, Any] | None = None) -> RunConfig:
    """The run's stored configuration, with new budgets (``budget.*`` overrides) only."""
    path = Path(run_dir) / CONFIG_NAME
    if not path.is_file():
        raise StellarError(f"{run_dir}: not a run directory (no {CONFIG_NAME}); cannot resume")
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    if other := sorted(k for k in given if not k.startswith("budget.")):
        raise StellarError(
            f"--resume continues a run as it was configured; only budgets may change, "
            f"not {', '.join(other)}"
        )
    done = _executed(Path(run_dir))
    if given.get("budget.tests") is not None and given["budget.tests"] < done:
        raise StellarError(
            f"--tests {given['budget.tests']}: the run has done {done} tests already; "
            "give at least that many"
        )
    return load_config(path, given)


def _executed(run_dir: Path) -> int:
    """Tests the run has sent to the system under test so far."""
    if not (run_dir / "archive.sqlite").exists():
        return 0
    with open_run(run_dir) as archive:
        counts = archive.counts()
    return counts["ok"] + counts["sut_error"] + counts["judge_error"]


def archived_generations(run_dir: Path) -> Archived:
    """Every archived record by generation and index (an empty run gives {})."""
    found: Archived = {}
    if not (Path(run_dir) / "archive.sqlite").exists():
        return found
    with open_run(run_dir, reviewed=False) as archive:  # the search saw the judge's verdicts
        for record in archive.records():
            found.setdefault(record.generation, {})[record.index] = record
    return found


def check_same_search(
    generation: int, candidates: list[Candidate], done: dict[int, TestRecord]
) -> None:
    """Refuse to resume when the search asks other candidates than the archive holds."""
    for index, record in done.items():
        asked = candidates[index].values if index < len(candidates) else None
        if asked is None or _plain(asked) != _plain(record.candidate):
            raise StellarError(
                f"cannot resume: at generation {generation}, test {index} the search asks "
                "another candidate than the archive holds (was the configuration, the feature "
                "space or the STELLAR version changed?)"
            )


def _plain(values: Any) -> str:
    return json.dumps(values, sort_keys=True, default=str)
