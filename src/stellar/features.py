"""Feature spaces: features, declarative constraints, and the paper's vector encoding.

Encoding (paper, Section III): an ordinal value is encoded as ``index / len(values)``
(rating [3.5, 4, 4.5, 5]: 4 -> 0.25), a categorical value as its ``index``. Decoding rounds to
the nearest valid value, so any real vector the search operators produce decodes to valid
values.

Constraints are ``when`` / ``set`` rules::

    constraints:
      - when: {category: hospital}                      # equals
        set: {cuisine: none, payment: none}
      - when: {category: {not: [restaurant, cafe]}}     # not one of
        set: {cuisine: none}
      - when: {category: [hotel, bar]}                  # one of
        set: {parking: available}

Constraints are applied until nothing changes. At load time the file is rejected if rules
depend on each other in a cycle, or if two rules could fire together and set one feature to
different values; together these guarantee that applying the constraints always ends in a
candidate that satisfies every rule.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from stellar.errors import ConfigError
from stellar.yaml_loading import read_yaml_file

Kind = Literal["style", "content", "perturbation", "dialogue"]  # dialogue: stellar.dialogue
KINDS: tuple[str, ...] = ("style", "content", "perturbation", "dialogue")
Value = Any  # a YAML scalar: str, int, float or bool
GRID_CACHE = 8192  # candidates kept by grid point (about 6 MB for 8 features)


@dataclass(frozen=True)
class Feature:
    """A named, finite list of values of one kind, ordinal (ordered) or categorical."""

    name: str
    kind: Kind
    values: tuple[Value, ...]
    ordinal: bool = False

    @property
    def upper(self) -> float:
        """Largest encoded value."""
        n = len(self.values)
        return (n - 1) / n if self.ordinal else float(n - 1)

    def index(self, value: Value) -> int:
        try:
            return self._positions[_key(value)]
        except (KeyError, TypeError):  # not a value, or not hashable: compare one by one
            for i, v in enumerate(self.values):
                if _same(v, value):
                    return i
        raise ValueError(f"{value!r} is not a value of feature {self.name!r}")

    @functools.cached_property
    def _positions(self) -> dict[tuple[str, Value], int]:
        positions: dict[tuple[str, Value], int] = {}
        for i, v in enumerate(self.values):
            with contextlib.suppress(TypeError):
                positions.setdefault(_key(v), i)
        return positions

    def encode(self, value: Value) -> float:
        i = self.index(value)
        return i / len(self.values) if self.ordinal else float(i)

    def decode(self, x: float) -> Value:
        n = len(self.values)
        i = int(round(x * n if self.ordinal else x))  # noqa: RUF046 (NumPy 1 gives a float)
        return self.values[min(max(i, 0), n - 1)]


@dataclass(frozen=True)
class Condition:
    """``feature`` has one of ``allowed`` values."""

    feature: str
    allowed: frozenset[int]  # value indices


@dataclass(frozen=True)
class Constraint:
    """When every condition holds, set the given features to the given values."""

    when: tuple[Condition, ...]
    set: Mapping[str, Value]

    def applies(self, values: Mapping[str, Value], space: FeatureSpace) -> bool:
        return all(space[c.feature].index(values[c.feature]) in c.allowed for c in self.when)


@dataclass(frozen=True)
class Candidate:
    """One point of the space after constraints, with its encoded vector."""

    values: dict[str, Value]
    vector: tuple[float, ...]

    def describe(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.values.items())


@dataclass
class FeatureSpace:
    """Ordered features plus their constraints."""

    features: list[Feature]
    constraints: list[Constraint] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_name = {f.name: f for f in self.features}
        self._by_grid_point: dict[tuple[int, ...], Candidate] = {}  # candidates_from_vectors'

    def __getitem__(self, name: str) -> Feature:
        return self._by_name[name]

    def __len__(self) -> int:
        return len(self.features)

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.features]

    @property
    def lower_bounds(self) -> np.ndarray:
        return np.zeros(len(self.features))

    @property
    def upper_bounds(self) -> np.ndarray:
        return np.array([f.upper for f in self.features])

    @property
    def ordinal_mask(self) -> np.ndarray:
        return np.array([f.ordinal for f in self.features], dtype=bool)

    @property
    def size(self) -> int:
        """Number of value combinations before constraints."""
        return int(np.prod([len(f.values) for f in self.features], dtype=object))

    def encode(self, values: Mapping[str, Value]) -> tuple[float, ...]:
        return tuple(f.encode(values[f.name]) for f in self.features)

    def decode(self, vector: Sequence[float]) -> dict[str, Value]:
        if len(vector) != len(self.features):
            raise ValueError(f"vector has {len(vector)} entries, space has {len(self.features)}")
        if hasattr(vector, "tolist"):  # NumPy: Python floats are 5x faster to round
            vector = vector.tolist()
        return {f.name: f.decode(x) for f, x in zip(self.features, vector, strict=True)}

    def apply_constraints(self, values: Mapping[str, Value]) -> dict[str, Value]:
        """Apply constraints until nothing changes (terminates: rules are acyclic)."""
        out = dict(values)
        for _ in range(len(self.constraints) + 1):
            changed = False
            for rule in self.constraints:
                if rule.applies(out, self):
                    for name, value in rule.set.items():
                        if not _same(out[name], value):
                            out[name] = value
                            changed = True
            if not changed:
                return out
        raise RuntimeError("constraints did not settle; the load-time checks should prevent this")

    def satisfies(self, values: Mapping[str, Value]) -> bool:
        return all(
            all(_same(values[n], v) for n, v in rule.set.items())
            for rule in self.constraints
            if rule.applies(values, self)
        )

    def candidate(self, values: Mapping[str, Value]) -> Candidate:
        """Constrained candidate from values; the vector reflects the values really asked."""
        fixed = self.apply_constraints(values)
        return Candidate(values=fixed, vector=self.encode(fixed))

    def candidate_from_vector(self, vector: Sequence[float]) -> Candidate:
        return self.candidate(self.decode(vector))

    def candidates_from_vectors(self, X: np.ndarray) -> list[Candidate]:
        """``candidate_from_vector`` of each row, decoded at once. A grid point seen recently
        gives the same Candidate object (a search repairs and asks the same points again)."""
        n = np.array([len(f.values) for f in self.features])
        scaled = np.asarray(X, dtype=float) * np.where(self.ordinal_mask, n, 1)
        points = np.clip(np.rint(scaled), 0, n - 1).astype(int)
        if len(known := self._by_grid_point) > GRID_CACHE:
            known.clear()
        out = []
        for point in map(tuple, points.tolist()):
            if (candidate := known.get(point)) is None:
                values = {f.name: f.values[i] for f, i in zip(self.features, point, strict=True)}
                candidate = known[point] = self.candidate(values)
            out.append(candidate)
        return out

    def random_values(self, rng: random.Random) -> dict[str, Value]:
        return {f.name: rng.choice(f.values) for f in self.features}


def _key(value: Value) -> tuple[str, Value]:
    """A dictionary key equal for values that :func:`_same` calls equal."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return ("number", value)
    return (type(value).__name__, value)


