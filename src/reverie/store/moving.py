"""Moving a home between backends (SPEC D2): ``reverie migrate --to`` and ``reverie export``.

``copy_to_postgres`` copies an embedded home (SQLite + git) into an empty PostgreSQL database:
every table row as it is, and every memory's files at every revision (read from git), so
history, diffs and point-in-time reads survive; the search index is built from the files.
It runs in one transaction: a failure leaves the target as it was.

``export_git`` writes one memory, from either backend, as a new git repository with one
commit per revision, carrying each revision's message (and its ``Reverie-*`` trailers).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reverie.errors import RefusedInput
from reverie.index import fts

from .gitrepo import GitRepo
from .memories import MemoryStore
from .postgres import PostgresState
from .state import SQLiteState

__all__ = ["copy_to_postgres", "export_git"]

#: Derived from the memory files, rebuilt in the target rather than copied.
_REBUILT = {"memory_lines"}
_CHUNK = 2000

Progress = Callable[[str, int], None]


#: What makes a database not empty for a migration, as a message names it, and its table.
_OCCUPIED = (
    ("agents", "agents"),
    ("members", "members"),
    ("API tokens", "api_tokens"),
    ("conversations", "conversations"),
)


def copy_to_postgres(
    state: SQLiteState,
    memories: MemoryStore,
    target: PostgresState,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Copy the embedded home of ``state`` and ``memories`` into ``target``; rows per table
    and ``revisions`` copied.

    Raises:
        RefusedInput: ``target_not_empty``: the target holds agents, members, tokens or
            conversations already (a member made there first would keep their rights beside
            the home's, or collide with one of its names).
    """
    held = [
        what
        for what, table in _OCCUPIED
        if (row := target.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()) and row[0]
    ]
    if held:
        raise RefusedInput(
            f"{target.where} holds {', '.join(held)} already; migrate into an empty database "
            "(one `reverie init` made, nothing else). Nothing was copied.",
            code="target_not_empty",
        )
    source = state.conn
    tables = [
        str(r[0])
        for r in source.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE '%VIRTUAL%' "
            "ORDER BY rowid"
        )
        if not str(r[0]).startswith(("memory_fts", "history_fts", "sqlite_"))
    ]
    counts: dict[str, int] = {}
    with target.transaction() as conn:
        for table in tables:
            if table in _REBUILT:
                continue
            counts[table] = _copy_table(source, conn, table)
            if progress:
                progress(table, counts[table])
        revisions = 0
        for (memory_id,) in source.execute("SELECT id FROM memories ORDER BY id").fetchall():
            latest = memories.current(memory_id)
            before: dict[str, str] = {}
            for n in range(latest.revision + 1):
                files = memories.files(memory_id, state.revision(memory_id, n))
                changed: dict[str, str | None] = {
                    p: t for p, t in files.items() if before.get(p) != t
                }
                changed.update({p: None for p in before if p not in files})
                conn.executemany(
                    "INSERT INTO memory_files (memory_id, path, revision, text) "
                    "VALUES (?, ?, ?, ?)",
                    [(memory_id, p, n, t) for p, t in changed.items()],
                )
                before = files
                revisions += 1
            for path, text in before.items():
                fts.replace_file(conn, memory_id, path, None, text)
            if progress:
                progress("revisions", revisions)
        counts["revisions_with_files"] = revisions
        # Identity columns given explicit values: their sequences continue after the largest.
        for table, column in conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE is_identity = 'YES' AND table_schema = current_schema()"
        ).fetchall():
            conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                f"COALESCE((SELECT MAX({column}) FROM {table}), 0) + 1, false)"
            )
    return counts


def _copy_table(source: sqlite3.Connection, conn: Any, table: str) -> int:
    columns = [str(r[1]) for r in source.execute(f'PRAGMA table_info("{table}")')]
    names = ", ".join(columns)
    insert = f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' for _ in columns)})"
    cur = source.execute(f'SELECT {names} FROM "{table}"')
    total = 0
    while rows := cur.fetchmany(_CHUNK):
        conn.executemany(insert, rows)
        total += len(rows)
    return total


def export_git(memories: MemoryStore, memory_id: str, folder: Path) -> int:
    """Write memory ``memory_id`` to ``folder`` as a git repository, one commit per revision;
    returns the number of commits.

    Raises:
        RefusedInput: ``invalid_path``: ``folder`` exists and is not empty.
    """
    if "\0" in str(folder):
        raise RefusedInput("The folder's name holds a NUL character.", code="invalid_path")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise RefusedInput(
            f"{folder} exists and is not an empty folder; export into a new one (nothing was "
            "written).",
            code="invalid_path",
        )
    folder.mkdir(parents=True, exist_ok=True)
    latest = memories.current(memory_id)
    repo = GitRepo.create(folder)
    parent: str | None = None
    before: dict[str, str] = {}
    for n in range(latest.revision + 1):
        rec = memories.state.revision(memory_id, n)
        files = memories.files(memory_id, rec)
        changes: dict[str, str | None] = {p: t for p, t in files.items() if before.get(p) != t}
        changes.update({p: None for p in before if p not in files})
        parent = repo.commit(parent, changes, rec.message, rec.writer)
        before = files
    repo.checkout(None)
    return latest.revision + 1
