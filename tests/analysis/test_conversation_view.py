"""The transcript a person reads numbers every exchange, and marks the turn the checks name."""

from stellar.analysis.conversation_view import FAILING_MARK, conversation_view
from stellar.records import PLAN_KEY, Status, TestRecord


def conversation(details: dict) -> TestRecord:
    turns = [
        {"turn": 0, "act": "request", "planned": True, "user": "a bar", "answer": "which kind?"},
        {"turn": 0, "act": "clarify", "planned": False, "user": "a pub", "answer": "The Fox."},
        {"turn": 1, "act": "confirm", "planned": True, "user": "yes", "answer": "The Fox, Bar X."},
    ]
    return TestRecord(
        0,
        0,
        0,
        {},
        [],
        Status.OK,
        details={PLAN_KEY: {}, **details},
        response_data={"turns": turns},
    )


def marked(view: str) -> list[str]:
    return [
        line.split("|")[0].strip() for line in view.splitlines() if line.startswith(FAILING_MARK)
    ]


def test_turns_are_numbered_as_they_happened_and_the_named_one_is_marked():
    # navi-dialogue's checks number exchanges: turn 3 is the confirmation after a clarification
    view = conversation_view(conversation({"failing_turn": 3, "failing_planned_turn": 2}))
    assert [line.split(".")[0].strip(f" {FAILING_MARK}") for line in view.splitlines()[::2]] == [
        "1", "2", "3",
    ]  # fmt: skip
    assert marked(view) == [f"{FAILING_MARK} 3. confirm"]


def test_a_judge_numbering_planned_turns_marks_that_turns_last_exchange():
    view = conversation_view(conversation({"failing_turn": 1}))  # planned turn 1: two exchanges
    assert marked(view) == [f"{FAILING_MARK} 2. clarify (unplanned)"]
