"""Failure modes: the distinct ways a system fails, not the same failure in many wordings.

The grouping is the run's own (:mod:`stellar.modes`): failing tests grouped by the objectives
that failed, by the fitness's name for what went wrong where it gives one, and otherwise by
answers alike in meaning (cosine distance under ``DISTANCE`` from a mode's centre), assigned
in the archive's order, so that the modes a report shows are the modes the search saw
while it ran. A mode is titled by its failed objectives and the opening of its most typical
answer (the answer nearest the mode's centre), with the examples nearest to its centre.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from stellar.analysis.interactions import failure_pairs, run_space, valid_pairs
from stellar.archive import open_run
from stellar.errors import StellarError
from stellar.modes import (
    DISTANCE,
    EMPTY,
    FailingTest,
    ModeTracker,
    Thresholds,
    failed_objectives,
    failing_test,
    mode_embedder,
)
from stellar.records import TestRecord
from stellar.rundir import CONFIG_NAME
from stellar.text.embeddings import Embedder, get_embedder

__all__ = [
    "DISTANCE",
    "FailingTest",
    "FailureMode",
    "failed_objectives",
    "failing_test",
    "failure_modes",
    "mode_title",
    "run_failure_modes",
]

EXAMPLES = 3
OPENING = 70  # characters of the typical answer a mode's title quotes at most


@dataclass
class FailureMode:
    label: str
    failed: tuple[str, ...]
    size: int
    examples: list[tuple[str, str]]  # (input, answer), nearest to the mode's centre first
    members: list[int] = field(default_factory=list)  # indices into the tests grouped
    key: str | None = None  # the fitness's name for what went wrong, where it gives one
    inputs: list[str] = field(default_factory=list)  # every member's input


def run_thresholds(run_dir: str | Path) -> Thresholds:
    """The thresholds of a run's oracle and post-search judge, from its stored configuration
    (empty where the run has none or an oracle of its own)."""
    return _thresholds(_stored(run_dir))


def _thresholds(config: dict) -> Thresholds:
    oracle = config.get("oracle") or {}
    return oracle.get("below") or {}, (oracle.get("post_search") or {}).get("below") or {}


def _stored(run_dir: str | Path) -> dict:
    """The run's stored configuration, {} when it cannot be read."""
    try:
        config = yaml.safe_load((Path(run_dir) / CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return config if isinstance(config, dict) else {}


def failure_modes(
    tests: Sequence[FailingTest], embedder: Embedder | str, distance: float = DISTANCE
) -> list[FailureMode]:
    """The modes of ``tests`` (in the order given), largest first; ``members`` index into
    ``tests`` (a repeated input belongs to its first test's mode)."""
    if not tests:
        return []
    model = get_embedder(embedder) if isinstance(embedder, str) else embedder
    plain = [i for i, t in enumerate(tests) if t.key is None]  # keyed modes need no meaning
    found = np.asarray(model.embed([tests[i].answer for i in plain]), dtype=float)
    vectors = np.zeros((len(tests), found.shape[1] if plain else 1))
    if plain:
        vectors[plain] = found / np.maximum(np.linalg.norm(found, axis=1, keepdims=True), 1e-12)
    tracker = ModeTracker(model, distance)
    ids = np.array(tracker.assign(tests, vectors))
    modes = []
    for mode, (failed, key) in enumerate(tracker.groups):
        members = np.flatnonzero(ids == mode)
        centre = vectors[members].mean(axis=0)  # examples: the most typical answers first
        nearest = members[np.argsort(-(vectors[members] @ centre), kind="stable")]
        examples = list(dict.fromkeys((tests[i].input, tests[i].answer) for i in nearest))
        label = mode_title(failed, examples[0][1], key)
        modes.append(
            FailureMode(
                label,
                failed,
                tracker.sizes[mode],
                examples[:EXAMPLES],
                members.tolist(),
                key,
                list(dict.fromkeys(tests[i].input for i in members)),
            )
        )
    return sorted(modes, key=lambda m: (-m.size, m.label))


def mode_title(failed: Sequence[str], typical_answer: str, key: str | None = None) -> str:
    """A mode's title: the objectives that failed, the fitness's name for what went wrong
    (if any) and the opening of its most typical answer, e.g. ``content failed: "Sorry, I'm
    not sure what kind of place you are looking…"``."""
    what = "failed" if tuple(failed) == ("failure",) else f"{' + '.join(failed)} failed"
    if key is not None and key != EMPTY:  # an empty answer's title says so already
        what = f"{what} ({key})"
    return f"{what}: {opening(typical_answer)}"


def opening(text: str, limit: int = OPENING) -> str:
    """The first ``limit`` characters of ``text`` on one line, in quotes, cut at a word."""
    flat = re.sub(r"\s+", " ", text).strip()
    if not flat:
        return "(empty answer)"
    if len(flat) > limit:
        cut = flat[:limit]
        space = cut.rfind(" ")
        flat = (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:.-") + "…"
    return f"“{flat}”"


def mode_numbers(modes: Sequence[FailureMode]) -> dict[str, int]:
    """Each failing input's mode, numbered as the tables number modes: 1 the largest."""
    return {text: n for n, mode in enumerate(modes, start=1) for text in mode.inputs}


def run_failure_modes(run_dir: str | Path) -> list[FailureMode]:
    """A run's failure modes (one test per distinct input), with the run's duplicate embedder
    (hashing when it has none)."""
    return _run_modes(_failures(run_dir), _stored(run_dir))


def _failures(run_dir: str | Path) -> list[TestRecord]:
    """The failing tests alone (a large run's archive holds many times more duplicates and
    passing tests: 50,859 rows for 2,588 failures at 10,000 random tests), in the order the
    run assigned their modes."""
    with open_run(run_dir) as archive:
        failing = [r for r in archive.records(failures_only=True) if r.is_failure]
    return sorted(failing, key=lambda r: (r.generation, r.index))  # the order the run told


def _run_modes(failures: list[TestRecord], config: dict) -> list[FailureMode]:
    thresholds = _thresholds(config)
    unique: dict[str, FailingTest] = {}
    for record in failures:
        unique.setdefault(record.input_text or "", failing_test(record, thresholds))
    embedder = mode_embedder((config.get("duplicates") or {}).get("embedder"))
    return failure_modes(list(unique.values()), embedder)


def run_diversity(
    run_dir: str | Path, modes: list[FailureMode] | None = None
) -> tuple[int, int, int]:
    """A run's failure modes (``modes`` if already grouped), its 2-way failure pairs and the
    pairs its space allows."""
    failures = _failures(run_dir)
    if modes is None:
        modes = _run_modes(failures, _stored(run_dir))
    try:
        valid = len(valid_pairs(run_space(run_dir)))
    except (OSError, ValueError, StellarError):  # no readable feature space
        valid = 0
    return len(modes), len(failure_pairs(failures)), valid
