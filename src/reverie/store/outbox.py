"""The outbox: every message an agent sends to a chat, as a durable row with an id (SPEC T1, P3).

A turn's answer, its P3 failure notice and each ``notify`` are written here in the same
transaction as the rest of the turn, so nothing is sent that the turn did not commit and nothing
committed is forgotten. A surface (the terminal chat, Slack) takes the pending rows of its
chats, claims one (a lease, so two workers never send the same row at once), sends it and
marks it delivered with what the chat answered (a receipt). A claim whose lease ran out, by a
worker that died mid-delivery, is pending again. A surface whose chat can recognise a repeated
send by the delivery id (Slack: the id rides in each posted message's metadata; an HTTP
idempotency key) gets exactly-once delivery across restarts; the others get at-least-once,
never none.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reverie.errors import NotFound

if TYPE_CHECKING:
    from .state import SQLiteState

__all__ = ["KINDS", "SCHEMA", "Delivery", "Outbox"]

#: What a delivery is: a turn's answer, a notice about a turn (P3, a model error, an approval),
#: or a ``notify`` (T1).
KINDS = ("answer", "notice", "notify")

SCHEMA = """
CREATE TABLE outbox (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    conversation_id TEXT,
    channel_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('answer', 'notice', 'notify')),
    text TEXT NOT NULL,
    task TEXT,
    call_id TEXT,
    created_at REAL NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'sending', 'delivered')),
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_until REAL,
    delivered_at REAL,
    receipt TEXT
);
CREATE INDEX outbox_by_channel ON outbox (channel_id, state, created_at);
CREATE INDEX outbox_by_task ON outbox (task, kind);
"""

_COLUMNS = (
    "id, agent_id, conversation_id, channel_id, kind, text, task, created_at, state, attempts, "
    "delivered_at, receipt"
)


@dataclass(frozen=True)
class Delivery:
    """One message for one chat."""

    id: str
    agent_id: str
    conversation_id: str | None
    channel_id: str
    kind: str
    text: str
    #: The turn that produced it, or the request it answers (:meth:`Outbox.enqueue_once`).
    task: str | None
    created_at: float
    state: str
    attempts: int
    delivered_at: float | None
    receipt: str | None

    def to_dict(self) -> dict[str, Any]:
        """The delivery as the JSON surfaces print it."""
        return dict(self.__dict__)


class Outbox:
    """The outbox of one state database."""

    def __init__(self, state: SQLiteState) -> None:
        self.state = state

    def enqueue(
        self,
        conn: sqlite3.Connection,
        *,
        agent_id: str,
        channel_id: str,
        kind: str,
        text: str,
        conversation_id: str | None = None,
        task: str | None = None,
        call_id: str | None = None,
    ) -> str:
        """Add a pending delivery inside the caller's transaction; returns its id."""
        delivery_id = "dlv_" + uuid.uuid4().hex[:12]
        conn.execute(
            "INSERT INTO outbox (id, agent_id, conversation_id, channel_id, kind, text, task, "
            "call_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                delivery_id,
                agent_id,
                conversation_id,
                channel_id,
                kind,
                text,
                task,
                call_id,
                time.time(),
            ),
        )
        return delivery_id

    def enqueue_once(
        self,
        conn: sqlite3.Connection,
        key: str,
        texts: Sequence[str],
        *,
        agent_id: str,
        channel_id: str,
        kind: str,
        conversation_id: str | None = None,
    ) -> list[str]:
        """Add one pending delivery per text, unless deliveries for ``key`` exist already:
        then their ids. ``key`` (a chat event's id, say) is stored as the deliveries' task, so
        a retried request answers once. Inside the caller's transaction, which is
        ``BEGIN IMMEDIATE``: two retries at once cannot both add."""
        rows = conn.execute(
            "SELECT id FROM outbox WHERE task = ? ORDER BY created_at, rowid", (key,)
        ).fetchall()
        if rows:
            return [str(r[0]) for r in rows]
        return [
            self.enqueue(
                conn,
                agent_id=agent_id,
                channel_id=channel_id,
                kind=kind,
                text=text,
                conversation_id=conversation_id,
                task=key,
            )
            for text in texts
        ]

    def calls_in_task(self, conn: sqlite3.Connection, task: str, kind: str) -> int:
        """How many tool calls of a task produced deliveries of ``kind`` (T1's count)."""
        row = conn.execute(
            "SELECT COUNT(DISTINCT call_id) FROM outbox WHERE task = ? AND kind = ?",
            (task, kind),
        ).fetchone()
        return int(row[0])

    def get(self, delivery_id: str) -> Delivery:
        """One delivery.

        Raises:
            NotFound: no such delivery.
        """
        row = self.state.conn.execute(
            f"SELECT {_COLUMNS} FROM outbox WHERE id = ?", (delivery_id,)
        ).fetchone()
        if row is None:
            raise NotFound(f"No delivery {delivery_id!r}.", delivery=delivery_id)
        return Delivery(*row)

    def pending(
        self,
        *,
        channels: Sequence[str] | None = None,
        conversation_id: str | None = None,
        limit: int = 100,
        now: float | None = None,
    ) -> list[Delivery]:
        """Deliveries waiting to be sent (and those whose claim expired), oldest first."""
        now = time.time() if now is None else now
        sql = (
            f"SELECT {_COLUMNS} FROM outbox WHERE (state = 'pending' OR "
            "(state = 'sending' AND lease_until < ?))"
        )
        args: list[Any] = [now]
        if channels is not None:
            sql += f" AND channel_id IN ({', '.join('?' for _ in channels)})"
            args += list(channels)
        if conversation_id is not None:
            sql += " AND conversation_id = ?"
            args.append(conversation_id)
        rows = self.state.conn.execute(
            sql + " ORDER BY created_at, rowid LIMIT ?", [*args, limit]
        ).fetchall()
        return [Delivery(*r) for r in rows]

    def claim(self, delivery_id: str, lease_seconds: float = 60.0) -> Delivery | None:
        """Take a pending delivery for sending; None when another worker holds it or it was
        delivered."""
        taken = self.claim_many([delivery_id], lease_seconds)
        return taken[0] if taken else None

    def claim_many(self, ids: Sequence[str], lease_seconds: float = 60.0) -> list[Delivery]:
        """Take each of ``ids`` for sending, in one transaction (one poster taking a page of
        its pending rows at once): the deliveries taken, in the order of ``ids``; a row that
        another worker holds, or that was delivered, is left out."""
        now = time.time()
        taken: list[str] = []
        with self.state.transaction() as conn:
            for delivery_id in ids:
                cur = conn.execute(
                    "UPDATE outbox SET state = 'sending', attempts = attempts + 1, "
                    "lease_until = ? WHERE id = ? AND (state = 'pending' OR "
                    "(state = 'sending' AND lease_until < ?))",
                    (now + lease_seconds, delivery_id, now),
                )
                if cur.rowcount:
                    taken.append(delivery_id)
        return [self.get(i) for i in taken]

    def delivered_many(self, receipts: Mapping[str, str | None]) -> None:
        """Mark each delivery of ``receipts`` sent, with what the chat answered, in one
        transaction (idempotent: a first receipt is kept)."""
        now = time.time()
        with self.state.transaction() as conn:
            for delivery_id, receipt in receipts.items():
                conn.execute(
                    "UPDATE outbox SET state = 'delivered', "
                    "delivered_at = COALESCE(delivered_at, ?), receipt = COALESCE(receipt, ?), "
                    "lease_until = NULL WHERE id = ?",
                    (now, receipt, delivery_id),
                )

    def delivered(self, delivery_id: str, receipt: str | None = None) -> Delivery:
        """Mark a delivery sent, with what the chat answered (idempotent).

        Raises:
            NotFound: no such delivery.
        """
        self.delivered_many({delivery_id: receipt})
        return self.get(delivery_id)

    def release(self, delivery_id: str) -> None:
        """Give a claimed delivery back (sending failed; it will be tried again)."""
        with self.state.transaction() as conn:
            conn.execute(
                "UPDATE outbox SET state = 'pending', lease_until = NULL "
                "WHERE id = ? AND state = 'sending'",
                (delivery_id,),
            )

    def for_task(self, task: str) -> list[Delivery]:
        """Every delivery a turn produced, in order."""
        rows = self.state.conn.execute(
            f"SELECT {_COLUMNS} FROM outbox WHERE task = ? ORDER BY created_at, rowid", (task,)
        ).fetchall()
        return [Delivery(*r) for r in rows]
