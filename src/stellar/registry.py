"""One registry for every kind of plugin: built-ins and third-party ones register the same way.

A plugin is a class, function or module named by a Python entry point in the group
``stellar.<kind>`` (built-ins are declared in STELLAR's own ``pyproject.toml``), or by a
dotted path ``package.module:attribute`` written in a configuration. Each plugin's options
are a pydantic model: the plugin's own ``Options`` class when it declares one, otherwise one
derived from its signature. Options are validated when the configuration is read, so a
misspelt option is a one-line error naming the plugin and the option.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from dataclasses import dataclass
from importlib.metadata import EntryPoints, entry_points
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from stellar.errors import StellarError

KINDS = {
    "algorithm": "search algorithms (ask/tell)",
    "generator": "turn a candidate into a test input",
    "sut": "systems under test",
    "fitness": "score an answer (0 bad .. 1 good)",
    "judge": "LLM judges usable as fitness (the model and votes: the judge: section)",
    "oracle": "turn scores into a verdict",
    "embedder": "sentence embedders (duplicates, retrieval, diversity)",
    "perturbation": "text perturbation operators",
    "dataset": "readers of public data set files as example inputs (examples: NAME:FILE)",
    "usecase": "features, components and options of a kind of application (usecase.yaml)",
}
# Objects the framework hands to a plugin itself; they are never user options.
RUNTIME = frozenset({"space", "features", "n_objectives", "seed", "failing", "judge", "self"})
# Leading positional arguments of a plugin that is a plain function, by kind.
CALL_ARGS = {
    "dataset": 1,
    "generator": 2,
    "sut": 1,
    "fitness": 3,
    "judge": 3,
    "oracle": 1,
    "perturbation": 2,
}
# Keyword arguments of each call, by kind: a system under test's earlier turns.
CALL_KEYWORDS = {"sut": frozenset({"history"})}


@dataclass(frozen=True)
class Plugin:
    """A registered or dotted-path plugin of one kind."""

    kind: str
    name: str
    target: str  # package.module:attribute

    def load(self) -> Any:
        return _load(self.target, f"{self.kind} {self.name!r}")

    @property
    def description(self) -> str:
        doc = inspect.getdoc(self.load()) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""


def plugins(kind: str) -> dict[str, Plugin]:
    """Every plugin of ``kind`` registered through entry points, by name."""
    if kind not in KINDS:
        raise StellarError(f"no plugin kind {kind!r} (kinds: {', '.join(KINDS)})")
    return dict(_registered(kind))


@functools.cache
def _registered(kind: str) -> tuple[tuple[str, Plugin], ...]:
    found = _entry_points().select(group=f"stellar.{kind}")
    return tuple(sorted((ep.name, Plugin(kind, ep.name, ep.value)) for ep in found))


@functools.cache
def _entry_points() -> EntryPoints:
    """Every installed package's entry points, read once (each read scans every package)."""
    return entry_points()


def short_name(name: str) -> str:
    """A plugin name without its module path (``pkg.mod:MyAlgo`` -> ``MyAlgo``)."""
    return name.split(":")[-1]


def is_dotted(name: str) -> bool:
    return ":" in name or "." in name


def resolve(kind: str, name: str, *also: str) -> Plugin:
    """The plugin called ``name`` (in ``kind`` or the kinds in ``also``), or a dotted path."""
    for each in (kind, *also):
        plugin = plugins(each).get(name)
        if plugin is not None:
            return plugin
    if is_dotted(name):
        return Plugin(kind, name, name)
    known = sorted({n for each in (kind, *also) for n in plugins(each)})
    raise StellarError(
        f"unknown {kind} {name!r} (registered: {', '.join(known) or 'none'}; "
        "or package.module:attribute)"
    )


def load(kind: str, name: str) -> Any:
    """The object behind a plugin name or dotted path."""
    return resolve(kind, name).load()


def _load(path: str, what: str) -> Any:
    module_name, sep, attr = path.partition(":")
    if not sep:
        try:  # a module itself (a use case is a package)
            return _import(path, what)
        except _NotFound:
            module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise StellarError(f"{what}: expected 'package.module:attribute'")
    try:
        module = _import(module_name, what)
    except _NotFound as exc:
        raise StellarError(f"{what}: cannot import {module_name!r} ({exc.__cause__})") from None
    try:
        return functools.reduce(getattr, attr.split("."), module)
    except AttributeError:
        raise StellarError(f"{what}: {module_name!r} has no {attr!r}") from None


