"""docs/your-app.md works as written, from an empty folder: its files are written, its
servers started, its commands run with the exit codes it states."""

import glob
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

DOC = Path(__file__).parents[1] / "docs" / "your-app.md"
BLOCK = re.compile(r"<!-- (file|run|serve)(?:: (.*?))? -->\n```\w*\n(.*?)```", re.DOTALL)


def wait_for(port: int) -> None:
    for _ in range(100):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_worked_example_runs(tmp_path):
    # the doc's ports, moved to free ones (a test beside it, or a service, may hold them)
    ports = {"8766": str(free_port()), "8767": str(free_port())}
    text = DOC.read_text(encoding="utf-8")
    for old, new in ports.items():
        text = text.replace(old, new)
    env = {
        **os.environ,
        "COLUMNS": "200",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    servers = []
    outputs = {}
    try:
        for kind, arg, body in BLOCK.findall(text):
            if kind == "file":
                (tmp_path / arg).write_text(body, encoding="utf-8")
                continue
            for line in body.strip().splitlines():
                args = shlex.split(line.removesuffix("&"))
                args = [sys.executable if a == "python" else a for a in args]
                args = [next(iter(sorted(glob.glob(a, root_dir=tmp_path))), a) for a in args]
                if kind == "serve":
                    servers.append(subprocess.Popen(args, cwd=tmp_path, env=env))
                    wait_for(int(arg))
                    continue
                done = subprocess.run(
                    args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
                )
                assert done.returncode == int(arg or 0), f"{line}\n{done.stdout}\n{done.stderr}"
                outputs[args[1] if args[0] == "stellar" else line] = done.stdout
    finally:
        for server in servers:
            server.kill()
    assert "(paraphrase): not understood" in outputs["run"]  # the modes name the topic
    assert "Failure conditions" in outputs["run"]
    assert list(tmp_path.glob("runs/run-stellar-s1-*/export/failures.jsonl"))
    assert "fixed" in outputs["replay"]