def _same(a: Value, b: Value) -> bool:
    """Value equality that does not confuse True with 1 or "4" with 4."""
    return (type(a) is type(b) and a == b) or (
        isinstance(a, int | float)
        and isinstance(b, int | float)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
        and a == b
    )


# ---------------------------------------------------------------------------- loading


def load_feature_space(path: str | Path) -> FeatureSpace:
    """Read a feature file; a malformed one raises ConfigError naming file, path and problem."""
    path = Path(path)
    return parse_feature_space(read_yaml_file(path), source=path)


def parse_feature_space(data: Any, source: object = "<features>") -> FeatureSpace:
    """Build a FeatureSpace from parsed YAML (a mapping with ``features`` and ``constraints``)."""

    def fail(where: str, problem: str) -> ConfigError:
        return ConfigError(source, where, problem)

    if not isinstance(data, dict):
        raise fail("", "expected a mapping with 'features' (and optionally 'constraints')")
    unknown = set(data) - {"features", "constraints"}
    if unknown:
        raise fail(sorted(unknown)[0], "unknown key (expected 'features' or 'constraints')")
    raw_features = data.get("features")
    if not isinstance(raw_features, list) or not raw_features:
        raise fail("features", "expected a non-empty list of features")
    features = [_parse_feature(raw, f"features[{i}]", fail) for i, raw in enumerate(raw_features)]
    seen: set[str] = set()
    for i, feat in enumerate(features):
        if feat.name in seen:
            raise fail(f"features[{i}].name", f"duplicate feature name {feat.name!r}")
        seen.add(feat.name)
    space = FeatureSpace(features)
    raw_constraints = data.get("constraints") or []
    if not isinstance(raw_constraints, list):
        raise fail("constraints", "expected a list of rules")
    space.constraints = [
        _parse_constraint(raw, f"constraints[{i}]", space, fail)
        for i, raw in enumerate(raw_constraints)
    ]
    _check_acyclic(space, fail)
    _check_no_conflicts(space, fail)
    return space


