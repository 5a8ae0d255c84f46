"""Tests for the venue vocabulary (stellar.usecases.navi.vocabulary) and its users' tables."""

from __future__ import annotations

import pytest
import yaml

from stellar.usecases.navi.datafiles import load_data
from stellar.usecases.navi.realiser_lexicon import CATEGORY, PAYMENT, PRICE
from stellar.usecases.navi.vocabulary import (
    CATEGORIES,
    CUISINE_NAMES,
    CUISINES,
    FEATURES,
    PAYMENT_METHODS,
    PRICE_LEVELS,
    RATINGS,
    VocabularyError,
    check_features,
    vocabulary,
)


def test_vocabulary_is_loaded_once_from_its_data_file() -> None:
    assert vocabulary() is vocabulary()
    assert CATEGORIES[0] == "hospital" and len(CATEGORIES) == 9
    assert len(CUISINES) == 13 and PRICE_LEVELS == ("low", "medium", "high")
    assert PAYMENT_METHODS == ("cash", "credit card", "contactless", "mobile payment")
    assert RATINGS == (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)
    assert CUISINE_NAMES["middle eastern"] == "Middle Eastern"


def test_the_use_case_features_use_the_vocabulary() -> None:
    features = yaml.safe_load(FEATURES.read_text(encoding="utf-8"))["features"]
    check_features(vocabulary(), features)
    values = {f["name"]: f["values"] for f in features}
    assert set(values["category"]) == set(CATEGORIES)
    assert set(values["cuisine"]) - {"none"} == set(CUISINES)


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("category", "gas_station"),
        ("cuisine", "korean"),
        ("price", "cheap"),
        ("payment", "bitcoin"),
        ("rating", 4.2),
    ],
)
def test_a_feature_value_outside_the_vocabulary_is_a_clear_error(name: str, bad: object) -> None:
    features = [{"name": name, "values": ["none", bad]}, {"name": "slang", "values": ["x"]}]
    with pytest.raises(VocabularyError, match=rf"feature '{name}' .* does not know: '?{bad}'?"):
        check_features(vocabulary(), features, "my-features.yaml")


def test_lexicons_speak_the_vocabulary() -> None:
    """Every table keyed by a vocabulary value covers exactly the vocabulary."""
    lexicon = load_data("assistant_lexicon.yaml")
    replies = load_data("assistant_replies.yaml")
    for table in (lexicon["category_words"], lexicon["category_prototypes"], CATEGORY):
        assert set(table) == set(CATEGORIES)
    assert set(replies["category_nouns"]) == set(CATEGORIES)
    for table in (lexicon["cuisine_names"], lexicon["cuisine_dishes"]):
        assert set(table) == set(CUISINES)
    assert set(lexicon["price_words"]) == set(replies["price_adjectives"]) == set(PRICE_LEVELS)
    assert set(PRICE) - {"none"} == set(PRICE_LEVELS)
    assert set(lexicon["payment_words"]) == set(replies["payment_clauses"]) == set(PAYMENT_METHODS)
    assert set(PAYMENT) - {"none"} == set(PAYMENT_METHODS)
