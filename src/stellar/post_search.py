"""The post-search oracle: a second judge over every executed test once the search is done.

The paper's SafeQA search minimises a continuous judge's score; after the search a binary
judge (safe / unsafe / unknown) decides which tests are failures. Any run can do the same
with ``oracle.post_search``. Its verdicts are stored beside the tests they judge (the search's
own scores stay), each committed as it comes, so a stage that was stopped or killed goes on
where it was with ``stellar judge RUN_DIR``: only tests without a verdict, or whose verdict
ended in an error, are judged again.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from stellar.archive import Archive
from stellar.assembly import PostSearch, build_post_search
from stellar.config import RunConfig
from stellar.errors import ModelAccessError, StellarError
from stellar.features import Candidate
from stellar.fitness import to_evaluation
from stellar.llm.client import Models
from stellar.llm.usage import book_for_test
from stellar.locks import DirectoryLock
from stellar.modes import count_modes
from stellar.records import Response, Status, TestInput, TestRecord, Verdict
from stellar.rundir import ARCHIVE_NAME, CONFIG_NAME, read_summary, write_summary
from stellar.summary import RunSummary


async def judge_archive(
    archive: Archive,
    post: PostSearch,
    on_verdict: Callable[[TestRecord, int], None] | None = None,
) -> int:
    """Judge every test still without a verdict; returns how many were judged.

    ``on_verdict(record, pending)`` follows each stored verdict. A model that refuses the
    key or is unknown stops the stage (what was judged is kept) with ModelAccessError.
    """
    pending = archive.unjudged()
    slots = asyncio.Semaphore(post.concurrency)
    fatal: list[ModelAccessError] = []

    async def judge_one(test_id: int, record: TestRecord) -> None:
        async with slots:
            if fatal:
                return
            verdict = Verdict()
            try:
                with book_for_test(verdict.usage):
                    evaluation = to_evaluation(await post.judge.evaluate(*_judged(record)))
                verdict.scores, verdict.details = evaluation.scores, evaluation.details
                verdict.excluded = evaluation.excluded
                verdict.failed = bool(post.oracle(evaluation.scores))
            except ModelAccessError as exc:
                fatal.append(exc)
                return
            except Exception as exc:  # a fault of the judge is data
                verdict.error = f"{type(exc).__name__}: {exc}"
            archive.add_verdict(test_id, verdict)
            record.verdict = verdict
            if on_verdict is not None:
                on_verdict(record, len(pending))

    await asyncio.gather(*(judge_one(test_id, record) for test_id, record in pending))
    if fatal:
        raise fatal[0]
    return len(pending)


def _judged(record: TestRecord) -> tuple[Candidate, TestInput, Response]:
    """What the search's fitness saw, rebuilt from the archive."""
    return (
        Candidate(values=dict(record.candidate), vector=list(record.vector)),
        TestInput(record.input_text or "", record.prompt),
        Response(record.response_text or "", record.response_data),
    )


def update_summary(summary: RunSummary, archive: Archive, post: PostSearch) -> None:
    """Count the outcomes and the failure modes again with the verdicts, and say how many
    tests are still to judge."""
    judge = post.target
    records = list(archive.records())
    summary.recount(records)
    summary.modes = count_modes(records, post.thresholds, post.embedder)
    pending = sum(r.awaits_verdict for r in records)
    verdicts = [r.verdict for r in records if r.verdict is not None and not r.verdict.error]
    sources = Counter(str(v.details.get("source", judge)) for v in verdicts)
    summary.post_search.update(
        judge=judge, judged=len(verdicts), pending=pending, sources=dict(sources)
    )


@dataclass
class Judged:
    """What one ``stellar judge`` did: the run's summary after it, and the tests it judged,
    found judged already, and could not judge (no answer, or the search's judge failed)."""

    summary: RunSummary
    judged: int
    already: int
    not_judgeable: int


def hold_for_judging(run_dir: Path, config: RunConfig) -> DirectoryLock:
    """The lock of the run directory ``run_dir``, held, once it is known that it can be
    judged; a run without a post-search judge or an archive, or held by another process,
    is a one-line error."""
    if config.oracle.post_search is None:
        raise StellarError(
            f"{run_dir}: the run's configuration has no oracle.post_search (a second judge "
            f"after the search); add one to {Path(run_dir) / CONFIG_NAME}, e.g. under oracle: "
            "post_search: {target: FITNESS, below: {SCORE: 0.5}}"
        )
    if not (Path(run_dir) / ARCHIVE_NAME).exists():
        raise StellarError(f"{run_dir}: not a run directory (no {ARCHIVE_NAME})")
    return DirectoryLock(Path(run_dir), "judge").acquire()


async def judge_run_dir(
    run_dir: Path,
    config: RunConfig,
    on_verdict: Callable[[TestRecord, int], None] | None = None,
    again: bool = False,
) -> Judged:
    """``stellar judge``: the post-search stage over the run directory ``run_dir`` (where it
    is now, whatever its summary says), on its own, holding the directory's lock;
    ``again``: forget the verdicts there are and judge every test anew."""
    with hold_for_judging(run_dir, config):
        return await judge_held(run_dir, config, on_verdict, again)


async def judge_held(
    run_dir: Path,
    config: RunConfig,
    on_verdict: Callable[[TestRecord, int], None] | None = None,
    again: bool = False,
) -> Judged:
    """:func:`judge_run_dir` once :func:`hold_for_judging` holds the directory."""
    summary = _stored_summary(Path(run_dir), config)
    models = Models(config.llm)
    try:
        post = build_post_search(config, models)
        assert post is not None
        prepare = getattr(post.judge, "prepare", None)
        if prepare is not None:
            await asyncio.to_thread(prepare)
        with Archive(Path(run_dir) / ARCHIVE_NAME) as archive:
            return await _judge_stored(archive, post, summary, on_verdict, again)
    finally:
        await models.aclose()


async def _judge_stored(
    archive: Archive,
    post: PostSearch,
    summary: RunSummary,
    on_verdict: Callable[[TestRecord, int], None] | None,
    again: bool,
) -> Judged:
    """Judge what is left in ``archive``; the summary is stored however that ends."""
    if again:
        archive.clear_verdicts()
    counts = archive.counts()
    try:
        judged = await judge_archive(archive, post, on_verdict)
    finally:
        update_summary(summary, archive, post)
        archive.set_meta(summary=asdict(summary))
        write_summary(Path(summary.run_dir), asdict(summary))
    ok, errors = counts[Status.OK], counts[Status.SUT_ERROR] + counts[Status.JUDGE_ERROR]
    return Judged(summary, judged, ok - judged, errors)


def _stored_summary(run_dir: Path, config: RunConfig) -> RunSummary:
    """The run's stored summary, naming the directory where the run is now."""
    stored = read_summary(run_dir)
    known = {f.name for f in fields(RunSummary) if f.init}
    given = {k: v for k, v in stored.items() if k in known}
    given["run_dir"] = str(run_dir)  # a moved run's summary names where it was
    given.setdefault("algorithm", config.algorithm.name)
    given.setdefault("seed", config.seed)
    return RunSummary(**given)
