"""Memories held in the database itself, for the PostgreSQL backend (SPEC D2).

The same pipeline as :class:`~reverie.store.memories.MemoryStore` (its checks, idempotency,
expected revisions, W9 counts and answers are inherited), with the content in the database
instead of a git repository per memory: ``memory_files`` keeps each file's text at every
revision that changed it (``NULL`` where a revision removed it), and ``revision_batches`` the
batch that made each revision, so history, diffs and point-in-time reads need no git.

A write is one transaction that first takes the memory's advisory lock (held until the
transaction ends), then reads the newest revision, checks, applies, and records the revision,
its files, its index rows and its key. The commit of that transaction is the commit point:
PostgreSQL's log makes it durable, and a writer killed before it leaves nothing behind (its
lock goes with its connection). There is nothing to recover on open, no working tree and no
marker. ``reverie export AGENT --git DIR`` writes a memory out as
a git repository when one is wanted.
"""

from __future__ import annotations

import difflib
import hashlib
import threading
import time
from contextlib import AbstractContextManager
from functools import lru_cache
from pathlib import Path
from typing import Any

from reverie.config import Settings
from reverie.core import validation
from reverie.core.markdown import apply_batch, new_index
from reverie.core.operations import parse_batch
from reverie.core.paths import INDEX
from reverie.errors import RefusedInput, StorageFault
from reverie.index import fts, postings

from .memories import (
    MemoryStore,
    WriteOutcome,
    _check_call,
    _check_expected,
    _check_limit,
    _key_hash,
    _legacy_hash,
    _message,
    _summary,
    _Write,
    search_limit_ok,
)
from .postgres import PostgresState
from .state import (
    KEY_UPSERT,
    KeyRecord,
    RevisionRecord,
    agent_and_memory_of,
    agent_and_memory_sql,
    key_of,
    key_row,
    revision_of,
    revision_row,
)

__all__ = ["DatabaseMemoryStore", "revision_oid"]

#: What a write reads under the memory's lock, in one statement and one row: the newest
#: revision (``NULL``\s before revision 0 is recorded), the newest ``MEMORY.md`` (``NULL`` where
#: there is none), with an idempotency key what the key did before (``NULL``\s if nothing), and
#: last the memory's id. ``source`` is a query of one row ``(id, path)``: the memory and the
#: path of ``MEMORY.md``. The newest file row is the current revision's while the lock is held:
#: a rewind deletes the rows past the revision it goes back to in the transaction that forgets
#: those revisions.
_READ = (
    "SELECT r.revision, r.oid, r.created_at, r.writer, r.message, r.paths, (SELECT f.text "
    "FROM memory_files f WHERE f.memory_id = m.id AND f.path = m.path "
    "ORDER BY f.revision DESC LIMIT 1){key_columns}, m.id FROM {source} m "
    "LEFT JOIN LATERAL (SELECT * FROM revisions WHERE memory_id = m.id "
    "ORDER BY revision DESC LIMIT 1) r ON true{key_join}"
)
#: The source of :data:`_READ` by the memory's id (parameters: the id, the path).
_BY_ID = "(SELECT CAST(? AS text) AS id, CAST(? AS text) AS path)"


def _by_agent(name_or_id: str) -> str:
    """The source of :data:`_READ` by the agent's name or id (parameters: the path, then the
    name or id); a ``NULL`` id where the agent has no memory, no row where there is no such
    agent."""
    return (
        f"(SELECT l.memory AS id, CAST(? AS text) AS path FROM "
        f"({agent_and_memory_sql(name_or_id)}) l)"
    )


@lru_cache(maxsize=8)
def _read_sql(source: str, key: bool) -> str:
    """:data:`_READ` from ``source``, with the key's columns when ``key`` (two more
    parameters, last: the key's hash, and the hash a caller's key had before caller keys had
    a namespace, or ``NULL``: a row kept from then answers it where the key has none, W7)."""
    if not key:
        return _READ.format(key_columns="", source=source, key_join="")
    return _READ.format(
        key_columns=", k.key_hash, k.batch_hash, k.revision, k.changed, k.paths",
        source=source,
        key_join=(
            " LEFT JOIN LATERAL (SELECT i.key_hash, i.batch_hash, i.revision, i.changed, "
            "i.paths FROM idempotency_keys i, (SELECT CAST(? AS text) AS now, "
            "CAST(? AS text) AS old) h WHERE i.memory_id = m.id AND (i.key_hash = h.now "
            "OR (i.key_hash = h.old AND i.legacy = 1)) ORDER BY i.key_hash = h.now DESC "
            "LIMIT 1) k ON true"
        ),
    )


