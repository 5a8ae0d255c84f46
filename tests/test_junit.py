"""JUnit XML: parses with a JUnit parser, matches the archive, survives hostile answers."""

import asyncio
import xml.etree.ElementTree as ET

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from stellar.archive import open_run
from stellar.errors import StellarError
from stellar.junit import gate, junit_for_run, junit_for_runs, over_threshold, write_junit
from stellar.records import Status, TestRecord
from stellar.run import Run


def run(config):
    return asyncio.run(Run(config).execute())


def parsed(path):
    """The file's one test suite, read by junitparser; the XML checked against the JUnit
    schema's rules CI systems rely on."""
    check_schema(ET.parse(path).getroot())
    (suite,) = list(JUnitXml.fromfile(str(path)))
    return suite


def check_schema(root):
    """The rules of the JUnit XSD (Jenkins' junit-10.xsd, what CI systems read) that the
    writer could break: required attributes, counts that add up, one result per test case."""
    assert root.tag == "testsuites"
    for suite in root:
        assert suite.tag == "testsuite" and suite.get("name")
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        for tag, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            assert int(suite.get(key)) == sum(c.find(tag) is not None for c in cases)
        float(suite.get("time"))
        assert {c.tag for c in suite} <= {"properties", "testcase"}
        for prop in suite.iter("property"):
            assert prop.get("name") is not None and prop.get("value") is not None
        for case in cases:
            assert case.get("name") and case.get("classname")
            float(case.get("time"))
            assert len(case) <= 1
            for result in case:
                assert result.tag in ("failure", "error", "skipped")
                if result.tag != "skipped":
                    assert result.get("message") and result.get("type")
        names = [c.get("name") for c in cases]
        assert len(set(names)) == len(names)


def test_counts_match_the_archive(toy_config, tmp_path):
    """SUT errors (inputs about food) and judge errors (inputs about music) among them."""
    summary = run(
        toy_config(
            **{
                "budget.tests": 150,
                "budget.max_error_rate": 1.0,
                "sut.target": "conftest:crashing_sut",
                "fitness.target": "changed:judge_down_on_music",
            }
        )
    )
    path = junit_for_run(summary.run_dir, tmp_path / "report.xml")
    suite = parsed(path)
    with open_run(summary.run_dir) as archive:
        counts = archive.counts()
        failing = {r.input_text for r in archive.records(failures_only=True)}
    assert counts["sut_error"] and counts["judge_error"] and counts["failures"]
    executed = counts["ok"] + counts["sut_error"] + counts["judge_error"]
    assert suite.tests == executed == summary.tests
    assert suite.failures == counts["failures"] == summary.failures
    assert suite.errors == counts["sut_error"] + counts["judge_error"]
    assert suite.skipped == 0
    for case in suite:
        for result in case.result:
            if isinstance(result, Failure):
                assert result.message.startswith("quality ")
                assert result.text.split("\n")[0].removeprefix("input: ") in failing
                assert "answer: here you go" in result.text
            else:
                assert isinstance(result, Error)
                assert result.type in ("sut_error", "judge_error")
                assert "endpoint unreachable" in result.message or "judge down" in result.message
    assert suite.name == summary.run_dir.rsplit("/", 1)[-1]
    assert {case.classname for case in suite} == {"toy"}
    properties = {p.name: p.value for p in suite.properties()}
    assert properties["seed"] == "1" and properties["algorithm"] == "stellar"


def test_hostile_answers_stay_well_formed(toy_config, tmp_path):
    config = toy_config(
        **{"budget.tests": 60, "sut.target": "hostile:answer", "oracle.below": {"quality": 0.9}}
    )
    summary = run(config)
    path = junit_for_run(summary.run_dir, tmp_path / "report.xml")
    suite = parsed(path)
    assert suite.tests == 60 and suite.failures == summary.failures > 0
    text = path.read_text(encoding="utf-8")
    assert not any(c in text for c in "\x1b\x07\x08\x9b\x9c\x9d")
    assert "=HYPERLINK" in text  # the rest of the answer is kept


def record(index, text, **fields) -> TestRecord:
    values = {"color": "red", "shape": "star"}
    return TestRecord(0, index, 0, values, [0.2, 0.6], input_text=text, **fields)


def test_every_text_is_escaped_and_cleaned(tmp_path):
    hostile = 'a </failure><script>x</script> ]]> & "q" \x00\x0b\ud800\ufffe b'
    records = [
        record(0, hostile, response_text=hostile, scores={"q": 0.0}, failed=True),
        record(1, "fine", response_text="ok", scores={"q": 1.0}, failed=False),
        record(2, "gone", status=Status.SUT_ERROR, error=f"boom {hostile}"),
        record(3, "excluded", response_text="?", scores={"q": 0.0}, failed=True, excluded=True),
        record(4, "twice", status=Status.DUPLICATE),
        record(5, "", status=Status.INVALID, error="empty input"),
    ]
    path = write_junit(tmp_path / "x.xml", records, "hand\x01made", classname="cls\x1b[2J")
    suite = parsed(path)
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 1, 1, 1)
    assert suite.name == "handmade"
    cases = list(suite)
    assert {c.classname for c in cases} == {"cls"}
    (failure,) = cases[0].result
    clean = 'a </failure><script>x</script> ]]> & "q"  b'
    assert failure.text.startswith(f"input: {clean}\nanswer: {clean}\n")
    (error,) = cases[2].result
    assert error.message == f"boom {clean}"
    assert isinstance(cases[3].result[0], Skipped)
    assert cases[0].name == "color=red, shape=star [generation 0, #0]"


def test_a_comparison_has_one_suite_per_run(toy_config, tmp_path):
    dirs = [run(toy_config(**{"budget.tests": 20, "seed": s})).run_dir for s in (1, 2)]
    root = ET.parse(junit_for_runs(dirs, tmp_path / "all.xml")).getroot()
    check_schema(root)
    assert root.get("tests") == "40" and len(root.findall("testsuite")) == 2


@pytest.mark.parametrize(
    ("failures", "verdicts", "rate", "most", "code"),
    [
        (0, 100, None, None, 0),
        (1, 100, None, None, 1),  # no threshold: any failure
        (5, 100, 0.05, None, 0),
        (6, 100, 0.05, None, 1),
        (3, 100, None, 3, 0),
        (4, 100, None, 3, 1),
        (4, 100, 0.5, 3, 1),  # either threshold
        (0, 0, 0.0, None, 0),  # no verdicts: health decides, not the gate
        (0, 10, None, 0, 0),
    ],
)
def test_gate(failures, verdicts, rate, most, code):
    assert gate(failures, verdicts, rate, most) == code
    assert (over_threshold(failures, verdicts, rate, most) is not None) == bool(code)


def test_a_path_that_cannot_be_written_is_one_line_error(tmp_path):
    with pytest.raises(StellarError, match="cannot write the JUnit XML"):
        write_junit(tmp_path, [], "empty")  # a folder
