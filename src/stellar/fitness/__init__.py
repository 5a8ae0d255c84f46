"""Fitness functions and oracles."""

from stellar.fitness.base import (
    CallableFitness,
    Fitness,
    Oracle,
    ThresholdOracle,
    as_fitness,
    to_evaluation,
)

__all__ = ["CallableFitness", "Fitness", "Oracle", "ThresholdOracle", "as_fitness", "to_evaluation"]
