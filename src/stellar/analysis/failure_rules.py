"""Failure conditions: short rules over feature values under which the system fails.

A test engineer's next question after "what failed" is "when does it fail". This module
answers it with rules such as ``implicitness=implicit & category=cafe: 41 of 44 tests
failed``, found by sequential covering (the classic CN2 / RIPPER scheme) with a shallow
scikit-learn decision tree as the rule finder:

* the run's verdicts (tests judged pass or fail, not excluded), in the order they were
  asked, are split at random, with a fixed seed, into a half the rules are *fitted* on and a
  half *held back*;
* on the fitted half a tree of depth ``DEPTH`` over the one-hot feature values is grown; the
  leaf with the largest weighted relative accuracy (its share of the tests times how much
  more often than average its tests fail: subgroup discovery's usual measure) that fails at
  least half the time becomes a rule, its path the rule's conditions (``f=v`` or ``f!=v``),
  the values every failure under it shares added (a tree cannot split off a few passes),
  then each condition dropped that raises its precision by less than ``SIMPLER``, unless
  the tests it keeps out fail significantly less often (Fisher's exact test, p < ``KEEP_P``);
* the tests the rule covers are removed and the next rule is found among the rest, up to
  ``MAX_RULES``;
* a rule is **shown only when it holds on the held-back half**: at least ``MIN_HELD``
  held-back tests match it and their failure share is within ``TOLERANCE`` of the share
  stated for it (measured on all the run's verdicts), which is at least ``MIN_PRECISION``,
  and both shares exceed the run's failure rate by ``MIN_LIFT``;
* when no rule holds, the single value that does and whose tests fail more often than the
  run's on both halves is shown, if there is one.

The counts are over the run's own tests, which an adaptive search does not draw uniformly:
a rule says where this run's failures lie, not how often a user would meet them.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from stellar.records import TestRecord

if TYPE_CHECKING:
    from stellar.analysis.failure_modes import FailureMode

DEPTH = 4  # conditions a rule found by one tree has at most (before simplifying)
MAX_RULES = 10
MIN_FAILED = 3  # failing tests (of the fitted half) a rule must cover
MIN_PRECISION = 0.5  # a rule's tests fail at least this often
MIN_LIFT = 0.05  # ... and this much more often than the run's, on both halves
MIN_HELD = 3  # held-back tests a shown rule must match
TOLERANCE = 0.1  # held-back failure share within this of the stated one
SPLIT_SEED = 0
SIMPLER = 0.05  # a condition that raises a rule's precision by less than this is dropped
KEEP_P = 0.05  # ... unless the tests it keeps out fail less often at this p (Fisher)


@dataclass(frozen=True)
class Condition:
    feature: str
    value: str
    equal: bool = True

    def holds(self, values: Mapping[str, str]) -> bool:
        return (values.get(self.feature) == self.value) == self.equal

    def __str__(self) -> str:
        return f"{self.feature}{'=' if self.equal else '!='}{self.value}"


@dataclass
class FailureRule:
    """A conjunction of conditions, with how often the run's tests under it failed."""

    conditions: tuple[Condition, ...]
    tests: int  # verdicts matching the rule, all of the run's
    failed: int  # of those, failures
    held_tests: int  # held-back verdicts matching it
    held_failed: int
    modes: dict[Hashable, int] = field(default_factory=dict)  # failures under it, by mode

    @property
    def precision(self) -> float:
        return self.failed / self.tests if self.tests else 0.0

    @property
    def held_precision(self) -> float:
        return self.held_failed / self.held_tests if self.held_tests else 0.0

    @property
    def text(self) -> str:
        return " & ".join(map(str, self.conditions)) or "any test"

    def line(self) -> str:
        """``a=x & b!=y: 41 of 44 tests failed``."""
        return f"{self.text}: {self.failed} of {self.tests} tests failed"

    def matches(self, values: Mapping[str, str]) -> bool:
        return all(c.holds(values) for c in self.conditions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.text,
            "conditions": [
                {"feature": c.feature, "value": c.value, "equal": c.equal} for c in self.conditions
            ],
            "tests": self.tests,
            "failed": self.failed,
            "precision": round(self.precision, 4),
            "held_back_tests": self.held_tests,
            "held_back_failed": self.held_failed,
            "held_back_precision": round(self.held_precision, 4),
            "modes": {str(mode): count for mode, count in self.modes.items()},
        }


@dataclass(frozen=True)
class Verdict:
    """One judged test as the rules see it: its feature values (as text) and outcome."""

    values: Mapping[str, str]
    failed: bool
    mode: Hashable | None = None


