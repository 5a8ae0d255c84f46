"""Replay archived inputs as a regression suite.

The inputs of a run directory (its failures, or every executed test) or of a suite file are
sent again to the current or a new system under test: no generation, no search, no duplicate
filter. They go through the run's own :class:`~stellar.pipeline.Pipeline` (a generator that
hands back each archived text), so faults, answer cleaning, scoring, the oracle and the
post-search judge are those of a run, into a new run directory whose archive names its
source (meta ``replay_of``). Each test is then set against its source verdict: fixed, still
failing, newly failing (not a failure in the source), passing, flaky (with ``repeat``
> 1, the verdict changed between repeats), error (no repeat reached a verdict) or excluded.

The system under test answers afresh: its model answers are not read from the response
cache (they are still stored there) unless ``cached`` asks for them. A judge's model may
answer from the cache: an identical request (the same answer to judge) gets the same
verdict. How many answers came from the cache, per role, is in ``replay.json``.

Where the tests come from, and suite files: :mod:`stellar.suite`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from stellar import __version__
from stellar.archive import Archive, open_run
from stellar.assembly import Components, build_components, build_post_search
from stellar.config import RunConfig, model_names
from stellar.errors import ModelAccessError, StellarError
from stellar.features import Candidate, FeatureSpace
from stellar.llm.usage import from_cache
from stellar.locks import DirectoryLock
from stellar.modes import count_modes, mode_embedder
from stellar.pipeline import Gate, Pipeline
from stellar.post_search import judge_archive, update_summary
from stellar.records import TestInput, TestRecord
from stellar.rundir import ARCHIVE_NAME, CONFIG_NAME, new_run_dir, write_summary
from stellar.suite import ReplayTest, Source
from stellar.summary import RunSummary
from stellar.termination import AnyOf, StopReason, StopRequest

REPLAY_NAME = "replay.json"
FIXED, STILL_FAILING, NEWLY_FAILING = "fixed", "still_failing", "newly_failing"
PASSING, FLAKY, ERROR, EXCLUDED = "passing", "flaky", "error", "excluded"
# in the order they are shown; failing: what a gate counts; verdict: a verdict was reached
OUTCOMES = (NEWLY_FAILING, STILL_FAILING, FLAKY, ERROR, FIXED, PASSING, EXCLUDED)
FAILING = (STILL_FAILING, NEWLY_FAILING)
VERDICT = (FIXED, STILL_FAILING, NEWLY_FAILING, PASSING, FLAKY)
FRESH = ("sut",)  # roles whose model answers a replay never reads from the cache


@dataclass
class TestOutcome:
    """A replayed test: its verdict in each repeat, and what that means against the source."""

    __test__ = False  # not a pytest class

    test: ReplayTest
    now: list[str]  # per repeat: fail, pass, error, excluded
    outcome: str
    record: TestRecord | None  # the last repeat's


@dataclass
class ReplayResult:
    """What a replay did: the new run directory, its records and each test's outcome."""

    source: Source
    run_dir: Path
    summary: RunSummary
    outcomes: list[TestOutcome]
    records: list[TestRecord]
    repeat: int = 1
    cached: bool = False  # the system's answers could come from the model cache

    def counts(self) -> dict[str, int]:
        return {name: sum(o.outcome == name for o in self.outcomes) for name in OUTCOMES}

    @property
    def failing(self) -> int:
        return sum(o.outcome in FAILING for o in self.outcomes)

    @property
    def verdicts(self) -> int:
        return sum(o.outcome in VERDICT for o in self.outcomes)

    def from_cache(self) -> dict[str, tuple[int, int]]:
        """Per role: (answers taken from the model cache, model calls)."""
        return from_cache(self.summary.usage, self.summary.post_search.get("usage") or {})


@dataclass(frozen=True)
class ArchivedCandidate(Candidate):
    """A candidate that carries the text it was sent as."""

    text: str = ""
    prompt: str | None = None
    plan: dict[str, Any] | None = None  # a conversation's: its recorded turns are sent again


class ArchivedText:
    """The generator of a replay: each candidate's archived text, as it was."""

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput:
        assert isinstance(candidate, ArchivedCandidate)
        return TestInput(candidate.text, candidate.prompt, candidate.plan)


