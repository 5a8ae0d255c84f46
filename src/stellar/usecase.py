"""Use cases: a folder with ``usecase.yaml`` that declares a run's components and options.

``usecase.yaml`` holds run settings (features, generator, sut, fitness, oracle, ...) that a
run configuration overrides key by key, plus keys of its own:

- ``description``: one line for ``stellar list usecase``;
- ``options``: the use case's own options, ``NAME: {default: ..., description: ...}``; a run
  sets them under ``usecase:`` (``--option NAME=VALUE``), and every component whose plugin
  takes a parameter of that name receives the value;
- ``serve``: ``module:function`` building an HTTP server of the use case's own system under
  test, ``function(host, port, **options)``, for ``stellar serve USECASE``;
- ``export``: ``module:function(path, **options)`` writing its data (``stellar export-data``);
- ``response``: where an answer keeps its text and data, the data's JSON Schema, and
  ``needs_data: true`` when the use case's fitness cannot score an answer without its data
  (a configuration whose system under test returns none is then refused at load);
- ``calibration``: the label file and labels that ``stellar calibrate`` compares judges with.

Use cases are found by registered name (entry point group ``stellar.usecase``, naming the
package that holds ``usecase.yaml``) or as a folder.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stellar.errors import ConfigError, StellarError
from stellar.registry import Plugin, plugins
from stellar.yaml_loading import read_yaml_file

USE_CASE_FILE = "usecase.yaml"
DEFAULT_RUN = Path(__file__).parent / "usecases" / "default.yaml"  # `stellar run` alone
OWN_KEYS = ("description", "options", "serve", "export", "response", "calibration")
RESPONSE_KEYS = {"answer", "data", "schema", "needs_data"}


@dataclass
class UseCase:
    name: str
    folder: Path
    settings: dict[str, Any]  # run settings: the defaults a run configuration overrides
    options: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> declaration
    serve: str | None = None
    description: str = ""
    export: str | None = None  # module:function(path, **options) writing the use case's data
    response: dict[str, Any] = field(default_factory=dict)  # JSONPaths, schema, needs_data
    calibration: dict[str, Any] = field(default_factory=dict)  # stellar calibrate: the labels

    def option_values(self, given: dict[str, Any], source: object) -> dict[str, Any]:
        """The declared defaults updated with ``given``; an undeclared option is an error."""
        unknown = [name for name in given if name not in self.options]
        if unknown:
            known = ", ".join(self.options) or "none"
            raise ConfigError(
                source,
                f"usecase.{unknown[0]}",
                f"use case {self.name!r} has no such option (options: {known})",
            )
        return {name: given.get(name, decl.get("default")) for name, decl in self.options.items()}

    @property
    def needs_data(self) -> bool:
        """Whether the use case's fitness needs structured data with every answer."""
        return bool(self.response.get("needs_data"))


def is_use_case(name: str) -> bool:
    """Whether ``name`` is a registered use case or a folder holding usecase.yaml."""
    return name in plugins("usecase") or has_file(Path(name) / USE_CASE_FILE)


def has_file(path: Path, folder: bool = False) -> bool:
    """Whether ``path`` is a file (a folder); False for a name no file system takes (too
    long, a NUL)."""
    try:
        return path.is_dir() if folder else path.is_file()
    except (OSError, ValueError):
        return False


def find_use_case(name: str, base: Path) -> Path:
    """The folder of a registered use case, or of a folder path (relative to ``base``)."""
    registered = plugins("usecase")
    if name in registered:
        module = registered[name].load()
        return Path(next(iter(module.__path__)))
    folder = (base / name).expanduser().resolve()
    if not has_file(folder / USE_CASE_FILE):
        raise ConfigError(
            name,
            "",
            f"no such use case (built-in: {', '.join(registered) or 'none'}; "
            f"or a folder with {USE_CASE_FILE})",
        )
    return folder


def load_use_case(name: str, base: Path = Path.cwd()) -> UseCase:  # noqa: B008
    folder = find_use_case(name, base)
    settings = read_yaml(folder / USE_CASE_FILE)
    source = folder / USE_CASE_FILE
    options = settings.pop("options", None) or {}
    if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
        raise ConfigError(source, "options", "expected NAME: {default: ..., description: ...}")
    for name, declaration in options.items():
        if unknown := set(declaration) - {"default", "description"}:
            raise ConfigError(source, f"options.{name}.{min(unknown)}", "unknown key")
    serve, export = settings.pop("serve", None), settings.pop("export", None)
    for key, value in (("serve", serve), ("export", export)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(source, key, "expected module:function")
    response = settings.pop("response", None) or {}
    if not isinstance(response, dict) or set(response) - RESPONSE_KEYS:
        raise ConfigError(
            source,
            "response",
            "expected {answer: $.PATH, data: $.PATH, schema: FILE, needs_data: true|false}",
        )
    if not isinstance(response.get("needs_data", False), bool):
        raise ConfigError(source, "response.needs_data", "expected true or false")
    if response.get("schema"):
        response["schema"] = str((folder / response["schema"]).resolve())
    calibration = settings.pop("calibration", None) or {}
    if not isinstance(calibration, dict):
        raise ConfigError(source, "calibration", "expected a mapping (docs/calibration.md)")
    if isinstance(calibration.get("labels"), str):
        calibration["labels"] = str((folder / calibration["labels"]).resolve())
    description = str(settings.pop("description", "") or "")
    settings.setdefault("name", folder.name)
    return UseCase(
        settings["name"],
        folder,
        settings,
        options,
        serve,
        description,
        export,
        response,
        calibration,
    )


def read_yaml(path: Path) -> dict[str, Any]:
    """A YAML mapping, with one-line errors (the limits of :mod:`stellar.yaml_loading`)."""
    if has_file(path, folder=True):
        raise ConfigError(path, "", f"a folder, not a YAML file (a use case needs {USE_CASE_FILE})")
    data = read_yaml_file(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(path, "", "expected a mapping of settings")
    return data


def hook(use_case: UseCase, name: str) -> Any:
    """The use case's ``serve`` or ``export`` function (its folder's modules are importable)."""
    target = getattr(use_case, name)
    if not target:
        what = {"serve": "system under test to serve", "export": "data to export"}[name]
        raise StellarError(f"use case {use_case.name!r} ships no {what}")
    if str(use_case.folder) not in sys.path:
        sys.path.insert(0, str(use_case.folder))
    return Plugin("usecase", f"{use_case.name} {name}", target).load()
