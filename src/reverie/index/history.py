"""Full-text search over conversation history (SPEC H1, H2, O3, and 15 ``context search``).

Derived from the ``messages`` table and rebuilt from it. Each user or assistant message of a
memory-on conversation is one row of ``history_docs`` (a tool log never is: review and the
agent's history tools read conversation text, not tool output). An FTS5 table with external
content indexes the rows, kept in step by triggers inside the transaction that writes the
message, so search never lags the history.

A row is made of four fields, built by one function (:func:`default_document`, or any
:data:`DocumentBuilder` a deployment or a benchmark passes instead): ``body`` (the text),
``speaker``, ``date`` and ``context`` (the text of the ``CONTEXT_MESSAGES`` user or assistant
messages before it in the same conversation: an answer rarely repeats the words of the
question it answers). Ranking is BM25 with a weight per field. The tokenizer is part of the
FTS5 table; :func:`rebuild` recreates the table with another one.

The store keeps rows only for memory-on, not deleted conversations, and every query also
filters on the conversation's mode, so a conversation that turns off leaves search at once
even if a row were left behind.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from reverie.errors import RefusedInput

from .fts import (
    EXCERPT_CHARS,
    content_terms,
    excerpt,
    fts_query,
    is_postgres,
    pg_ranked,
    pg_terms,
    round_score,
    scan_rank,
    scope_word,
    statements,
)

__all__ = [
    "CONTEXT_MESSAGES",
    "DEFAULT_WEIGHTS",
    "DOCS_SCHEMA",
    "TABLES",
    "TOKENIZE",
    "Document",
    "DocumentBuilder",
    "HistoryHit",
    "MessageText",
    "create_docs_table",
    "dated_document",
    "default_document",
    "drop_conversation",
    "fts_schema",
    "hit_excerpt",
    "index_messages",
    "is_current",
    "rebuild",
    "search",
    "table_tokenizer",
]

#: The default tokenizer: Porter stemming over Unicode words, accents folded.
TOKENIZE = "porter unicode61 remove_diacritics 2"
#: BM25 weights of ``body``, ``speaker``, ``date`` and ``context``.
DEFAULT_WEIGHTS = (1.0, 1.0, 0.5, 0.5)
#: How many earlier messages of the conversation make a message's ``context``.
CONTEXT_MESSAGES = 2
#: Of those, at most this many quote the earlier messages of a hit found by its context.
CONTEXT_QUOTE_CHARS = 100

DOCS_SCHEMA = """
CREATE TABLE IF NOT EXISTS history_docs (
    id INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    body TEXT NOT NULL,
    speaker TEXT NOT NULL,
    date TEXT NOT NULL,
    scope TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS history_docs_by_conversation
    ON history_docs (conversation_id, position);
"""
#: Migration 5: the context field (the FTS5 table is rebuilt by the conversation store).
CONTEXT_MIGRATION = "ALTER TABLE history_docs ADD COLUMN context TEXT NOT NULL DEFAULT '';"
#: The tables of the index, for :func:`create_docs_table` and :func:`rebuild` to remake when
#: they are damaged.
TABLES = ("history_fts", "history_docs")


def create_docs_table(conn: sqlite3.Connection) -> None:
    """Create ``history_docs`` as this version has it (with migration 5's context), empty;
    :func:`rebuild` then makes the FTS5 table. Call inside the caller's transaction."""
    for statement in statements(DOCS_SCHEMA):
        conn.execute(statement)
    if "context" not in {row[1] for row in conn.execute("PRAGMA table_info(history_docs)")}:
        conn.execute(CONTEXT_MIGRATION)


_TRIGGERS = """
CREATE TRIGGER IF NOT EXISTS history_docs_ai AFTER INSERT ON history_docs BEGIN
    INSERT INTO history_fts (rowid, body, speaker, date, context, scope)
    VALUES (new.id, new.body, new.speaker, new.date, new.context, new.scope);
END;
CREATE TRIGGER IF NOT EXISTS history_docs_ad AFTER DELETE ON history_docs BEGIN
    INSERT INTO history_fts (history_fts, rowid, body, speaker, date, context, scope)
    VALUES ('delete', old.id, old.body, old.speaker, old.date, old.context, old.scope);
END;
"""

_TOKENIZE_OK = re.compile(r"^[A-Za-z0-9_ '\"./:-]{1,200}$")


@dataclass(frozen=True)
class MessageText:
    """What a document is built from: one message of a conversation."""

    role: str
    author: str | None
    text: str
    time: float


@dataclass(frozen=True)
class Document:
    """The indexed fields of one message."""

    body: str
    speaker: str = ""
    date: str = ""
    context: str = ""


#: Builds the indexed fields of a message from it and the user or assistant messages before it
#: (at most ``CONTEXT_MESSAGES``, oldest first); the one place to put a speaker, a date or a
#: context in.
DocumentBuilder = Callable[[MessageText, Sequence[MessageText]], Document]


def default_document(message: MessageText, before: Sequence[MessageText] = ()) -> Document:
    """The text as body, the author as speaker, the earlier messages' text as context; no date
    (see :func:`dated_document`)."""
    return Document(message.text, message.author or "", "", " ".join(m.text for m in before))


def dated_document(message: MessageText, before: Sequence[MessageText] = ()) -> Document:
    """Like :func:`default_document`, with the day written out (``8 May 2023``).

    On LoCoMo it adds 0.012 to Recall@5. It is not the default because the day is in English
    and in UTC: wrong for a deployment that speaks another language or lives in another zone,
    and a verb such as "may" would match a month's messages.
    """
    day = datetime.fromtimestamp(message.time, UTC)
    return dataclasses.replace(default_document(message, before), date=f"{day.day} {day:%B %Y}")


@dataclass(frozen=True)
class HistoryHit:
    """One search result: a message range of a conversation, ready for ``context_read``."""

    conversation: str
    start: int
    end: int
    excerpt: str
    score: float


def fts_schema(tokenize: str = TOKENIZE) -> str:
    """The FTS5 table over ``history_docs`` with this tokenizer, and its triggers.

    Raises:
        RefusedInput: ``invalid_tokenizer`` for text that is not a tokenizer specification.
    """
    if not _TOKENIZE_OK.match(tokenize):
        raise RefusedInput(
            f"{tokenize!r} is not a tokenizer specification, such as {TOKENIZE!r}.",
            code="invalid_tokenizer",
        )
    quoted = "'" + tokenize.replace("'", "''") + "'"
    return (
        "CREATE VIRTUAL TABLE IF NOT EXISTS history_fts USING fts5 (\n"
        "    body, speaker, date, context, scope, content='history_docs', content_rowid='id',\n"
        f"    tokenize={quoted}\n);\n" + _TRIGGERS
    )


def is_current(conn: sqlite3.Connection) -> bool:
    """Whether the FTS5 table exists with this version's fields (else :func:`rebuild` it)."""
    sql = _table_sql(conn)
    return sql is not None and " context," in sql


def table_tokenizer(conn: sqlite3.Connection) -> str | None:
    """The tokenizer the FTS5 table was created with, or ``None`` without a table."""
    found = re.search(r"tokenize='((?:[^']|'')*)'", _table_sql(conn) or "")
    return found.group(1).replace("''", "'") if found else None


def _table_sql(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'history_fts'").fetchone()
    return None if row is None else str(row[0])


#: ``(message id, agent id, conversation id, position, message)``: one message to index.
Row = tuple[int, str, str, int, MessageText]


def scope_token(agent_id: str) -> str:
    """The word that marks an agent's history rows (see :func:`reverie.index.fts.scope_word`)."""
    return scope_word(agent_id, "scope")


def index_messages(
    conn: sqlite3.Connection, rows: Iterable[Row], builder: DocumentBuilder = default_document
) -> int:
    """Index messages; tool logs are skipped. Call inside the caller's transaction.

    Returns the number of rows written.
    """
    values = []
    for message_id, agent_id, conversation_id, position, message in rows:
        if message.role == "tool":
            continue
        doc = builder(message, _before(conn, conversation_id, position))
        values.append(
            (
                message_id,
                conversation_id,
                position,
                doc.body,
                doc.speaker,
                doc.date,
                doc.context,
                scope_token(agent_id),
            )
        )
    # IGNORE, not REPLACE: a replaced row would not pass through the delete trigger.
    conn.executemany(
        "INSERT OR IGNORE INTO history_docs (id, conversation_id, position, body, speaker, date,"
        " context, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        values,
    )
    return len(values)


def _before(conn: sqlite3.Connection, conversation_id: str, position: int) -> list[MessageText]:
    """The user or assistant messages just before ``position``, oldest first."""
    rows = conn.execute(
        "SELECT role, author, text, created_at FROM messages WHERE conversation_id = ? "
        "AND position < ? AND role != 'tool' ORDER BY position DESC LIMIT ?",
        (conversation_id, position, CONTEXT_MESSAGES),
    ).fetchall()
    return [MessageText(r, a, t, at) for r, a, t, at in reversed(rows)]


def drop_conversation(conn: sqlite3.Connection, conversation_id: str) -> None:
    """Remove a conversation from search (it turned off, or was deleted)."""
    conn.execute("DELETE FROM history_docs WHERE conversation_id = ?", (conversation_id,))


def rebuild(
    conn: sqlite3.Connection,
    rows: Iterable[Row],
    builder: DocumentBuilder = default_document,
    *,
    tokenize: str | None = None,
    has_fts5: bool = True,
) -> int:
    """Rebuild every row from ``rows``, and the FTS5 table with ``tokenize`` if given, or if
    the table is missing or older than this version (keeping its tokenizer).

    A tokenizer given here stays with the table: later opens keep it. Returns the rows
    written. Call inside the caller's transaction.

    Raises:
        RefusedInput: ``invalid_tokenizer`` (FTS5 refused the specification).
    """
    kept = table_tokenizer(conn) if has_fts5 else None
    schema = fts_schema(tokenize or kept or TOKENIZE)
    if has_fts5:
        # Empty the index without the triggers: an FTS5 'delete' of a row the index does not
        # hold (as in a freshly created table) corrupts it.
        conn.execute("DROP TRIGGER IF EXISTS history_docs_ai")
        conn.execute("DROP TRIGGER IF EXISTS history_docs_ad")
    conn.execute("DELETE FROM history_docs")
    if has_fts5:
        if tokenize is not None or not is_current(conn):
            conn.execute("DROP TABLE IF EXISTS history_fts")
        try:
            for statement in statements(schema):  # IF NOT EXISTS: an unchanged table stays
                conn.execute(statement)
        except sqlite3.OperationalError as exc:
            raise RefusedInput(
                f"FTS5 refused the tokenizer {tokenize!r}: {exc}.", code="invalid_tokenizer"
            ) from None
        conn.execute("INSERT INTO history_fts (history_fts) VALUES ('delete-all')")
    count = index_messages(conn, rows, builder)
    if has_fts5:
        optimize(conn)
    return count


def optimize(conn: sqlite3.Connection) -> None:
    """Merge the index's segments into one (after a bulk import or a rebuild): on LoCoMo a
    query then takes 44% less time, for about 8 ms of work per 6,000 messages."""
    conn.execute("INSERT INTO history_fts (history_fts) VALUES ('optimize')")


# Only rows of the agent's memory-on, not deleted conversations count: the rows of any other
# conversation should not exist, and this filter makes sure that they never show.
_VISIBLE = (
    "JOIN conversations c ON c.id = d.conversation_id "
    "AND c.agent_id = ? AND c.memory_mode = 'on' AND c.deleted = 0"
)


def search(
    conn: sqlite3.Connection,
    agent_id: str,
    query: str,
    limit: int,
    *,
    use_fts: bool = True,
    weights: tuple[float, float, float, float] = DEFAULT_WEIGHTS,
    scan_max_rows: int = 50_000,
) -> list[HistoryHit]:
    """Rank the agent's visible messages against ``query``, best first; one message per hit."""
    if not use_fts:
        return _scan(conn, agent_id, query, limit, scan_max_rows)
    if is_postgres(conn):
        return _pg_search(conn, agent_id, query, limit, weights)
    # Quoted, so no user text can break the MATCH; function words ('what', 'did', 'the') are
    # left out: on LoCoMo they cost 40% of the ranking time and 3 points of Recall@5.
    expr = fts_query(query, drop_stopwords=True)
    if expr is None:
        return []
    terms = content_terms(query)
    # The agent's scope token is ANDed in, so FTS5 scores only this agent's rows (BM25 over
    # every agent's matches costs ten times more with ten agents). Ranking runs first, on the
    # index alone, in a materialized subquery: joined in one query, SQLite may pick a plan
    # that scans the tables and tests MATCH row by row.
    scoped = f'scope:"{scope_token(agent_id)}" AND ({expr})'
    want = limit
    while True:
        rows = conn.execute(
            "WITH ranked AS MATERIALIZED (SELECT rowid AS id, bm25(history_fts, ?, ?, ?, ?, 0.0) "
            "AS r FROM history_fts WHERE history_fts MATCH ? ORDER BY r LIMIT ?) "
            "SELECT d.conversation_id, d.position, d.body, d.context, ranked.r FROM ranked "
            f"JOIN history_docs d ON d.id = ranked.id {_VISIBLE} ORDER BY ranked.r LIMIT ?",
            (*weights, scoped, want, agent_id, limit),
        ).fetchall()
        # Rows the filter drops should not exist; if some did, rank deeper rather than
        # answer short.
        if len(rows) == limit or want >= 10_000 or not _more(conn, scoped, want):
            break
        want *= 4
    return [
        HistoryHit(c, p, p + 1, hit_excerpt(body, context, terms), round_score(-r))
        for c, p, body, context, r in rows
    ]


def _pg_search(
    conn: sqlite3.Connection,
    agent_id: str,
    query: str,
    limit: int,
    weights: tuple[float, float, float, float],
) -> list[HistoryHit]:
    """PostgreSQL's ranking (``tsvector`` with a GIN index): the fields weigh as in BM25
    (body A, speaker B, date C, context D, weights in PostgreSQL's order D, C, B, A), the
    score divided by the document's length (normalization 1)."""
    words = pg_terms(query)
    if not words:
        return []
    top = max(weights) or 1.0  # PostgreSQL takes weights from 0 to 1; only their ratios count
    body, speaker, date, context = (round(w / top, 6) for w in weights)
    ranked = pg_ranked("history_docs x", "x.scope = ?", f"{{{context},{date},{speaker},{body}}}")
    scope = scope_token(agent_id)
    rows = conn.execute(
        f"SELECT d.conversation_id, d.position, d.body, d.context, h.r FROM ({ranked}) h "
        f"JOIN history_docs d ON d.id = h.id {_VISIBLE} ORDER BY h.r DESC, h.id",
        (words, scope, scope, scope, limit * 4, agent_id),
    ).fetchall()[:limit]
    terms = content_terms(query)
    return [
        HistoryHit(c, p, p + 1, hit_excerpt(b, ctx, terms), round_score(r))
        for c, p, b, ctx, r in rows
    ]


def _more(conn: sqlite3.Connection, expr: str, than: int) -> bool:
    row = conn.execute(
        "SELECT COUNT(*) FROM (SELECT 1 FROM history_fts WHERE history_fts MATCH ? LIMIT ?)",
        (expr, than + 1),
    ).fetchone()
    return int(row[0]) > than


def _scan(
    conn: sqlite3.Connection, agent_id: str, query: str, limit: int, max_rows: int
) -> list[HistoryHit]:
    """The bounded fallback without FTS5: :func:`reverie.index.fts.scan_rank` over the newest
    rows (text and speaker)."""
    rows = conn.execute(
        f"SELECT d.conversation_id, d.position, d.body, d.speaker FROM history_docs d {_VISIBLE} "
        "ORDER BY d.id DESC LIMIT ?",
        (agent_id, max_rows),
    ).fetchall()
    ranked = scan_rank([f"{b} {s}" for _, _, b, s in rows], query, limit)
    terms = content_terms(query)
    return [
        HistoryHit(
            rows[i][0], rows[i][1], rows[i][1] + 1, excerpt(rows[i][2], terms), round_score(s)
        )
        for i, s in ranked
    ]


def hit_excerpt(body: str, context: str, terms: list[str]) -> str:
    """The excerpt of a hit: around the first matching word of the message; when none of the
    words is in the message but some are in the messages before it (the ``context`` field
    found it), a short quote of those first, so that the hit shows why it was found:
    ``[after: "How was the trip?"] Amazing, we saw the falls``."""
    lower, before = body.lower(), context.lower()
    if any(t in lower for t in terms) or not any(t in before for t in terms):
        return excerpt(body, terms)
    lead = excerpt(" ".join(context.split()), terms, CONTEXT_QUOTE_CHARS)
    return f'[after: "{lead}"] ' + excerpt(body, terms, EXCERPT_CHARS - CONTEXT_QUOTE_CHARS)