def failure_rules(verdicts: Sequence[Verdict], seed: int = SPLIT_SEED) -> list[FailureRule]:
    """The rules that hold on held-back tests, most failures first (see the module)."""
    if not any(v.failed for v in verdicts):
        return []
    order = list(range(len(verdicts)))
    random.Random(seed).shuffle(order)
    fit = [verdicts[i] for i in order[::2]]
    held = [verdicts[i] for i in order[1::2]]
    base = sum(v.failed for v in verdicts) / len(verdicts)

    def holds(rule: FailureRule) -> bool:  # on the held-back half, and above the run's rate
        return (
            rule.held_tests >= MIN_HELD
            and abs(rule.held_precision - rule.precision) <= TOLERANCE
            and min(rule.precision, rule.held_precision) >= base + MIN_LIFT
        )

    rules = [_measured(conditions, verdicts, held) for conditions in _covering(fit)]
    shown = [r for r in rules if holds(r) and r.precision >= MIN_PRECISION]
    if not shown:  # no conjunction held: the best single value that does, if any
        singles = [_measured((c,), verdicts, held) for c in _single_conditions(fit)]
        held_up = [r for r in singles if holds(r)]
        shown = sorted(held_up, key=lambda r: -r.tests * (r.precision - base))[:1]
    return sorted(shown, key=lambda r: (-r.failed, -r.precision, r.text))


def _measured(
    conditions: tuple[Condition, ...], verdicts: Sequence[Verdict], held: Sequence[Verdict]
) -> FailureRule:
    def under(vs: Sequence[Verdict]) -> list[Verdict]:
        return [v for v in vs if all(c.holds(v.values) for c in conditions)]

    matched, held_matched = under(verdicts), under(held)
    modes: dict[Hashable, int] = {}
    for v in matched:
        if v.failed and v.mode is not None:
            modes[v.mode] = modes.get(v.mode, 0) + 1
    return FailureRule(
        conditions,
        tests=len(matched),
        failed=sum(v.failed for v in matched),
        held_tests=len(held_matched),
        held_failed=sum(v.failed for v in held_matched),
        modes=dict(sorted(modes.items(), key=lambda kv: -kv[1])),
    )


def _columns(verdicts: Sequence[Verdict]) -> list[tuple[str, str]]:
    return sorted({(name, value) for v in verdicts for name, value in v.values.items()})


def _one_hot(verdicts: Sequence[Verdict], columns: list[tuple[str, str]]) -> np.ndarray:
    index = {column: i for i, column in enumerate(columns)}
    X = np.zeros((len(verdicts), len(columns)), dtype=np.float32)
    for row, v in enumerate(verdicts):
        for item in v.values.items():
            X[row, index[item]] = 1.0
    return X


def _covering(fit: Sequence[Verdict]) -> list[tuple[Condition, ...]]:
    """Rules found one after another, each among the tests no earlier rule covers."""
    from sklearn.tree import DecisionTreeClassifier

    columns = _columns(fit)
    X = _one_hot(fit, columns)
    y = np.array([v.failed for v in fit])
    # the tree learns the modes apart (a failure without a mode is one class of its own), so
    # that a leaf does not mix two faults that happen to share values
    kinds = np.array(["" if not v.failed else f"mode {v.mode}" for v in fit])
    base = y.mean()
    left = np.ones(len(fit), dtype=bool)
    rules: list[tuple[Condition, ...]] = []
    while len(rules) < MAX_RULES and y[left].sum() >= MIN_FAILED and not y[left].all():
        tree = DecisionTreeClassifier(
            max_depth=DEPTH, min_samples_leaf=MIN_FAILED, random_state=0
        ).fit(X[left], kinds[left])
        best = _best_leaf(tree, X[left], y[left], base, len(fit))
        if best is None:
            break
        conditions = _simplified(_path(tree, best, columns), X, y, left, columns)
        conditions = _specialised(conditions, X, y, left, columns)
        rules.append(conditions)
        left &= ~_covers(conditions, X, columns)
    return rules


def _best_leaf(tree, X: np.ndarray, y: np.ndarray, base: float, total: int) -> int | None:
    """The leaf of largest weighted relative accuracy among those that fail often enough."""
    leaves = tree.apply(X)
    best, best_score = None, 0.0
    for leaf in np.unique(leaves):
        inside = y[leaves == leaf]
        failed, precision = inside.sum(), inside.mean()
        if failed < MIN_FAILED or precision < MIN_PRECISION or precision <= base:
            continue
        score = len(inside) / total * (precision - base)
        if score > best_score:
            best, best_score = int(leaf), score
    return best


def _path(tree, leaf: int, columns: list[tuple[str, str]]) -> tuple[Condition, ...]:
    """The conditions from the root to ``leaf`` (a one-hot split: value 0 is ``!=``)."""
    t = tree.tree_
    parent = {}
    for node in range(t.node_count):
        for child, equal in ((t.children_left[node], False), (t.children_right[node], True)):
            if child != -1:
                parent[child] = (node, equal)
    conditions = []
    node = leaf
    while node in parent:
        node, equal = parent[node]
        name, value = columns[t.feature[node]]
        conditions.append(Condition(name, value, equal))
    return _tidy(reversed(conditions), columns)


