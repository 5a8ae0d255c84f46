"""The search loop: ask the algorithm, run the pipeline, tell the scores, until a budget ends."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from stellar import __version__
from stellar.archive import ARCHIVE_NAME, CONFIG_NAME, Archive
from stellar.config import RunConfig
from stellar.errors import StellarError
from stellar.features import FeatureSpace, load_feature_space
from stellar.fitness import Oracle, ThresholdOracle, as_fitness
from stellar.generators import TemplateGenerator, as_generator
from stellar.llm.client import Models
from stellar.llm.usage import add_usage, total_cost
from stellar.pipeline import Gate, Pipeline
from stellar.plugins import accepted_kwargs, instantiate, load_object
from stellar.records import Status, TestRecord
from stellar.search import make_algorithm
from stellar.suts import ChatSUT, HttpSUT, PythonSUT

SUMMARY_NAME = "summary.json"


@dataclass
class RunSummary:
    """What a run did, and why it stopped."""

    run_dir: str
    algorithm: str
    seed: int
    tests: int = 0  # inputs sent to the system under test
    failures: int = 0
    duplicates: int = 0
    invalid: int = 0
    sut_errors: int = 0
    judge_errors: int = 0
    excluded: int = 0
    generations: int = 0
    elapsed: float = 0.0
    stop_reason: str = ""
    error: str | None = None  # a model refused the key or is unknown: the run stopped early
    cost: float = 0.0  # USD spent on model calls
    usage: dict[str, dict[str, float]] = field(default_factory=dict)  # per role
    algorithm_report: dict[str, Any] = field(default_factory=dict)  # e.g. t-wise coverage
    unpriced: list[str] = field(default_factory=list)  # hosted models without a price
    failure_ratio: float = field(init=False, default=0.0)

    def count(self, record: TestRecord) -> None:
        self.tests += record.executed
        self.failures += record.is_failure
        self.excluded += record.status == Status.OK and record.excluded
        self.duplicates += record.status == Status.DUPLICATE
        self.invalid += record.status == Status.INVALID
        self.sut_errors += record.status == Status.SUT_ERROR
        self.judge_errors += record.status == Status.JUDGE_ERROR
        self.failure_ratio = self.failures / self.tests if self.tests else 0.0
        self.count_usage(record.usage)

    def count_usage(self, usage: dict[str, dict[str, float]]) -> None:
        if usage:
            add_usage(self.usage, usage)
            self.cost = total_cost(self.usage)

    @property
    def discarded(self) -> int:
        return self.duplicates + self.invalid


class Run:
    """One algorithm, one seed, one configuration -> one run directory."""

    def __init__(
        self,
        config: RunConfig,
        run_dir: Path | None = None,
        on_record: Callable[[TestRecord, RunSummary], None] | None = None,
    ) -> None:
        self.config = config
        # build every component first: a user's mistake surfaces before anything is written
        parts = build_components(config)
        self.space, self.algorithm, self.models = parts.space, parts.algorithm, parts.models
        self.generator, self.sut = parts.generator, parts.sut
        self.fitness, self.oracle, self.duplicates = parts.fitness, parts.oracle, parts.duplicates
        if config.budget.cost is not None and (unpriced := self.models.unpriced()):
            raise StellarError(
                f"cannot keep to a money budget: no price for {', '.join(unpriced)}; "
                "add it to llm.prices (USD per million tokens: [input, output])"
            )
        self.run_dir = run_dir or new_run_dir(config)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.summary = RunSummary(str(self.run_dir), config.algorithm.name, config.seed)
        self.summary.unpriced = self.models.unpriced()
        self.on_record = on_record
        self.stop = asyncio.Event()
        self.stop_reason = ""
        self._executed: list[dict[str, Any]] = []  # candidates that reached the SUT

    def request_stop(self, reason: str = "interrupted") -> None:
        """Stop after the tests in flight (Ctrl-C); everything finished is kept."""
        self.stop_reason = self.stop_reason or reason
        self.stop.set()

    async def execute(self) -> RunSummary:
        cfg = self.config
        (self.run_dir / CONFIG_NAME).write_text(
            yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False), encoding="utf-8"
        )
        started = time.monotonic()
        deadline = started + cfg.budget.time if cfg.budget.time else None
        with Archive(self.run_dir / ARCHIVE_NAME) as archive:
            archive.set_meta(
                version=__version__,
                seed=cfg.seed,
                algorithm=cfg.algorithm.name,
                started_at=datetime.now().isoformat(timespec="seconds"),
                finished_at=None,
                stop_reason=None,
            )
            pipeline = Pipeline(
                generator=self.generator,
                sut=self.sut,
                fitness=self.fitness,
                oracle=self.oracle,
                archive=archive,
                duplicates=self.duplicates,
                concurrency=cfg.concurrency,
                sut_timeout=self._sut_timeout(),
                max_input_chars=cfg.max_input_chars,
                seed=cfg.seed,
                objectives=cfg.objectives,
                on_record=self._count,
                on_fatal=self._fatal,
                on_unused=lambda record: self.summary.count_usage(record.usage),
            )
            reason = "error"
            try:
                while not (reason := self._exhausted(deadline)):
                    gate = Gate(
                        self._tests_left(),
                        deadline,
                        self.stop,
                        cfg.budget.cost,
                        lambda: self.models.spend.total,  # includes calls not yet committed
                    )
                    candidates = self.algorithm.ask()
                    if not candidates:
                        reason = "search space exhausted (no new candidates)"
                        break
                    records = await pipeline.run_generation(
                        self.summary.generations, candidates, gate
                    )
                    self.summary.generations += 1
                    self.algorithm.tell(candidates, [self._objectives(r) for r in records])
            finally:
                self.summary.elapsed = time.monotonic() - started
                report = getattr(self.algorithm, "report", None)
                if report is not None:
                    self.summary.algorithm_report = report(self._executed)
                self.summary.stop_reason = self.stop_reason or reason
                archive.set_meta(
                    finished_at=datetime.now().isoformat(timespec="seconds"),
                    stop_reason=self.summary.stop_reason,
                    summary=asdict(self.summary),
                )
                (self.run_dir / SUMMARY_NAME).write_text(
                    json.dumps(asdict(self.summary), indent=2), encoding="utf-8"
                )
                try:
                    close = getattr(self.sut, "aclose", None)
                    if close is not None:
                        await close()
                finally:
                    await self.models.aclose()
        return self.summary

    def _sut_timeout(self) -> float | None:
        """A model SUT is bounded by its client's timeout and retries, unless set explicitly."""
        sut = self.config.sut
        uses_model = sut.type == "chat" or (
            sut.type == "python" and isinstance(sut.options.get("llm"), str)
        )
        explicit = "sut_timeout" in self.config.model_fields_set
        return None if uses_model and not explicit else self.config.sut_timeout

    def _fatal(self, message: str) -> None:
        self.summary.error = self.summary.error or message
        self.request_stop(f"model error: {message}")

    def _count(self, record: TestRecord) -> None:
        self.summary.count(record)
        if record.executed:
            self._executed.append(record.candidate)
        if self.on_record is not None:
            self.on_record(record, self.summary)

    def _tests_left(self) -> int | None:
        limit = self.config.budget.tests
        return None if limit is None else limit - self.summary.tests

    def _exhausted(self, deadline: float | None) -> str:
        budget = self.config.budget
        if self.stop.is_set():
            return self.stop_reason
        if budget.tests is not None and self.summary.tests >= budget.tests:
            return f"test budget reached ({budget.tests} tests)"
        if deadline is not None and time.monotonic() >= deadline:
            return f"time budget reached ({budget.time:g} s)"
        if budget.cost is not None and self.summary.cost >= budget.cost:
            return f"money budget reached (${self.summary.cost:.4f} of ${budget.cost:g})"
        if self.summary.discarded >= budget.discard_limit:
            return (
                f"discard limit reached ({self.summary.discarded} duplicate or invalid inputs; "
                "raise budget.max_discarded or widen the feature space)"
            )
        return ""

    def _objectives(self, record: TestRecord | None) -> list[float] | None:
        if record is None or record.status != Status.OK:
            return None
        return [record.scores[name] for name in self.config.objectives]


