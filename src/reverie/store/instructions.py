"""Channel instructions and the approvals that change them (SPEC I1-I3).

Instructions belong to an agent in a channel, not to a conversation, so clearing or starting a
conversation keeps them (I3). They change only through an approval: a proposal is stored as
``pending`` with its exact text and changes nothing (I2); approving it marks it approved and
applies that text in the same transaction, so a process that dies at any instant leaves
either a pending proposal (approve again) or one applied exactly once, never a half. Deciding
an approval that is already decided the same way answers it again and changes nothing; Deny
and Comment cancel it.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reverie.config import Settings
from reverie.core import validation
from reverie.errors import NotFound, RefusedInput

if TYPE_CHECKING:
    from .state import SQLiteState

__all__ = [
    "DECISIONS",
    "MODES",
    "SCHEMA",
    "Approval",
    "InstructionStore",
    "Instructions",
    "check_proposal",
]

MODES = ("append", "replace")
#: A decision and the status it leaves.
DECISIONS = {"approve": "approved", "deny": "denied", "comment": "commented"}

SCHEMA = """
CREATE TABLE instructions (
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    channel_id TEXT NOT NULL,
    text TEXT NOT NULL,
    version INTEGER NOT NULL,
    updated_at REAL NOT NULL,
    approval_id TEXT,
    PRIMARY KEY (agent_id, channel_id)
);
CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('instructions', 'bundle')),
    channel_id TEXT NOT NULL,
    conversation_id TEXT,
    mode TEXT NOT NULL CHECK (mode IN ('append', 'replace')),
    text TEXT NOT NULL,
    requested_by TEXT,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'commented')),
    created_at REAL NOT NULL,
    decided_at REAL,
    decided_by TEXT,
    comment TEXT,
    applied_version INTEGER,
    memory_body TEXT,
    memory_revision INTEGER
);
CREATE INDEX approvals_by_status ON approvals (status, created_at);
"""


@dataclass(frozen=True)
class Instructions:
    """A channel's instructions for an agent; version 0 is none yet."""

    text: str
    version: int


