"""A regression suite's inputs as pytest cases, each replayed by :mod:`stellar.replay`.

pytest users expect their LLM tests among their other tests: one case per input of a suite
file or run directory (what ``stellar replay`` reads), named by its failure mode and its
place in the source, that passes once the system no longer fails on it. Each case replays
its own input (the pipeline, system under test and judges of ``stellar replay``; nothing is
judged here), so cases are independent and ``-k``, ``-n`` (pytest-xdist) and ``--junitxml``
work as for any test. Heavy modules are imported when a suite is read, not with pytest.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from stellar.errors import StellarError

if TYPE_CHECKING:
    from _pytest.mark import ParameterSet

    from stellar.config import RunConfig
    from stellar.replay import ReplayResult, TestOutcome
    from stellar.suite import ReplayTest, Source

SLUG_CHARS = 40  # of a mode's name in a case's id


@dataclass
class Replayer:
    """What every case of one source is replayed with: its configuration, loaded once."""

    source: Source
    config: RunConfig
    out: Path | None = None  # where the replays' run directories go; None: a temporary folder

    def replay(self, test: ReplayTest, name: str, out: Path | None = None) -> ReplayResult:
        """``test`` sent again, alone, into a new run directory of its own under ``out``."""
        from stellar import event_loop
        from stellar.replay import replay
        from stellar.suite import Source

        folder = Path(out or self.out or tempfile.gettempdir())
        folder.mkdir(parents=True, exist_ok=True)
        run_dir = Path(tempfile.mkdtemp(prefix=f"{self.config.name}-replay-{name}-", dir=folder))
        one = Source(self.source.path, self.source.config, [test], self.source.only)
        return event_loop.run(replay(self.config, one, run_dir=run_dir))


@dataclass
class SuiteCase:
    """One input of a suite: ``name`` its pytest id, ``mode`` its failure mode's title."""

    __test__ = False  # not a test class

    name: str
    mode: str
    index: int  # its place in the source
    test: ReplayTest
    replayer: Replayer

    def replay(self, out: str | Path | None = None) -> ReplayResult:
        return self.replayer.replay(self.test, self.name, Path(out) if out else None)

    def assert_fixed(self, out: str | Path | None = None) -> TestOutcome:
        """Replay the input (into a run directory under ``out``) and :meth:`assert_passes`."""
        return self.assert_passes(self.replay(out))

    def assert_passes(self, result: ReplayResult) -> TestOutcome:
        """Pass when the system no longer fails on the input (fixed, or passing where the
        source passed), skip when the fitness excluded it, else fail with the outcome, the
        input, the answer now and the scores."""
        from stellar.replay import EXCLUDED, FIXED, PASSING

        outcome = result.outcomes[0]
        if outcome.outcome == EXCLUDED:
            pytest.skip(f"{self.name}: the fitness excluded it ({result.run_dir})")
        if outcome.outcome not in (FIXED, PASSING):
            pytest.fail(failure_message(self, result), pytrace=False)
        return outcome


def failure_message(case: SuiteCase, result: ReplayResult) -> str:
    """The outcome and the mode, then the input, the answer now, the scores and where the
    replay's run directory is."""
    outcome = result.outcomes[0]
    record = outcome.record
    answer = (record.error or record.response_text or "") if record else ""
    why = result.summary.error or result.summary.first_error
    lines = [
        f"{outcome.outcome.replace('_', ' ')} (failure mode: {clip(case.mode)})",
        f"  input:  {clip(case.test.text)}",
        f"  answer: {clip(answer)}" if record else f"  no answer: {why or 'not sent'}",
        f"  scores now: {scores_text(record.scores if record else {})}",
        f"  scores before: {scores_text(case.test.scores)}",
        f"  replay: {result.run_dir}",
    ]
    return "\n".join(lines)


def scores_text(scores: Mapping[str, float]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in scores.items()) or "none"


