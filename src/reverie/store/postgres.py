"""The state database on PostgreSQL (SPEC D2): several servers share one home.

Chosen by ``REVERIE_DATABASE_URL=postgresql://...`` (needs ``reverie[postgres]``: psycopg 3 and
its pool). It provides every method of :class:`~reverie.store.state.SQLiteState`, and the
stores above it keep speaking one SQL, written for SQLite: this module is the one place that
translates it. A statement is translated once and cached:

* ``?`` placeholders become ``%s`` (and a literal ``%`` is doubled);
* ``INSERT OR IGNORE`` becomes ``INSERT ... ON CONFLICT DO NOTHING``;
* ``BEGIN IMMEDIATE`` becomes ``BEGIN`` (writers serialize on row and advisory locks here);
* ``rowid`` (insertion order) becomes the ``seq`` column PostgreSQL's tables get for it;
* in a schema, ``INTEGER`` becomes ``BIGINT``, ``REAL`` ``DOUBLE PRECISION``, an ``INTEGER
  PRIMARY KEY`` an identity column; SQLite's FTS5 tables and triggers are left out (search
  reads ``tsvector`` columns: history through a GIN index, memories through postings kept
  from them, see :data:`EXTRA_MIGRATIONS`).

PostgreSQL's errors leave this seam as the ``sqlite3`` exception of the same meaning
(``IntegrityError`` for a broken constraint, ``OperationalError`` for a lost connection), so
that one ``except`` clause in the stores serves both backends. A thread takes a connection
from the pool (16 at most per process) for one facade call and gives it back when the call
ends (``reverie._guard``); transactions are explicit, as on SQLite.

A connection the server has dropped (PostgreSQL restarted, or an operator ended its backend)
is found before it is used and replaced, so that the call after a restart succeeds: an idle
connection has nothing to read, while the server's last words (its FATAL message and the
closing of the socket) make the dropped one readable, seen in one non-blocking ``poll`` when a
connection is taken from the pool (:func:`_closed_by_server`); no round trip. A drop that comes
later, in the middle of a call, fails that call: only a ``BEGIN`` that failed is sent again on
a fresh connection, since nothing of its transaction was sent; a statement that may have
written (a ``COMMIT`` above all, whose outcome is unknown when the connection drops) never is.

Locks are PostgreSQL's own: a memory's writes serialize on an advisory lock held by the
writing connection (released when the connection ends, so a killed writer frees it), a
review's leadership (R10) is a session advisory lock tried without waiting, and so is the
turn of a chat event, on a connection each process keeps for its turn locks.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import select
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from reverie.errors import RefusedInput, StorageFault
from reverie.index import fts, postings

from . import state as state_module
from . import turns
from .state import SQLiteState, agent_and_memory_sql

__all__ = [
    "EXTRA_MIGRATIONS",
    "PostgresState",
    "is_postgres_url",
    "lock_key_sql",
    "redact",
    "translate",
]

log = logging.getLogger(__name__)
_EXTRA_BASE = 100

#: What PostgreSQL has beside the shared migrations (versions 101, 102, ...): the memory files
#: of every revision (the content that git holds on the embedded default), each revision's
#: batch, full-text search columns with GIN indexes, the order columns that stand in for
#: SQLite's ``rowid``, and the immutability of published soul versions.
EXTRA_MIGRATIONS: list[str] = [
    """
    CREATE TEXT SEARCH DICTIONARY reverie_stem (TEMPLATE = snowball, Language = english);
    CREATE TEXT SEARCH CONFIGURATION reverie_english (COPY = english);
    ALTER TEXT SEARCH CONFIGURATION reverie_english ALTER MAPPING
        FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH reverie_stem;
    CREATE TABLE memory_files (
        memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        revision BIGINT NOT NULL,
        text TEXT,
        PRIMARY KEY (memory_id, path, revision)
    );
    CREATE TABLE revision_batches (
        memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        revision BIGINT NOT NULL,
        batch TEXT NOT NULL,
        PRIMARY KEY (memory_id, revision)
    );
    ALTER TABLE memory_lines ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('reverie_english', text), 'A')
        || setweight(to_tsvector('reverie_english', topic), 'C')
    ) STORED;
    ALTER TABLE memory_lines ADD COLUMN words BIGINT GENERATED ALWAYS AS (
        length(to_tsvector('reverie_english', text))
    ) STORED;
    CREATE INDEX memory_lines_tsv ON memory_lines USING GIN (tsv);
    CREATE INDEX memory_lines_by_memory ON memory_lines (memory_id);
    ALTER TABLE history_docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('reverie_english', body), 'A')
        || setweight(to_tsvector('reverie_english', speaker), 'B')
        || setweight(to_tsvector('reverie_english', date), 'C')
        || setweight(to_tsvector('reverie_english', context), 'D')
    ) STORED;
    ALTER TABLE history_docs ADD COLUMN words BIGINT GENERATED ALWAYS AS (
        length(to_tsvector('reverie_english', body))
    ) STORED;
    CREATE INDEX history_docs_tsv ON history_docs USING GIN (tsv);
    CREATE INDEX history_docs_by_scope ON history_docs (scope);
    ALTER TABLE outbox ADD COLUMN seq BIGINT GENERATED BY DEFAULT AS IDENTITY;
    CREATE FUNCTION reverie_immutable_soul() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'published soul versions are immutable' USING ERRCODE = '23000';
    END $$;
    CREATE TRIGGER soul_versions_immutable BEFORE UPDATE ON soul_versions
        FOR EACH ROW EXECUTE FUNCTION reverie_immutable_soul();
    """,
    # GIN's fast update keeps new entries in a pending list (up to 4 MB) that every search
    # reads from end to end until a vacuum merges it: after a burst of writes, a search of a
    # 10k-line memory spent most of its time there. Entries go straight into the index now:
    # one-entry writes to that memory took the same (p50 12.4 ms with the list, 12.3 without,
    # 150 each, alternating on a busy machine), and none pays for merging the list (the
    # slowest: 99 ms with it, 27 ms without).
    """
    ALTER INDEX memory_lines_tsv SET (fastupdate = off);
    ALTER INDEX history_docs_tsv SET (fastupdate = off);
    SELECT gin_clean_pending_list('memory_lines_tsv'::regclass);
    SELECT gin_clean_pending_list('history_docs_tsv'::regclass);
    """,
    # 103: memory search ranks from a postings table kept by triggers (index/postings.py).
    postings.MIGRATION,
    # 104: the postings keyed by a number per memory and word, not the two texts; the GIN
    # index of memory_lines.tsv, which no search reads since 103, dropped.
    postings.MIGRATION_104,
    # 105: the outcome ``interrupted`` allowed in turns (shared migration 8's change).
    turns.POSTGRES_INTERRUPTED_MIGRATION,
]

#: Shared migrations PostgreSQL makes its own way, recorded as done without running them: 8
#: makes the turns table again because SQLite cannot change a CHECK constraint; here 105
#: changes the constraint in place.
_SQLITE_ONLY = frozenset({8})

# Lock classes: the first key of PostgreSQL's two-key advisory locks.
_MIGRATE, _MEMORY, _REVIEW, _TURN = 7301, 7302, 7303, 7304
#: Seconds between two looks at the connection holding a process's turn locks.
TURN_CHECK = 1.0

_TOKEN = re.compile(r"'(?:[^']|'')*'|\?|%")
_OR_IGNORE = "INSERT OR IGNORE INTO"


def is_postgres_url(url: str | None) -> bool:
    """Whether ``url`` names a PostgreSQL database."""
    return bool(url) and str(url).startswith(("postgresql://", "postgres://"))


#: A password given as a parameter: ``?password=...`` in a URL, ``password=...`` in a
#: key/value connection string (quoted or not).
_PASSWORD_PARAM = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]*)", re.I)


def redact(url: str) -> str:
    """``url`` without its password, for messages and logs: the one before ``@`` and one
    given as a parameter (``?password=``, or ``password=`` in a key/value string). A URL
    that does not parse is not shown at all."""
    url = _PASSWORD_PARAM.sub(lambda m: m.group(1) + "***", url)
    try:
        parts = urllib.parse.urlsplit(url)
        password = parts.password
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return "<a database URL that does not parse>"
    if password is None:
        return url
    netloc = f"{parts.username}:***@{host}" + (f":{port}" if port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


@lru_cache(maxsize=4096)
def translate(sql: str, with_params: bool = True) -> str:
    """One statement, as the stores write it for SQLite, in PostgreSQL's dialect."""
    text = sql.strip()
    if text.upper().startswith("BEGIN"):
        return "BEGIN"
    if _OR_IGNORE in text:
        text = text.replace(_OR_IGNORE, "INSERT INTO") + " ON CONFLICT DO NOTHING"
    text = re.sub(r"\browid\b", "seq", text)
    text = _scalar_extremes(text)
    if not with_params:
        return text

    def token(m: re.Match[str]) -> str:
        t = m.group()
        if t == "?":
            return "%s"
        return "%%" if t == "%" else t.replace("%", "%%")

    return _TOKEN.sub(token, text)


