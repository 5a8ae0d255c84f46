"""Progress where no bar can be drawn: lines at a steady interval (issue: a run redirected to
files printed nothing for 45 minutes)."""

import io
import json
import threading

from conftest import TOY, cli
from rich.console import Console

from stellar.cli.line_progress import DEFAULT_INTERVAL, INTERVAL_ENV, LineProgress, line_interval


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def progress(clock=None, interval: float | None = 10.0) -> tuple[LineProgress, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False)
    return LineProgress(console, interval=interval, clock=clock or Clock()), out


def test_a_line_says_done_of_total_failures_errors_and_time():
    clock = Clock()
    lines, out = progress(clock)
    task = lines.add_task("testing", total=200, failures=0, ratio=0.0, errors=0)
    clock.now += 5
    lines.update(task, completed=50, failures=7, ratio=7 / 40, errors=1)
    lines.tick()
    assert out.getvalue().strip() == (
        "testing: 50 of 200 (25%), failures 7 (17.5% of verdicts), errors 1, 5 s"
    )


def test_the_last_line_is_printed_once_and_only_when_something_changed():
    lines, out = progress()
    first = lines.add_task("testing", total=10, failures=0, ratio=0.0, errors=0)
    second = lines.add_task("judging", total=3, failures=0, ratio=0.0, errors=0)
    lines.update(first, completed=10)
    lines.tick()
    lines.update(second, advance=1, failures=1, ratio=1.0)
    lines.tick(final=True)
    printed = out.getvalue().splitlines()
    assert [line.split(":")[0] for line in printed] == ["testing", "judging", "judging"]
    assert printed[-1].startswith("judging: 1 of 3 (33%), failures 1 (100.0% of verdicts)")


def test_lines_come_while_the_work_runs_not_only_at_the_end():
    lines, out = progress(interval=0.01)
    task = lines.add_task("testing", total=None)
    seen = threading.Event()
    with lines:
        lines.update(task, completed=3)
        for _ in range(500):  # up to 5 s for the timer thread to print a few lines
            if out.getvalue().count("testing: 3") >= 2:
                seen.set()
                break
            threading.Event().wait(0.01)
    assert seen.is_set(), out.getvalue()


def test_the_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(INTERVAL_ENV, "2.5")
    assert line_interval() == (2.5, None)
    monkeypatch.setenv(INTERVAL_ENV, "")
    assert line_interval() == (DEFAULT_INTERVAL, None)
    for bad in ("soon", "0", "-3", "nan", "inf"):
        monkeypatch.setenv(INTERVAL_ENV, bad)
        seconds, problem = line_interval()
        assert seconds == DEFAULT_INTERVAL and f"{INTERVAL_ENV}={bad}" in problem
    _, out = progress(interval=None)  # said once, where the lines go
    assert out.getvalue().startswith(f"stellar: warning: {INTERVAL_ENV}=inf")


def test_a_run_whose_output_is_not_a_terminal_prints_progress_lines(tmp_path):
    result = cli("run", TOY / "run.yaml", "--tests", "40", "--out", tmp_path, "--seed", "1")
    assert result.returncode == 0, result.stderr
    [run_dir] = list(tmp_path.iterdir())
    summary = json.loads((run_dir / "summary.json").read_text())
    testing = [line for line in result.stderr.splitlines() if line.startswith("testing: ")]
    assert testing, result.stderr
    last = testing[-1]  # the bar ends on the summary's counts
    assert last.startswith(f"testing: {summary['tests']} of 40 ")
    assert f"failures {summary['failures']} ({summary['failure_ratio']:.1%} of verdicts)" in last
    assert "preparing" in result.stderr
    assert "s in all = " in result.stderr  # where the time went besides the testing time


def test_the_time_line_of_a_resumed_run_adds_up_to_this_sessions_time(tmp_path):
    import re

    assert cli("run", TOY / "run.yaml", "--tests", "20", "--out", tmp_path).returncode == 0
    [run_dir] = list(tmp_path.iterdir())
    resumed = cli("run", "--resume", run_dir, "--tests", "40")
    assert resumed.returncode == 0, resumed.stderr
    [line] = [x for x in resumed.stderr.splitlines() if x.startswith("time: ")]
    total, *parts = (float(x) for x in re.findall(r"(-?\d+\.\d+) s", line))
    assert all(part >= 0 for part in parts) and abs(sum(parts) - total) < 0.15
