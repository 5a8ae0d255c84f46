"""Word-level perturbation operators from the STELLAR paper: deletion and speech fillers.

Function-word deletion (``delete_words``) and speech fillers (``add_fillers``); homophone
substitution is in :mod:`.homophones`.

Fillers go where speakers hesitate: at the start of a sentence ("Well, where's ..."), after a
comma (hesitations, "you know", "I mean": "..., uh, ..."), or before a phrase
that opens with an indefinite or possessive determiner or a relative or question word ("I
need uh a bakery", "a bakery um that has parking", "tell me uh how"). Never inside a
phrase: "hurry up", "piece of junk" or "what a day" are not split ("what", "such", "and"
and the like bind the determiner after them, and no filler follows a pronoun or a
preposition). A text gets at least one filler where one fits, and at most two.
"""

from __future__ import annotations

import random
import re

from stellar.text.perturbations._common import _check_p

_ARTICLES = "a an the"
_PRONOUNS = """
    i me my mine myself you your yours yourself yourselves he him his himself she her hers
    herself it its itself we us our ours ourselves they them their theirs themselves
    this that these those
"""
_PREPOSITIONS = """
    about above across after against along among around at before behind below beneath
    beside besides between beyond by down during except for from in inside into like near
    of off on onto out outside over past since through throughout to toward towards under
    underneath until up upon with within without
"""
FUNCTION_WORDS: frozenset[str] = frozenset((_ARTICLES + _PRONOUNS + _PREPOSITIONS).split())
"""Articles, pronouns and prepositions that ``delete_words`` may drop (lowercase)."""

FILLERS: tuple[str, ...] = (
    "uh",
    "um",
    "er",
    "hmm",
    "like",
    "well",
    "so",
    "you know",
    "I mean",
    "actually",
    "basically",
)
"""Speech fillers inserted by ``add_fillers``."""
SENTENCE_FILLERS: tuple[str, ...] = (
    "uh", "um", "er", "hmm", "well", "so", "you know", "I mean", "actually", "basically",
)  # fmt: skip
"""Fillers that may open a sentence ("Well, ...")."""
COMMA_FILLERS: tuple[str, ...] = ("uh", "um", "er", "you know", "I mean")
"""Fillers that may follow a comma, which may also just separate the items of a list."""
PHRASE_FILLERS: tuple[str, ...] = ("uh", "um", "er", "like", "you know")
"""Fillers that may go before an indefinite noun phrase inside a clause."""
HESITATIONS: tuple[str, ...] = ("uh", "um", "er")
"""Fillers that may go before a possessive, a relative or a question word ("tell me uh how")."""
MAX_FILLERS = 2
"""The most fillers ``add_fillers`` puts into one text by default."""

_PHRASE_STARTS = frozenset({"a", "an", "some", "somewhere", "something"})
# Before these only a hesitation: "I trust uh your taste", "tell me um how".
_HESITATION_STARTS = frozenset(
    {"my", "your", "his", "her", "our", "their", "that", "where", "which", "who", "how", "what"}
    | {"why", "when"}
)
_BINDING_TEXT = "what such quite rather half many and or but nor of so than as too very not thanks"
_BINDING = frozenset(_BINDING_TEXT.split())
"""Words that bind the next one into a set phrase ("what a day", "thanks a lot")."""

_TOKEN_PUNCT_RE = re.compile(r"(\W*)(.*?)(\W*)", re.DOTALL)


def _split_punct(token: str) -> tuple[str, str, str]:
    """Split a whitespace-free token into (leading punctuation, core, trailing punctuation)."""
    match = _TOKEN_PUNCT_RE.fullmatch(token)
    assert match is not None  # the pattern matches any string
    return match.group(1), match.group(2), match.group(3)


