"""Failure modes known while the search runs: every failing test joins a mode when its
generation is told.

A mode is a group of failing tests that failed the same way:

* the same objectives fell below their thresholds;
* the same key, where the fitness names one (``details["mode"]``: what went wrong in its
  own terms, e.g. the harm category of an unsafe answer), so that free-text answers are
  grouped by the fault, not by their wording;
* otherwise, answers alike in meaning: an answer joins the mode (of its objectives) whose
  centre, the mean of its members' unit vectors, is nearest, if within cosine distance
  ``DISTANCE``; else it opens a new mode.

A failing input met before (same text) keeps its earlier mode and adds nothing. Tests are
assigned in a fixed order (generation, then index within it), never in the order they
complete, so a run always gives the same modes, a resumed run rebuilds them by replaying
its archive, and the offline grouping (:mod:`stellar.analysis.failure_modes`) is this same
assignment applied to the archive in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from stellar.records import MODE_KEY, TestRecord
from stellar.text.embeddings import Embedder, get_embedder

DISTANCE = 0.4  # cosine distance from a mode's centre within which an answer joins it

Thresholds = tuple[Mapping[str, float], Mapping[str, float]]  # the oracle's, post-search's


def mode_embedder(duplicates_embedder: str | None) -> str:
    """The embedder that groups a run's answers: its duplicate filter's, hashing without one."""
    return duplicates_embedder if duplicates_embedder not in (None, "", "none") else "hashing"


@dataclass(frozen=True)
class FailingTest:
    input: str
    answer: str
    failed: tuple[str, ...]  # the objectives below their thresholds ("failure" if unknown)
    key: str | None = None  # the fitness's name for what went wrong, if it gives one


def failed_objectives(scores: Mapping[str, float], below: Mapping[str, float]) -> tuple[str, ...]:
    """The objectives whose score is under its threshold; ("failure",) when none is known."""
    return tuple(sorted(n for n, limit in below.items() if scores.get(n, 1.0) < limit)) or (
        "failure",
    )


def failing_test(record: TestRecord, thresholds: Thresholds) -> FailingTest:
    """A failing record with the objectives that failed (the post-search judge's if it
    decided) and the fitness's mode key."""
    below, post = thresholds
    if record.verdict is not None:
        failed = failed_objectives(record.verdict.scores, post)
        key = record.verdict.details.get(MODE_KEY)
    else:
        failed = failed_objectives(record.scores, below)
        key = record.details.get(MODE_KEY)
    return FailingTest(
        record.input_text or "",
        record.response_text or "",
        failed,
        None if key is None else str(key),
    )


class ModeTracker:
    """Assigns failing tests to modes, one batch at a time, in the order given."""

    def __init__(self, embedder: Embedder | str, distance: float = DISTANCE) -> None:
        self.embedder = embedder
        self.distance = distance
        self.sizes: list[int] = []  # distinct failing inputs per mode id
        self.groups: list[tuple[tuple[str, ...], str | None]] = []  # mode id -> (failed, key)
        self._totals: list[np.ndarray | None] = []  # mode id -> sum of member vectors
        self._keyed: dict[tuple[tuple[str, ...], str], int] = {}
        self._by_input: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.sizes)

    def assign(self, tests: Sequence[FailingTest], vectors: np.ndarray | None = None) -> list[int]:
        """The mode id of each test (ids count from 0 in the order modes open); ``vectors``:
        the answers' unit vectors, one row per test, if the caller has them already."""
        fresh: dict[str, FailingTest] = {}  # the first test of each input not met before
        rows: dict[str, int] = {}
        for row, test in enumerate(tests):
            if test.input not in self._by_input and test.input not in fresh:
                fresh[test.input] = test if test.key or test.answer.strip() else _empty(test)
                rows[test.input] = row
        plain = [t for t in fresh.values() if t.key is None]
        if vectors is None:
            found = iter(self._vectors([t.answer for t in plain]))
        else:
            found = iter(np.asarray(vectors, dtype=np.float64)[[rows[t.input] for t in plain]])
        for test in fresh.values():
            if test.key is None:
                mode = self._nearest(test.failed, next(found))
            elif (mode := self._keyed.get((test.failed, test.key))) is None:
                mode = self._keyed[(test.failed, test.key)] = self._open(test, None)
            self.sizes[mode] += 1
            self._by_input[test.input] = mode
        return [self._by_input[t.input] for t in tests]

    def _vectors(self, answers: list[str]) -> np.ndarray:
        if not answers:
            return np.empty((0, 0))
        if isinstance(self.embedder, str):
            self.embedder = get_embedder(self.embedder)
        vectors = np.asarray(self.embedder.embed(answers), dtype=np.float64)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def _nearest(self, failed: tuple[str, ...], vector: np.ndarray) -> int:
        best, similarity = None, -np.inf
        for mode, total in enumerate(self._totals):
            if total is not None and self.groups[mode][0] == failed:
                found = float(total @ vector) / max(float(np.linalg.norm(total)), 1e-12)
                if found > similarity:  # ties: the mode opened first
                    best, similarity = mode, found
        if best is None or similarity < 1.0 - self.distance:
            return self._open(FailingTest("", "", failed), vector)
        self._totals[best] = self._totals[best] + vector
        return best

    def _open(self, test: FailingTest, vector: np.ndarray | None) -> int:
        self.sizes.append(0)
        self.groups.append((test.failed, test.key))
        self._totals.append(None if vector is None else vector.copy())
        return len(self.sizes) - 1


def _empty(test: FailingTest) -> FailingTest:
    """An empty answer has no meaning to compare: its own key."""
    return FailingTest(test.input, test.answer, test.failed, EMPTY)


EMPTY = "(empty answer)"


def count_modes(
    records: Sequence[TestRecord], thresholds: Thresholds, embedder: Embedder | str
) -> int:
    """How many modes the failures of ``records`` (final verdicts) fall in, assigned as the
    run and the report assign them: in (generation, index) order."""
    failing = sorted((r for r in records if r.is_failure), key=lambda r: (r.generation, r.index))
    tracker = ModeTracker(embedder)
    tracker.assign([failing_test(r, thresholds) for r in failing])
    return len(tracker)


class RunModes:
    """A run's modes: the failing tests of each generation told, assigned in index order."""

    def __init__(self, embedder: Embedder | str, below: Mapping[str, float] | None) -> None:
        self.tracker = ModeTracker(embedder)
        self.thresholds: Thresholds = (below or {}, {})

    def __len__(self) -> int:
        return len(self.tracker)

    def told(self, records: Sequence[TestRecord | None]) -> list[int | None]:
        """Each record's mode id, None where it did not fail (or was not run)."""
        failing = sorted(
            (r for r in records if r is not None and r.is_failure), key=lambda r: r.index
        )
        ids = self.tracker.assign([failing_test(r, self.thresholds) for r in failing])
        found = {r.index: mode for r, mode in zip(failing, ids, strict=True)}
        return [None if r is None else found.get(r.index) for r in records]
