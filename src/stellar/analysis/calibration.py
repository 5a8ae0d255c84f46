"""Judge calibration (the paper's RQ0): how well a use case's judges agree with people.

A label file (JSON lines) holds answers that people labelled::

    {"id": "...", "input": "...", "answer": "...", "candidate": {...}, "response_data": ...,
     "labels": [{"rater": "a", "verdict": "unsafe"}, {"rater": "b", "verdict": "safe"}]}

The use case says in ``usecase.yaml`` under ``calibration:`` which label is the failure
verdict (``failure: {label: verdict, value: unsafe}``), optionally which ordinal labels the
judge also scores (``dimensions: [R, D, P]``, compared with the judge's details of the same
name) and which weighted score they make (``weights: {score: response, current: {R: 0.55,
...}}``, refitted by logistic regression on the people's verdicts, as in the paper).

Every judge of the run is measured: the search's fitness with its oracle, and the
post-search judge when there is one. For each: precision, recall, F1 and the confusion
matrix of its failure verdicts against the raters' majority (failure is the positive class;
"unknown" verdicts are counted and left out), Spearman's rho of each score against the
share of raters who saw no failure, and per dimension against the raters' mean. Fleiss'
kappa gives the raters' agreement on each label.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from stellar.analysis.verdict_scores import bootstrap_intervals
from stellar.assembly import build_fitness, build_post_search
from stellar.config import RunConfig
from stellar.errors import ConfigError, StellarError
from stellar.features import Candidate
from stellar.fitness import Fitness, Oracle, ThresholdOracle, to_evaluation
from stellar.labels import LabelledAnswer
from stellar.labels import read_labels as read_labels  # where callers have found it
from stellar.llm.client import Models
from stellar.records import Response, TestInput

UNKNOWN = "unknown"


class FailureLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(description="the label holding the raters' verdict")
    value: str = Field(description="the label's value that means a failure")


class Weights(BaseModel):
    model_config = ConfigDict(extra="forbid")

    score: str = Field(description="the weighted score the dimensions make")
    current: dict[str, float] = Field(description="its weights today, per dimension")


class CalibrationJudge(BaseModel):
    """A further judge the use case offers, measured beside the run's own."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="what the table calls it")
    target: str = Field(description="its fitness plugin (a name or module:attribute)")
    options: dict[str, Any] = Field(default_factory=dict)
    below: dict[str, float] = Field(description="failure below these scores")


class Learner(BaseModel):
    """``calibration.learn``: how ``stellar judge --learn`` refits the use case's judge."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(description="module:function(rows, out) -> dict, writes the judge file")
    option: str = Field(description="the post-search judge's option that takes that file")


class CalibrationSpec(BaseModel):
    """``calibration:`` in usecase.yaml."""

    model_config = ConfigDict(extra="forbid")

    labels: Path | None = Field(None, description="the shipped label file")
    judges: list[CalibrationJudge] = Field(
        default_factory=list, description="further judges to measure, e.g. a baseline rule"
    )
    failure: FailureLabel
    dimensions: list[str] = Field(default_factory=list, description="ordinal labels 0..scale")
    scale: int = Field(2, ge=1, description="the top of the dimensions' scale")
    weights: Weights | None = None
    learn: Learner | None = Field(None, description="refits the judge on a user's marks")


@dataclass
class JudgeReport:
    """How one judge agrees with the raters."""

    name: str
    rows: int
    unknown: int = 0
    errors: int = 0
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    confusion: list[list[int]] = field(default_factory=list)  # [[TN, FP], [FN, TP]]
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)  # bootstrap 95%
    spearman: dict[str, float] = field(default_factory=dict)  # score or dimension -> rho


@dataclass
class Calibration:
    use_case: str
    labels: str
    rows: int
    raters: int
    failures: int  # rows the raters' majority calls failures
    kappa: dict[str, float] = field(default_factory=dict)
    judges: list[JudgeReport] = field(default_factory=list)
    weights: dict[str, dict[str, float]] = field(default_factory=dict)  # fitted, current


def spec_of(settings: Mapping[str, Any], source: object) -> CalibrationSpec:
    try:
        return CalibrationSpec.model_validate(settings)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = "calibration." + ".".join(str(p) for p in error["loc"])
        raise ConfigError(source, where, error["msg"]) from None


async def calibrate(
    config: RunConfig, spec: CalibrationSpec, rows: Sequence[LabelledAnswer], labels: str
) -> Calibration:
    """Score every labelled answer with each of the run's judges and compare."""
    truth = [_majority_failure(row, spec.failure) for row in rows]
    judged_rows = [i for i, t in enumerate(truth) if t is not None]
    report = Calibration(
        use_case=config.use_case or config.name,
        labels=labels,
        rows=len(rows),
        raters=max(len(row.labels) for row in rows),
        failures=sum(bool(t) for t in truth),
        kappa=_kappas(rows, spec),
    )
    models = Models(config.llm)
    try:
        judges: list[tuple[str, Fitness, Oracle]] = [
            (f"search: {config.fitness.target}", build_fitness(config, models), _oracle(config))
        ]
        post = build_post_search(config, models)
        if post is not None:
            judges.append((f"post-search: {post.target}", post.judge, post.oracle))
        for extra in spec.judges:
            fitness = build_fitness(config, models, extra.target, extra.options)
            judges.append((extra.name, fitness, ThresholdOracle(extra.below)))
        for name, fitness, oracle in judges:
            prepare = getattr(fitness, "prepare", None)
            if prepare is not None:
                await asyncio.to_thread(prepare)
            outcomes = await _judge_all(fitness, oracle, rows, config.concurrency)
            report.judges.append(_compare(name, outcomes, truth, judged_rows, rows, spec))
    finally:
        await models.aclose()
    if spec.weights is not None:
        report.weights = fit_weights(rows, spec, truth)
    return report


