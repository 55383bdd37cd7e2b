"""The state database of the embedded default: SQLite in the data directory (SPEC D1).

It holds what is not a memory file: members, agents, memories, the revision of every commit,
idempotency keys, refused-write counters, and the derived full-text index. The schema is
created and migrated on open. Each thread gets its own connection; SQLite's WAL lets readers
run beside the one writer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import sqlite3
import threading
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reverie.core import validation
from reverie.core.prompt import FRAMINGS
from reverie.errors import NotFound, RefusedInput, StorageFault
from reverie.index import fts, history

from . import instructions, outbox, souls, tokens, turns
from .faults import environment_fault, not_writable, storage_fault
from .locks import try_file_lock

log = logging.getLogger(__name__)

__all__ = [
    "AGENT_ID",
    "DB_NAME",
    "KEY_RECORD",
    "KEY_UPSERT",
    "LATEST_REVISION",
    "MEMBER_ID",
    "MEMBER_ROLES",
    "Agent",
    "KeyRecord",
    "Member",
    "RevisionRecord",
    "SQLiteState",
    "agent_and_memory_of",
    "agent_and_memory_sql",
    "column_of",
    "key_of",
    "key_row",
    "revision_of",
    "revision_row",
]

#: A connection opened for reading only is reopened for writing after this many seconds.
_DEGRADED_SECONDS = 2.0

#: The state database's file in an embedded home.
DB_NAME = "reverie.db"

EDIT_POLICIES = ("editors", "all_workspace_members")
WRITER_MODES = ("review_only", "conversations")
MEMBER_ROLES = ("owner", "admin", "member")

_MIGRATIONS: list[str] = [
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE members (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'admin', 'member')),
        active INTEGER NOT NULL DEFAULT 1,
        created_at REAL NOT NULL
    );
    CREATE TABLE agents (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        creator TEXT,
        edit_policy TEXT NOT NULL DEFAULT 'editors',
        memory_writers TEXT NOT NULL DEFAULT 'review_only',
        default_model TEXT,
        archived INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL
    );
    CREATE TABLE memories (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        scope TEXT NOT NULL DEFAULT 'agent',
        created_at REAL NOT NULL
    );
    CREATE INDEX memories_by_agent ON memories (agent_id);
    CREATE TABLE revisions (
        memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        revision INTEGER NOT NULL,
        oid TEXT NOT NULL,
        created_at REAL NOT NULL,
        writer TEXT NOT NULL,
        message TEXT NOT NULL,
        paths TEXT NOT NULL,
        PRIMARY KEY (memory_id, revision)
    );
    CREATE TABLE idempotency_keys (
        memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        key_hash TEXT NOT NULL,
        batch_hash TEXT NOT NULL,
        revision INTEGER NOT NULL,
        changed INTEGER NOT NULL,
        paths TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (memory_id, key_hash)
    );
    CREATE TABLE write_failures (
        memory_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (memory_id, conversation_id)
    );
    """
    + fts.LINES_SCHEMA,
    # 2: the workspace beyond agents (channels, grants), conversations and their messages,
    # the history search rows, and tombstones of deleted memories (A3).
    """
    CREATE TABLE channels (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('dm', 'channel', 'group', 'web', 'automation')),
        name TEXT,
        reports_to TEXT REFERENCES channels (id),
        created_at REAL NOT NULL
    );
    CREATE TABLE grants (
        agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        channel_id TEXT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
        status TEXT NOT NULL CHECK (status IN ('active', 'revoked')),
        changed_at REAL NOT NULL,
        PRIMARY KEY (agent_id, channel_id)
    );
    CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        channel_id TEXT NOT NULL REFERENCES channels (id),
        parent_id TEXT REFERENCES conversations (id) ON DELETE CASCADE,
        title TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        last_message_at REAL,
        model TEXT,
        thinking TEXT,
        memory_mode TEXT CHECK (memory_mode IN ('on', 'off')),
        mode_reason TEXT,
        started_by TEXT,
        closed INTEGER NOT NULL DEFAULT 0,
        deleted INTEGER NOT NULL DEFAULT 0,
        message_count INTEGER NOT NULL DEFAULT 0,
        text_chars INTEGER NOT NULL DEFAULT 0,
        reviewed_upto INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX conversations_by_agent ON conversations (agent_id, updated_at);
    CREATE INDEX conversations_by_parent ON conversations (parent_id);
    CREATE TABLE conversation_links (
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        channel_id TEXT NOT NULL REFERENCES channels (id),
        PRIMARY KEY (conversation_id, channel_id)
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
        author TEXT,
        text TEXT NOT NULL,
        created_at REAL NOT NULL,
        channel_id TEXT REFERENCES channels (id),
        fingerprint TEXT NOT NULL,
        UNIQUE (conversation_id, position),
        UNIQUE (conversation_id, fingerprint)
    );
    CREATE TABLE deleted_memories (memory_id TEXT PRIMARY KEY, deleted_at REAL NOT NULL);
    """
    + history.DOCS_SCHEMA,
    # 3: review runs and batches (R1, R7)
    """
    CREATE TABLE review_runs (
        agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        started_at REAL NOT NULL,
        finished_at REAL,
        trigger TEXT NOT NULL,
        batches INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (agent_id, started_at)
    );
    CREATE TABLE review_batches (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        created_at REAL NOT NULL,
        ranges TEXT NOT NULL,
        revision INTEGER NOT NULL,
        changed INTEGER NOT NULL,
        model_calls INTEGER NOT NULL,
        tokens_in INTEGER NOT NULL,
        tokens_out INTEGER NOT NULL,
        dropped TEXT NOT NULL
    );
    CREATE INDEX review_batches_by_agent ON review_batches (agent_id, created_at);
    """,
    # 4: memory rows carry a scope word: a search ranks only its own memory's rows
    fts.SCOPE_MIGRATION,
    # 5: history rows carry the text of the messages before them
    history.CONTEXT_MIGRATION,
    # 6: the agent run: how memory is framed in its prompt, souls, channel instructions and
    # their approvals, the outbox, run sessions and the audit of every turn
    "ALTER TABLE agents ADD COLUMN memory_framing TEXT NOT NULL DEFAULT 'guide';\n"
    + souls.SCHEMA
    + instructions.SCHEMA
    + outbox.SCHEMA
    + turns.SCHEMA,
    # 7: who is calling: API tokens, one-time sign-in links, admin sessions
    tokens.SCHEMA,
    # 8: a turn whose process died is marked ``interrupted`` (PostgreSQL: its migration 105)
    turns.INTERRUPTED_MIGRATION,
    # 9: an approved bundle is claimed before its memory half is written: who, and when;
    # admin sessions opened before a session named its token end (sign in once again)
    instructions.APPLYING_MIGRATION + tokens.SESSIONS_MIGRATION,
    # 10: the idempotency keys stored before a caller's keys had a namespace of their own
    # (``caller:``) are marked, so that a caller's key stored then, raw, still answers that
    # caller (W7; ``store.memories._legacy_hash``). Keys are stored hashed: they cannot be
    # moved into the namespace, nor told apart from the keys Reverie made for its own writes.
    """
    ALTER TABLE idempotency_keys ADD COLUMN legacy INTEGER NOT NULL DEFAULT 0;
    UPDATE idempotency_keys SET legacy = 1;
    """,
]


