"""The typed run configuration: one pydantic model per section, validated with one-line errors.

``config.py`` reads it from YAML (use cases, overrides, paths); ``plugin_check.py`` checks the
plugins it names.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from stellar.config_values import (
    MAX_CONCURRENCY,
    MAX_POPULATION,
    MAX_REPEATS,
    MAX_SEED,
    parse_duration,
)
from stellar.features import FeatureSpace, parse_feature_space
from stellar.llm.models import LLMSettings
from stellar.registry import plugins, short_name
from stellar.yaml_loading import read_yaml_file

PYTHON = "python"  # a component named by target: module:attribute
_NOT_A_NAME = re.compile(r"[/\\\x00-\x1f\x7f]|\.\.|^\s|\s$")  # separators, controls, ..


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AlgorithmConfig(BaseModel):
    """The search algorithm: its name, the population, and options per algorithm.

    Options of an algorithm other than the chosen one go in a section named after it
    (``stellar: {mutation: 0.1}``), so that ``compare`` hands each algorithm its own.
    """

    model_config = ConfigDict(extra="allow")

    name: str = Field("stellar", description="a registered algorithm or package.module:Class")
    population: int = Field(
        20, ge=1, le=MAX_POPULATION, description="population size k / batch size"
    )

    @model_validator(mode="after")
    def sections_are_mappings(self) -> AlgorithmConfig:
        for key, value in (self.model_extra or {}).items():
            if not isinstance(value, dict):
                raise ValueError(
                    f"{key!r} must be a mapping: the options of algorithm {key!r}"
                    if key in plugins("algorithm")
                    else f"{key!r} is not an option of every algorithm; options of one "
                    f"algorithm go in its section, e.g. algorithm.{short_name(self.name)}.{key}"
                )
        return self

    def options(self, name: str | None = None) -> dict[str, Any]:
        """The options of algorithm ``name`` (default: the chosen one)."""
        section = (self.model_extra or {}).get(short_name(name or self.name)) or {}
        return {"population": self.population, **section}


class Component(Strict):
    """A plugin and its options: ``type: NAME`` with the options written beside it, or
    ``type: python`` (the default) with ``target: module:attribute`` and ``options:``."""

    type: str = "python"
    target: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @property
    def plugin(self) -> str:
        return self.target if self.type == PYTHON and self.target else self.type

    @model_validator(mode="before")
    @classmethod
    def inline_options(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if data.get("type", PYTHON) == PYTHON:
            if "target" not in data:
                raise ValueError("give 'type: NAME' or 'target: package.module:attribute'")
            return data
        if set(data) <= {"type", "target", "options"} and data.get("target") is None:
            return {"type": data["type"], "options": data.get("options") or {}}  # as dumped
        return {"type": data["type"], "options": {k: v for k, v in data.items() if k != "type"}}


class FitnessConfig(Strict):
    target: str = Field(description="a registered fitness or judge, or package.module:attr")
    options: dict[str, Any] = Field(default_factory=dict)
    objectives: list[str] | None = Field(
        None, description="scores the search minimises; default: the oracle's thresholds"
    )
    descriptions: dict[str, str] = Field(
        default_factory=dict, description="what each score means, shown in the report"
    )


class JudgeConfig(Strict):
    """The LLM judge, for fitness functions that take one (``model: null``: offline)."""

    model: str | None = None
    votes: int = Field(1, ge=1, le=99, description="majority vote of this many samples (odd)")
    temperature: float = Field(0.0, ge=0, le=2)
    structured: bool = Field(True, description="ask for structured output where supported")
    max_tokens: int = Field(300, ge=1)
    corrections: str | None = Field(
        None,
        description="a label file of a person's corrections (a review's marks, a label "
        "store), the nearest to each answer shown to the judge as examples",
    )
    corrections_shown: int = Field(4, ge=0, le=8, description="examples per answer judged")

    @model_validator(mode="after")
    def odd_votes(self) -> JudgeConfig:
        if self.votes % 2 == 0:
            raise ValueError("votes must be odd, so that a majority exists")
        return self


Thresholds = dict[str, Annotated[float, Field(ge=0, le=1)]]


class PostSearchConfig(Strict):
    """A second judge that scores every executed test after the search; its thresholds
    decide the failures (the paper's SafeQA: a binary judge after a continuous one)."""

    target: str = Field(description="a registered fitness or judge, or package.module:attr")
    options: dict[str, Any] = Field(default_factory=dict)
    below: Thresholds = Field(description="failure when one of these scores is below")
    descriptions: dict[str, str] = Field(
        default_factory=dict, description="what each score means, shown in the report"
    )
    concurrency: int | None = Field(
        None, ge=1, le=MAX_CONCURRENCY, description="default: the run's concurrency"
    )

    @field_validator("below")
    @classmethod
    def some_threshold(cls, below: Thresholds) -> Thresholds:
        if not below:
            raise ValueError("needs at least one threshold")
        return below


class OracleConfig(Strict):
    below: Thresholds | None = None
    target: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    post_search: PostSearchConfig | None = Field(
        None, description="judge every executed test again after the search (stellar judge)"
    )

    @model_validator(mode="after")
    def one_kind(self) -> OracleConfig:
        if self.below is not None and self.target is not None:
            raise ValueError(
                "set either 'below' or 'target', not both (to replace an oracle: "
                "--set 'oracle={target: module:function}')"
            )
        if self.below is None and self.target is None:
            raise ValueError("give either 'below: {score: threshold}' or 'target: module:function'")
        if self.below is not None and not self.below:
            raise ValueError("'below' needs at least one threshold: {score: threshold}")
        return self


class BudgetConfig(Strict):
    tests: int | None = Field(200, ge=1, description="inputs sent to the system under test")
    time: float | None = Field(None, gt=0, description="wall time: seconds, or 90s, 15m, 2h")
    cost: float | None = Field(None, gt=0, description="money in USD spent on model calls")
    max_discarded: int | None = Field(None, ge=0, description="default: 10 x tests, or 10,000")
    max_error_rate: float = Field(
        0.2, ge=0, le=1, description="more SUT or judge errors than this share: not healthy"
    )

    @field_validator("time", mode="before")
    @classmethod
    def duration(cls, value: Any) -> Any:
        return parse_duration(value) if isinstance(value, str) else value

    @property
    def discard_limit(self) -> int:
        if self.max_discarded is not None:
            return self.max_discarded
        return 10 * self.tests if self.tests else 10_000


class DuplicatesConfig(Strict):
    embedder: str = Field(
        "minilm-int8", description="minilm-int8, minilm, hashing, or none to keep duplicates"
    )
    threshold: float = Field(0.8, gt=0, le=1, description="cosine similarity counted as duplicate")


class ProbeConfig(Strict):
    """The memory probe of a conversation run: the last answer must hold ``expect``."""

    turns: list[str] = Field(
        default_factory=lambda: [
            "Please remember that my favourite colour is teal.",
            "What is my favourite colour?",
        ],
        min_length=2,
        description="the turns sent, in one conversation",
    )
    expect: str = Field("teal", min_length=1, description="a word the last answer must hold")
    enabled: bool = Field(True, description="false: skip the probe")


class RunConfig(Strict):
    name: str = "run"
    use_case: str | None = None
    features: Path | dict[str, Any] | list[Any] = Field(
        description="a feature file, or the feature space written inline"
    )
    algorithm: AlgorithmConfig = Field(default_factory=AlgorithmConfig)
    response_schema: Path | None = Field(
        None, description="JSON Schema every answer's data must fit (the use case's)"
    )
    usecase: dict[str, Any] = Field(
        default_factory=dict, description="the use case's options (see stellar list usecase)"
    )
    generator: Component
    sut: Component
    fitness: FitnessConfig
    oracle: OracleConfig
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    duplicates: DuplicatesConfig = Field(default_factory=DuplicatesConfig)
    probe: ProbeConfig = Field(
        default_factory=ProbeConfig,
        description="conversations: a memory check of the system before the search",
    )
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    llm_generator: dict[str, Any] = Field(
        default_factory=dict, description="the use case's settings for an LLM generator"
    )
    concurrency: int = Field(8, ge=1, le=MAX_CONCURRENCY, description="tests run at the same time")
    generations_in_flight: int | None = Field(
        None,
        ge=1,
        le=MAX_CONCURRENCY,
        description="generations asked before the oldest is told its scores (default: enough "
        "to keep `concurrency` tests busy under slow calls: 1 (generational) while population >= "
        "2 x concurrency, else ceil(8 x concurrency / population), at most a quarter of the "
        "generations the test budget allows)",
    )
    repeats: int = Field(
        1,
        ge=1,
        le=MAX_REPEATS,
        description="each test sent this many times, each in a fresh session: it fails when "
        "any repeat fails; the summary gives pass^k (docs/agents.md)",
    )
    sut_timeout: float = Field(60.0, gt=0, description="seconds before a SUT call is an error")
    max_input_chars: int = Field(2000, ge=1, description="longer generated inputs are invalid")
    max_answer_chars: int = Field(
        1_000_000, ge=1, description="longer answers are cut to this length and flagged"
    )
    seed: int = Field(0, ge=0, le=MAX_SEED)
    out: Path = Path("runs")
    import_paths: list[Path] = Field(default_factory=list, description="folders for user modules")

    @field_validator("features", mode="before")
    @classmethod
    def feature_source(cls, value: Any) -> Any:
        """A path, a mapping or a list: anything else is told plainly, not as a union."""
        if not isinstance(value, str | Path | dict | list):
            raise ValueError(
                "expected a feature file (a path) or the feature space written inline "
                f"(a mapping or a list), got {type(value).__name__} {repr(value)[:40]}"
            )
        return value

    @field_validator("name")
    @classmethod
    def plain_name(cls, name: str) -> str:
        """A run name names folders under ``out``: no path, no way out of it."""
        if not name or len(name) > 100 or _NOT_A_NAME.search(name):
            raise ValueError(
                "a run name must be a plain name of 1 to 100 characters: no '/', '\\', "
                "'..', control characters or surrounding spaces"
            )
        return name

    def feature_space(self) -> FeatureSpace:
        """The feature space, from its file or written inline."""
        if isinstance(self.features, Path):
            return parse_feature_space(read_yaml_file(self.features), source=self.features)
        inline = {"features": self.features} if isinstance(self.features, list) else self.features
        return parse_feature_space(inline, source="features")

    @property
    def objectives(self) -> list[str]:
        if self.fitness.objectives:
            return self.fitness.objectives
        if self.oracle.below:
            return list(self.oracle.below)
        raise ValueError("set fitness.objectives: the oracle has no named thresholds")
