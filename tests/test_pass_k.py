"""``--repeats k``: each test sent k times, failing when any repeat fails; pass^k."""

from __future__ import annotations

import itertools

from test_pipeline import SPACE, make

from stellar.fitness import as_fitness
from stellar.pass_k import pass_hat, passes
from stellar.pipeline import Gate
from stellar.records import Evaluation, Response, Status
from stellar.summary import RunSummary, pass_k_line
from stellar.suts import PythonSUT


def test_pass_hat_is_the_tau_bench_estimator():
    assert pass_hat([(3, 3), (0, 3)], 1) == 0.5
    assert pass_hat([(2, 4)], 2) == 1 / 6  # C(2,2) / C(4,2)
    assert pass_hat([(2, 4)], 3) == 0.0
    assert pass_hat([(1, 1)], 2) is None


async def test_a_test_fails_when_any_repeat_fails_and_keeps_the_failing_repeat(tmp_path):
    answers = itertools.cycle(["good", "bad", "good"])  # the second of three repeats fails
    archive, pipeline = make(tmp_path, repeats=3)
    pipeline.sut = PythonSUT(lambda text: Response(text=next(answers)))
    pipeline.fitness = as_fitness(
        lambda c, i, r: Evaluation(
            {"score": 0.1 if r.text == "bad" else 0.9}, details={"mode": "bad"}
        )
    )
    pipeline.concurrency = 1
    [record] = await pipeline.run_generation(0, [SPACE.candidate({"word": "ok"})], Gate())
    assert record.status == Status.OK and record.is_failure
    assert record.response_text == "bad"  # the repeat a person reads
    repeats = record.details["repeats"]
    assert repeats["k"] == 3 and repeats["passed"] == 2
    assert [o["failed"] for o in repeats["outcomes"]] == [False, True, False]
    assert [o["mode"] for o in repeats["outcomes"]] == [None, "bad", None]
    assert passes(record) == (2, 3)
    [stored] = archive.records()
    assert stored.is_failure and passes(stored) == (2, 3)
    summary = RunSummary("run", "random", 0)
    summary.count(stored)
    assert pass_k_line(summary.repeated, summary.repeated_modes) == (
        "repeated 3x: 0 of 1 tests passed every repeat; pass^1 0.67, pass^2 0.33, pass^3 0.00"
        "\n  bad: 0 of 1 failing tests failed every repeat"
    )
    await pipeline.sut.aclose()


async def test_an_error_in_one_repeat_is_the_tests_error_when_none_failed(tmp_path):
    calls = itertools.count()
    _, pipeline = make(tmp_path, repeats=2)

    def sometimes(text):
        if next(calls) == 1:
            raise RuntimeError("flaky backend")
        return Response(text="fine")

    pipeline.sut = PythonSUT(sometimes)
    pipeline.concurrency = 1
    [record] = await pipeline.run_generation(0, [SPACE.candidate({"word": "slow"})], Gate())
    assert record.status == Status.SUT_ERROR and "flaky backend" in record.error
    assert record.details["repeats"]["passed"] == 1
    await pipeline.sut.aclose()
