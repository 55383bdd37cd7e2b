"""Real storage faults for ``bench/fault_campaign.py`` and the tests: a size-limited tmpfs that
fills up, read-only bind mounts, truncated git objects, overwritten SQLite pages.

Mounting needs root (the tests run as root here and in CI); where it cannot be done the tests
skip, and fail under ``CI=true`` (``tests.conftest.unavailable``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "corrupt_fts",
    "fill",
    "free",
    "immutable",
    "mount_error",
    "object_path",
    "read_only",
    "tmpfs",
    "truncate",
]

FILLER = "filler"


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def mount_error() -> str | None:
    """Why this process cannot mount (``None`` when it can)."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    probe = Path("/tmp") / f"reverie-mount-probe-{os.getpid()}"
    probe.mkdir(exist_ok=True)
    try:
        done = _run("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe))
        if done.returncode != 0:
            return f"mount failed: {done.stderr.strip()}"
        _run("umount", str(probe))
        return None
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (``8m``) mounted at ``where`` for the block."""
    where.mkdir(parents=True, exist_ok=True)
    done = _run("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where))
    if done.returncode != 0:
        raise OSError(f"mount tmpfs at {where}: {done.stderr.strip()}")
    try:
        yield where
    finally:
        _run("umount", "-l", str(where))


def fill(mount: Path, leave: int = 0) -> None:
    """Fill the file system of ``mount`` until at most ``leave`` bytes are free."""
    with open(mount / FILLER, "ab", buffering=0) as f:
        while True:
            stats = os.statvfs(mount)
            room = stats.f_bavail * stats.f_frsize - leave
            if room <= 0:
                break
            try:
                f.write(b"\0" * min(room, 1 << 20))
            except OSError:
                break


def free(mount: Path) -> None:
    """Give back what :func:`fill` took."""
    (mount / FILLER).unlink(missing_ok=True)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """``path`` (a directory) bind-mounted read-only over itself for the block."""
    done = _run("mount", "--bind", str(path), str(path))
    if done.returncode != 0:
        raise OSError(f"bind mount {path}: {done.stderr.strip()}")
    try:
        done = _run("mount", "-o", "remount,ro,bind", str(path))
        if done.returncode != 0:
            raise OSError(f"remount {path} read-only: {done.stderr.strip()}")
        yield path
    finally:
        _run("umount", "-l", str(path))


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[Path]:
    """Everything under ``path`` immutable (``chattr -R +i``) for the block: nothing can be
    created, renamed or opened for writing there, though files already open stay writable.
    Unlike a read-only remount, it can be done while processes hold files open."""
    done = _run("chattr", "-R", "+i", str(path))
    try:
        if done.returncode != 0:
            raise OSError(f"chattr +i {path}: {done.stderr.strip()}")
        yield path
    finally:
        _run("chattr", "-R", "-i", str(path))


def object_path(repo: Path, oid: str) -> Path:
    """The loose object file of ``oid`` in the repository at ``repo``."""
    return repo / ".git" / "objects" / oid[:2] / oid[2:]


def truncate(path: Path, keep: float = 0.5) -> None:
    """Cut a file to ``keep`` of its length, as a power loss can leave it."""
    data = path.read_bytes()
    os.chmod(path, 0o644)
    path.write_bytes(data[: int(len(data) * keep)])


def corrupt_fts(db: Path, table: str = "memory_fts_config") -> None:
    """Overwrite the root page of one of the index's tables with garbage, in place."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        with contextlib.suppress(sqlite3.Error):  # busy, or no room: the page is hit anyway
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
        (root,) = page.fetchone()
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    with open(db, "r+b") as f:
        f.seek((root - 1) * size)
        f.write(bytes((i * 7 + 3) % 256 for i in range(size)))
