"""Find every plugin a run configuration names and check its options, as the file is read.

Use-case options are handed to every component whose plugin takes a parameter of the same
name (unless the component sets it itself), so they show in the run's ``config.yaml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stellar.errors import StellarError
from stellar.registry import (
    Plugin,
    accepts,
    check_options,
    options_model,
    plugins,
    resolve,
    short_name,
)

if TYPE_CHECKING:
    from stellar.config_schema import Component, RunConfig


def check_plugins(config: RunConfig) -> None:
    """Raise a one-line StellarError for an unknown plugin or option; fill in defaults."""
    check_algorithm(config, config.algorithm.name)
    for role in ("generator", "sut"):
        component: Component = getattr(config, role)
        plugin = resolve(role, component.plugin)
        where = f"{role}.options" if component.type == "python" else role
        try:
            component.options = _checked(plugin, component.options, where, config.usecase)
        except StellarError as exc:
            if component.type != "llm" or "needs the option" not in str(exc):
                raise
            raise StellarError(f"{exc} (a use case gives the prompts in llm_generator:)") from None
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
    post = config.oracle.post_search
    if post is not None:
        judge = resolve("fitness", post.target, "judge")
        where = "oracle.post_search.options"
        post.options = _checked(judge, post.options, where, config.usecase)
    if config.duplicates.embedder != "none":
        try:
            resolve("embedder", config.duplicates.embedder)
        except StellarError as exc:
            raise StellarError(f"duplicates.embedder: {exc}") from None


def check_algorithm(config: RunConfig, name: str) -> Plugin:
    """The algorithm ``name`` with its options checked, and every other algorithm's section."""
    registered = plugins("algorithm")
    known = {*registered, short_name(name), short_name(config.algorithm.name)}
    for key in config.algorithm.model_extra or {}:
        if key not in known:
            raise StellarError(f"algorithm.{key}: no algorithm {key!r} to take these options")
        if key in registered and key != short_name(name):
            _check_algorithm_options(config, registered[key])
    plugin = resolve("algorithm", name)
    _check_algorithm_options(config, plugin)
    return plugin


def _check_algorithm_options(config: RunConfig, plugin: Plugin) -> None:
    options = config.algorithm.options(plugin.name)
    try:
        check_options(
            plugin,
            options,
            f"algorithm.{short_name(plugin.name)}",
            {"population": "algorithm.population"},
        )
    except StellarError as exc:
        own = options_model(plugin.load(), "algorithm").model_fields
        owners = [
            f"algorithm.{name}.{key}"
            for key in options
            if key not in own
            for name, other in plugins("algorithm").items()
            if key in options_model(other.load(), "algorithm").model_fields
        ]
        if "has no option" not in str(exc) or not owners:
            raise
        key = owners[0].rsplit(".", 1)[1]  # the first option not its own
        others = ", ".join(o for o in owners if o.endswith(f".{key}"))
        raise StellarError(f"{exc}; it is an option of other algorithms: {others}") from None


def _checked(
    plugin: Plugin, options: dict[str, Any], where: str, usecase: dict[str, Any]
) -> dict[str, Any]:
    obj = plugin.load()
    given = dict(options)
    for name, value in usecase.items():
        if name not in given and accepts(obj, name):
            given[name] = value
    return check_options(plugin, given, where)
