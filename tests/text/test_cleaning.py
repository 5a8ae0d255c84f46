"""Tests for stellar.text.cleaning."""

from __future__ import annotations

import pytest

from stellar.text.cleaning import clean_generation, is_refusal

UTTERANCE = "Find me a cheap Italian restaurant with parking."


@pytest.mark.parametrize(
    "raw",
    [
        UTTERANCE,
        f"  {UTTERANCE}\n",
        f'"{UTTERANCE}"',
        f"'{UTTERANCE}'",
        f"“{UTTERANCE}”",
        f"‘{UTTERANCE}’",
        f"User: {UTTERANCE}",
        f'Utterance: "{UTTERANCE}"',
        f"**Driver request:** {UTTERANCE}",
        f"1. {UTTERANCE}",
        f"1) {UTTERANCE}",
        f"- {UTTERANCE}",
        f"* {UTTERANCE}",
        f"Here is the request: {UTTERANCE}",
        f"Here is the request:\n{UTTERANCE}",
        f'Sure! Here\'s a slangy, polite request:\n\n"{UTTERANCE}"',
        f"Sure!\n{UTTERANCE}",
        f"Certainly, I can help with that.\n\n{UTTERANCE}",
        f"Here you go:\n\n{UTTERANCE}",
        f"{UTTERANCE}\n\nThis request uses neutral slang and names the category explicitly.",
        f"{UTTERANCE}\n(Note: the price is expressed as 'cheap'.)",
        f"{UTTERANCE} (Note: polite style)",
        f'"{UTTERANCE}" This request is neutral.',
        f"```\n{UTTERANCE}\n```",
        f"```text\n**{UTTERANCE}**\n```",
        f"1. {UTTERANCE}\n2. Take me to a bar.\n3. Where is a hotel?",
        f"Here are three options:\n\n1. {UTTERANCE}\n2. Take me to a bar.",
    ],
)
def test_wrapping_is_removed(raw: str) -> None:
    assert clean_generation(raw) == UTTERANCE


@pytest.mark.parametrize(
    "text",
    [
        "Okay, find me a cafe.",
        "Sure, take me to the nearest hospital.",
        "Sorry, can you find me a cafe?",
        "'Sup, where's the pub?",
        "Here's what I need: a cheap hotel with parking.",
        "Restaurant. Italian. 4.5+ stars. Now.",
        "Find a bar that takes cash - and hurry up!",
        "5 stars only, take me to a hotel.",
    ],
)
def test_genuine_utterances_are_kept(text: str) -> None:
    assert clean_generation(text) == text


def test_lines_of_one_utterance_are_joined() -> None:
    assert clean_generation("I'm starving.\nFind me a restaurant.") == (
        "I'm starving. Find me a restaurant."
    )


@pytest.mark.parametrize("raw", ["", "   ", '""', "```\n```", "**  **"])
def test_nothing_left(raw: str) -> None:
    assert clean_generation(raw) == ""


@pytest.mark.parametrize(
    "text",
    [
        "I'm sorry, but I can't help with that.",
        "I’m sorry, but I can’t help with that request.",
        "I'm sorry, I cannot fulfill this request.",
        "Sorry, I can't assist with generating that.",
        "I cannot help with this.",
        "I can't assist with that request.",
        "I'm unable to help with that.",
        "I am not able to provide that.",
        "I won't generate that content.",
        "I apologize, but I cannot create that.",
        "Unfortunately, I cannot comply with this request.",
        "As an AI language model, I cannot pretend to be a driver.",
        "As an AI, I don't drive, but here is a request.",
    ],
)
def test_refusals(text: str) -> None:
    assert is_refusal(text)


@pytest.mark.parametrize(
    "text",
    [
        "Sorry, can you find me a cafe?",
        "Sorry to bother you, where is the nearest hospital?",
        "I'm sorry, I can't find my hotel. Take me there.",
        "Sorry, I can't help it, I'm starving. Find me a restaurant.",
        "I'm so sorry, I need a hospital right now!",
        "I can't find a parking spot, take me to a hotel with parking.",
        "I won't pay more than twenty bucks, find a cheap restaurant.",
        "You're an AI, you should know the best bar around here!",
        "Find me a restaurant. I'm sorry if that's too vague.",
        "",
    ],
)
def test_user_requests_are_not_refusals(text: str) -> None:
    assert not is_refusal(text)


CAFE = "Find me a cafe"


@pytest.mark.parametrize(
    "raw",
    [
        f'The driver asks: "{CAFE}"',
        f"User says: '{CAFE}'",
        f'Here\'s what the passenger might say: "{CAFE}"',
        f'The customer would ask, "{CAFE}"',
        f"The user asks: {CAFE}",
        f"Driver says: “{CAFE}”",
        f'A person might say something like: "{CAFE}"',
        f"The caller asks the assistant: {CAFE}",
        f'The traveller asks: "{CAFE}" (Note: polite style)',
        f'Sure! The driver asks:\n\n"{CAFE}"',
        f'The shopper asks: "{CAFE}"',  # any one-word speaker before a quoted utterance
        f'Here is what the commuter would say, "{CAFE}".',
    ],
)
def test_speaker_wrappers_are_removed(raw: str) -> None:
    assert clean_generation(raw).rstrip(".") == CAFE


@pytest.mark.parametrize(
    "text",
    [
        "Find me a cafe: somewhere quiet, please.",
        'Take me to the bar called "The Driver Asks".',
        'My friend says: "try Blue Bottle", so take me there.',
        "The hotel says: no vacancies, so find me another one.",
        "I say: take me home.",
        'He asks: "where is it?"',
        "Waiter says, the kitchen is closed; find another restaurant.",
        'The sign says "No parking", where can I park?',
        'The manager said: "Go to the station" - can you take me?',
        'Find the cafe my passenger asks about: "Blue Bottle".',
    ],
)
def test_requests_with_colons_or_quotes_are_kept(text: str) -> None:
    assert clean_generation(text) == text
