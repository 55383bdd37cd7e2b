"""A per-memory lock that holds across threads and processes (W8), on the embedded default.

``flock`` locks belong to an open file description, so two opens of the same lock file
conflict even inside one process: one mechanism covers threads and processes alike, and the
kernel drops the lock when its holder dies, so a killed writer never leaves a memory locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from reverie.errors import StorageFault

from .faults import storage_fault

__all__ = ["file_lock", "try_file_lock"]


def _open(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        # On read-only storage a lock cannot be had, nor is one needed by a reader.
        raise storage_fault(exc, f"opening the lock {path.name}") from exc


@contextlib.contextmanager
def file_lock(path: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed) for the ``with`` block.

    Raises:
        StorageFault: the lock could not be had within ``timeout`` seconds, or its file cannot
            be opened (``storage_read_only``, ``storage_full``).
    """
    fd = _open(path)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StorageFault(
                        f"Another writer has held {path.name} for over {timeout:.0f} s; "
                        "try again, or look for a stuck reverie process.",
                        lock=str(path),
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.01)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def try_file_lock(path: Path) -> Iterator[bool]:
    """Take the lock on ``path`` if it is free; yields whether it was taken (never waits).

    Raises:
        StorageFault: the lock file cannot be opened (``storage_read_only``, ...).
    """
    fd = _open(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
