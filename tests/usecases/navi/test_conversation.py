"""Conversations with the navigation assistant (stellar.usecases.navi.conversation), on the
shipped generated city; the HTTP server's sessions: test_conversation_server.py."""

from __future__ import annotations

from typing import Any

import pytest
from fake_model import FakeModel

from stellar.dialogue.session import Session, holds_conversations, open_session
from stellar.records import Response
from stellar.text.embeddings import get_embedder
from stellar.usecases.navi.assistant import NavigationAssistant
from stellar.usecases.navi.conversation import NaviConversation
from stellar.usecases.navi.replies import ABUSIVE_REPLY, CLARIFY, RUDE_OPENER
from stellar.usecases.navi.sources import default_database
from stellar.usecases.navi.store import POIDatabase

POI_KEYS = {"name", "category", "cuisine", "rating", "price", "payment", "parking", "address"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> POIDatabase:
    return default_database(tmp_path_factory.mktemp("navi") / "pois.sqlite", seed=0)


@pytest.fixture(scope="module")
def assistant(db: POIDatabase) -> NavigationAssistant:
    """The assistant with the real all-MiniLM-L6-v2 embedder (offline)."""
    return NavigationAssistant(db=db, embedder=get_embedder("minilm"))


def talk(assistant: NavigationAssistant, *texts: str) -> tuple[NaviConversation, list[Response]]:
    """A new conversation and its replies to ``texts``."""
    conversation = NaviConversation(assistant)
    return conversation, [conversation.reply(text) for text in texts]


def names(response: Response) -> list[str]:
    return [poi["name"] for poi in response.data]


def asked(conversation: NaviConversation) -> dict[str, Any]:
    request = conversation.state.request
    return {} if request is None else request.to_dict()


def satisfies(poi: dict[str, Any], constraints: dict[str, Any]) -> bool:
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
# The session protocol
# --------------------------------------------------------------------------------------------


async def test_open_returns_a_session(assistant: NavigationAssistant) -> None:
    assert holds_conversations(assistant)
    session = await open_session(assistant)
    assert isinstance(session, Session) and isinstance(session, NaviConversation)
    first = await session.send("Find an Italian restaurant")
    second = await session.send("the second one")
    assert names(second)[0] == names(first)[1] and names(first)[1] in second.text
    await session.close()
    with pytest.raises(RuntimeError, match="closed"):
        await session.send("hello")
    assert await assistant.open() is not await assistant.open()


@pytest.mark.parametrize(
    "text",
    [
        "Find me an Italian restaurant rated at least 4 stars with parking",
        "Is there a cheap bakery nearby?",
        "Take me to the nearest hospital",
        "I'm starving, where can I eat?",
        "blorf snazzle wibble",
        "Find a pub, you stupid machine. One that takes contactless payment",
    ],
)
def test_a_first_turn_is_the_single_turn_answer(assistant: NavigationAssistant, text: str) -> None:
    _, (reply,) = talk(assistant, text)
    assert reply == assistant.answer(text)


def test_query_stays_single_turn(assistant: NavigationAssistant) -> None:
    first = assistant.answer("Find an Italian restaurant")
    assert assistant.answer("the second one") == Response(text=CLARIFY, data=[])
    assert assistant.answer("Find an Italian restaurant") == first


def test_the_same_texts_give_the_same_conversation(assistant: NavigationAssistant) -> None:
    texts = [
        "I need a cheap restaurant",
        "no, I meant Italian",
        "and with parking?",
        "no, another one",
        "the last one",
        "how are you today?",
        "sounds good",
    ]
    _, once = talk(assistant, *texts)
    _, again = talk(assistant, *texts)
    assert once == again
    assert all(set(poi) == POI_KEYS for reply in once for poi in reply.data)


# --------------------------------------------------------------------------------------------
# Requests: new goals, added, corrected and withdrawn constraints
# --------------------------------------------------------------------------------------------


def test_added_constraints_are_merged(assistant: NavigationAssistant) -> None:
    conversation, replies = talk(
        assistant,
        "Find an Italian restaurant",
        "and it should take cash",
        "and with parking?",
        "only ones with 4 stars",
    )
    wanted = {"category": "restaurant", "cuisine": "italian"}
    for reply, added in zip(
        replies,
        [{}, {"payment": "cash"}, {"parking": True}, {"min_rating": 4.0}],
        strict=True,
    ):
        wanted |= added
        assert reply.data and all(satisfies(poi, wanted) for poi in reply.data), reply.text
        assert reply.data[0]["name"] in reply.text
    assert asked(conversation) == wanted


@pytest.mark.parametrize(
    ("correction", "slot", "value"),
    [
        ("actually, make it expensive", "price", "high"),
        ("no, I meant Italian", "cuisine", "italian"),
        ("not Thai, Indian", "cuisine", "indian"),
        ("not cheap, expensive", "price", "high"),
        ("hmm, one that takes credit cards instead", "payment", "credit card"),
        ("no wait, 3 stars is enough", "min_rating", 3.0),
    ],
)
def test_a_correction_replaces_the_value(
    assistant: NavigationAssistant, correction: str, slot: str, value: Any
) -> None:
    start = "Find a cheap Thai restaurant rated 4 stars that takes cash"
    conversation, (_, reply) = talk(assistant, start, correction)
    wanted = {"category": "restaurant", "cuisine": "thai", "price": "low", "min_rating": 4.0}
    wanted |= {"payment": "cash", slot: value}
    assert asked(conversation) == wanted
    assert reply.data and satisfies(reply.data[0], {slot: value})


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("parking doesn't matter anymore", "parking"),
        ("no parking needed", "parking"),
        ("forget about the price", "price"),
        ("it doesn't have to be cheap", "price"),
        ("any rating is fine", "min_rating"),
        ("the cuisine doesn't matter", "cuisine"),
        ("I don't want Thai anymore", "cuisine"),
        ("I don't care how I pay", "payment"),
    ],
)
def test_a_withdrawn_constraint_is_removed(
    assistant: NavigationAssistant, text: str, slot: str
) -> None:
    start = "Find a cheap Thai restaurant with parking rated 4 stars that takes cash"
    conversation, (_, reply) = talk(assistant, start, text)
    before = {"category": "restaurant", "cuisine": "thai", "price": "low", "min_rating": 4.0}
    before |= {"parking": True, "payment": "cash"}
    assert asked(conversation) == {k: v for k, v in before.items() if k != slot}
    assert reply.data and all(satisfies(poi, asked(conversation)) for poi in reply.data)


