"""The pytest plugin's regression suites: a toy run's failures as pytest items, replayed
against the same system (still failing), a changed one (fixed where it was fixed) and
through pytest-xdist and JUnit XML; a bad suite is one usage error."""

import asyncio
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from changed import fixes
from conftest import TOY

from stellar.archive import open_run
from stellar.config import load_config
from stellar.run import Run
from stellar.suite import export_suite

pytest_plugins = ["pytester"]

FIXED_SUT = "changed:answer"  # the toy, fixed for some topics (tests/fixtures/toy/changed.py)
PASS_ALL = "oracle.below.quality=0.1"  # the toy's own threshold: none of these fail


def inner(pytester: pytest.Pytester, *args: object, fresh: bool = False) -> pytest.RunResult:
    """pytest in the test's folder (``fresh``: in a process of its own), with an ini there
    that sets pytest-asyncio's loop scope, so that it warns of nothing."""
    ini = pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    run = pytester.runpytest_subprocess if fresh else pytester.runpytest
    return run("-c", ini, *args)


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> tuple[Path, Path, list[str]]:
    """A toy run of 30 tests, failing below quality 0.6: (run directory, its suite file, the
    failing inputs in suite order)."""
    out = tmp_path_factory.mktemp("source")
    config = load_config(
        TOY / "run.yaml", {"out": str(out), "budget.tests": 30}, {"oracle.below.quality": 0.6}
    )
    run_dir = Path(asyncio.run(Run(config).execute()).run_dir)
    suite = out / "failures.jsonl"
    export_suite(run_dir, suite)
    with open_run(run_dir) as archive:
        failing = [r.input_text for _, r in archive.numbered(failures_only=True)]
    assert 3 <= len(failing) <= 20
    return run_dir, suite, failing


def item_names(result: pytest.RunResult, outcome: str) -> list[str]:
    """The names of the items of ``outcome`` ("passed", "failed"), from ``-rA``'s summary."""
    word = outcome.upper()
    return [
        line.split("::")[-1].split(" ")[0]
        for line in result.outlines
        if line.startswith(f"{word} ") and "::" in line
    ]


