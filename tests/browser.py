"""Headless Chromium driven through the DevTools protocol over a pipe (no extra package).

Chromium started with ``--remote-debugging-pipe`` reads protocol messages from fd 3 and
writes to fd 4, each JSON message ended by a NUL byte. ``Browser`` opens one page, collects
its console messages, exceptions and log entries, evaluates JavaScript in it and takes
screenshots. Used by the report's browser tests and by ``bench/report.py``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_chromium() -> str | None:
    """The Chromium executable on PATH (or $STELLAR_CHROMIUM), None when there is none."""
    given = os.environ.get("STELLAR_CHROMIUM")
    if given:
        return shutil.which(given)
    return next((path for name in NAMES if (path := shutil.which(name))), None)


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, executable: str, width: int = 1280, height: int = 900) -> None:
        self.profile = tempfile.TemporaryDirectory(prefix="stellar-chromium-")
        to_child, self._out = os.pipe()
        self._in, from_child = os.pipe()

        def descriptors() -> None:  # in the child: the protocol's fds 3 and 4
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)

        self.process = subprocess.Popen(
            [
                executable,
                "--headless",
                "--no-sandbox",  # root in CI containers
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--hide-scrollbars",
                "--mute-audio",
                f"--window-size={width},{height}",
                f"--user-data-dir={self.profile.name}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=descriptors,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError, TimeoutError, RuntimeError):
            self.call("Browser.close", session=False, timeout=5)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._out, self._in):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.profile.cleanup()

    # --- the protocol -------------------------------------------------------------------

    def call(self, method: str, session: bool = True, timeout: float = 60, **params: Any) -> Any:
        """Send one command (to the page unless ``session`` is False) and return its result."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium exited")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method: str, timeout: float = 60) -> dict[str, Any]:
        """The next event ``method`` (one already received counts)."""
        deadline = time.monotonic() + timeout
        while True:
            for n, event in enumerate(self.events):
                if event["method"] == method:
                    return self.events.pop(n)
            reply = self._receive(deadline)
            if "method" in reply:
                self.events.append(reply)

    # --- what the tests use -------------------------------------------------------------

    def open(self, path: Path, timeout: float = 60) -> float:
        """Load the file ``path``; the seconds until its load event."""
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        start = time.perf_counter()
        self.call("Page.navigate", url=Path(path).resolve().as_uri())
        self.wait_for("Page.loadEventFired", timeout)
        return time.perf_counter() - start

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def messages(self) -> list[str]:
        """Every console message, uncaught exception and log entry so far, as text."""
        self.evaluate("0")  # collect what is in flight
        out = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.consoleAPICalled":
                out.append(
                    " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
                )
            elif event["method"] == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                out.append(f"exception: {details.get('exception', {}).get('description', details)}")
            elif event["method"] == "Log.entryAdded":
                out.append(f"log: {params['entry'].get('text')}")
        return out

    def screenshot(self, path: Path, top: float = 0, height: float | None = None) -> Path:
        """The page (from ``top``, ``height`` pixels; default: all of it) as a PNG."""
        size = self.call("Page.getLayoutMetrics")["cssContentSize"]
        height = min(height or size["height"], size["height"] - top)
        data = self.call(
            "Page.captureScreenshot",
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": top, "width": size["width"], "height": height, "scale": 1},
        )["data"]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


def needs_chromium(chromium: str | None):
    """The mark that skips a module's tests where Chromium is missing; in CI its absence is a
    failure instead (``make install`` puts it there)."""
    import pytest

    if chromium is None and os.environ.get("CI"):
        pytest.fail("chromium is not installed: make install puts it there", pytrace=False)
    return pytest.mark.skipif(
        chromium is None, reason="chromium is not installed (apt-get install chromium)"
    )
