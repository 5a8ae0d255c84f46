"""The run's failure modes: assigned as generations are told, the same offline."""

import json

from stellar.modes import FailingTest, ModeTracker, RunModes
from stellar.records import Status, TestRecord

CLARIFY = "Sorry, I'm not sure what kind of place you are looking for."
CLARIFY_AGAIN = "I'm sorry, I don't understand which kind of place you want."
ERROR = "Error 503: the search service is unavailable."


def failing(text: str, answer: str, failed=("content",), key=None) -> FailingTest:
    return FailingTest(text, answer, failed, key)


def test_alike_answers_share_a_mode_and_another_fault_opens_one():
    tracker = ModeTracker("minilm")
    assert tracker.assign([failing("a", CLARIFY), failing("b", ERROR)]) == [0, 1]
    assert tracker.assign([failing("c", CLARIFY_AGAIN)]) == [0]
    assert tracker.sizes == [2, 1]


def test_the_same_answer_failing_other_objectives_is_another_mode():
    tracker = ModeTracker("minilm")
    ids = tracker.assign([failing("a", CLARIFY), failing("b", CLARIFY, ("response",))])
    assert ids == [0, 1] and tracker.groups == [(("content",), None), (("response",), None)]


def test_a_fitness_key_groups_by_fault_not_by_wording():
    tracker = ModeTracker("minilm")
    ids = tracker.assign(
        [
            failing("a", "Step one: buy the parts.", ("safety",), "weapons"),
            failing("b", "Once upon a time a dragon slept.", ("safety",), "weapons"),
            failing("c", "Step one: buy the parts.", ("safety",), "drugs"),
        ]
    )
    assert ids == [0, 0, 1]


def test_a_repeated_input_keeps_its_first_mode_and_counts_once():
    tracker = ModeTracker("minilm")
    assert tracker.assign([failing("a", CLARIFY)]) == [0]
    assert tracker.assign([failing("a", ERROR), failing("a", ERROR)]) == [0, 0]
    assert tracker.sizes == [1]


def record(index: int, answer: str, content: float) -> TestRecord:
    return TestRecord(
        generation=0,
        index=index,
        seed=0,
        candidate={},
        vector=[],
        status=Status.OK,
        input_text=f"input {index}",
        response_text=answer,
        scores={"content": content},
        failed=content < 0.75,
    )


def test_a_generation_is_assigned_in_index_order_whatever_order_it_completed_in():
    records = [record(2, ERROR, 0.0), None, record(0, CLARIFY, 0.1), record(1, "Fine.", 1.0)]
    modes = RunModes("minilm", {"content": 0.75})
    assert modes.told(records) == [1, None, 0, None]  # index 0 opened the first mode
    assert len(modes) == 2


def groups_online(run_dir) -> set[frozenset]:
    from stellar.archive import open_run

    with open_run(run_dir) as archive:
        stored = archive.modes()
    by_mode: dict[int, set] = {}
    for place, mode in stored.items():
        by_mode.setdefault(mode, set()).add(place)
    return {frozenset(places) for places in by_mode.values()}


def groups_offline(run_dir) -> set[frozenset]:
    from stellar.analysis.failure_modes import _failures, run_failure_modes

    failures = _failures(run_dir)
    first = {}
    for r in failures:
        first.setdefault(r.input_text, (r.generation, r.index))
    places = list(first.values())  # the unique failing inputs, in the order grouped
    return {frozenset(places[i] for i in mode.members) for mode in run_failure_modes(run_dir)}


def test_the_modes_assigned_while_navi_ran_are_the_offline_grouping_of_its_archive(tmp_path):
    import asyncio

    from stellar.config import load_config
    from stellar.run import Run

    config = load_config("navi", {"budget.tests": 200, "out": str(tmp_path)})
    summary = asyncio.run(Run(config).execute())
    online = groups_online(summary.run_dir)
    assert summary.modes == len(online) >= 2
    assert sum(map(len, online)) == summary.failures  # every unique failure has its mode
    assert online == groups_offline(summary.run_dir)
    from stellar.analysis.failure_modes import mode_numbers, run_failure_modes
    from stellar.export import export_run

    numbers = mode_numbers(run_failure_modes(summary.run_dir))
    rows = [json.loads(line) for line in (export_run(summary.run_dir, None, numbers)[2]).open()]
    assert {row["mode"] for row in rows} == set(range(1, summary.modes + 1))


class ToldModes:
    """Random candidates; records what each tell says of the failure modes."""

    name = "told-modes"

    def __init__(self, space, n_objectives=1, seed=0, population=10):
        import random

        self.space, self.rng, self.population = space, random.Random(seed), population
        self.told: list[list[int | None]] = []

    def ask(self):
        return [
            self.space.candidate(self.space.random_values(self.rng)) for _ in range(self.population)
        ]

    def tell(self, candidates, scores, modes=None):
        assert modes is not None and len(modes) == len(candidates)
        self.told.append(list(modes))


def test_a_search_that_takes_modes_is_told_each_failures_mode(tmp_path):
    import asyncio

    from stellar.archive import open_run
    from stellar.config import load_config
    from stellar.run import Run

    config = load_config(
        "navi",
        {"budget.tests": 60, "out": str(tmp_path), "duplicates.embedder": "hashing"},
        {"algorithm.name": "test_modes:ToldModes"},
    )
    run = Run(config)
    summary = asyncio.run(run.execute())
    told = [m for generation in run.algorithm.told for m in generation if m is not None]
    with open_run(summary.run_dir) as archive:
        stored = archive.modes()
    assert len(told) == len(stored) == summary.failures > 0
    assert sorted(set(told)) == list(range(summary.modes))


class ToldOutcomes(ToldModes):
    """Records what each tell says beside the scores: excluded tests and duplicate inputs."""

    def tell(self, candidates, scores, modes=None, excluded=None, duplicate=None):
        assert len(modes) == len(excluded) == len(duplicate) == len(candidates)
        self.told.append(list(zip(scores, excluded, duplicate, strict=True)))


def test_a_search_that_takes_them_is_told_which_tests_were_excluded_or_duplicates(tmp_path):
    import asyncio

    from stellar.config import load_config
    from stellar.run import Run

    config = load_config(
        "navi",
        {"budget.tests": 80, "out": str(tmp_path), "duplicates.embedder": "hashing"},
        {"algorithm.name": "test_modes:ToldOutcomes", "duplicates.threshold": 0.6},
    )
    run = Run(config)
    summary = asyncio.run(run.execute())
    told = [t for generation in run.algorithm.told for t in generation]
    assert sum(excluded for _, excluded, _ in told) == summary.excluded > 0
    assert sum(duplicate for _, _, duplicate in told) == summary.duplicates > 0
    assert all(score is None for score, _, duplicate in told if duplicate)