def test_a_run_directory_is_one_item_per_failure_named_by_its_mode(source, pytester):
    run_dir, _, failing = source
    result = inner(pytester, "--stellar-suite", run_dir, "-rA")
    result.assert_outcomes(failed=len(failing))
    names = item_names(result, "failed")
    assert sorted(names, key=lambda n: int(n.rsplit("-", 1)[1])) == [
        f"mode1-quality-{i}" for i in range(len(failing))
    ]
    result.stdout.fnmatch_lines(
        [
            "still failing (failure mode: quality failed: *)",
            f"  input:  {failing[0]}",
            "  answer: here you go (quality *)",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    result = inner(pytester, "--stellar-suite", run_dir, "-m", "not stellar")
    result.assert_outcomes(deselected=len(failing))  # every item is marked stellar


def test_a_fixed_system_passes_where_it_no_longer_fails(source, pytester):
    _, suite, failing = source
    result = inner(pytester, "--stellar-suite", suite, "--stellar-sut", FIXED_SUT, "-rA")
    fixed = {f"quality-{i}" for i, text in enumerate(failing) if fixes(text)}
    assert fixed and len(fixed) < len(failing)  # the toy plants fixes and leaves failures
    assert set(item_names(result, "passed")) == fixed  # a suite file: named by its objectives
    assert len(item_names(result, "failed")) == len(failing) - len(fixed)
    result = inner(pytester, "--stellar-suite", suite, "--stellar-set", PASS_ALL)
    result.assert_outcomes(passed=len(failing))


def test_a_hostile_answer_reaches_the_terminal_without_escapes(source, pytester):
    run_dir, _, failing = source
    result = inner(pytester, "--stellar-suite", run_dir, "--stellar-sut", "hostile:answer")
    result.assert_outcomes(failed=len(failing))
    assert "here you go (quality" in result.stdout.str()
    assert "\x1b" not in result.stdout.str() and "\x9b" not in result.stdout.str()


def test_items_run_under_xdist_with_one_junit_testcase_each(source, pytester):
    run_dir, _, failing = source
    report = pytester.path / "report.xml"
    flags = ["--stellar-sut", FIXED_SUT, "-n", "2", "--junitxml", report]
    result = inner(pytester, "--stellar-suite", run_dir, *flags, fresh=True)
    fixed = sum(fixes(text) for text in failing)
    result.assert_outcomes(passed=fixed, failed=len(failing) - fixed)
    cases = ET.parse(report).getroot().findall(".//testcase")
    assert sorted(c.get("name") for c in cases) == sorted(
        f"mode1-quality-{i}" for i in range(len(failing))
    )
    properties = [p for c in cases for p in c.iter("property")]
    outcomes = [p.get("value") for p in properties if p.get("name") == "stellar_outcome"]
    assert sorted(outcomes) == sorted(
        "fixed" if fixes(text) else "still_failing" for text in failing
    )


def test_suite_cases_parametrize_a_test(source, pytester):
    _, suite, failing = source
    pytester.makepyfile(
        f"""
        import pytest
        from stellar.pytest_plugin import suite_cases

        SUITE = {str(suite)!r}

        @pytest.mark.parametrize("case", suite_cases(SUITE))
        def test_still_fails(case, tmp_path):
            case.assert_fixed(tmp_path)

        PASS_ALL = {{"oracle.below.quality": 0.1}}

        @pytest.mark.parametrize("case", suite_cases(SUITE, settings=PASS_ALL))
        def test_fixed(case, tmp_path):
            case.assert_fixed(tmp_path)
        """
    )
    result = inner(pytester, "-rA")
    result.assert_outcomes(passed=len(failing), failed=len(failing))
    assert set(item_names(result, "passed")) == {
        f"test_fixed[quality-{i}]" for i in range(len(failing))
    }


def write(path: Path, *lines: object) -> Path:
    path.write_text("".join(f"{x if isinstance(x, str) else json.dumps(x)}\n" for x in lines))
    return path


@pytest.mark.parametrize(
    ("make", "flags", "message"),
    [
        (lambda d: d / "missing.jsonl", [], "no such run directory or suite file"),
        (lambda d: write(d / "s.jsonl", "{not json"), [], "s.jsonl line 1: not JSON"),
        (
            lambda d: write(d / "s.jsonl", {"input": "hi", "candidate": "red"}),
            [],
            "'candidate' must be a mapping of feature values",
        ),
        (
            lambda d: write(d / "s.jsonl", {"input": "hi", "candidate": {"color": "red"}}),
            [],
            "names no single configuration; give its config",
        ),
        (
            lambda d: write(d / "s.jsonl", {"input": "hi", "candidate": {"color": "red"}}),
            ["--stellar-config", str(TOY / "run.yaml")],
            "has features ['color'], the configuration's space has",
        ),
        (lambda d: d, ["--stellar-set", "judge"], "--stellar-set 'judge': write KEY=VALUE"),
        (lambda d: d, ["--stellar-sut", "ftp://x"], "only http:// and https:// URLs"),
    ],
    ids=["missing", "not-json", "no-candidate", "no-config", "other-space", "set", "sut"],
)
def test_bad_input_is_one_usage_error(source, pytester, make, flags, message):
    path = make(pytester.path)
    if path == pytester.path:  # a flag's fault: the suite is good
        path = source[0]
    result = inner(pytester, "--stellar-suite", path, *flags)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line.startswith("ERROR")]
    assert len(errors) == 1 and message in errors[0], result.errlines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_bad_suite_in_suite_cases_is_one_collection_error(pytester):
    pytester.makepyfile(
        """
        import pytest
        from stellar.pytest_plugin import suite_cases

        @pytest.mark.parametrize("case", suite_cases("missing.jsonl"))
        def test_fixed(case):
            pass
        """
    )
    result = inner(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["stellar suite: missing.jsonl: no such run directory*"])
    assert "Traceback" not in result.stdout.str() and "suite_cases(" not in result.stdout.str()