def test_a_bare_no_negates_nothing(assistant: NavigationAssistant) -> None:
    conversation, (_, cheaper) = talk(assistant, "Find a Thai restaurant", "no, cheaper")
    assert asked(conversation) == {"category": "restaurant", "cuisine": "thai", "price": "low"}
    assert all(poi["price"] == "low" for poi in cheaper.data)


def test_a_cuisine_alone_keeps_a_cafe_a_cafe(assistant: NavigationAssistant) -> None:
    conversation, (_, italian, plain) = talk(
        assistant, "Find a cafe", "what about Italian?", "it doesn't have to be Italian"
    )
    assert all(satisfies(poi, {"category": "cafe", "cuisine": "italian"}) for poi in italian.data)
    assert asked(conversation) == {"category": "cafe"}
    assert all(poi["category"] == "cafe" for poi in plain.data)


def test_constraints_wait_for_the_kind_of_place(assistant: NavigationAssistant) -> None:
    conversation, (clarify, reply) = talk(assistant, "somewhere cheap with parking", "a restaurant")
    assert clarify == Response(text=CLARIFY, data=[])
    assert asked(conversation) == {"category": "restaurant", "price": "low", "parking": True}
    assert all(satisfies(poi, asked(conversation)) for poi in reply.data)


def test_a_detour_and_back_to_the_earlier_goal(assistant: NavigationAssistant) -> None:
    conversation, (hotel, food, back, again) = talk(
        assistant,
        "Find a hotel with parking",
        "I'm hungry",
        "back to the hotels",
        "back to the restaurants",
    )
    assert all(poi["category"] == "restaurant" for poi in food.data)
    assert food.text.startswith("It sounds like you are looking for a restaurant.")
    assert back == hotel and asked(conversation) == {"category": "restaurant"}
    assert names(again) == names(food)


