"""Tests for the built-in navigation assistant (stellar.usecases.navi.assistant)."""

from __future__ import annotations

import random
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from stellar.features import load_feature_space
from stellar.records import Response
from stellar.text.embeddings import get_embedder
from stellar.usecases.navi import realiser
from stellar.usecases.navi.assistant import NavigationAssistant, navi_assistant
from stellar.usecases.navi.city import ABSENT_COMBINATIONS
from stellar.usecases.navi.realiser import realise
from stellar.usecases.navi.request import VenueRequest
from stellar.usecases.navi.sources import default_database
from stellar.usecases.navi.store import POIDatabase
from stellar.usecases.navi.understanding import normalise, read_constraints
from stellar.usecases.navi.venue_search import distance_km, relaxations
from stellar.usecases.navi.vocabulary import CATEGORIES, PAYMENT_METHODS, PRICE_LEVELS

POI_KEYS = {"name", "category", "cuisine", "rating", "price", "payment", "parking", "address"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> POIDatabase:
    return default_database(tmp_path_factory.mktemp("navi") / "pois.sqlite", seed=0)


@pytest.fixture(scope="module")
def assistant(db: POIDatabase) -> NavigationAssistant:
    """The assistant with the real all-MiniLM-L6-v2 embedder (offline)."""
    return NavigationAssistant(db=db, embedder=get_embedder("minilm"))


def satisfies(poi: dict[str, Any], constraints: dict[str, Any]) -> bool:
    """Whether a returned POI dict satisfies database-style constraints."""
    checks = {
        "category": lambda want: poi["category"] == want,
        "cuisine": lambda want: poi["cuisine"] == want,
        "min_rating": lambda want: poi["rating"] is not None and poi["rating"] >= want,
        "price": lambda want: poi["price"] == want,
        "payment": lambda want: want in poi["payment"],
        "parking": lambda want: poi["parking"] is want,
    }
    return all(checks[name](want) for name, want in constraints.items())


# --------------------------------------------------------------------------------------------
# Plain, well-formed requests
# --------------------------------------------------------------------------------------------

R, C = "restaurant", "cafe"
PLAIN: list[tuple[str, dict[str, Any]]] = [
    ("Find me an Italian restaurant rated at least 4 stars with parking",
     {"category": R, "cuisine": "italian", "min_rating": 4.0, "parking": True}),
    ("Is there a cheap bakery nearby?", {"category": "bakery", "price": "low"}),
    ("Take me to the nearest hospital", {"category": "hospital"}),
    ("I need a hotel that accepts credit cards", {"category": "hotel", "payment": "credit card"}),
    ("Where is the closest supermarket where I can pay cash?",
     {"category": "supermarket", "payment": "cash"}),
    ("Find a pub that takes contactless payment", {"category": "bar", "payment": "contactless"}),
    ("Show me an upscale French restaurant that accepts Apple Pay",
     {"category": R, "cuisine": "french", "price": "high", "payment": "mobile payment"}),
    ("I'd like a moderately priced Thai restaurant",
     {"category": R, "cuisine": "thai", "price": "medium"}),
    ("Find a coffee shop rated 3.5 stars or more", {"category": C, "min_rating": 3.5}),
    ("Navigate to a museum with a rating of 4.5", {"category": "museum", "min_rating": 4.5}),
    ("I need a car repair shop", {"category": "car_repair"}),
    ("Find a five star hotel with parking",
     {"category": "hotel", "min_rating": 5.0, "parking": True}),
    ("Is there a Chinese restaurant that takes mobile payment?",
     {"category": R, "cuisine": "chinese", "payment": "mobile payment"}),
    ("Find a cheap Indian restaurant", {"category": R, "cuisine": "indian", "price": "low"}),
    ("A Turkish restaurant rated four stars or better, please",
     {"category": R, "cuisine": "turkish", "min_rating": 4.0}),
    ("Find an inexpensive supermarket with a parking lot",
     {"category": "supermarket", "price": "low", "parking": True}),
    ("I'm looking for a Japanese cafe", {"category": C, "cuisine": "japanese"}),
    ("Find an Italian cafe that accepts contactless payment",
     {"category": C, "cuisine": "italian", "payment": "contactless"}),
    ("A bar with parking that accepts cash",
     {"category": "bar", "payment": "cash", "parking": True}),
    ("Find a Mexican restaurant with 4.5 stars",
     {"category": R, "cuisine": "mexican", "min_rating": 4.5}),
    ("Find a Greek restaurant that is not too expensive",
     {"category": R, "cuisine": "greek", "price": "medium"}),
    ("Where can I get a pizza?", {"category": R, "cuisine": "italian"}),
]  # fmt: skip


def test_plain_requests_cover_the_feature_values() -> None:
    asked = [constraints for _, constraints in PLAIN]
    assert {c["category"] for c in asked} == set(CATEGORIES)
    assert {c["price"] for c in asked if "price" in c} == set(PRICE_LEVELS)
    assert {c["payment"] for c in asked if "payment" in c} == set(PAYMENT_METHODS)
    assert {c["min_rating"] for c in asked if "min_rating" in c} == {3.5, 4.0, 4.5, 5.0}
    assert any(c.get("parking") for c in asked)
    assert len({c["cuisine"] for c in asked if "cuisine" in c}) >= 8


@pytest.mark.parametrize(("text", "expected"), PLAIN, ids=[t for t, _ in PLAIN])
def test_plain_request_is_understood_and_answered(
    assistant: NavigationAssistant, db: POIDatabase, text: str, expected: dict[str, Any]
) -> None:
    understood = assistant.understand(text)
    assert understood.venue is not None and understood.venue.to_dict() == expected
    assert understood.via == "lexicon"
    assert db.satisfiable(VenueRequest(**expected))  # so no relaxation is needed

    response = assistant.answer(text)
    assert isinstance(response, Response)
    assert 1 <= len(response.data) <= assistant.max_pois
    assert all(satisfies(poi, expected) for poi in response.data)
    assert all(set(poi) == POI_KEYS for poi in response.data)
    assert response.data[0]["name"] in response.text
    assert response.text.rstrip().endswith("?")
    assert "exact match" not in response.text


def test_answer_is_short_and_names_what_was_asked(assistant: NavigationAssistant) -> None:
    text = assistant.answer(PLAIN[0][0]).text
    assert text.startswith("I found ")
    assert "Italian restaurants rated 4 stars or more with parking" in text
    assert "Shall I start navigation?" in text
    assert len(text.split()) <= 45


def test_pois_are_the_nearest_matches(assistant: NavigationAssistant, db: POIDatabase) -> None:
    lat, lon = assistant.position
    matches = db.query(VenueRequest("bakery", price="low"), limit=None)
    nearest = min(distance_km(lat, lon, p.lat, p.lon) for p in matches)
    first = assistant.answer("Is there a cheap bakery nearby?").data[0]
    poi = next(p for p in matches if p.name == first["name"])
    assert distance_km(lat, lon, poi.lat, poi.lon) == pytest.approx(nearest, abs=1e-3)


def test_hospital_answer_mentions_the_emergency_number(assistant: NavigationAssistant) -> None:
    assert "112" in assistant.answer("Take me to the nearest hospital").text


# --------------------------------------------------------------------------------------------
# Reading constraints
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rating"),
    [
        ("a hotel with 4.5+ rating", 4.5),
        ("a 4-star hotel", 4.0),
        ("a four and a half star hotel", 4.5),
        ("a hotel rated at least 3.5", 3.5),
        ("a hotel rated above four", 4.0),
        ("a hotel with 3.7 stars", 4.0),  # snapped up: at least 3.7 means 4.0 on a 0.5 grid
        ("the top rated hotel", 4.5),
        ("a highly rated hotel", 4.0),
        ("a hotel with 10 stars", None),  # out of range: ignored
        ("a hotel for 4 people", None),
    ],
)
def test_rating_parsing(text: str, rating: float | None) -> None:
    assert read_constraints(normalise(text))["min_rating"] == rating


