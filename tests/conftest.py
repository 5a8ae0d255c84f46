"""Shared fixtures: the toy use case of tests/fixtures/toy; the command line in this process
(``cli``) and in a fresh interpreter (``stellar``)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
TOY = FIXTURES / "toy"
sys.path.insert(0, str(TOY))  # the toy module is importable as `toy`

# Several pytest-xdist workers share the cores: one OpenMP thread each (torch), else their
# spinning threads slow every worker down many times over (tests/pytest_parallel.md). Set
# before anything imports torch; inherited by the processes the tests start.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    os.environ.setdefault("OMP_NUM_THREADS", "1")


@contextlib.contextmanager
def serving(server):
    """Run an HTTP ``server`` (``socketserver``-like) in a thread; yields its base URL."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def json_handler(reply):
    """A request handler answering a POSTed ``{"text": ...}`` with the JSON of
    ``reply(text)``: the HTTP systems (FAQ bots) the tests start."""
    from http.server import BaseHTTPRequestHandler

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["text"]
            body = json.dumps(reply(text)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    return Handler


def stellar(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    """Run the command line in a fresh interpreter: for what needs a process of its own
    (signals, locks between processes, what a fresh interpreter imports or prints)."""
    return subprocess.run(
        [sys.executable, "-m", "stellar.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


# the warnings a fresh interpreter shows (python -m stellar.cli, no -W, no PYTHONWARNINGS)
FRESH_WARNINGS = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
)


def cli(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    """Run the command line in this process, as ``python -m stellar.cli`` would: the exit code
    (``main``'s return value, or ``SystemExit``'s), standard output and standard error, with
    the warnings a fresh interpreter would print and, for an uncaught exception, exit code 1
    and its traceback; ``env`` replaces the environment and ``cwd`` the working directory for
    the call. Imports and loaded models are shared with the other tests, so a run costs what
    the run costs, not an interpreter's start."""
    import contextlib
    import io
    import os
    import traceback
    import warnings

    from stellar.cli.main import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        with (
            warnings.catch_warnings(record=True) as shown,
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            warnings.resetwarnings()
            for action, category, module in reversed(FRESH_WARNINGS):
                warnings.filterwarnings(action, category=category, module=module)
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: --help, usage errors
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:
                    print(exc.code, file=sys.stderr)
                    code = 1
            except Exception:
                traceback.print_exc()
                code = 1
        for w in shown:
            err.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno))
    finally:
        os.chdir(saved_cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(saved_env)
    return subprocess.CompletedProcess(["stellar", *argv], code, out.getvalue(), err.getvalue())


@pytest.fixture
def toy_config(tmp_path):
    """Load the toy run configuration with overrides, writing runs under tmp_path."""
    from stellar.config import load_config

    def load(**overrides):
        overrides.setdefault("out", str(tmp_path / "runs"))
        return load_config(TOY / "run.yaml", overrides)

    return load


def empty_generator(candidate, rng) -> str:
    """A generator whose every output is invalid."""
    return ""


def crashing_sut(text: str):
    """The toy SUT, crashing on every input about food."""
    from toy import answer

    if "food" in text.lower():
        raise ConnectionError("endpoint unreachable")
    return answer(text)


class EchoSUT:
    """A SUT object with ``query`` returning a plain string and no ``aclose``."""

    async def query(self, text: str) -> str:
        from toy import answer

        return answer(text).text


class AsyncQuality:
    """A fitness object with an async ``__call__``."""

    async def __call__(self, candidate, test_input, response):
        return {"quality": 0.5}


class SlowToLoad:
    """A SUT that takes 2 s to prepare (like a model load), then answers at once."""

    prepared = False

    def prepare(self) -> None:
        import time

        time.sleep(2)
        self.prepared = True

    async def query(self, text: str):
        from toy import answer

        assert self.prepared, "queried before prepare()"
        return answer(text)


class JitterySUT:
    """The toy SUT answering after a random delay (not seeded: timing differs every run);
    counts the calls in flight at once."""

    in_flight = 0
    most_in_flight = 0

    async def query(self, text: str):
        import asyncio
        import random

        from toy import answer

        cls = JitterySUT
        cls.in_flight += 1
        cls.most_in_flight = max(cls.most_in_flight, cls.in_flight)
        try:
            await asyncio.sleep(random.random() ** 4 * 0.05)  # mostly quick, a few slow
        finally:
            cls.in_flight -= 1
        return answer(text)


def says_days(answer, data, features):
    """A check of the form `kind: python` takes: the answer names a number of days."""
    return "days" in answer
