"""Tests for the navigation use case's fitness (stellar.usecases.navi.fitness)."""

import asyncio

import pytest

from stellar.features import Candidate
from stellar.records import Response, TestInput
from stellar.usecases.navi.fitness import (
    F1_WEIGHTS,
    WRONG_KIND_CAP,
    JudgedVenue,
    NaviFitness,
    content_fitness,
    directness,
    first_named,
    judged_venue,
    poi_score,
    response_dimensions,
    wrong_kind,
)
from stellar.usecases.navi.poi import POI
from stellar.usecases.navi.request import VenueRequest
from stellar.usecases.navi.store import POIDatabase


def poi(**kw):
    base = {
        "name": "Golden Dragon",
        "category": "restaurant",
        "cuisine": "chinese",
        "rating": 4.5,
        "price": "medium",
        "payment": ["cash", "credit card"],
        "parking": True,
        "address": "Main St 1",
    }
    return {**base, **kw}


def test_venue_has_weight_two():
    request = VenueRequest("restaurant", cuisine="chinese")
    assert poi_score(request, poi(category="bar", cuisine="chinese")) == pytest.approx(1 / 3)
    assert poi_score(request, poi(cuisine="thai")) == pytest.approx(2 / 3)
    assert poi_score(request, poi()) == 1.0


def test_cuisine_is_categorical():
    request = VenueRequest("restaurant", cuisine="thai")
    assert poi_score(request, poi(cuisine="thai")) == 1.0
    assert poi_score(request, poi(cuisine="vietnamese")) == pytest.approx(2 / 3)
    assert poi_score(request, poi(cuisine=None)) == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("rating", "expected"),
    [
        (5.0, 1.0),
        (4.5, 1.0),  # at or above the minimum: satisfied
        (4.0, 1 - (0.5 / 1.5) / 3),  # half a star short: small penalty
        (3.5, 1 - (1.0 / 1.5) / 3),  # a full star short: larger penalty
        (2.0, 2 / 3),
        (None, 2 / 3),  # far below or unknown: the constraint counts 0
    ],
)
def test_rating_is_ordinal_and_penalty_grows_with_violation(rating, expected):
    request = VenueRequest("restaurant", min_rating=4.5)
    assert poi_score(request, poi(rating=rating)) == pytest.approx(expected)


def test_rating_penalty_is_monotonic():
    request = VenueRequest("restaurant", min_rating=5.0)
    scores = [poi_score(request, poi(rating=r)) for r in (5.0, 4.5, 4.0, 3.5, 3.0)]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]


@pytest.mark.parametrize(
    ("have", "expected"), [("low", 1.0), ("medium", 1 - 0.5 / 3), ("high", 2 / 3), (None, 2 / 3)]
)
def test_price_levels_match_by_distance(have, expected):
    assert poi_score(VenueRequest("restaurant", price="low"), poi(price=have)) == (
        pytest.approx(expected)
    )


@pytest.mark.parametrize(
    ("payment", "expected"), [(["cash", "credit card"], 1.0), (["cash"], 2 / 3), ([], 2 / 3)]
)
def test_payment_must_be_accepted(payment, expected):
    request = VenueRequest("restaurant", payment="credit card")
    assert poi_score(request, poi(payment=payment)) == pytest.approx(expected)


@pytest.mark.parametrize(("parking", "expected"), [(True, 1.0), (False, 2 / 3), (None, 2 / 3)])
def test_parking_reads_the_returned_poi(parking, expected):
    request = VenueRequest("hotel", parking=True)
    assert poi_score(request, poi(category="hotel", parking=parking)) == pytest.approx(expected)


def test_content_fitness_cases():
    request = VenueRequest("restaurant", cuisine="thai")
    assert content_fitness(request, "", [], satisfiable=False) == 1.0  # honest "nothing here"
    assert content_fitness(request, "", [], satisfiable=True) == 0.0  # missed existing POIs
    assert content_fitness(request, "", [poi(cuisine="thai")], True) == 1.0
    assert content_fitness(request, "", [poi(category="bar", cuisine="greek")], True) == 0.0


SUSHI = VenueRequest("restaurant", cuisine="japanese")
FRENCH, ITALIAN, JAPANESE = (
    poi(name="Chez Paul", cuisine="french"),
    poi(name="Trattoria Roma", cuisine="italian"),
    poi(name="Sakura", cuisine="japanese"),
)


