"""A fixed sample of the navigation realiser's inputs, to be read and labelled by a person.

    .venv/bin/python bench/realism_sample.py                  # 50 inputs, seed 0, as text
    .venv/bin/python bench/realism_sample.py --jsonl OUT      # the same, as unlabelled JSONL
    .venv/bin/python bench/realism_sample.py --score bench/realism/after.jsonl

The sample draws random valid feature combinations (the use case's constraints applied) from
one seed and realises each with its own seeded rng, so the same code always prints the same
sample and a changed realiser is read on the same combinations. A labelled file (JSONL:
features, text, natural, expresses, note) is scored with ``--score``: the share of inputs a
person would say (``natural``) and the share that express all their features (``expresses``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from stellar.features import load_feature_space
from stellar.usecases.navi import realiser

FEATURES = Path(realiser.__file__).parent / "features.yaml"


def sample(n: int, seed: int) -> list[dict[str, object]]:
    """``n`` (features, text) pairs: random valid combinations, each realised once."""
    space = load_feature_space(FEATURES)
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        values = space.candidate(space.random_values(rng)).values
        text = realiser.realise(values, random.Random(seed * 100_003 + i))
        rows.append({"features": dict(values), "text": text})
    return rows


def score(path: Path) -> int:
    """Print the shares of natural and expressive inputs in a labelled JSONL file."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    n = len(rows)
    natural = sum(bool(r["natural"]) for r in rows)
    expresses = sum(bool(r["expresses"]) for r in rows)
    both = sum(bool(r["natural"]) and bool(r["expresses"]) for r in rows)
    print(f"{path}: {n} inputs")
    print(f"  natural:   {natural}/{n} = {natural / n:.0%}")
    print(f"  expresses: {expresses}/{n} = {expresses / n:.0%}")
    print(f"  both:      {both}/{n} = {both / n:.0%}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jsonl", type=Path, help="write the sample as unlabelled JSONL")
    parser.add_argument("--score", type=Path, help="print the shares of a labelled JSONL file")
    args = parser.parse_args()
    if args.score:
        return score(args.score)
    rows = sample(args.n, args.seed)
    if args.jsonl:
        with args.jsonl.open("w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps({**row, "natural": None, "expresses": None, "note": ""}))
                out.write("\n")
    for i, row in enumerate(rows):
        features = row["features"]
        assert isinstance(features, dict)
        shown = ", ".join(f"{k}={v}" for k, v in features.items() if v != "none")
        print(f"{i:2d}. [{shown}]\n    {row['text']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
