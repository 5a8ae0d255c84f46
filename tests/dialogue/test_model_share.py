"""Issue 43: the run says how much of the user the model played, per act, and warns when
it played too little."""

from __future__ import annotations

from stellar.records import PLAN_KEY, Status, TestRecord
from stellar.summary import RunSummary, added_writers, simulated_user_lines


def record(*turns: dict) -> TestRecord:
    plan = {"turns": [{"act": "request", "text": "x", **t} for t in turns]}
    return TestRecord(
        generation=0, index=0, seed=0, candidate={}, vector=[], status=Status.OK,
        scores={"s": 1.0}, failed=False, details={PLAN_KEY: plan}, response_data={"turns": []},
    )  # fmt: skip


def test_the_summary_counts_model_turns_per_act_and_ignores_plain_template_runs():
    summary = RunSummary("run", "random", 0)
    summary.count(record({"source": "template"}))  # no model asked
    assert summary.simulated_user == {}
    assert simulated_user_lines(summary.simulated_user) == ("", "")
    summary.count(record({"source": "model"}, {"act": "confirm", "source": "model after retry"}))
    summary.count(record({"source": "template", "rejected": "echoes its instructions"}))
    assert summary.simulated_user["acts"] == {"request": [1, 2], "confirm": [1, 1]}
    line, warning = simulated_user_lines(summary.simulated_user)
    assert line.startswith("simulated user: the model wrote 2 of 3 turns acceptably (67%;")
    assert "confirm 1/1, request 1/2" in line
    assert warning == ""


def test_under_half_the_run_warns_with_the_advice_and_runs_add_up():
    low = RunSummary("run", "random", 0)
    low.count(record({"source": "template", "rejected": "speaks as the assistant"}))
    low.count(record({"source": "model"}, {"source": "template", "rejected": "empty"}))
    _, warning = simulated_user_lines(low.simulated_user)
    assert "under 50%" in warning and "stronger model" in warning
    both = added_writers([{"simulated_user": low.simulated_user}, {}, {"simulated_user": {
        "acts": {"request": [3, 3]}, "model": 3, "asked": 3}}])  # fmt: skip
    assert both["model"] == 4 and both["asked"] == 6
    assert both["acts"]["request"] == [4, 6]
