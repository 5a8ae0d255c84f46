"""Reading a run configuration from YAML, with one-line errors (the model: config_schema.py).

A run configuration may name a ``use_case`` (a registered name or a folder
holding ``usecase.yaml``); the use case's file gives defaults and the run configuration
overrides them key by key. Relative paths are resolved against the file they appear in, and
Python modules next to either file can be named by dotted path (``my_sut:answer``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, SchemaError
from pydantic import BaseModel, ValidationError

from stellar.config_checks import checks_section
from stellar.config_schema import (
    PYTHON,
    AlgorithmConfig,
    BudgetConfig,
    Component,
    DuplicatesConfig,
    FitnessConfig,
    JudgeConfig,
    OracleConfig,
    RunConfig,
)
from stellar.config_sut import check_sut_data
from stellar.config_values import OFFLINE, parse_duration
from stellar.errors import ConfigError, StellarError
from stellar.llm.models import is_model_name, parse_model
from stellar.plugin_check import check_plugins
from stellar.registry import plugins, short_name
from stellar.usecase import DEFAULT_RUN, is_use_case, load_use_case, read_yaml
from stellar.yaml_loading import MAX_BYTES

LLM_PATHS = ("template", "system", "examples")
MODEL_OPTIONS = ("model", "llm")  # options naming a model: handed over as a ready client
COMPONENTS = ("generator", "sut")  # sections written as `type: NAME` or `target:`


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
    if not data:
        raise ConfigError(
            source,
            "",
            "the file is empty: give use_case: NAME, or features, generator, sut, "
            "fitness and oracle",
        )
    _resolve_paths(data, base, source)
    data.setdefault("import_paths", []).append(str(base))
    _algorithm_sections(data.get("algorithm"))
    use_case = None
    if not isinstance(data.get("use_case") or "", str):
        raise ConfigError(source, "use_case", "expected a use case: a registered name or a folder")
    if data.get("use_case"):
        use_case = load_use_case(str(data["use_case"]), base)
        defaults = use_case.settings
        _resolve_paths(defaults, use_case.folder, use_case.folder / "usecase.yaml")
        _algorithm_sections(defaults.get("algorithm"))
        defaults.setdefault("import_paths", []).append(str(use_case.folder))
        data = _merge(defaults, data)
        if str(data["use_case"]) not in plugins("usecase"):  # so that config.yaml reloads
            data["use_case"] = str(use_case.folder)
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
            _set_dotted(data, _option_key(data, dotted), value, source)
    _no_double_setting(overrides or {}, settings or {}, source)
    for dotted, value in (settings or {}).items():
        _set_dotted(data, _option_key(data, dotted), value, source)
    _algorithm_sections(data.get("algorithm"))
    _algorithm_features(data)
    if use_case is not None:
        _response_defaults(data, use_case.response)
    generator = data.get("generator")
    if isinstance(generator, dict) and generator.get("type") == "llm":  # --generator MODEL
        defaults = data.get("llm_generator", {})  # a use case may name its own model writer
        data["generator"] = {**defaults, **generator, "type": defaults.get("type", "llm")}
    given = data.get("usecase") or {}
    if not isinstance(given, dict):
        raise ConfigError(source, "usecase", "expected a mapping of use-case options")
    if given and use_case is None:
        raise ConfigError(source, "usecase", "options are set, but no use_case is named")
    data["usecase"] = use_case.option_values(given, source) if use_case else {}
    if "checks" in data:  # rules as configuration: they are the fitness and the oracle
        try:
            checks_section(data, data.get("features"))
        except ValueError as exc:
            where, _, message = str(exc).partition(": ")
            raise ConfigError(source, where, message) from None
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
    if use_case is not None:
        check_sut_data(config, use_case, source)
    if problem := folder_problem(config.out):
        raise ConfigError(source, "out", f"{config.out}: {problem}")
    if config.response_schema is not None:
        check_schema(config.response_schema)
    return config


def check_schema(path: Path) -> None:
    """The response schema is a readable JSON Schema (ConfigError naming the file if not)."""
    try:
        with path.open("rb") as file:
            schema = json.loads(file.read(MAX_BYTES + 1))
        Draft202012Validator.check_schema(schema)
    except FileNotFoundError:
        raise ConfigError(path, "", "file not found") from None
    except (OSError, ValueError) as exc:  # unreadable, not JSON (a JSONDecodeError)
        raise ConfigError(path, "", f"not a readable JSON file ({exc})") from None
    except SchemaError as exc:
        raise ConfigError(path, "", f"not a valid JSON Schema ({exc.message})") from None


def folder_problem(path: Path) -> str | None:
    """Why folders cannot be made under ``path`` (None: they can); nothing is written."""
    try:
        str(path).encode("utf-8")
        if path.exists() and not path.is_dir():
            return "exists and is not a folder"
        existing = next(p for p in (path.absolute(), *path.absolute().parents) if p.exists())
        if not existing.is_dir():
            return f"{existing} is not a folder"
        if not os.access(existing, os.W_OK | os.X_OK):
            return f"{existing} is not writable"
        if hasattr(os, "statvfs"):
            stats = os.statvfs(existing)
            if stats.f_flag & os.ST_RDONLY or stats.f_blocks == 0:  # 0 blocks: /proc, /sys
                return f"{existing} is on a file system that takes no folders"
    except UnicodeEncodeError:
        return "not valid UTF-8"
    except (OSError, ValueError) as exc:
        return f"cannot be used ({exc})"
    return None


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


def _option_key(data: dict[str, Any], dotted: str) -> str:
    """One name for a component's option: ``sut.url`` and ``sut.options.url`` both reach
    the option where the configuration keeps it (a saved config.yaml nests a component's
    options under ``options``; a hand-written one puts them beside ``type``), so the same
    ``--set`` works on ``run``, ``replay`` and a saved configuration alike."""
    name, _, rest = dotted.partition(".")
    section = data.get(name)
    if name not in COMPONENTS or not rest or not isinstance(section, dict):
        return dotted
    nested = isinstance(section.get("options"), dict) or section.get("type", "python") == "python"
    key = rest.removeprefix("options.")
    if key in ("type", "target", "options") or rest == "options":
        return dotted
    return f"{name}.options.{key}" if nested else f"{name}.{key}"


def _no_double_setting(overrides: dict[str, Any], settings: dict[str, Any], source: object) -> None:
    """Refuse a ``--set`` that sets, or replaces the section of, what an option also sets
    (``--tests 3 --set budget.tests=5``): one of the two would be ignored."""
    for given, value in overrides.items():
        if value is None:
            continue
        for dotted in settings:
            if given == dotted or given.startswith(dotted + "."):
                raise ConfigError(
                    source, dotted, f"--set and a command-line option both set {given}: give one"
                )


def _response_defaults(data: dict[str, Any], response: dict[str, Any]) -> None:
    """What the use case's fitness reads: its schema, and where an HTTP answer keeps it."""
    if response.get("schema"):
        data.setdefault("response_schema", response["schema"])
    sut = data.get("sut")
    if isinstance(sut, dict) and sut.get("type") == "http":
        given = sut.get("options") if isinstance(sut.get("options"), dict) else sut  # as dumped
        for key in ("answer", "data"):
            if response.get(key):
                given.setdefault(key, response[key])


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


