"""The per-test pipeline shared by every algorithm.

For each generation of candidates: generate inputs (concurrently), check validity and
duplicates, then for each kept input call the system under test, score the answer and apply
the oracle (concurrently), committing each record to the archive as it completes. Several
generations may be in flight at once (:meth:`Pipeline.start`): they share the concurrency
slots, but their screening runs one generation after another, in the order they were
started, and the test budget is handed out in that order, so results do not depend on
timing. A fault in one candidate is recorded as its status and never stops the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from stellar.archive import Archive
from stellar.dialogue.plan import PLAN_KEY, Plan
from stellar.dialogue.runner import run_conversation
from stellar.dialogue.session import open_session
from stellar.errors import ModelAccessError
from stellar.features import Candidate
from stellar.fitness import Fitness, Oracle, to_evaluation
from stellar.fitness.base import ScoreShapeError
from stellar.generators import Generator
from stellar.llm.usage import book_for_test
from stellar.pass_k import send_repeated
from stellar.records import DUPLICATE_OF, Response, Status, TestInput, TestRecord
from stellar.suts import SUT, to_response
from stellar.termination import AnyOf, Progress, StopReason
from stellar.untrusted import Cleaner


class DuplicateCheck(Protocol):
    def screen(self, texts: Sequence[str]) -> list[tuple[bool, float, int]]: ...


@dataclass
class Gate:
    """Decides whether another input may still be sent to the system under test, and hands
    out the test budget in candidate order over every generation in flight."""

    budgets: AnyOf = field(default_factory=lambda: AnyOf([]))
    progress: Progress = field(default_factory=Progress)
    tests_left: int | None = field(init=False)  # the test budget not yet handed out
    closed: bool = False  # a budget checked between generations ended the run
    unscreened: dict[int, int] = field(default_factory=dict)  # generation -> inputs to screen

    def __post_init__(self) -> None:
        self.tests_left = self.budgets.tests_left(self.progress)

    def open(self) -> bool:
        return not self.closed and self.budgets.check(self.progress, between_tests=True) is None

    def take(self, wanted: int) -> int:
        """How many of ``wanted`` runnable inputs may run (the rest of the budget is kept)."""
        granted = wanted if self.tests_left is None else min(wanted, self.tests_left)
        if self.tests_left is not None:
            self.tests_left -= granted
        return granted

    def sure_to_run(self, generation: int) -> bool:
        """Whether some input of ``generation`` will get a test whatever the generations
        before it screen out; otherwise it waits for them rather than generate in vain."""
        if self.tests_left is None:
            return True
        ahead = sum(n for g, n in self.unscreened.items() if g < generation)
        return self.tests_left > ahead


@dataclass
class Asked:
    """A generation asked and not yet told: its candidates, archived records (a resumed run)
    and the pipeline's task."""

    generation: int
    candidates: list[Candidate]
    done: dict[int, TestRecord] = field(default_factory=dict)
    task: asyncio.Task[list[TestRecord | None]] | None = None


