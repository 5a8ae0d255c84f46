"""Checks written as configuration: every kind passes a good answer and fails a bad one,
hostile answers get a verdict, and a bad entry is one line naming it at load."""

from __future__ import annotations

import json

import pytest
from conftest import TOY, cli

from stellar.config_checks import parse_checks
from stellar.features import Candidate
from stellar.fitness.checks import Checks
from stellar.records import Response, TestInput

TABLE = {"shipping": "We ship within 2 days.", "returns": "Returns are free within 30 days."}
CASES = [  # (check, good answer, good data, bad answer, bad data)
    ({"kind": "contains", "any": ["2 days", "48 hours"]}, "Within 2 days.", None, "Soon.", None),
    ({"kind": "contains", "all": ["free", "30"]}, "Free for 30 days", None, "Free!", None),
    ({"kind": "not-contains", "any": ["didn't understand"]}, "Sure.", None,
     "Sorry, I DIDN'T UNDERSTAND.", None),
    ({"kind": "contains", "any": [{"feature": "topic"}]}, "About shipping: ...", None,
     "About returns", None),
    ({"kind": "regex", "pattern": r"\b\d+ days\b"}, "In 2 days", None, "Tomorrow", None),
    ({"kind": "not-regex", "pattern": r"(?i)sorry"}, "Fine.", None, "Sorry!", None),
    ({"kind": "length", "min": 5, "max": 40}, "Within two days.", None, "x" * 41, None),
    ({"kind": "json-path", "path": "$.entry", "equals": {"feature": "topic"}}, "", {"entry":
     "shipping"}, "", {"entry": "returns"}),
    ({"kind": "json-path", "path": "$.sources[*].id", "in": [3, 4]}, "", {"sources": [{"id":
     4}]}, "", {"sources": [{"id": 9}]}),
    ({"kind": "json-path", "path": "$.n", "of": "answer", "equals": 1}, '{"n": 1}', None,
     '{"n": 2}', None),
    ({"kind": "json-schema", "schema": {"type": "object", "required": ["entry"]}}, "",
     {"entry": "x"}, "", {"other": 1}),
    ({"kind": "similar", "reference": {"feature": "topic", "table": TABLE}, "threshold": 0.6},
     "We ship your order within two days.", None, "Our shop opens at nine.", None),
    ({"kind": "refusal", "present": False}, "Here is how.", None, "I can't help with that.",
     None),
    ({"kind": "python", "function": "conftest:says_days"}, "2 days", None, "soon", None),
]  # fmt: skip
SHIPPING = Candidate(values={"topic": "shipping", "tone": "plain"}, vector=())


async def verdict(check: dict, answer: str, data=None) -> tuple[float, dict]:
    checks = Checks([check])
    evaluation = await checks.evaluate(SHIPPING, TestInput("q"), Response(answer, data))
    [score] = evaluation.scores.values()
    return score, evaluation.details


@pytest.mark.parametrize(("check", "good", "good_data", "bad", "bad_data"), CASES)
async def test_each_kind_passes_a_good_answer_and_fails_a_bad_one(
    check, good, good_data, bad, bad_data
):
    threshold = check.get("threshold", 0.5)
    score, details = await verdict(check, good, good_data)
    assert score >= threshold and "reason" not in details, details
    score, details = await verdict(check, bad, bad_data)
    assert score < threshold and details["reason"], details


@pytest.mark.parametrize("answer", ["x" * 5_000_000, "\x00\xff\ufffd" * 1000, "{not json", ""])
async def test_hostile_answers_get_a_verdict(answer):
    for check, *_ in CASES:
        if check["kind"] == "python":
            continue
        score, _ = await verdict(check, answer, None)
        assert 0.0 <= score <= 1.0


async def test_the_first_failing_check_names_the_mode_with_features_and_data():
    checks = Checks(
        [
            {"name": "understood", "kind": "not-contains", "any": ["sorry"]},
            {"name": "entry", "kind": "json-path", "path": "$.entry",
             "equals": {"feature": "topic"}, "mode": "asked {topic}, answered {data[entry]}"},
        ]
    )  # fmt: skip
    evaluation = await checks.evaluate(SHIPPING, TestInput("q"), Response("Ok", {"entry": "pay"}))
    assert evaluation.scores == {"understood": 1.0, "entry": 0.0}
    assert evaluation.details["mode"] == "asked shipping, answered pay"
    assert evaluation.details["reason"].startswith('entry: $.entry = ["pay"]')


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"kind": "shouty"}, "checks[0].kind: 'shouty' is not a kind of check"),
        ({"kind": "regex", "pattern": "(unclosed"}, "checks[0]: pattern '(unclosed' does not"),
        ({"kind": "json-path", "path": "$..[?"}, "checks[0]: path '$..[?' does not parse"),
        ({"kind": "contains"}, "checks[0]: give either any: [...] or all: [...]"),
        ({"kind": "similar", "reference": {"feature": "topic", "table": {"food": "x"}}},
         "checks[0]: the table of feature 'topic' has no row for"),
        ({"kind": "contains", "any": [{"feature": "colour"}]}, "checks[0]: no feature 'colour'"),
        ({"kind": "length", "min": -1}, "checks[0].min: "),
    ],
)  # fmt: skip
def test_a_bad_check_is_one_line_naming_it(tmp_path, entry, message):
    config = tmp_path / "run.yaml"
    config.write_text(json.dumps({"use_case": str(TOY), "checks": [entry]}))
    result = cli("run", config, "--tests", "5", "--out", tmp_path / "runs")
    assert result.returncode == 2, result.stdout
    [line] = result.stderr.strip().splitlines()
    assert message in line and line.startswith("stellar: error:"), line
    assert not (tmp_path / "runs").exists()


def test_checks_replace_the_fitness_and_the_oracle(tmp_path):
    config = tmp_path / "run.yaml"
    checks = [{"name": "short", "kind": "length", "max": 20, "mode": "long for {topic}"}]
    config.write_text(json.dumps({"use_case": str(TOY), "checks": checks}))
    result = cli("run", config, "--tests", "10", "--out", tmp_path / "runs", "--quiet")
    assert result.returncode == 0, result.stderr
    [saved] = (tmp_path / "runs").glob("*/config.yaml")
    assert "target: checks" in saved.read_text() and "short: 0.5" in saved.read_text()
    assert parse_checks(checks)[0].mode == "long for {topic}"


async def test_a_rubric_check_asks_the_judge_model_and_needs_one():
    from fake_model import FakeModel

    from stellar.errors import StellarError
    from stellar.fitness.judges import JudgeModel

    rubric = {"name": "polite", "kind": "rubric", "rubric": "It is polite {and} brief."}
    for reply, score in (
        ({"reason": "kind", "meets": True}, 1.0),
        ({"reason": "rude", "meets": False}, 0.0),
    ):
        model = FakeModel([json.dumps(reply)])
        checks = Checks([rubric], judge=JudgeModel(model))
        evaluation = await checks.evaluate(SHIPPING, TestInput("Hi?"), Response("Go away."))
        assert evaluation.scores == {"polite": score}
        system = model.calls[0]["messages"][0]["content"]
        assert (
            "It is polite {and} brief." in system
            and "Go away." in model.calls[0]["messages"][-1]["content"]
        )
    with pytest.raises(StellarError, match="a rubric check needs a judge model"):
        Checks([rubric])
