"""``stellar shrink``: the shortest conversation that still fails the same way."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stellar import event_loop
from stellar.cli.output import console, shown
from stellar.errors import StellarError

if TYPE_CHECKING:
    from stellar.dialogue.shrink import Shrunk

SHRUNK_NAME = "shrunk.jsonl"

HELP = f"""\
Shrink the failing conversations of a run: each dialogue feature of a failing conversation is
set to its plainest value (no correction, no detour, the shortest distance ...), the
conversation is written and sent again with the test's own seed, and the change is kept
when it still fails with the same signature (the check, the act of the failing turn and the
dialogue feature behind it) in fewer turns. Prints, for each conversation, its turns before
and after and the shortest failing transcript; writes them to RUN_DIR/{SHRUNK_NAME}.

Every try is a real conversation with the run's system under test (its config.yaml).

examples:
  stellar shrink runs/shop-dialogue-stellar-s0-20261127-101500
  stellar shrink RUN_DIR --limit 3
"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "shrink",
        help="the shortest conversation that still fails the same way",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory of conversations")
    parser.add_argument(
        "--limit", type=int, default=10, help="failing conversations to shrink (default 10)"
    )
    parser.set_defaults(handler=cmd_shrink)


def cmd_shrink(args: argparse.Namespace) -> int:
    from stellar.archive import open_run
    from stellar.config import load_config
    from stellar.records import PLAN_KEY
    from stellar.rundir import CONFIG_NAME

    run_dir = Path(args.run_dir)
    if args.limit < 1:
        raise StellarError(f"--limit must be at least 1, got {args.limit}")
    if not (run_dir / CONFIG_NAME).is_file():
        raise StellarError(f"{run_dir}: not a run directory (no {CONFIG_NAME})")
    config = load_config(run_dir / CONFIG_NAME)
    with open_run(run_dir) as archive:
        failing = [(i, r) for i, r in archive.numbered(failures_only=True) if PLAN_KEY in r.details]
    if not failing:
        console.print(f"{shown(run_dir)}: no failing conversation to shrink")
        return 0
    failing = failing[: args.limit]
    console.print(f"shrinking {len(failing)} failing conversation(s) of {shown(run_dir)} ...")
    results = event_loop.run(_shrink_all(config, failing))
    lines = []
    for (test_id, _), result in zip(failing, results, strict=True):
        before, after = result.turns
        plainer = ", ".join(f"{k}: {a} -> {b}" for k, (a, b) in result.plainer.items())
        console.print(
            f"\ntest {test_id}: {result.original.signature}: {before} -> {after} planned turns"
            f" in {result.tries} tries" + (f" ({plainer})" if plainer else "")
        )
        console.print(result.shortest.response.text, markup=False, highlight=False)
        lines.append(_line(test_id, result))
    path = run_dir / SHRUNK_NAME
    path.write_text("".join(json.dumps(x, default=str) + "\n" for x in lines), encoding="utf-8")
    console.print(f"\nwritten: {shown(path)}")
    return 0


async def _shrink_all(config: Any, failing: list[tuple[int, Any]]) -> list[Shrunk]:
    from stellar.assembly import build_components
    from stellar.dialogue.shrink import Shrinker

    parts = build_components(config)
    shrinker = Shrinker(
        parts.space,
        parts.generator,
        parts.sut,
        parts.fitness,
        parts.oracle,
        timeout=config.sut_timeout,
        check=parts.check_response,
    )
    try:
        return [
            await shrinker.shrink(
                record.candidate, f"{config.seed}:{record.generation}:{record.index}"
            )
            for _, record in failing
        ]
    finally:
        close = getattr(parts.sut, "aclose", None)
        if close is not None:
            await close()
        await parts.models.aclose()


def _line(test_id: int, result: Shrunk) -> dict[str, Any]:
    shortest = result.shortest
    return {
        "test_id": test_id,
        "signature": result.original.signature,
        "turns_before": result.turns[0],
        "turns_after": result.turns[1],
        "tries": result.tries,
        "plainer": {k: list(v) for k, v in result.plainer.items()},
        "candidate": shortest.values,
        "plan": shortest.plan.to_dict(),
        "transcript": shortest.response.text,
    }
