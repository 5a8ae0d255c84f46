"""STELLAR in pytest (entry point ``pytest11``): regression suites as test items, and
searches as fixtures.

- ``pytest --stellar-suite PATH [--stellar-config CONFIG] [--stellar-sut TARGET]
  [--stellar-set KEY=VALUE ...]``: one item per failing input of a suite file or run
  directory, named by its failure mode, that passes once the system no longer fails on it
  (replayed as ``stellar replay`` replays it); every item is marked ``stellar``.
- ``suite_cases(PATH)`` for ``@pytest.mark.parametrize``, each case checked with
  ``case.assert_fixed(tmp_path)``.
- the ``stellar_run`` fixture: ``stellar_run(CONFIG, tests=50, seed=0)`` runs a search into
  the test's temporary folder and returns a :class:`RunResult` to assert on.

pytest loads this module in every session of an environment where STELLAR is installed, so
it imports nothing heavy and does nothing unless its options or fixtures are used.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from stellar.pytest_search import RunResult, run_search
from stellar.pytest_suite import SuiteCase, read_cases, suite_cases

if TYPE_CHECKING:
    from stellar.replay import ReplayResult

__all__ = ["RunResult", "SuiteCase", "run_search", "suite_cases"]

MARKER = "stellar"
CASES = pytest.StashKey[list[tuple[str, list[SuiteCase]]]]()
OUT = pytest.StashKey[Path]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("stellar", "STELLAR: LLM regression suites")
    group.addoption(
        "--stellar-suite",
        action="append",
        default=[],
        metavar="PATH",
        help="a suite file (stellar export --suite) or run directory: one test per failing "
        "input, passing once the system no longer fails on it (repeatable)",
    )
    group.addoption(
        "--stellar-config",
        metavar="CONFIG",
        help="the run configuration or use case to replay with (default: the suite's)",
    )
    group.addoption(
        "--stellar-sut",
        metavar="TARGET",
        help="the system under test: a model, an http(s) URL, module:function, or offline",
    )
    group.addoption(
        "--stellar-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a configuration setting, as stellar replay --set (repeatable)",
    )
    group.addoption(
        "--stellar-only",
        choices=("failures", "all"),
        default="failures",
        help="the source's failures (default), or every test that reached the system",
    )
    group.addoption(
        "--stellar-out",
        metavar="DIR",
        help="folder for the replays' and searches' run directories (default: pytest's "
        "temporary folder)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Read every suite given before anything runs: a bad path, suite or configuration is
    one usage error, not a traceback per item."""
    config.addinivalue_line("markers", f"{MARKER}: a STELLAR regression-suite input")
    paths: list[str] = config.getoption("stellar_suite")
    if not paths:
        return
    from stellar.errors import StellarError

    given = {
        "config": config.getoption("stellar_config"),
        "sut": config.getoption("stellar_sut"),
        "only": config.getoption("stellar_only"),
        "out": config.getoption("stellar_out"),
    }
    try:
        settings = dict(setting(item) for item in config.getoption("stellar_set"))
        config.stash[CASES] = [
            (path, read_cases(path, settings=settings, **given)) for path in dict.fromkeys(paths)
        ]
    except StellarError as exc:
        raise pytest.UsageError(f"stellar: {exc}") from None


def setting(item: str) -> tuple[str, Any]:
    """``KEY=VALUE``, the value read as YAML (as ``stellar replay --set``)."""
    from stellar.yaml_loading import key_value

    return key_value(item, "--stellar-set")


@pytest.hookimpl(tryfirst=True)  # before -k, -m and deselection see the items
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    for path, cases in config.stash.get(CASES, []):
        suite = StellarSuite.from_parent(session, path=Path(path).resolve())
        suite.cases = cases
        found = suite.collect()
        items.extend(found)  # reported as collected, so that pytest counts them
        report = pytest.CollectReport(suite.nodeid, "passed", None, found)
        config.hook.pytest_collectreport(report=report)


class StellarSuite(pytest.File):
    """A suite file or run directory given with ``--stellar-suite``."""

    cases: list[SuiteCase]

    def collect(self) -> list[pytest.Item]:
        return [SuiteItem.from_parent(self, name=case.name, case=case) for case in self.cases]


class SuiteItem(pytest.Item):
    """One input of a suite, replayed alone: independent of every other item."""

    def __init__(self, *, case: SuiteCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.add_marker(MARKER)

    def runtest(self) -> None:
        result: ReplayResult = self.case.replay(replay_folder(self.config))
        outcome = result.outcomes[0]
        self.user_properties += [
            ("stellar_mode", self.case.mode),
            ("stellar_outcome", outcome.outcome),
            ("stellar_replay", str(result.run_dir)),
        ]
        self.case.assert_passes(result)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


def replay_folder(config: pytest.Config) -> Path:
    """``--stellar-out``, else one folder in pytest's temporary folder (per xdist worker)."""
    if OUT not in config.stash:
        given = config.getoption("stellar_out")
        factory = getattr(config, "_tmp_path_factory", None)  # the tmp_path plugin's
        if given:
            config.stash[OUT] = Path(given)
        elif factory is not None:
            config.stash[OUT] = factory.mktemp("stellar-replays")
        else:
            import tempfile

            config.stash[OUT] = Path(tempfile.mkdtemp(prefix="stellar-replays-"))
    return config.stash[OUT]


@pytest.fixture
def stellar_run(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., RunResult]:
    """``stellar_run(CONFIG, tests=50, seed=0, sut=None, settings=None, **set)``: a search
    into the test's temporary folder (or ``--stellar-out``), as :func:`run_search`."""
    out = request.config.getoption("stellar_out") or tmp_path

    def run(config: str | Path | None = None, **kwargs: Any) -> RunResult:
        kwargs.setdefault("out", out)
        return run_search(config, **kwargs)

    return run