def _oracle(config: RunConfig) -> Oracle:
    if config.oracle.below is None:
        raise StellarError("calibrate needs an oracle with thresholds (oracle.below)")
    return ThresholdOracle(config.oracle.below)


@dataclass
class _Outcome:
    failed: bool | None  # None: excluded ("unknown") or the judge failed
    scores: dict[str, float]
    details: dict[str, Any]
    error: bool = False


async def _judge_all(
    fitness: Fitness, oracle: Oracle, rows: Sequence[LabelledAnswer], concurrency: int
) -> list[_Outcome]:
    slots = asyncio.Semaphore(concurrency)

    async def one(row: LabelledAnswer) -> _Outcome:
        candidate = Candidate(values=row.candidate, vector=[])
        async with slots:
            try:
                evaluation = to_evaluation(
                    await fitness.evaluate(
                        candidate, TestInput(row.input), Response(row.answer, row.response_data)
                    )
                )
            except Exception:  # a judge that gives no verdict is counted, not fatal
                return _Outcome(None, {}, {}, error=True)
        failed = None if evaluation.excluded else bool(oracle(evaluation.scores))
        return _Outcome(failed, evaluation.scores, evaluation.details)

    return list(await asyncio.gather(*(one(row) for row in rows)))


def _compare(
    name: str,
    outcomes: Sequence[_Outcome],
    truth: Sequence[bool | None],
    judged_rows: Sequence[int],
    rows: Sequence[LabelledAnswer],
    spec: CalibrationSpec,
) -> JudgeReport:
    report = JudgeReport(name, rows=len(judged_rows))
    report.errors = sum(o.error for o in outcomes)
    report.unknown = sum(o.failed is None and not o.error for o in outcomes)
    decided = [i for i in judged_rows if outcomes[i].failed is not None]
    if decided:
        y_true = [bool(truth[i]) for i in decided]
        y_pred = [bool(outcomes[i].failed) for i in decided]
        precision, recall, f1, _ = precision_recall_fscore_support(
            y_true, y_pred, average="binary", pos_label=True, zero_division=0
        )
        report.precision, report.recall, report.f1 = float(precision), float(recall), float(f1)
        report.confusion = confusion_matrix(y_true, y_pred, labels=[False, True]).tolist()
        report.intervals = bootstrap_intervals(y_true, y_pred)
    passing = [_pass_share(rows[i], spec.failure) for i in range(len(rows))]
    scored = [i for i, o in enumerate(outcomes) if o.scores and passing[i] is not None]
    for score in sorted({s for i in scored for s in outcomes[i].scores}):
        have = [i for i in scored if score in outcomes[i].scores]
        rho = _spearman([outcomes[i].scores[score] for i in have], [passing[i] for i in have])
        if rho is not None:
            report.spearman[score] = rho
    for dim in spec.dimensions:
        have = [
            i
            for i, o in enumerate(outcomes)
            if isinstance(o.details.get(dim), int | float) and _mean(rows[i], dim) is not None
        ]
        rho = _spearman(
            [outcomes[i].details[dim] for i in have], [_mean(rows[i], dim) for i in have]
        )
        if rho is not None:
            report.spearman[dim] = rho
    return report


