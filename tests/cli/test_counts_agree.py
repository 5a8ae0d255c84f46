"""One definition of each count: the progress, the printed summary, summary.json, the report,
the exports, the JUnit XML and compare's line all say the same of one run."""

import json
import re
import xml.etree.ElementTree as ET

from conftest import TOY, cli

from stellar.analysis.html_report import write_report

# the toy fails low-quality answers and excludes inputs in capitals; a post-search judge
# decides the final verdicts, so the search's and the final counts differ
POST_SEARCH = "oracle.post_search={target: 'toy:strict', below: {strict: 0.8}}"


def report_counts(run_dir) -> dict:
    page = write_report(run_dir, run_dir / "page.html", embedder="hashing").read_text("utf-8")
    [data] = re.findall(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    return json.loads(data)["counts"]


def test_every_view_counts_a_run_the_same_way(tmp_path):
    junit = tmp_path / "junit.xml"
    result = cli(
        "run", TOY / "run.yaml", "--tests", "60", "--seed", "4", "--out", tmp_path / "runs",
        "--set", POST_SEARCH, "--junit", junit,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [run_dir] = list((tmp_path / "runs").iterdir())
    summary = json.loads((run_dir / "summary.json").read_text())
    tests, failures, verdicts = summary["tests"], summary["failures"], summary["verdicts"]
    assert tests == 60 and 0 < failures < verdicts and summary["excluded"] > 0

    last = [line for line in result.stderr.splitlines() if line.startswith("testing: ")][-1]
    assert last.startswith(f"testing: {tests} of 60 (100%), modes {summary['modes']}, ")
    assert f", failures {failures} (" in last
    assert f"({summary['failure_ratio']:.1%} of verdicts)" in last
    judging = [line for line in result.stderr.splitlines() if line.startswith("judging: ")][-1]
    assert f"failures {failures} ({summary['failure_ratio']:.1%} of verdicts)" in judging
    printed = f"tests {tests}  verdicts {verdicts}  failures {failures}  "
    assert printed + f"ratio {summary['failure_ratio']:.1%} of verdicts" in result.stdout
    assert f"excluded {summary['excluded']}" in result.stdout
    modes = summary["modes"]  # of the judge's failures, as the summary line groups them
    assert f"found: {modes} failure mode{'s' * (modes != 1)} among {failures} failures" in (
        result.stdout
    )

    counts = report_counts(run_dir)
    for name in ("tests", "verdicts", "failures", "excluded", "duplicates", "invalid"):
        assert counts[name] == summary[name], name

    assert cli("export", run_dir).returncode == 0
    rows = [json.loads(line) for line in (run_dir / "export" / "tests.jsonl").open()]
    exported = [json.loads(line) for line in (run_dir / "export" / "failures.jsonl").open()]
    assert sum(row["failed"] for row in rows) == len(exported) == failures
    assert sum(row["excluded"] for row in rows) == summary["excluded"]
    assert not any(row["failed"] and row["excluded"] for row in rows)  # excluded never fails
    assert {row["mode"] for row in exported} == set(range(1, modes + 1))  # every one numbered

    suite = ET.parse(junit).getroot().find("testsuite")
    assert int(suite.get("failures")) == failures
    assert int(suite.get("tests")) - int(suite.get("skipped", 0)) == verdicts


def test_an_excluded_test_the_oracle_failed_is_no_failure_in_the_exports(tmp_path):
    # the built-in navi case excludes requests no venue satisfies, after its oracle's verdict
    args = ("--tests", "80", "--out", tmp_path, "--set", "duplicates.embedder=hashing")
    assert cli("run", *args).returncode == 0
    [run_dir] = list(tmp_path.iterdir())
    assert cli("export", run_dir).returncode == 0
    rows = [json.loads(line) for line in (run_dir / "export" / "tests.jsonl").open()]
    excluded = [row for row in rows if row["excluded"]]
    assert any(row["oracle_failed"] for row in excluded)  # what the oracle said ...
    assert not any(row["failed"] for row in excluded)  # ... is not the count's failure


def test_compare_says_each_runs_counts_as_its_summary_does(tmp_path):
    result = cli(
        "compare", TOY / "run.yaml", "--algorithms", "random", "--seeds", "1", "--tests", "30",
        "--out", tmp_path / "exp", "--parallel", "1", "--embedder", "hashing", "--repeats", "1",
        "--set", "oracle.below={quality: 0.5}",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [summary_file] = list((tmp_path / "exp").rglob("summary.json"))
    summary = json.loads(summary_file.read_text())
    assert summary["failures"] > 0
    expected = (
        f"random seed 0: {summary['failures']} failures of {summary['verdicts']} verdicts "
        f"({summary['failure_ratio']:.1%}) in {summary['tests']} tests"
    )
    assert expected in result.stderr.replace("\n", " ")
