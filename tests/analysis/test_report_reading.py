"""The report explains itself: the verdict rule from the run's thresholds, what each score
means, the counts as summary.json defines them, why a test was excluded, which earlier
input a duplicate matched."""

import asyncio
import json
import re
from pathlib import Path

import pytest
from conftest import TOY
from html_runs import hostile_run

from stellar.analysis.earlier_inputs import earlier_inputs
from stellar.analysis.html_report import _reason, write_report
from stellar.analysis.metrics import load_run
from stellar.analysis.reading import COUNTS, score_meanings, verdict_rules
from stellar.config import load_config
from stellar.records import DUPLICATE_OF, EXCLUDED_REASON, Status, TestRecord, Verdict
from stellar.run import Run
from stellar.usecase import load_use_case


def payload(run_dir) -> dict:
    html = write_report(run_dir, run_dir / "page.html", embedder="hashing").read_text("utf-8")
    [data] = re.findall(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    return json.loads(data)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return hostile_run(tmp_path_factory.mktemp("runs"), tests=60)


def test_the_verdict_rule_states_the_runs_own_thresholds():
    navi = {"oracle": {"below": {"response": 0.75, "content": 0.6}}}
    assert verdict_rules(navi) == [
        "A test fails when response is below 0.75, or content is below 0.6."
    ]
    post = {"target": "safety-verdict", "below": {"safety": 0.3}}
    safety = {"oracle": {"below": {"safety": 0.5}, "post_search": post}}
    assert verdict_rules(safety) == [
        "During the search, a test fails when safety is below 0.5 (a provisional verdict).",
        "After the search, the judge safety-verdict decides every test: it fails when "
        "safety is below 0.3.",
    ]
    assert verdict_rules({"oracle": {"target": "mine:oracle"}}) == [
        "A test fails when the run's own oracle (mine:oracle) says so."
    ]


def test_the_page_states_the_threshold_its_run_was_given(tmp_path):
    run = hostile_run(tmp_path, tests=20)
    assert payload(run)["reading"]["rules"] == ["A test fails when quality is below 0.5."]


def test_scores_mean_what_the_use_case_says_and_neutral_words_otherwise():
    config = {
        "fitness": {"target": "mine:fit", "objectives": ["a", "b"], "descriptions": {"a": "A!"}},
        "oracle": {"below": {"a": 0.5, "b": 0.5}},
    }
    [a, b] = score_meanings(config)
    assert a == ["a", "A!"]
    assert b == ["b", "a score from mine:fit in [0, 1], lower is worse (not described)"]


@pytest.mark.parametrize("use_case", ["navi", "safety"])
def test_the_built_in_use_cases_describe_every_score_they_give(use_case):
    config = load_config(use_case).model_dump(mode="json")
    meanings = score_meanings(config)
    assert meanings and all("not described" not in meaning for _, meaning in meanings)
    assert load_use_case(use_case).settings["fitness"]["descriptions"]


def test_the_report_counts_what_summary_json_counts(run_dir):
    page = payload(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert {name: page["counts"][name] for name in COUNTS} == {n: summary[n] for n in COUNTS}
    cards = {row[0]: row for row in page["summary"]}
    assert cards["tests"][1:] == [f"{summary['tests']:,}", "inputs sent to the system under test"]
    assert cards["failure rate"][1] == f"{summary['failure_ratio']:.1%}"
    records = load_run(run_dir).records
    assert page["counts"]["archived"] == len(records) == len(page["tests"]["id"])
    discarded = summary["duplicates"] + summary["invalid"]
    assert page["counts"]["archived"] == summary["tests"] + discarded


def record(**fields) -> TestRecord:
    return TestRecord(generation=0, index=0, seed=0, candidate={}, vector=[], **fields)


def test_an_excluded_test_says_why():
    why = {EXCLUDED_REASON: "no venue in the database satisfies the request"}
    excluded = record(scores={"content": 0.7}, failed=False, excluded=True, details=why)
    assert _reason(excluded) == "excluded: no venue in the database satisfies the request"
    judged = record(scores={"safety": 0.5}, failed=False)
    judged.verdict = Verdict({"safety": 0.5}, False, True, {"verdict": "unknown", "reason": "?"})
    assert _reason(judged) == "excluded by the judge; unknown: ?"
    assert _reason(record(scores={"x": 0.9}, failed=False)) == ""


def test_a_duplicate_names_the_earlier_input_it_matched(tmp_path, monkeypatch):
    settings = {"duplicates.embedder": "hashing", "duplicates.threshold": 0.5}
    config = load_config(TOY / "run.yaml", {"out": str(tmp_path), "budget.tests": 40}, settings)
    run = Path(asyncio.run(Run(config).execute()).run_dir)
    records = load_run(run).records
    found = earlier_inputs(records, "hashing")
    duplicates = [i for i, r in enumerate(records) if r.status == Status.DUPLICATE]
    assert duplicates and sorted(found) == duplicates
    assert all(DUPLICATE_OF in records[i].details for i in duplicates)  # named by the run
    for record in records:  # an archive from before: found again by embedding, the same
        record.details.pop(DUPLICATE_OF, None)
    assert earlier_inputs(records, "hashing") == found
    monkeypatch.setattr("stellar.analysis.earlier_inputs.CHUNK", 1)  # in blocks: the same
    assert earlier_inputs(records, "hashing") == found
    for duplicate, earlier in found.items():
        first, second = records[earlier], records[duplicate]
        assert first.executed and (first.generation, first.index) < (
            second.generation,
            second.index,
        )
    reasons = payload(run)["tests"]["reason"]
    duplicate = duplicates[0]
    opening = (records[found[duplicate]].input_text or "")[:20]
    assert f"earlier input (#{found[duplicate] + 1}, gen " in reasons[duplicate]
    assert opening in reasons[duplicate]
    for record in records:  # a similarity the embedder does not give: never a wrong name
        record.similarity = None if record.similarity is None else record.similarity - 0.1
    assert earlier_inputs(records, "hashing") == {}