def candidates(tests: Sequence[ReplayTest], space: FeatureSpace) -> list[ArchivedCandidate]:
    """The tests as candidates of ``space``; a test with other features is refused."""
    found = []
    for n, test in enumerate(tests, 1):
        if set(test.candidate) != set(space.names):
            raise StellarError(
                f"test {n} ({test.text[:40]!r}) has features {sorted(test.candidate)}, the "
                f"configuration's space has {space.names}: give the configuration it ran with"
            )
        try:
            vector = space.encode(test.candidate)  # every value checked
        except ValueError as exc:
            raise StellarError(f"test {n} ({test.text[:40]!r}): {exc}") from None
        if test.vector and len(test.vector) == len(space):
            vector = tuple(test.vector)  # as archived
        found.append(
            ArchivedCandidate(dict(test.candidate), vector, test.text, test.prompt, test.plan)
        )
    return found


async def replay(
    config: RunConfig,
    source: Source,
    repeat: int = 1,
    run_dir: Path | None = None,
    on_record: Callable[[TestRecord, RunSummary], None] | None = None,
    cached: bool = False,
) -> ReplayResult:
    """Send every test of ``source`` ``repeat`` times; the new run directory holds the
    records (generation = repeat, index = the test's place in the source). ``cached``: the
    system's model answers may come from the cache (by default every one is asked again)."""
    asked = candidates(source.tests, config.feature_space())
    parts = build_components(config, fresh=() if cached else FRESH)
    run_dir = run_dir or new_run_dir(config.out, config.name, "replay", config.seed)
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = DirectoryLock(run_dir, "replay").acquire()
    try:
        (run_dir / CONFIG_NAME).write_text(
            yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False), encoding="utf-8"
        )
        summary = await _send(config, parts, source, asked, repeat, run_dir, on_record)
        with open_run(run_dir) as archive:
            records = list(archive.records())
    finally:
        lock.release()
    outcomes = compare(source.tests, records, repeat)
    result = ReplayResult(source, run_dir, summary, outcomes, records, repeat, cached)
    write_report(result)
    return result


async def _send(
    config: RunConfig,
    parts: Components,
    source: Source,
    asked: list[ArchivedCandidate],
    repeat: int,
    run_dir: Path,
    on_record: Callable[[TestRecord, RunSummary], None] | None,
) -> RunSummary:
    summary = RunSummary(str(run_dir), "replay", config.seed)
    stop = StopRequest()
    post = build_post_search(config, parts.models)

    def count(record: TestRecord) -> None:
        summary.count(record)
        if on_record is not None:
            on_record(record, summary)

    def fatal(message: str, reason: StopReason = StopReason.MODEL_ERROR) -> None:
        summary.error = summary.error or message
        stop.request(reason, f"{reason}: {message}")

    began = time.monotonic()
    try:
        await prepare(parts.sut, parts.fitness, post.judge if post else None)
        with Archive(run_dir / ARCHIVE_NAME) as archive:
            archive.set_meta(
                version=__version__,
                seed=config.seed,
                algorithm="replay",
                replay_of=str(source.path),
                replayed=[t.source_id for t in source.tests],
                started_at=datetime.now().isoformat(timespec="seconds"),
            )
            pipeline = Pipeline(
                generator=ArchivedText(),
                sut=parts.sut,
                fitness=parts.fitness,
                oracle=parts.oracle,
                archive=archive,
                concurrency=config.concurrency,
                sut_timeout=sut_timeout(config),
                max_input_chars=config.max_input_chars,
                max_answer_chars=config.max_answer_chars,
                seed=config.seed,
                objectives=config.objectives,
                on_record=count,
                on_fatal=fatal,
                check_response=parts.check_response,
            )
            gate = Gate(AnyOf([stop]))
            for generation in range(repeat):
                if stop.stop is None:
                    await pipeline.run_generation(generation, asked, gate)
            if post is not None and stop.stop is None:
                try:
                    await judge_archive(archive, post)
                except ModelAccessError as exc:
                    fatal(f"post-search judge: {exc}")
                update_summary(summary, archive, post)
            elif post is None:  # the failure modes of what failed again, as a run counts them
                thresholds = (config.oracle.below or {}, {})
                embedder = mode_embedder(config.duplicates.embedder)
                summary.modes = count_modes(list(archive.records()), thresholds, embedder)
            _finish(summary, archive, config, stop, len(asked), repeat, began)
    finally:
        close = getattr(parts.sut, "aclose", None)
        if close is not None:
            await close()
        await parts.models.aclose()
    return summary


