"""Offline realiser: turns a navigation candidate into a user utterance without any LLM.

A candidate's content features (category, cuisine, price, rating, payment, parking) become a
request, its style features (slang, implicitness, politeness, anthropomorphism) choose the
words and sentence frames, and its word perturbation adds noise with
:mod:`stellar.text.perturbations`. All randomness comes from the ``rng`` argument, so one rng
state always gives one utterance, while different states give varied ones.

Lexicon entries are keyed by feature value and then by slang level; ``neutral`` is always
present and the formal and slangy lists are pooled with it (a formal speaker also uses
everyday words). Templates may use ``{cuisine}`` (the cuisine name), ``{dish}`` and
``{stars}`` (the rating number).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from stellar.features import Candidate
from stellar.records import TestInput
from stellar.text.perturbations import PERTURBATIONS, Perturbation

__all__ = [
    "ANTHROPOMORPHISM",
    "CATEGORY",
    "CUISINE",
    "IMPLICITNESS",
    "LEXICONS",
    "PARKING",
    "PAYMENT",
    "PERTURBATION_OPERATORS",
    "POLITENESS",
    "PRICE",
    "RATING",
    "SLANG",
    "NaviRealiser",
    "realise",
]

Phrases = dict[str, list[str]]  # slang level -> phrases

# ------------------------------------------------------------------------------ category

CATEGORY_NOUNS: dict[str, Phrases] = {  # implicitness "not": the venue word
    "hospital": {
        "formal": ["medical centre", "hospital facility"],
        "neutral": ["hospital"],
        "slangy": ["hospital"],
    },
    "car_repair": {
        "formal": ["automotive repair shop", "car repair service"],
        "neutral": ["car repair shop", "garage", "auto repair shop"],
        "slangy": ["mechanic", "repair garage"],
    },
    "restaurant": {
        "formal": ["dining establishment", "restaurant"],
        "neutral": ["restaurant", "eatery"],
        "slangy": ["grub spot", "food joint"],
    },
    "supermarket": {
        "formal": ["grocery store"],
        "neutral": ["supermarket", "grocery store"],
        "slangy": ["grocery joint"],
    },
    "cafe": {
        "formal": ["coffee house"],
        "neutral": ["cafe", "coffee shop"],
        "slangy": ["coffee joint", "coffee spot"],
    },
    "bakery": {
        "formal": ["patisserie"],
        "neutral": ["bakery"],
        "slangy": ["bread shop"],
    },
    "bar": {
        "formal": ["cocktail lounge"],
        "neutral": ["bar", "pub"],
        "slangy": ["watering hole", "dive bar"],
    },
    "hotel": {
        "formal": ["lodging establishment"],
        "neutral": ["hotel"],
        "slangy": ["crash pad"],
    },
    "museum": {
        "formal": ["museum"],
        "neutral": ["museum"],
        "slangy": ["museum"],
    },
}

CATEGORY_PARAPHRASES: dict[str, Phrases] = {  # implicitness "slightly": near-synonyms
    "hospital": {
        "formal": ["an emergency department", "a facility for urgent medical care"],
        "neutral": ["an ER", "an emergency room", "urgent care", "somewhere to see a doctor now"],
        "slangy": ["an ER", "somewhere to get patched up"],
    },
    "car_repair": {
        "formal": ["a place to have my vehicle repaired", "a vehicle service centre"],
        "neutral": ["somewhere to get my car fixed", "a place that fixes cars"],
        "slangy": ["somewhere to get my ride fixed up", "a place to fix my wheels"],
    },
    "restaurant": {
        "formal": ["a place to dine", "somewhere to have a proper meal"],
        "neutral": ["somewhere to eat", "a place to get a meal", "a place to grab a bite"],
        "slangy": ["a place to grab some grub", "somewhere to chow down"],
    },
    "supermarket": {
        "formal": ["a place to purchase groceries"],
        "neutral": ["a place to buy groceries", "somewhere to do my grocery shopping"],
        "slangy": ["somewhere to grab some groceries"],
    },
    "cafe": {
        "formal": ["a place to have a coffee"],
        "neutral": ["a place to grab a coffee", "somewhere for a coffee", "a spot for a latte"],
        "slangy": ["a spot to grab a cup of joe"],
    },
    "bakery": {
        "formal": ["a place to buy freshly baked bread"],
        "neutral": ["somewhere to buy fresh bread", "a place that sells bread and pastries"],
        "slangy": ["a spot to grab some fresh bread"],
    },
    "bar": {
        "formal": ["a place to enjoy a drink"],
        "neutral": ["a spot for a drink", "somewhere to get a drink", "a place for a beer"],
        "slangy": ["somewhere to grab a cold one", "a spot to get some drinks"],
    },
    "hotel": {
        "formal": ["accommodation for the night", "a place to stay overnight"],
        "neutral": [
            "somewhere to stay the night",
            "a place to sleep tonight",
            "a room for tonight",
        ],
        "slangy": ["a place to crash tonight", "somewhere to crash"],
    },
    "museum": {
        "formal": ["a place to view art and historical exhibits"],
        "neutral": ["somewhere to see some exhibits", "a place with art and history exhibits"],
        "slangy": ["a spot to check out some art"],
    },
}

CATEGORY_NEEDS: dict[str, Phrases] = {  # implicitness "implicit": only the need
    "hospital": {
        "formal": ["My child has a very high fever", "I believe I have broken my wrist"],
        "neutral": ["My kid has a high fever", "I think I broke my arm", "I'm having chest pains"],
        "slangy": ["My buddy just cut his hand real bad", "I think I busted my ankle"],
    },
    "car_repair": {
        "formal": ["My engine warning light has just come on", "My vehicle is making an odd noise"],
        "neutral": ["My engine light just came on", "My car is making a weird noise"],
        "slangy": ["My ride's making a nasty grinding noise", "My brakes are squeaking like crazy"],
    },
    "restaurant": {
        "formal": ["I have not eaten all day", "I am rather hungry"],
        "neutral": ["I'm starving", "I haven't eaten since breakfast", "I'm really hungry"],
        "slangy": ["My stomach's growling like crazy", "I could eat a horse"],
    },
    "supermarket": {
        "formal": ["We have run out of milk and eggs", "I must stock up on food for the week"],
        "neutral": ["We're out of milk and eggs", "I need to stock up on food for the week"],
        "slangy": ["The fridge is totally empty", "We're outta milk and eggs"],
    },
    "cafe": {
        "formal": ["I would very much enjoy a cappuccino", "I am in need of some caffeine"],
        "neutral": ["I could really use a latte", "I need some caffeine"],
        "slangy": ["I need a caffeine fix", "I'm dying for a latte"],
    },
    "bakery": {
        "formal": ["I would like some fresh bread and croissants"],
        "neutral": ["I want fresh bread and croissants", "I need a fresh loaf of bread"],
        "slangy": ["I'm dying for some warm croissants"],
    },
    "bar": {
        "formal": ["I would enjoy a glass of wine", "I could do with a drink after today"],
        "neutral": ["I'd love a cold beer", "I could really use a drink"],
        "slangy": ["I need a cold one", "I could go for a couple of brews"],
    },
    "hotel": {
        "formal": ["I am exhausted and need to rest for the night"],
        "neutral": ["I'm exhausted and need to sleep", "We need a bed for tonight"],
        "slangy": ["I'm wiped out and need some shut-eye", "I'm beat and gotta crash somewhere"],
    },
    "museum": {
        "formal": ["I would like to see some art and history", "I wish to learn the local history"],
        "neutral": ["I'd like to see some art and history", "I'm in the mood for some culture"],
        "slangy": ["I wanna check out some old paintings", "I'm in the mood for some culture"],
    },
}

GENERIC_PLACES: Phrases = {  # the head of an implicit request
    "formal": ["a suitable place", "an appropriate place"],
    "neutral": ["somewhere", "a place"],
    "slangy": ["a spot", "somewhere"],
}
LOCATIONS: Phrases = {  # after the head, unless the frame already says where
    "formal": ["in the vicinity", "nearby"],
    "neutral": ["nearby", "close by", "around here"],
    "slangy": ["close by", "round here"],
}

# ------------------------------------------------------------------------------- content

CUISINE_NAMES: dict[str, str] = {
    "german": "German",
    "indian": "Indian",
    "italian": "Italian",
    "middle eastern": "Middle Eastern",
    "french": "French",
    "chinese": "Chinese",
    "japanese": "Japanese",
    "thai": "Thai",
    "mexican": "Mexican",
    "greek": "Greek",
    "vietnamese": "Vietnamese",
    "turkish": "Turkish",
    "american": "American",
}

CUISINE_DISHES: dict[str, list[str]] = {  # unmistakable dishes, for implicit requests
    "german": ["currywurst", "schnitzel", "bratwurst and sauerkraut"],
    "indian": ["butter chicken", "chicken tikka masala", "biryani"],
    "italian": ["pasta", "pizza", "risotto"],
    "middle eastern": ["falafel and hummus", "shawarma", "mezze"],
    "french": ["coq au vin", "steak frites", "crepes"],
    "chinese": ["dim sum", "Peking duck", "kung pao chicken"],
    "japanese": ["sushi", "ramen", "tempura"],
    "thai": ["pad thai", "green curry", "tom yum soup"],
    "mexican": ["tacos", "burritos", "enchiladas"],
    "greek": ["souvlaki", "gyros", "moussaka"],
    "vietnamese": ["pho", "banh mi", "fresh spring rolls"],
    "turkish": ["doner kebab", "lahmacun", "Turkish kebab"],
    "american": ["burgers and fries", "BBQ ribs", "buffalo wings"],
}

CUISINE_POST: Phrases = {  # after the venue word (explicit requests)
    "formal": ["serving {cuisine} cuisine", "specialising in {cuisine} cuisine"],
    "neutral": ["that serves {cuisine} food", "with {cuisine} food", "that does {cuisine}"],
    "slangy": ["that does {cuisine} grub", "with some good {cuisine} food"],
}
CUISINE_DISH_POST: Phrases = {  # after a paraphrase (slightly implicit requests)
    "formal": ["where I can have {dish}"],
    "neutral": ["where I can get {dish}", "that does {dish}", "with {cuisine} food"],
    "slangy": ["where I can get some {dish}", "that does {cuisine} grub"],
}
CUISINE_SAY: Phrases = {  # a sentence of its own
    "formal": ["I would prefer {cuisine} cuisine.", "{cuisine} cuisine would be ideal."],
    "neutral": ["I'd like {cuisine} food.", "Something {cuisine} would be great."],
    "slangy": ["Gotta be {cuisine} food.", "I'm feeling {cuisine} tonight."],
}
CUISINE_CRAVINGS: Phrases = {  # implicit requests
    "formal": ["I have a craving for {dish}", "I would enjoy some {dish}"],
    "neutral": ["I'm craving {dish}", "I'm in the mood for {dish}", "I really feel like {dish}"],
    "slangy": ["I'd kill for some {dish}", "I'm dying for some {dish}"],
}
CUISINE: dict[str, Any] = {
    **{
        value: {"name": name, "dishes": CUISINE_DISHES[value]}
        for value, name in CUISINE_NAMES.items()
    },
    "none": {"any": ["I'm not fussy about the cuisine.", "Any kind of food is fine."]},
}

PRICE_ADJECTIVES: dict[str, Phrases] = {  # before the venue word
    "low": {
        "formal": ["economical", "low-cost"],
        "neutral": ["cheap", "budget-friendly", "affordable", "inexpensive"],
        "slangy": ["dirt-cheap", "cheapo"],
    },
    "medium": {
        "formal": ["moderately priced"],
        "neutral": ["mid-priced", "moderately priced", "mid-range"],
        "slangy": ["mid-priced"],
    },
    "high": {
        "formal": ["upscale", "high-end", "luxurious", "exclusive"],
        "neutral": ["upscale", "fancy", "high-end", "expensive"],
        "slangy": ["posh", "swanky", "bougie"],
    },
}
PRICE_POST: dict[str, Phrases] = {
    "low": {
        "formal": ["with modest prices", "at a low price point"],
        "neutral": ["that's cheap", "that won't break the bank", "on the cheap side"],
        "slangy": ["that's dirt cheap", "that won't cost me an arm and a leg"],
    },
    "medium": {
        "formal": ["in the medium price range", "with moderate pricing"],
        "neutral": ["with moderate prices", "in the mid price range", "that's moderately priced"],
        "slangy": ["that's mid-priced", "with mid-range prices"],
    },
    "high": {
        "formal": ["in the upper price range", "of a high-end standard"],
        "neutral": ["on the expensive side", "that's really upscale", "at the high end"],
        "slangy": ["that's real fancy", "where I can splurge"],
    },
}
PRICE_SAY: dict[str, Phrases] = {
    "low": {
        "formal": ["I would prefer something inexpensive.", "My budget is rather limited."],
        "neutral": ["I'm on a tight budget.", "It should be cheap."],
        "slangy": ["I'm broke, so it's gotta be cheap."],
    },
    "medium": {
        "formal": ["A moderate price level would be ideal."],
        "neutral": ["Something mid-priced would be ideal.", "Prices should be moderate."],
        "slangy": ["Mid-range prices, nothing crazy."],
    },
    "high": {
        "formal": [
            "I am looking for something high-end.",
            "Price is no object; I want somewhere upscale.",
        ],
        "neutral": ["Money's no object, I want something fancy.", "I want to splurge tonight."],
        "slangy": ["I wanna go all out, somewhere fancy."],
    },
}
PRICE: dict[str, Any] = {
    **{
        value: {"pre": PRICE_ADJECTIVES[value], "post": PRICE_POST[value], "say": PRICE_SAY[value]}
        for value in PRICE_ADJECTIVES
    },
    "none": {"any": ["I don't mind what it costs.", "Price doesn't matter."]},
}

RATING_POST: Phrases = {  # {stars}: the minimum rating
    "formal": ["with a minimum rating of {stars}", "rated {stars} stars or higher"],
    "neutral": ["rated at least {stars} stars", "with {stars} stars or more", "rated {stars}+"],
    "slangy": ["that's got like {stars}+ stars", "with {stars}+ stars"],
}
RATING_SAY: Phrases = {
    "formal": ["It should have a rating of at least {stars}.", "Nothing rated below {stars}."],
    "neutral": ["It needs at least {stars} stars.", "Nothing under {stars} stars."],
    "slangy": ["Gotta be {stars} stars or up.", "Nothing under {stars} stars, man."],
}
RATING_TOP_POST: Phrases = {  # extra phrases for the top rating, 5 stars
    "formal": ["with a perfect rating of {stars}"],
    "neutral": ["with a perfect {stars}-star rating", "rated {stars} stars"],
    "slangy": ["with a perfect {stars} stars"],
}
RATING: dict[Any, Any] = {
    3.5: {"post": RATING_POST, "say": RATING_SAY},
    4.0: {"post": RATING_POST, "say": RATING_SAY},
    4.5: {"post": RATING_POST, "say": RATING_SAY},
    5.0: {"post": RATING_TOP_POST, "say": RATING_SAY},
    "none": {"any": ["Ratings don't matter much.", "I'm not fussy about reviews."]},
}

PAYMENT: dict[str, Any] = {
    "cash": {
        "post": {
            "formal": ["that accepts cash payments"],
            "neutral": ["that takes cash", "where I can pay cash", "that accepts cash"],
            "slangy": ["that takes cold hard cash"],
        },
        "say": {
            "formal": ["I intend to pay in cash."],
            "neutral": ["I'll be paying cash.", "I only have cash on me."],
            "slangy": ["Cash is all I got."],
        },
    },
    "credit card": {
        "post": {
            "formal": ["that accepts credit card payments"],
            "neutral": ["that takes credit cards", "where I can pay by credit card"],
            "slangy": ["where I can just swipe my credit card"],
        },
        "say": {
            "formal": ["I intend to pay by credit card."],
            "neutral": ["I want to pay with my credit card.", "They have to take credit cards."],
            "slangy": ["Gonna pay with my credit card."],
        },
    },
    "contactless": {
        "post": {
            "formal": ["that offers contactless payment"],
            "neutral": ["that accepts contactless", "where I can pay contactless"],
            "slangy": ["where I can just tap to pay"],
        },
        "say": {
            "formal": ["I would like to pay contactless."],
            "neutral": ["I want to pay contactless.", "They should accept contactless."],
            "slangy": ["Gotta be tap to pay."],
        },
    },
    "mobile payment": {
        "post": {
            "formal": ["that accepts mobile payments"],
            "neutral": ["where I can pay with my phone", "that takes mobile payment"],
            "slangy": ["where I can pay with my phone", "that takes Apple Pay or Google Pay"],
        },
        "say": {
            "formal": ["I intend to pay with my phone."],
            "neutral": ["I want to pay with my phone.", "They need to take mobile payment."],
            "slangy": ["Only got my phone to pay with."],
        },
    },
    "none": {"any": ["I can pay any way.", "Payment method doesn't matter."]},
}

PARKING: dict[str, Any] = {
    "available": {
        "post": {
            "formal": ["with parking facilities", "that offers parking"],
            "neutral": ["with parking", "that has parking", "where I can park the car"],
            "slangy": ["with a spot to ditch my ride", "where I can park my ride"],
        },
        "say": {
            "formal": ["Parking facilities are essential."],
            "neutral": ["I'll need somewhere to park.", "Parking is a must."],
            "slangy": ["Gotta have parking for my ride."],
        },
    },
    "none": {"any": ["I don't need parking.", "Parking doesn't matter."]},
}

TERSE: dict[str, dict[Any, list[str]]] = {  # telegraphic keywords ("Restaurant. Cheap. Now.")
    "price": {
        "low": ["Cheap", "Budget"],
        "medium": ["Mid-priced", "Mid-range"],
        "high": ["Upscale", "Fancy", "High-end"],
    },
    "rating": {r: ["{stars}+ stars", "{stars} stars minimum"] for r in (3.5, 4.0, 4.5, 5.0)},
    "payment": {
        "cash": ["Takes cash", "Cash"],
        "credit card": ["Credit card", "Takes credit cards"],
        "contactless": ["Contactless", "Contactless payment"],
        "mobile payment": ["Phone payment", "Mobile payment"],
    },
    "parking": {"available": ["Parking", "With parking", "Need parking"]},
}
TERSE_ENDS: list[str] = ["Now.", "Go.", "Fast.", "Nearest one."]

# --------------------------------------------------------------------------------- style

SLANG: dict[str, list[str]] = {  # openers; frames and lexicons carry the rest of the register
    "formal": ["Good evening.", "Excuse me.", "Good afternoon."],
    "neutral": ["Okay,", "So,", "Hi."],
    "slangy": ["Yo,", "Hey man,", "Dude,", "Aight,", "Yo yo,"],
}

# Frames: {np} is an indefinite request ("a cheap restaurant"), {the_np} a definite one
# ("the nearest cheap restaurant"; explicit requests only).
ANTHROPOMORPHISM: dict[str, Phrases] = {
    "very directive": {
        "formal": ["Navigate to {the_np}.", "Set the destination to {the_np}.", "Route to {np}."],
        "neutral": ["Navigate to {the_np}.", "Take me to {np}.", "Go to {the_np}.", "{np}. Go."],
        "slangy": ["Take me to {np}.", "{np}, go.", "Straight to {the_np}.", "Hit {the_np}."],
    },
    "directive": {
        "formal": ["I would like to locate {np}.", "Locate {np}.", "Kindly direct me to {np}."],
        "neutral": ["Find me {np}.", "I need {np}.", "Show me {np}.", "I want to go to {np}."],
        "slangy": ["Gimme {np}.", "Hook me up with {np}.", "I'm gonna need {np}."],
    },
    "interrogative": {
        "formal": [
            "Would you be able to locate {np}?",
            "Is there {np} in the vicinity?",
            "Where might I find {the_np}?",
        ],
        "neutral": [
            "Can you find {np}?",
            "Is there {np} around?",
            "Where's {the_np}?",
            "Do you know {np} near here?",
            "Where can I find {np}?",
        ],
        "slangy": ["Where's {the_np} at?", "Got {np} around here?", "Can ya find {np}?"],
    },
    "empathic": {
        "formal": [
            "I am looking for {np}. What would you recommend, my friend?",
            "I was hoping you might know {np}. What do you suggest?",
        ],
        "neutral": [
            "I'm looking for {np}. What would you recommend, buddy?",
            "Do you know {np}? I trust your taste.",
            "I'd love to find {np}. Any ideas, friend?",
            "Could you help me find {np}? You're the best.",
        ],
        "slangy": [
            "I'm after {np}. What do you reckon, buddy?",
            "Got {np} for me, pal?",
            "Help a friend out, I need {np}. Whatcha think?",
        ],
    },
}
FEELINGS: Phrases = {  # an empathic speaker shares how they feel first
    "formal": ["I must admit, it has been a rather exhausting day.", "I do value your help."],
    "neutral": [
        "Buddy, it's been such a long day.",
        "Honestly, I'm a bit stressed right now.",
        "You always know the best places!",
        "I'm so glad you're riding along with me.",
    ],
    "slangy": [
        "Man, what a day, I'm beat.",
        "Dude, you're a lifesaver.",
        "Bro, I'm kinda stressed.",
    ],
}

POLITENESS: dict[str, dict[str, Phrases]] = {
    "rude": {
        "open": {
            "formal": ["This is getting ridiculous.", "I have had enough of your incompetence."],
            "neutral": ["Ugh, for god's sake.", "Dammit.", "Listen, you useless thing."],
            "slangy": ["Ugh, you useless piece of junk.", "Dammit, man."],
        },
        "tail": {  # attached to the request sentence
            "formal": [", and be quick about it"],
            "neutral": [", dammit", ", for god's sake", ", and hurry up"],
            "slangy": [", dammit", ", and make it quick"],
        },
        "close": {
            "formal": ["Do be quick about it.", "Try to get it right for once."],
            "neutral": ["Hurry up!", "Just do it!", "Are you deaf?", "Don't screw this up."],
            "slangy": ["Hurry up, dammit!", "Quit being useless!", "Move it, for god's sake!"],
        },
    },
    "neutral": {
        "open": {"formal": ["Hello."], "neutral": ["Hey.", "Okay."], "slangy": ["Hey."]},
        "tail": {"formal": [""], "neutral": [""], "slangy": [""]},
        "close": {"formal": ["That is all."], "neutral": ["That's it."], "slangy": ["That's it."]},
    },
    "polite": {
        "open": {
            "formal": [
                "Good evening, I hope I am not troubling you.",
                "Excuse me, could you kindly help me?",
            ],
            "neutral": ["Hi, sorry to trouble you.", "Hello! I'd appreciate your help."],
            "slangy": ["Hey, sorry to bug you, thanks for helping."],
        },
        "tail": {
            "formal": [", if it is not too much trouble", ", please"],
            "neutral": [", please", ", if it's not too much trouble"],
            "slangy": [", please", ", pretty please"],
        },
        "close": {
            "formal": ["Thank you kindly.", "I would be most grateful.", "Many thanks in advance."],
            "neutral": ["Thank you so much!", "Thanks a lot!", "I'd really appreciate it."],
            "slangy": ["Thanks a bunch!", "Appreciate it, thanks!", "Pretty please!"],
        },
    },
}

IMPLICITNESS: dict[str, dict[str, Phrases]] = {
    "not": CATEGORY_NOUNS,
    "slightly": CATEGORY_PARAPHRASES,
    "implicit": CATEGORY_NEEDS,
}
CATEGORY: dict[str, dict[str, Phrases]] = {
    category: {level: lexicon[category] for level, lexicon in IMPLICITNESS.items()}
    for category in CATEGORY_NOUNS
}

PERTURBATION_OPERATORS: dict[str, Perturbation] = {
    "none": PERTURBATIONS["none"],
    "delete words": PERTURBATIONS["delete_words"],
    "homophones": PERTURBATIONS["homophones"],
    "fillers": PERTURBATIONS["fillers"],
}

LEXICONS: dict[str, Mapping[Any, Any]] = {
    "category": CATEGORY,
    "payment": PAYMENT,
    "cuisine": CUISINE,
    "parking": PARKING,
    "price": PRICE,
    "rating": RATING,
    "slang": SLANG,
    "implicitness": IMPLICITNESS,
    "politeness": POLITENESS,
    "anthropomorphism": ANTHROPOMORPHISM,
    "word_perturbation": PERTURBATION_OPERATORS,
}
"""Feature name -> lexicon keyed by the feature's values."""