def in_flight(concurrency: int, population: int, tests: int | None = None) -> int:
    """Generations asked ahead: 1 (generational, as the paper) while one generation holds
    twice the slots; else enough to keep ``concurrency`` tests busy while the slowest test of
    the oldest generation still runs: with heavy-tailed latencies a generation takes several
    times its mean test (bench/throughput.py: at concurrency 256, population 20, 26
    generations reached 38% of the endpoint limit, 104 reached 77%). At most a quarter of
    the generations a ``tests`` budget allows, so that most of a search is still bred from
    the scores of the generations before."""
    population = max(1, population)
    if 2 * concurrency <= population:
        return 1
    depth = math.ceil(8 * concurrency / population)
    return depth if tests is None else max(1, min(depth, tests // population // 4))


@dataclass
class Pipeline:
    generator: Generator
    sut: SUT
    fitness: Fitness
    oracle: Oracle
    archive: Archive
    duplicates: DuplicateCheck | None = None
    concurrency: int = 8
    sut_timeout: float | None = 60.0  # None: the SUT bounds its own calls (model clients)
    max_input_chars: int = 2000
    max_answer_chars: int = 1_000_000  # longer answers are cut and flagged
    seed: int = 0
    objectives: Sequence[str] = ()
    repeats: int = 1  # each test sent this many times (stellar.pass_k)
    on_record: Callable[[TestRecord], None] | None = None
    # a model refused the key or is unknown, a fitness cannot fit (ScoreShapeError): the
    # message and the stop reason
    on_fatal: Callable[[str, StopReason], None] | None = None
    on_unused: Callable[[TestRecord], None] | None = None  # generated but never run
    check_response: Callable[[Response], str | None] | None = None  # a problem, or None
    on_screened: Callable[[int], None] | None = None  # a generation's inputs were screened
    # (generation, index) of each input the duplicate filter stored, in its row order
    screened: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._slots = asyncio.Semaphore(self.concurrency)
        self._screened: asyncio.Event | None = None  # set when the last started one screened

    async def run_generation(
        self,
        generation: int,
        candidates: Sequence[Candidate],
        gate: Gate,
        done: Mapping[int, TestRecord] | None = None,
    ) -> list[TestRecord | None]:
        """Records aligned with ``candidates``; None where the budget ended before its turn.
        ``done``: records already archived (a resumed run), not run again."""
        return await self.start(generation, candidates, gate, done)

    def start(
        self,
        generation: int,
        candidates: Sequence[Candidate],
        gate: Gate,
        done: Mapping[int, TestRecord] | None = None,
    ) -> asyncio.Task[list[TestRecord | None]]:
        """Start a generation while others may still be in flight; it is screened after
        every generation started before it (see :meth:`run_generation`)."""
        done = done or {}
        todo = [i for i in range(len(candidates)) if i not in done]
        previous, screened = self._screened, asyncio.Event()
        self._screened = screened
        gate.unscreened[generation] = len(todo)
        work = self._run(generation, candidates, gate, done, todo, previous, screened)
        return asyncio.ensure_future(work)

    async def _run(
        self,
        generation: int,
        candidates: Sequence[Candidate],
        gate: Gate,
        done: Mapping[int, TestRecord],
        todo: list[int],
        previous: asyncio.Event | None,
        screened: asyncio.Event,
    ) -> list[TestRecord | None]:
        try:
            if previous is not None and not gate.sure_to_run(generation):
                await previous.wait()
            records: list[TestRecord] = []
            if gate.tests_left != 0:
                generated = await asyncio.gather(
                    *(self._generate(generation, i, candidates[i], gate) for i in todo)
                )
                records = [r for r in generated if r is not None]
            if previous is not None:
                await previous.wait()
            runnable = await self._screen(generation, records, gate)
        finally:
            gate.unscreened.pop(generation, None)
            screened.set()
        await self._warm(runnable)
        ran = await asyncio.gather(*(self._execute(candidates[r.index], r, gate) for r in runnable))
        done_now = {id(r) for r in ran if r is not None}
        unused = [r for r in records if r.status == Status.OK and id(r) not in done_now]
        if self.on_unused is not None:
            for record in unused:  # generated, never run: its generation was still paid for
                self.on_unused(record)
        dropped = {id(r) for r in unused}
        found = {r.index: r for r in records if id(r) not in dropped}
        return [done.get(i) or found.get(i) for i in range(len(candidates))]

    async def _generate(
        self, generation: int, index: int, candidate: Candidate, gate: Gate
    ) -> TestRecord | None:
        record = TestRecord(
            generation=generation,
            index=index,
            seed=self.seed,
            candidate=dict(candidate.values),
            vector=list(candidate.vector),
            started_at=time.time(),
        )
        rng = random.Random(f"{self.seed}:{generation}:{index}")
        async with self._slots:
            if not gate.open():  # the budget ended while this one waited
                return None
            began = time.perf_counter()
            try:
                with book_for_test(record.usage):
                    test_input = await self.generator.generate(candidate, rng)
            except Exception as exc:  # a fault of the generator is data
                record.status, record.error = Status.INVALID, f"generator: {_describe(exc)}"
                self._check_fatal(exc)
                test_input = None
            record.generation_seconds = time.perf_counter() - began
        if test_input is not None:
            record.input_text, record.prompt = test_input.text, test_input.prompt
            if test_input.plan is not None:
                record.details[PLAN_KEY] = test_input.plan
        return record

    async def _screen(
        self, generation: int, records: Sequence[TestRecord], gate: Gate
    ) -> list[TestRecord]:
        """Mark invalid and duplicate inputs in candidate order, store those, and return
        the inputs that get a test from the budget."""
        for record in records:
            if record.status != Status.OK:
                continue
            text = (record.input_text or "").strip()
            if not text:
                record.status, record.error = Status.INVALID, "empty input"
            elif len(text) > self.max_input_chars:
                record.status = Status.INVALID
                record.error = f"input longer than {self.max_input_chars} characters"
        if self.duplicates is not None:
            valid = [r for r in records if r.status == Status.OK]
            texts = [r.input_text or "" for r in valid]
            verdicts = await asyncio.to_thread(self.duplicates.screen, texts)
            for record, (is_duplicate, similarity, row) in zip(valid, verdicts, strict=True):
                record.similarity = float(similarity)
                if not is_duplicate:
                    self.screened.append((record.generation, record.index))
                    continue
                record.status = Status.DUPLICATE
                record.error = f"similarity {similarity:.3f} to an earlier input"
                if row < len(self.screened):  # (generation, index) of the input it matched
                    record.details[DUPLICATE_OF] = list(self.screened[row])
        if self.on_screened is not None:
            self.on_screened(generation)
        for record in records:
            if record.status != Status.OK:
                self._commit(record)
        runnable = [r for r in records if r.status == Status.OK]
        return runnable[: gate.take(len(runnable))]

    async def _warm(self, runnable: Sequence[TestRecord]) -> None:
        """Hand the inputs about to be sent to a SUT that prepares batches (see ``SUT``)."""
        warm = getattr(self.sut, "warm", None)
        if warm is None or not runnable:
            return
        texts = [
            text
            for r in runnable
            for text in (
                [t["text"] for t in r.details[PLAN_KEY]["turns"]]
                if PLAN_KEY in r.details
                else [r.input_text or ""]
            )
        ]
        with contextlib.suppress(Exception):  # each query meets the fault and records it
            await warm(texts)

    async def _execute(
        self, candidate: Candidate, record: TestRecord, gate: Gate
    ) -> TestRecord | None:
        async with self._slots:
            if not gate.open():
                return None
            with book_for_test(record.usage):
                if self.repeats > 1:  # each repeat in its own session (stellar.pass_k)
                    await send_repeated(record, self.repeats, partial(self._call_sut, candidate))
                else:
                    await self._call_sut(candidate, record)
        self._commit(record)
        return record

    async def _call_sut(self, candidate: Candidate, record: TestRecord) -> None:
        text = record.input_text or ""
        plan = record.details.get(PLAN_KEY)
        began = time.perf_counter()
        try:
            if plan is None:
                async with asyncio.timeout(self.sut_timeout):  # no task of its own
                    reply = await self.sut.query(text)
                response = to_response(reply)
            else:  # a conversation: the timeout and the response check apply per turn
                response = await run_conversation(
                    await open_session(self.sut, plan),
                    Plan.from_dict(plan),
                    timeout=self.sut_timeout,
                    check=self.check_response,
                )
        except TimeoutError:
            record.status, record.error = Status.SUT_ERROR, f"timed out after {self.sut_timeout}s"
            return
        except Exception as exc:  # a fault of the system under test is data
            record.status, record.error = Status.SUT_ERROR, _describe(exc)
            self._check_fatal(exc)
            return
        finally:
            record.sut_seconds = time.perf_counter() - began
        record.response_text, record.response_data = self._bounded(response, record)
        problem = response.error or (
            plan is None and self.check_response and self.check_response(response)
        )
        if problem:
            record.status, record.error = Status.SUT_ERROR, problem
            return
        began = time.perf_counter()
        try:
            evaluation = to_evaluation(  # the same score check for every fitness
                await self.fitness.evaluate(
                    candidate, TestInput(text, record.prompt, plan), response
                )
            )
            record.scores, record.excluded = evaluation.scores, evaluation.excluded
            record.details = {**record.details, **evaluation.details}
            missing = [name for name in self.objectives if name not in evaluation.scores]
            if missing:
                raise ScoreShapeError(
                    f"the fitness gave no score {missing[0]!r}, an objective of the "
                    f"configuration; it gave {sorted(evaluation.scores)}"
                )
            try:
                record.failed = bool(self.oracle(evaluation.scores))
            except KeyError as exc:  # a threshold on a score the fitness does not give
                raise ScoreShapeError(str(exc).strip("'\"")) from None
        except Exception as exc:  # a fault of a judge is data
            record.status, record.error = Status.JUDGE_ERROR, _describe(exc)
            self._check_fatal(exc)
        finally:
            record.fitness_seconds = time.perf_counter() - began

    def _bounded(self, response: Response, record: TestRecord) -> tuple[str, Any]:
        """The answer's text and data, without NULs or invalid code points, cut to
        ``max_answer_chars``; what was changed is noted in the record's details."""
        cleaner = Cleaner()
        text, data, limit = cleaner(response.text), cleaner(response.data), self.max_answer_chars
        if changes := cleaner.report():
            record.details["stored_text"] = changes
        if len(text) > limit:
            record.details["answer_truncated_from"] = len(text)
            text = text[:limit]
        if data is not None and (size := len(json.dumps(data, default=str))) > limit:
            record.details["answer_data_dropped"] = size
            data = None
        response.text, response.data = text, data  # what the fitness scores
        return text, data

    def _check_fatal(self, exc: Exception) -> None:
        if self.on_fatal is None:
            return
        if isinstance(exc, ModelAccessError):
            self.on_fatal(str(exc), StopReason.MODEL_ERROR)
        elif isinstance(exc, ScoreShapeError):
            self.on_fatal(str(exc), StopReason.ERROR)

    def _commit(self, record: TestRecord) -> None:
        """Store the record; a record the archive refuses is stored as an error without the
        answer, and only a second refusal (a full disk) stops the run."""
        record.finished_at = time.time()
        try:
            self.archive.add(record)
        except Exception as exc:  # e.g. text SQLite cannot take
            record.status, record.error = Status.SUT_ERROR, f"archive: {_describe(exc)}"
            record.response_text = record.response_data = None
            record.scores, record.details, record.failed = {}, {}, None
            try:
                self.archive.add(record)
            except Exception as again:
                if self.on_fatal is not None:
                    self.on_fatal(f"cannot write the archive: {_describe(again)}", StopReason.ERROR)
                return
        if self.on_record is not None:
            self.on_record(record)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
