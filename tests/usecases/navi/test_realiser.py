"""Tests for the offline realiser of the navigation use case (stellar.usecases.navi.realiser)."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stellar.features import load_feature_space
from stellar.generators.base import as_generator
from stellar.records import TestInput
from stellar.text.perturbations import (
    FILLERS,
    FUNCTION_WORDS,
    add_fillers,
    delete_words,
    homophone_index,
    homophones,
    identity,
)
from stellar.usecases.navi import realiser
from stellar.usecases.navi.realiser import NaviRealiser, realise, realise_with_plain
from stellar.usecases.navi.realiser_lexicon import (
    CAFE_SPECIALITIES,
    CUISINE_DISHES,
    LEXICONS,
    PERTURBATION_OPERATORS,
)

FEATURES = Path(realiser.__file__).parent / "features.yaml"
SPACE = load_feature_space(FEATURES)

# Words a reader takes as naming the venue (written here, independently of the lexicons).
CATEGORY_WORDS = {
    "hospital": r"hospital|medical",
    "car_repair": r"repair|garage|mechanic",
    "restaurant": r"restaurant|dining|eatery|grub spot|food joint",
    "supermarket": r"supermarket|grocer",
    "cafe": r"\bcafe\b|coffee (?:shop|house|joint|spot)",
    "bakery": r"bakery|patisserie|bread shop",
    "bar": r"\bbar\b|\bpub\b|watering hole|cocktail lounge",
    "hotel": r"hotel|lodging|crash pad",
    "museum": r"museum",
}
ANY_CATEGORY_WORD = "|".join(CATEGORY_WORDS.values())
PRICE_WORDS = {
    "low": r"cheap|budget|afford|inexpensive|low[- ]cost|economical|low price|modest price"
    r"|break the bank|arm and a leg",
    "medium": r"\bmid[- ](?:priced|range|price)|moderate|medium",
    "high": r"upscale|fancy|high[- ]end|luxurious|exclusive|posh|swanky|bougie|expensive"
    r"|splurge|upper price",
}
PAYMENT_WORDS = {
    "cash": r"\bcash\b",
    "credit card": r"credit card",
    "contactless": r"contactless|tap to pay",
    "mobile payment": r"phone|mobile pay|apple pay",
}
PARKING_WORDS = r"park|ditch my ride"
RATING_NUMBERS = {
    3.5: r"3\.5",
    4.0: r"(?<![\d.])4(?:\.0)?(?!\.?\d)",
    4.5: r"4\.5",
    5.0: r"(?<![\d.])5(?:\.0)?(?!\.?\d)",
}
RUDE_MARKERS = (
    "hurry",
    "dammit",
    "useless",
    "just do it",
    "god's sake",
    "deaf",
    "screw",
    "quick",
    "ridiculous",
    "incompeten",
    "for once",
)
POLITE_MARKERS = ("please", "kindly", "thank", "appreciate", "troubl", "grateful", "sorry")
SLANG_MARKERS = (
    r"\b(yo|gonna|gimme|wanna|gotta|ya|aight|dude|bro|grub|outta|whatcha|hey man)\b|, man\b"
)


def candidates(n: int, seed: int = 0, **fixed: Any) -> Iterator[dict[str, Any]]:
    """``n`` random constrained candidates' values, with ``fixed`` features set first."""
    rng = random.Random(seed)
    for _ in range(n):
        yield SPACE.candidate({**SPACE.random_values(rng), **fixed}).values


def realise_seeded(values: dict[str, Any], seed: int) -> str:
    return realise(values, random.Random(seed))


def has(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE) is not None


def strings(entry: Any) -> Iterator[str]:
    """Every string in a nested lexicon entry."""
    if isinstance(entry, str):
        yield entry
    elif isinstance(entry, dict):
        for value in entry.values():
            yield from strings(value)
    elif isinstance(entry, list | tuple):
        for value in entry:
            yield from strings(value)


RESTAURANT = {
    "category": "restaurant",
    "payment": "credit card",
    "cuisine": "italian",
    "parking": "available",
    "price": "low",
    "rating": 4.0,
    "slang": "neutral",
    "implicitness": "not",
    "politeness": "neutral",
    "anthropomorphism": "directive",
    "word_perturbation": "none",
}
HOSPITAL = {
    **RESTAURANT,
    "category": "hospital",
    "payment": "none",
    "cuisine": "none",
    "parking": "none",
    "price": "none",
    "rating": "none",
}


# ---------------------------------------------------------------------------- lexicons


@pytest.mark.parametrize(
    ("feature", "value"),
    [(f.name, v) for f in SPACE.features for v in f.values],
    ids=lambda x: str(x),
)
def test_every_feature_value_has_phrases(feature, value):
    lexicon = LEXICONS[feature]
    assert value in lexicon
    if feature == "word_perturbation":
        assert callable(lexicon[value])
    else:
        assert any(s.strip() for s in strings(lexicon[value]))