@dataclass(frozen=True)
class Approval:
    """A proposed change that waits for a person (I2)."""

    id: str
    agent_id: str
    kind: str
    channel_id: str
    conversation_id: str | None
    mode: str
    text: str
    requested_by: str | None
    status: str
    created_at: float
    decided_at: float | None
    decided_by: str | None
    comment: str | None
    #: The instructions version the approval produced, once applied.
    applied_version: int | None
    #: A bundle (A2) also replaces the memory body, expecting this revision.
    memory_body: str | None = None
    memory_revision: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The approval as the JSON surfaces print it (times as epoch seconds)."""
        return dict(self.__dict__)


_COLUMNS = (
    "id, agent_id, kind, channel_id, conversation_id, mode, text, requested_by, status, "
    "created_at, decided_at, decided_by, comment, applied_version, memory_body, memory_revision"
)


def check_proposal(text: Any, mode: Any, settings: Settings) -> str:
    """I1's rules for a proposed text: a string of at most ``max_instruction_chars``, no
    triple-backtick fences, no control characters or credentials; a known mode.

    Raises:
        RefusedInput: ``invalid_instructions`` or a content code of W4.
    """
    if mode not in MODES:
        raise RefusedInput(
            f"mode must be append or replace, not {mode!r}.", code="invalid_instructions"
        )
    if not isinstance(text, str) or not text.strip():
        raise RefusedInput("Instructions need a non-empty text.", code="invalid_instructions")
    if len(text) > settings.max_instruction_chars:
        raise RefusedInput(
            f"The proposed instructions hold {len(text):,} characters; at most "
            f"{settings.max_instruction_chars:,} are allowed. Shorten them.",
            code="invalid_instructions",
            limit=settings.max_instruction_chars,
        )
    if "```" in text:
        raise RefusedInput(
            "Instructions may not hold triple-backtick fences (```); write them as plain text.",
            code="invalid_instructions",
        )
    validation.check_text(text, "instructions")
    return text.strip()


class InstructionStore:
    """Instructions and approvals of one state database."""

    def __init__(self, state: SQLiteState, settings: Settings) -> None:
        self.state = state
        self.settings = settings

    def instructions(self, agent_id: str, channel_id: str) -> Instructions:
        """The agent's instructions in a channel (empty, version 0, when none)."""
        row = self.state.conn.execute(
            "SELECT text, version FROM instructions WHERE agent_id = ? AND channel_id = ?",
            (agent_id, channel_id),
        ).fetchone()
        return Instructions(str(row[0]), int(row[1])) if row else Instructions("", 0)

    def propose(
        self,
        agent_id: str,
        channel_id: str,
        text: str,
        mode: str,
        *,
        requested_by: str | None,
        conversation_id: str | None = None,
        memory: tuple[str, int] | None = None,
    ) -> Approval:
        """Store a pending change of the channel's instructions; nothing else changes (I2).
        With ``memory`` (a body and the revision it expects) the proposal is a bundle (A2):
        approving it replaces the memory body too.

        Raises:
            RefusedInput: the text or mode breaks I1.
        """
        text = check_proposal(text, mode, self.settings)
        approval_id = "apr_" + uuid.uuid4().hex[:10]
        body, revision = memory if memory is not None else (None, None)
        with self.state.transaction() as conn:
            conn.execute(
                f"INSERT INTO approvals ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', "
                "?, NULL, NULL, NULL, NULL, ?, ?)",
                (
                    approval_id,
                    agent_id,
                    "instructions" if memory is None else "bundle",
                    channel_id,
                    conversation_id,
                    mode,
                    text,
                    requested_by,
                    time.time(),
                    body,
                    revision,
                ),
            )
        return self.get(approval_id)

    def get(self, approval_id: str) -> Approval:
        """One approval.

        Raises:
            NotFound: no such approval.
        """
        row = self.state.conn.execute(
            f"SELECT {_COLUMNS} FROM approvals WHERE id = ?", (approval_id,)
        ).fetchone()
        if row is None:
            raise NotFound(
                f"No approval {approval_id!r}; `reverie approvals list` shows them.",
                approval=approval_id,
            )
        return Approval(*row)

    def list(self, agent_id: str | None = None, status: str | None = "pending") -> list[Approval]:
        """Approvals, oldest first: pending ones by default, all with ``status=None``."""
        sql = f"SELECT {_COLUMNS} FROM approvals WHERE 1 = 1"
        args: list[Any] = []
        if agent_id is not None:
            sql += " AND agent_id = ?"
            args.append(agent_id)
        if status is not None:
            sql += " AND status = ?"
            args.append(status)
        rows = self.state.conn.execute(sql + " ORDER BY created_at, id", args).fetchall()
        return [Approval(*r) for r in rows]

    def decide(
        self,
        approval_id: str,
        decision: str,
        *,
        by: str,
        comment: str | None = None,
        authorize: Callable[[sqlite3.Connection, Approval], None],
        on_decided: Callable[[sqlite3.Connection, Approval], None] | None = None,
    ) -> Approval:
        """Approve (and apply), deny or comment on a pending approval (I2).

        ``authorize`` raises when ``by`` may not decide it; ``on_decided`` runs in the same
        transaction (a notice to the conversation that asked, say). Deciding again the way
        it was decided answers the approval as it stands and changes nothing.

        Raises:
            NotFound: no such approval.
            RefusedInput: ``approval_decided`` when it was decided otherwise; a comment
                without text; the applied instructions would be too long.
            PermissionDenied: from ``authorize``.
        """
        status = DECISIONS.get(decision)
        if status is None:
            raise RefusedInput(
                f"decision must be one of {', '.join(DECISIONS)}.", code="invalid_operation"
            )
        if decision == "comment":
            if not isinstance(comment, str) or not comment.strip():
                raise RefusedInput("A comment needs a text.", code="invalid_operation")
            validation.check_text(comment, "comment")
        with self.state.transaction() as conn:
            approval = self.get(approval_id)
            authorize(conn, approval)
            if approval.status == status:
                return approval
            if approval.status != "pending":
                raise RefusedInput(
                    f"Approval {approval_id} was already {approval.status} by "
                    f"{approval.decided_by}; nothing changed.",
                    code="approval_decided",
                    status=approval.status,
                )
            now = time.time()
            conn.execute(
                "UPDATE approvals SET status = ?, decided_at = ?, decided_by = ?, comment = ? "
                "WHERE id = ? AND status = 'pending'",
                (status, now, by, comment.strip() if comment else None, approval_id),
            )
            if status == "approved":
                self._apply(conn, approval, now)
            decided = self.get(approval_id)
            if on_decided is not None:
                on_decided(conn, decided)
        return decided

    def _apply(self, conn: sqlite3.Connection, approval: Approval, now: float) -> None:
        """Apply exactly the approved text (inside the approval's transaction)."""
        current = self.instructions(approval.agent_id, approval.channel_id)
        if approval.mode == "append" and current.text:
            text = f"{current.text}\n\n{approval.text}"
        else:
            text = approval.text
        if len(text) > self.settings.max_channel_instructions_chars:
            raise RefusedInput(
                f"With this change the channel's instructions would hold {len(text):,} "
                f"characters; at most {self.settings.max_channel_instructions_chars:,} are "
                "allowed. Deny it and propose a shorter replacement.",
                code="invalid_instructions",
            )
        version = current.version + 1
        conn.execute(
            "INSERT INTO instructions (agent_id, channel_id, text, version, updated_at, "
            "approval_id) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, channel_id) DO "
            "UPDATE SET text = excluded.text, version = excluded.version, "
            "updated_at = excluded.updated_at, approval_id = excluded.approval_id",
            (approval.agent_id, approval.channel_id, text, version, now, approval.id),
        )
        conn.execute(
            "UPDATE approvals SET applied_version = ? WHERE id = ?", (version, approval.id)
        )
