"""The search loop: ask the algorithm, run the pipeline, tell the scores, until a budget ends.

Several generations are in flight at once so that the system under test and the models stay
busy: the loop keeps ``depth`` generations asked (``generations_in_flight``), and each time
the oldest has all its results it is told and one more is asked. The order of asks and tells
is fixed (ask ``g + depth`` right after telling ``g``), never the order results arrive in, so
the same seed gives the same archive however long each call takes (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from stellar import __version__
from stellar.archive import Archive
from stellar.assembly import build_components, build_post_search
from stellar.config import RunConfig, model_names
from stellar.dialogue.probe import MemoryProbe, probe_memory
from stellar.dialogue.session import conversation_run
from stellar.errors import ModelAccessError, StellarError
from stellar.features import Candidate
from stellar.gc_tuning import tuned_for_a_run
from stellar.locks import DirectoryLock
from stellar.modes import RunModes, mode_embedder
from stellar.pipeline import Asked, Gate, Pipeline, in_flight
from stellar.post_search import judge_archive, update_summary
from stellar.records import Status, TestRecord
from stellar.resume import archived_generations, check_same_search
from stellar.rundir import ARCHIVE_NAME, CONFIG_NAME, VECTORS_NAME, new_run_dir, write_summary
from stellar.search.base import OUTCOMES, outcomes
from stellar.summary import RunSummary
from stellar.termination import (
    STOPPED_EARLY,
    AnyOf,
    Progress,
    Stop,
    StopReason,
    StopRequest,
    budgets,
)


class Run:
    """One algorithm, one seed, one configuration -> one run directory."""

    def __init__(
        self,
        config: RunConfig,
        run_dir: Path | None = None,
        on_record: Callable[[TestRecord, RunSummary], None] | None = None,
        on_verdict: Callable[[TestRecord, int], None] | None = None,
        resume: bool = False,
    ) -> None:
        """``resume``: continue the run in ``run_dir`` (see :mod:`stellar.resume`)."""
        self.config = config
        # build every component first: a user's mistake surfaces before anything is written
        parts = build_components(config)
        self.space, self.algorithm, self.models = parts.space, parts.algorithm, parts.models
        self.generator, self.sut = parts.generator, parts.sut
        self.fitness, self.oracle, self.duplicates = parts.fitness, parts.oracle, parts.duplicates
        self.check_response = parts.check_response
        self.conversational = conversation_run(self.space, self.sut, config.generator.plugin)
        self.modes = RunModes(mode_embedder(config.duplicates.embedder), config.oracle.below)
        told = inspect.signature(self.algorithm.tell).parameters  # what else a search learns
        self._tells = [k for k in OUTCOMES if k in told]
        self.post_search = build_post_search(config, self.models)
        if config.budget.cost is not None and (unpriced := self.models.unpriced()):
            raise StellarError(
                f"cannot keep to a money budget: no price for {', '.join(unpriced)}; "
                "add it to llm.prices (USD per million tokens: [input, output])"
            )
        self.run_dir = run_dir or new_run_dir(
            config.out, config.name, config.algorithm.name, config.seed
        )
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.lock = DirectoryLock(self.run_dir, "run").acquire()
        (self.run_dir / CONFIG_NAME).write_text(  # first, so that any kill leaves it resumable
            yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False), encoding="utf-8"
        )
        self.archived = archived_generations(self.run_dir) if resume else {}
        self.resumed = resume
        self.summary = RunSummary(str(self.run_dir), config.algorithm.name, config.seed)
        self.summary.unpriced = self.models.unpriced()
        if self.conversational:  # e.g. an HTTP system sent the history as one text
            self.summary.approximate = getattr(self.sut, "approximate", None)
        if self.post_search is not None:
            self.summary.post_search["judge"] = self.post_search.target
        self.on_record, self.on_verdict = on_record, on_verdict
        self.stop = StopRequest()
        self.progress = Progress(spent=lambda: self.earlier_cost + self.models.spend.total)
        self.earlier_cost = 0.0  # spent before a resume
        self.budgets = AnyOf([self.stop, *budgets(config.budget)])
        self._executed: list[dict[str, Any]] = []  # candidates that reached the SUT
        self._prepared = False
        self._asked = 0  # generations asked so far
        self._depth: int | None = None  # generations in flight, set at the first ask
        self._stored_depth: int | None = None  # the depth an earlier part of the run used
        self._exhausted = False  # the search had no new candidate
        self._vectors_intact = True  # every generation told so far is complete in the archive
        self._stored_after: dict[int, int] = {}  # generation -> duplicate-filter rows after it

    def request_stop(self, reason: StopReason = StopReason.INTERRUPTED, message: str = "") -> None:
        """Stop after the tests in flight (Ctrl-C); everything finished is kept."""
        self.stop.request(reason, message)

    async def prepare(self) -> None:
        """Load what components would load lazily (embedders, local models, data) now, so that
        budgets count testing, not preparation. Components opt in with a ``prepare`` method."""
        if self._prepared:
            return
        try:
            await self._prepare_components()
        except Exception:  # a new run that could not start leaves no directory behind
            if not self.resumed and not (self.run_dir / ARCHIVE_NAME).exists():
                self.lock.release()
                shutil.rmtree(self.run_dir, ignore_errors=True)
            raise
        self._prepared = True

    async def _prepare_components(self) -> None:
        post_judge = self.post_search.judge if self.post_search else None
        for component in (self.generator, self.sut, self.fitness, self.duplicates, post_judge):
            prepare = getattr(component, "prepare", None)
            if prepare is None:
                continue
            if inspect.iscoroutinefunction(prepare):
                await prepare()
            else:
                await asyncio.to_thread(prepare)
        needed = getattr(self.sut, "probe_needed", True)  # not when the run sends the history
        if self.conversational and (probe := self.config.probe).enabled and needed:
            await probe_memory(self.sut, MemoryProbe(list(probe.turns), probe.expect))

    async def execute(self) -> RunSummary:
        """Run the search to its budget; the run directory stays locked until it ends."""
        try:
            await self.prepare()
            with tuned_for_a_run():
                return await self._execute()
        finally:
            self.lock.release()

    async def _execute(self) -> RunSummary:
        cfg = self.config
        self.progress.started = time.monotonic()
        with Archive(self.run_dir / ARCHIVE_NAME) as archive:
            now = datetime.now().isoformat(timespec="seconds")
            earlier = archive.meta()
            archive.set_meta(
                version=__version__,
                seed=cfg.seed,
                algorithm=cfg.algorithm.name,
                started_at=earlier.get("started_at", now) if self.resumed else now,
                finished_at=None,
                stop_reason=None,
            )
            if self.resumed:
                archive.set_meta(resumed_at=[*earlier.get("resumed_at", []), now])
                self.progress.started -= float(earlier.get("elapsed") or 0.0)
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
                max_answer_chars=cfg.max_answer_chars,
                seed=cfg.seed,
                objectives=cfg.objectives,
                repeats=cfg.repeats,
                on_record=self._count,
                on_fatal=self._fatal,
                on_unused=lambda record: self.summary.count_usage(record.usage),
                check_response=self.check_response,
                on_screened=self._screened,
            )
            stop = Stop(StopReason.ERROR, str(StopReason.ERROR))
            try:
                stop = await self._search(pipeline, archive)
                await self._judge_after_search(archive, stop)
            finally:
                stop = self.stop.stop or stop  # Ctrl-C or a model error wins
                self._finish(archive, stop)
                try:
                    close = getattr(self.sut, "aclose", None)
                    if close is not None:
                        await close()
                finally:
                    await self.models.aclose()
        return self.summary

    async def _search(self, pipeline: Pipeline, archive: Archive) -> Stop:
        """Keep ``depth`` generations in flight; tell the oldest when it is complete."""
        self._stored_depth = archive.meta().get("depth")  # a resume keeps the run's order
        window = self._replay(archive, pipeline)
        gate = Gate(self.budgets, self.progress)
        for asked in window:
            asked.task = pipeline.start(asked.generation, asked.candidates, gate, asked.done)
        try:
            while True:
                self._fill(window, pipeline, gate)
                if self._stored_depth != self._depth:
                    archive.set_meta(depth=self._depth)
                    self._stored_depth = self._depth
                if not window:
                    break
                oldest = window.popleft()
                assert oldest.task is not None
                records = await oldest.task
                self._told(archive, oldest.candidates, records)
                archive.set_meta(elapsed=time.monotonic() - self.progress.started)
                self._save_vectors(archive, oldest.generation, records)
                if self.budgets.check(self.progress) is not None:
                    gate.closed = True  # the generations still in flight run no new test
        finally:
            tasks = [asked.task for asked in window if asked.task is not None]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        exhausted = Stop(StopReason.EXHAUSTED, f"{StopReason.EXHAUSTED} (no new candidates)")
        return self.budgets.check(self.progress) or exhausted

    def _fill(self, window: deque[Asked], pipeline: Pipeline, gate: Gate) -> None:
        """Ask generations until ``depth`` are in flight, while a budget is left."""
        while (
            (self._depth is None or len(window) < self._depth)
            and self.budgets.check(self.progress) is None
            and gate.tests_left != 0
        ):
            asked = self._ask()
            if asked is None:
                return
            asked.task = pipeline.start(asked.generation, asked.candidates, gate)
            window.append(asked)

    def _ask(self) -> Asked | None:
        """The search's next generation; None when it has no new candidate."""
        if self._exhausted:
            return None
        candidates = self.algorithm.ask()
        if not candidates:
            self._exhausted = True
            return None
        if self._depth is None:  # fixed by the first generation; a resume reads it back
            cfg = self.config
            self._depth = (
                cfg.generations_in_flight
                or self._stored_depth
                or in_flight(cfg.concurrency, len(candidates), cfg.budget.tests)
            )
        self._asked += 1
        return Asked(self._asked - 1, candidates)

    def _replay(self, archive: Archive, pipeline: Pipeline) -> deque[Asked]:
        """Re-tell the search every archived generation, asking and telling in the order the
        run did, and count its tests; the generations still in flight at the kill are
        returned with their archived records for the loop to complete."""
        window: deque[Asked] = deque()
        if not self.archived:
            return window
        through = self._load_vectors(archive)  # generations whose vectors were saved
        inputs: list[str] = []  # to embed again: those with no saved vector
        while True:
            while self._depth is None or len(window) < self._depth:
                asked = self._ask()
                if asked is None:
                    break
                asked.done = self.archived.get(asked.generation, {})
                check_same_search(asked.generation, asked.candidates, asked.done)
                window.append(asked)
            if not window or len(window[0].done) < len(window[0].candidates):
                break
            oldest = window.popleft()
            records = [oldest.done[i] for i in range(len(oldest.candidates))]
            for record in records:
                self._count(record)
            pipeline.screened += [(r.generation, r.index) for r in records if r.executed]
            if oldest.generation > through:
                inputs += [r.input_text or "" for r in records if r.executed]
            self._told(archive, oldest.candidates, records)
        for asked in window:
            for index in sorted(asked.done):
                self._count(asked.done[index])
            done = [asked.done[i] for i in sorted(asked.done) if asked.done[i].executed]
            inputs += [r.input_text or "" for r in done]
            pipeline.screened += [(r.generation, r.index) for r in done]
        if self.duplicates is not None:
            self.duplicates.add(inputs)
        self.earlier_cost = self.summary.cost
        return window

    def _load_vectors(self, archive: Archive) -> int:
        """Reload the duplicate filter's saved vectors; the last generation they cover."""
        saved = archive.meta().get("vectors") or {}
        path = self.run_dir / VECTORS_NAME
        if self.duplicates is None or not saved or not path.exists():
            return -1
        with path.open("r+b") as fh:  # rows written after the last complete generation
            os.truncate(
                fh.fileno(), min(path.stat().st_size, saved["rows"] * 4 * self.duplicates.dim)
            )
        return int(saved["generation"]) if self.duplicates.load(path) else -1

    def _screened(self, generation: int) -> None:
        if self.duplicates is not None:
            self._stored_after[generation] = len(self.duplicates)

    def _save_vectors(
        self, archive: Archive, generation: int, records: list[TestRecord | None]
    ) -> None:
        """Save the duplicate filter's new vectors while every generation told is complete in
        the archive (an input screened but never run must not count as seen on resume)."""
        rows = self._stored_after.pop(generation, None)
        if self.duplicates is None or not self._vectors_intact or rows is None:
            return
        if any(record is None for record in records):
            self._vectors_intact = False
            return
        self.duplicates.save_new(self.run_dir / VECTORS_NAME, upto=rows)
        archive.set_meta(vectors={"generation": generation, "rows": rows})

    def _told(
        self, archive: Archive, candidates: list[Candidate], records: list[TestRecord | None]
    ) -> None:
        """Assign the generation's failures to modes (stored), then tell the search."""
        self.summary.generations += 1
        modes = self.modes.told(records)
        pairs = zip(records, modes, strict=True)
        if found := {(r.generation, r.index): m for r, m in pairs if r and m is not None}:
            archive.set_modes(found)
        self.summary.modes = self.progress.modes = len(self.modes)
        scores, told = [self._objectives(r) for r in records], outcomes(records, modes)
        self.algorithm.tell(candidates, scores, **{k: told[k] for k in self._tells})

    async def _judge_after_search(self, archive: Archive, stop: Stop) -> None:
        """The post-search oracle, when the search ended by its budget (not on Ctrl-C or a
        model error: ``stellar judge RUN_DIR`` does it later)."""
        if self.post_search is None or self.stop.stop is not None or not stop.reason.finished:
            return
        try:
            await judge_archive(archive, self.post_search, self.on_verdict)
        except ModelAccessError as exc:
            self._fatal(f"post-search judge: {exc}")

    def _finish(self, archive: Archive, stop: Stop) -> None:
        self.summary.elapsed = time.monotonic() - self.progress.started
        report = getattr(self.algorithm, "report", None)
        if report is not None:
            self.summary.algorithm_report = report(self._executed)
        self.summary.stop_reason, self.summary.stop_message = stop.reason.value, stop.message
        if self.post_search is not None:
            update_summary(self.summary, archive, self.post_search)
        if stop.reason not in STOPPED_EARLY:
            self.summary.check_health(self.config.budget.max_error_rate)
        archive.set_meta(
            elapsed=self.summary.elapsed,
            finished_at=datetime.now().isoformat(timespec="seconds"),
            stop_reason=stop.reason.value,
            summary=asdict(self.summary),
        )
        write_summary(self.run_dir, asdict(self.summary))

    def _sut_timeout(self) -> float | None:
        """A model SUT is bounded by its client's timeout and retries, unless set explicitly."""
        uses_model = any(name.startswith("sut.") for name, _ in model_names(self.config))
        explicit = "sut_timeout" in self.config.model_fields_set
        return None if uses_model and not explicit else self.config.sut_timeout

    def _fatal(self, message: str, reason: StopReason = StopReason.MODEL_ERROR) -> None:
        self.summary.error = self.summary.error or message
        self.request_stop(reason, f"{reason}: {message}")

    def _count(self, record: TestRecord) -> None:
        self.summary.count(record)
        self.progress.tests, self.progress.discarded = self.summary.tests, self.summary.discarded
        self.progress.errors = self.summary.errors
        if record.executed:
            self._executed.append(record.candidate)
        if self.on_record is not None:
            self.on_record(record, self.summary)

    def _objectives(self, record: TestRecord | None) -> list[float] | None:
        if record is None or record.status != Status.OK:
            return None
        return [record.scores[name] for name in self.config.objectives]