@pytest.mark.parametrize("category", SPACE["category"].values)
@pytest.mark.parametrize("level", SPACE["implicitness"].values)
@pytest.mark.parametrize("slang", SPACE["slang"].values)
def test_each_category_has_words_for_every_register(category, level, slang):
    entry = LEXICONS["category"][category][level]
    assert entry.get(slang) or entry["neutral"]


def test_perturbation_values_map_to_the_library_operators():
    expected = {
        "none": identity,
        "delete words": delete_words,
        "homophones": homophones,
        "fillers": add_fillers,
    }
    assert expected == PERTURBATION_OPERATORS


def test_every_cuisine_has_dishes():
    cuisines = [c for c in SPACE["cuisine"].values if c != "none"]
    assert sorted(CUISINE_DISHES) == sorted(cuisines)
    assert all(CUISINE_DISHES[c] for c in cuisines)


# ------------------------------------------------------------------ determinism, variety


def test_same_seed_gives_the_same_utterance():
    for i, values in enumerate(candidates(200, seed=3)):
        assert realise_seeded(values, i) == realise_seeded(values, i)


def test_output_depends_only_on_the_rng_state():
    rng_a, rng_b = random.Random(7), random.Random(7)
    first = [realise(RESTAURANT, rng_a) for _ in range(5)]
    assert first == [realise(RESTAURANT, rng_b) for _ in range(5)]
    assert len(set(first)) > 1  # the rng advances


@pytest.mark.parametrize("values", [RESTAURANT, HOSPITAL], ids=["restaurant", "hospital"])
def test_different_seeds_give_varied_utterances(values):
    outputs = {realise_seeded(values, seed) for seed in range(50)}
    assert len(outputs) >= 10


def test_every_register_gives_varied_utterances():
    for values in candidates(100, seed=11, word_perturbation="none"):
        assert len({realise_seeded(values, seed) for seed in range(50)}) >= 10, values


# --------------------------------------------------------------------------- well formed


def test_random_candidates_give_well_formed_utterances():
    for i, values in enumerate(candidates(2000, seed=1)):
        text = realise_seeded(values, i)
        assert text and text == text.strip(), values
        assert len(text) < 400, (values, text)
        assert "{" not in text and "}" not in text, text
        assert "  " not in text, text
        assert "_" not in text, text
        assert text[0].isupper(), text
        assert text[-1] in ".!?", text


def test_unperturbed_utterances_are_tidy_sentences():
    for i, values in enumerate(candidates(2000, seed=2, word_perturbation="none")):
        text = realise_seeded(values, i)
        assert not re.search(r"\s[,.!?]|[,.!?]{2}|,[A-Za-z]", text), text
        assert not re.search(r"[.!?] [a-z]", text), text  # sentences start capitalised
        assert not has(r"\bnone\b", text), text
        assert not re.search(r"\ba [aeiouAEIOU]|\ban [b-df-hj-np-tv-zB-DF-HJ-NP-TV-Z]", text), text


# ---------------------------------------------------------------------------- fidelity


def check_attributes(values: dict[str, Any], text: str) -> None:
    """Each requested content attribute is recognisably in ``text``."""
    if values["cuisine"] != "none":
        served = CAFE_SPECIALITIES if values["category"] == "cafe" else CUISINE_DISHES
        names = [values["cuisine"], *served[values["cuisine"]]]
        assert any(name.lower() in text.lower() for name in names), (values, text)
    if values["price"] != "none":
        assert has(PRICE_WORDS[values["price"]], text), (values, text)
    if values["rating"] != "none":
        assert has(RATING_NUMBERS[values["rating"]], text), (values, text)
        assert has(r"star|rat", text), (values, text)
    if values["payment"] != "none":
        assert has(PAYMENT_WORDS[values["payment"]], text), (values, text)
    if values["parking"] != "none":
        assert has(PARKING_WORDS, text), (values, text)


def test_explicit_requests_name_the_category_and_every_attribute():
    for i, values in enumerate(
        candidates(2000, seed=4, implicitness="not", word_perturbation="none")
    ):
        text = realise_seeded(values, i)
        assert has(CATEGORY_WORDS[values["category"]], text), (values, text)
        if values["cuisine"] != "none":
            assert values["cuisine"] in text.lower(), (values, text)
        check_attributes(values, text)


@pytest.mark.parametrize("level", ["slightly", "implicit"])
def test_less_explicit_requests_still_carry_every_attribute(level):
    for i, values in enumerate(
        candidates(1000, seed=5, implicitness=level, word_perturbation="none")
    ):
        check_attributes(values, realise_seeded(values, i))


def test_implicit_requests_do_not_name_the_category():
    for i, values in enumerate(
        candidates(2000, seed=6, implicitness="implicit", word_perturbation="none")
    ):
        text = realise_seeded(values, i)
        assert not has(ANY_CATEGORY_WORD, text), (values, text)


def test_unrequested_attributes_are_not_asked_for():
    for i, values in enumerate(candidates(2000, seed=7, word_perturbation="none")):
        text = realise_seeded(values, i)
        if values["rating"] == "none":
            assert not re.search(r"\d", text), (values, text)
        if values["price"] == "none":
            assert not any(has(p, text) for p in PRICE_WORDS.values()), (values, text)
        if values["payment"] == "none":
            assert not any(has(p, text) for p in PAYMENT_WORDS.values()), (values, text)
        for cuisine in CUISINE_DISHES:
            if cuisine != values["cuisine"]:
                assert not has(rf"\b{cuisine}\b", text), (values, text)


