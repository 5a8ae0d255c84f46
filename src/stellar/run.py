"""The search loop: ask the algorithm, run the pipeline, tell the scores, until a budget ends."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import yaml

from stellar import __version__
from stellar.archive import ARCHIVE_NAME, CONFIG_NAME, Archive
from stellar.config import RunConfig
from stellar.errors import StellarError
from stellar.features import load_feature_space
from stellar.fitness import Oracle, ThresholdOracle, as_fitness
from stellar.generators import TemplateGenerator, as_generator
from stellar.pipeline import Gate, Pipeline
from stellar.plugins import instantiate, load_object
from stellar.records import Status, TestRecord
from stellar.search import make_algorithm
from stellar.suts import HttpSUT, PythonSUT

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
        self.space = load_feature_space(config.features)
        # build every component first: a user's mistake surfaces before anything is written
        self.algorithm = make_algorithm(
            config.algorithm.name,
            self.space,
            len(config.objectives),
            config.seed,
            **config.algorithm.model_dump(exclude={"name"}),
        )
        self.generator, self.sut = build_generator(config), build_sut(config)
        self.fitness, self.oracle = build_fitness(config), build_oracle(config)
        self.duplicates = build_duplicates(config)
        self.run_dir = run_dir or new_run_dir(config)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.summary = RunSummary(str(self.run_dir), config.algorithm.name, config.seed)
        self.on_record = on_record
        self.stop = asyncio.Event()
        self.stop_reason = ""

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
                sut_timeout=cfg.sut_timeout,
                max_input_chars=cfg.max_input_chars,
                seed=cfg.seed,
                objectives=cfg.objectives,
                on_record=self._count,
            )
            reason = "error"
            try:
                while not (reason := self._exhausted(deadline)):
                    gate = Gate(self._tests_left(), deadline, self.stop)
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
                self.summary.stop_reason = self.stop_reason or reason
                archive.set_meta(
                    finished_at=datetime.now().isoformat(timespec="seconds"),
                    stop_reason=self.summary.stop_reason,
                    summary=asdict(self.summary),
                )
                (self.run_dir / SUMMARY_NAME).write_text(
                    json.dumps(asdict(self.summary), indent=2), encoding="utf-8"
                )
                close = getattr(self.sut, "aclose", None)
                if close is not None:
                    await close()
        return self.summary

    def _count(self, record: TestRecord) -> None:
        self.summary.count(record)
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


def build_generator(cfg: RunConfig):
    gen = cfg.generator
    if gen.type == "template":
        return TemplateGenerator(gen.templates)
    return as_generator(instantiate(load_object(gen.target, "generator"), gen.options))


def build_sut(cfg: RunConfig):
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
    target = instantiate(load_object(sut.target, "system under test"), sut.options)
    if hasattr(target, "query"):
        return target
    return PythonSUT(target, workers=cfg.concurrency)


def build_fitness(cfg: RunConfig):
    return as_fitness(instantiate(load_object(cfg.fitness.target, "fitness"), cfg.fitness.options))


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
