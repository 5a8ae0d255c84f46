"""Search algorithms behind one ask/tell interface."""

from __future__ import annotations

from stellar.errors import StellarError
from stellar.features import FeatureSpace
from stellar.plugins import accepted_kwargs, load_object
from stellar.search.astral import AstralSearch
from stellar.search.base import Algorithm
from stellar.search.nsga2 import StellarSearch
from stellar.search.random_search import RandomSearch
from stellar.search.twise import TwiseSearch

ALGORITHMS = {
    "stellar": StellarSearch,
    "random": RandomSearch,
    "twise": TwiseSearch,
    "astral": AstralSearch,
}


def make_algorithm(
    name: str, space: FeatureSpace, n_objectives: int, seed: int, **settings
) -> Algorithm:
    """Build an algorithm by name, or by a dotted path ``package.module:Class``."""
    factory = ALGORITHMS.get(name) or load_object(name, what="algorithm")
    settings = accepted_kwargs(factory, settings)
    try:
        return factory(space, n_objectives=n_objectives, seed=seed, **settings)
    except (TypeError, ValueError) as exc:
        raise StellarError(f"algorithm {name}: {exc}") from None


__all__ = ["ALGORITHMS", "Algorithm", "make_algorithm"]