def _parse_feature(raw: Any, where: str, fail) -> Feature:
    if not isinstance(raw, dict):
        raise fail(where, "expected a mapping with name, kind, values and ordinal")
    unknown = set(raw) - {"name", "kind", "values", "ordinal", "description"}
    if unknown:
        raise fail(f"{where}.{sorted(unknown, key=str)[0]}", "unknown key")  # keys of any type
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise fail(f"{where}.name", "expected a non-empty name")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise fail(f"{where}.kind", f"expected one of {', '.join(KINDS)}, got {kind!r}")
    values = raw.get("values")
    if not isinstance(values, list) or not values:
        raise fail(f"{where}.values", "expected a non-empty list of values")
    for j, value in enumerate(values):
        if not isinstance(value, str | int | float | bool) or value is None:
            raise fail(f"{where}.values[{j}]", f"expected a scalar value, got {value!r}")
        if any(_same(value, earlier) for earlier in values[:j]):
            raise fail(f"{where}.values[{j}]", f"duplicate value {value!r}")
    ordinal = raw.get("ordinal", False)
    if not isinstance(ordinal, bool):
        raise fail(f"{where}.ordinal", "expected true or false")
    return Feature(name=name, kind=kind, values=tuple(values), ordinal=ordinal)


def _parse_constraint(raw: Any, where: str, space: FeatureSpace, fail) -> Constraint:
    if not isinstance(raw, dict) or set(raw) != {"when", "set"}:
        raise fail(where, "expected a rule with exactly the keys 'when' and 'set'")
    when, assign = raw["when"], raw["set"]
    if not isinstance(when, dict) or not when:
        raise fail(f"{where}.when", "expected a non-empty mapping of feature: condition")
    if not isinstance(assign, dict) or not assign:
        raise fail(f"{where}.set", "expected a non-empty mapping of feature: value")
    conditions = []
    for name, cond in when.items():
        feat = _known_feature(space, name, f"{where}.when.{name}", fail)
        conditions.append(Condition(name, _allowed(feat, cond, f"{where}.when.{name}", fail)))
    values: dict[str, Value] = {}
    for name, value in assign.items():
        feat = _known_feature(space, name, f"{where}.set.{name}", fail)
        values[name] = feat.values[_value_index(feat, value, f"{where}.set.{name}", fail)]
    return Constraint(when=tuple(conditions), set=values)


def _known_feature(space: FeatureSpace, name: Any, where: str, fail) -> Feature:
    if name not in space.names:
        raise fail(where, f"unknown feature {name!r} (known: {', '.join(space.names)})")
    return space[name]


def _value_index(feat: Feature, value: Any, where: str, fail) -> int:
    try:
        return feat.index(value)
    except ValueError:
        shown = ", ".join(map(str, feat.values))
        raise fail(where, f"{value!r} is not a value of {feat.name!r} ({shown})") from None


def _allowed(feat: Feature, cond: Any, where: str, fail) -> frozenset[int]:
    everything = frozenset(range(len(feat.values)))
    if isinstance(cond, dict):
        if set(cond) != {"not"}:
            raise fail(where, "a condition mapping must be {not: [values]}")
        excluded = cond["not"] if isinstance(cond["not"], list) else [cond["not"]]
        return everything - {_value_index(feat, v, f"{where}.not", fail) for v in excluded}
    listed = cond if isinstance(cond, list) else [cond]
    if not listed:
        raise fail(where, "empty list of values")
    return frozenset(_value_index(feat, v, where, fail) for v in listed)


def _check_acyclic(space: FeatureSpace, fail) -> None:
    """Reject rules whose 'set' features feed back into their own conditions."""
    edges = {
        (c.feature, target)
        for rule in space.constraints
        for c in rule.when
        for target in rule.set
        if c.feature != target
    }
    graph: dict[str, set[str]] = {n: set() for n in space.names}
    for a, b in edges:
        graph[a].add(b)
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycle = " -> ".join([*trail[trail.index(nxt) :], nxt]) if nxt in trail else nxt
                raise fail("constraints", f"rules depend on each other in a cycle ({cycle})")
            if nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for name in space.names:
        if name not in state:
            visit(name, [name])
    for i, rule in enumerate(space.constraints):
        for c in rule.when:
            if c.feature in rule.set and not (
                c.allowed == {space[c.feature].index(rule.set[c.feature])}
            ):
                raise fail(f"constraints[{i}]", f"rule changes {c.feature!r}, its own condition")


def _check_no_conflicts(space: FeatureSpace, fail) -> None:
    """Reject two rules that can fire together and set one feature to different values."""
    for (i, a), (j, b) in itertools.combinations(enumerate(space.constraints), 2):
        clash = [n for n in set(a.set) & set(b.set) if not _same(a.set[n], b.set[n])]
        if clash and _can_overlap(a, b):
            raise fail(
                f"constraints[{j}]",
                f"conflicts with constraints[{i}]: both can apply and set {clash[0]!r} "
                f"to {a.set[clash[0]]!r} and {b.set[clash[0]]!r}",
            )


def _can_overlap(a: Constraint, b: Constraint) -> bool:
    """Conservative: could some candidate satisfy both rules' conditions?"""
    allowed: dict[str, frozenset[int]] = {}
    for cond in (*a.when, *b.when):
        allowed[cond.feature] = allowed.get(cond.feature, cond.allowed) & cond.allowed
    return all(allowed.values())