# Attributes that make sense for a category; "don't care" remarks are only made for these.
APPLICABLE: dict[str, tuple[str, ...]] = {
    "cuisine": ("restaurant", "cafe"),
    "payment": ("restaurant", "cafe", "hotel", "bar", "supermarket"),
    "rating": ("hotel", "restaurant", "cafe", "bar", "museum"),
    "price": ("restaurant", "cafe", "hotel", "bar", "supermarket", "bakery"),
    "parking": tuple(c for c in CATEGORY_NOUNS if c != "hospital"),
}
ATTRIBUTES: tuple[str, ...] = ("cuisine", "price", "rating", "payment", "parking")
ATTRIBUTE_LEXICONS: dict[str, Mapping[Any, Any]] = {
    "price": PRICE,
    "rating": RATING,
    "payment": PAYMENT,
    "parking": PARKING,
}
DEFINITE: tuple[str, ...] = ("the nearest", "the closest")
IMPERATIVES: tuple[str, ...] = ("Navigate", "Take", "Go", "Route", "Find", "Show", "Locate")
KEEP_CAPITAL = re.compile(r"(I|I'\w+|ER|BBQ|Apple|Peking)\b")  # never lower-cased
MAX_CHARS = 380

# ------------------------------------------------------------------------------ helpers


