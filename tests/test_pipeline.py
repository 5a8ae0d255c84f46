import asyncio

import pytest

from stellar.archive import Archive
from stellar.features import Feature, FeatureSpace
from stellar.fitness import ThresholdOracle, as_fitness
from stellar.generators import as_generator
from stellar.pipeline import Gate, Pipeline
from stellar.records import Evaluation, Response, Status
from stellar.suts import PythonSUT
from stellar.termination import AnyOf, StopReason, StopRequest, TestBudget

SPACE = FeatureSpace(
    [
        Feature(
            "word",
            "content",
            ("ok", "empty", "long", "boom", "slow", "bad-score", "sut-error", "same"),
        )
    ]
)


def generate(candidate, rng):
    word = candidate.values["word"]
    return {"empty": "   ", "long": "x" * 50, "same": "ok"}.get(word, word)


def sut(text: str) -> Response:
    if text == "boom":
        raise RuntimeError("the SUT crashed")
    if text == "slow":
        import time

        time.sleep(2)
    if text == "sut-error":
        return Response(text="", error="HTTP 503")
    return Response(text=f"answer to {text}")


def fitness(candidate, test_input, response):
    if test_input.text == "bad-score":
        return {"score": 1.7}
    return {"score": 0.1 if test_input.text == "ok" else 0.9}


class ExactDuplicates:
    """Duplicates are repeated texts; rows count the texts stored."""

    def __init__(self):
        self.rows: dict[str, int] = {}

    def screen(self, texts):
        out = []
        for t in texts:
            seen = t in self.rows
            row = self.rows.setdefault(t, len(self.rows))
            out.append((seen, 1.0 if seen else 0.0, row))
        return out


def make(tmp_path, **kw):
    archive = Archive(tmp_path / "a.sqlite")
    return archive, Pipeline(
        generator=as_generator(generate),
        sut=PythonSUT(sut),
        fitness=as_fitness(fitness),
        oracle=ThresholdOracle({"score": 0.5}),
        archive=archive,
        duplicates=ExactDuplicates(),
        sut_timeout=0.5,
        max_input_chars=20,
        **kw,
    )


async def test_every_fault_is_a_recorded_status(tmp_path):
    archive, pipeline = make(tmp_path)
    candidates = [SPACE.candidate({"word": w}) for w in SPACE["word"].values]
    records = await pipeline.run_generation(0, candidates, Gate())
    by_word = {r.candidate["word"]: r for r in records}
    assert by_word["ok"].status == Status.OK and by_word["ok"].is_failure
    assert by_word["empty"].status == Status.INVALID and by_word["empty"].error == "empty input"
    assert by_word["long"].status == Status.INVALID and "longer than 20" in by_word["long"].error
    assert by_word["boom"].status == Status.SUT_ERROR and "crashed" in by_word["boom"].error
    assert by_word["slow"].status == Status.SUT_ERROR and "timed out" in by_word["slow"].error
    assert by_word["sut-error"].status == Status.SUT_ERROR
    assert by_word["bad-score"].status == Status.JUDGE_ERROR
    assert by_word["same"].status == Status.DUPLICATE and not by_word["same"].is_failure
    stored = {r.candidate["word"]: r for r in archive.records()}
    assert {w: r.status for w, r in stored.items()} == {w: r.status for w, r in by_word.items()}
    assert archive.counts()["failures"] == 1
    await pipeline.sut.aclose()


async def test_generator_fault_is_invalid_and_run_goes_on(tmp_path):
    _, pipeline = make(tmp_path)

    def flaky(candidate, rng):
        if candidate.values["word"] == "boom":
            raise ValueError("model refused")
        return candidate.values["word"]

    pipeline.generator = as_generator(flaky)
    records = await pipeline.run_generation(
        0, [SPACE.candidate({"word": w}) for w in ("boom", "ok")], Gate()
    )
    assert records[0].status == Status.INVALID and "model refused" in records[0].error
    assert records[1].status == Status.OK