def _finish(
    summary: RunSummary,
    archive: Archive,
    config: RunConfig,
    stop: StopRequest,
    tests: int,
    repeat: int,
    began: float,
) -> None:
    summary.elapsed = time.monotonic() - began
    summary.generations = repeat
    times = f" x {repeat}" if repeat > 1 else ""
    stopped = stop.stop
    summary.stop_reason = stopped.reason.value if stopped else StopReason.TESTS.value
    summary.stop_message = stopped.message if stopped else f"replayed {tests} tests{times}"
    if stopped is None:
        summary.check_health(config.budget.max_error_rate)
    archive.set_meta(
        elapsed=summary.elapsed,
        finished_at=datetime.now().isoformat(timespec="seconds"),
        stop_reason=summary.stop_reason,
        summary=asdict(summary),
    )
    write_summary(Path(summary.run_dir), asdict(summary))


async def prepare(*components: object) -> None:
    """What components would load lazily (models, data), loaded before the first test."""
    for component in components:
        load = getattr(component, "prepare", None)
        if load is None:
            continue
        if inspect.iscoroutinefunction(load):
            await load()
        else:
            await asyncio.to_thread(load)


def sut_timeout(config: RunConfig) -> float | None:
    """As in a run: a model SUT is bounded by its client's timeout and retries."""
    uses_model = any(name.startswith("sut.") for name, _ in model_names(config))
    explicit = "sut_timeout" in config.model_fields_set
    return None if uses_model and not explicit else config.sut_timeout


def verdict_of(record: TestRecord) -> str:
    """fail, pass, error (no verdict: a SUT or judge fault) or excluded."""
    if not record.judged:
        return "error"
    if record.final_excluded:
        return "excluded"
    return "fail" if record.is_failure else "pass"


def classify(was: bool | None, now: Sequence[str]) -> str:
    """A test's outcome from its source verdict and its verdicts now, one per repeat."""
    reached = {v for v in now if v in ("fail", "pass")}
    if len(reached) > 1:
        return FLAKY
    if not reached:
        return EXCLUDED if now and all(v == "excluded" for v in now) else ERROR
    if "fail" in reached:
        return STILL_FAILING if was else NEWLY_FAILING
    return FIXED if was else PASSING


def compare(
    tests: Sequence[ReplayTest], records: Sequence[TestRecord], repeat: int
) -> list[TestOutcome]:
    """Each test's outcome; a repeat that never ran (a stopped replay) is left out."""
    found = {(r.generation, r.index): r for r in records}
    outcomes = []
    for index, test in enumerate(tests):
        runs = [found[g, index] for g in range(repeat) if (g, index) in found]
        now = [verdict_of(r) for r in runs]
        last = runs[-1] if runs else None
        outcomes.append(TestOutcome(test, now, classify(test.failed, now), last))
    return outcomes


def write_report(result: ReplayResult) -> Path:
    """``replay.json`` in the new run directory: the counts and every test's outcome."""
    tests = []
    for index, o in enumerate(result.outcomes):
        record = o.record
        tests.append(
            {
                "index": index,
                "source_id": o.test.source_id,
                "input": o.test.text,
                "candidate": o.test.candidate,
                "was": {True: "fail", False: "pass", None: None}[o.test.failed],
                "now": o.now,
                "outcome": o.outcome,
                "source_scores": o.test.scores,
                "scores": record.scores if record else {},
                "answer": record.response_text if record else None,
                "error": record.error if record else None,
            }
        )
    report = {
        "source": str(result.source.path),
        "only": result.source.only,
        "repeat": result.repeat,
        "counts": result.counts(),
        "failing": result.failing,
        "verdicts": result.verdicts,
        "sut_cache": result.cached,
        "from_cache": {role: cached for role, (cached, _) in result.from_cache().items()},
        "tests": tests,
    }
    path = result.run_dir / REPLAY_NAME
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str), "utf-8")
    return path
