"""One process at a time in a run or experiment directory.

The lock is an advisory ``flock`` on ``DIR/.lock``, which the kernel releases when the
holder dies, however it dies: a lock left by a killed process is stale by construction and
taken over. The file says who holds it (pid, host, since when, what), so that a second
process can name the holder in its one-line error.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from stellar.errors import StellarError

LOCK_NAME = ".lock"


class DirectoryLock:
    """Held from :meth:`acquire` until :meth:`release` (or the process ends)."""

    def __init__(self, directory: Path, what: str) -> None:
        self.path = Path(directory) / LOCK_NAME
        self.what = what  # "run", "experiment": for the holder's description
        self._fd: int | None = None

    def acquire(self) -> DirectoryLock:
        if self._fd is not None:
            return self
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(self.path)
            os.close(fd)
            raise StellarError(
                f"{self.path.parent} is in use by {holder}; wait for it to end or stop it"
            ) from None
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({**holder, "what": self.what}).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)  # nobody holds it now: the file names no one
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> DirectoryLock:
        return self.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _holder(path: Path) -> str:
    """'stellar run (pid 123 on host h, since 17:02:11)', or a plain description."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(found["since"])))
        return (
            f"another stellar {found.get('what', 'process')} "
            f"(pid {int(found['pid'])} on host {found['host']}, since {since})"
        )
    except (OSError, ValueError, KeyError, TypeError):
        return "another stellar process"


@contextlib.contextmanager
def waiting_for(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (made if missing), waiting while another
    process holds it: for writing one entry of a shared cache, so that parallel workers on a
    fresh machine wait for one conversion and then find it written, instead of racing over
    the same files. The kernel drops the lock of a process that dies."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the flock
