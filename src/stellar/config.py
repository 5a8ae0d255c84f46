"""Typed run configuration, loaded from YAML and validated with one-line errors.

A run configuration may name a ``use_case`` (a built-in name such as ``navi`` or a folder
holding ``usecase.yaml``); the use case's file gives defaults and the run configuration
overrides them key by key. Relative paths are resolved against the file they appear in, and
Python modules next to either file can be named by dotted path (``my_sut:answer``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stellar.errors import ConfigError
from stellar.llm.client import LLMSettings
from stellar.llm.models import is_model_name, parse_model

BUILTIN_USE_CASES = Path(__file__).parent / "usecases"
USE_CASE_FILE = "usecase.yaml"
OFFLINE = "offline"  # --generator/--sut offline: the use case's own component
LLM_PATHS = ("template", "system", "examples")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AlgorithmConfig(Strict):
    name: str = Field(
        "stellar", description="stellar, random, twise, astral, or package.module:Class"
    )
    population: int = Field(20, ge=1, description="population size k / batch size")
    crossover: float = Field(0.7, ge=0, le=1, description="crossover probability thX")
    mutation: float = Field(0.07, ge=0, le=1, description="per-feature mutation probability thM")
    eta_crossover: float = Field(15.0, gt=0)
    eta_mutation: float = Field(20.0, gt=0)
    strength: int = Field(4, ge=1, description="twise: strength t of the covering array")
    cells: list[str] | None = Field(
        None, description="astral: features whose value combinations are the cells"
    )
    per_cell: int = Field(1, ge=1, description="astral: tests per cell (rounds)")


class TemplateGeneratorConfig(Strict):
    type: Literal["template"]
    templates: list[str] = Field(min_length=1)


class LLMGeneratorConfig(Strict):
    """A model writes each input from a Jinja2 prompt (use cases give the defaults)."""

    type: Literal["llm"]
    model: str
    template: Path
    system: Path | None = None
    examples: Path | None = Field(None, description="example inputs retrieved as references")
    rag_k: int = Field(3, ge=0, description="retrieved examples per prompt")
    few_shot: list[str] = Field(default_factory=list)
    guidelines: list[str] = Field(default_factory=list)
    temperature: float = Field(0.2, ge=0, le=2)
    max_tokens: int = Field(120, ge=1)
    perturb: bool = Field(True, description="apply the perturbation features after generation")
    embedder: str = Field("minilm", description="embeds the examples for retrieval")
    perturbations: dict[str, str] = Field(
        default_factory=dict, description="perturbation value -> operator name"
    )


class ChatSUTConfig(Strict):
    """A chat model is the system under test."""

    type: Literal["chat"]
    model: str
    system_prompt: str | None = None
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(512, ge=1)


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


class PythonComponent(Strict):
    type: Literal["python"] = "python"
    target: str
    options: dict[str, Any] = Field(default_factory=dict)


class HttpSUTConfig(Strict):
    type: Literal["http"]
    url: str
    method: Literal["POST", "PUT"] = "POST"
    body: Any = None
    answer: str = "$.answer"
    data: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(30.0, gt=0)


GeneratorConfig = Annotated[
    TemplateGeneratorConfig | LLMGeneratorConfig | PythonComponent, Field(discriminator="type")
]
SUTConfig = Annotated[HttpSUTConfig | ChatSUTConfig | PythonComponent, Field(discriminator="type")]


class FitnessConfig(PythonComponent):
    objectives: list[str] | None = Field(
        None, description="scores the search minimises; default: the oracle's thresholds"
    )


class OracleConfig(Strict):
    below: dict[str, float] | None = None
    target: str | None = None

    @model_validator(mode="after")
    def one_kind(self) -> OracleConfig:
        if (self.below is None) == (self.target is None):
            raise ValueError("give either 'below: {score: threshold}' or 'target: module:function'")
        return self


class BudgetConfig(Strict):
    tests: int | None = Field(200, ge=1, description="inputs sent to the system under test")
    time: float | None = Field(None, gt=0, description="wall time in seconds")
    cost: float | None = Field(None, gt=0, description="money in USD spent on model calls")
    max_discarded: int | None = Field(None, ge=0, description="default: 10 x tests, or 10,000")

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
    generator: GeneratorConfig
    sut: SUTConfig
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

    ``overrides`` are command-line options (None: not given); ``settings`` are ``--set``
    values, applied last, where None (YAML ``null``) clears a setting.
    """
    if path is None:
        data: dict[str, Any] = {"use_case": "navi"}
        source: Path = Path("<default configuration>")
        base = Path.cwd()
    else:
        source = Path(path)
        data = _read_yaml(source)
        base = source.resolve().parent
    _resolve_paths(data, base)
    data.setdefault("import_paths", []).append(str(base))
    use_case: dict[str, Any] = {}
    if data.get("use_case"):
        use_case = _load_use_case(str(data["use_case"]), base)
        data = _merge(use_case, data)
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        current = data.get(dotted)
        if value == OFFLINE and dotted in ("generator", "sut"):
            if dotted not in use_case:
                raise ConfigError(source, dotted, "no use case gives an offline default")
            data[dotted] = use_case[dotted]
        elif isinstance(value, dict) and isinstance(current, dict) and _same_type(current, value):
            data[dotted] = {**current, **value}  # another model, same prompts and settings
        else:
            _set_dotted(data, dotted, value, source)
    for dotted, value in (settings or {}).items():
        _set_dotted(data, dotted, value, source)
    generator = data.get("generator")
    if isinstance(generator, dict) and generator.get("type") == "llm":
        data["generator"] = {**data.get("llm_generator", {}), **generator}
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
    return config