def _algorithm_features(data: dict[str, Any]) -> None:
    """An algorithm's section may name its own feature file (the use case's ASTRAL set):
    the chosen algorithm's replaces ``features``; the others are dropped."""
    section = data.get("algorithm")
    if not isinstance(section, dict):
        return
    chosen = short_name(str(section.get("name") or "stellar"))
    for key, own in section.items():
        if isinstance(own, dict) and "features" in own:
            features = own.pop("features")
            if key == chosen:
                data["features"] = features


def _resolve_paths(data: dict[str, Any], base: Path, source: object) -> None:
    """Make paths absolute; give python components their default ``type``."""
    for key in ("features", "response_schema"):  # relative to the file that names them
        if isinstance(data.get(key), str):
            data[key] = str((base / data[key]).resolve())
    algorithm = data.get("algorithm")
    for own in algorithm.values() if isinstance(algorithm, dict) else ():
        if isinstance(own, dict) and isinstance(own.get("features"), str):
            own["features"] = str((base / own["features"]).resolve())
    paths = data.get("import_paths", [])
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ConfigError(source, "import_paths", "expected a list of folders")
    data["import_paths"] = [str((base / p).resolve()) for p in paths]
    for key in COMPONENTS:
        if isinstance(data.get(key), dict) and "target" in data[key]:
            data[key].setdefault("type", "python")
    for key in ("generator", "llm_generator"):
        section = data.get(key)
        if isinstance(section, dict) and (key == "llm_generator" or section.get("type") == "llm"):
            for name in LLM_PATHS:
                if isinstance(section.get(name), str):
                    section[name] = _resolved(base, section[name])


def _resolved(base: Path, value: str) -> str:
    """An absolute path; ``FORMAT:FILE`` (a registered data set reader) keeps its format."""
    fmt, colon, file = value.partition(":")
    if colon and fmt in plugins("dataset"):
        return f"{fmt}:{(base / file).resolve()}"
    return str((base / value).resolve())


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


# pydantic's wording, as a user reads it
_PLAIN = {
    r" or instance of \w+|^Value error, ": "",
    r"^Input is not a valid path.*": "expected a path",
    r"^Input should be a valid dictionary.*": "expected a mapping",
}


def _first_error(exc: ValidationError) -> tuple[str, str]:
    """(setting, problem) of the first error, and how many settings have others."""
    err = exc.errors()[0]
    loc = _setting(err["loc"])
    message = err["msg"]
    for pattern, plain in _PLAIN.items():
        message = re.sub(pattern, plain, message)
    if err["type"] == "missing":
        message = "required setting is missing"
    elif err["type"] == "extra_forbidden":
        message = f"unknown setting (settings here: {_known_keys(loc)})"
    more = len({tuple(_setting(e["loc"])) for e in exc.errors()}) - 1
    return ".".join(loc), message + (
        f" (and {more} more problem{'s' * (more > 1)})" if more else ""
    )


def _setting(loc: tuple[int | str, ...]) -> list[str]:
    """A location without pydantic's validator and union tags (``function-after[...]``)."""
    return [str(p) for p in loc if "[" not in str(p)]


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


__all__ = [
    "AlgorithmConfig",
    "BudgetConfig",
    "Component",
    "DuplicatesConfig",
    "FitnessConfig",
    "JudgeConfig",
    "OracleConfig",
    "RunConfig",
    "load_config",
    "model_names",
    "parse_duration",
]
