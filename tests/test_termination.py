"""Budgets compose; each reports its stop reason; the gate only asks the in-flight ones."""

import asyncio
import time

from stellar.termination import (
    AnyOf,
    CostBudget,
    DiscardLimit,
    Progress,
    StopReason,
    StopRequest,
    TestBudget,
    TimeBudget,
)


def test_the_first_used_up_budget_names_the_reason():
    progress = Progress(tests=10, discarded=3, spent=lambda: 0.5)
    budgets = AnyOf([TestBudget(20), CostBudget(1.0), DiscardLimit(3)])
    stop = budgets.check(progress)
    assert stop.reason == StopReason.DISCARDS and stop.message.startswith("discard limit reached")
    progress.tests = 20
    assert budgets.check(progress).message == "test budget reached (20 tests)"
    assert budgets.tests_left(Progress(tests=5)) == 15


def test_between_tests_only_time_money_and_stop_requests_count():
    stop = StopRequest()
    progress = Progress(tests=99, discarded=99, spent=lambda: 0.0)
    budgets = AnyOf([stop, TestBudget(10), DiscardLimit(5), CostBudget(2.0)])
    assert budgets.check(progress, between_tests=True) is None
    progress.spent = lambda: 2.5
    assert budgets.check(progress, between_tests=True).reason == StopReason.COST
    progress.spent = lambda: 0.0
    stop.request(StopReason.INTERRUPTED, "interrupted (Ctrl-C)")
    stop.request(StopReason.MODEL_ERROR)  # the first request is kept
    assert budgets.check(progress, between_tests=True).message == "interrupted (Ctrl-C)"


def test_time_budget_counts_from_the_start():
    progress = Progress(started=time.monotonic() - 5)
    assert TimeBudget(4).check(progress).reason == StopReason.TIME
    assert TimeBudget(60).check(progress) is None


def test_finished_reasons_are_the_budgets_and_an_exhausted_space():
    assert {r for r in StopReason if r.finished} == {
        StopReason.TESTS,
        StopReason.TIME,
        StopReason.COST,
        StopReason.DISCARDS,
        StopReason.EXHAUSTED,
    }


def test_stop_request_sets_its_event():
    stop = StopRequest()
    stop.request(StopReason.INTERRUPTED)
    assert asyncio.run(asyncio.wait_for(stop.event.wait(), 1)) is True