def delete_words(text: str, rng: random.Random, p: float = 0.4) -> str:
    """Drop each article, pronoun and preposition (``FUNCTION_WORDS``) with probability ``p``.

    Punctuation attached to a dropped word is kept, and at least one word always survives.
    """
    _check_p(p)
    units = re.findall(r"\s*\S+", text)  # leading whitespace + token
    tokens = [unit.lstrip() for unit in units]
    cores = [_split_punct(token)[1] for token in tokens]
    drop = [core.lower() in FUNCTION_WORDS and rng.random() < p for core in cores]
    has_word = [any(ch.isalnum() for ch in core) for core in cores]
    if any(has_word) and all(d for d, w in zip(drop, has_word, strict=True) if w):
        drop[has_word.index(True)] = False

    leading = text[: len(text) - len(text.lstrip())]
    out: list[str] = []
    pending = ""  # leading punctuation of dropped words, moved to the next kept token
    for unit, token, dropped in zip(units, tokens, drop, strict=True):
        lead, _, tail = _split_punct(token)
        if dropped:
            pending += lead
            if out:
                out[-1] += tail
            continue
        space = unit[: len(unit) - len(token)] if out else leading
        out.append(space + pending + token)
        pending = ""
    return "".join(out) + text[len("".join(units)) :]


def _gap_fillers(token: str, following: str) -> tuple[str, ...]:
    """The fillers that fit between the tokens ``token`` and ``following``; () for none."""
    if token.endswith((".", "!", "?")):
        return SENTENCE_FILLERS
    if token.endswith((",", ";", ":")):
        return COMMA_FILLERS
    if not following[:1].isalpha() or not token[-1:].isalpha():
        return ()
    previous, word = token.lower(), following.lower()
    if previous in _BINDING or previous in FUNCTION_WORDS:
        return ()
    if word in _PHRASE_STARTS:
        return PHRASE_FILLERS
    if word in _HESITATION_STARTS:
        return HESITATIONS
    return ()


def _keeps_capital(word: str, text: str) -> bool:
    """Whether ``word`` keeps its capital after a sentence-opening filler.

    "I" and its contractions do, and so does a word capitalised elsewhere in ``text`` where
    no sentence starts (a name); other words are lower-cased ("Um, find me ...").
    """
    core = word.rstrip(".,;:!?")
    if re.fullmatch(r"I(?:['’]\w+)?", core) or (core[1:] and not core[1:].islower()):
        return True
    return re.search(rf"[^.!?\s]\s+{re.escape(core)}\b", text) is not None


def add_fillers(
    text: str, rng: random.Random, p: float = 0.3, most: int | None = MAX_FILLERS
) -> str:
    """Insert speech fillers where speakers hesitate: each such gap gets one with probability ``p``.

    Gaps that fit (see the module docstring) are drawn independently; when more than
    ``most`` are drawn, ``most`` of them are kept at random (``None``: no limit), and when
    none is drawn but some gap fits (and ``p > 0``), one of them gets a filler. After a
    sentence end the filler is capitalised and followed by a comma ("Um, find ..."), after a
    comma it is followed by one ("yes, um, ...").
    """
    _check_p(p)
    units = re.findall(r"\S+\s*", text)  # token + trailing whitespace
    tokens = [unit.rstrip() for unit in units]
    gaps = {i: _gap_fillers(tokens[i], tokens[i + 1]) for i in range(len(tokens) - 1)}
    fitting = [i for i, fillers in gaps.items() if fillers]
    chosen = [i for i in fitting if rng.random() < p]
    if fitting and not chosen and p > 0:
        chosen = [rng.choice(fitting)]
    if most is not None and len(chosen) > most:
        chosen = sorted(rng.sample(chosen, most))
    out = [text[: len(text) - len(text.lstrip())]]
    lower_next = False
    for i, unit in enumerate(units):
        token = tokens[i]
        out.append(token[:1].lower() + token[1:] if lower_next else token)
        lower_next = False
        if i in chosen:
            filler = rng.choice(gaps[i])
            if token.endswith((".", "!", "?")):
                filler = filler[0].upper() + filler[1:] + ","
                lower_next = not _keeps_capital(tokens[i + 1], text)
            elif token.endswith((",", ";", ":")):
                filler += ","
            out.append(" " + filler)
        out.append(unit[len(token) :])
    return "".join(out)
