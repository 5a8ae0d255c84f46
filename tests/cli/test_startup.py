"""The command line answers at once: help, `stellar list` and usage errors import no heavy
library (torch, scikit-learn, SciPy's statistics, pyribs, openai, pandas, matplotlib, ...),
and reading a configuration imports only what its check needs.

These tests look at what a fresh interpreter has imported, never at timings.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "torch",
    "sklearn",
    "scipy.stats",
    "ribs",
    "numba",
    "openai",
    "pandas",
    "matplotlib",
    "transformers",
    "sentence_transformers",
)

# runs `main(argv)` in a fresh interpreter, then prints the heavy modules it imported
CLI = """\
import json, sys
from stellar.cli.main import main
try:
    code = main(json.loads(sys.argv[1]))
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "heavy": [m for m in json.loads(sys.argv[2]) if m in sys.modules]}))
"""


def imported_by(code: str, *args: str) -> dict:
    ran = subprocess.run(
        [sys.executable, "-c", code, *args, json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--help"], 0),
        (["run", "--help"], 0),
        (["compare", "--help"], 0),
        (["calibrate", "--help"], 0),
        (["explain", "--help"], 0),
        (["explain", "no-such-run-dir"], 2),  # refused before anything heavy is imported
        (["list"], 0),
        (["list", "algorithm"], 0),
        (["list", "usecase"], 0),
        (["run", "--tests", "-1"], 2),  # a flag out of its bounds
        (["run", "--tests", "many"], 2),  # argparse's usage error
        (["run", "--time", "soon"], 2),  # a value its flag's type refuses
        (["bogus"], 2),
        ([], 2),
    ],
)
def test_help_list_and_usage_errors_import_no_heavy_library(argv, code):
    seen = imported_by(CLI, json.dumps(argv))
    assert seen["code"] == code
    assert seen["heavy"] == []


def test_an_nsga2_run_configuration_loads_without_heavy_libraries():
    """The default configuration (the navi use case) has a MAP-Elites section: it is checked,
    but checking it must not import pyribs (nor numba, torch, ... behind it)."""
    seen = imported_by(
        "import json, sys\n"
        "from stellar.config import load_config\n"
        "config = load_config(None, {'algorithm.name': 'stellar'})\n"
        "heavy = [m for m in json.loads(sys.argv[1]) if m in sys.modules]\n"
        "print(json.dumps({'code': config.algorithm.name, 'heavy': heavy}))\n"
    )
    assert seen == {"code": "stellar", "heavy": []}
