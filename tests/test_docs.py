"""docs/plugins.md works as written: its files are written, its commands run as shown."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).parents[1] / "docs" / "plugins.md"
BLOCK = re.compile(r"<!-- (file|run|fails)(?:: (.*?))? -->\n```\w*\n(.*?)```", re.DOTALL)


def test_the_plugin_walkthrough_runs(tmp_path):
    site = tmp_path / "site"  # `pip install` goes here, not into the test environment
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(site),
    }
    steps = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert [kind for kind, _, _ in steps].count("run") == 3
    for kind, arg, body in steps:
        if kind == "file":
            path = tmp_path / arg
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body, encoding="utf-8")
            continue
        for line in body.strip().splitlines():
            args = shlex.split(line)
            if args[:2] == ["pip", "install"]:
                args = [sys.executable, "-m", "pip", "install", "--target", str(site), *args[2:]]
            result = subprocess.run(
                args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
            )
            if kind == "fails":
                assert result.returncode == 2 and arg in result.stderr, result.stderr
                assert len(result.stderr.strip().splitlines()) == 1
            else:
                assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"
            if kind == "run" and args[:2] == ["stellar", "run"]:
                assert "Stopped:" in result.stdout
            if args[:3] == ["stellar", "list", "algorithm"]:
                assert "round-robin  Random candidates, each batch cycling" in result.stdout
    configs = sorted((tmp_path / "runs").glob("*/config.yaml"))
    assert len(configs) == 3
    assert any("currency: GBP" in c.read_text() for c in configs)