#: The files a revision's statement records (a write touches one or two); the rest of a large
#: revision, as an import brings, go in a statement of their own. Few shapes of the statement,
#: each prepared once per connection.
_FILES_PER_STATEMENT = 4


@lru_cache(maxsize=64)
def _record_sql(files: int, lines: bool, batch: bool, key: bool) -> str:
    """The one statement that records a revision: its row, its ``files`` files (1 to
    :data:`_FILES_PER_STATEMENT`), the index rows it adds (``lines``), its batch (``batch``)
    and its key's outcome (``key``), each a data-modifying part of one ``WITH``. One statement
    costs one parse-bind-execute on each side instead of one per table; the statement
    triggers of ``memory_lines`` run at its end as after an ``INSERT`` of its own, and are left
    out with it when no row is added. A file's text is a parameter of its own, not an element
    of an array, whose text form would escape and parse every character of it. Parameters, in
    order: the revision row; each file's row; then (``lines``) the memory id, the scope word,
    and the paths, topics and texts of the added rows; (``batch``) the memory id, the revision
    and the batch; (``key``) the key's row (:func:`~reverie.store.state.key_row`)."""
    parts = [
        "r AS (INSERT INTO revisions (memory_id, revision, oid, created_at, writer, message, "
        "paths) VALUES (?, ?, ?, ?, ?, ?, ?))",
        "f AS (INSERT INTO memory_files (memory_id, path, revision, text) VALUES "
        + ", ".join(["(?, ?, ?, ?)"] * files)
        + ")",
    ]
    if lines:
        # In the order given: the ids, and so the order of equal-scored hits, are those that
        # a statement per file made.
        parts.append(
            "l AS (INSERT INTO memory_lines (memory_id, path, topic, scope, text) "
            "SELECT ?, u.p, u.c, ?, u.t FROM unnest(CAST(? AS text[]), CAST(? AS text[]), "
            "CAST(? AS text[])) WITH ORDINALITY AS u (p, c, t, k) ORDER BY u.k)"
        )
    if batch:
        parts.append(
            "b AS (INSERT INTO revision_batches (memory_id, revision, batch) VALUES (?, ?, ?))"
        )
    if key:
        parts.append(f"k AS ({KEY_UPSERT})")
    return "WITH " + ", ".join(parts) + " SELECT 1"


def revision_oid(parent: str | None, revision: int, files: dict[str, str | None]) -> str:
    """A revision's content id: a hash of its parent's id and what it changed (40 hex digits,
    like a git commit id, which a moved embedded memory keeps)."""
    h = hashlib.sha1(f"{parent or ''}\0{revision}".encode())
    for path in sorted(files):
        text = files[path]
        h.update(f"\0{path}\0{'-' if text is None else '+'}{text or ''}".encode())
    return h.hexdigest()