@pytest.mark.parametrize(
    ("text", "price"),
    [
        ("a budget hotel", "low"),
        ("an affordable hotel", "low"),
        ("a mid-range hotel", "medium"),
        ("a reasonably priced hotel", "medium"),
        ("a high-end hotel", "high"),
        ("a fancy hotel", "high"),
        ("a hotel, not too expensive", "medium"),  # negation: documented as medium
        ("a place to stay, nothing fancy", "medium"),
    ],
)
def test_price_parsing(text: str, price: str) -> None:
    assert read_constraints(normalise(text))["price"] == price


def test_longest_phrase_wins_across_slots() -> None:
    garage = read_constraints(normalise("a hotel with a parking garage"))
    assert garage["category"] == "hotel" and garage["parking"] is True
    amex = read_constraints(normalise("a Chinese restaurant that takes American Express"))
    assert amex["cuisine"] == "chinese" and amex["payment"] == "credit card"
    coffee = read_constraints(normalise("a coffee bar"))
    assert coffee["category"] == "cafe"


def test_cuisine_name_beats_dish_word_and_implies_a_restaurant() -> None:
    found = read_constraints(normalise("some Thai curry"))
    assert found["cuisine"] == "thai" and found["category"] == "restaurant"


def test_cuisine_is_dropped_for_venues_without_one(assistant: NavigationAssistant) -> None:
    venue = assistant.understand("Find a German bakery").venue
    assert venue == VenueRequest("bakery")