def test_another_category_starts_a_new_goal(assistant: NavigationAssistant) -> None:
    conversation, (_, hospital, _) = talk(
        assistant,
        "Find a cheap bar with parking",
        "Take me to the nearest hospital",
        "let's go back to what we had before",
    )
    assert all(poi["category"] == "hospital" for poi in hospital.data)
    assert asked(conversation) == {"category": "bar", "price": "low", "parking": True}


def test_an_earlier_kind_of_place_comes_back_with_its_wishes(
    assistant: NavigationAssistant,
) -> None:
    conversation, (bar, _, back) = talk(
        assistant, "Find a cheap bar", "Show me a bakery", "Never mind that. The bar, please."
    )
    assert asked(conversation) == {"category": "bar", "price": "low"}
    assert back == bar


def test_a_refused_kind_of_place_forgets_the_goal(assistant: NavigationAssistant) -> None:
    conversation, (_, reply) = talk(
        assistant, "Find an Italian restaurant", "I don't want a restaurant anymore"
    )
    assert reply.data == [] and reply.text.endswith("?")
    assert conversation.state.request is None


# --------------------------------------------------------------------------------------------
# The venues offered: references, confirmation, rejection, questions
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "index"),
    [
        ("the second one", 1),
        ("the first", 0),
        ("number 3", 2),
        ("the last one", 2),
        ("I'll take option 2", 1),
        ("the third one please", 2),
    ],
)
def test_an_ordinal_chooses_from_the_last_list(
    assistant: NavigationAssistant, text: str, index: int
) -> None:
    conversation, (offered, chosen) = talk(assistant, "Find a cheap restaurant", text)
    assert len(offered.data) == 3
    assert chosen.data[0] == offered.data[index]
    assert sorted(names(chosen)) == sorted(names(offered))
    assert offered.data[index]["name"] in chosen.text and chosen.text.endswith("?")
    assert conversation.state.proposed is not None
    assert conversation.state.proposed[0].name == offered.data[index]["name"]


def test_a_reference_beyond_the_list_asks_again(assistant: NavigationAssistant) -> None:
    _, (offered, reply) = talk(assistant, "Find a cheap restaurant", "the fifth one")
    assert reply.data == offered.data and reply.text.endswith("?")
    assert all(name in reply.text for name in names(offered))


def test_a_venue_named_from_the_list_is_chosen(assistant: NavigationAssistant) -> None:
    conversation = NaviConversation(assistant)
    offered = conversation.reply("Find a hotel")
    name = offered.data[2]["name"]
    reply = conversation.reply(f"{name} please")
    assert reply.data[0] == offered.data[2] and name in reply.text


@pytest.mark.parametrize(
    "text", ["take me there", "let's go", "yes", "sounds good", "let's do that"]
)
def test_navigating_to_the_proposed_venue(assistant: NavigationAssistant, text: str) -> None:
    _, (offered, _, reply) = talk(assistant, "Find a cafe", "the second one", text)
    assert reply.data == [offered.data[1]]
    assert reply.text.startswith(f"Starting navigation to {offered.data[1]['name']}")


def test_that_place_and_details_mean_the_proposed_venue(assistant: NavigationAssistant) -> None:
    _, (offered, that, more, go) = talk(
        assistant, "Find a museum", "that place", "tell me more about it", "let's go"
    )
    first = offered.data[0]
    assert that.data[0] == first and first["name"] in that.text
    assert more.data == [first] and "accepts" in more.text and first["name"] in more.text
    assert go.data == [first] and first["name"] in go.text


def test_the_navigation_starts_at_a_chosen_reference(assistant: NavigationAssistant) -> None:
    _, (offered, reply) = talk(assistant, "Find a bakery", "let's go to the third one")
    assert reply.data == [offered.data[2]] and reply.text.startswith("Starting navigation")