def new_run_dir(config: RunConfig) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = (
        config.out / f"{config.name}-{config.algorithm.name.split(':')[-1]}-s{config.seed}-{stamp}"
    )
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


@dataclass
class Components:
    """Everything a run needs, built from a configuration."""

    space: FeatureSpace
    algorithm: Any
    models: Models
    generator: Any
    sut: Any
    fitness: Any
    oracle: Oracle
    duplicates: Any


def build_components(cfg: RunConfig, check_keys: bool = True) -> Components:
    """Build every component; ``check_keys=False`` (dry runs) needs no API keys."""
    space = load_feature_space(cfg.features)
    algorithm = make_algorithm(
        cfg.algorithm.name,
        space,
        len(cfg.objectives),
        cfg.seed,
        **cfg.algorithm.model_dump(exclude={"name"}),
    )
    models = Models(cfg.llm, check_keys=check_keys)
    return Components(
        space,
        algorithm,
        models,
        build_generator(cfg, models, space),
        build_sut(cfg, models),
        build_fitness(cfg, models),
        build_oracle(cfg),
        build_duplicates(cfg),
    )


def build_generator(cfg: RunConfig, models: Models, space: FeatureSpace):
    gen = cfg.generator
    if gen.type == "template":
        return TemplateGenerator(gen.templates)
    if gen.type == "llm":
        from stellar.generators.llm import LLMGenerator

        model = models.client(gen.model, "generator", "generator.model")
        settings = gen.model_dump(exclude={"type", "model"})
        return LLMGenerator(model=model, features=space, **settings)
    options = _with_model(gen.options, models, "generator")
    return as_generator(instantiate(load_object(gen.target, "generator"), options))