class DatabaseMemoryStore(MemoryStore):
    """Memories whose files, revisions and index live in one PostgreSQL database."""

    state: PostgresState

    def __init__(self, state: PostgresState, root: Path, settings: Settings) -> None:
        self.state = state
        self.root = root
        self.settings = settings
        self._local = threading.local()

    def repo(self, memory_id: str) -> Any:
        """No git repository: the memory lives in the database."""
        raise StorageFault(
            f"Memory {memory_id} lives in PostgreSQL, not in a git repository; "
            "`reverie export AGENT --git DIR` writes one out.",
            code="not_on_this_backend",
        )

    def lock(self, memory_id: str) -> AbstractContextManager[None]:
        """The memory's write lock (W8): an advisory lock of the database, across servers."""
        return self.state.memory_lock(memory_id)

    def create(self, memory_id: str) -> RevisionRecord:
        """Revision 0 of a new memory: an empty ``MEMORY.md`` (idempotent)."""
        with self.lock(memory_id):
            latest = self.state.latest(memory_id)
            if latest is not None:
                return latest
            with self.state.transaction() as conn:
                return self._first(conn, memory_id)

    def _first(self, conn: Any, memory_id: str) -> RevisionRecord:
        """Record revision 0 inside ``conn``'s transaction (the memory's lock held)."""
        files: dict[str, str | None] = {INDEX: new_index()}
        rec = RevisionRecord(
            0,
            revision_oid(None, 0, files),
            time.time(),
            "system",
            _message("Create memory", "system", 0, None, None),
            [INDEX],
        )
        self.record(conn, memory_id, rec, files, {}, None)
        return rec

    def record(
        self,
        conn: Any,
        memory_id: str,
        rec: RevisionRecord,
        files: dict[str, str | None],
        before: dict[str, str | None],
        batch: str | None,
        key: tuple[str, KeyRecord] | None = None,
    ) -> None:
        """Record a revision with its files, index rows, batch and (``key``: its hash and
        outcome) idempotency key, inside ``conn``'s transaction (also how ``reverie migrate``
        brings an embedded memory over): the index rows a file loses go first, then the rest
        in one statement (:func:`_record_sql`)."""
        scope = fts.scope_word(memory_id)
        paths, topics, added = [], [], []
        for path, text in files.items():
            removed, new_lines = fts.line_changes(before.get(path), text)
            fts.remove_lines(conn, memory_id, path, removed)
            topic = fts.topic_of(path)
            paths += [path] * len(new_lines)
            topics += [topic] * len(new_lines)
            added += new_lines
        params: list[Any] = list(revision_row(memory_id, rec))
        rows = [(memory_id, path, rec.revision, text) for path, text in files.items()]
        for row in rows[:_FILES_PER_STATEMENT]:
            params += row
        if added:
            params += [memory_id, scope, paths, topics, added]
        if batch is not None:
            params += [memory_id, rec.revision, batch]
        if key is not None:
            params += key_row(memory_id, *key)
        sql = _record_sql(
            min(len(rows), _FILES_PER_STATEMENT), bool(added), batch is not None, key is not None
        )
        conn.execute(sql, params)
        if len(rows) > _FILES_PER_STATEMENT:  # a large import: the files past the first few
            conn.executemany(
                "INSERT INTO memory_files (memory_id, path, revision, text) VALUES (?, ?, ?, ?)",
                rows[_FILES_PER_STATEMENT:],
            )

    def recover_all(self) -> dict[str, Any]:
        """Nothing to recover: a write that did not commit left nothing."""
        return {}

    def current(self, memory_id: str) -> RevisionRecord:
        latest = self.state.latest(memory_id)
        return latest if latest is not None else self.create(memory_id)

    def apply_agent(
        self,
        agent: str,
        request: Any,
        *,
        writer: str,
        expected_revision: int | None = None,
        key: str | None = None,
        conversation_id: str | None = None,
    ) -> WriteOutcome:
        """:meth:`apply` of ``request`` to the memory of ``agent`` in one transaction whose
        first round trip finds the agent and its memory and takes the memory's lock (one
        statement), then reads what the write needs (a second, run after the first, so under
        the lock): the lookup costs no round trip of its own. The same refusals, in the same
        order, as the lookup followed by :meth:`apply`.

        Raises:
            NotFound: no such agent, or it has no memory; then what :meth:`apply` raises.
        """
        key_hash = _key_hash(key) if key else None
        legacy_hash = _legacy_hash(key)
        memory_id: str | None = None
        counted: RefusedInput | None = None  # a refusal that W9 counts, as apply counts it
        try:
            with self.state.transaction(pipelined=True) as conn:
                looked = conn.execute(self.state.agent_memory_and_lock_sql(agent), (agent,))
                params: tuple[Any, ...] = (INDEX, agent)
                params += (key_hash, legacy_hash) if key_hash else ()
                found = conn.execute(_read_sql(_by_agent(agent), bool(key_hash)), params)
                row = looked.fetchone()
                a, memory_id = agent_and_memory_of(None if row is None else row[:-1], agent)
                _check_call(writer, a.memory_writers, expected_revision)
                if request is None:
                    raise TypeError("apply takes a request or a builder, not both or neither")
                try:
                    write = self._write_of(
                        request, None, writer, expected_revision, key, conversation_id
                    )
                    read = found.fetchone()
                    if read is not None and read[-1] == memory_id:
                        return self._write_locked(conn, memory_id, write, read)
                except RefusedInput as exc:
                    counted = exc
                    raise
        except RefusedInput as exc:
            if exc is counted and conversation_id and memory_id is not None:
                self._count_refusal(memory_id, conversation_id, exc)
            raise
        # The name led the read to another memory than the one locked (the agent was renamed
        # or deleted in between): nothing was written; the lookup, then the write, again.
        return super().apply_agent(
            agent,
            request,
            writer=writer,
            expected_revision=expected_revision,
            key=key,
            conversation_id=conversation_id,
        )

    def _apply_locked(self, memory_id: str, write: _Write) -> WriteOutcome:
        with self.state.transaction(pipelined=True) as conn:
            # One round trip: the lock, then (run in order, so under it) what the write reads.
            self.state.lock_in_transaction(conn, memory_id)
            params: tuple[Any, ...] = (memory_id, INDEX)
            params += (write.key_hash, write.legacy_hash) if write.key_hash else ()
            row = conn.execute(_read_sql(_BY_ID, bool(write.key_hash)), params).fetchone()
            assert row is not None  # one row, whatever there is
            return self._write_locked(conn, memory_id, write, row)

    def _write_locked(
        self, conn: Any, memory_id: str, write: _Write, row: tuple[Any, ...]
    ) -> WriteOutcome:
        """The write, inside ``conn``'s transaction under the memory's lock, from ``row`` of
        :data:`_READ`."""
        key_hash, writer, conversation_id = write.key_hash, write.writer, write.conversation_id
        created = row[0] is None  # revision 0 not recorded yet: it is, in this transaction
        latest = self._first(conn, memory_id) if created else revision_of(row)
        if key_hash and row[7] is not None:
            return self._replay(key_of(row[8:]), write.batch)
        _check_expected(latest.revision, write.expected_revision)
        index_text = new_index() if created else row[6]

        def read(path: str) -> str | None:
            if path != INDEX:
                return self._file(memory_id, latest, path)
            return None if index_text is None else str(index_text)

        batch = write.batch
        if batch is None:  # built under the lock, from the newest MEMORY.md
            assert write.build is not None
            batch = parse_batch(write.build(read(INDEX)))
            validation.check_request(batch, self.settings)
        applied = apply_batch(batch, read)
        validation.check_result(applied, self.settings)
        diagnostics = [{"code": code, "message": note} for code, note in applied.notes]
        if conversation_id:
            self.state.clear_failures(conn, memory_id, conversation_id)
        batch_hash = batch.digest() if key_hash is not None else None
        if not applied.files:
            if key_hash is not None:
                assert batch_hash is not None
                self.state.record_key(
                    conn, memory_id, key_hash, KeyRecord(batch_hash, latest.revision, False, [])
                )
            return WriteOutcome(False, latest.revision, [], diagnostics)
        paths = sorted(applied.files)
        revision = latest.revision + 1
        message = _message(_summary(batch, writer, paths), writer, revision, key_hash, batch_hash)
        oid = revision_oid(latest.oid, revision, applied.files)
        rec = RevisionRecord(revision, oid, time.time(), writer, message, paths)
        outcome = None
        if key_hash is not None:
            assert batch_hash is not None
            outcome = (key_hash, KeyRecord(batch_hash, revision, True, paths))
        record_json = batch.model_dump_json()
        self.record(conn, memory_id, rec, applied.files, applied.before, record_json, outcome)
        # The answer is made before the commit, and given only once the commit is answered.
        return self._written(applied.files.get(INDEX), revision, paths, diagnostics)

    # reads

    def search(self, memory_id: str, query: str, limit: int = 8) -> list[fts.SearchHit]:
        """Ranked full-text search over the memory's lines (M2). The newest revision is not
        read first, as the embedded store must (to recover a cut-short write): nothing is left
        to recover here, and revision 0, where a cut-short ``create`` left it unrecorded, has
        no line to find (``MEMORY.md``'s headings only). With ``search_backend = "scan"``,
        the bounded scan, as on the embedded store.

        Raises:
            RefusedInput: ``invalid_limit`` unless 1 <= limit <= 20.
        """
        if self.settings.search_backend != "fts5":
            return super().search(memory_id, query, limit)
        _check_limit(limit)
        return fts.pg_search(self.state.conn, memory_id, query, limit)

    def search_agent(self, agent: str, query: str, limit: int = 8) -> list[fts.SearchHit]:
        """:meth:`search` of the memory of ``agent`` in one statement: the agent's lookup and
        the ranking go to the server together, one round trip instead of two, with the same
        hits, order and scores, and the same refusals in the same order, as the lookup
        followed by :meth:`search`.

        Raises:
            NotFound: no such agent, or it has no memory.
            RefusedInput: ``invalid_limit`` unless 1 <= limit <= 20.
        """
        terms = fts.content_terms(query)
        if not terms or not search_limit_ok(limit) or self.settings.search_backend != "fts5":
            return super().search_agent(agent, query, limit)  # a refusal after the lookup
        rows = self.state.conn.execute(
            postings.search_with_sql(agent_and_memory_sql(agent), limit), (agent, terms)
        ).fetchall()
        agent_and_memory_of(rows[0][3:] if rows else None, agent)
        return fts.pg_hits([r for r in rows if r[0] is not None], query)

    def _file(self, memory_id: str, rec: RevisionRecord, path: str) -> str | None:
        row = self.state.conn.execute(
            "SELECT text FROM memory_files WHERE memory_id = ? AND path = ? AND revision <= ? "
            "ORDER BY revision DESC LIMIT 1",
            (memory_id, path, rec.revision),
        ).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def files(self, memory_id: str, rec: RevisionRecord) -> dict[str, str]:
        rows = self.state.conn.execute(
            "SELECT DISTINCT ON (path) path, text FROM memory_files "
            "WHERE memory_id = ? AND revision <= ? ORDER BY path, revision DESC",
            (memory_id, rec.revision),
        ).fetchall()
        found = {str(p): str(t) for p, t in rows if t is not None}
        ordered = [INDEX] if INDEX in found else []
        ordered += sorted(p for p in found if p != INDEX)
        return {p: found[p] for p in ordered}

    def diff(self, memory_id: str, rev_a: int, rev_b: int) -> str:
        """A unified diff between two revisions, in git's patch layout (M3)."""
        a, b = self.at_revision(memory_id, rev_a), self.at_revision(memory_id, rev_b)
        old, new = self.files(memory_id, a), self.files(memory_id, b)
        return "".join(_patch(path, old.get(path), new.get(path)) for path in sorted({*old, *new}))

    def batch_of(self, memory_id: str, revision: int) -> str | None:
        """The batch (JSON) that made ``revision``, where one did."""
        row = self.state.conn.execute(
            "SELECT batch FROM revision_batches WHERE memory_id = ? AND revision = ?",
            (memory_id, revision),
        ).fetchone()
        return None if row is None else str(row[0])

    # maintenance

    def discard_uncommitted(self, memory_id: str) -> None:
        """Nothing to discard: no working tree holds uncommitted edits (R4)."""

    def reindex(self, memory_id: str) -> int:
        with self.lock(memory_id):
            latest = self.current(memory_id)
            files = self.files(memory_id, latest)
            with self.state.transaction() as conn:
                conn.execute("DELETE FROM memory_lines WHERE memory_id = ?", (memory_id,))
                for path, text in files.items():
                    fts.replace_file(conn, memory_id, path, None, text)
            return sum(len(fts.index_lines(t)) for t in files.values())

    def rebuild_index(self, damaged: list[str]) -> dict[str, str]:
        with self.state.transaction() as conn:
            conn.execute("DELETE FROM memory_lines")
            for (memory_id,) in conn.execute("SELECT id FROM memories").fetchall():
                latest = self.state.latest(memory_id)
                if latest is not None:
                    for path, text in self.files(memory_id, latest).items():
                        fts.replace_file(conn, memory_id, path, None, text)
        return {}

    def rewind(self, memory_id: str, revision: int) -> list[int]:
        with self.lock(memory_id):
            target = self.state.revision(memory_id, revision)
            with self.state.transaction() as conn:
                dropped = self.state.forget_revisions_after(conn, memory_id, revision)
                for table in ("memory_files", "revision_batches"):
                    conn.execute(
                        f"DELETE FROM {table} WHERE memory_id = ? AND revision > ?",
                        (memory_id, revision),
                    )
                conn.execute("DELETE FROM memory_lines WHERE memory_id = ?", (memory_id,))
                for path, text in self.files(memory_id, target).items():
                    fts.replace_file(conn, memory_id, path, None, text)
        return dropped


def _patch(path: str, old: str | None, new: str | None) -> str:
    if old == new:
        return ""
    a = (old or "").splitlines(keepends=True)
    b = (new or "").splitlines(keepends=True)
    head = f"diff --git a/{path} b/{path}\n"
    if old is None:
        head += "new file mode 100644\n"
    elif new is None:
        head += "deleted file mode 100644\n"
    lines = difflib.unified_diff(
        a,
        b,
        "/dev/null" if old is None else f"a/{path}",
        "/dev/null" if new is None else f"b/{path}",
        n=3,
    )
    body = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return head + body
