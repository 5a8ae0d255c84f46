"""Tests for stellar.generators.llm with an in-memory fake chat model."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from stellar.errors import ModelError, StellarError
from stellar.features import FeatureSpace, load_feature_space, parse_feature_space
from stellar.generators.llm import LLMGenerator, render_prompt
from stellar.llm.base import Completion, Message
from stellar.records import TestInput
from stellar.text.perturbations import delete_words
from stellar.text.retrieval import load_examples

NAVI = Path(__file__).parents[2] / "src" / "stellar" / "usecases" / "navi"

SPACE = {
    "features": [
        {"name": "category", "kind": "content", "values": ["cafe", "bar", "hotel"]},
        {"name": "price", "kind": "content", "values": ["none", "low", "high"]},
        {"name": "slang", "kind": "style", "values": ["formal", "slangy"]},
        {"name": "noise", "kind": "perturbation", "values": ["none", "delete words", "fillers"]},
    ]
}
TEMPLATE = """\
content: {{ content }}
style: {{ style }}
guidelines: {{ guidelines | join(" / ") }}
few_shot: {{ few_shot | join(" / ") }}
examples: {{ examples | join(" / ") }}
"""
REPLY = "Please find me a cafe near the station with a place for the car."


class FakeModel:
    """Records the requests it gets and answers with canned replies, the last one repeated."""

    name = "fake:generator"
    role = "generator"

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies) or [REPLY]
        self.calls: list[dict[str, Any]] = []

    async def complete(
        self,
        messages: list[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        json_schema: dict[str, Any] | None = None,
        sample: int = 0,
    ) -> Completion:
        self.calls.append(
            {
                "messages": messages,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "seed": seed,
            }
        )
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        return Completion(text=reply, input_tokens=10, output_tokens=5)


@pytest.fixture
def space() -> FeatureSpace:
    return parse_feature_space(SPACE)


@pytest.fixture
def template(tmp_path: Path) -> Path:
    path = tmp_path / "user.j2"
    path.write_text(TEMPLATE, encoding="utf-8")
    return path


def make(space: FeatureSpace, template: Path, *replies: str | Exception, **options) -> LLMGenerator:
    return LLMGenerator(model=FakeModel(*replies), template=template, features=space, **options)


def candidate(space: FeatureSpace, **values):
    base = {"category": "cafe", "price": "none", "slang": "slangy", "noise": "none"}
    return space.candidate({**base, **values})


# ------------------------------------------------------------------------------ rendering


async def test_renders_content_style_guidelines_and_few_shot(space, template) -> None:
    gen = make(space, template, guidelines=["Be brief.", "No names."], few_shot=["Find a bar."])
    result = await gen.generate(candidate(space, noise="fillers"), random.Random(1))
    (call,) = gen.model.calls
    assert call["messages"] == [{"role": "user", "content": call["messages"][0]["content"]}]
    user = call["messages"][0]["content"]
    assert "content: {'category': 'cafe'}\n" in user  # price "none" is left out
    assert "style: {'slang': 'slangy'}\n" in user
    assert "guidelines: Be brief. / No names." in user
    assert "few_shot: Find a bar." in user
    assert "fillers" not in user and "noise" not in user
    assert result.prompt == f"user: {user}"
    assert call["temperature"] == 0.2 and call["max_tokens"] == 120


async def test_system_template_and_prompt_text(space, template, tmp_path) -> None:
    system = tmp_path / "system.j2"
    system.write_text("You write {{ features.category }} requests.\n", encoding="utf-8")
    gen = make(space, template, system=system, temperature=0.7, max_tokens=50)
    result = await gen.generate(candidate(space, price="low"), random.Random(1))
    messages = gen.model.calls[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == "You write cafe requests."
    assert result.prompt == render_prompt(messages)
    assert result.prompt.startswith("system: You write cafe requests.\n\nuser: content:")
    assert "'price': 'low'" in messages[1]["content"]
    assert gen.model.calls[0]["temperature"] == 0.7 and gen.model.calls[0]["max_tokens"] == 50


async def test_without_a_space_kinds_come_from_the_mapping(template) -> None:
    gen = LLMGenerator(model=FakeModel(), template=template, kinds={"slang": "style"})
    cand = parse_feature_space(SPACE).candidate(
        {"category": "bar", "price": "high", "slang": "formal", "noise": "none"}
    )
    await gen.generate(cand, random.Random(0))
    user = gen.model.calls[0]["messages"][0]["content"]
    # other features count as content, so noise "none" is left out
    assert "content: {'category': 'bar', 'price': 'high'}\n" in user
    assert "style: {'slang': 'formal'}\n" in user


async def test_rag_retrieves_the_nearest_examples(space, template, tmp_path) -> None:
    examples = tmp_path / "examples.yaml"
    examples.write_text(
        "- Where can I get a cold beer at a bar?\n"
        "- Book me a hotel room for tonight.\n"
        "- text: I need a coffee, any cafe will do.\n"
        "  features: {category: cafe}\n",
        encoding="utf-8",
    )
    gen = make(space, template, examples=examples, rag_k=1, embedder="hashing")
    assert gen.query(candidate(space)) == "category: cafe\nslang: slangy"
    await gen.generate(candidate(space), random.Random(0))
    user = gen.model.calls[0]["messages"][0]["content"]
    assert "examples: I need a coffee, any cafe will do." in user


# ------------------------------------------------------------------------------- answers


@pytest.mark.parametrize(
    "reply",
    [REPLY, f'"{REPLY}"', f"Sure! Here's the request:\n\n{REPLY}\n\nThis request is polite."],
)
async def test_answer_is_cleaned(space, template, reply) -> None:
    result = await make(space, template, reply).generate(candidate(space), random.Random(0))
    assert result.text == REPLY


async def test_empty_answer_gives_an_empty_input(space, template) -> None:
    result = await make(space, template, '""').generate(candidate(space), random.Random(0))
    assert isinstance(result, TestInput)
    assert result.text == ""
    assert result.prompt and result.prompt.startswith("user: content: {'category': 'cafe'}")


async def test_refusal_raises(space, template) -> None:
    gen = make(space, template, "I'm sorry, but I can't help with that request.")
    with pytest.raises(ValueError, match="generation refused: I'm sorry, but I can't"):
        await gen.generate(candidate(space), random.Random(0))


async def test_model_errors_propagate(space, template) -> None:
    gen = make(space, template, ModelError("fake:generator: rate limited"))
    with pytest.raises(ModelError, match="rate limited"):
        await gen.generate(candidate(space), random.Random(0))


# -------------------------------------------------------------------------- perturbation


async def test_perturbation_is_applied_after_generation(space, template) -> None:
    gen = make(space, template)
    result = await gen.generate(candidate(space, noise="delete words"), random.Random(7))
    rng = random.Random(7)
    assert gen.model.calls[0]["seed"] == rng.randrange(2**31)
    expected = delete_words(REPLY, rng)
    assert result.text == expected[:1].upper() + expected[1:]
    assert result.text != REPLY


async def test_perturbation_is_deterministic_for_a_seed(space, template) -> None:
    gen = make(space, template)
    # "delete words": the reply has no gap where a speaker would hesitate, so fillers fit nowhere
    cand = candidate(space, noise="delete words")
    texts = [(await gen.generate(cand, random.Random(seed))).text for seed in (3, 3, 4)]
    assert texts[0] == texts[1]
    assert texts[0] != REPLY
    assert gen.model.calls[0]["seed"] == gen.model.calls[1]["seed"] != gen.model.calls[2]["seed"]


async def test_perturbation_can_be_switched_off_or_mapped(space, template) -> None:
    off = make(space, template, perturb=False)
    result = await off.generate(candidate(space, noise="delete words"), random.Random(7))
    assert result.text == REPLY
    mapped = make(space, template, perturbations={"fillers": "typos"})
    typo = await mapped.generate(candidate(space, noise="fillers"), random.Random(7))
    assert len(typo.text) == len(REPLY) and typo.text != REPLY  # typos replace letters


def test_unknown_perturbation_is_rejected_when_built(template) -> None:
    data = {"features": [*SPACE["features"][:3], {**SPACE["features"][3], "values": ["blur"]}]}
    with pytest.raises(StellarError, match="'blur' names no operator"):
        make(parse_feature_space(data), template)


# ---------------------------------------------------------------------------- estimates


def test_planned_calls(space, template) -> None:
    gen = make(space, template, max_tokens=30)
    (call,) = gen.planned_calls(candidate(space))
    assert call.model == "fake:generator"
    assert call.role == "generator"
    assert call.input_tokens > 10
    assert call.output_tokens == 30
    assert gen.model.calls == []


# ------------------------------------------------------------------------------ templates


def test_missing_template(space, tmp_path) -> None:
    with pytest.raises(StellarError, match="file not found") as info:
        make(space, tmp_path / "nope.j2")
    assert "nope.j2" in str(info.value)


def test_syntax_error_names_template_and_line(space, tmp_path) -> None:
    bad = tmp_path / "bad.j2"
    bad.write_text("Hello\n{% for x in content %}\n{{ x }}\n", encoding="utf-8")
    with pytest.raises(StellarError, match=r"bad\.j2: line \d+") as info:
        make(space, bad)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_undefined_variable_fails_when_built(space, tmp_path) -> None:
    bad = tmp_path / "typo.j2"
    bad.write_text("{{ stlye }}", encoding="utf-8")
    with pytest.raises(StellarError, match=r"typo\.j2: 'stlye' is undefined"):
        make(space, bad)


async def test_undefined_variable_without_a_space_fails_when_generating(tmp_path) -> None:
    bad = tmp_path / "typo.j2"
    bad.write_text("{{ content.cuisine }}", encoding="utf-8")
    gen = LLMGenerator(model=FakeModel(), template=bad)
    cand = parse_feature_space(SPACE).candidate(
        {"category": "bar", "price": "high", "slang": "formal", "noise": "none"}
    )
    with pytest.raises(StellarError, match=r"typo\.j2: .*cuisine"):
        await gen.generate(cand, random.Random(0))


# ---------------------------------------------------------------------- navi use case


@pytest.fixture(scope="module")
def navi_space() -> FeatureSpace:
    return load_feature_space(NAVI / "features.yaml")


def test_navi_templates_render_for_random_candidates(navi_space) -> None:
    gen = LLMGenerator(
        model=FakeModel(),
        template=NAVI / "prompts" / "generator.j2",
        system=NAVI / "prompts" / "generator_system.j2",
        features=navi_space,
        examples=NAVI / "examples.yaml",
        embedder="hashing",
        guidelines=["Keep it under 40 words."],
        few_shot=["Find me a cheap bar."],
    )
    rng = random.Random(0)
    for _ in range(200):
        cand = navi_space.candidate(navi_space.random_values(rng))
        found = gen.index.nearest(gen.query(cand), gen.rag_k)
        system, user = gen.messages(cand, [e.text for e in found])
        assert "Keep it under 40 words." in system["content"]
        text = user["content"]
        assert "{{" not in text and "{%" not in text
        for name, value in cand.values.items():
            if navi_space[name].kind == "style":
                assert f'{name} "{value}"' in text
        left_out = text.split("Do not mention ")[1].split(":")[0] if "Do not" in text else ""
        for name in ("cuisine", "payment", "price", "rating", "parking"):
            assert (name in left_out) is (cand.values[name] == "none")
        assert f"a {cand.values['category'].replace('_', ' ')}" in text
        assert "word_perturbation" not in text
        assert "Find me a cheap bar." in text and found[0].text in text


def test_navi_examples_use_valid_features(navi_space) -> None:
    examples = load_examples(NAVI / "examples.yaml")
    assert len(examples) >= 50
    for example in examples:
        values = {**example.features, "word_perturbation": "none"}
        assert set(values) == set(navi_space.names), example.text
        for name, value in values.items():
            navi_space[name].index(value)  # raises for an invalid value
        assert navi_space.satisfies(values), example.text
    for name in ("category", "slang", "implicitness", "politeness", "anthropomorphism"):
        seen = {example.features[name] for example in examples}
        assert seen == set(navi_space[name].values), name
    cuisines = {e.features["cuisine"] for e in examples}
    assert cuisines == set(navi_space["cuisine"].values)
