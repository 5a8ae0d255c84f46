"""Typed run configuration, loaded from YAML and validated with one-line errors.

A run configuration may name a ``use_case`` (a registered name or a folder
holding ``usecase.yaml``); the use case's file gives defaults and the run configuration
overrides them key by key. Relative paths are resolved against the file they appear in, and
Python modules next to either file can be named by dotted path (``my_sut:answer``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stellar.errors import ConfigError, StellarError
from stellar.llm.models import LLMSettings, is_model_name, parse_model
from stellar.plugin_check import check_plugins
from stellar.registry import plugins, short_name
from stellar.usecase import DEFAULT_RUN, is_use_case, load_use_case, read_yaml

OFFLINE = "offline"  # --generator/--sut offline: the use case's own component
LLM_PATHS = ("template", "system", "examples")
PYTHON = "python"  # a component named by target: module:attribute
MODEL_OPTIONS = ("model", "llm")  # options naming a model: handed over as a ready client
COMPONENTS = ("generator", "sut")  # sections written as `type: NAME` or `target:`


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AlgorithmConfig(BaseModel):
    """The search algorithm: its name, the population, and options per algorithm.

    Options of an algorithm other than the chosen one go in a section named after it
    (``stellar: {mutation: 0.1}``), so that ``compare`` hands each algorithm its own.
    """

    model_config = ConfigDict(extra="allow")

    name: str = Field("stellar", description="a registered algorithm or package.module:Class")
    population: int = Field(20, ge=1, description="population size k / batch size")

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
        return {"type": data["type"], "options": {k: v for k, v in data.items() if k != "type"}}


class FitnessConfig(Strict):
    target: str = Field(description="a registered fitness or judge, or package.module:attr")
    options: dict[str, Any] = Field(default_factory=dict)
    objectives: list[str] | None = Field(
        None, description="scores the search minimises; default: the oracle's thresholds"
    )


class JudgeConfig(Strict):
    """The LLM judge, for fitness functions that take one (``model: null``: offline)."""

    model: str | None = None
    votes: int = Field(1, ge=1, description="majority vote of this many samples (odd)")
    temperature: float = Field(0.0, ge=0, le=2)
    structured: bool = Field(True, description="ask for structured output where supported")
    max_tokens: int = Field(300, ge=1)

    @model_validator(mode="after")
    def odd_votes(self) -> JudgeConfig:
        if self.votes % 2 == 0:
            raise ValueError("votes must be odd, so that a majority exists")
        return self


class OracleConfig(Strict):
    below: dict[str, Annotated[float, Field(ge=0, le=1)]] | None = None
    target: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def one_kind(self) -> OracleConfig:
        if self.below is not None and self.target is not None:
            raise ValueError(
                "set either 'below' or 'target', not both (to replace an oracle: "
                "--set 'oracle={target: module:function}')"
            )
        if self.below is None and self.target is None:
            raise ValueError("give either 'below: {score: threshold}' or 'target: module:function'")
        return self


class BudgetConfig(Strict):
    tests: int | None = Field(200, ge=1, description="inputs sent to the system under test")
    time: float | None = Field(None, gt=0, description="wall time in seconds")
    cost: float | None = Field(None, gt=0, description="money in USD spent on model calls")
    max_discarded: int | None = Field(None, ge=0, description="default: 10 x tests, or 10,000")
    max_error_rate: float = Field(
        0.2, ge=0, le=1, description="more SUT or judge errors than this share: not healthy"
    )

    @property
    def discard_limit(self) -> int:
        if self.max_discarded is not None:
            return self.max_discarded
        return 10 * self.tests if self.tests else 10_000


class DuplicatesConfig(Strict):
    embedder: str = Field("minilm", description="minilm, hashing, or none to keep duplicates")
    threshold: float = Field(0.8, gt=0, le=1, description="cosine similarity counted as duplicate")


class RunConfig(Strict):
    name: str = "run"
    use_case: str | None = None
    features: Path
    algorithm: AlgorithmConfig = Field(default_factory=AlgorithmConfig)
    usecase: dict[str, Any] = Field(
        default_factory=dict, description="the use case's options (see stellar list usecase)"
    )
    generator: Component
    sut: Component
    fitness: FitnessConfig
    oracle: OracleConfig
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    duplicates: DuplicatesConfig = Field(default_factory=DuplicatesConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    llm_generator: dict[str, Any] = Field(
        default_factory=dict, description="the use case's settings for an LLM generator"
    )
    concurrency: int = Field(8, ge=1, description="tests run at the same time")
    sut_timeout: float = Field(60.0, gt=0, description="seconds before a SUT call is an error")
    max_input_chars: int = Field(2000, ge=1, description="longer generated inputs are invalid")
    seed: int = 0
    out: Path = Path("runs")
    import_paths: list[Path] = Field(default_factory=list, description="folders for user modules")

    @property
    def objectives(self) -> list[str]:
        if self.fitness.objectives:
            return self.fitness.objectives
        if self.oracle.below:
            return list(self.oracle.below)
        raise ValueError("set fitness.objectives: the oracle has no named thresholds")


def load_config(
    path: str | Path | None,
    overrides: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
) -> RunConfig:
    """Read a run configuration (or the built-in default when ``path`` is None).

    ``path`` may also name a use case (a registered name or a folder with usecase.yaml).
    ``overrides`` are command-line options (None: not given); ``settings`` are ``--set``
    values, applied last, where None (YAML ``null``) clears a setting. Every plugin the
    configuration names is found and its options checked before this returns.
    """
    source = Path(path) if path is not None else Path("<default configuration>")
    if path is not None and is_use_case(str(path)):  # `stellar run shop/`: the use case alone
        data: dict[str, Any] = {"use_case": str(path)}
        base = Path.cwd()
    else:
        data = read_yaml(source if path is not None else DEFAULT_RUN)
        base = source.resolve().parent if path is not None else Path.cwd()
    _resolve_paths(data, base)
    data.setdefault("import_paths", []).append(str(base))
    _algorithm_sections(data.get("algorithm"))
    use_case = None
    if data.get("use_case"):
        use_case = load_use_case(str(data["use_case"]), base)
        defaults = use_case.settings
        _resolve_paths(defaults, use_case.folder)
        _algorithm_sections(defaults.get("algorithm"))
        defaults.setdefault("import_paths", []).append(str(use_case.folder))
        data = _merge(defaults, data)
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        current = data.get(dotted)
        if value == OFFLINE and dotted in COMPONENTS:
            if use_case is None or dotted not in use_case.settings:
                raise ConfigError(source, dotted, "no use case gives an offline default")
            data[dotted] = use_case.settings[dotted]
        elif isinstance(value, dict) and isinstance(current, dict) and _same_type(current, value):
            data[dotted] = {**current, **value}  # another model, same prompts and settings
        else:
            _set_dotted(data, dotted, value, source)
    for dotted, value in (settings or {}).items():
        _set_dotted(data, dotted, value, source)
    _algorithm_sections(data.get("algorithm"))
    generator = data.get("generator")
    if isinstance(generator, dict) and generator.get("type") == "llm":
        data["generator"] = {**data.get("llm_generator", {}), **generator}
    given = data.get("usecase") or {}
    if not isinstance(given, dict):
        raise ConfigError(source, "usecase", "expected a mapping of use-case options")
    if given and use_case is None:
        raise ConfigError(source, "usecase", "options are set, but no use_case is named")
    data["usecase"] = use_case.option_values(given, source) if use_case else {}
    try:
        config = RunConfig.model_validate(data)
        config.objectives  # noqa: B018 - validates that objectives can be named
    except ValidationError as exc:
        raise ConfigError(source, *_first_error(exc)) from None
    except ValueError as exc:
        raise ConfigError(source, "fitness.objectives", str(exc)) from None
    for where, name in model_names(config):
        parse_model(name, f"{source}: {where}")
    for folder in config.import_paths:
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    try:
        check_plugins(config)
    except StellarError as exc:
        raise StellarError(f"{source}: {exc}") from None
    return config


def model_names(config: RunConfig) -> list[tuple[str, str]]:
    """(setting, model name) of every model the configuration uses."""
    names = []
    for role in COMPONENTS:
        component: Component = getattr(config, role)
        for key in MODEL_OPTIONS:
            value = component.options.get(key)
            if isinstance(value, str) and is_model_name(value):
                names.append((f"{role}.{'options.' * (component.type == PYTHON)}{key}", value))
    if config.judge.model:
        names.append(("judge.model", config.judge.model))
    return names


def sut_setting(text: str) -> dict[str, Any] | str:
    """``--sut``: a model name, an http(s) URL, ``module:function`` or ``offline``."""
    if text == OFFLINE:
        return OFFLINE
    if is_model_name(text):
        return {"type": "chat", "model": text}
    if text.startswith(("http://", "https://")):
        return {"type": "http", "url": text}
    if ":" in text or "." in text:
        return {"type": "python", "target": text}
    raise ValueError(
        f"{text!r} is not a system under test: give a model (openai:gpt-4o-mini), "
        "an http(s) URL, module:function, or offline"
    )


def _algorithm_sections(section: Any) -> None:
    """Flat algorithm options belong to the named algorithm: move them into its section."""
    if not isinstance(section, dict):
        return
    key = short_name(str(section.get("name") or "stellar"))
    sections = {"name", "population", *plugins("algorithm")}
    flat = [k for k, v in section.items() if k not in sections and not isinstance(v, dict)]
    if flat:
        own = section.setdefault(key, {})
        if not isinstance(own, dict):
            return
        for k in flat:
            own[k] = section.pop(k)


def _resolve_paths(data: dict[str, Any], base: Path) -> None:
    """Make paths absolute; give python components their default ``type``."""
    if isinstance(data.get("features"), str):
        data["features"] = str((base / data["features"]).resolve())
    paths = data.get("import_paths", [])
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, list):
        raise ConfigError(base, "import_paths", "expected a list of folders")
    data["import_paths"] = [str((base / p).resolve()) for p in paths]
    for key in COMPONENTS:
        if isinstance(data.get(key), dict) and "target" in data[key]:
            data[key].setdefault("type", "python")
    for key in ("generator", "llm_generator"):
        section = data.get(key)
        if isinstance(section, dict) and (key == "llm_generator" or section.get("type") == "llm"):
            for name in LLM_PATHS:
                if isinstance(section.get(name), str):
                    section[name] = str((base / section[name]).resolve())


def _merge(defaults: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    out = dict(defaults)
    for key, value in overrides.items():
        if key == "import_paths":
            out[key] = [*defaults.get(key, []), *value]
        elif isinstance(value, dict) and isinstance(out.get(key), dict) and "type" not in value:
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _set_dotted(data: dict[str, Any], dotted: str, value: Any, source: object) -> None:
    component, _, key = dotted.partition(".")
    current = data.get(component)
    if (
        component in COMPONENTS
        and key == "type"
        and isinstance(current, dict)
        and current.get("type", PYTHON) != value
    ):
        data[component] = {"type": value}  # another kind of component starts afresh
        return
    *parents, last = dotted.split(".")
    for depth, key in enumerate(parents):
        if data.get(key) is None:
            data[key] = {}
        if not isinstance(data[key], dict):
            raise ConfigError(source, ".".join(parents[: depth + 1]), "expected a mapping")
        data = data[key]
    data[last] = value


def _same_type(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Another model for the same kind of component (keeps its prompts and settings)."""
    return "model" in b and a.get("type") == b.get("type")


def _first_error(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"] if not str(p).startswith("function-after")]
    where = ".".join(loc)
    message = re.sub(r" or instance of \w+|^Value error, ", "", err["msg"])
    if err["type"] == "missing":
        message = "required setting is missing"
    elif err["type"] == "extra_forbidden":
        message = f"unknown setting (settings here: {_known_keys(loc)})"
    more = len(exc.errors()) - 1
    return where, message + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")


def _known_keys(loc: list[str]) -> str:
    """The settings of the section that holds ``loc``."""
    model: type[BaseModel] = RunConfig
    for key in loc[:-1]:
        field = model.model_fields.get(key)
        if field is None or not (
            isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
        ):
            return "see docs"
        model = field.annotation
    return ", ".join(model.model_fields)


def parse_duration(text: str) -> float:
    """'90', '90s', '15m', '2h' -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if not match:
        raise ValueError(f"not a duration: {text!r} (use 90, 90s, 15m or 2h)")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