async def test_budget_limits_what_reaches_the_sut(tmp_path):
    _, pipeline = make(tmp_path)
    calls = []

    def counting(text):
        calls.append(text)
        return "fine"

    pipeline.sut = PythonSUT(counting)
    pipeline.duplicates = None
    candidates = [SPACE.candidate({"word": "ok"}) for _ in range(10)]
    records = await pipeline.run_generation(0, candidates, Gate(AnyOf([TestBudget(3)])))
    assert len(calls) == 3
    assert sum(r is not None for r in records) == 3


async def test_concurrency_is_bounded(tmp_path):
    _, pipeline = make(tmp_path, concurrency=3)
    state = {"now": 0, "max": 0}

    class Slow:
        async def query(self, text):
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
            await asyncio.sleep(0.02)
            state["now"] -= 1
            return Response(text="fine")

        async def aclose(self):
            pass

    pipeline.sut, pipeline.duplicates = Slow(), None
    candidates = [SPACE.candidate({"word": "ok"}) for _ in range(12)]
    await pipeline.run_generation(0, candidates, Gate())
    assert state["max"] == 3


async def test_stopped_gate_sends_nothing(tmp_path):
    archive, pipeline = make(tmp_path)
    stop = StopRequest()
    gate = Gate(AnyOf([stop]))
    stop.request(StopReason.INTERRUPTED)
    records = await pipeline.run_generation(0, [SPACE.candidate({"word": "ok"})], gate)
    assert records == [None]
    assert archive.counts()["ok"] == 0


@pytest.mark.parametrize("bad", [{"score": float("nan")}, {"score": "high"}, {"score": -0.1}])
async def test_scores_outside_unit_interval_are_judge_errors(tmp_path, bad):
    _, pipeline = make(tmp_path)
    pipeline.fitness = as_fitness(lambda c, t, r: bad)
    [record] = await pipeline.run_generation(0, [SPACE.candidate({"word": "ok"})], Gate())
    assert record.status == Status.JUDGE_ERROR


async def test_class_fitness_goes_through_the_same_score_check(tmp_path):
    class Overconfident:
        async def evaluate(self, candidate, test_input, response):
            return Evaluation(scores={"score": 1.5})

    _, pipeline = make(tmp_path)
    pipeline.fitness = as_fitness(Overconfident())
    [record] = await pipeline.run_generation(0, [SPACE.candidate({"word": "ok"})], Gate())
    assert record.status == Status.JUDGE_ERROR and "not a number in [0, 1]" in record.error


class Warmed:
    """A SUT that prepares batches: records what it was told before each query."""

    def __init__(self, fail: bool = False):
        self.batches, self.queried, self.fail = [], [], fail

    async def warm(self, texts):
        self.batches.append(list(texts))
        if self.fail:
            raise RuntimeError("cannot warm")

    async def query(self, text):
        self.queried.append((text, len(self.batches)))
        return Response(text=f"answer to {text}")

    async def aclose(self):
        pass


@pytest.mark.parametrize("fail", [False, True])
async def test_a_generation_is_warmed_before_its_queries(tmp_path, fail):
    _, pipeline = make(tmp_path)
    pipeline.sut = sut = Warmed(fail)
    words = ["ok", "same", "empty", "boom", "long"]  # "same" is a duplicate of "ok", 2 invalid
    candidates = [SPACE.candidate({"word": w}) for w in words]
    records = await pipeline.run_generation(0, candidates, Gate())
    assert sut.batches == [["ok", "boom"]]  # the inputs that will be sent, screened
    assert sorted(sut.queried) == [("boom", 1), ("ok", 1)]  # each after the batch
    assert [r.status for r in records] == [
        Status.OK, Status.DUPLICATE, Status.INVALID, Status.OK, Status.INVALID
    ]  # fmt: skip
