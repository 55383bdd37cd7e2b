"""Run sessions and the audit of every turn (SPEC P3, P4, X2).

A conversation's **session** is the transcript a model continues. Its key carries the memory
revision the session started under (``conv@r7``; ``conv@off`` where memory is off): when a
turn reads another revision, the session starts again at that turn's message, so after a memory
write the model never continues a transcript built on the old memory (P4).

Every **turn** leaves one row: the memory revision, soul version and instructions version that
entered its prompt, its policy envelope (X2), the tools it called and how each ended, what it
cost, and how it ended (``delivered``, ``dropped_stale`` when memory moved under it,
``model_error``; ``interrupted`` when its process died before it ended, found when the turn is
run again). So a person can answer "why did the agent say that?" from the row beside the
message.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .state import SQLiteState

__all__ = [
    "ANSWERED",
    "INTERRUPTED_MIGRATION",
    "OUTCOMES",
    "POSTGRES_INTERRUPTED_MIGRATION",
    "SCHEMA",
    "Session",
    "TurnLog",
    "TurnRecord",
    "Unanswered",
]

#: How a turn ended, when it answered: the answer or a notice went to the outbox.
ANSWERED = ("delivered", "dropped_stale", "model_error")
#: Every outcome of a turn: ``running`` until it ends; ``interrupted`` when it never ended (its
#: process died) and a later turn on the same message replaced it.
OUTCOMES = ("running", *ANSWERED, "interrupted")

_COLUMNS = (
    "id, conversation_id, agent_id, session_key, request_position, answer_position, started_at,"
    " finished_at, outcome, memory_revision, soul_version, instructions_version, envelope, "
    "tools, model, model_calls, tokens_in, tokens_out, error"
)

_TURNS_TABLE = """
CREATE TABLE {name} (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    request_position INTEGER NOT NULL,
    answer_position INTEGER,
    started_at REAL NOT NULL,
    finished_at REAL,
    outcome TEXT NOT NULL
        CHECK (outcome IN ({outcomes})),
    memory_revision INTEGER,
    soul_version INTEGER NOT NULL,
    instructions_version INTEGER NOT NULL,
    envelope TEXT NOT NULL,
    tools TEXT NOT NULL DEFAULT '[]',
    model TEXT,
    model_calls INTEGER NOT NULL DEFAULT 0,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    error TEXT
);
"""

_INDEX = "CREATE INDEX turns_by_conversation ON turns (conversation_id, request_position);\n"
#: The turns still running (a few), found without reading the others (:meth:`TurnLog.running`).
_RUNNING_INDEX = (
    "CREATE INDEX turns_running ON turns (conversation_id, request_position) "
    "WHERE outcome = 'running';\n"
)

#: Migration 6: run sessions and turns, as first made (four outcomes).
SCHEMA = (
    """
CREATE TABLE run_sessions (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
    session_key TEXT NOT NULL,
    memory_revision INTEGER,
    start_position INTEGER NOT NULL,
    created_at REAL NOT NULL
);"""
    + _TURNS_TABLE.format(
        name="turns", outcomes="'running', 'delivered', 'dropped_stale', 'model_error'"
    )
    + _INDEX
)

_INTERRUPTED = "'running', 'delivered', 'dropped_stale', 'model_error', 'interrupted'"

#: Migration 8 on SQLite, which cannot change a CHECK constraint: the turns table made again
#: with the outcome ``interrupted`` allowed, its rows copied, its index made again; and an
#: index of the running turns.
INTERRUPTED_MIGRATION = (
    _TURNS_TABLE.format(name="turns_new", outcomes=_INTERRUPTED)
    + f"INSERT INTO turns_new ({_COLUMNS}) SELECT {_COLUMNS} FROM turns;\n"
    + "DROP TABLE turns;\n"
    + "ALTER TABLE turns_new RENAME TO turns;\n"
    + _INDEX
    + _RUNNING_INDEX
)

#: The same on PostgreSQL (its migration 105): the constraint changed in place.
POSTGRES_INTERRUPTED_MIGRATION = (
    "ALTER TABLE turns DROP CONSTRAINT turns_outcome_check, "
    f"ADD CONSTRAINT turns_outcome_check CHECK (outcome IN ({_INTERRUPTED}));\n" + _RUNNING_INDEX
)


@dataclass(frozen=True)
class Session:
    """The transcript a conversation's model continues: its key and first position."""

    key: str
    memory_revision: int | None
    start_position: int
    #: True when this turn started it (the revision moved, or the conversation is new).
    fresh: bool


