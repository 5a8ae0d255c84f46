"""A budgeted search run from a test, and assertions on what it found.

A team that keeps its LLM checks in pytest wants a search to be one more test: run it with
a small budget, then assert on its failure modes. The rules are the command line's: a rate
is over the tests that reached a verdict (:func:`stellar.junit.over_threshold`), modes are
grouped as the run's report groups them (:func:`~stellar.analysis.failure_modes.run_failure_modes`),
and a run whose system or judges were not healthy fails every assertion, since its counts
mean little. A failed assertion names the mode, an example input and its answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from stellar.errors import StellarError

if TYPE_CHECKING:
    from stellar.analysis.failure_modes import FailureMode
    from stellar.config import RunConfig
    from stellar.modes import FailingTest
    from stellar.summary import RunSummary

EXAMPLE_CHARS = 200  # of an example's input and answer in a message


@dataclass
class NewMode:
    """A mode of a run that no mode of its baseline holds: its title and failing tests."""

    title: str
    tests: list[FailingTest]


@dataclass
class RunResult:
    """A finished search: its run directory, its counts and its failure modes."""

    run_dir: Path
    summary: RunSummary
    modes: list[FailureMode]
    config: RunConfig

    @property
    def failures(self) -> int:
        return self.summary.failures

    @property
    def verdicts(self) -> int:
        return self.summary.verdicts

    @property
    def failure_rate(self) -> float:
        return self.failures / self.verdicts if self.verdicts else 0.0

    def assert_healthy(self) -> None:
        """Fail when a model error stopped the run or too many tests were errors."""
        s = self.summary
        if s.error or s.unhealthy:
            first = f"; first error: {s.first_error}" if s.first_error else ""
            what = f"error: {s.error}" if s.error else f"not healthy: {s.unhealthy}"
            pytest.fail(f"{self.run_dir.name}: {what}{first}", pytrace=False)

    def assert_gate(
        self, max_failure_rate: float | None = None, max_failures: int | None = None
    ) -> None:
        """The CI gate of ``stellar run --max-failure-rate R --max-failures N``; with neither
        given, any failure fails it."""
        from stellar.junit import over_threshold

        self.assert_healthy()
        reason = over_threshold(self.failures, self.verdicts, max_failure_rate, max_failures)
        if reason is not None:
            shown = "\n".join(mode_lines(m.label, m.examples) for m in self.modes)
            pytest.fail(f"{self.run_dir.name}: {reason}\n{shown}", pytrace=False)

    def assert_no_mode_above(self, rate: float) -> None:
        """Fail when one failure mode holds more than ``rate`` of the tests with a verdict."""
        from stellar.junit import over_threshold

        self.assert_healthy()
        over = [
            mode_lines(f"{m.label}: {reason}", m.examples)
            for m in self.modes
            if (reason := over_threshold(m.size, self.verdicts, max_failure_rate=rate))
        ]
        if over:
            pytest.fail(
                f"{self.run_dir.name}: {len(over)} failure mode(s) above {rate:.1%}:\n"
                + "\n".join(over),
                pytrace=False,
            )

    def new_modes(self, baseline: str | Path) -> list[NewMode]:
        """The modes of this run that none of ``baseline``'s failures fall in: the
        baseline's failures are grouped first, then this run's join the nearest mode as the
        run's own grouping would, and those that open a mode of their own are new."""
        from stellar.analysis.failure_modes import mode_title
        from stellar.modes import ModeTracker, mode_embedder

        known_tests = failing_tests(Path(baseline))
        tests = failing_tests(self.run_dir)
        tracker = ModeTracker(mode_embedder(self.config.duplicates.embedder))
        tracker.assign(known_tests)
        known = len(tracker)
        found: dict[int, list[FailingTest]] = {}
        for test, mode in zip(tests, tracker.assign(tests), strict=True):
            if mode >= known:
                found.setdefault(mode, []).append(test)
        return [
            NewMode(mode_title(group[0].failed, group[0].answer, group[0].key), group)
            for group in found.values()
        ]

    def assert_no_new_modes(self, baseline: str | Path) -> None:
        """Fail when this run found a failure mode that the baseline run did not have."""
        self.assert_healthy()
        try:
            new = self.new_modes(baseline)
        except StellarError as exc:
            new, refused = [], f"baseline {baseline}: {exc}"
        else:
            refused = None
        if refused:  # failed outside the handler: no chained traceback
            pytest.fail(refused, pytrace=False)
        if new:
            shown = "\n".join(
                mode_lines(
                    f"{m.title} ({len(m.tests)} tests)", [(t.input, t.answer) for t in m.tests]
                )
                for m in new
            )
            pytest.fail(
                f"{self.run_dir.name}: {len(new)} failure mode(s) not in {baseline}:\n{shown}",
                pytrace=False,
            )


