"""Re-judge archived navi-dialogue conversations with the current checks; count what changed.

    .venv/bin/stellar compare navi-dialogue --algorithms surrogate,random --seeds 3 \\
        --tests 100 --parallel 1 --out /tmp/h41conv-before          # with the old code
    .venv/bin/python bench/conversation_rejudge.py /tmp/h41conv-before
    .venv/bin/python bench/conversation_rejudge.py /tmp/h41conv-before --show 20 --seed 1

The recorded turns and answers are scored again, nothing is sent: a verdict changes only
because the checks read the same conversation differently (issue 41: unasked actions,
confirmations not carried out, turns numbered as the transcript shows them, every failing
check in the reason). It prints how many verdicts changed, which way, by the new first
failing check, how many modes, failing turns and reasons changed; ``--show N`` prints N
changed verdicts at random, with their transcripts, for reading.
"""

from __future__ import annotations

import argparse
import asyncio
import random
from collections import Counter
from pathlib import Path
from typing import Any

from stellar.archive import open_run
from stellar.features import load_feature_space
from stellar.records import PLAN_KEY, Response, Status, TestInput, TestRecord
from stellar.usecases.navi_dialogue.fitness import NaviDialogueFitness

FEATURES = Path(__file__).parents[1] / "src/stellar/usecases/navi_dialogue/features.yaml"
BELOW = 0.75  # the use case's oracle: either objective below it fails


def run_dirs(root: Path) -> list[Path]:
    """The run directories under ``root`` (an experiment, a runs folder, or one run)."""
    found = sorted({p.parent for p in root.rglob("archive.sqlite")})
    return found or [root]


async def rejudge(record: TestRecord, fitness: NaviDialogueFitness, space: Any) -> dict[str, Any]:
    plan = record.details[PLAN_KEY]
    response = Response(text=record.response_text or "", data=record.response_data)
    evaluation = await fitness.evaluate(
        space.candidate(record.candidate), TestInput(record.input_text or "", plan=plan), response
    )
    failed = not evaluation.excluded and any(v < BELOW for v in evaluation.scores.values())
    return {"failed": failed, "excluded": evaluation.excluded, **evaluation.details}


def first_check(reason: str | None) -> str:
    return "" if not reason else reason.split(": ")[1]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, help="an experiment, a runs folder or a run")
    parser.add_argument("--show", type=int, default=0, help="changed verdicts to print")
    parser.add_argument("--seed", type=int, default=0, help="which changed verdicts are shown")
    args = parser.parse_args()
    fitness, space = NaviDialogueFitness(), load_feature_space(FEATURES)
    rows: list[tuple[TestRecord, dict[str, Any]]] = []
    for run_dir in run_dirs(args.root):
        with open_run(run_dir) as archive:
            for record in archive.records():
                if record.status == Status.OK and PLAN_KEY in record.details:
                    rows.append((record, await rejudge(record, fitness, space)))
    old_fail = [bool(r.failed) and not r.excluded for r, _ in rows]
    pairs = [(r, new, old) for (r, new), old in zip(rows, old_fail, strict=True)]
    changed = [(r, new) for r, new, old in pairs if new["failed"] != old]
    both = [(r, new) for r, new, old in pairs if new["failed"] and old]
    print(f"conversations re-judged: {len(rows)} ({len(run_dirs(args.root))} runs)")
    print(f"failing before: {sum(old_fail)}  after: {sum(new['failed'] for _, new in rows)}")
    print(
        f"verdicts changed: {len(changed)}  "
        f"(pass -> fail {sum(new['failed'] for _, new in changed)}, "
        f"fail -> pass {sum(not new['failed'] for _, new in changed)})"
    )
    kinds = Counter(first_check(new.get("reason")) or "passes now" for _, new in changed)
    print("changed, by the first failing check now:", dict(kinds.most_common()))
    print(
        f"failing both times: {len(both)}; mode changed {_differ(both, 'mode')}, "
        f"failing turn changed {_differ(both, 'failing_turn')}, "
        f"reason lists more than one check {sum(';' in new['reason'] for _, new in both)}"
    )
    unasked = sum(any(c["check"] == "unasked" for c in new["checks"]) for _, new in rows)
    print(f"conversations with an unasked action: {unasked}")
    shown = random.Random(args.seed).sample(changed, min(args.show, len(changed)))
    for number, (record, new) in enumerate(shown, 1):
        print(f"\n=== {number}. was {'failing' if record.failed else 'passing'}: ", end="")
        print(record.details.get("reason", "-"))
        print(f"    now {'failing' if new['failed'] else 'passing'}: {new.get('reason', '-')}")
        for position, line in enumerate(_numbered(record.response_text or ""), 1):
            print(f"    {position:2}. {line}")


def _differ(rows: list[tuple[TestRecord, dict[str, Any]]], key: str) -> int:
    return sum(record.details.get(key) != new.get(key) for record, new in rows)


def _numbered(transcript: str) -> list[str]:
    """The transcript's exchanges, one line each: "user | assistant"."""
    lines, exchanges = transcript.splitlines(), []
    for line in lines:
        if line.startswith("User: "):
            exchanges.append(line[6:])
        elif line.startswith("Assistant: ") and exchanges:
            exchanges[-1] += f"  ||  {line[11:]}"
    return exchanges


if __name__ == "__main__":
    asyncio.run(main())