def build_sut(cfg: RunConfig, models: Models):
    sut = cfg.sut
    if sut.type == "http":
        return HttpSUT(
            sut.url,
            body=sut.body,
            answer=sut.answer,
            data=sut.data,
            headers=sut.headers,
            method=sut.method,
            timeout=sut.timeout,
        )
    if sut.type == "chat":
        model = models.client(sut.model, "sut", "sut.model")
        return ChatSUT(model, sut.system_prompt, sut.temperature, sut.max_tokens)
    options = _with_model(sut.options, models, "sut")
    target = instantiate(load_object(sut.target, "system under test"), options)
    if hasattr(target, "query"):
        return target
    return PythonSUT(target, workers=cfg.concurrency)


def _with_model(options: dict[str, Any], models: Models, role: str) -> dict[str, Any]:
    """An ``llm`` option naming a model is handed over as a ready client."""
    if isinstance(options.get("llm"), str):
        return {**options, "llm": models.client(options["llm"], role, f"{role}.options.llm")}
    return options


def build_fitness(cfg: RunConfig, models: Models):
    target = load_object(cfg.fitness.target, "fitness")
    options = dict(cfg.fitness.options)
    if cfg.judge.model:
        if not accepted_kwargs(target, {"judge": None}):
            raise StellarError(
                f"judge.model is set, but fitness {cfg.fitness.target!r} takes no LLM judge "
                "(it has no 'judge' parameter)"
            )
        from stellar.fitness.judges import JudgeModel

        options["judge"] = JudgeModel(
            model=models.client(cfg.judge.model, "judge", "judge.model"),
            **cfg.judge.model_dump(exclude={"model"}),
        )
    return as_fitness(instantiate(target, options))


def build_oracle(cfg: RunConfig) -> Oracle:
    if cfg.oracle.below is not None:
        return ThresholdOracle(cfg.oracle.below)
    oracle = instantiate(load_object(cfg.oracle.target, "oracle"), {})
    if not callable(oracle):
        raise StellarError(f"oracle {cfg.oracle.target!r} is not callable")
    return oracle


def build_duplicates(cfg: RunConfig):
    if cfg.duplicates.embedder == "none":
        return None
    from stellar.text.duplicates import DuplicateFilter
    from stellar.text.embeddings import get_embedder

    return DuplicateFilter(get_embedder(cfg.duplicates.embedder), cfg.duplicates.threshold)
