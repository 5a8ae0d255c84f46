"""A run directory as bytes and back: what travels between the client and a task."""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from stellar.rundir import ARCHIVE_NAME

_NOT_PACKED = {".lock", *(ARCHIVE_NAME + s for s in ("-wal", "-shm", "-journal"))}


def pack(run_dir: Path) -> bytes:
    """A run directory as gzipped tar bytes. The archive is copied first, by SQLite's backup
    API (consistent while a run writes it); the duplicate vectors after it, so they are at
    least as new as the archive says (a resume cuts the surplus)."""
    buffer = io.BytesIO()
    with (
        tempfile.TemporaryDirectory(prefix="stellar-pack-") as tmp,
        tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar,
    ):
        archive = run_dir / ARCHIVE_NAME
        if archive.exists():
            copy = Path(tmp) / ARCHIVE_NAME
            _backup(archive, copy)
            tar.add(copy, ARCHIVE_NAME)
        for path in sorted(run_dir.rglob("*")):
            name = path.relative_to(run_dir).as_posix()
            if (
                path.is_file()
                and not path.is_symlink()
                and name not in {ARCHIVE_NAME, *_NOT_PACKED}
            ):
                tar.add(path, name)
    return buffer.getvalue()


def _backup(source: Path, target: Path) -> None:
    """A consistent single-file copy of a SQLite database (WAL content included)."""
    import sqlite3

    src, dst = sqlite3.connect(source, timeout=30), sqlite3.connect(target)
    try:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=DELETE")
    finally:
        dst.close()
        src.close()


def unpack(data: bytes, run_dir: Path) -> None:
    """Write a packed run directory into ``run_dir``, each file replaced atomically, the
    archive last (with any stale WAL of the one it replaces removed first)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with (
        tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar,
        tempfile.TemporaryDirectory(dir=run_dir.parent, prefix=f".{run_dir.name}-") as tmp,
    ):
        members = [m for m in tar.getmembers() if m.isfile() and _safe(m.name)]
        members.sort(key=lambda m: m.name == ARCHIVE_NAME)
        for member in members:
            source = tar.extractfile(member)
            assert source is not None
            staged = Path(tmp) / member.name
            staged.parent.mkdir(parents=True, exist_ok=True)
            staged.write_bytes(source.read())
            target = run_dir / member.name
            target.parent.mkdir(parents=True, exist_ok=True)
            if member.name == ARCHIVE_NAME:
                for name in _NOT_PACKED - {".lock"}:
                    (run_dir / name).unlink(missing_ok=True)
            os.replace(staged, target)


def _safe(name: str) -> bool:
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and name not in _NOT_PACKED
