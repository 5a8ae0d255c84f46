"""Find every plugin a run configuration names and check its options, as the file is read.

Use-case options are handed to every component whose plugin takes a parameter of the same
name (unless the component sets it itself), so they show in the run's ``config.yaml``.
Algorithm populations are bounded, and a credential written into a component's ``headers``
is refused: secrets come from the environment (``${VAR}``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from stellar.config_values import MAX_POPULATION  # an algorithm's own section may set one too
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

SECRET_HEADER = re.compile(r"authorization|cookie|token|secret|key|password", re.IGNORECASE)
ENV_REFERENCE = re.compile(r"\s*(?:[A-Za-z][A-Za-z-]*\s+)?(?:\$\{[A-Za-z_][A-Za-z0-9_]*\}\s*)+")


def check_plugins(config: RunConfig) -> None:
    """Raise a one-line StellarError for an unknown plugin or option; fill in defaults."""
    check_algorithm(config, config.algorithm.name)
    for role in ("generator", "sut"):
        component: Component = getattr(config, role)
        plugin = resolve(role, component.plugin)
        where = f"{role}.options" if component.type == "python" else role
        check_headers(component.options, where)
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
            resolve("embedder", config.duplicates.embedder).load()
        except StellarError as exc:
            raise StellarError(f"duplicates.embedder: {exc}") from None


def check_headers(options: dict[str, Any], where: str) -> None:
    """Refuse a credential written into ``headers``: it would sit in every config.yaml."""
    headers = options.get("headers")
    for name, value in headers.items() if isinstance(headers, dict) else ():
        literal = isinstance(value, str) and value and not ENV_REFERENCE.fullmatch(value)
        if literal and SECRET_HEADER.search(str(name)):
            raise StellarError(
                f"{where}.headers.{name}: a credential written into the configuration; "
                "write a reference to an environment variable instead, e.g. "
                "'Bearer ${API_TOKEN}', and set API_TOKEN in the environment"
            )


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
    population = options.get("population")
    if isinstance(population, int | float) and population > MAX_POPULATION:
        raise StellarError(
            f"algorithm.{short_name(plugin.name)}.population: at most {MAX_POPULATION:,}"
        )
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