def test_cuisine_is_not_confused_with_the_category():
    values = {**RESTAURANT, "category": "cafe", "cuisine": "japanese", "implicitness": "implicit"}
    for seed in range(100):
        text = realise_seeded(values, seed)
        assert has("matcha|japanese", text), text
        assert not has("sushi|ramen|tempura", text), text


# ------------------------------------------------------------------------------- style


def test_rude_requests_carry_a_rude_marker():
    for i, values in enumerate(
        candidates(1000, seed=8, politeness="rude", word_perturbation="none")
    ):
        text = realise_seeded(values, i).lower()
        assert any(marker in text for marker in RUDE_MARKERS), text


def test_polite_requests_carry_a_polite_marker():
    for i, values in enumerate(
        candidates(1000, seed=9, politeness="polite", word_perturbation="none")
    ):
        text = realise_seeded(values, i).lower()
        assert any(marker in text for marker in POLITE_MARKERS), text


@pytest.mark.parametrize("politeness", ["neutral", "polite"])
def test_only_rude_requests_are_rude(politeness):
    for i, values in enumerate(
        candidates(1000, seed=10, politeness=politeness, word_perturbation="none")
    ):
        text = realise_seeded(values, i).lower()
        assert not any(marker in text for marker in RUDE_MARKERS), text


def test_formal_requests_avoid_slang_and_slangy_ones_use_it():
    formal = [
        realise_seeded(v, i)
        for i, v in enumerate(candidates(1000, seed=12, slang="formal", word_perturbation="none"))
    ]
    assert not [t for t in formal if has(SLANG_MARKERS, t)]
    slangy = [
        realise_seeded(v, i)
        for i, v in enumerate(candidates(1000, seed=12, slang="slangy", word_perturbation="none"))
    ]
    assert sum(has(SLANG_MARKERS, t) for t in slangy) > 0.5 * len(slangy)


def test_anthropomorphism_shapes_the_request():
    def texts(style: str) -> list[str]:
        values = candidates(500, seed=13, anthropomorphism=style, word_perturbation="none")
        return [realise_seeded(v, i) for i, v in enumerate(values)]

    interrogative = texts("interrogative")
    assert sum("?" in t for t in interrogative) == len(interrogative)
    empathic = texts("empathic")
    personal = r"buddy|friend|pal|you're|you always|your|(?:would|do) you|you'd|whatcha"
    assert sum(has(personal, t) for t in empathic) > 0.9 * 500
    very_directive = texts("very directive")
    assert sum("?" in t for t in very_directive) < 0.15 * len(very_directive)
    assert sum(len(t) for t in very_directive) < sum(len(t) for t in empathic)


# ------------------------------------------------------------------------ perturbation


def paired(perturbation: str, n: int = 100, seed: int = 14) -> Iterator[tuple[str, str]]:
    """(unperturbed, perturbed) utterances: one composition before and after the operator."""
    for i, values in enumerate(candidates(n, seed=seed, word_perturbation=perturbation)):
        yield realise_with_plain(values, random.Random(i))


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def is_subsequence(short: list[str], long: list[str]) -> bool:
    items = iter(long)
    return all(word in items for word in short)


def test_fillers_are_inserted():
    filler_words = {w for filler in FILLERS for w in words(filler)}
    grown = 0
    for plain, noisy in paired("fillers"):
        assert is_subsequence(words(plain), words(noisy)), (plain, noisy)
        added = Counter(words(noisy)) - Counter(words(plain))
        assert set(added) <= filler_words, (plain, noisy)
        grown += bool(added)
    assert grown == 100


def test_delete_words_drops_function_words():
    shrunk = 0
    for plain, noisy in paired("delete words"):
        assert is_subsequence(words(noisy), words(plain)), (plain, noisy)
        dropped = Counter(words(plain)) - Counter(words(noisy))
        assert set(dropped) <= FUNCTION_WORDS, (plain, noisy)
        shrunk += bool(dropped)
    assert shrunk >= 90


def test_homophones_swap_words_for_homophones():
    index = homophone_index()
    changed = 0
    for plain, noisy in paired("homophones"):
        assert len(words(plain)) == len(words(noisy)), (plain, noisy)
        for a, b in zip(words(plain), words(noisy), strict=True):
            possessive = a.endswith("'s") and b == a[:-2] + "s"  # "sister's" -> "sisters"
            assert a == b or b in index.get(a, ()) or possessive, (a, b)
        changed += plain != noisy
    assert changed >= 95


# --------------------------------------------------------------------------- generator


async def test_generate_returns_a_test_input():
    candidate = SPACE.candidate(RESTAURANT)
    generator = as_generator(NaviRealiser())
    result = await generator.generate(candidate, random.Random(5))
    assert isinstance(result, TestInput)
    assert result.text == realise_seeded(candidate.values, 5)
    assert result.prompt is None