@dataclass(frozen=True)
class Agent:
    """An agent as stored (SPEC 1)."""

    id: str
    name: str
    creator: str | None
    edit_policy: str
    memory_writers: str
    default_model: str | None
    archived: bool
    created_at: float
    #: How memory is framed in the prompt (P1): ``guide`` or ``advisory``.
    memory_framing: str = "guide"


@dataclass(frozen=True)
class Member:
    """A member of the workspace (SPEC 1): a role, and whether the member is active."""

    id: str
    name: str
    role: str
    active: bool
    created_at: float


@dataclass(frozen=True)
class RevisionRecord:
    """One accepted write: its revision, commit and what it touched."""

    revision: int
    oid: str
    created_at: float
    writer: str
    message: str
    paths: list[str]


@dataclass(frozen=True)
class KeyRecord:
    """What an idempotency key produced the first time."""

    batch_hash: str
    revision: int
    changed: bool
    paths: list[str]


class SQLiteState:
    """The state database at ``path``; safe to share between threads and processes."""

    def __init__(self, path: Path, *, durable: bool = False) -> None:
        self.path = path
        self._durable = durable
        self._local = threading.local()
        self.has_fts5 = False
        self._migrate()

    # connections and transactions

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (autocommit mode; transactions are explicit).

        When the database cannot be opened for writing (the disk is full, or the storage is
        read-only), it is opened for reading only (:attr:`degraded` says why): reads go on,
        writes are refused with that code. Such a connection is reopened for writing after
        :data:`_DEGRADED_SECONDS`, once the storage lets it.
        """
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        reopen = self.degraded is not None and (
            time.monotonic() - self._local.opened > _DEGRADED_SECONDS
        )
        if conn is not None and reopen:
            conn.close()
            conn = None
        if conn is None:
            conn, self._local.degraded = self._connect()
            self._local.conn, self._local.opened = conn, time.monotonic()
        return conn

    def release(self) -> None:
        """After a facade call: nothing to give back (each thread keeps its SQLite
        connection)."""

    def try_review_lock(self, agent_id: str) -> contextlib.AbstractContextManager[bool]:
        """Leadership of one agent's review (R10), across processes: yields whether this
        process holds it (never waits)."""
        folder = self.path.parent / "locks"
        folder.mkdir(exist_ok=True)
        return try_file_lock(folder / f"review-{agent_id}.lock")

    def try_turn_lock(self, key: str) -> contextlib.AbstractContextManager[bool]:
        """Hold the turn of the message ``key`` (a chat event's id), across threads and
        processes: yields whether this caller holds it (never waits). A file lock in the
        home's ``locks/turns`` folder; the kernel drops it when its process dies."""
        folder = self.path.parent / "locks" / "turns"
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(key.encode()).hexdigest()[:32]
        return try_file_lock(folder / f"{name}.lock")

    def prune_turn_locks(self, older: float = 3600.0) -> None:
        """Remove the files of the turn locks made over ``older`` seconds ago (no turn, nor a
        chat's retry of its event, lasts that long)."""
        cutoff = time.time() - older
        folder = self.path.parent / "locks" / "turns"
        for path in folder.glob("*.lock"):
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < cutoff:
                    path.unlink()

    @property
    def text_search(self) -> bool:
        """Whether ranked full-text search is there (FTS5 in this SQLite build)."""
        return self.has_fts5

    @property
    def degraded(self) -> str | None:
        """Why this thread's connection only reads (``storage_full``, ``storage_read_only``),
        or ``None`` when it may write."""
        return getattr(self._local, "degraded", None)

    def _connect(self) -> tuple[sqlite3.Connection, str | None]:
        conn = None
        try:
            conn = sqlite3.connect(
                self.path, timeout=30, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={'FULL' if self._durable else 'NORMAL'}")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # maps the WAL index
            return conn, None
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            why = not_writable(self.path.parent)
            if why is None or not self.path.exists():
                raise StorageFault(
                    f"Cannot open the state database {self.path}: {exc}. Check that the data "
                    "directory exists and is writable; `reverie doctor` checks the database.",
                    path=str(self.path),
                ) from exc
        return self._connect_for_reading(why), why

    def _connect_for_reading(self, why: str) -> sqlite3.Connection:
        """A connection that never writes: read-only, or, when even that needs to write the
        WAL index (a clean home on storage that cannot take it), immutable."""
        uri = "file:" + urllib.parse.quote(str(self.path))
        wal = self.path.with_name(self.path.name + "-wal")
        for mode in ("?mode=ro", "?mode=ro&immutable=1"):
            try:
                conn = sqlite3.connect(
                    uri + mode, uri=True, timeout=30, isolation_level=None, check_same_thread=False
                )
                conn.execute("PRAGMA temp_store=MEMORY")
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            except sqlite3.Error:
                continue
            if "immutable" in mode and wal.exists() and wal.stat().st_size > 0:
                log.warning(
                    "Reading %s without its write-ahead log (%s): the newest writes may not "
                    "show until the storage is writable again.",
                    self.path,
                    why.replace("_", " "),
                )
            return conn
        raise StorageFault(
            f"Cannot open the state database {self.path}, not even for reading.",
            code=why,
            path=str(self.path),
        )

    def refuse_if_degraded(self) -> None:
        """Refuse a write while this thread's connection only reads.

        Raises:
            StorageFault: ``storage_full`` or ``storage_read_only``.
        """
        self.conn  # noqa: B018 - reopens for writing when the time has come
        why = self.degraded
        if why is not None:
            raise environment_fault(why, "", "writing")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``): all of it commits, or none.

        A failure of SQLite (a full disk, say) inside it or at its commit rolls it back and
        is raised as a :class:`StorageFault`; an ``IntegrityError`` is raised as it is, for
        the caller to translate.

        Raises:
            StorageFault: ``storage_full``, ``storage_read_only`` or ``storage_fault``.
        """
        self.refuse_if_degraded()
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise storage_fault(exc, "starting a state database transaction") from exc
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
                raise storage_fault(exc, "writing to the state database") from exc
            raise

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Several reads of this thread as one read transaction: they see one snapshot, and
        SQLite takes its shared lock on the write-ahead log (two ``fcntl`` calls) and checks
        whether its page cache is still good once for all of them, instead of once per
        statement. Only reads may run inside (a write transaction cannot start in it); inside
        a transaction already open it adds nothing.

        Raises:
            StorageFault: the read transaction cannot start.
        """
        conn = self.conn
        if conn.in_transaction:
            yield
            return
        try:
            conn.execute("BEGIN")
        except sqlite3.Error as exc:
            raise storage_fault(exc, "reading the state database") from exc
        try:
            yield
        finally:
            if conn.in_transaction:  # only read: ending it either way loses nothing
                try:
                    conn.execute("COMMIT")
                except sqlite3.Error:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _migrate(self) -> None:
        conn = self.conn
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        self.has_fts5 = fts.fts5_available(conn)
        has_table = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memory_fts'").fetchone()
        if version == len(_MIGRATIONS) and (has_table or not self.has_fts5):
            return  # current: nothing to write (and a read-only home opens)
        with self.transaction() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for i, script in enumerate(_MIGRATIONS[version:], start=version + 1):
                for statement in fts.statements(script):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version={i}")
            self.has_fts5 = fts.fts5_available(conn)
            if self.has_fts5:
                exists = conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = 'memory_fts'"
                ).fetchone()
                for statement in fts.statements(fts.FTS_SCHEMA):
                    conn.execute(statement)
                if not exists:  # the rows may predate FTS5 support in this build
                    conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('rebuild')")

    # damage to the derived tables (the search indexes)

    def damaged_tables(self) -> list[str]:
        """The tables whose pages SQLite cannot read (``PRAGMA quick_check`` of each), and the
        FTS5 tables whose index disagrees with its rows (their ``integrity-check``).

        Raises:
            StorageFault: the database's schema itself cannot be read.
        """
        conn = self.conn
        try:
            names = [
                str(r[0])
                for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
        except sqlite3.DatabaseError as exc:
            raise storage_fault(exc, "reading the state database's schema") from exc
        damaged = []
        for name in names:
            try:
                rows = conn.execute(f'PRAGMA quick_check("{name}")').fetchall()
                if rows != [("ok",)]:
                    damaged.append(name)
            except sqlite3.DatabaseError:
                damaged.append(name)
        if self.degraded is None:
            for fts_table in ("memory_fts", "history_fts"):
                if fts_table in names and fts_table not in damaged:
                    try:
                        # With a rank of 1 the index is compared with the rows it indexes
                        # too: an index whose entries were deleted reads as sound without it,
                        # and then every replace or remove fails on it.
                        conn.execute(
                            f"INSERT INTO {fts_table} ({fts_table}, rank) "
                            "VALUES ('integrity-check', 1)"
                        )
                    except sqlite3.DatabaseError:
                        damaged.append(fts_table)
        return damaged

    def drop_tables(
        self, conn: sqlite3.Connection, tables: tuple[str, ...], damaged: list[str]
    ) -> None:
        """Drop tables (with their FTS5 shadow tables, indexes and triggers), damaged or not.

        A damaged table (one of ``damaged``, or with a damaged shadow table) cannot be dropped
        by SQL: an FTS5 table's constructor fails, unreadable pages cannot be freed, and a
        failed ``DROP`` leaves the transaction unable to go on. Its rows are removed from the
        schema instead (``writable_schema``, SQLite's own way out), which leaves its pages
        unused until :meth:`vacuum`. Only for derived tables, remade next. Call inside the
        caller's transaction.
        """
        broken = [t for t in tables if any(d == t or d.startswith(f"{t}_") for d in damaged)]
        if broken:
            version = conn.execute("PRAGMA schema_version").fetchone()[0]
            conn.execute("PRAGMA writable_schema = ON")
            try:
                for name in broken:
                    conn.execute(
                        "DELETE FROM sqlite_master WHERE name = ? OR name LIKE ? ESCAPE '\\' "
                        "OR tbl_name = ?",
                        (name, name.replace("_", "\\_") + "\\_%", name),
                    )
            finally:
                conn.execute("PRAGMA writable_schema = OFF")
            # Connections, this one included, reload a schema whose version moved.
            conn.execute(f"PRAGMA schema_version = {version + 1}")
        for name in tables:
            if name not in broken:
                conn.execute(f'DROP TABLE IF EXISTS "{name}"')

    def integrity_notes(self, limit: int = 20) -> list[str]:
        """What SQLite's full ``integrity_check`` says, when it is not "ok" (at most
        ``limit`` notes, such as pages that no table uses after :meth:`drop_tables`)."""
        try:
            rows = self.conn.execute(f"PRAGMA integrity_check({int(limit)})").fetchall()
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        return [str(r[0]) for r in rows if r[0] != "ok"]

    def vacuum(self) -> bool:
        """Give back the pages of dropped damaged tables (``VACUUM``); whether it ran. It needs
        the database to itself for a moment, and room for a copy: a busy home tries again at
        its next repair."""
        try:
            self.conn.execute("VACUUM")
        except sqlite3.Error:
            return False
        return True

    # agents and memories

    def create_agent(
        self,
        name: str,
        *,
        creator: str | None = None,
        edit_policy: str = "editors",
        memory_writers: str = "review_only",
    ) -> tuple[Agent, str]:
        """Create an agent and its memory row; returns the agent and the memory id.

        Raises:
            RefusedInput: bad name or policy, or the name is taken.
        """
        with self.transaction() as conn:
            agent_id, memory_id = self.insert_agent(
                conn, name, creator=creator, edit_policy=edit_policy, memory_writers=memory_writers
            )
        return self.get_agent(agent_id), memory_id

    def insert_agent(
        self,
        conn: sqlite3.Connection,
        name: str,
        *,
        creator: str | None = None,
        edit_policy: str = "editors",
        memory_writers: str = "review_only",
        memory_framing: str = "guide",
    ) -> tuple[str, str]:
        """Insert an agent and its memory row inside the caller's transaction.

        Returns the agent id and the memory id; the memory's repository is created later
        (``MemoryStore.create``, or lazily on first use).

        Raises:
            RefusedInput: bad name or policy, or the name is taken.
        """
        name = _check_name(name, "An agent name", 80, AGENT_ID, "/\\\n\t")
        if name in (".", ".."):  # a path segment every URL of the agent would lose
            raise RefusedInput(
                f"An agent cannot be named {name!r}: it names a folder in a web address.",
                code="invalid_name",
            )
        _check_choice(edit_policy, EDIT_POLICIES, "edit policy")
        _check_choice(memory_writers, WRITER_MODES, "memory writers")
        _check_choice(memory_framing, FRAMINGS, "memory framing")
        agent_id = "ag_" + uuid.uuid4().hex[:12]
        memory_id = "mem_" + uuid.uuid4().hex[:12]
        now = time.time()
        try:
            conn.execute(
                "INSERT INTO agents (id, name, creator, edit_policy, memory_writers, "
                "memory_framing, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (agent_id, name, creator, edit_policy, memory_writers, memory_framing, now),
            )
        except sqlite3.IntegrityError:
            raise RefusedInput(
                f"An agent named {name!r} already exists; pick another name.",
                code="already_exists",
                name=name,
            ) from None
        conn.execute(
            "INSERT INTO memories (id, agent_id, created_at) VALUES (?, ?, ?)",
            (memory_id, agent_id, now),
        )
        return agent_id, memory_id

    def get_agent(self, name_or_id: str) -> Agent:
        """The agent with this name (or id).

        Raises:
            NotFound: no such agent.
        """
        row = self.conn.execute(
            f"SELECT {_AGENT_COLUMNS} FROM agents WHERE {column_of(name_or_id, AGENT_ID)} = ?",
            (name_or_id,),
        ).fetchone()
        return _agent(row, name_or_id)

    def agent_and_memory(self, name_or_id: str) -> tuple[Agent, str]:
        """The agent with this name (or id) and the id of its memory, in one query.

        Raises:
            NotFound: no such agent, or it has no memory.
        """
        row = self.conn.execute(agent_and_memory_sql(name_or_id), (name_or_id,)).fetchone()
        return agent_and_memory_of(row, name_or_id)

    def list_agents(self) -> list[Agent]:
        """All agents, by name."""
        rows = self.conn.execute(f"SELECT {_AGENT_COLUMNS} FROM agents ORDER BY name").fetchall()
        return [_agent(r, r[0]) for r in rows]

    def archive_agent(self, agent_id: str, archived: bool = True) -> Agent:
        """Archive (or restore) an agent; its memory and conversations are kept (A3).

        Raises:
            NotFound: no such agent.
        """
        with self.transaction() as conn:
            conn.execute("UPDATE agents SET archived = ? WHERE id = ?", (int(archived), agent_id))
        return self.get_agent(agent_id)

    def configure_agent(
        self,
        agent_id: str,
        *,
        edit_policy: str | None = None,
        memory_writers: str | None = None,
        memory_framing: str | None = None,
        default_model: str | None = None,
    ) -> Agent:
        """Change an agent's settings; ``None`` keeps a setting (``default_model=""`` clears
        the agent's own model).

        Raises:
            RefusedInput: an unknown policy, mode or framing.  NotFound: no such agent.
        """
        agent = self.get_agent(agent_id)
        _check_choice(edit_policy, EDIT_POLICIES, "edit policy")
        _check_choice(memory_writers, WRITER_MODES, "memory writers")
        _check_choice(memory_framing, FRAMINGS, "memory framing")
        model = agent.default_model if default_model is None else (default_model.strip() or None)
        if model is not None:
            validation.check_control(model, "default_model", code="invalid_setting")
            validation.check_not_secret(model, "default_model", code="invalid_setting")
        with self.transaction() as conn:
            conn.execute(
                "UPDATE agents SET edit_policy = ?, memory_writers = ?, memory_framing = ?, "
                "default_model = ? WHERE id = ?",
                (
                    edit_policy or agent.edit_policy,
                    memory_writers or agent.memory_writers,
                    memory_framing or agent.memory_framing,
                    model,
                    agent.id,
                ),
            )
        return self.get_agent(agent.id)

    def delete_agent(self, agent_id: str) -> list[str]:
        """Delete an agent with its memories and conversations in one transaction (A3).

        Foreign keys cascade to memories, revisions, keys, conversations, messages and history
        rows; the memory index rows, which have no foreign key, go explicitly. Each memory
        gets a tombstone, so that its repository is removed even if the process dies before
        the caller removes it (see :meth:`deleted_memories`). Returns the memory ids.

        Raises:
            NotFound: no such agent.
        """
        self.get_agent(agent_id)
        with self.transaction() as conn:
            ids = [
                str(r[0])
                for r in conn.execute("SELECT id FROM memories WHERE agent_id = ?", (agent_id,))
            ]
            for memory_id in ids:
                conn.execute("DELETE FROM memory_lines WHERE memory_id = ?", (memory_id,))
                conn.execute("DELETE FROM write_failures WHERE memory_id = ?", (memory_id,))
                conn.execute(
                    "INSERT INTO deleted_memories (memory_id, deleted_at) VALUES (?, ?) "
                    "ON CONFLICT (memory_id) DO UPDATE SET deleted_at = excluded.deleted_at",
                    (memory_id, time.time()),
                )
            conn.execute("DELETE FROM agents WHERE id = ?", (agent_id,))
        return ids

    def deleted_memories(self) -> list[str]:
        """Memories deleted in the database whose repository may still be on disk."""
        return [str(r[0]) for r in self.conn.execute("SELECT memory_id FROM deleted_memories")]

    def forget_deleted_memory(self, memory_id: str) -> None:
        """Drop a tombstone once the memory's repository is gone."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM deleted_memories WHERE memory_id = ?", (memory_id,))

    # members

    def add_member(self, name: str, role: str = "member", *, active: bool = True) -> Member:
        """Add a member to the workspace.

        Raises:
            RefusedInput: bad name or role, or the name is taken.
        """
        name = _check_name(name, "A member name", 200, MEMBER_ID, "\n\t")
        _check_role(role)
        try:
            with self.transaction() as conn:
                conn.execute(
                    "INSERT INTO members (id, name, role, active, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    ("mb_" + uuid.uuid4().hex[:12], name, role, int(active), time.time()),
                )
        except sqlite3.IntegrityError:
            raise RefusedInput(
                f"A member named {name!r} already exists.", code="already_exists", name=name
            ) from None
        return self.get_member(name)

    def get_member(self, name_or_id: str) -> Member:
        """The member with this name (or id).

        Raises:
            NotFound: no such member.
        """
        row = self.conn.execute(
            "SELECT id, name, role, active, created_at FROM members "
            f"WHERE {column_of(name_or_id, MEMBER_ID)} = ?",
            (name_or_id,),
        ).fetchone()
        if row is None:
            raise NotFound(f"No member named {name_or_id!r}.", member=name_or_id)
        return Member(row[0], row[1], row[2], bool(row[3]), row[4])

    def list_members(self) -> list[Member]:
        """All members, by name."""
        rows = self.conn.execute(
            "SELECT id, name, role, active, created_at FROM members ORDER BY name"
        ).fetchall()
        return [Member(r[0], r[1], r[2], bool(r[3]), r[4]) for r in rows]

    def update_member(
        self, name_or_id: str, *, role: str | None = None, active: bool | None = None
    ) -> Member:
        """Change a member's role or active flag; deactivating a member ends their admin-page
        sessions in the same transaction.

        Raises:
            RefusedInput: unknown role; ``last_owner``: the change would leave the workspace
                without an active owner (who alone can make admins and owners).
            NotFound: no such member.
        """
        member = self.get_member(name_or_id)
        if role is not None:
            _check_role(role)
        stays_owner = (role or member.role) == "owner" and (
            member.active if active is None else active
        )
        with self.transaction() as conn:
            if member.role == "owner" and member.active and not stays_owner:
                others = conn.execute(
                    "SELECT count(*) FROM members WHERE role = 'owner' AND active = 1 AND id <> ?",
                    (member.id,),
                ).fetchone()[0]
                if not others:
                    raise RefusedInput(
                        f"{member.name} is the workspace's only active owner; make another "
                        f"member an owner first (`reverie member set NAME --role owner`). "
                        "Nothing was changed.",
                        code="last_owner",
                    )
            conn.execute(
                "UPDATE members SET role = ?, active = ? WHERE id = ?",
                (
                    role or member.role,
                    int(member.active if active is None else active),
                    member.id,
                ),
            )
            if active is False:  # their admin sessions end for good: none comes back with them
                conn.execute("DELETE FROM admin_sessions WHERE member_id = ?", (member.id,))
        return self.get_member(member.id)

    def agent_of_memory(self, memory_id: str) -> str:
        """The name of the agent a memory belongs to (the memory id when it has none)."""
        row = self.conn.execute(
            "SELECT a.name FROM memories m JOIN agents a ON a.id = m.agent_id WHERE m.id = ?",
            (memory_id,),
        ).fetchone()
        return str(row[0]) if row else memory_id

    def memory_of(self, agent_id: str) -> str:
        """The id of the agent's memory.

        Raises:
            NotFound: the agent has no memory.
        """
        row = self.conn.execute(
            "SELECT id FROM memories WHERE agent_id = ? AND scope = 'agent'", (agent_id,)
        ).fetchone()
        if row is None:
            raise NotFound(f"Agent {agent_id} has no memory.", agent=agent_id)
        return str(row[0])

    # revisions

    def latest(self, memory_id: str) -> RevisionRecord | None:
        """The newest recorded revision, or ``None`` before revision 0 is recorded."""
        row = self.conn.execute(LATEST_REVISION, (memory_id,)).fetchone()
        return revision_of(row) if row else None

    def revision(self, memory_id: str, revision: int) -> RevisionRecord:
        """One recorded revision.

        Raises:
            NotFound: the memory has no such revision.
        """
        if not _is_count(revision):
            latest = self.latest(memory_id)
            raise NotFound(
                f"Revision {str(revision)[:40]} does not exist: revisions are whole numbers from "
                f"0; the newest is {latest.revision if latest else -1}.",
                revision=str(revision)[:40],
                current_revision=latest.revision if latest else -1,
            )
        row = self.conn.execute(
            "SELECT revision, oid, created_at, writer, message, paths FROM revisions "
            "WHERE memory_id = ? AND revision = ?",
            (memory_id, revision),
        ).fetchone()
        if row is None:
            latest = self.latest(memory_id)
            newest = latest.revision if latest else -1
            raise NotFound(
                f"Revision {revision} does not exist; the newest is {newest}.",
                revision=revision,
                current_revision=newest,
            )
        return revision_of(row)

    def revision_of_commit(self, memory_id: str, oid: str) -> RevisionRecord | None:
        """The recorded revision whose commit is ``oid``, if any."""
        row = self.conn.execute(
            "SELECT revision, oid, created_at, writer, message, paths FROM revisions "
            "WHERE memory_id = ? AND oid = ?",
            (memory_id, oid),
        ).fetchone()
        return revision_of(row) if row else None

    def revisions(
        self, memory_id: str, limit: int = 50, before: int | None = None
    ) -> list[RevisionRecord]:
        """Recorded revisions, newest first.

        Raises:
            RefusedInput: ``invalid_limit`` unless ``limit`` is a whole number from 1.
        """
        if not _is_count(limit, maximum=10**100) or limit < 1:
            raise RefusedInput(
                "limit must be a whole number from 1.", code="invalid_limit", limit=str(limit)[:40]
            )
        below = before if before is not None and _is_count(before) else 2**62
        rows = self.conn.execute(
            "SELECT revision, oid, created_at, writer, message, paths FROM revisions "
            "WHERE memory_id = ? AND revision < ? ORDER BY revision DESC LIMIT ?",
            (memory_id, below, min(limit, 2**62)),
        ).fetchall()
        return [revision_of(r) for r in rows]

    def record_revision(
        self, conn: sqlite3.Connection, memory_id: str, rec: RevisionRecord
    ) -> None:
        """Record an accepted commit (inside the caller's transaction)."""
        conn.execute(
            "INSERT INTO revisions (memory_id, revision, oid, created_at, writer, message, paths)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            revision_row(memory_id, rec),
        )

    def forget_revisions_after(
        self, conn: sqlite3.Connection, memory_id: str, revision: int
    ) -> list[int]:
        """Forget the revisions after ``revision`` and the keys that produced them (inside the
        caller's transaction; ``MemoryStore.rewind`` only). Returns the revisions forgotten."""
        dropped = [
            int(r[0])
            for r in conn.execute(
                "SELECT revision FROM revisions WHERE memory_id = ? AND revision > ? "
                "ORDER BY revision",
                (memory_id, revision),
            )
        ]
        conn.execute(
            "DELETE FROM idempotency_keys WHERE memory_id = ? AND revision > ?",
            (memory_id, revision),
        )
        conn.execute(
            "DELETE FROM revisions WHERE memory_id = ? AND revision > ?", (memory_id, revision)
        )
        return dropped

    # idempotency keys (W7)

    def key(
        self, memory_id: str, key_hash: str, legacy_hash: str | None = None
    ) -> KeyRecord | None:
        """What this key produced before, if it was used; else, with ``legacy_hash``, what a
        row kept from before caller keys had a namespace produced under that hash (W7)."""
        row = self.conn.execute(KEY_RECORD, (memory_id, key_hash)).fetchone()
        if row is None and legacy_hash is not None:
            row = self.conn.execute(LEGACY_KEY_RECORD, (memory_id, legacy_hash)).fetchone()
        return key_of(row) if row else None

    def record_key(
        self, conn: sqlite3.Connection, memory_id: str, key_hash: str, rec: KeyRecord
    ) -> None:
        """Remember a key's outcome (inside the caller's transaction)."""
        conn.execute(KEY_UPSERT, key_row(memory_id, key_hash, rec))

    # refused writes in a row (W9)

    def count_failure(self, memory_id: str, conversation_id: str) -> int:
        """Count one more refused write in a conversation; returns the run length."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO write_failures (memory_id, conversation_id, count) VALUES (?, ?, 1) "
                "ON CONFLICT (memory_id, conversation_id) "
                "DO UPDATE SET count = write_failures.count + 1",
                (memory_id, conversation_id),
            )
            row = conn.execute(
                "SELECT count FROM write_failures WHERE memory_id = ? AND conversation_id = ?",
                (memory_id, conversation_id),
            ).fetchone()
        return int(row[0])

    def clear_failures(
        self, conn: sqlite3.Connection, memory_id: str, conversation_id: str
    ) -> None:
        """End a run of refused writes (inside the caller's transaction)."""
        conn.execute(
            "DELETE FROM write_failures WHERE memory_id = ? AND conversation_id = ?",
            (memory_id, conversation_id),
        )


#: The ids this store makes; a name may never look like one (a name equal to another agent's
#: id would take the writes and imports meant for that agent).
AGENT_ID = re.compile(r"ag_[0-9a-f]{12}")
MEMBER_ID = re.compile(r"mb_[0-9a-f]{12}")


def _check_name(name: str, what: str, longest: int, ids: re.Pattern[str], banned: str) -> str:
    """A name as stored: stripped, 1 to ``longest`` characters, none of ``banned``, no control
    or invisible characters, and never shaped like an id (``ag_``/``mb_`` start only ids).

    Raises:
        RefusedInput: ``invalid_name`` (``invalid_unicode`` for lone surrogates).
    """
    if not isinstance(name, str):
        raise RefusedInput(f"{what} is text.", code="invalid_name")
    name = name.strip()
    if not name or len(name) > longest or any(c in name for c in banned):
        raise RefusedInput(
            f"{what} is 1 to {longest} characters, without "
            + ("slashes or " if "/" in banned else "")
            + "line breaks.",
            code="invalid_name",
        )
    validation.check_control(name, what, code="invalid_name")
    validation.check_invisible(name, what, code="invalid_name")
    validation.check_not_secret(name, what, code="invalid_name")
    prefix = ids.pattern[:3]
    if name[:3].lower() == prefix:
        raise RefusedInput(
            f"{what} may not start with {prefix!r}: ids start so, and a name must never be "
            "mistaken for an id.",
            code="invalid_name",
        )
    return name


_AGENT_COLUMNS = (
    "id, name, creator, edit_policy, memory_writers, default_model, archived, created_at, "
    "memory_framing"
)


def _agent(row: Any, name_or_id: str) -> Agent:
    """An agent from its :data:`_AGENT_COLUMNS`; ``NotFound`` where no row was found."""
    if row is None:
        raise NotFound(
            f"No agent named {name_or_id!r}; `reverie agent list` shows them.", agent=name_or_id
        )
    return Agent(row[0], row[1], row[2], row[3], row[4], row[5], bool(row[6]), row[7], row[8])


def agent_and_memory_sql(name_or_id: str) -> str:
    """The query of :meth:`SQLiteState.agent_and_memory` (parameter: ``name_or_id``): at most
    one row, the agent's :data:`_AGENT_COLUMNS` and then its memory's id, ``memory``, or
    ``NULL``. Also the first part of a statement that reads the memory in the same round trip
    (``DatabaseMemoryStore.search_agent``)."""
    columns = ", ".join(f"agents.{c.strip()}" for c in _AGENT_COLUMNS.split(","))
    return (
        f"SELECT {columns}, memories.id AS memory FROM agents LEFT JOIN memories ON "
        "memories.agent_id = agents.id AND memories.scope = 'agent' "
        f"WHERE agents.{column_of(name_or_id, AGENT_ID)} = ?"
    )


def agent_and_memory_of(row: Any, name_or_id: str) -> tuple[Agent, str]:
    """The agent and its memory's id from a row of :func:`agent_and_memory_sql` (``None``: no
    row).

    Raises:
        NotFound: no such agent, or it has no memory.
    """
    agent = _agent(row, name_or_id)
    if row[-1] is None:
        raise NotFound(f"Agent {agent.id} has no memory.", agent=agent.id)
    return agent, str(row[-1])


def column_of(name_or_id: str, ids: re.Pattern[str] = AGENT_ID) -> str:
    """The column that a caller's word names: an id when it has an id's shape, else a name
    (names never have that shape, see :func:`_check_name`)."""
    return "id" if ids.fullmatch(name_or_id) else "name"


def _is_count(value: object, maximum: int = 2**62) -> bool:
    """A whole number from 0 that SQLite can store (its integers end at 2**63 - 1)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= maximum


def _check_choice(value: str | None, choices: tuple[str, ...], what: str) -> None:
    if value is not None and value not in choices:
        raise RefusedInput(
            f"{what} must be one of {', '.join(choices)}, not {value!r}.", code="invalid_operation"
        )


def _check_role(role: str) -> None:
    if role not in MEMBER_ROLES:
        raise RefusedInput(
            f"A member's role is one of {', '.join(MEMBER_ROLES)}, not {role!r}.",
            code="invalid_role",
        )


#: A memory's newest revision (``memory_id``), as :func:`revision_of` reads it.
LATEST_REVISION = (
    "SELECT revision, oid, created_at, writer, message, paths FROM revisions "
    "WHERE memory_id = ? ORDER BY revision DESC LIMIT 1"
)
#: What a key produced (``memory_id``, ``key_hash``), as :func:`key_of` reads it.
KEY_RECORD = (
    "SELECT batch_hash, revision, changed, paths FROM idempotency_keys "
    "WHERE memory_id = ? AND key_hash = ?"
)
#: The same, of a row kept from before caller keys had a namespace (shared migration 10).
LEGACY_KEY_RECORD = KEY_RECORD + " AND legacy = 1"


#: Remember a key's outcome, or replace what it did before; parameters: :func:`key_row`.
KEY_UPSERT = (
    "INSERT INTO idempotency_keys (memory_id, key_hash, batch_hash, revision, changed,"
    " paths, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (memory_id, key_hash)"
    " DO UPDATE SET batch_hash = excluded.batch_hash, revision = excluded.revision,"
    " changed = excluded.changed, paths = excluded.paths, created_at = excluded.created_at,"
    " legacy = 0"
)


def revision_row(memory_id: str, rec: RevisionRecord) -> tuple[Any, ...]:
    """The values of a ``revisions`` row, in its columns' order: memory, revision, oid,
    time, writer, message, paths (as JSON)."""
    return (
        memory_id,
        rec.revision,
        rec.oid,
        rec.created_at,
        rec.writer,
        rec.message,
        json.dumps(rec.paths),
    )


def key_row(memory_id: str, key_hash: str, rec: KeyRecord) -> list[Any]:
    """The parameters of :data:`KEY_UPSERT` for a key's outcome."""
    return [
        memory_id,
        key_hash,
        rec.batch_hash,
        rec.revision,
        int(rec.changed),
        json.dumps(rec.paths),
        time.time(),
    ]


def key_of(row: Any) -> KeyRecord:
    return KeyRecord(row[0], row[1], bool(row[2]), json.loads(row[3]))


def revision_of(row: Any) -> RevisionRecord:
    return RevisionRecord(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]))