def test_a_wrong_first_venue_fails_though_a_later_one_is_right():
    answer = "The nearest is Chez Paul. Other options: Trattoria Roma and Sakura. Shall I go?"
    score = content_fitness(SUSHI, answer, [FRENCH, ITALIAN, JAPANESE], satisfiable=True)
    assert score < 0.75
    unnamed = content_fitness(SUSHI, "Here you go.", [FRENCH, ITALIAN, JAPANESE], True)
    assert unnamed < 0.75  # named nowhere: the first returned is judged


def test_the_venue_the_answer_names_first_is_judged():
    pois = [FRENCH, JAPANESE, ITALIAN]
    answer = "Try Sakura, 0.4 km away; Chez Paul is further. Shall I navigate to Sakura?"
    assert judged_venue(answer, pois) == JudgedVenue(1, "Sakura", "named first in the answer")
    assert content_fitness(SUSHI, answer, pois, satisfiable=True) == 1.0
    wrong_first = "Chez Paul is closest, or Sakura. Which one?"
    assert content_fitness(SUSHI, wrong_first, [JAPANESE, FRENCH], True) < 0.75


def test_names_are_matched_as_whole_phrases_and_the_longer_wins_at_one_place():
    pois = [poi(name="Roma"), poi(name="Trattoria Roma"), poi(name="Bar")]
    assert first_named("Trattoria Roma is open.", pois) == 1
    assert first_named("Barcelona is far; Roma is near.", pois) == 0  # not "Bar" in a word
    assert first_named("ROMA, then Bar.", pois) == 0  # any case
    assert first_named("Nothing found.", pois) is None


def test_a_correct_first_venue_passes():
    answer = "Sakura is 0.4 km away. Shall I go?"
    assert content_fitness(SUSHI, answer, [JAPANESE, FRENCH], satisfiable=True) == 1.0


def test_a_wrong_cuisine_fails_however_many_other_wishes_it_meets():
    american = VenueRequest(
        "restaurant", cuisine="american", price="medium", min_rating=4.0, parking=True
    )
    middle_eastern = poi(name="Beirut Grill", cuisine="middle eastern")
    assert poi_score(american, middle_eastern) == pytest.approx(5 / 6)  # the mean alone passes
    assert content_fitness(american, "", [middle_eastern], True) == WRONG_KIND_CAP < 0.75
    assert wrong_kind(american, middle_eastern) == ["cuisine"]
    assert wrong_kind(american, poi(cuisine=None)) == ["cuisine"]  # not shown to be American
    assert wrong_kind(VenueRequest("restaurant"), poi(cuisine="thai")) == []  # none asked
    assert wrong_kind(american, poi(category="bar", cuisine="american")) == ["category"]


def test_the_judged_venue_is_in_the_details(tmp_path):
    fitness = NaviFitness(database=_db(tmp_path))
    values = dict(CHINESE_RESTAURANT)
    pois = [poi(name="Chez Paul", cuisine="french"), poi()]
    named = evaluate(fitness, values, "Golden Dragon, or Chez Paul. Shall I go?", pois)
    assert named.details["judged_venue"] == {
        "index": 1,
        "name": "Golden Dragon",
        "chosen": "named first in the answer",
    }
    assert named.details["wrong_kind"] == [] and named.scores["content"] == 1.0
    unnamed = evaluate(fitness, values, "I found two places. Shall I go?", pois)
    assert unnamed.details["judged_venue"]["chosen"] == "first returned"
    assert unnamed.details["wrong_kind"] == ["cuisine"] and unnamed.scores["content"] == 0.5


def test_response_dimensions():
    request = VenueRequest("restaurant")
    good = "I found Golden Dragon, a Chinese restaurant rated 4.5. Shall I navigate there?"
    assert response_dimensions(request, good, [poi()]) == {"R": 1.0, "D": 1.0, "P": 1.0}
    clarify = "Sorry, I did not understand. What kind of place are you looking for?"
    assert response_dimensions(request, clarify, []) == {"R": 0.5, "D": 1.0, "P": 1.0}
    lecture = "Please be respectful. I am here to help you."
    assert response_dimensions(request, lecture, []) == {"R": 0.0, "D": 0.0, "P": 0.0}
    padded = "Great question! Golden Dragon is close. Let me know if you need more."
    dims = response_dimensions(request, padded, [poi()])
    assert dims == {"R": 1.0, "D": 0.0, "P": 0.5}


