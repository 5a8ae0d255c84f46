"""The pytest plugin's searches: a budgeted toy search from a test, its assertion helpers
passing and failing with the mode named, the ``stellar_run`` fixture, and a plugin that
pytest loads in every session without importing anything heavy."""

import json
import subprocess
import sys

import pytest
from conftest import TOY

from stellar.pytest_plugin import RunResult, run_search

pytest_plugins = ["pytester"]

CONFIG = TOY / "run.yaml"
STRICT = {"oracle.below.quality": 0.6}  # 30 toy tests: a handful of failures, one mode


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[RunResult, RunResult]:
    """(a baseline without failures, a run with one failure mode), 30 tests each."""
    out = tmp_path_factory.mktemp("runs")
    baseline = run_search(CONFIG, tests=30, seed=1, out=out)
    found = run_search(CONFIG, tests=30, seed=1, out=out, settings=STRICT)
    assert baseline.failures == 0 and len(found.modes) == 1 and 3 <= found.failures < 15
    return baseline, found


def failure(call, *args, **kwargs) -> str:
    """The message of the assertion ``call(*args, **kwargs)`` fails with."""
    with pytest.raises(pytest.fail.Exception) as raised:
        call(*args, **kwargs)
    assert not raised.value.pytrace  # the message alone, not a traceback into STELLAR
    return raised.value.msg


def test_assertions_pass_within_their_thresholds(runs):
    baseline, found = runs
    assert found.verdicts == 30 and found.failure_rate == found.failures / 30
    found.assert_no_mode_above(0.5)
    found.assert_gate(max_failure_rate=0.5)
    found.assert_no_new_modes(found.run_dir)  # a run has no mode its own failures lack
    baseline.assert_gate()  # no failure at all
    baseline.assert_no_new_modes(found.run_dir)


def test_a_mode_above_the_rate_fails_naming_the_mode_and_an_example(runs):
    _, found = runs
    message = failure(found.assert_no_mode_above, 0.1)
    mode = found.modes[0]
    assert "1 failure mode(s) above 10.0%" in message and mode.label in message
    assert f"failure rate {mode.size / 30:.1%} ({mode.size} of 30) above 10.0%" in message
    text, answer = mode.examples[0]
    assert f"input:  {text}" in message and f"answer: {answer}" in message
    assert "failure rate" in failure(found.assert_gate, 0.1)
    assert f"{found.failures} failures" in failure(found.assert_gate)  # no threshold: any


def test_a_mode_the_baseline_lacks_is_new(runs):
    baseline, found = runs
    new = found.new_modes(baseline.run_dir)
    assert len(new) == 1 and len(new[0].tests) == found.failures
    message = failure(found.assert_no_new_modes, baseline.run_dir)
    assert "1 failure mode(s) not in" in message and "quality failed: “here you go" in message
    assert f"({found.failures} tests)" in message and "input:  I " in message
    assert "no such run directory" in failure(found.assert_no_new_modes, CONFIG.parent / "nope")


def test_an_unhealthy_run_fails_every_assertion(tmp_path):
    down = run_search(CONFIG, tests=10, out=tmp_path, sut="changed:down")
    assert down.verdicts == 0
    for call in (down.assert_no_mode_above, down.assert_gate):
        assert "not healthy: 10 of 10 tests ended in errors" in failure(call, 0.5)
    assert "endpoint unreachable" in failure(down.assert_no_new_modes, tmp_path)


@pytest.mark.parametrize(
    ("config", "kwargs", "message"),
    [
        (CONFIG.parent / "nope.yaml", {}, "file not found"),
        (CONFIG, {"sut": "ftp://x"}, "system under test: 'ftp://x': only http://"),
        (CONFIG, {"budget__tests": "many"}, "budget.tests"),
    ],
    ids=["config", "sut", "setting"],
)
def test_a_search_that_cannot_start_fails_in_one_line(tmp_path, config, kwargs, message):
    said = failure(run_search, config, out=tmp_path, **kwargs)
    assert said.startswith("stellar run: ") and message in said and "\n" not in said


def test_the_fixture_runs_into_the_tests_own_folder(pytester):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        f"""
        CONFIG = {str(CONFIG)!r}

        def test_search(stellar_run, tmp_path):
            result = stellar_run(CONFIG, tests=30, seed=1, oracle__below__quality=0.6)
            assert result.run_dir.parent == tmp_path and result.failures
            result.assert_no_mode_above(0.5)

        def test_too_many(stellar_run):
            stellar_run(CONFIG, tests=30, seed=1, settings={STRICT!r}).assert_no_mode_above(0.05)
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*1 failure mode(s) above 5.0%:", "  quality failed: *"])


def test_pytest_loads_the_plugin_without_heavy_modules():
    """Every pytest session of an environment with STELLAR loads the plugin."""
    code = (
        "import sys, json, pytest, stellar.pytest_plugin\n"
        "print(json.dumps([m for m in ('numpy', 'sklearn', 'torch', 'yaml', 'pydantic') "
        "if m in sys.modules]))"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(ran.stdout) == []
    from importlib.metadata import entry_points

    assert "stellar.pytest_plugin" in {e.value for e in entry_points(group="pytest11")}