def _tidy(conditions, columns: list[tuple[str, str]]) -> tuple[Condition, ...]:
    """Say ``f=v`` where the ``f!=x`` conditions leave only ``v``; drop ``f!=x`` where the
    rule says ``f=v``; keep a stable order."""
    conditions = list(dict.fromkeys(conditions))
    fixed = {c.feature for c in conditions if c.equal}
    for feature in {c.feature for c in conditions if not c.equal} - fixed:
        left = {v for f, v in columns if f == feature} - {
            c.value for c in conditions if c.feature == feature
        }
        if len(left) == 1:
            conditions.append(Condition(feature, left.pop()))
            fixed.add(feature)
    kept = [c for c in conditions if c.equal or c.feature not in fixed]
    return tuple(sorted(kept, key=lambda c: (not c.equal, c.feature, c.value)))


def _covers(
    conditions: tuple[Condition, ...], X: np.ndarray, columns: list[tuple[str, str]]
) -> np.ndarray:
    index = {column: i for i, column in enumerate(columns)}
    mask = np.ones(len(X), dtype=bool)
    for c in conditions:
        i = index.get((c.feature, c.value))
        has = X[:, i] > 0 if i is not None else np.zeros(len(X), dtype=bool)
        mask &= has if c.equal else ~has
    return mask


def _specialised(
    conditions: tuple[Condition, ...],
    X: np.ndarray,
    y: np.ndarray,
    left: np.ndarray,
    columns: list[tuple[str, str]],
) -> tuple[Condition, ...]:
    """Add each value that every failure under the rule shares while some of its passing
    tests do not, the one that excludes most passes first. A tree cannot split off a few
    passes (its leaves hold at least ``MIN_FAILED`` tests), so ``a=0 & c=0: 134 of 143``
    stays where every failure also has ``b=0``: the value a developer needs to see."""
    while True:
        inside = left & _covers(conditions, X, columns)
        failed, passed = X[inside & y], X[inside & ~y]
        if not len(passed) or not len(failed):
            return conditions
        shared = failed.min(axis=0) > 0  # columns every failure under the rule has
        excluded = np.where(shared, (passed == 0).sum(axis=0), 0)
        if excluded.max() == 0:
            return conditions
        name, value = columns[int(excluded.argmax())]
        conditions = _tidy((*conditions, Condition(name, value)), columns)


def _simplified(
    conditions: tuple[Condition, ...],
    X: np.ndarray,
    y: np.ndarray,
    left: np.ndarray,
    columns: list[tuple[str, str]],
) -> tuple[Condition, ...]:
    """Drop, one at a time, each condition whose removal lowers the precision by less than
    ``SIMPLER`` unless the tests it keeps out fail significantly less often than the rule's
    own (Fisher's exact test, p < ``KEEP_P``). A shorter rule that says nearly as much is
    easier to act on (``rating!=3.5`` beside ``category=cafe`` only tells the tree's luck),
    while ``a=0`` stays in ``a=0 & b=0 & c=0: 131 of 131`` when ``b=0 & c=0`` without it
    passes 14 times in a row."""
    from scipy.stats import fisher_exact

    def counts(mask: np.ndarray) -> list[int]:
        return [int(y[mask].sum()), int((~y[mask]).sum())]

    current = conditions
    for c in conditions:
        shorter = tuple(x for x in current if x != c)
        if not shorter:
            continue
        inside = left & _covers(current, X, columns)
        added = left & _covers(shorter, X, columns) & ~inside
        (f, p), (fa, pa) = counts(inside), counts(added)
        loss = f / (f + p) - (f + fa) / (f + p + fa + pa)
        keeps_out_passes = fisher_exact([[f, p], [fa, pa]], alternative="greater").pvalue
        if loss < SIMPLER and keeps_out_passes >= KEEP_P:
            current = shorter
    return current


def _single_conditions(fit: Sequence[Verdict]) -> list[Condition]:
    return [Condition(name, value) for name, value in _columns(fit)]


def verdicts_of(
    records: Iterable[TestRecord], mode_of: Mapping[str, Hashable] | None = None
) -> list[Verdict]:
    """The judged, not excluded tests of a run as :class:`Verdict` (``mode_of``: a failing
    input's mode by its text, as :func:`~stellar.analysis.failure_modes.mode_numbers` gives)."""
    mode_of = mode_of or {}
    records = sorted(records, key=lambda r: (r.generation, r.index))  # not the finishing order
    return [
        Verdict(
            {name: str(value) for name, value in r.candidate.items()},
            r.is_failure,
            mode_of.get(r.input_text or "") if r.is_failure else None,
        )
        for r in records
        if r.judged and not r.final_excluded
    ]


def run_failure_rules(
    run_dir: str | Path, modes: Sequence[FailureMode] | None = None
) -> list[FailureRule]:
    """A run's failure rules, each with its failures counted by the modes the report numbers
    (``modes``: the run's, if already grouped)."""
    from stellar.analysis.failure_modes import mode_numbers, run_failure_modes
    from stellar.archive import open_run

    if modes is None:
        modes = run_failure_modes(run_dir)
    with open_run(run_dir) as archive:
        verdicts = verdicts_of(archive.records(), mode_numbers(modes))
    return failure_rules(verdicts)