def test_normalise() -> None:
    assert normalise("Café, 4.5+ stars—mid-range!") == "cafe 4.5+ stars mid range"
    assert normalise("I’m at the B&B.") == "i'm at the b and b"


# --------------------------------------------------------------------------------------------
# Language-induced misreadings (the failures STELLAR should find)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field", "missed"),
    [
        ("Looking for a restaurant with for stars", "min_rating", 4.0),  # homophone
        ("Find a hotel with at least to stars", "min_rating", 2.0),  # homophone
        ("I'd like a coffee shop with, um, four, uh, stars", "min_rating", 4.0),  # fillers
        ("Is there a restaurant where I can pay with cache?", "payment", "cash"),  # homophone
    ],
)
def test_noisy_words_lose_a_constraint(
    assistant: NavigationAssistant, text: str, field: str, missed: Any
) -> None:
    venue = assistant.understand(text).venue
    assert venue is not None
    assert getattr(venue, field) is None


def test_misread_rating_returns_pois_below_it(assistant: NavigationAssistant) -> None:
    response = assistant.answer("Looking for a restaurant with for stars")
    assert any(poi["rating"] < 4.0 for poi in response.data)


@pytest.mark.parametrize(
    "text",
    [
        "Yo, find me a grub spot",  # slang
        "need a crib for tonight",  # slang
        "find a cheap in near the highway",  # "inn" written as its homophone "in"
    ],
)
def test_slang_and_homophones_are_not_in_the_lexicon(
    assistant: NavigationAssistant, text: str
) -> None:
    assert read_constraints(normalise(text))["category"] is None
    understood = assistant.understand(text)
    assert understood.via != "lexicon"
    assert understood.venue is None  # and the embedding fallback is not confident either


# --------------------------------------------------------------------------------------------
# Embedding fallback (real all-MiniLM-L6-v2)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("I'm starving, where can I eat?", "restaurant"),
        ("We need a bed for the night", "hotel"),
        ("My tire is flat", "car_repair"),
        ("I'd like to look at some paintings", "museum"),
    ],
)
def test_embedding_fallback_understands_clear_implicit_needs(
    assistant: NavigationAssistant, text: str, category: str
) -> None:
    understood = assistant.understand(text)
    assert understood.venue is not None and understood.venue.category == category
    assert understood.via == "embedding"
    assert understood.similarity >= assistant.similarity_threshold
    response = assistant.answer(text)
    assert response.data and all(poi["category"] == category for poi in response.data)
    assert response.text.startswith("It sounds like you are looking for a")


def test_embedding_fallback_keeps_lexicon_constraints(assistant: NavigationAssistant) -> None:
    understood = assistant.understand("I'm hungry, something cheap with parking please")
    assert understood.venue == VenueRequest("restaurant", price="low", parking=True)
    assert understood.via == "embedding"


@pytest.mark.parametrize(
    "text", ["blorf snazzle wibble", "The weather is nice today", "What time is it?"]
)
def test_nonsense_gets_a_clarifying_question(assistant: NavigationAssistant, text: str) -> None:
    understood = assistant.understand(text)
    assert understood.venue is None and understood.via is None
    assert understood.similarity < assistant.similarity_threshold
    response = assistant.answer(text)
    assert response.data == []
    assert "?" in response.text and "what kind of place" in response.text


def test_threshold_is_a_setting(db: POIDatabase) -> None:
    strict = NavigationAssistant(db=db, similarity_threshold=0.99)
    assert strict.understand("I'm starving, where can I eat?").venue is None
    lax = NavigationAssistant(db=db, similarity_threshold=-1.0)
    assert lax.understand("blorf snazzle wibble").venue is not None


def test_empty_text_is_a_clarifying_question(assistant: NavigationAssistant) -> None:
    response = assistant.answer("   ")
    assert response.data == [] and "?" in response.text


# --------------------------------------------------------------------------------------------
# Relaxation and impossible requests
# --------------------------------------------------------------------------------------------

