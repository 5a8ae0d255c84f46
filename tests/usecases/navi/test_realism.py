"""The offline realiser writes what a driver would say: checked on 2,000 random combinations.

No contradictory tones in one request, at most two fillers and never inside a set phrase,
homophones only from the reviewed list and only where it allows them, cafes and restaurants
served coherently, and venue words that agree with the price asked. The word lists here are
written independently of the realiser's lexicons.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from stellar.features import load_feature_space
from stellar.text import perturbations
from stellar.text.perturbations import FILLERS
from stellar.usecases.navi import realiser
from stellar.usecases.navi.realiser import realise_with_plain
from stellar.usecases.navi.realiser_lexicon import CAFE_SPECIALITIES, CUISINE_DISHES

SPACE = load_feature_space(Path(realiser.__file__).parent / "features.yaml")
N = 2000

WARM = (
    r"you're the best|trust your taste|you always know|glad you're|lifesaver|value your help"
    r"|\bfriend\b|\bbuddy\b(?! just)|\bpal\b"
)
INSULTS = r"useless|incompeten|piece of junk|are you deaf|screw this up|get it right for once"
COURTESY = r"please|thank|appreciate|sorry to|kindly|grateful|excuse me|too much trouble"
# Set phrases of the realiser's vocabulary that a filler must not split.
SET_PHRASES = (
    "hook me up", "hurry up", "for god's sake", "piece of junk", "no object", "an arm and a leg",
    "break the bank", "cold hard cash", "coq au vin", "too much trouble", "pretty please",
    "at least", "make it quick", "be quick about it", "cup of joe", "in the mood",
    "stay the night", "on the cheap side", "on the expensive side", "what a day",
    "such a long day", "tap to pay", "apple pay or google pay", "credit card", "mobile payment",
    "thank you", "thanks a lot", "sorry to trouble you", "or more", "a bit stressed",
    "shut-eye", "dim sum", "pad thai", "banh mi", "tom yum", "peking duck",
)  # fmt: skip
# Where a filler may go: before these words, or after a sentence end or a comma.
FILLER_PLACES = {
    "a", "an", "some", "somewhere", "something", "my", "your", "his", "her", "our", "their",
    "that", "where", "which", "who", "how", "what", "why", "when",
}  # fmt: skip
IMPLAUSIBLE = {"two", "hear", "sum", "fined", "bye", "buy", "hay", "high", "due", "wear", "pleas"}
IMPLAUSIBLE |= {"ore", "sea", "bred", "fore", "rite", "write", "won", "knew", "no", "wood", "hole"}
NOT_CAFE = r"\b(?:food|cuisine|grub|meal|hungry|starving|eat|eaten|dinner|lunch)\b"


def candidates(perturbation: str, seed: int, **fixed: Any) -> Iterator[tuple[dict, str, str]]:
    """(values, unperturbed, perturbed) for ``N`` random valid combinations."""
    rng = random.Random(seed)
    for i in range(N):
        values = SPACE.candidate(
            {**SPACE.random_values(rng), **fixed, "word_perturbation": perturbation}
        ).values
        plain, text = realise_with_plain(values, random.Random(i))
        yield values, plain, text


def has(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE) is not None


def alignments(plain: str, text: str) -> Iterator[list[tuple[int, str]]]:
    """Every way to read ``text`` as ``plain`` with fillers inserted: lists of (gap, filler).

    The gap is the index of the word before the filler; the word after a sentence-opening
    filler may have lost its capital. "Do you know you know a place" has two readings.
    """
    fillers = {f.lower() for f in FILLERS}
    src, out = [w.lower() for w in plain.split()], text.split()

    def walk(i: int, j: int) -> Iterator[list[tuple[int, str]]]:
        if j == len(out):
            if i == len(src):
                yield []
            return
        if i < len(src) and out[j].lower() == src[i]:
            yield from walk(i + 1, j + 1)
        for k in (1, 2):
            run = " ".join(out[j : j + k])
            if 0 < i < len(src) and j + k <= len(out) and run.rstrip(",").lower() in fillers:
                for rest in walk(i, j + k):
                    if not rest or rest[0][0] != i - 1:  # one filler per gap
                        yield [(i - 1, run), *rest]

    return walk(0, 0)


# --------------------------------------------------------------------------------- tones


def test_no_request_mixes_contradictory_tones():
    for values, _, text in candidates("none", seed=21):
        assert not (has(WARM, text) and has(INSULTS, text)), text
        if values["politeness"] == "rude":
            assert not has(WARM, text), text  # no praise, no "buddy" while insulting
            assert not has(COURTESY, text), text  # no "Kindly ..., and be quick about it"
        else:
            assert not has(INSULTS, text), text


def test_rude_empathic_requests_stay_personal_and_impatient():
    texts = [
        t for _, _, t in candidates("none", seed=22, politeness="rude", anthropomorphism="empathic")
    ]
    assert all(has(r"hurry|dammit|god's sake|quick|ridiculous|just do it", t) for t in texts)
    assert all(has(r"\byou\b|what do you|whatcha", t) for t in texts)


# ------------------------------------------------------------------------------- fillers


def test_at_most_two_fillers_never_inside_a_set_phrase():
    counts = []
    for _, plain, text in candidates("fillers", seed=23):
        words = plain.split()

        def fits(found: list[tuple[int, str]], words: list[str] = words) -> bool:
            return 1 <= len(found) <= 2 and all(
                words[gap][-1] in ".,!?;:" or words[gap + 1].lower() in FILLER_PLACES
                for gap, _ in found
            )

        readings = [found for found in alignments(plain, text) if fits(found)]
        assert readings, (plain, text)  # fillers only where speakers hesitate, one or two
        counts.append(len(readings[0]))
        for phrase in SET_PHRASES:
            if phrase in plain.lower():
                assert phrase in text.lower(), (phrase, text)
    assert sum(c == 2 for c in counts) > 0.2 * N  # two fillers happen, not just one


# ---------------------------------------------------------------------------- homophones


def reviewed_pairs() -> set[tuple[str, str]]:
    """(word, written as) pairs of the reviewed list, read here from the data file."""
    path = Path(perturbations.__file__).parent / "data" / "homophones.yaml"
    rules = yaml.safe_load(path.read_text(encoding="utf-8"))["rules"]
    return {(str(rule["from"]), str(to)) for rule in rules for to in rule["to"]}


def test_homophones_come_from_the_reviewed_list():
    pairs, changed = reviewed_pairs(), 0
    for _, plain, text in candidates("homophones", seed=24):
        before = re.findall(r"[\w']+", plain.lower())
        after = re.findall(r"[\w']+", text.lower())
        assert len(before) == len(after), (plain, text)
        swaps = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
        for a, b in swaps:  # a listed pair, or a possessive without its apostrophe
            assert (a, b) in pairs or (a.endswith("'s") and b == a[:-2] + "s"), (a, b, text)
        assert not {b for _, b in swaps} & IMPLAUSIBLE, text
        changed += bool(swaps)
    assert changed >= 0.97 * N  # nearly every such request carries a slip


# -------------------------------------------------------------------------- coherence


@pytest.mark.parametrize("level", ["not", "slightly", "implicit"])
def test_a_cafe_serves_what_a_cafe_of_its_cuisine_serves(level):
    dishes = [d for ds in CUISINE_DISHES.values() for d in ds]
    for values, _, text in candidates("none", seed=25, category="cafe", implicitness=level):
        if values["cuisine"] == "none":
            continue
        assert any(s.lower() in text.lower() for s in CAFE_SPECIALITIES[values["cuisine"]]) or (
            level == "not" and values["cuisine"] in text.lower()
        ), text
        assert not has(NOT_CAFE, text), text
        assert not any(has(rf"\b{re.escape(d)}\b", text) for d in dishes), text


def test_a_restaurant_serves_meals_not_coffee():
    specialities = [s for ss in CAFE_SPECIALITIES.values() for s in ss]
    for values, _, text in candidates("none", seed=26, category="restaurant"):
        assert not any(s.lower() in text.lower() for s in specialities), text
        if values["cuisine"] != "none" and values["implicitness"] != "not":
            names = [values["cuisine"], *CUISINE_DISHES[values["cuisine"]]]
            assert any(n.lower() in text.lower() for n in names), text


def test_venue_words_agree_with_the_price():
    clashes = {"crash pad": ("medium", "high"), "dive bar": ("medium", "high")}
    clashes["cocktail lounge"] = ("low",)
    for values, _, text in candidates("none", seed=27, slang="slangy", implicitness="not"):
        for word, prices in clashes.items():
            if values["price"] in prices:
                assert word not in text.lower(), text
