"""The review log: when each agent was last reviewed, and what every batch cost (R1, R7)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from .state import SQLiteState

__all__ = ["BatchRecord", "ReviewLog"]


@dataclass(frozen=True)
class BatchRecord:
    """One review batch as recorded: its ranges, the revision it produced, its cost."""

    agent_id: str
    created_at: float
    ranges: list[tuple[str, int, int]]
    revision: int
    changed: bool
    model_calls: int
    tokens_in: int
    tokens_out: int
    dropped: list[dict[str, Any]]


class ReviewLog:
    """Review bookkeeping on the state database."""

    def __init__(self, state: SQLiteState) -> None:
        self.state = state

    def last_run(self, agent_id: str) -> float | None:
        """When the agent's last review run started, or ``None``."""
        row = self.state.conn.execute(
            "SELECT MAX(started_at) FROM review_runs WHERE agent_id = ?", (agent_id,)
        ).fetchone()
        return None if row[0] is None else float(row[0])

    def start_run(self, agent_id: str, trigger: str, now: float | None = None) -> float:
        """Record the start of a run; returns its start time (its key)."""
        started = time.time() if now is None else now
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT INTO review_runs (agent_id, started_at, trigger) VALUES (?, ?, ?) "
                "ON CONFLICT (agent_id, started_at) DO UPDATE SET trigger = excluded.trigger, "
                "finished_at = NULL, batches = 0",
                (agent_id, started, trigger),
            )
        return started

    def finish_run(self, agent_id: str, started: float, batches: int) -> None:
        """Record the end of a run."""
        with self.state.transaction() as conn:
            conn.execute(
                "UPDATE review_runs SET finished_at = ?, batches = ? "
                "WHERE agent_id = ? AND started_at = ?",
                (time.time(), batches, agent_id, started),
            )

    def record_batch_in(self, conn: Any, rec: BatchRecord) -> None:
        """Record one batch and what it cost (R7), inside the caller's transaction (the one
        that marks its ranges reviewed)."""
        conn.execute(
            "INSERT INTO review_batches (agent_id, created_at, ranges, revision, changed, "
            "model_calls, tokens_in, tokens_out, dropped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rec.agent_id,
                rec.created_at,
                json.dumps(rec.ranges),
                rec.revision,
                int(rec.changed),
                rec.model_calls,
                rec.tokens_in,
                rec.tokens_out,
                json.dumps(rec.dropped),
            ),
        )

    def batches(self, agent_id: str, limit: int = 100) -> list[BatchRecord]:
        """Recorded batches of an agent, newest first."""
        rows = self.state.conn.execute(
            "SELECT agent_id, created_at, ranges, revision, changed, model_calls, tokens_in, "
            "tokens_out, dropped FROM review_batches WHERE agent_id = ? "
            "ORDER BY id DESC LIMIT ?",
            (agent_id, limit),
        ).fetchall()
        return [
            BatchRecord(
                r[0],
                r[1],
                [tuple(x) for x in json.loads(r[2])],
                r[3],
                bool(r[4]),
                r[5],
                r[6],
                r[7],
                json.loads(r[8]),
            )
            for r in rows
        ]