USEFUL_LONG = (
    "I found 12 Chinese restaurants with parking that take cash. The nearest is Golden Dragon "
    "(4.5 stars, medium price, 0.4 km away, Main St 1). Other options: Jade Garden (4 stars, "
    "1.1 km away) and Lotus House (4.5 stars, 1.3 km away). Golden Dragon is open until 11 pm. "
    "Shall I start navigation to Golden Dragon?"
)
CHATTY_SHORT = "Thanks so much for asking! I'm always happy to help. Golden Dragon. Shall I go?"


def test_directness_reads_content_not_length():
    request = VenueRequest("restaurant", cuisine="chinese")
    pois = [poi(), poi(name="Jade Garden"), poi(name="Lotus House")]
    assert len(USEFUL_LONG.split()) > 2 * len(CHATTY_SHORT.split())
    useful = response_dimensions(request, USEFUL_LONG, pois)
    chatty = response_dimensions(request, CHATTY_SHORT, pois)
    assert useful["D"] == 1.0 and chatty["D"] < useful["D"]
    assert sum(F1_WEIGHTS[k] * v for k, v in chatty.items()) < sum(
        F1_WEIGHTS[k] * v for k, v in useful.items()
    )


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("I found 3 restaurants. The nearest is Golden Dragon. Shall I start navigation?", 1.0),
        ("Thanks for the details! I found 3 restaurants: Golden Dragon is nearest. Go?", 0.5),
        ("I'm sorry for the frustration. Thanks for your patience! Golden Dragon. Go?", 0.0),
        ("I found some great options for you. Shall I start navigation?", 0.5),  # none named
        ("Hello! I hope you are having a lovely day. Have a safe trip!", 0.0),
        (" ".join(["Golden Dragon is 0.4 km away."] * 20), 0.5),  # useful, but too long
    ],
)
def test_directness_cases(answer, expected):
    assert directness(answer, [poi()]) == expected


def _db(tmp_path):
    pois = [
        POI(
            id=1,
            name="Golden Dragon",
            category="restaurant",
            cuisine="chinese",
            rating=4.5,
            price="medium",
            payment=("cash",),
            parking=True,
            address="Main St 1",
            lat=0.0,
            lon=0.0,
        )
    ]
    return POIDatabase.create(tmp_path / "p.sqlite", pois)


CHINESE_RESTAURANT = {
    "category": "restaurant",
    "cuisine": "chinese",
    "rating": "none",
    "price": "none",
    "payment": "none",
    "parking": "none",
}


def evaluate(fitness, values, answer, pois):
    candidate = Candidate(values=values, vector=())
    return asyncio.run(fitness.evaluate(candidate, TestInput("x"), Response(answer, pois)))


def test_navi_fitness_scores_and_excludes_impossible_requests(tmp_path):
    fitness = NaviFitness(database=_db(tmp_path))
    values = dict(CHINESE_RESTAURANT)
    ok = evaluate(fitness, values, "Golden Dragon is a great restaurant. Shall I go?", [poi()])
    assert ok.scores == {"response": 1.0, "content": 1.0} and not ok.excluded
    missed = evaluate(fitness, values, "What kind of place do you need?", [])
    assert missed.scores["content"] == 0.0 and missed.scores["response"] == pytest.approx(0.725)
    impossible = {**values, "cuisine": "greek"}
    honest = evaluate(fitness, impossible, "There is no Greek restaurant near you.", [])
    assert honest.excluded and honest.scores["content"] == 1.0


@pytest.mark.parametrize(
    "answer",
    [
        "Try Joe\u2019s Diner, or Sakura.",
        "Try Joe's  Diner, or Sakura.",
        "Try Joe's\nDiner, or Sakura.",
    ],
)
def test_a_name_is_found_whatever_its_apostrophe_and_spacing(answer):
    pois = [{"name": "Sakura"}, {"name": "Joe's Diner"}]
    assert first_named(answer, pois) == 1
