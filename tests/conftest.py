"""Shared fixtures: the toy use case of tests/fixtures/toy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
TOY = FIXTURES / "toy"
sys.path.insert(0, str(TOY))  # the toy module is importable as `toy`


def stellar(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    """Run the command line in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "stellar.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


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
