"""Failure modes: planted answer families are found, each kept whole under rewording."""

import re

from stellar.analysis.failure_modes import (
    FailingTest,
    failed_objectives,
    failure_modes,
    mode_title,
    opening,
)

FAMILIES = {
    "clarify": [
        "Sorry, I'm not sure what kind of place you are looking for.",
        "I'm sorry, I don't understand which kind of place you want.",
        "Sorry, what sort of place are you looking for? I didn't get it.",
        "Apologies, I am not sure what type of place you mean.",
    ],
    "wrong price": [
        "The Grand is a luxury hotel with rooms from 400 euros a night.",
        "I found an upscale hotel, the Ritz, priced at 350 euros per night.",
        "Hotel Imperial is an expensive five-star hotel, around 500 euros nightly.",
    ],
    "endpoint": [
        "Error 503: the search service is unavailable.",
        "Service unavailable (503). Please try again later.",
        "The search backend returned error 503, service unavailable.",
    ],
}


def planted_tests(objective: str = "response") -> list[FailingTest]:
    return [
        FailingTest(f"request {family} {i} {objective}", answer, (objective,))
        for family, answers in FAMILIES.items()
        for i, answer in enumerate(answers)
    ]


def family_of(test: FailingTest) -> str:
    return test.input.split(" ", 1)[1].rsplit(" ", 2)[0]


def test_three_planted_families_are_three_modes_each_kept_whole():
    planted = planted_tests()
    modes = failure_modes(planted, "minilm")
    assert len(modes) == 3
    found = sorted(sorted({family_of(planted[i]) for i in m.members}) for m in modes)
    assert found == [["clarify"], ["endpoint"], ["wrong price"]]
    assert [m.size for m in modes] == [4, 3, 3]
    clarify = modes[0]
    assert clarify.label.startswith("response failed: “") and len(clarify.examples) == 3


def test_a_mode_is_titled_by_its_objective_and_its_typical_answers_opening():
    modes = failure_modes(planted_tests("content"), "minilm")
    for mode in modes:
        typical = mode.examples[0][1]
        assert mode.label == f"content failed: “{typical}”"  # short answers: quoted whole
        words = re.findall(r"[^\W\d_]{3,}", mode.label)
        assert len(words) >= 4, mode.label  # words, not a list of numbers


def test_a_long_answer_is_cut_at_a_word_on_one_line():
    answer = (
        "Café Nour, 156 Main Street.\nOpen until 420 minutes past noon, rated 4.5 stars by many"
    )
    title = mode_title(("content", "response"), answer)
    assert title.startswith("content + response failed: “Café Nour, 156 Main Street. Open")
    assert title.endswith("…”") and "\n" not in title
    quoted = title.split("“", 1)[1].removesuffix("…”")
    assert answer.replace("\n", " ").startswith(quoted) and len(quoted) <= 70
    assert answer.replace("\n", " ")[len(quoted)] == " "  # cut between words
    assert mode_title(("failure",), "  ") == "failed: (empty answer)"
    assert opening("x" * 100) == f"“{'x' * 70}…”"


def test_a_different_failed_objective_is_a_mode_of_its_own():
    planted = (
        planted_tests()[:4] + planted_tests("content")[:4]
    )  # the same answers, other objective
    modes = failure_modes(planted, "minilm")
    assert sorted(m.failed for m in modes) == [("content",), ("response",)]


def test_failed_objectives_name_the_scores_under_their_thresholds():
    below = {"response": 0.75, "content": 0.75}
    assert failed_objectives({"response": 0.5, "content": 0.9}, below) == ("response",)
    assert failed_objectives({"response": 0.5, "content": 0.1}, below) == ("content", "response")
    assert failed_objectives({"quality": 0.1}, {}) == ("failure",)
    assert failure_modes([], "hashing") == []


def test_many_rewordings_keep_their_families_and_empty_answers_are_a_mode():
    planted = [
        FailingTest(f"{test.input} copy {n}", test.answer, test.failed)
        for n in range(12)
        for test in planted_tests()
    ] + [FailingTest(f"request empty {i}", "", ("response",)) for i in range(3)]
    modes = failure_modes(planted, "minilm")
    assert sorted(m.size for m in modes) == [3, 36, 36, 48]
    empty = next(m for m in modes if m.size == 3)
    assert empty.key == "(empty answer)" and empty.label == "response failed: (empty answer)"
