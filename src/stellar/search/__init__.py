"""Search algorithms behind one ask/tell interface; found by name through the registry."""

from __future__ import annotations

from typing import Any

from stellar.errors import StellarError, plugin_fault
from stellar.features import FeatureSpace
from stellar.registry import check_options, resolve
from stellar.search.base import Algorithm


def make_algorithm(
    name: str, space: FeatureSpace, n_objectives: int, seed: int, **options: Any
) -> Algorithm:
    """Build a registered algorithm, or one named ``package.module:Class``.

    Its options are checked first: one it does not take is an error, never dropped.
    """
    plugin = resolve("algorithm", name)
    options = check_options(plugin, options, "algorithm")
    try:
        return plugin.load()(space, n_objectives=n_objectives, seed=seed, **options)
    except Exception as exc:  # a plugin's own check of its options
        raise StellarError(f"algorithm {name}: {plugin_fault(exc)}") from None


__all__ = ["Algorithm", "make_algorithm"]