def _scalar_extremes(sql: str) -> str:
    """SQLite's two-argument ``MAX(a, b)`` and ``MIN(a, b)`` as ``GREATEST`` and ``LEAST``
    (one argument stays the aggregate)."""
    out, i = [], 0
    for m in re.finditer(r"\b(MAX|MIN)\(", sql):
        if m.start() < i:
            continue
        depth, j, comma = 1, m.end(), False
        while j < len(sql) and depth:
            c = sql[j]
            depth += (c == "(") - (c == ")")
            comma |= c == "," and depth == 1
            j += 1
        if comma:
            out.append(sql[i : m.start()] + ("GREATEST(" if m.group(1) == "MAX" else "LEAST("))
            i = m.end()
    return "".join(out) + sql[i:]


def translate_schema(statement: str) -> str | None:
    """A schema statement of the shared migrations for PostgreSQL, or ``None`` to leave out
    (FTS5 tables, SQLite triggers and pragmas)."""
    text = statement.strip()
    upper = text.upper()
    if (
        not text
        or "USING FTS5" in upper
        or upper.startswith(("CREATE TRIGGER", "DROP TRIGGER", "PRAGMA"))
        or "_FTS" in upper.split("(")[0]
    ):
        return None
    text = re.sub(
        r"\bINTEGER PRIMARY KEY\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", text
    )
    text = re.sub(r"\bINTEGER\b", "BIGINT", text)
    text = re.sub(r"\bREAL\b", "DOUBLE PRECISION", text)
    return text


