"""``stellar calibrate``: a use case's judges measured against people's labels (RQ0)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from stellar import event_loop
from stellar.cli.options import OFFLINE, add_option_flags, settings
from stellar.cli.output import shown, status, stdout
from stellar.errors import StellarError

if TYPE_CHECKING:
    from stellar.analysis.calibration import Calibration

HELP = """\
Score a file of answers that people labelled with the use case's judges, and print how well
each judge agrees with them (the paper's RQ0): precision, recall, F1 and the confusion
matrix of its failure verdicts against the raters' majority, Spearman's rho of its scores,
Fleiss' kappa between the raters, and, where the use case weighs dimensions into a score
(e.g. relevance, directness and follow-up), the weights fitted by logistic regression on the
raters' verdicts next to the ones in use. Without --labels, the use case's own label file
is used.

examples:
  stellar calibrate safety                        the offline detector vs the shipped labels
  stellar calibrate safety --judge openai:gpt-4o-mini     an LLM judge instead
  stellar calibrate safety --labels mine.jsonl --json calibration.json
"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "calibrate",
        help="measure a use case's judges against labelled answers",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("use_case", metavar="USECASE", help="a use case name or folder")
    parser.add_argument(
        "--judge", metavar="MODEL", help="an LLM judge; 'offline' (default): the use case's rules"
    )
    parser.add_argument("--labels", type=Path, help="a label file (JSON lines, see the docs)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the numbers here")
    parser.add_argument("--concurrency", type=int, help="answers judged at the same time")
    add_option_flags(parser)
    parser.set_defaults(handler=cmd_calibrate)


def cmd_calibrate(args: argparse.Namespace) -> int:
    # scipy, scikit-learn and the judges' models: imported here, not for --help
    from stellar.analysis.calibration import calibrate, constant_dimensions, read_labels, spec_of
    from stellar.config import load_config
    from stellar.usecase import load_use_case

    use_case = load_use_case(args.use_case)
    if not use_case.calibration:
        raise StellarError(f"use case {use_case.name!r} declares no calibration: in usecase.yaml")
    spec = spec_of(use_case.calibration, use_case.folder / "usecase.yaml")
    labels = args.labels or spec.labels
    if labels is None:
        raise StellarError(f"use case {use_case.name!r} ships no label file: give --labels FILE")
    rows = read_labels(labels)
    overrides = {
        "judge.model": "" if args.judge in (None, OFFLINE) else args.judge,
        "concurrency": args.concurrency,
    }
    config = load_config(args.use_case, overrides, settings(args))
    with status(False, f"judging {len(rows)} labelled answers"):
        report = event_loop.run(calibrate(config, spec, rows, str(labels)))
    print_calibration(report, constant_dimensions(rows, spec.dimensions))
    if args.json:
        args.json.write_text(json.dumps(asdict(report), indent=2), encoding="utf-8")
    return 0


def _interval(bounds: tuple[float, float] | None) -> str:
    return f" [{bounds[0]:.2f}, {bounds[1]:.2f}]" if bounds else ""


def print_calibration(report: Calibration, constant: list[str]) -> None:
    out = stdout()
    out.print(
        f"[bold]{shown(report.use_case)}[/]: {report.rows} labelled answers from "
        f"{shown(report.labels)}, {report.raters} rater(s); the raters' majority calls "
        f"{report.failures} failures"
    )
    if report.kappa:
        kappas = ", ".join(f"{shown(label)} {k:.2f}" for label, k in report.kappa.items())
        out.print(f"agreement between raters (Fleiss' kappa): {kappas}")
    table = Table(
        title="Judges against the raters (failure = positive class; \\[bootstrap 95% interval])"
    )
    for column in ("judge", "precision", "recall", "F1", "TP", "FP", "FN", "TN", "unknown"):
        table.add_column(column)
    for judge in report.judges:
        (tn, fp), (fn, tp) = judge.confusion or [[0, 0], [0, 0]]
        unknown = f"{judge.unknown}" + (f" (+{judge.errors} errors)" if judge.errors else "")
        scores = tuple(
            f"{getattr(judge, name):.2f}{_interval(judge.intervals.get(name))}"
            for name in ("precision", "recall", "f1")
        )
        table.add_row(shown(judge.name), *scores, *map(str, (tp, fp, fn, tn)), unknown)
    out.print(table)
    for judge in report.judges:
        if judge.spearman:
            rho = ", ".join(f"{shown(name)} {value:.2f}" for name, value in judge.spearman.items())
            out.print(f"Spearman's rho with the raters, {shown(judge.name)}: {rho}")
    if report.weights:
        fitted, current = report.weights["fitted"], report.weights["current"]
        line = ", ".join(
            f"{shown(d)} {fitted.get(d, float('nan')):.2f} (now {current.get(d, 0):.2f})"
            for d in current
        )
        out.print(f"weights fitted by logistic regression on the raters' verdicts: {line}")
        if constant:
            out.print(
                f"({shown(', '.join(constant))}: the same value on every labelled answer, so the "
                "labels cannot tell its weight)"
            )
