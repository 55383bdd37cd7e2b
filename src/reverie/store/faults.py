"""Faults of the storage under a home, as :class:`StorageFault` with a way out.

The one place that reads a lower library's error (sqlite3, pygit2, the operating system) and
says what it means: a full disk is ``storage_full``, storage that cannot be written is
``storage_read_only``, anything else ``storage_fault`` with the advice to run
``reverie doctor``. The stores call it where they meet such an error; the facade's guard calls
it for whatever they did not.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from reverie.errors import StorageFault

__all__ = [
    "ENVIRONMENT",
    "environment_fault",
    "is_corruption",
    "not_writable",
    "storage_fault",
]

#: The codes of faults of the environment, not of the data: reads go on through them.
ENVIRONMENT = frozenset({"storage_full", "storage_read_only"})

#: errno values that mean "no room", and "not writable here".
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


def storage_fault(exc: BaseException, doing: str = "") -> StorageFault:
    """A lower library's error as a :class:`StorageFault` with a way out."""
    what = f" while {doing}" if doing else ""
    if (isinstance(exc, OSError) and exc.errno in _FULL) or _says_full(exc):
        return StorageFault(
            f"The disk holding the data directory is full{what} ({_short(exc)}). Nothing was "
            "written; free some space and try again. Reads still work.",
            code="storage_full",
        )
    if (isinstance(exc, OSError) and exc.errno in _READ_ONLY) or _says_read_only(exc):
        return StorageFault(
            f"The data directory is not writable{what} ({_short(exc)}). Nothing was written; "
            "reads still work. Make it writable to write.",
            code="storage_read_only",
        )
    return StorageFault(
        f"The data directory failed{what}: {_short(exc)}. Run `reverie doctor` to check and "
        "repair it.",
    )


def is_corruption(exc: BaseException | None) -> bool:
    """Whether ``exc``, or an error it was raised from, is SQLite reporting damaged pages or a
    damaged FTS5 table."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, sqlite3.DatabaseError):
            code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
            text = str(exc)
            if code == sqlite3.SQLITE_CORRUPT or "malformed" in text:
                return True
            if "vtable constructor failed" in text or "fts5: corrupt" in text:
                return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def environment_fault(why: str, detail: str, doing: str = "") -> StorageFault:
    """The fault for ``why`` (``storage_full`` or ``storage_read_only``), whatever words the
    library that met it used (``detail``)."""
    number = errno.ENOSPC if why == "storage_full" else errno.EROFS
    return storage_fault(OSError(number, detail or os.strerror(number)), doing)


def not_writable(folder: Path) -> str | None:
    """Why nothing can be written in ``folder`` (``storage_read_only``, ``storage_full``), or
    ``None`` when the storage itself allows writing."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    if stats.f_flag & os.ST_RDONLY or not os.access(folder, os.W_OK):
        return "storage_read_only"
    free = stats.f_bfree if os.geteuid() == 0 else stats.f_bavail
    # Less room than SQLite needs for its WAL index (32 KiB) is full for every purpose here.
    if free * stats.f_frsize < 65_536 or (stats.f_favail == 0 and stats.f_files > 0):
        return "storage_full"
    return None


# sqlite3 and libgit2 report these in words only (libgit2 raises an OSError without errno).
def _says_full(exc: BaseException) -> bool:
    return "disk is full" in str(exc) or "No space left" in str(exc)


def _says_read_only(exc: BaseException) -> bool:
    text = str(exc)
    return any(
        words in text
        for words in (
            "readonly database",
            "Read-only file system",
            "Operation not permitted",  # an immutable file or directory
            "Permission denied",
        )
    )


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "…"