@dataclass(frozen=True)
class TurnRecord:
    """The audit of one turn."""

    id: str
    conversation_id: str
    agent_id: str
    session_key: str
    request_position: int
    answer_position: int | None
    started_at: float
    finished_at: float | None
    outcome: str
    #: The memory revision whose index was in the prompt; None when memory was not loaded.
    memory_revision: int | None
    soul_version: int
    instructions_version: int
    envelope: dict[str, Any]
    tools: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record as the JSON surfaces print it."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class Unanswered:
    """A person's message that no finished turn answered and nothing followed: a turn that a
    stop cut short (a chat surface records the message before it acknowledges the chat)."""

    conversation_id: str
    agent: str
    author: str | None
    text: str
    message_id: str
    at: float


def session_key(conversation_id: str, revision: int | None) -> str:
    """``conv@r7``, or ``conv@off`` for a run without memory (P4)."""
    return f"{conversation_id}@{'off' if revision is None else f'r{revision}'}"


class TurnLog:
    """Sessions and turns of one state database."""

    def __init__(self, state: SQLiteState) -> None:
        self.state = state

    def session(
        self, conn: sqlite3.Connection, conversation_id: str, revision: int | None, position: int
    ) -> Session:
        """The session a turn whose message is at ``position`` continues, or a fresh one that
        starts there when the memory revision differs from the session's (P4)."""
        key = session_key(conversation_id, revision)
        row = conn.execute(
            "SELECT session_key, memory_revision, start_position FROM run_sessions "
            "WHERE conversation_id = ?",
            (conversation_id,),
        ).fetchone()
        if row is not None and row[0] == key:
            return Session(key, revision, int(row[2]), False)
        conn.execute(
            "INSERT INTO run_sessions (conversation_id, session_key, memory_revision, "
            "start_position, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (conversation_id) "
            "DO UPDATE SET session_key = excluded.session_key, memory_revision = "
            "excluded.memory_revision, start_position = excluded.start_position, "
            "created_at = excluded.created_at",
            (conversation_id, key, revision, position, time.time()),
        )
        return Session(key, revision, position, True)

    def start(self, conn: sqlite3.Connection, record: TurnRecord) -> None:
        """Record a turn as running (inside the caller's transaction)."""
        conn.execute(
            f"INSERT INTO turns ({_COLUMNS}) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            _row(record),
        )

    def finish(self, conn: sqlite3.Connection, record: TurnRecord) -> None:
        """Record how a turn ended (inside the caller's transaction)."""
        conn.execute(
            "UPDATE turns SET answer_position = ?, finished_at = ?, outcome = ?, tools = ?, "
            "model = ?, model_calls = ?, tokens_in = ?, tokens_out = ?, error = ?, "
            "memory_revision = ? WHERE id = ?",
            (
                record.answer_position,
                record.finished_at,
                record.outcome,
                json.dumps(record.tools, ensure_ascii=False),
                record.model,
                record.model_calls,
                record.tokens_in,
                record.tokens_out,
                record.error,
                record.memory_revision,
                record.id,
            ),
        )

    def interrupt(
        self, conn: sqlite3.Connection, conversation_id: str, position: int, at: float
    ) -> int:
        """Mark ``interrupted`` (ended at ``at``) the turns of the message at ``position``
        still ``running``, inside the caller's transaction: for a caller that runs the message's
        turn again and knows that no live process runs it (it holds the message's turn lock).
        Returns how many were marked."""
        cur = conn.execute(
            "UPDATE turns SET outcome = 'interrupted', finished_at = ? WHERE conversation_id = ? "
            "AND request_position = ? AND outcome = 'running'",
            (at, conversation_id, position),
        )
        return int(cur.rowcount)

    def get(self, turn_id: str) -> TurnRecord | None:
        """One turn, or None."""
        row = self.state.conn.execute(
            f"SELECT {_COLUMNS} FROM turns WHERE id = ?", (turn_id,)
        ).fetchone()
        return _record(row) if row else None

    def unanswered(self, message_prefix: str, since: float) -> list[Unanswered]:
        """The people's messages recorded with an id that starts with ``message_prefix`` at
        ``since`` or later, in live conversations, that are the last message of their
        conversation and have no turn that answered them (none, or only turns left ``running``
        or ``interrupted``), oldest first."""
        key = "id:" + message_prefix
        answered = ", ".join(f"'{o}'" for o in ANSWERED)
        rows = self.state.conn.execute(
            "SELECT m.conversation_id, a.name, m.author, m.text, m.fingerprint, m.created_at "
            "FROM conversations c JOIN agents a ON a.id = c.agent_id "
            "JOIN messages m ON m.conversation_id = c.id AND m.position = c.message_count - 1 "
            "WHERE c.deleted = 0 AND c.last_message_at >= ? AND m.role = 'user' "
            "AND m.created_at >= ? AND substr(m.fingerprint, 1, ?) = ? "
            "AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.conversation_id = m.conversation_id "
            f"AND t.request_position = m.position AND t.outcome IN ({answered})) "
            "ORDER BY m.created_at",
            (since, since, len(key), key),
        ).fetchall()
        return [Unanswered(r[0], r[1], r[2], r[3], r[4][3:], float(r[5])) for r in rows]

    def running(self, message_prefix: str) -> list[tuple[str, int, str]]:
        """The turns left ``running`` on messages recorded with an id that starts with
        ``message_prefix``: the conversation, the message's position and its id, each once."""
        key = "id:" + message_prefix
        rows = self.state.conn.execute(
            "SELECT DISTINCT t.conversation_id, t.request_position, m.fingerprint FROM turns t "
            "JOIN messages m ON m.conversation_id = t.conversation_id "
            "AND m.position = t.request_position "
            "WHERE t.outcome = 'running' AND substr(m.fingerprint, 1, ?) = ?",
            (len(key), key),
        ).fetchall()
        return [(str(r[0]), int(r[1]), str(r[2])[3:]) for r in rows]

    def for_conversation(
        self, conversation_id: str, start: int = 0, end: int | None = None
    ) -> list[TurnRecord]:
        """The turns whose request is at ``start`` <= position < ``end``, in order."""
        rows = self.state.conn.execute(
            f"SELECT {_COLUMNS} FROM turns WHERE conversation_id = ? AND request_position >= ? "
            "AND request_position < ? ORDER BY request_position, started_at",
            (conversation_id, start, end if end is not None else 2**62),
        ).fetchall()
        return [_record(r) for r in rows]


def _row(r: TurnRecord) -> tuple[Any, ...]:
    return (
        r.id,
        r.conversation_id,
        r.agent_id,
        r.session_key,
        r.request_position,
        r.answer_position,
        r.started_at,
        r.finished_at,
        r.outcome,
        r.memory_revision,
        r.soul_version,
        r.instructions_version,
        json.dumps(r.envelope, ensure_ascii=False, sort_keys=True),
        json.dumps(r.tools, ensure_ascii=False),
        r.model,
        r.model_calls,
        r.tokens_in,
        r.tokens_out,
        r.error,
    )


def _record(row: Any) -> TurnRecord:
    values = list(row)
    values[12] = json.loads(values[12])
    values[13] = json.loads(values[13])
    return TurnRecord(*values)
