"""Build a run's typed components from a checked configuration, through the plugin registry."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from stellar.config import MODEL_OPTIONS, Component, RunConfig, model_names
from stellar.errors import StellarError, plugin_fault
from stellar.features import FeatureSpace
from stellar.fitness import Fitness, Oracle, ThresholdOracle, as_fitness
from stellar.generators import Generator, as_generator
from stellar.llm.client import Models
from stellar.llm.models import EndpointSettings, LLMSettings, parse_model
from stellar.modes import Thresholds, mode_embedder
from stellar.plugin_check import check_algorithm
from stellar.records import Response
from stellar.registry import Plugin, accepts, resolve
from stellar.search import Algorithm, failing_below, make_algorithm
from stellar.suts import SUT, PythonSUT
from stellar.suts.response_schema import ResponseSchema
from stellar.text.duplicates import DuplicateFilter
from stellar.text.embeddings import get_embedder


@dataclass
class Components:
    """Everything a run needs, built from a configuration."""

    space: FeatureSpace
    algorithm: Algorithm
    models: Models
    generator: Generator
    sut: SUT
    fitness: Fitness
    oracle: Oracle
    duplicates: DuplicateFilter | None
    check_response: Callable[[Response], str | None] | None


def build_components(
    cfg: RunConfig, check_keys: bool = True, fresh: Collection[str] = ()
) -> Components:
    """Build every component; ``check_keys=False`` (dry runs) needs no API keys; ``fresh``:
    roles whose model answers are never read from the cache."""
    space = cfg.feature_space()
    models = Models(run_endpoints(cfg), check_keys=check_keys, fresh=fresh)
    return Components(
        space,
        build_algorithm(cfg, space, cfg.algorithm.name),
        models,
        as_generator(_build(cfg.generator, "generator", models, {"features": space})),
        build_sut(cfg, models),
        build_fitness(cfg, models),
        build_oracle(cfg),
        build_duplicates(cfg),
        ResponseSchema(cfg.response_schema).problem if cfg.response_schema else None,
    )


def run_endpoints(cfg: RunConfig) -> LLMSettings:
    """The model settings with every endpoint the run calls allowed the run's concurrency,
    unless the endpoint sets its own ``concurrency``."""
    endpoints = dict(cfg.llm.endpoints)
    for where, name in model_names(cfg):
        spec = parse_model(name, where)
        if spec.provider == "local":
            continue
        key = next(
            (k for k in (spec.base_url, spec.provider) if k and k in endpoints),
            spec.base_url or spec.provider,
        )
        endpoints.setdefault(key, EndpointSettings())
    for key, settings in endpoints.items():
        if "concurrency" not in settings.model_fields_set:
            endpoints[key] = settings.model_copy(update={"concurrency": cfg.concurrency})
    return cfg.llm.model_copy(update={"endpoints": endpoints})


def build_algorithm(cfg: RunConfig, space: FeatureSpace, name: str) -> Algorithm:
    """The algorithm ``name`` with its options from the configuration."""
    check_algorithm(cfg, name)
    below = cfg.oracle.below or {}
    limits = [below.get(objective) for objective in cfg.objectives]
    failing = failing_below(limits) if any(x is not None for x in limits) else None
    return make_algorithm(
        name, space, len(cfg.objectives), cfg.seed, failing, **cfg.algorithm.options(name)
    )


def build_sut(cfg: RunConfig, models: Models) -> SUT:
    target = _build(cfg.sut, "sut", models, {})
    if hasattr(target, "query"):
        return target
    return PythonSUT(target, workers=cfg.concurrency)


def build_fitness(
    cfg: RunConfig, models: Models, target: str | None = None, options: dict[str, Any] | None = None
) -> Fitness:
    """The fitness (default: the configured one), with the LLM judge when one is set."""
    plugin = resolve("fitness", target or cfg.fitness.target, "judge")
    runtime: dict[str, Any] = {}
    if cfg.judge.model:
        from stellar.fitness.judges import JudgeModel

        runtime["judge"] = JudgeModel(
            model=models.client(cfg.judge.model, "judge", "judge.model"),
            **cfg.judge.model_dump(exclude={"model"}),
        )
    chosen = cfg.fitness.options if options is None else options
    return as_fitness(instantiate(plugin, chosen, runtime))


@dataclass
class PostSearch:
    """The post-search judge, the oracle over its scores, and how many tests it judges at once."""

    target: str
    judge: Fitness
    oracle: Oracle
    concurrency: int
    thresholds: Thresholds = ({}, {})  # the search's oracle's and the judge's: failed objectives
    embedder: str = "hashing"  # the run's, to group the final failures into modes


def build_post_search(cfg: RunConfig, models: Models) -> PostSearch | None:
    """The post-search judge and the oracle over its scores, if the run has one."""
    post = cfg.oracle.post_search
    if post is None:
        return None
    return PostSearch(
        post.target,
        build_fitness(cfg, models, post.target, post.options),
        ThresholdOracle(post.below),
        post.concurrency or cfg.concurrency,
        (cfg.oracle.below or {}, post.below),
        mode_embedder(cfg.duplicates.embedder),
    )


def build_oracle(cfg: RunConfig) -> Oracle:
    if cfg.oracle.below is not None:
        return ThresholdOracle(cfg.oracle.below)
    oracle = instantiate(resolve("oracle", cfg.oracle.target or ""), cfg.oracle.options, {})
    if not callable(oracle):
        raise StellarError(f"oracle {cfg.oracle.target!r} is not callable")
    return oracle


def build_duplicates(cfg: RunConfig) -> DuplicateFilter | None:
    if cfg.duplicates.embedder == "none":
        return None
    return DuplicateFilter(get_embedder(cfg.duplicates.embedder), cfg.duplicates.threshold)


def _build(component: Component, role: str, models: Models, runtime: dict[str, Any]) -> Any:
    """A generator or SUT; an option naming a model is handed over as a ready client."""
    options = dict(component.options)
    for key in MODEL_OPTIONS:
        if isinstance(options.get(key), str):
            where = f"{role}.{'options.' * (component.type == 'python')}{key}"
            options[key] = models.client(options[key], role, where)
    return instantiate(resolve(role, component.plugin), options, runtime)


def instantiate(plugin: Plugin, options: dict[str, Any], runtime: dict[str, Any]) -> Any:
    """A class is built with its options and the runtime objects it takes; a function gets
    its options bound as keyword arguments."""
    obj = plugin.load()
    given = {**{k: v for k, v in runtime.items() if accepts(obj, k)}, **options}
    if inspect.isclass(obj):
        try:
            return obj(**given)
        except StellarError:
            raise
        except Exception as exc:  # a plugin's own check of its options
            raise StellarError(
                f"cannot build {plugin.kind} {plugin.name!r}: {plugin_fault(exc)}"
            ) from None
    if not given:
        return obj
    return functools.partial(obj, **given)
