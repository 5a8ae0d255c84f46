"""Search algorithms behind one ask/tell interface; found by name through the registry."""

from __future__ import annotations

from typing import Any

from stellar.errors import StellarError, plugin_fault
from stellar.features import FeatureSpace
from stellar.registry import accepts, check_options, resolve
from stellar.search.base import Algorithm, Failing, failing_below


def make_algorithm(
    name: str,
    space: FeatureSpace,
    n_objectives: int,
    seed: int,
    failing: Failing | None = None,
    **options: Any,
) -> Algorithm:
    """Build a registered algorithm, or one named ``package.module:Class``.

    Its options are checked first: one it does not take is an error, never dropped. An
    algorithm that takes ``failing`` is told which objective vectors the oracle calls a
    failure (default: any objective below 0.5).
    """
    plugin = resolve("algorithm", name)
    options = check_options(plugin, options, "algorithm")
    cls = plugin.load()
    if accepts(cls, "failing"):
        options["failing"] = failing or failing_below([0.5] * n_objectives)
    try:
        return cls(space, n_objectives=n_objectives, seed=seed, **options)
    except Exception as exc:  # a plugin's own check of its options
        raise StellarError(f"algorithm {name}: {plugin_fault(exc)}") from None


__all__ = ["Algorithm", "Failing", "failing_below", "make_algorithm"]