def failing_tests(run_dir: Path) -> list[FailingTest]:
    """A run's failing tests, one per input, in the order the run assigned their modes."""
    from stellar.analysis.failure_modes import run_thresholds
    from stellar.archive import open_run
    from stellar.modes import failing_test

    if not run_dir.is_dir():
        raise StellarError("no such run directory")
    with open_run(run_dir) as archive:
        failing = [r for r in archive.records(failures_only=True) if r.is_failure]
    failing.sort(key=lambda r: (r.generation, r.index))
    thresholds = run_thresholds(run_dir)
    unique: dict[str, FailingTest] = {}
    for record in failing:
        unique.setdefault(record.input_text or "", failing_test(record, thresholds))
    return list(unique.values())


def mode_lines(title: str, examples: Sequence[tuple[str, str]]) -> str:
    """A mode's title and its first example's input and answer."""
    lines = [f"  {clip(title, 2 * EXAMPLE_CHARS)}"]
    if examples:
        text, answer = examples[0]
        lines += [f"    input:  {clip(text)}", f"    answer: {clip(answer)}"]
    return "\n".join(lines)


def clip(text: str, n: int = EXAMPLE_CHARS) -> str:
    """Untrusted text on one line, without what a terminal would obey, at most ``n`` long."""
    from stellar.untrusted import for_terminal

    flat = " ".join(for_terminal(text).split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def run_search(
    config: str | Path | None = None,
    *,
    tests: int = 50,
    seed: int = 0,
    out: str | Path = "runs",
    sut: str | None = None,
    settings: Mapping[str, Any] | None = None,
    **more: Any,
) -> RunResult:
    """Run a search as ``stellar run CONFIG --tests N --seed S --sut TARGET --set K=V`` does
    (no CONFIG: the built-in use case, offline) and return what it found. ``settings`` are
    ``--set`` values by dotted key; a keyword ``a__b=v`` is ``--set a.b=v``. A bad
    configuration fails the test with the one-line message the command line gives."""
    from stellar.analysis.failure_modes import run_failure_modes

    values = {**dict(settings or {}), **{k.replace("__", "."): v for k, v in more.items()}}
    overrides = {"budget.tests": tests, "seed": seed, "out": str(out)}
    found = _search(config, overrides, sut, values)
    if isinstance(found, str):  # failed here, not in a handler: no chained traceback
        pytest.fail(f"stellar run: {found}", pytrace=False)
    run_config, summary = found
    modes = run_failure_modes(summary.run_dir) if summary.failures else []
    return RunResult(Path(summary.run_dir), summary, modes, run_config)


def _search(
    config: str | Path | None,
    overrides: dict[str, Any],
    sut: str | None,
    settings: dict[str, Any],
) -> tuple[RunConfig, RunSummary] | str:
    """The configuration and the finished run's summary, or why it could not start."""
    from stellar import event_loop
    from stellar.config import load_config
    from stellar.config_sut import sut_setting
    from stellar.run import Run

    try:
        system = sut_setting(sut) if sut is not None else None
    except ValueError as exc:
        return f"system under test: {exc}"
    try:
        run_config = load_config(config, {**overrides, "sut": system}, settings)
        return run_config, event_loop.run(Run(run_config).execute())
    except StellarError as exc:
        return str(exc)