def _split(script: str) -> list[str]:
    """The statements of a PostgreSQL script: split at a ';' that ends a line, except
    inside a dollar-quoted function body."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if line.rstrip().endswith(";") and buf.count("$$") % 2 == 0:
            out.append(buf.strip())
            buf = ""
    return [s for s in [*out, buf.strip()] if s]


def _lock_key(name: str) -> int:
    """A 32-bit advisory lock key for ``name``."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big", signed=True)


def lock_key_sql(name: str) -> str:
    """:func:`_lock_key` of the text that the SQL expression ``name`` gives, computed by the
    server (the first four bytes of its SHA-256, as a signed big-endian integer)."""
    digest = f"encode(sha256(convert_to({name}, 'UTF8')), 'hex')"
    return f"CAST(CAST('x' || left({digest}, 8) AS bit(32)) AS integer)"


def _translate_error(exc: Exception) -> Exception:
    """The ``sqlite3`` exception with the meaning of a psycopg error."""
    import psycopg

    text = f"PostgreSQL: {str(exc).strip()}"
    if isinstance(exc, psycopg.errors.IntegrityError):
        return sqlite3.IntegrityError(text)
    if isinstance(exc, psycopg.errors.DiskFull):
        return sqlite3.OperationalError(f"database or disk is full ({text})")
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return sqlite3.OperationalError(f"attempt to write a readonly database ({text})")
    if isinstance(exc, psycopg.OperationalError):
        return sqlite3.OperationalError(text)
    return sqlite3.DatabaseError(text)


class Cursor:
    """The part of a ``sqlite3.Cursor`` the stores use, over a psycopg cursor. In a pipelined
    transaction its results are had on first use (one round trip for all that was queued)."""

    def __init__(self, cur: Any, conn: Connection) -> None:
        self._cur = cur
        self._conn = conn

    @property
    def rowcount(self) -> int:
        self._conn.sync()
        return int(self._cur.rowcount)

    def _has_rows(self) -> bool:
        """Whether the result is one of rows (a query's, not an ``INSERT``'s), read from its
        status: psycopg's ``description`` would make an object for each of its columns."""
        self._conn.sync()
        result = self._cur.pgresult
        return result is not None and result.status == self._conn.tuples_ok

    def fetchone(self) -> tuple[Any, ...] | None:
        if not self._has_rows():
            return None
        row = self._cur.fetchone()
        return None if row is None else tuple(row)

    def fetchall(self) -> list[tuple[Any, ...]]:
        if not self._has_rows():
            return []
        return [tuple(r) for r in self._cur.fetchall()]

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.fetchall())


