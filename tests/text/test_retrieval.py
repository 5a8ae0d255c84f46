"""Tests for stellar.text.retrieval."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from stellar.errors import ConfigError
from stellar.text.retrieval import Example, ExampleIndex, load_examples

TEXTS = [
    "Take me to a cheap Italian restaurant.",
    "Where is the nearest hospital?",
    "Find a hotel with parking.",
    "I need a coffee right now.",
]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_yaml_strings_and_mappings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "examples.yaml",
        "- Find a bar.\n- text: Find a cafe.\n  features: {category: cafe}\n",
    )
    assert load_examples(path) == [
        Example("Find a bar."),
        Example("Find a cafe.", {"category": "cafe"}),
    ]


def test_jsonl_and_txt(tmp_path: Path) -> None:
    lines = [json.dumps("Find a bar."), "", json.dumps({"text": "Find a cafe.", "features": {}})]
    jsonl = write(tmp_path, "examples.jsonl", "\n".join(lines))
    assert [e.text for e in load_examples(jsonl)] == ["Find a bar.", "Find a cafe."]
    txt = write(tmp_path, "examples.txt", "Find a bar.\n\n  Find a cafe.  \n")
    assert [e.text for e in load_examples(txt)] == ["Find a bar.", "Find a cafe."]


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("a.yaml", "text: not a list\n", "expected a list"),
        ("a.yaml", "- [1, 2]\n", r"\[0\]: expected a string or a mapping"),
        ("a.yaml", "- text: ''\n", r"\[0\].text: expected a non-empty string"),
        ("a.yaml", "- ok\n- text: fine\n  features: [a]\n", r"\[1\].features: expected a mapping"),
        ("a.yaml", "- text: fine\n  label: x\n", r"\[0\].label: unknown key"),
        ("a.yaml", "- a: [\n", "not valid YAML"),
        ("a.yaml", "[]\n", "no examples"),
        ("a.jsonl", '"ok"\n{"text": \n', "line 2: not valid JSON"),
        ("a.txt", "\n\n", "no examples"),
        ("a.csv", "text\nFind a bar\n", "unsupported example file"),
    ],
)
def test_malformed_files(tmp_path: Path, name: str, content: str, problem: str) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(ConfigError, match=problem) as info:
        load_examples(path)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found") as info:
        ExampleIndex(tmp_path / "nope.yaml", embedder="hashing")
    assert "nope.yaml" in str(info.value)


def test_nearest_ranks_by_similarity() -> None:
    index = ExampleIndex(TEXTS, embedder="hashing")
    assert len(index) == len(TEXTS)
    best = index.nearest("take me to a cheap italian restaurant", 2)
    assert best[0].text == TEXTS[0]
    assert len(best) == 2
    assert sorted(e.text for e in index.nearest("anything", 10)) == sorted(TEXTS)
    assert index.nearest("anything", 0) == []


def test_ties_keep_file_order() -> None:
    index = ExampleIndex(["Find a bar.", "Find a cafe.", "Find a bar.", "Find a bar."], "hashing")
    found = index.nearest("Find a bar.", 3)
    assert [e.text for e in found] == ["Find a bar."] * 3
    assert [id(e) for e in found] == [id(index.examples[i]) for i in (0, 2, 3)]


def test_embeds_lazily_and_once() -> None:
    class Counting:
        dim = 2

        def __init__(self) -> None:
            self.calls: list[list[str]] = []

        def embed(self, texts: list[str]) -> np.ndarray:
            self.calls.append(list(texts))
            return np.array([[1.0, 0.0] if "bar" in t else [0.0, 1.0] for t in texts], "float32")

    embedder = Counting()
    index = ExampleIndex(["Find a cafe.", "Find a bar."], embedder=embedder)
    assert embedder.calls == []
    assert index.nearest("a bar please", 1)[0].text == "Find a bar."
    assert index.nearest("a cafe please", 1)[0].text == "Find a cafe."
    assert embedder.calls == [["Find a cafe.", "Find a bar."], ["a bar please"], ["a cafe please"]]


def test_minilm_finds_the_semantically_closest_example() -> None:
    pytest.importorskip("sentence_transformers")
    index = ExampleIndex(
        [
            "Take me to a museum with old paintings.",
            "I'm starving, I could eat a horse.",
            "My engine is making a weird noise.",
            "We need a bed for tonight.",
        ]
    )
    assert index.nearest("find a restaurant, I am very hungry", 1)[0].text.startswith(
        "I'm starving"
    )
    assert index.nearest("I need a hotel room", 1)[0].text == "We need a bed for tonight."
