"""The HTML report as a file: self-contained, its data escaped, a strict CSP (no browser)."""

import argparse
import base64
import hashlib
import json
import re

import pytest
from html_hostile import PAYLOADS
from html_runs import hostile_experiment, hostile_run

from stellar.analysis.failure_rules import run_failure_rules
from stellar.analysis.html_page import cut, embed_json
from stellar.analysis.html_report import TEXT_LIMIT, run_payload, write_report
from stellar.analysis.metrics import RunData, load_run
from stellar.cli import report_command
from stellar.errors import StellarError
from stellar.records import TestRecord

SVG_NAMESPACE = "http://www.w3.org/2000/svg"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return hostile_run(tmp_path_factory.mktemp("runs"), tests=60)


def parts(html: str) -> tuple[str, str, str, str]:
    """The page's CSP, style, script and data block."""
    [csp] = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    [style] = re.findall(r"<style>(.*?)</style>", html, re.DOTALL)
    [data] = re.findall(
        r'<script type="application/json" id="data">(.*?)</script>', html, re.DOTALL
    )
    [script] = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    return csp.replace("&#39;", "'"), style, script, data


def sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_the_page_is_one_file_that_fetches_nothing(run_dir):
    html = write_report(run_dir).read_text(encoding="utf-8")
    assert (run_dir / "report.html").is_file()
    _, _, script, data = parts(html)
    outside = html.replace(data, "")
    # no address but the SVG namespace (a name, never fetched); nothing that loads or runs
    assert set(re.findall(r"https?://[^\s\"'<>)]*", outside)) <= {SVG_NAMESPACE}
    assert not re.search(r"<(link|iframe|object|embed|img|base)\b|\bsrc=", outside)
    for word in ("fetch(", "XMLHttpRequest", "WebSocket", "import(", "eval(", "innerHTML"):
        assert word not in script, word
    assert "outerHTML" not in script and "insertAdjacentHTML" not in script


def test_a_strict_csp_allows_only_the_pages_own_script_and_style(run_dir):
    csp, style, script, _ = parts(write_report(run_dir).read_text(encoding="utf-8"))
    rules = dict(rule.strip().split(" ", 1) for rule in csp.split(";"))
    assert rules["default-src"] == "'none'"
    assert rules["script-src"] == f"'{sha256(script)}'"
    assert rules["style-src"] == f"'{sha256(style)}'"
    assert rules["img-src"] == "data:"
    assert "unsafe" not in csp


def test_hostile_texts_are_embedded_as_escaped_json(run_dir):
    html = write_report(run_dir).read_text(encoding="utf-8")
    _, _, _, data = parts(html)
    assert html.count("</script") == 2  # the data block's and the script's own ends
    assert not re.search("[<>&\u2028\u2029]", data)
    for payload in PAYLOADS:
        assert payload not in html
    tests = json.loads(data)["tests"]
    records = load_run(run_dir).records
    assert tests["input"] == [r.input_text for r in records]  # unchanged, all under the limit
    assert tests["answer"] == [r.response_text for r in records]
    pairs = zip(tests["answer"], tests["input"], strict=True)
    assert any("</script>" in a and "\u2028" in i for a, i in pairs)


def test_embedded_json_cannot_close_its_element_and_reads_back():
    value = {"a": "</script><!-- & \u2028\u2029 </SCRIPT >", "b<": ["\ud800", 1.5, None]}
    text = embed_json(value)
    assert not re.search("[<>&\u2028\u2029\ud800-\udfff]", text)
    assert json.loads(text) == {"a": value["a"], "b<": ["\ufffd", 1.5, None]}


def test_long_texts_are_cut_saying_how_long_they_were():
    assert (
        cut("x" * (TEXT_LIMIT + 5), TEXT_LIMIT)
        == "x" * TEXT_LIMIT + f"… [{TEXT_LIMIT + 5:,} characters]"
    )
    assert cut(None, 10) == ""


def test_the_run_page_holds_summary_modes_and_curve(run_dir):
    html = write_report(run_dir, run_dir / "other.html", embedder="hashing").read_text("utf-8")
    page = json.loads(parts(html)[3])
    summary = {row[0]: row[1] for row in page["summary"]}
    data = load_run(run_dir)
    assert summary["tests"] == str(data.summary["tests"])
    assert summary["failures"] == str(data.summary["failures"])
    assert summary["system under test"] == "python: html_hostile:answer"
    assert page["distinct_failures"] == sum(m["size"] for m in page["modes"]) > 0
    assert page["curve"]["failures"][-1] == page["distinct_failures"]
    assert [f["name"] for f in page["features"]][:3] == ["color", "shape", "size"]


def test_the_experiment_page_compares_and_links_each_runs_page(tmp_path):
    root = hostile_experiment(tmp_path / "exp")
    out = tmp_path / "elsewhere" / "comparison.html"
    out.parent.mkdir()
    page = json.loads(parts(write_report(root, out).read_text("utf-8"))[3])
    assert page["kind"] == "experiment"
    assert len(page["statistics"]["rows"]) == 5  # one pair of algorithms, five metrics
    assert [row[0] for row in page["algorithms"]["rows"]] == ["stellar", "random"]
    links = [row[-1] for row in page["runs"]["rows"]]
    assert len(links) == 4 and all((out.parent / link).is_file() for link in links)
    assert all(p["src"].startswith("data:image/svg+xml;base64,") for p in page["plots"])


def test_the_command_writes_the_page_and_refuses_other_folders(run_dir, tmp_path, capsys):
    parser = argparse.ArgumentParser()
    report_command.add_parser(parser.add_subparsers())
    out = tmp_path / "page.html"
    args = parser.parse_args(["report", str(run_dir), "-o", str(out), "--embedder", "hashing"])
    assert args.handler(args) == 0 and out.stat().st_size > 0
    for wrong in (["report", str(tmp_path)], ["report", str(run_dir), "--embedder", "nope"]):
        args = parser.parse_args(wrong)
        with pytest.raises(StellarError):
            args.handler(args)


def test_the_run_page_holds_the_failure_conditions_and_how_they_were_checked(run_dir):
    html = write_report(run_dir).read_text(encoding="utf-8")  # the run's embedder, as explain's
    _, _, script, data = parts(html)
    page = json.loads(data)
    rules = run_failure_rules(run_dir)
    assert rules  # the hostile run fails under some feature values
    assert page["rules"] == [
        rule.to_dict() | {"modes": [[mode, n] for mode, n in rule.modes.items()]} for rule in rules
    ]
    assert "mined on a random half of the verdicts" in page["rules_checked"]
    assert re.search(r'section\(\s*"rules",\s*title,', script)  # the page draws it, after
    assert "modes(), rules(), featureRates()" in script  # the failure modes


def test_a_run_page_without_failures_has_no_rules(tmp_path):
    records = [TestRecord(0, i, 0, {"kind": "a"}, [], failed=False) for i in range(6)]
    payload = run_payload(RunData(tmp_path, records), modes=[])
    assert payload["rules"] == [] and payload["modes"] == []
