"""How to read a run's results: its verdict rule, what its scores mean, what each count counts,
how a failure condition was checked.

The thresholds come from the run's stored configuration (``oracle.below``, and
``oracle.post_search.below`` where a judge decides after the search); the meaning of each
score from ``descriptions`` beside them (``fitness.descriptions``,
``oracle.post_search.descriptions``), which a use case declares in its ``usecase.yaml``; a
score nobody described gets a neutral line. The counts are :class:`~stellar.summary.RunSummary`'s,
recounted from the archive, so that the report, ``summary.json`` and the terminal agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stellar.records import TestRecord
from stellar.summary import RunSummary

COUNTS = {  # summary.py's counts, and what each counts
    "tests": "inputs sent to the system under test",
    "verdicts": "tests judged pass or fail (not errors, not excluded)",
    "failures": "verdicts that failed",
    "excluded": "tests judged but kept out of the verdicts (reason shown with each); "
    "never a failure",
    "duplicates": "inputs discarded before sending: too similar to an earlier input",
    "invalid": "inputs discarded before sending: empty, too long or not generated",
    "sut_errors": "tests whose system under test failed or timed out: no verdict",
    "judge_errors": "tests whose fitness or judge failed: no verdict",
}


def run_counts(records: Sequence[TestRecord]) -> RunSummary:
    """The run's counts as ``summary.json`` defines them, recounted from its records."""
    counts = RunSummary(run_dir="", algorithm="", seed=0)
    counts.recount(records)
    return counts


def verdict_rules(config: Mapping[str, Any], sources: Mapping[str, int] | None = None) -> list[str]:
    """When a test fails, in sentences, from the run's oracle (and post-search judge, with
    ``sources``: which judge gave how many of its verdicts, e.g. an offline classifier)."""
    oracle = config.get("oracle") or {}
    post = oracle.get("post_search") or {}
    below = oracle.get("below") or {}
    if below:
        rule = f"a test fails when {_below(below)}"
    elif oracle.get("target"):
        rule = f"a test fails when the run's own oracle ({oracle['target']}) says so"
    else:
        rule = "a test fails when the run's oracle says so (its configuration is not stored)"
    if not post:
        return [rule[0].upper() + rule[1:] + "."]
    given = ", ".join(f"{name}: {count}" for name, count in (sources or {}).items())
    return [
        f"During the search, {rule} (a provisional verdict).",
        f"After the search, the judge {post.get('target', '?')} decides every test: it fails "
        f"when {_below(post.get('below') or {})}."
        + (f" Its verdicts were given by: {given}." if given else ""),
    ]


def _below(thresholds: Mapping[str, float]) -> str:
    return ", or ".join(f"{name} is below {limit:g}" for name, limit in thresholds.items())


def score_meanings(config: Mapping[str, Any]) -> list[list[str]]:
    """[score, what it means] for every score the run's fitness and judges give."""
    fitness = config.get("fitness") or {}
    oracle = config.get("oracle") or {}
    post = oracle.get("post_search") or {}
    names = fitness.get("objectives") or list(oracle.get("below") or {})
    rows = [[n, _meaning(n, fitness.get("descriptions"), fitness.get("target"))] for n in names]
    for name in post.get("below") or {}:
        meaning = _meaning(name, post.get("descriptions"), post.get("target"))
        rows.append([f"{name} (after the search)", meaning])
    return rows


def _meaning(name: str, descriptions: Mapping[str, str] | None, source: str | None) -> str:
    described = (descriptions or {}).get(name)
    if described:
        return str(described)
    return f"a score from {source or 'the fitness'} in [0, 1], lower is worse (not described)"


def rules_checked() -> str:
    """How a failure condition was checked, in one sentence, so that ``stellar explain`` and
    the report say it alike (:mod:`stellar.analysis.failure_rules`)."""
    from stellar.analysis.failure_rules import (  # numpy: when asked
        MIN_HELD,
        MIN_PRECISION,
        TOLERANCE,
    )

    return (
        "Each rule was mined on a random half of the verdicts and is shown only because the "
        f"other half agrees: at least {MIN_HELD} of its tests match the rule and their failure "
        f"share is within {TOLERANCE:g} of the stated one (which counts all the verdicts and "
        f"is at least {MIN_PRECISION:g})."
    )
