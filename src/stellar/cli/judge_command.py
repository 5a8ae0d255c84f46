"""``stellar judge``: the post-search oracle over a run directory, on its own or to finish it."""

from __future__ import annotations

import argparse
from pathlib import Path

from stellar import event_loop
from stellar.cli.options import OFFLINE
from stellar.cli.output import JudgingProgress, console, print_summary, progress_bar, shown
from stellar.errors import StellarError
from stellar.rundir import ARCHIVE_NAME, CONFIG_NAME

HELP = """\
Judge every executed test of a run with the run's post-search judge (oracle.post_search in
its configuration, e.g. the safety use case's binary safe / unsafe / unknown judge), and
count the failures by its verdicts. A run does this itself when its search ends by its
budget; use this command when the run was stopped or killed before, or when the judge failed
half-way. Verdicts are committed one by one: running the command again judges only what is
left (tests without a verdict or whose verdict failed). With --all, every test is judged
anew (e.g. by another judge model); if that is stopped, run it again without --all to
finish.

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
    judge.add_argument(
        "--show", type=int, default=10, metavar="N", help="failures to list at the end (default 10)"
    )
    judge.add_argument("--quiet", action="store_true", help="no progress bar")
    judge.set_defaults(handler=cmd_judge)


def cmd_judge(args: argparse.Namespace) -> int:
    # the configuration's and the judges' modules (models): imported here, not for --help
    from stellar.archive import check_archive
    from stellar.config import load_config
    from stellar.post_search import judge_run_dir

    config_file = f"{args.run_dir}/{CONFIG_NAME}"
    try:
        open(config_file, encoding="utf-8").close()
    except OSError:
        raise StellarError(f"{args.run_dir}: not a run directory (no {CONFIG_NAME})") from None
    overrides = {
        "judge.model": "" if args.judge == OFFLINE else args.judge,
        "oracle.post_search.concurrency": args.concurrency,
    }
    config = load_config(config_file, overrides)
    if (archive := Path(args.run_dir) / ARCHIVE_NAME).exists():
        check_archive(archive)  # a damaged archive is one line, before the header
    progress = progress_bar(args.quiet)
    judging = JudgingProgress(progress)
    console.print(f"[bold]stellar judge[/] {shown(args.run_dir)}")
    with progress:
        summary = event_loop.run(judge_run_dir(args.run_dir, config, judging.update, args.all))
    print_summary(summary, args.show)
    return 0
