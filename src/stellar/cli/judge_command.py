"""``stellar judge``: the post-search oracle over a run directory, on its own or to finish it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from stellar import event_loop
from stellar.cli.options import OFFLINE
from stellar.cli.output import (
    JudgingProgress,
    add_show_flag,
    console,
    print_summary,
    progress_bar,
    shown,
    status,
    stdout,
)
from stellar.errors import StellarError
from stellar.rundir import ARCHIVE_NAME, CONFIG_NAME

if TYPE_CHECKING:
    from stellar.post_search import Judged
    from stellar.review.learning import Learnt

HELP = """\
Judge every executed test of a run with the run's post-search judge (oracle.post_search in
its configuration, e.g. the safety use case's binary safe / unsafe / unknown judge), and
count the failures by its verdicts. A run does this itself when its search ends by its
budget; use this command when the run was stopped or killed before, or when the judge failed
half-way. Verdicts are committed one by one: running the command again judges only what is
left (tests without a verdict or whose verdict failed). With --all, every test is judged
anew (e.g. by another judge model); if that is stopped, run it again without --all to
finish. It ends saying how many tests it judged, and how many had a verdict already.

RUN_DIR is the run wherever it is now (a moved run directory is judged where it is, and its
results written there). A run that another stellar command holds (a run going on, another
judge) is refused until that ends. A run without oracle.post_search in its config.yaml has
no judge to run: add one there (see docs/safety.md).

examples:
  stellar judge runs/safety-stellar-s0-20261123-120000
  stellar judge RUN_DIR --all --judge openai:gpt-4o-mini     every test again, by an LLM
"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    judge = commands.add_parser(
        "judge",
        help="judge a run's tests after the search (the post-search oracle)",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    judge.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (stellar run made it)")
    judge.add_argument(
        "--judge", metavar="MODEL", help="the judge's model; 'offline': the use case's rules"
    )
    judge.add_argument("--concurrency", type=int, help="tests judged at the same time")
    judge.add_argument("--all", action="store_true", help="judge every test anew")
    add_show_flag(judge)
    judge.add_argument("--quiet", action="store_true", help="no progress bar")
    judge.add_argument(
        "--learn",
        action="store_true",
        help="add the run's review marks (stellar review) to the label store, refit the use "
        "case's judge on them and judge every test anew with it",
    )
    judge.add_argument(
        "--store",
        type=Path,
        metavar="DIR",
        help="the label store's folder (default: stellar-labels in the working directory)",
    )
    judge.set_defaults(handler=cmd_judge)


def cmd_judge(args: argparse.Namespace) -> int:
    # the configuration's and the judges' modules (models): imported here, not for --help
    from stellar.archive import check_archive
    from stellar.config import load_config
    from stellar.post_search import hold_for_judging, judge_held

    config_file = f"{args.run_dir}/{CONFIG_NAME}"
    try:
        open(config_file, encoding="utf-8").close()
    except OSError:
        raise StellarError(f"{args.run_dir}: not a run directory (no {CONFIG_NAME})") from None
    overrides = {
        "judge.model": "" if args.judge == OFFLINE else args.judge,
        "oracle.post_search.concurrency": args.concurrency,
    }
    run_dir = Path(args.run_dir)
    learnt = None
    if args.learn:
        from stellar.review.learning import learn_from_run

        use_case = str(load_config(config_file, overrides).use_case or "")
        with status(args.quiet, "refitting the judge on the label store"):
            learnt = learn_from_run(run_dir, use_case, args.store)
        overrides[f"oracle.post_search.options.{learnt.option}"] = str(learnt.judge_file)
        args.all = True
    config = load_config(config_file, overrides)
    if (archive := run_dir / ARCHIVE_NAME).exists():
        check_archive(archive)  # a damaged archive is one line, before the header
    with hold_for_judging(run_dir, config):  # refused in one line before anything is shown
        progress = progress_bar(args.quiet)
        judging = JudgingProgress(progress)
        console.print(f"[bold]stellar judge[/] {shown(run_dir)}")
        with progress:
            done = event_loop.run(judge_held(run_dir, config, judging.update, args.all))
    from stellar.analysis.failure_modes import run_failure_modes  # when needed
    from stellar.analysis.html_report import write_report  # pandas, matplotlib: when needed

    modes = run_failure_modes(run_dir) if done.summary.failures else []
    print_summary(done.summary, args.show, modes)
    stdout().print(judged_line(done))
    if learnt is not None:
        stdout().print(learnt_line(learnt))
    console.print(f"report: {shown(write_report(run_dir, modes=modes))}")  # on the verdicts
    return 0


def learnt_line(learnt: Learnt) -> str:
    return (
        f"learnt judge: {shown(learnt.judge_file)}, fitted on the use case's labels and "
        f"{learnt.rows} of yours ({shown(learnt.store)}; {learnt.added} from this run)\n"
        f"measure it: stellar calibrate {learnt.use_case} --set "
        f"{shown(learnt.setting)}\nuse it in a run: --set {shown(learnt.setting)}"
    )


def judged_line(done: Judged) -> str:
    """How many tests this call judged, and why the others were not."""
    parts = [f"{done.judged} tests judged now", f"{done.already} had a verdict already"]
    if done.not_judgeable:
        parts.append(f"{done.not_judgeable} not judged (a system or search judge error)")
    hint = " (--all judges every test anew)" if not done.judged and done.already else ""
    return f"stellar judge: {', '.join(parts)}{hint}"
