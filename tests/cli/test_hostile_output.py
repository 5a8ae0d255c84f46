"""A hostile system under test: its escapes never reach the terminal, its formulas no CSV."""

import csv
import re
from pathlib import Path

import pytest
from conftest import TOY

from stellar.cli import main

FORMULAS = ('=HYPERLINK("http://x")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3")
TOY_ANSWER = "here you go"

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
FORMULA = ("=", "+", "@")
MANY_FAILURES = ["--set", "oracle.below={quality: 0.5}"]


def formula_cells(folder: Path) -> list[tuple[str, str]]:
    """(file, cell) for each cell of the CSV files in ``folder`` a spreadsheet would run."""
    found = []
    for path in sorted(folder.glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as fh:
            found += [(path.name, cell) for row in csv.reader(fh) for cell in row]
    return [(name, cell) for name, cell in found if cell.startswith(FORMULA)]


def test_a_run_shows_hostile_answers_as_text_and_exports_them_quoted(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # a table row on one line
    args = ["run", str(TOY / "run.yaml"), "--sut", "hostile:answer", "--tests", "40"]
    assert main([*args, *MANY_FAILURES, "--out", str(tmp_path), "--quiet", "--seed", "1"]) == 0
    printed = capsys.readouterr()
    # in the table of failure modes, each titled by its answer's opening ...
    assert any(f"{f} {TOY_ANSWER}" in printed.out for f in FORMULAS)
    assert not UNSAFE.search(printed.out + printed.err)  # ... as text
    [run_dir] = tmp_path.iterdir()
    assert main(["export", str(run_dir)]) == 0
    export = run_dir / "export"
    assert formula_cells(export) == []
    with (export / "failures.csv").open(encoding="utf-8", newline="") as fh:
        answers = [row["response_text"] for row in csv.DictReader(fh)]
    assert answers and all(a.startswith(tuple(f"'{f}" for f in FORMULAS)) for a in answers)


def test_the_compare_report_quotes_hostile_answers(tmp_path, capsys):
    code = main(
        ["compare", str(TOY / "run.yaml"), "--algorithms", "random", "--seeds", "1",
         "--tests", "30", "--sut", "hostile:answer", *MANY_FAILURES,
         "--out", str(tmp_path / "exp"), "--parallel", "1", "--embedder", "hashing",
         "--repeats", "1"]
    )  # fmt: skip
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert not UNSAFE.search(printed.out + printed.err)
    report = tmp_path / "exp" / "report"
    assert (report / "failure_types.csv").read_text(encoding="utf-8").count("'=HYPERLINK")
    assert formula_cells(report) == []


@pytest.mark.parametrize("command", ["run", "compare"])
def test_a_hostile_error_message_prints_as_text(tmp_path, capsys, command):
    args = [command, str(TOY / "run.yaml"), "--sut", "hostile:crash", "--tests", "40"]
    extra = {"run": ["--quiet"], "compare": ["--algorithms", "random", "--seeds", "1"]}
    assert main([*args, *extra[command], "--out", str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert "boom" in err and not UNSAFE.search(err)
