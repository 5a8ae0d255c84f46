"""The package's shape: import layers, use-case knowledge kept in use cases, small modules."""

import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "stellar"
USE_CASE_WORDS = re.compile(r"\bnavi\w*|navigation|venues?\b|\bpois?\b", re.IGNORECASE)
MAX_LINES = 400
LONGER = {}  # module -> why it may be longer than MAX_LINES


def test_imports_only_run_downwards():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint)], capture_output=True, text=True, cwd=SRC.parents[1], timeout=300
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "1 kept, 0 broken" in result.stdout


def test_the_generic_core_mentions_no_use_case():
    found = [
        f"{path.relative_to(SRC)}:{n}: {line.strip()}"
        for path in SRC.rglob("*")
        if path.suffix in (".py", ".yaml", ".j2") and "usecases" not in path.parts
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if USE_CASE_WORDS.search(line)
    ]
    assert found == []


def test_modules_stay_small():
    long = {
        str(path.relative_to(SRC)): n
        for path in SRC.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert {name: n for name, n in long.items() if name not in LONGER} == {}