def clip(text: str, n: int = 300) -> str:
    """Untrusted text on one line, without what a terminal would obey, at most ``n`` long."""
    from stellar.untrusted import for_terminal

    flat = " ".join(for_terminal(text).split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def read_cases(
    path: str | Path,
    *,
    config: str | Path | None = None,
    sut: str | None = None,
    settings: Mapping[str, Any] | None = None,
    only: str = "failures",
    out: str | Path | None = None,
) -> list[SuiteCase]:
    """The cases of a suite file or run directory, replayed with ``config`` (default: the
    one the source ran with), ``sut`` (as ``stellar replay --sut``) and ``settings`` (as
    ``--set KEY=VALUE``); a bad source or configuration is a :class:`StellarError`."""
    from stellar.config import load_config
    from stellar.config_sut import sut_setting
    from stellar.replay import candidates
    from stellar.suite import read_source

    source = read_source(path, only)
    if not source.tests:
        return []
    try:
        system = sut_setting(sut) if sut is not None else None
    except ValueError as exc:
        raise StellarError(f"system under test: {exc}") from None
    overrides = {"sut": system, "out": str(out) if out else None}
    run_config = load_config(config_path(config, source), overrides, dict(settings or {}))
    try:  # a test of another feature space: refused before any case runs
        candidates(source.tests, run_config.feature_space())
    except StellarError as exc:
        raise StellarError(f"{source.path}: {exc}") from None
    replayer = Replayer(source, run_config, Path(out) if out else None)
    names = case_names(source, source_below(source) or run_config.oracle.below or {})
    return [
        SuiteCase(name, mode, index, test, replayer)
        for index, (test, (name, mode)) in enumerate(zip(source.tests, names, strict=True))
    ]


def suite_cases(
    path: str | Path,
    *,
    config: str | Path | None = None,
    sut: str | None = None,
    settings: Mapping[str, Any] | None = None,
    only: str = "failures",
) -> list[ParameterSet]:
    """:func:`read_cases` as ``pytest.param``s with their ids, for ``parametrize``; a bad
    source is one collection error with its message, not a traceback."""
    try:
        cases = read_cases(path, config=config, sut=sut, settings=settings, only=only)
    except StellarError as exc:
        refused = f"stellar suite: {exc}"
    else:
        return [pytest.param(case, id=case.name) for case in cases]
    pytest.fail(refused, pytrace=False)  # outside the handler: no chained traceback


def config_path(given: str | Path | None, source: Source) -> str:
    """The configuration given, else the one the source ran with."""
    if given is not None:
        return str(given)
    if source.config is None:
        raise StellarError(f"{source.path}: names no single configuration; give its config")
    if not source.config.is_file():
        raise StellarError(f"{source.path}: its configuration {source.config} is gone; give one")
    return str(source.config)


def source_below(source: Source) -> dict[str, float]:
    """The thresholds the source's tests failed against, from its stored configuration
    (empty where it has none): a case keeps its name whatever it is replayed with."""
    import yaml

    from stellar.yaml_loading import read_yaml_file

    try:
        stored = read_yaml_file(source.config) if source.config else None
    except (OSError, StellarError, yaml.YAMLError):
        return {}
    oracle = stored.get("oracle") if isinstance(stored, dict) else None
    below = oracle.get("below") if isinstance(oracle, dict) else None
    return below if isinstance(below, dict) else {}


def case_names(source: Source, below: Mapping[str, float]) -> list[tuple[str, str]]:
    """Each test's (id, mode title). A run directory's failures take their mode as its
    report numbers it (``mode1-quality-3``); a suite file keeps no answers to group, so its
    failures are named by the objectives their scores fall below in ``below``
    (``quality-3``)."""
    from stellar.modes import failed_objectives

    modes: dict[str, tuple[str, str]] = {}
    if source.path.is_dir():
        from stellar.analysis.failure_modes import run_failure_modes

        for n, mode in enumerate(run_failure_modes(source.path), 1):
            slug = f"mode{n}-{objectives_slug(mode.failed, mode.key)}"
            modes.update(dict.fromkeys(mode.inputs, (slug, mode.label)))
    names = []
    for index, test in enumerate(source.tests):
        if test.text in modes:
            slug, title = modes[test.text]
        elif test.failed:
            failed = failed_objectives(test.scores, below)
            slug = objectives_slug(failed, None)
            title = "failed" if failed == ("failure",) else f"{' + '.join(failed)} failed"
        else:
            slug = title = "passed" if test.failed is False else "no-verdict"
        names.append((f"{slug}-{index}", title))
    return names


def objectives_slug(failed: tuple[str, ...], key: str | None) -> str:
    """``quality``, ``content+safety-refusal``: the objectives and the fitness's key, in
    characters any shell and ``-k`` expression take."""
    text = "+".join(failed) + (f"-{key}" if key else "")
    return re.sub(r"[^a-z0-9+]+", "-", text.lower()).strip("-")[:SLUG_CHARS] or "failure"