def test_rejection_offers_the_next_then_searches_again(assistant: NavigationAssistant) -> None:
    conversation, replies = talk(
        assistant, "Find a cafe", "no, another one", "something else", "no, a different one"
    )
    offered, second, third, fresh = replies
    assert second.data == offered.data[1:] and offered.data[1]["name"] in second.text
    assert third.data == offered.data[2:] and offered.data[2]["name"] in third.text
    assert fresh.data and not set(names(fresh)) & set(names(offered))
    assert all(poi["category"] == "cafe" for poi in fresh.data)
    assert asked(conversation) == {"category": "cafe"}


@pytest.mark.parametrize(
    ("question", "attribute", "fits"),
    [
        ("does it take cash?", "payment", lambda poi: "cash" in poi["payment"]),
        ("does it have parking?", "parking", lambda poi: poi["parking"] is True),
        ("is it cheap?", "price", lambda poi: poi["price"] == "low"),
    ],
)
def test_a_question_about_the_proposed_venue(
    assistant: NavigationAssistant, question: str, attribute: str, fits: Any
) -> None:
    conversation, (offered, reply) = talk(assistant, "Find an Italian restaurant", question)
    first = offered.data[0]
    assert reply.data == [first]
    assert reply.text.startswith("Yes" if fits(first) else "No")
    assert asked(conversation) == {"category": "restaurant", "cuisine": "italian"}


@pytest.mark.parametrize("text", ["how are you today?", "hmm", "what's the weather like?"])
def test_small_talk_keeps_the_goal(assistant: NavigationAssistant, text: str) -> None:
    conversation, (offered, reply, after) = talk(
        assistant, "Find a cheap Italian restaurant", text, "the second one"
    )
    assert reply.data == offered.data and offered.data[0]["name"] in reply.text
    assert reply.text.endswith("?")
    assert asked(conversation) == {"category": "restaurant", "cuisine": "italian", "price": "low"}
    assert after.data[0] == offered.data[1]


def test_a_goodbye_keeps_the_route(assistant: NavigationAssistant) -> None:
    _, (offered, _, bye) = talk(assistant, "Find a bar", "yes", "thanks, that's all")
    assert bye.data == [offered.data[0]] and "?" not in bye.text


def test_nothing_to_refer_to_asks_what_is_wanted(assistant: NavigationAssistant) -> None:
    _, replies = talk(assistant, "the second one", "yes", "take me there")
    assert all(reply == Response(text=CLARIFY, data=[]) for reply in replies)


# --------------------------------------------------------------------------------------------
# Rude turns and LLM mode
# --------------------------------------------------------------------------------------------


def test_abuse_is_refused_and_the_state_kept(assistant: NavigationAssistant) -> None:
    conversation, (offered, abusive, rude) = talk(
        assistant, "Find a cheap hotel", "what the fuck is this", "you idiot, the second one"
    )
    assert abusive == Response(text=ABUSIVE_REPLY, data=[])
    assert rude.text.startswith(RUDE_OPENER) and rude.data[0] == offered.data[1]
    assert asked(conversation) == {"category": "hotel", "price": "low"}


async def test_llm_mode_writes_the_search_answers(db: POIDatabase) -> None:
    model = FakeModel(["Model answer one.", "Model answer two."], name="fake:sut")
    assistant = NavigationAssistant(db=db, embedder=get_embedder("minilm"), llm=model)
    session = await assistant.open()
    first = await session.send("Find a Thai restaurant")
    narrowed = await session.send("and with parking?")
    chosen = await session.send("the second one")
    assert (first.text, narrowed.text) == ("Model answer one.", "Model answer two.")
    assert "parking" in model.calls[1]["messages"][-1]["content"]
    assert all(poi["parking"] is True for poi in narrowed.data)
    assert chosen.data[0] == narrowed.data[1] and chosen.text.startswith("Good choice")
    assert len(model.calls) == 2