ABSENT_TEXTS = {
    "Find a Vietnamese restaurant rated 5 stars": ABSENT_COMBINATIONS[0],
    "Find a Greek cafe": ABSENT_COMBINATIONS[1],
    "An expensive bakery please": ABSENT_COMBINATIONS[2],
    "Find a Mexican restaurant that takes mobile payment": ABSENT_COMBINATIONS[3],
    "Find a Japanese restaurant with parking": ABSENT_COMBINATIONS[4],
    "I want a cheap hotel rated at least 4.5 stars": ABSENT_COMBINATIONS[5],
    "Is there a museum with parking?": ABSENT_COMBINATIONS[6],
}


def test_absent_texts_cover_every_absent_combination() -> None:
    assert list(ABSENT_TEXTS.values()) == list(ABSENT_COMBINATIONS)


@pytest.mark.parametrize(("text", "combination"), ABSENT_TEXTS.items(), ids=list(ABSENT_TEXTS))
def test_unsatisfiable_requests_are_answered_honestly(
    assistant: NavigationAssistant, text: str, combination: VenueRequest
) -> None:
    assert assistant.understand(text).venue == combination
    response = assistant.answer(text)
    asked = combination.to_dict()
    kept = {k: v for k, v in asked.items() if k in ("category", "cuisine")}
    assert all(satisfies(poi, kept) for poi in response.data)  # never relaxed
    assert not any(satisfies(poi, asked) for poi in response.data)
    if response.data:
        assert "couldn't find an exact match" in response.text
        assert response.data[0]["name"] in response.text
    else:
        assert "couldn't find any" in response.text
    assert response.text.rstrip().endswith("?")


def test_relaxation_says_what_was_given_up(assistant: NavigationAssistant) -> None:
    text = assistant.answer("Find a Mexican restaurant that takes mobile payment").text
    assert "Mexican restaurants that accept mobile payment" in text
    assert "ignored the payment method" in text
    rating = assistant.answer("Find a Vietnamese restaurant rated 5 stars")
    assert "lowered the minimum rating to 4.5 stars" in rating.text
    assert {poi["rating"] for poi in rating.data} == {4.5}


def test_greek_cafe_has_no_closest_match(assistant: NavigationAssistant) -> None:
    response = assistant.answer("Find a Greek cafe")
    assert response.data == []
    assert "Sorry, I couldn't find any Greek cafes" in response.text


def test_relaxation_order() -> None:
    steps = relaxations(
        VenueRequest("cafe", min_rating=2.0, price="low", payment="cash", parking=True)
    )
    given_up = [relaxed for _, relaxed in steps]
    assert given_up[:3] == [["payment"], ["payment", "parking"], ["payment", "parking", "price"]]
    assert [r.min_rating for r, _ in steps[3:]] == [1.5, 1.0, None]
    assert steps[-1][0] == VenueRequest("cafe")


# --------------------------------------------------------------------------------------------
# Style: rudeness and long messages
# --------------------------------------------------------------------------------------------


def test_profanity_gets_a_de_escalating_reply_and_no_search(
    assistant: NavigationAssistant,
) -> None:
    understood = assistant.understand("What the fuck, find me a bar")
    assert understood.abusive and understood.venue is None
    response = assistant.answer("What the fuck, find me a bar")
    assert response.data == []
    assert "sorry" in response.text.lower() and "?" in response.text


def test_insult_in_its_own_clause_is_redacted(assistant: NavigationAssistant) -> None:
    understood = assistant.understand("Listen, you idiot, I need a cheap bakery")
    assert understood.rude and not understood.abusive
    assert understood.venue == VenueRequest("bakery", price="low")
    response = assistant.answer("Listen, you idiot, I need a cheap bakery")
    assert response.text.startswith("I'm sorry for the frustration")
    assert response.data


def test_insult_inside_the_request_loses_it(assistant: NavigationAssistant) -> None:
    response = assistant.answer("Find me a damn Italian restaurant now")
    assert response.data == []
    assert "what kind of place" in response.text


PADDING = (
    " Hello there, I hope you are having a lovely day. My family and I have been driving for"
    " hours and we are getting really tired. You always know the best places, my friend!"
)


def test_a_longer_message_gets_the_same_answer(assistant: NavigationAssistant) -> None:
    request = "Find an Italian restaurant with parking."
    answers = [assistant.answer(request + PADDING * k) for k in range(4)]
    assert all(answer == answers[0] for answer in answers), answers
    assert answers[0].data and answers[0].data[0]["name"] in answers[0].text


