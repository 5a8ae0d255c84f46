"""The fixed task list: every task once, everything else plain, the same order for every run."""

from __future__ import annotations

import pytest

from stellar.errors import StellarError
from stellar.features import Feature, FeatureSpace
from stellar.search.task_list import TaskListSearch

SPACE = FeatureSpace(
    [
        Feature("intent", "dialogue", ("book", "cancel", "find")),
        Feature("entity", "dialogue", ("existing", "missing")),
        Feature("user", "dialogue", ("cooperative", "impatient")),
        Feature("slang", "style", ("neutral", "slangy")),
    ]
)


def asked(search: TaskListSearch) -> list[dict]:
    out = []
    while batch := search.ask():
        out += [c.values for c in batch]
    return out


def test_every_task_once_with_the_rest_at_its_first_value_in_one_order_for_every_seed():
    tasks = asked(TaskListSearch(SPACE, seed=1, population=4, tasks=["intent", "entity"]))
    assert len(tasks) == 6
    assert {(t["intent"], t["entity"]) for t in tasks} == {
        (i, e) for i in ("book", "cancel", "find") for e in ("existing", "missing")
    }
    assert {(t["user"], t["slang"]) for t in tasks} == {("cooperative", "neutral")}
    again = asked(TaskListSearch(SPACE, seed=7, population=5, tasks=["intent", "entity"]))
    assert again == tasks  # the list is fixed; the run's seed changes only how tests are written


def test_a_task_feature_the_space_lacks_is_refused():
    with pytest.raises(StellarError, match="unknown"):
        TaskListSearch(SPACE, tasks=["intent", "mood"])