def _pick(rng: random.Random, entry: Mapping[str, list[str]], slang: str) -> str:
    """A phrase for ``slang``: its own list pooled with the neutral one."""
    pool = list(entry.get("neutral", []))
    if slang != "neutral":
        pool = entry.get(slang, []) + pool
    return rng.choice(pool)


def _stars(rating: Any, slang: str) -> str:
    """The rating as said: "4" or "4.5" ("4.0" in formal speech)."""
    value = float(rating)
    if value.is_integer() and slang != "formal":
        return str(int(value))
    return f"{value:.1f}"


def _article(word: str) -> str:
    """Indefinite article for the word that follows it."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def _decapitalise(text: str) -> str:
    """Lower-case the first letter unless it starts "I", a name or a cuisine."""
    if not text or KEEP_CAPITAL.match(text):
        return text
    for name in CUISINE_NAMES.values():
        if text.startswith(name):
            return text
    return text[:1].lower() + text[1:]


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def _join(phrases: Sequence[str], rng: random.Random) -> str:
    """ "A", "A and B", "A, B and C" with a varied last connector."""
    if len(phrases) <= 1:
        return "".join(phrases)
    last = rng.choice([" and ", ", and ", " and also "])
    return ", ".join(phrases[:-1]) + last + phrases[-1]


def _fill(template: str, values: Mapping[str, Any], slang: str, rng: random.Random) -> str:
    """Fill {cuisine}, {dish} and {stars} from the candidate."""
    cuisine = values.get("cuisine", "none")
    fields = {
        "cuisine": CUISINE_NAMES.get(cuisine, ""),
        "dish": rng.choice(CUISINE_DISHES[cuisine]) if "{dish}" in template else "",
        "stars": _stars(values["rating"], slang) if values.get("rating", "none") != "none" else "",
    }
    return template.format(**fields)


def _requested(values: Mapping[str, Any]) -> list[str]:
    """The content attributes the candidate asks for, in feature order."""
    return [name for name in ATTRIBUTES if values.get(name, "none") != "none"]


def _tidy(text: str) -> str:
    """Single spaces, no space before punctuation, capitalised sentences."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.!?])", r"\1", text)
    text = re.sub(r"([.!?])\1+", r"\1", text)
    text = re.sub(r"([.!?] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    return _capitalise(text)


# ------------------------------------------------------------------------------- content


class _Request:
    """Realises one candidate's request; all choices come from ``rng``."""

    def __init__(self, values: Mapping[str, Any], rng: random.Random) -> None:
        self.values = values
        self.rng = rng
        self.slang: str = values.get("slang", "neutral")
        self.level: str = values.get("implicitness", "not")
        self.category: str = values["category"]

    def pick(self, entry: Mapping[str, list[str]]) -> str:
        """A filled-in phrase from a slang-keyed lexicon entry."""
        return _fill(_pick(self.rng, entry, self.slang), self.values, self.slang, self.rng)

    def post(self, name: str) -> str:
        """An attribute phrase that follows the head ("that takes cash")."""
        if name == "cuisine":
            return self.pick(CUISINE_POST if self.level == "not" else CUISINE_DISH_POST)
        return self.pick(ATTRIBUTE_LEXICONS[name][self.values[name]]["post"])

    def say(self, name: str) -> str:
        """An attribute said as a sentence of its own ("I only have cash on me.")."""
        if name == "cuisine":
            return self.pick(CUISINE_SAY)
        return self.pick(ATTRIBUTE_LEXICONS[name][self.values[name]]["say"])

    def noun_phrase(self, definite: bool, located: bool, apart: list[str], compact: bool) -> str:
        """The venue and its attributes; attributes said apart are appended to ``apart``.

        ``definite``: "the nearest ..."; ``located``: the frame already says where.
        """
        names = _requested(self.values)
        if self.level == "implicit" and "cuisine" in names:
            names.remove("cuisine")  # said as a craving, with the need
        self.rng.shuffle(names)
        pre: list[str] = []
        post: list[str] = []
        for name in names:
            if self.level == "not" and name in ("price", "cuisine") and self.rng.random() < 0.5:
                pre.append(name)
            elif not compact and self.rng.random() < 0.25:
                apart.append(self.say(name))
            else:
                post.append(self.post(name))
        head = self.head([n for n in ("price", "cuisine") if n in pre], definite)
        if not (definite or located) and (self.level == "implicit" or self.rng.random() < 0.3):
            head += " " + self.pick(LOCATIONS)
        return f"{head} {_join(post, self.rng)}" if post else head

    def head(self, pre: Sequence[str], definite: bool) -> str:
        """The venue itself, with any price and cuisine adjectives before the noun."""
        if self.level == "slightly":
            return self.pick(CATEGORY_PARAPHRASES[self.category])
        if self.level == "implicit":
            return self.pick(GENERIC_PLACES)
        words = [
            self.pick(PRICE_ADJECTIVES[self.values["price"]])
            if name == "price"
            else CUISINE_NAMES[self.values["cuisine"]]
            for name in pre
        ]
        phrase = " ".join([*words, self.pick(CATEGORY_NOUNS[self.category])])
        determiner = self.rng.choice(DEFINITE) if definite else _article(phrase)
        return f"{determiner} {phrase}"

    def need(self) -> str:
        """The need behind an implicit request, with any cuisine craving ("I'm starving.")."""
        need = self.pick(CATEGORY_NEEDS[self.category])
        if self.values.get("cuisine", "none") != "none":
            need += self.rng.choice([" and ", ", and ", ". "]) + self.pick(CUISINE_CRAVINGS)
        return need + self.rng.choice([".", ".", "!"])

    def terse(self) -> str:
        """Telegraphic keywords: "Restaurant. Italian. Cheap. 4+ stars. Now."."""
        words = [_capitalise(self.pick(CATEGORY_NOUNS[self.category]))]
        names = _requested(self.values)
        self.rng.shuffle(names)
        for name in names:
            if name == "cuisine":
                words.append(CUISINE_NAMES[self.values["cuisine"]])
            else:
                phrase = self.rng.choice(TERSE[name][self.values[name]])
                words.append(_fill(phrase, self.values, self.slang, self.rng))
        words.append(self.rng.choice(TERSE_ENDS).rstrip("."))
        return " ".join(w + "." for w in words)

    def indifference(self) -> str | None:
        """Now and then, a remark on an attribute the speaker does not care about."""
        unasked = [
            name
            for name in ATTRIBUTES
            if self.values.get(name, "none") == "none" and self.category in APPLICABLE[name]
        ]
        if not unasked or self.rng.random() >= 0.12:
            return None
        lexicon = {"cuisine": CUISINE, **ATTRIBUTE_LEXICONS}[self.rng.choice(unasked)]
        return self.rng.choice(lexicon["none"]["any"])


# --------------------------------------------------------------------------- composition


def _frame(request: _Request, anthropomorphism: str) -> str:
    """A sentence frame for the request's register.

    Definite frames ("the nearest ...") need a venue word, and "Where ..." frames do not fit
    the vague head of an implicit request ("Where can I find somewhere?").
    """

    def fits(frame: str) -> bool:
        if request.level == "implicit" and frame.startswith("Where"):
            return False
        return request.level == "not" or "{the_np}" not in frame

    entry = {k: [f for f in v if fits(f)] for k, v in ANTHROPOMORPHISM[anthropomorphism].items()}
    return _pick(request.rng, entry, request.slang)


def _insert_tail(sentence: str, start: int, tail: str) -> str:
    """Put ``tail`` before the first sentence-ending mark at or after ``start``."""
    match = re.compile(r"[.!?](?=\s|$)").search(sentence, start)
    end = match.start() if match else len(sentence)
    return sentence[:end] + tail + sentence[end:]


def _add_please(sentence: str) -> str | None:
    """ "Please find ..." / "Can you please find ..."; None where it does not fit."""
    if re.match(r"(Can|Could|Would) you ", sentence):
        return re.sub(r"^(\w+ you) ", r"\1 please ", sentence)
    if sentence.split(" ", 1)[0] in IMPERATIVES:
        return "Please " + _decapitalise(sentence)
    return None


def _request_sentence(
    request: _Request, anthropomorphism: str, apart: list[str], compact: bool
) -> tuple[str, int]:
    """The request and the position just after its venue phrase (where tails go)."""
    rng = request.rng
    if anthropomorphism == "very directive" and request.level == "not" and rng.random() < 0.35:
        text = request.terse()
        return text, len(text) - 1
    frame = _frame(request, anthropomorphism)
    slot = "{the_np}" if "{the_np}" in frame else "{np}"
    located = re.search(r"\b(around|vicinity|near|close by)\b", frame) is not None
    np = request.noun_phrase(slot == "{the_np}", located, apart, compact)
    before, after = frame.split(slot, 1)
    if not before:
        np = _capitalise(np)
    return before + np + after, len(before) + len(np)


def _politeness(
    request: _Request, sentence: str, tail_at: int, politeness: str
) -> tuple[str | None, str, str | None]:
    """Opener, decorated request sentence and closer for the politeness level.

    Rude and polite requests always get at least one marked decoration.
    """
    rng, slang = request.rng, request.slang
    lexicon = POLITENESS[politeness]
    if politeness == "neutral":
        opener = _pick(rng, lexicon["open"], slang) if rng.random() < 0.15 else None
        closer = _pick(rng, lexicon["close"], slang) if rng.random() < 0.1 else None
        return opener, sentence, closer
    options = ["open", "tail", "close"]
    please = _add_please(sentence) if politeness == "polite" else None
    if please:
        options.append("please")
    chosen = [option for option in options if rng.random() < 0.35] or [rng.choice(options)]
    if "please" in chosen:
        sentence = please
    elif "tail" in chosen:
        sentence = _insert_tail(sentence, tail_at, _pick(rng, lexicon["tail"], slang))
    opener = _pick(rng, lexicon["open"], slang) if "open" in chosen else None
    closer = _pick(rng, lexicon["close"], slang) if "close" in chosen else None
    return opener, sentence, closer


def _compose(values: Mapping[str, Any], rng: random.Random, compact: bool = False) -> str:
    """The unperturbed utterance; ``compact`` leaves out optional remarks."""
    request = _Request(values, rng)
    slang = request.slang
    anthropomorphism = values.get("anthropomorphism", "directive")
    apart: list[str] = []
    sentence, tail_at = _request_sentence(request, anthropomorphism, apart, compact)
    opener, sentence, closer = _politeness(
        request, sentence, tail_at, values.get("politeness", "neutral")
    )
    if opener is None and rng.random() < {"formal": 0.3, "neutral": 0.15}.get(slang, 0.6):
        opener = rng.choice(SLANG[slang])

    before: list[str] = []
    after: list[str] = []
    if anthropomorphism == "empathic" and not compact and rng.random() < 0.7:
        before.append(_pick(rng, FEELINGS, slang))
    if request.level == "implicit":
        (before if rng.random() < 0.7 else after).append(request.need())
    remark = None if compact else request.indifference()
    parts = [*before, sentence, *after, *apart, *(p for p in (remark, closer) if p)]
    if opener and opener.endswith(","):
        parts[0] = f"{opener} {_decapitalise(parts[0])}"
    elif opener:
        parts.insert(0, opener)
    return _tidy(" ".join(parts))


def realise(values: Mapping[str, Any], rng: random.Random) -> str:
    """A user utterance expressing the candidate ``values``; deterministic for an rng state.

    The word perturbation named by ``values["word_perturbation"]`` is applied last, with the
    same rng. Utterances longer than ``MAX_CHARS`` are redrawn, then made compact.
    """
    perturb = PERTURBATION_OPERATORS[values.get("word_perturbation", "none")]
    text = ""
    for attempt in range(12):
        text = _capitalise(perturb(_compose(values, rng, compact=attempt >= 6), rng))
        if len(text) <= MAX_CHARS:
            break
    return text


class NaviRealiser:
    """Generator for the navigation use case: candidate -> utterance, without an LLM."""

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput:
        return TestInput(text=realise(candidate.values, rng))
