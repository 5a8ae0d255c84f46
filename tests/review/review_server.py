"""Runs to review, and `stellar review` started as a server in a process of its own (so that
it can be killed, and holds the run directory's lock as a real reviewer's would)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from conftest import TOY, cli

HOSTILE = (  # the toy use case whose inputs and answers attack an HTML page
    "--set", "generator.target=html_hostile:describe",
    "--set", "sut.target=html_hostile:answer",
    "--set", "oracle.below={quality: 0.5}",
)  # fmt: skip


def builtin_run(out: Path, tests: int = 30) -> Path:
    """An offline run of the built-in use case."""
    result = cli("run", "--tests", tests, "--out", out, "--quiet")
    assert result.returncode == 0, result.stderr
    [run_dir] = list(out.iterdir())
    return run_dir


def hostile_run(out: Path, tests: int = 30) -> Path:
    """A toy run whose texts carry <script>, onerror= and the like."""
    result = cli("run", TOY / "run.yaml", "--tests", tests, "--out", out, "--quiet", *HOSTILE)
    assert result.returncode == 0, result.stderr
    [run_dir] = list(out.iterdir())
    return run_dir


class Server:
    """``stellar review RUN_DIR`` in its own process; ``url`` is the address it printed."""

    def __init__(self, run_dir: Path, *args: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(TOY))  # the toy use case's modules
        self.process = subprocess.Popen(
            [sys.executable, "-m", "stellar.cli", "review", str(run_dir), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.url = self._address()
        self.printed: tuple[str, str] | None = None

    def _address(self, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 1)
            if ready:
                line = self.process.stdout.readline()
                if found := re.search(r"http://127\.0\.0\.1:\d+/[\w-]+/", line):
                    return found.group()
            if self.process.poll() is not None:
                raise RuntimeError(f"stellar review ended: {self.process.stderr.read()}")
        raise TimeoutError("stellar review printed no address")

    def stop(self, kill: bool = False) -> tuple[str, str]:
        """SIGTERM (or SIGKILL) it; what it printed after the address."""
        if self.printed is None:
            self.process.kill() if kill else self.process.terminate()
            self.printed = self.process.communicate(timeout=120)
        return self.printed


@contextlib.contextmanager
def serving(run_dir: Path, *args: str) -> Iterator[Server]:
    server = Server(run_dir, "--reviewer", "tester", *args)
    try:
        yield server
    finally:
        server.stop()


def request(url: str, body: dict | None = None, headers: dict | None = None) -> tuple[int, str]:
    """(status, body) of a GET, or of a POST of ``body`` as JSON."""
    data = None if body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json"} if body is not None else {}
    call = urllib.request.Request(url, data=data, headers=sent | (headers or {}))
    try:
        with urllib.request.urlopen(call, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