class Connection:
    """One pooled psycopg connection that takes the stores' SQLite dialect.

    Inside :meth:`pipelined`, statements are sent without waiting for their results (psycopg's
    pipeline mode): the server runs them in order, and the first read of a result fetches every
    result queued so far in one round trip. An error of any queued statement is raised there.
    """

    dialect = "postgres"

    def __init__(self, raw: Any) -> None:
        from psycopg.pq import ExecStatus

        self.raw = raw
        self._pipe: Any = None
        self._pending = False
        #: The status of a result of rows.
        self.tuples_ok = ExecStatus.TUPLES_OK
        #: Session advisory locks held on this connection (they end with it).
        self.locks = 0

    @property
    def lost(self) -> bool:
        """Whether the connection is known to be gone (closed, or broken by a failure)."""
        return bool(self.raw.closed or self.raw.broken)

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Cursor:
        try:
            cur = self.raw.cursor()
            if params:
                cur.execute(translate(sql), tuple(_adapt(p) for p in params))
            else:
                cur.execute(translate(sql, False))
        except Exception as exc:
            raise _translated(exc) from exc
        self._pending = self._pipe is not None
        return Cursor(cur, self)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Cursor:
        try:
            cur = self.raw.cursor()
        except Exception as exc:
            raise _translated(exc) from exc
        rows = [tuple(_adapt(p) for p in r) for r in rows]
        if rows:
            try:
                cur.executemany(translate(sql), rows)
            except Exception as exc:
                raise _translated(exc) from exc
            self._pending = self._pipe is not None
        return Cursor(cur, self)

    @contextlib.contextmanager
    def pipelined(self) -> Iterator[None]:
        """Queue the statements of the block; everything queued is run and its results had by
        the end of it (or at the first read of a result). With a libpq older than 14 (no
        pipeline mode) each statement waits for its result, as outside.

        The end of the block takes what is still queued in the round trip that leaving
        pipeline mode makes anyway (psycopg syncs there), not in one of its own before it."""
        import psycopg

        if not psycopg.Pipeline.is_supported():
            yield
            return
        try:
            with self.raw.pipeline() as pipe:
                self._pipe = pipe
                try:
                    yield
                finally:
                    self._pipe, self._pending = None, False
        except psycopg.Error as exc:  # a statement's error, raised where the pipeline ends
            raise _translate_error(exc) from exc

    def sync(self) -> None:
        """Run what the pipeline queued and take its results (nothing to do outside one)."""
        if self._pending:
            self._pending = False
            try:
                self._pipe.sync()
            except Exception as exc:
                raise _translated(exc) from exc

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return bool(self.raw.info.transaction_status != TransactionStatus.IDLE)

    def close(self) -> None:
        self.raw.close()


def _translated(exc: Exception) -> Exception:
    import psycopg

    return _translate_error(exc) if isinstance(exc, psycopg.Error) else exc


