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
        FailingTest(f"request {family} {i}", answer, (objective,))
        for family, answers in FAMILIES.items()
        for i, answer in enumerate(answers)
    ]


def family_of(test: FailingTest) -> str:
    return test.input.split(" ", 1)[1].rsplit(" ", 1)[0]


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


def test_beyond_the_clustered_sample_every_answer_joins_its_family(monkeypatch):
    """More answers than are clustered: the families come out whole, as without the cap."""
    import stellar.analysis.failure_modes as modes_module

    planted = [
        FailingTest(f"request {test.input.split(' ', 1)[1]} copy {n}", test.answer, test.failed)
        for n in range(12)
        for test in planted_tests()
    ] + [FailingTest("request empty 0 copy 0", "", ("response",))] * 3
    planted += [  # a rare mode that the seeded sample of 30 misses (checked)
        FailingTest(f"request rare {i}", f"Your account {i} has been deleted.", ("response",))
        for i in range(2)
    ]
    whole = failure_modes(planted, "minilm")
    monkeypatch.setattr(modes_module, "CLUSTERED", 30)
    capped = failure_modes(planted, "minilm")
    assert len(planted) > 4 * modes_module.CLUSTERED
    assert [(m.label, m.members) for m in capped] == [(m.label, m.members) for m in whole]
    assert sorted(m.size for m in capped) == [2, 3, 36, 36, 48]  # empty answers: their own