def model_names(config: RunConfig) -> list[tuple[str, str]]:
    """(setting, model name) of every model the configuration uses."""
    names = []
    if config.generator.type == "llm":
        names.append(("generator.model", config.generator.model))
    if config.sut.type == "chat":
        names.append(("sut.model", config.sut.model))
    elif config.sut.type == "python" and isinstance(config.sut.options.get("llm"), str):
        names.append(("sut.options.llm", config.sut.options["llm"]))
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


def use_case_dir(name: str, base: Path) -> Path:
    """A built-in use case by name, or a folder (relative to ``base``)."""
    candidate = BUILTIN_USE_CASES / name
    if re.fullmatch(r"[a-z_]+", name) and (candidate / USE_CASE_FILE).exists():
        return candidate
    folder = (base / name).resolve()
    if not (folder / USE_CASE_FILE).exists():
        builtin = sorted(
            p.name for p in BUILTIN_USE_CASES.iterdir() if (p / USE_CASE_FILE).exists()
        )
        raise ConfigError(
            name,
            "",
            f"no such use case (built-in: {', '.join(builtin) or 'none'}; "
            f"or a folder with {USE_CASE_FILE})",
        )
    return folder


def _load_use_case(name: str, base: Path) -> dict[str, Any]:
    folder = use_case_dir(name, base)
    data = _read_yaml(folder / USE_CASE_FILE)
    _resolve_paths(data, folder)
    data.setdefault("name", folder.name)
    data.setdefault("import_paths", []).append(str(folder))
    return data


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(path, "", "file not found") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(path, "", f"not valid YAML{where}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(path, "", "expected a mapping of settings")
    return data


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
    for key in ("generator", "sut"):
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
    loc = [str(p) for p in err["loc"] if not str(p).startswith(("function-after", "tagged"))]
    if len(loc) > 2 and loc[0] in ("generator", "sut"):
        del loc[1]  # the component type pydantic adds: "generator.llm.template"
    where = ".".join(loc)
    message = err["msg"]
    if err["type"] == "missing":
        message = "required setting is missing"
    elif err["type"] == "extra_forbidden":
        message = "unknown setting"
    more = len(exc.errors()) - 1
    return where, message + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")


def parse_duration(text: str) -> float:
    """'90', '90s', '15m', '2h' -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if not match:
        raise ValueError(f"not a duration: {text!r} (use 90, 90s, 15m or 2h)")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