def _adapt(value: Any) -> Any:
    """A parameter as SQLite would take it: booleans as integers, an integer past 64 bits
    refused as SQLite's binding refuses it (``OverflowError``), and no NUL character, which
    PostgreSQL's text cannot hold (nothing stored holds one: names and memory text refuse
    control characters before they get here; a lookup by such text finds nothing)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        raise OverflowError("Python int too large to convert to SQLite INTEGER")
    if isinstance(value, str) and "\0" in value:
        return value.replace("\0", "\ufffd")
    return value


class PostgresState(SQLiteState):
    """The state database at ``url``; safe to share between threads, processes and servers."""

    dialect = "postgres"

    def __init__(self, url: str, *, durable: bool = False) -> None:
        try:
            import psycopg_pool
        except ImportError:
            raise RefusedInput(
                "A PostgreSQL database (a postgresql:// URL, from REVERIE_DATABASE_URL or "
                "`reverie migrate --to`) needs the postgres extra: pip install "
                "'reverie[postgres]'. Nothing was done.",
                code="missing_dependency",
            ) from None
        self.url = url
        #: The database, for messages: the URL without its password.
        self.where = redact(url)
        self._durable = durable
        self._local = threading.local()
        self.has_fts5 = False
        self._owner = threading.get_ident()
        # The turn locks of this process: the connection that holds them, opened on first use,
        # and the keys held (a session takes an advisory lock it holds again: a second taker
        # in this process is told no here).
        self._turn_guard = threading.Lock()
        self._turn_conn: Any = None
        self._turn_keys: set[int] = set()
        self._turn_keeper: threading.Thread | None = None
        self._turn_closed = threading.Event()
        #: What every connection is opened with beside the URL.
        self._kwargs = kwargs = _connect_kwargs(url)
        self._pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=16,  # connections are held for one facade call at a time
            kwargs=kwargs,
            open=False,
            name="reverie",
            configure=_configure,
        )
        try:
            import psycopg

            # One connection first, made and set up as the pool makes its own: what fails
            # there (a wrong URL or parameter, a server that is down) fails here at once, not
            # in the pool's retries until its timeout.
            with psycopg.connect(url, **kwargs) as first:
                _configure(first)
            self._pool.open(wait=True, timeout=30)
        except Exception as exc:
            self._pool.close()
            raise StorageFault(
                f"Cannot reach the PostgreSQL database {self.where}: {_first_line(exc)}. "
                "Check that the server runs and the URL is right.",
                code="storage_unavailable",
            ) from None
        self._migrate()

    # connections and transactions

    @property
    def conn(self) -> Connection:  # type: ignore[override]
        """This thread's connection, taken from the pool on first use (past any the server
        has closed since their last use: :meth:`_take`). One that a failure found lost is
        replaced, unless it held a lock.

        Raises:
            StorageFault: ``storage_unavailable``, the database cannot be reached, or this
                thread's connection was lost with a lock it held.
        """
        conn: Connection | None = getattr(self._local, "conn", None)
        if conn is not None and conn.lost:
            if conn.locks:
                # Going on without the lock on a fresh connection would write unguarded:
                # everything in the lock's block fails until it ends.
                raise StorageFault(
                    f"The connection to the PostgreSQL database {self.where} was lost with "
                    "the lock it held. Nothing more was written; try again once the database "
                    "answers.",
                    code="storage_unavailable",
                )
            self._local.conn = None
            with contextlib.suppress(Exception):
                self._pool.putconn(conn.raw)
            conn = None
        if conn is None:
            conn = Connection(self._take())
            self._local.conn = conn
        return conn

    def _take(self) -> Any:
        """A connection of the pool that the server has not closed: one it has (PostgreSQL
        restarted since the connection was last used) is closed and given back, for the pool
        to open another, and the next taken; costs one non-blocking ``poll`` per connection
        taken, no round trip.

        Raises:
            StorageFault: ``storage_unavailable``, no connection had within 30 s.
        """
        deadline = time.monotonic() + 30
        while True:
            try:
                raw = self._pool.getconn(timeout=max(deadline - time.monotonic(), 0.01))
            except Exception as exc:
                raise StorageFault(
                    f"Cannot reach the PostgreSQL database {self.where}: "
                    f"{_first_line(exc)}. Nothing was done; try again once it is up.",
                    code="storage_unavailable",
                ) from None
            if not _closed_by_server(raw):
                return raw
            log.info("A connection the server closed was replaced (%s).", self.where)
            with contextlib.suppress(Exception):
                raw.close()
            with contextlib.suppress(Exception):
                self._pool.putconn(raw)

    @property
    def text_search(self) -> bool:
        return True

    @property
    def degraded(self) -> str | None:
        return None

    def refuse_if_degraded(self) -> None:
        return None

    @contextlib.contextmanager
    def transaction(self, *, pipelined: bool = False) -> Iterator[Any]:
        """One transaction on this thread's connection: all of it commits, or none. A
        failure (a lost connection, say) is raised as a :class:`StorageFault`; a broken
        constraint as the ``sqlite3.IntegrityError`` the stores translate.

        ``pipelined``: the statements are queued (:meth:`Connection.pipelined`), ``BEGIN``
        with the first of them and ``COMMIT`` with the last, so a transaction that reads once
        takes two round trips to the server. The block returns only once the commit is
        answered, as without it.
        """
        conn = self.conn if pipelined else self._begin()
        try:
            with conn.pipelined() if pipelined else contextlib.nullcontext():
                if pipelined:
                    try:
                        conn.execute("BEGIN")  # queued, sent with the first statement
                    except sqlite3.Error as exc:
                        raise _fault(exc, "starting a transaction") from exc
                yield conn
                conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(Exception):
                if not conn.raw.closed and conn.in_transaction:
                    conn.raw.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
                raise _fault(exc, "writing to the database") from exc
            raise

    def _begin(self) -> Connection:
        """This thread's connection with a transaction begun. A ``BEGIN`` that fails because
        the connection was lost (the server dropped it after the look before use) is sent
        once more on a fresh connection: nothing of the transaction had been sent. Not when
        the lost connection held a lock, which the fresh one would lack.

        Raises:
            StorageFault: ``storage_unavailable``, the database cannot be reached.
        """
        conn = self.conn
        try:
            conn.execute("BEGIN")
            return conn
        except sqlite3.Error as exc:
            if not conn.lost or conn.locks:
                raise _fault(exc, "starting a transaction") from exc
        conn = self.conn  # the lost one replaced
        try:
            conn.execute("BEGIN")
        except sqlite3.Error as exc:
            raise _fault(exc, "starting a transaction") from exc
        return conn

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Reads as they are: on PostgreSQL a statement takes no file lock, and a read
        transaction would cost two more round trips."""
        yield

    def close(self) -> None:
        """Give this thread's connection back to the pool; in the thread that opened the
        database, close the pool too (the home is closed for good)."""
        if threading.get_ident() == self._owner:
            self.shutdown()
        else:
            self.release()

    def release(self) -> None:
        """Give this thread's connection back to the pool (after each facade call, so that
        a server's many threads share a few connections)."""
        conn = getattr(self._local, "conn", None)
        if conn is None or (not conn.raw.closed and conn.in_transaction):
            return  # a transaction the caller opened keeps its connection
        self._local.conn = None
        with contextlib.suppress(Exception):
            self._pool.putconn(conn.raw)

    def shutdown(self) -> None:
        """Close every connection of the pool and the turn locks' (the home is closed for
        good)."""
        self.release()
        self._pool.close()
        self._turn_closed.set()
        with self._turn_guard:
            if self._turn_conn is not None:
                with contextlib.suppress(Exception):
                    self._turn_conn.close()
                self._turn_conn = None

    # locks

    @contextlib.contextmanager
    def advisory_lock(self, kind: int, name: str) -> Iterator[None]:
        """Hold the session advisory lock ``(kind, name)`` on this thread's connection,
        waiting for it. Re-entrant within the thread; freed when the connection ends."""
        conn = self.conn
        key = _lock_key(name)
        try:
            conn.execute("SELECT pg_advisory_lock(?, ?)", (kind, key))
        except sqlite3.Error as exc:
            raise _fault(exc, "taking a lock") from exc
        conn.locks += 1
        try:
            yield
        finally:
            conn.locks -= 1
            with contextlib.suppress(Exception):
                conn.execute("SELECT pg_advisory_unlock(?, ?)", (kind, key))

    def memory_lock(self, memory_id: str) -> contextlib.AbstractContextManager[None]:
        """The write lock of one memory (W8), held until the ``with`` block ends (creating,
        reindexing, deleting a memory)."""
        return self.advisory_lock(_MEMORY, memory_id)

    def lock_in_transaction(self, conn: Any, memory_id: str) -> None:
        """Take the same lock inside ``conn``'s transaction, held until it commits or rolls
        back (a write: the lock and the transaction end together).

        Raises:
            sqlite3.OperationalError: not had within the connection's lock timeout (30 s).
        """
        conn.execute("SELECT pg_advisory_xact_lock(?, ?)", (_MEMORY, _lock_key(memory_id)))

    def agent_memory_and_lock_sql(self, name_or_id: str) -> str:
        """The row of :func:`~reverie.store.state.agent_and_memory_sql` (parameter:
        ``name_or_id``) with one more column, ``NULL``, for the lock of the agent's memory,
        which this statement takes (when the agent has one) as :meth:`lock_in_transaction`
        does: a write finds its memory and takes its lock in one statement."""
        key = lock_key_sql("l.memory")
        return (
            f"SELECT l.*, CASE WHEN l.memory IS NOT NULL THEN CAST(pg_advisory_xact_lock("
            f"{_MEMORY}, {key}) AS text) END FROM ({agent_and_memory_sql(name_or_id)}) l"
        )

    @contextlib.contextmanager
    def try_review_lock(self, agent_id: str) -> Iterator[bool]:
        """Leadership of one agent's review (R10): yields whether this process holds it. The
        lock lives on a connection of its own, so a killed leader frees it at once.

        Raises:
            StorageFault: ``storage_unavailable``, the database cannot be reached.
        """
        import psycopg

        raw = self._take()
        key = _lock_key(agent_id)
        try:
            try:
                cur = raw.execute("SELECT pg_try_advisory_lock(%s, %s)", (_REVIEW, key))
                held = bool(cur.fetchone()[0])
            except psycopg.Error as exc:
                raise _fault(exc, "taking a review's lock") from exc
            try:
                yield held
            finally:
                if held:
                    with contextlib.suppress(Exception):
                        raw.execute("SELECT pg_advisory_unlock(%s, %s)", (_REVIEW, key))
        finally:
            self._pool.putconn(raw)

    @contextlib.contextmanager
    def try_turn_lock(self, key: str) -> Iterator[bool]:
        """Hold the turn of the message ``key`` (a chat event's id) for every process and
        server on this database: yields whether this caller holds it (never waits). A session
        advisory lock on the connection this process keeps for its turn locks (one for all of
        them, so a turn waiting for a worker holds none of the pool's): released when the
        ``with`` block ends, and by the server when the process dies.

        Raises:
            StorageFault: ``storage_unavailable``, the database cannot be reached.
        """
        lock = _lock_key(key)
        with self._turn_guard:
            held = lock not in self._turn_keys and self._turn_call(
                "SELECT pg_try_advisory_lock(%s, %s)", lock
            )
            if held:
                self._turn_keys.add(lock)
                if self._turn_keeper is None:
                    self._turn_keeper = threading.Thread(
                        target=self._keep_turn_locks, name="reverie-turn-locks", daemon=True
                    )
                    self._turn_keeper.start()
        try:
            yield held
        finally:
            if held:
                with self._turn_guard:
                    self._turn_keys.discard(lock)
                    # A connection lost meanwhile took its locks with it: nothing to free.
                    with contextlib.suppress(StorageFault):
                        self._turn_call("SELECT pg_advisory_unlock(%s, %s)", lock)

    def prune_turn_locks(self, older: float = 3600.0) -> None:
        """Advisory locks leave nothing behind."""

    def _turn_call(self, sql: str, lock: int) -> bool:
        """One advisory lock call on the turn locks' connection (under ``_turn_guard``); a
        connection the server dropped is opened again first (:meth:`_turn_reconnect`)."""
        import psycopg

        try:
            self._turn_check()
            return bool(self._turn_conn.execute(sql, (_TURN, lock)).fetchone()[0])
        except psycopg.Error as exc:
            raise _fault(exc, "taking a turn's lock") from exc

    def _turn_check(self) -> None:
        """Make sure the turn locks' connection is up (under ``_turn_guard``): a round trip
        when locks are held, since a connection the server dropped (a restart, a terminated
        backend, a network cut) took them with it; then a new connection takes them again.
        With none held, a look at its socket (:func:`_closed_by_server`) is enough.

        Raises:
            psycopg.Error: the database cannot be reached.
        """
        import psycopg

        conn = self._turn_conn
        if conn is not None and not conn.closed and not conn.broken:
            if not self._turn_keys:  # no lock to lose: the look that costs no round trip
                if not _closed_by_server(conn):
                    return
            else:
                with contextlib.suppress(psycopg.OperationalError):
                    conn.execute("SELECT 1")
                    return
        with contextlib.suppress(Exception):
            self._turn_conn.close()
        self._turn_conn = None
        self._turn_conn = psycopg.connect(self.url, **self._kwargs)
        for lock in sorted(self._turn_keys):
            taken = self._turn_conn.execute(
                "SELECT pg_try_advisory_lock(%s, %s)", (_TURN, lock)
            ).fetchone()[0]
            if not taken:
                log.warning(
                    "The connection holding this process's turn locks was lost, and another "
                    "process took the lock of a turn under way here meanwhile: that turn may "
                    "be answered twice."
                )

    def _keep_turn_locks(self) -> None:
        """While turn locks are held, look at their connection every :data:`TURN_CHECK`
        seconds and take them again on a new one when it was lost: well inside the minute
        after which another server looks for turns to run again (``SlackApp.resume``)."""
        while not self._turn_closed.wait(TURN_CHECK):
            with self._turn_guard:
                if not self._turn_keys:
                    continue
                try:
                    self._turn_check()
                except Exception as exc:  # the database down: the next look tries again
                    log.warning("The turn locks' connection is down: %s", _first_line(exc))

    # schema

    def _migrate(self) -> None:
        with self.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(?, 0)", (_MIGRATE,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS reverie_migrations "
                "(version BIGINT PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
            )
            done = {int(r[0]) for r in conn.execute("SELECT version FROM reverie_migrations")}
            shared = list(enumerate(state_module._MIGRATIONS, start=1))
            extra = list(enumerate(EXTRA_MIGRATIONS, start=_EXTRA_BASE + 1))
            for version, script in shared + extra:
                if version in done:
                    continue
                if version in _SQLITE_ONLY:
                    statements: list[str | None] = []
                elif version < _EXTRA_BASE:
                    statements = [translate_schema(s) for s in fts.statements(script)]
                else:
                    statements = list(_split(script))
                for sql in statements:
                    if sql:
                        conn.execute(sql)
                conn.execute(
                    "INSERT INTO reverie_migrations (version, applied_at) VALUES (?, ?)",
                    (version, time.time()),
                )

    def damaged_tables(self) -> list[str]:
        """PostgreSQL checks its own pages; the search index is a column kept by the database
        itself, never out of step with its rows."""
        return []

    def drop_tables(self, conn: Any, tables: tuple[str, ...], damaged: list[str]) -> None:
        for name in tables:
            if not name.endswith("_fts"):
                conn.execute(f'DELETE FROM "{name}"')

    def integrity_notes(self, limit: int = 20) -> list[str]:
        return []

    def vacuum(self) -> bool:
        return False