def test_answer_length_does_not_grow_with_the_message_length(
    assistant: NavigationAssistant,
) -> None:
    """Over 100 requests, each said twice in different words: the longer wording does not
    get the longer answer (the answer's length follows what was asked, not how)."""
    space = load_feature_space(Path(realiser.__file__).parent / "features.yaml")
    rng = random.Random(3)
    longer_message, longer_answer = [], []
    for i in range(100):
        values = space.candidate({**space.random_values(rng), "word_perturbation": "none"}).values
        first, second = (realise(values, random.Random(2 * i + k)) for k in (0, 1))
        longer_message.append(len(first.split()) - len(second.split()))
        answers = [assistant.answer(text).text.split() for text in (first, second)]
        longer_answer.append(len(answers[0]) - len(answers[1]))
    assert abs(statistics.correlation(longer_message, longer_answer)) < 0.2


# --------------------------------------------------------------------------------------------
# Determinism, threads, entry points
# --------------------------------------------------------------------------------------------

MIXED = [text for text, _ in PLAIN[:8]] + [
    "I'm starving, where can I eat?",
    "blorf snazzle wibble",
    "Find a Greek cafe",
    "Listen, you idiot, I need a cheap bakery",
]


def test_answers_are_deterministic(assistant: NavigationAssistant, db: POIDatabase) -> None:
    fresh = NavigationAssistant(db=db, embedder=get_embedder("minilm"))
    for text in MIXED:
        assert assistant.answer(text) == assistant.answer(text) == fresh.answer(text)


def test_concurrent_calls_match_sequential_ones(assistant: NavigationAssistant) -> None:
    expected = [assistant(text) for text in MIXED]
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(assistant, MIXED * 3)) == expected * 3


def test_call_is_answer(assistant: NavigationAssistant) -> None:
    assert assistant("Find a cheap Indian restaurant") == assistant.answer(
        "Find a cheap Indian restaurant"
    )


def test_factory_shares_one_instance_per_source() -> None:
    assert navi_assistant("generated") is navi_assistant("generated")
    assert navi_assistant("generated").pois == "generated"


def test_instance_works_as_a_python_sut(db: POIDatabase) -> None:
    assistant = NavigationAssistant(db=db, embedder="hashing", max_pois=2)
    response = assistant("Find a cheap Indian restaurant")
    assert isinstance(response, Response) and len(response.data) == 2
    assert response == assistant.answer("Find a cheap Indian restaurant")


def test_invalid_max_pois() -> None:
    with pytest.raises(ValueError, match="max_pois"):
        NavigationAssistant(max_pois=0)


def test_an_unknown_embedder_is_named_before_any_model_loads() -> None:
    with pytest.raises(ValueError, match="embedder: unknown embedder 'no-such'"):
        NavigationAssistant(embedder="no-such")


class CountingEmbedder:
    """The hashing embedder, counting the texts of each call."""

    def __init__(self) -> None:
        self.inner, self.calls, self.dim = get_embedder("hashing"), [], 512

    def embed(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed(texts)


async def test_warm_embeds_a_generation_in_one_call(db: POIDatabase) -> None:
    embedder = CountingEmbedder()
    assistant = NavigationAssistant(db=db, embedder=embedder)
    cold = NavigationAssistant(db=db, embedder=get_embedder("hashing"))
    assistant.prepare()  # the prototypes
    embedder.calls.clear()
    await assistant.warm(MIXED)
    [batch] = embedder.calls  # the texts without a venue word, in one call
    assert {"blorf snazzle wibble", "i'm starving where can i eat"} <= set(batch)
    assert not any("greek" in text for text in batch)  # the lexicon reads it: no embedding
    answers = [assistant.answer(text) for text in MIXED]
    assert len(embedder.calls) == 1  # every answer found its vector computed
    assert answers == [cold.answer(text) for text in MIXED]


def test_fallback_embeddings_kept_are_bounded(db: POIDatabase, monkeypatch) -> None:
    """A long run embeds ever new fallback texts; the oldest are forgotten, answers stay."""
    monkeypatch.setattr("stellar.usecases.navi.assistant.KEPT_VECTORS", 3)
    bounded = NavigationAssistant(db, embedder="hashing")
    texts = [f"somewhere nice number {i} please" for i in range(6)]
    bounded.embed_fallbacks(texts[:4])
    assert len(bounded._vectors) == 3
    for text in texts:
        assert bounded.understand(text) == NavigationAssistant(db, embedder="hashing").understand(
            text
        )
    assert len(bounded._vectors) == 3
