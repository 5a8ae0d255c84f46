"""Find every plugin a run configuration names and check its options, as the file is read.

Use-case options are handed to every component whose plugin takes a parameter of the same
name (unless the component sets it itself), so they show in the run's ``config.yaml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stellar.errors import StellarError
from stellar.registry import Plugin, accepts, check_options, plugins, resolve, short_name

if TYPE_CHECKING:
    from stellar.config import Component, RunConfig


def check_plugins(config: RunConfig) -> None:
    """Raise a one-line StellarError for an unknown plugin or option; fill in defaults."""
    check_algorithm(config, config.algorithm.name)
    for role in ("generator", "sut"):
        component: Component = getattr(config, role)
        plugin = resolve(role, component.plugin)
        where = f"{role}.options" if component.type == "python" else role
        component.options = _checked(plugin, component.options, where, config.usecase)
    fitness = resolve("fitness", config.fitness.target, "judge")
    config.fitness.options = _checked(
        fitness, config.fitness.options, "fitness.options", config.usecase
    )
    if config.judge.model and not accepts(fitness.load(), "judge"):
        raise StellarError(
            f"judge.model is set, but fitness {config.fitness.target!r} takes no LLM judge "
            "(it has no 'judge' parameter)"
        )
    if config.oracle.target is not None:
        oracle = resolve("oracle", config.oracle.target)
        config.oracle.options = _checked(
            oracle, config.oracle.options, "oracle.options", config.usecase
        )
    if config.duplicates.embedder != "none":
        resolve("embedder", config.duplicates.embedder)


def check_algorithm(config: RunConfig, name: str) -> Plugin:
    """The algorithm ``name`` with its options checked; sections of unknown algorithms fail."""
    plugin = resolve("algorithm", name)
    known = {*plugins("algorithm"), short_name(name), short_name(config.algorithm.name)}
    for key in config.algorithm.model_extra or {}:
        if key not in known:
            raise StellarError(f"algorithm.{key}: no algorithm {key!r} to take these options")
    check_options(plugin, config.algorithm.options(name), "algorithm")
    return plugin


def _checked(
    plugin: Plugin, options: dict[str, Any], where: str, usecase: dict[str, Any]
) -> dict[str, Any]:
    obj = plugin.load()
    given = dict(options)
    for name, value in usecase.items():
        if name not in given and accepts(obj, name):
            given[name] = value
    return check_options(plugin, given, where)