class _NotFound(Exception):
    """A module that cannot be imported (the ImportError is its cause)."""


def _import(name: str, what: str) -> Any:
    """Import ``name``; a user's module that fails while it is imported is a StellarError."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise _NotFound() from exc
    except SyntaxError as exc:
        where = f"{exc.filename}, line {exc.lineno}" if exc.filename else name
        raise StellarError(f"{what}: {name!r} has a syntax error ({where})") from None
    except Exception as exc:  # raised by the module's own code, or a malformed name
        raise StellarError(
            f"{what}: importing {name!r} failed: {type(exc).__name__}: {exc}"
        ) from None


# ------------------------------------------------------------------------------- options


def options_model(obj: Any, kind: str) -> type[BaseModel]:
    """The plugin's ``Options`` model, or one derived from its parameters."""
    declared = getattr(obj, "Options", None)
    if inspect.isclass(declared) and issubclass(declared, BaseModel):
        return declared
    return _derived_model(obj, kind)


def _derived_model(obj: Any, kind: str) -> type[BaseModel]:
    func = obj.__init__ if inspect.isclass(obj) else obj
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        params = []
    if inspect.isclass(obj):
        params = params[1:]  # self
    elif kind in CALL_ARGS:
        params = params[CALL_ARGS[kind] :]  # the arguments of each call
        params = [p for p in params if p.name not in CALL_KEYWORDS.get(kind, ())]
    extra = "allow" if any(p.kind is p.VAR_KEYWORD for p in params) else "forbid"
    fields: dict[str, Any] = {
        p.name: (Any, ... if p.default is p.empty else p.default)
        for p in params
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in RUNTIME
    }
    config = ConfigDict(extra=extra, arbitrary_types_allowed=True)
    return create_model(f"{getattr(obj, '__name__', 'plugin')}Options", __config__=config, **fields)


def check_options(
    plugin: Plugin, options: dict[str, Any], where: str, paths: dict[str, str] | None = None
) -> dict[str, Any]:
    """Validate ``options`` for ``plugin``; returns them with declared defaults filled in.

    Raises a one-line StellarError naming the setting (``where.option``, or the path given
    for it in ``paths``), the plugin and the problem.
    """
    obj = plugin.load()
    model = options_model(obj, plugin.kind)
    try:
        validated = model.model_validate(options)
    except ValidationError as exc:
        err = min(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")  # typos first
        key = ".".join(str(p) for p in err["loc"])
        at = (paths or {}).get(key) or (f"{where}.{key}" if key else where)
        if err["type"] == "extra_forbidden":
            known = ", ".join(model.model_fields) or "none"
            message = f"{plugin.kind} {plugin.name!r} has no option {key!r} (options: {known})"
        elif err["type"] == "missing":
            message = f"{plugin.kind} {plugin.name!r} needs the option {key!r}"
        else:
            message = err["msg"].removeprefix("Value error, ")
        raise StellarError(f"{at}: {message}") from None
    if getattr(obj, "Options", None) is model:
        return validated.model_dump()
    return dict(options)  # derived models check names only: values pass as given


def accepts(obj: Any, name: str) -> bool:
    """Whether a plugin takes a parameter ``name`` (an option or a runtime object)."""
    if name in options_model(obj, "").model_fields:
        return True
    func = obj.__init__ if inspect.isclass(obj) else obj
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def describe_options(plugin: Plugin) -> list[tuple[str, str]]:
    """(option, "default - description") pairs for ``stellar list``."""
    model = options_model(plugin.load(), plugin.kind)
    rows = []
    for name, field in model.model_fields.items():
        value = None if field.is_required() else field.get_default(call_default_factory=True)
        if field.is_required():
            default = "required"
        elif value is None or value == [] or value == {}:
            default = "optional"
        else:
            default = f"default {value!r}"
        rows.append((name, f"{default}{' - ' + field.description if field.description else ''}"))
    return rows
