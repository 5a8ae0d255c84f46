"""Failure modes: the distinct ways a system fails, not the same failure in many wordings.

Failing tests are grouped first by which objectives failed (the scores below the oracle's
thresholds), then by the system's answer: answers are embedded and clustered by
agglomerative clustering (average linkage, cosine distance) cut at ``DISTANCE``, so the
number of modes follows from the data instead of collapsing to two clusters. Beyond
``CLUSTERED`` answers in a group, a seeded random sample of that many is clustered and every
other answer joins the cluster of its nearest sampled answer, or, where no sampled answer
is within ``DISTANCE``, is clustered again with the others like it, so that a rare mode the
sample missed stays a mode (the linkage needs memory and time quadratic in the answers:
10,000 of them would take 400 MB and ~10 s). A mode is titled by its failed objectives and the
opening of its most typical answer (the medoid: the answer nearest the mode's centre), with the
examples nearest to its centre.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from sklearn.cluster import AgglomerativeClustering

from stellar.analysis.interactions import failure_pairs, run_space, valid_pairs
from stellar.archive import open_run
from stellar.errors import StellarError
from stellar.records import TestRecord
from stellar.rundir import CONFIG_NAME
from stellar.text.embeddings import Embedder, get_embedder

DISTANCE = 0.4  # cosine distance where answer clusters stop merging (paraphrases: < 0.3)
EXAMPLES = 3
OPENING = 70  # characters of the typical answer a mode's title quotes at most
CLUSTERED = 2_000  # answers per group clustered by linkage; the others join their nearest
_BLOCK = 512  # answers compared with the sample per matrix product (8 MB each)


@dataclass(frozen=True)
class FailingTest:
    input: str
    answer: str
    failed: tuple[str, ...]  # the objectives below their thresholds ("failure" if unknown)


@dataclass
class FailureMode:
    label: str
    failed: tuple[str, ...]
    size: int
    examples: list[tuple[str, str]]  # (input, answer), nearest to the mode's centre first
    members: list[int] = field(default_factory=list)  # indices into the tests grouped


def failed_objectives(scores: Mapping[str, float], below: Mapping[str, float]) -> tuple[str, ...]:
    """The objectives whose score is under its threshold; ("failure",) when none is known."""
    return tuple(sorted(n for n, limit in below.items() if scores.get(n, 1.0) < limit)) or (
        "failure",
    )


Thresholds = tuple[dict[str, float], dict[str, float]]  # the oracle's, the post-search judge's


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


def failing_test(record: TestRecord, thresholds: Thresholds) -> FailingTest:
    """A failing record with the objectives that failed (the post-search judge's if it
    decided)."""
    below, post = thresholds
    if record.verdict is not None:
        failed = failed_objectives(record.verdict.scores, post)
    else:
        failed = failed_objectives(record.scores, below)
    return FailingTest(record.input_text or "", record.response_text or "", failed)


def failure_modes(
    tests: Sequence[FailingTest], embedder: Embedder | str, distance: float = DISTANCE
) -> list[FailureMode]:
    """The modes of ``tests``, largest first; ``members`` index into ``tests``."""
    if not tests:
        return []
    model = get_embedder(embedder) if isinstance(embedder, str) else embedder
    vectors = np.asarray(model.embed([t.answer for t in tests]), dtype=float)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    modes = []
    for failed in sorted({t.failed for t in tests}):
        group = np.array([i for i, t in enumerate(tests) if t.failed == failed])
        labels = _clusters(vectors[group], distance)
        for cluster in range(int(labels.max()) + 1):
            members = group[labels == cluster]
            centre = vectors[members].mean(axis=0)
            nearest = members[np.argsort(-(vectors[members] @ centre), kind="stable")]
            examples = list(dict.fromkeys((tests[i].input, tests[i].answer) for i in nearest))
            label = mode_title(failed, examples[0][1])
            modes.append(
                FailureMode(label, failed, len(members), examples[:EXAMPLES], members.tolist())
            )
    return sorted(modes, key=lambda m: (-m.size, m.label))


def mode_title(failed: Sequence[str], typical_answer: str) -> str:
    """A mode's title: the objectives that failed and the opening of its most typical answer,
    e.g. ``content failed: "Sorry, I'm not sure what kind of place you are looking…"``."""
    what = "failed" if tuple(failed) == ("failure",) else f"{' + '.join(failed)} failed"
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


def _clusters(vectors: np.ndarray, distance: float) -> np.ndarray:
    if len(vectors) == 1:
        return np.zeros(1, dtype=int)
    # on unit vectors the euclidean distance is sqrt(2 x cosine distance); empty answers
    # (zero vectors) stay defined
    clustering = AgglomerativeClustering(
        n_clusters=None, distance_threshold=float(np.sqrt(2 * distance)), linkage="average"
    )
    if len(vectors) <= CLUSTERED:
        return clustering.fit_predict(vectors)
    sample = np.sort(np.random.default_rng(0).choice(len(vectors), CLUSTERED, replace=False))
    sampled = vectors[sample]
    labels = clustering.fit_predict(sampled)
    nearest = np.empty(len(vectors), dtype=int)
    far = np.zeros(len(vectors), dtype=bool)
    for i in range(0, len(vectors), _BLOCK):
        distances = np.sqrt(np.maximum(_squared_distances(vectors[i : i + _BLOCK], sampled), 0.0))
        nearest[i : i + _BLOCK] = np.argmin(distances, axis=1)
        far[i : i + _BLOCK] = distances.min(axis=1) > clustering.distance_threshold
    labels = labels[nearest]
    if far.any():  # answers like no sampled one (a rare mode): clustered on their own
        labels[far] = labels.max() + 1 + _clusters(vectors[far], distance)
    return labels


def _squared_distances(rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    return (
        np.sum(rows * rows, axis=1)[:, np.newaxis]
        - 2 * rows @ others.T
        + np.sum(others * others, axis=1)
    )


def run_failure_modes(run_dir: str | Path) -> list[FailureMode]:
    """A run's failure modes (one test per distinct input), with the run's duplicate embedder
    (hashing when it has none)."""
    return _run_modes(_failures(run_dir), _stored(run_dir))


def _failures(run_dir: str | Path) -> list[TestRecord]:
    """The failing tests alone: a large run's archive holds many times more duplicates and
    passing tests (50,859 rows for 2,588 failures at 10,000 random tests: 0.3 GB read)."""
    with open_run(run_dir) as archive:
        return [r for r in archive.records(failures_only=True) if r.is_failure]


def _run_modes(failures: list[TestRecord], config: dict) -> list[FailureMode]:
    thresholds = _thresholds(config)
    unique: dict[str, FailingTest] = {}
    for record in failures:
        unique.setdefault(record.input_text or "", failing_test(record, thresholds))
    embedder = (config.get("duplicates") or {}).get("embedder") or "hashing"
    return failure_modes(list(unique.values()), "hashing" if embedder == "none" else embedder)


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