def _connect_kwargs(url: str) -> dict[str, Any]:
    """What every connection is opened with beside ``url``: autocommit (transactions are
    explicit), and 10 s to connect unless the URL (or libpq's ``PGCONNECT_TIMEOUT``) gives
    its own timeout, which is then kept, as the pool's connections keep it."""
    from psycopg.conninfo import conninfo_to_dict
    from psycopg.pq import Conninfo

    kwargs: dict[str, Any] = {"autocommit": True}
    try:
        given = "connect_timeout" in conninfo_to_dict(url) or any(
            o.keyword == b"connect_timeout" and o.val is not None for o in Conninfo.get_defaults()
        )
    except Exception:  # a URL that does not parse: the first connection says why
        given = True
    if not given:
        kwargs["connect_timeout"] = 10
    return kwargs


def _configure(raw: Any) -> None:
    """Every pooled connection: a lock waited for over 30 s is a fault, as on SQLite; no JIT
    compilation (it pays only for long analytic queries, and costs a short one milliseconds
    when the planner's estimate crosses its threshold)."""
    raw.execute("SET lock_timeout = '30s'")
    raw.execute("SET jit = off")


def _closed_by_server(raw: Any) -> bool:
    """Whether the server has closed the idle connection ``raw``, seen without a round trip:
    one non-blocking ``poll`` of its socket. An idle connection (nothing sent, nothing
    awaited) has nothing to read; one the server ended has its FATAL message, and the end of
    the stream, waiting. (Anything else unasked for, which Reverie never sets off, costs a
    connection made again, nothing more.)"""
    try:
        poller = select.poll()
        poller.register(raw.pgconn.socket, select.POLLIN)
        return bool(poller.poll(0))
    except Exception:  # no socket to look at: closed
        return True


def _fault(exc: BaseException, doing: str) -> StorageFault:
    """A failure of the database while ``doing``: nothing of the transaction was written."""
    text = str(exc)
    if "disk is full" in text or "readonly database" in text:
        from .faults import storage_fault

        return storage_fault(exc, doing)
    if getattr(exc, "sqlstate", None) == "55P03":  # lock_not_available: lock_timeout passed
        return StorageFault(
            f"Another write held what this one waits for (the memory, most often: a large "
            f"batch) past the lock timeout while {doing}; the database itself is fine. "
            "Nothing of it was written; try again once that write is done.",
            code="storage_unavailable",
        )
    return StorageFault(
        f"The PostgreSQL database failed while {doing} ({_first_line(exc)}). Nothing of it "
        "was written; try again once the database answers.",
        code="storage_unavailable",
    )


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
