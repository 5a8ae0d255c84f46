"""The end-of-run table: one row per failure mode, with its count and a typical example."""

import io

from rich.console import Console

from stellar.analysis.failure_modes import FailureMode, mode_title
from stellar.cli.output import modes_table

REFUSAL = "Sorry, I'm not sure what kind of place you are looking for."


def rendered(table) -> list[str]:
    """The table's data rows: the lines whose first cell holds a rank."""
    console = Console(file=io.StringIO(), width=240, color_system=None)
    console.print(table)
    lines = console.file.getvalue().splitlines()
    return [line for line in lines if line.startswith("│") and line[1:].split("│")[0].strip()]


def mode(size: int, answer: str, objective: str = "content") -> FailureMode:
    inputs = [f"take me to place {i}" for i in range(size)]
    examples = [(text, answer) for text in inputs[:3]]
    return FailureMode(mode_title((objective,), answer), (objective,), size, examples)


def test_a_failure_repeated_ten_times_is_one_row_with_its_count():
    modes = [mode(10, REFUSAL), mode(1, "Error 503", "response")]
    rows = rendered(modes_table(modes, 10, {"take me to place 0": "content 0.00"}))
    assert len(rows) == 2
    first = [cell.strip() for cell in rows[0].strip("│").split("│")]
    assert first == [
        "1",
        f"content failed: “{REFUSAL}”",
        "10",
        "take me to place 0",
        "content 0.00",
    ]
    assert [cell.strip() for cell in rows[1].strip("│").split("│")][:3] == [
        "2",
        "response failed: “Error 503”",
        "1",
    ]


def test_show_limits_the_modes_listed_and_the_title_says_how_many():
    modes = [mode(5 - i, f"answer family {i} of the assistant") for i in range(4)]
    table = modes_table(modes, 2, {})
    assert len(rendered(table)) == 2
    assert str(table.title).startswith("Failure modes (largest first, 2 of 4;")


def test_tables_off_a_terminal_are_as_wide_as_a_log_allows(monkeypatch):
    from stellar.cli.output import LOG_WIDTH, stdout

    monkeypatch.delenv("COLUMNS", raising=False)
    assert stdout().width == LOG_WIDTH  # not rich's 80, which cut compare's headers
    monkeypatch.setenv("COLUMNS", "100")
    assert stdout().width == 100