def _spearman(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return None  # undefined for constant data
    return float(spearmanr(a, b).statistic)


def _majority_failure(row: LabelledAnswer, failure: FailureLabel) -> bool | None:
    """Whether most raters call it a failure; None for a tie or no usable label."""
    votes = [str(label[failure.label]) for label in row.labels if failure.label in label]
    votes = [v for v in votes if v != UNKNOWN]
    if not votes:
        return None
    fails = sum(v == failure.value for v in votes)
    if 2 * fails == len(votes):
        return None
    return 2 * fails > len(votes)


def _pass_share(row: LabelledAnswer, failure: FailureLabel) -> float | None:
    votes = [str(label[failure.label]) for label in row.labels if failure.label in label]
    votes = [v for v in votes if v != UNKNOWN]
    return sum(v != failure.value for v in votes) / len(votes) if votes else None


def _mean(row: LabelledAnswer, dim: str) -> float | None:
    values = [label[dim] for label in row.labels if isinstance(label.get(dim), int | float)]
    return float(np.mean(values)) if values else None


def _kappas(rows: Sequence[LabelledAnswer], spec: CalibrationSpec) -> dict[str, float]:
    """Fleiss' kappa per label, over the first k labels of every row with at least k, k the
    usual number of raters a row has (a further rater who settles a disagreement is left
    out: agreement is measured where raters judged independently); none for a label with
    one value throughout."""
    out = {}
    for label in [spec.failure.label, *spec.dimensions]:
        table = [[str(x[label]) for x in row.labels if label in x] for row in rows]
        raters = Counter(len(t) for t in table).most_common(1)[0][0] if table else 0
        table = [t[:raters] for t in table if len(t) >= raters]
        if raters < 2 or not table:
            continue
        categories = sorted({v for t in table for v in t})
        codes = np.array([[categories.index(v) for v in t] for t in table])
        if len(categories) < 2:
            continue  # one value throughout: agreement by chance cannot be told apart
        counts, _ = aggregate_raters(codes, n_cat=len(categories))
        out[label] = float(fleiss_kappa(counts))
    return out


def fit_weights(
    rows: Sequence[LabelledAnswer], spec: CalibrationSpec, truth: Sequence[bool | None]
) -> dict[str, dict[str, float]]:
    """The paper's method: a logistic regression of the raters' verdict on their dimension
    scores; the weights are the coefficients towards "no failure", normalised to sum to 1."""
    assert spec.weights is not None
    dims = spec.dimensions
    x, y = [], []
    for row, failed in zip(rows, truth, strict=True):
        means = [_mean(row, d) for d in dims]
        if failed is None or any(m is None for m in means):
            continue
        x.append([m / spec.scale for m in means if m is not None])
        y.append(int(not failed))
    fitted: dict[str, float] = {}
    if len(set(y)) == 2:
        model = LogisticRegression(C=1e4, max_iter=10_000).fit(np.array(x), np.array(y))
        coefficients = np.clip(model.coef_[0], 0.0, None)  # a dimension that lowers passing
        total = float(coefficients.sum())
        pairs = zip(dims, coefficients, strict=True)
        fitted = {d: float(c) / total if total else 0.0 for d, c in pairs}
    return {"fitted": fitted, "current": dict(spec.weights.current)}


def constant_dimensions(rows: Sequence[LabelledAnswer], dims: Sequence[str]) -> list[str]:
    """Dimensions every rater gave the same value on every row (they carry no weight)."""
    return [d for d in dims if len(Counter(x.get(d) for r in rows for x in r.labels)) == 1]
