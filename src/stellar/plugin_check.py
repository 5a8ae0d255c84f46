"""Find every plugin a run configuration names and check its options, as the file is read.

Use-case options are handed to every component whose plugin takes a parameter of the same
name (unless the component sets it itself), so they show in the run's ``config.yaml``.
Algorithm populations are bounded, and a credential written into a component's ``headers``
is refused: secrets come from the environment (``${VAR}``). A fitness that declares the scores
it gives (``objectives``) is checked against the objectives and thresholds that name them, and
a plugin with a ``check_config(space, options)`` checks its options against the feature space
(templates naming unknown features), all before anything runs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stellar.config_values import MAX_POPULATION  # an algorithm's own section may set one too
from stellar.errors import StellarError, plugin_fault
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
    from stellar.features import FeatureSpace

SECRET_HEADER = re.compile(r"authorization|cookie|token|secret|key|password", re.IGNORECASE)
ENV_REFERENCE = re.compile(r"\s*(?:[A-Za-z][A-Za-z-]*\s+)?(?:\$\{[A-Za-z_][A-Za-z0-9_]*\}\s*)+")


def check_plugins(config: RunConfig) -> None:
    """Raise a one-line StellarError for an unknown plugin or option, a score no fitness
    gives, or what a plugin's own ``check_config`` refuses; fill in defaults."""
    check_algorithm(config, config.algorithm.name)
    space = functools.cache(config.feature_space)  # read only if a plugin checks against it
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
        check_config(plugin, component.options, where, space)
    fitness = resolve("fitness", config.fitness.target, "judge")
    config.fitness.options = _checked(
        fitness, config.fitness.options, "fitness.options", config.usecase
    )
    check_config(fitness, config.fitness.options, "fitness.options", space)
    named = [("fitness.objectives", name) for name in config.fitness.objectives or []]
    named += [(f"oracle.below.{name}", name) for name in config.oracle.below or {}]
    check_scores(fitness, named)
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
        check_config(oracle, config.oracle.options, "oracle.options", space)
    post = config.oracle.post_search
    if post is not None:
        judge = resolve("fitness", post.target, "judge")
        where = "oracle.post_search.options"
        post.options = _checked(judge, post.options, where, config.usecase)
        check_config(judge, post.options, where, space)
        check_scores(judge, [(f"oracle.post_search.below.{name}", name) for name in post.below])
    if config.duplicates.embedder != "none":
        try:
            resolve("embedder", config.duplicates.embedder).load()
        except StellarError as exc:
            raise StellarError(f"duplicates.embedder: {exc}") from None


def declared_scores(obj: Any) -> list[str] | None:
    """The scores a fitness plugin says it gives (its ``objectives`` attribute: a list or
    tuple of names); None when it does not say."""
    declared = getattr(obj, "objectives", None)
    if isinstance(declared, list | tuple) and all(isinstance(n, str) for n in declared):
        return list(declared)
    return None


def check_scores(fitness: Plugin, named: list[tuple[str, str]]) -> None:
    """Each (setting, score) names a score that ``fitness`` declares it gives."""
    gives = declared_scores(fitness.load())
    for where, name in named if gives is not None else ():
        if name not in gives:
            raise StellarError(
                f"{where}: fitness {fitness.name!r} gives no score {name!r} "
                f"(its scores: {', '.join(gives)})"
            )


def check_config(
    plugin: Plugin, options: dict[str, Any], where: str, space: Callable[[], FeatureSpace]
) -> None:
    """Call the plugin's own load-time check, ``check_config(space, options)``, if it has
    one: what it refuses (ValueError, TypeError, StellarError) is one line naming ``where``."""
    check = getattr(plugin.load(), "check_config", None)
    if not callable(check):
        return
    features = space()  # a bad feature file is the feature file's error, not the plugin's
    try:
        check(features, options)
    except StellarError as exc:
        raise StellarError(f"{where}: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise StellarError(f"{where}: {plugin_fault(exc)}") from None


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
