"""T-wise combinatorial baseline: the rows of a covering array of strength t, shuffled.

The covering array is built by ``testflows.combinatorics`` (IPOG) over value *indices*, so it
does not depend on how values hash, and cached as JSON under
``covering-arrays/`` under STELLAR's cache root (``stellar.paths``), keyed by the features'
names and values and the strength: building one for 11 features at t=4 takes about 15 s.
Constraints are applied to each row, as for every other algorithm; rows that constraints turn
into repeats of an earlier row are asked once.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations
from operator import itemgetter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from testflows.combinatorics import CoveringArray

from stellar.features import Candidate, FeatureSpace
from stellar.paths import cache_root

CACHE_VERSION = 1
MAX_STRENGTH = 6  # covering arrays grow fast with t: t=4 over 11 features takes about 15 s


def t_tuples(values: Mapping[str, Any], names: Sequence[str], t: int) -> set[tuple]:
    """The t-tuples ``(feature indices, values)`` one candidate covers (indices into names)."""
    row = tuple(values[name] for name in names)
    return {(combo, get(row)) for combo, get in _getters(len(names), t)}


@functools.lru_cache(maxsize=32)
def _getters(n: int, t: int) -> tuple[tuple[tuple[int, ...], Callable[[tuple], tuple]], ...]:
    """One ``(combo, getter)`` per t-subset of n positions; a getter always returns a tuple."""
    if t == 1:
        return tuple(((i,), lambda row, i=i: (row[i],)) for i in range(n))
    return tuple((combo, itemgetter(*combo)) for combo in combinations(range(n), t))


def cache_dir() -> Path:
    """Where covering arrays are cached (see :func:`stellar.paths.cache_root`)."""
    return cache_root() / "covering-arrays"


# arrays handed to this process by an experiment, by cache key (see ``prime``)
_PRIMED: dict[str, list[tuple[int, ...]]] = {}


def array_key(space: FeatureSpace, strength: int) -> str:
    """The name of the covering array of ``space`` at ``strength`` (its cache key)."""
    return _cache_key(space, strength)


def prime(arrays: Mapping[str, Sequence[Sequence[int]]]) -> None:
    """Hand this process covering arrays built elsewhere (``{array_key: rows}``): a run asks
    them instead of building or reading its own. Rows that do not fit the space are ignored."""
    for key, rows in arrays.items():
        _PRIMED[key] = [tuple(row) for row in rows]


def covering_array(space: FeatureSpace, strength: int) -> list[tuple[int, ...]]:
    """Rows of value indices covering every t-tuple of the unconstrained space (primed, else
    cached, else built); a fresh list each call."""
    key = _cache_key(space, strength)
    sizes = [len(f.values) for f in space.features]
    primed = _PRIMED.get(key)
    if primed is not None and _fits(primed, sizes):
        return list(primed)
    path = cache_dir() / f"{key}.json"
    rows = _read_cache(path, sizes)
    if rows is None:
        names = space.names
        params = {f.name: list(range(len(f.values))) for f in space.features}
        rows = [tuple(row[n] for n in names) for row in CoveringArray(params, strength)]
        _write_cache(path, rows)
    return rows


def _cache_key(space: FeatureSpace, strength: int) -> str:
    """Hash of the feature names, typed values and strength."""
    features = [[f.name, [[type(v).__name__, v] for v in f.values]] for f in space.features]
    key = json.dumps({"version": CACHE_VERSION, "strength": strength, "features": features})
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _read_cache(path: Path, sizes: list[int]) -> list[tuple[int, ...]] | None:
    """Cached rows, or None if absent, unreadable or not an array of this space."""
    try:
        rows = [tuple(row) for row in json.loads(path.read_text(encoding="utf-8"))["rows"]]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return rows if _fits(rows, sizes) else None


def _fits(rows: Sequence[Sequence[int]], sizes: list[int]) -> bool:
    """Whether ``rows`` is a non-empty array of value indices of a space with ``sizes``."""
    return bool(rows) and all(
        len(row) == len(sizes)
        and all(type(i) is int and 0 <= i < n for i, n in zip(row, sizes, strict=True))
        for row in rows
    )


def _write_cache(path: Path, rows: list[tuple[int, ...]]) -> None:
    """Write atomically; a cache that cannot be written is not an error."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"rows": rows}, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


class TwiseSearch:
    """Asks the rows of a t-wise covering array in a seeded order, ``population`` at a time.

    ``strength`` larger than the number of features is clipped to it (``self.strength``); a
    configuration may ask for at most ``MAX_STRENGTH``.
    When the rows run out, ``ask()`` returns ``[]`` and the run ends as exhausted.
    """

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        population: int = Field(20, ge=1, description="rows asked per batch")
        strength: int = Field(
            4, ge=1, le=MAX_STRENGTH, description="t: every t-tuple of values is covered"
        )

    name = "twise"

    def __init__(
        self,
        space: FeatureSpace,
        n_objectives: int = 1,
        seed: int = 0,
        population: int = 20,
        strength: int = 4,
    ) -> None:
        if population < 1:
            raise ValueError("population must be at least 1")
        if strength < 1:
            raise ValueError(f"strength must be at least 1, got {strength}")
        self.space, self.population, self.seed = space, population, seed
        self.strength = min(strength, len(space))
        self._rows: list[Candidate] | None = None
        self._next = 0
        self._total: set[tuple] | None = None

    @property
    def rows(self) -> list[Candidate]:
        """The constrained rows in asking order (the array is built on first use)."""
        if self._rows is None:
            rows = covering_array(self.space, self.strength)
            random.Random(self.seed).shuffle(rows)
            unique = {}  # constraints can turn rows into repeats (hospital rows): ask each once
            for row in rows:
                candidate = self.space.candidate(self._values(row))
                unique.setdefault(tuple(candidate.vector), candidate)
            self._rows = list(unique.values())
        return self._rows

    def ask(self) -> list[Candidate]:
        batch = self.rows[self._next : self._next + self.population]
        self._next += len(batch)
        return batch

    def tell(
        self, candidates: Sequence[Candidate], scores: Sequence[Sequence[float] | None]
    ) -> None:
        """T-wise testing learns nothing."""

    def report(self, executed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """T-tuple coverage of the executed candidates against the constrained array."""
        if self._total is None:
            self._total = self._tuples(c.values for c in self.rows)
        covered = self._tuples(executed) & self._total
        return {
            "strength": self.strength,
            "rows": len(self.rows),
            "rows_asked": self._next,
            "tuples_total": len(self._total),
            "tuples_covered": len(covered),
            "coverage": len(covered) / len(self._total) if self._total else 0.0,
        }

    def _values(self, row: Sequence[int]) -> dict[str, Any]:
        return {f.name: f.values[i] for f, i in zip(self.space.features, row, strict=True)}

    def _tuples(self, candidates: Iterable[Mapping[str, Any]]) -> set[tuple]:
        names, out = self.space.names, set()
        for values in candidates:
            out |= t_tuples(values, names, self.strength)
        return out
