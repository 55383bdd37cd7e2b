"""Channel instructions and the approvals that change them (SPEC I1-I3).

Instructions belong to an agent in a channel, not to a conversation, so clearing or starting a
conversation keeps them (I3). They change only through an approval: a proposal is stored as
``pending`` with its exact text and changes nothing (I2); approving it marks it approved and
applies that text in the same transaction, so a process that dies at any instant leaves
either a pending proposal (approve again) or one applied exactly once, never a half. Deciding
an approval that is already decided the same way answers it again and changes nothing; Deny
and Comment cancel it.

A bundle (A2) also replaces the memory body, which lives in git (or its own tables) and cannot
share that transaction, so it is approved in three steps (W1: nothing is written when any step
refuses). :meth:`InstructionStore.claim` checks, in one transaction, everything the
instructions half can refuse (who approves, the agent's grant, the resulting length) and marks
the approval as being applied (``applying_by``, ``applying_at``); the facade then writes the
memory half, keyed by the approval so that it is written once; :meth:`InstructionStore.decide`
then marks it approved and applies its instructions in a second transaction. While it is
being applied it can no longer be denied or commented on (``approval_in_progress``: its memory
half may be written), approving it again resumes and finishes it (also after a crash between
the steps), and no other approval of the same agent and channel is applied, so the length
checked at the claim still holds at the end. When the memory half is refused without writing
(the memory moved), :meth:`InstructionStore.release` lets the claim go, and it can be denied.

Every transaction that decides or claims an approval first locks the agent's row, so that
decisions about one agent's approvals run one at a time on PostgreSQL too (SQLite's
``BEGIN IMMEDIATE`` already runs writers one at a time).
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
    "APPLYING_MIGRATION",
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

#: Shared migration 9: who began applying a bundle, and when (both ``NULL`` until then).
#: Columns added, so the status CHECK constraint stays as it is on both backends.
APPLYING_MIGRATION = """
ALTER TABLE approvals ADD COLUMN applying_by TEXT;
ALTER TABLE approvals ADD COLUMN applying_at REAL;
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
    #: Who began applying a bundle, and when (kept once it is approved).
    applying_by: str | None = None
    applying_at: float | None = None

    @property
    def applying(self) -> bool:
        """Whether it is being applied: a bundle claimed and not yet approved. It can no
        longer be denied or commented on; approving it again finishes it."""
        return self.status == "pending" and self.applying_at is not None

    def to_dict(self) -> dict[str, Any]:
        """The approval as the JSON surfaces print it (times as epoch seconds)."""
        return dict(self.__dict__)


_COLUMNS = (
    "id, agent_id, kind, channel_id, conversation_id, mode, text, requested_by, status, "
    "created_at, decided_at, decided_by, comment, applied_version, memory_body, memory_revision, "
    "applying_by, applying_at"
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
                "?, NULL, NULL, NULL, NULL, ?, ?, NULL, NULL)",
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

    def claim(
        self,
        approval_id: str,
        *,
        by: str,
        authorize: Callable[[sqlite3.Connection, Approval], None],
    ) -> Approval:
        """The first step of approving a bundle (A2): in one transaction, check everything
        its instructions half can refuse and mark it as being applied by ``by``; nothing else
        changes. The facade then writes its memory half and finishes it with
        :meth:`decide`. Claiming one already being applied resumes it (anyone ``authorize``
        lets approve may); an approved one is answered as it stands.

        Raises:
            NotFound: no such approval.
            RefusedInput: ``approval_decided`` (denied or commented before);
                ``approval_in_progress`` (another approval of the same agent and channel is
                being applied); ``invalid_instructions`` (the channel's instructions would be
                too long); ``invalid_operation`` (not a bundle).
            PermissionDenied: from ``authorize``.
        """
        with self.state.transaction() as conn:
            approval = self._locked(conn, approval_id)
            if approval.kind != "bundle":
                raise RefusedInput(
                    f"Approval {approval_id} is no bundle; approve it in one step.",
                    code="invalid_operation",
                )
            authorize(conn, approval)
            if approval.status == "approved" or approval.applying:
                return approval
            self._require_pending(approval)
            self._require_channel_free(approval)
            self._applied_text(approval)
            conn.execute(
                "UPDATE approvals SET applying_by = ?, applying_at = ? "
                "WHERE id = ? AND status = 'pending'",
                (by, time.time(), approval_id),
            )
            return self.get(approval_id)

    def release(self, approval_id: str) -> Approval:
        """Let a bundle's claim go (its memory half was refused without writing): it is
        pending as before, and may be denied or approved again.

        Raises:
            NotFound: no such approval.
        """
        with self.state.transaction() as conn:
            self._locked(conn, approval_id)
            conn.execute(
                "UPDATE approvals SET applying_by = NULL, applying_at = NULL "
                "WHERE id = ? AND status = 'pending'",
                (approval_id,),
            )
            return self.get(approval_id)

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
        it was decided answers the approval as it stands and changes nothing. A bundle is
        approved here only once :meth:`claim` marked it as being applied (and the facade
        wrote its memory half); then it is no longer denied or commented on.

        Raises:
            NotFound: no such approval.
            RefusedInput: ``approval_decided`` when it was decided otherwise;
                ``approval_in_progress`` when it is being applied (deny, comment) or another
                approval of the same agent and channel is (approve); a comment without text;
                the applied instructions would be too long; ``invalid_operation`` for a
                bundle not claimed.
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
            approval = self._locked(conn, approval_id)
            authorize(conn, approval)
            if approval.status == status:
                return approval
            self._require_pending(approval)
            if approval.applying and status != "approved":
                raise RefusedInput(
                    f"Approval {approval_id} is being applied (approved by "
                    f"{approval.applying_by}; its memory change may be written already), so it "
                    f"can no longer be {status}. Approving it again finishes it. Nothing "
                    "changed.",
                    code="approval_in_progress",
                    approval=approval_id,
                )
            if status == "approved":
                if approval.kind == "bundle" and not approval.applying:
                    raise RefusedInput(
                        f"Approval {approval_id} is a bundle: its memory half is written "
                        "first (Reverie.approve does both). Nothing changed.",
                        code="invalid_operation",
                    )
                self._require_channel_free(approval)
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

    def _locked(self, conn: sqlite3.Connection, approval_id: str) -> Approval:
        """The approval, read after its agent's row is locked for this transaction: on
        PostgreSQL a second decision about the agent's approvals waits here until this one
        commits, then reads what it left (SQLite's writers already run one at a time)."""
        agent_id = self.get(approval_id).agent_id
        conn.execute("UPDATE agents SET archived = archived WHERE id = ?", (agent_id,))
        return self.get(approval_id)

    @staticmethod
    def _require_pending(approval: Approval) -> None:
        if approval.status != "pending":
            raise RefusedInput(
                f"Approval {approval.id} was already {approval.status} by "
                f"{approval.decided_by}; nothing changed.",
                code="approval_decided",
                status=approval.status,
            )

    def _require_channel_free(self, approval: Approval) -> None:
        """No other approval of the same agent and channel is being applied: a bundle's
        claim checked the length its instructions would have, which must still hold when it
        finishes.

        Raises:
            RefusedInput: ``approval_in_progress``.
        """
        row = self.state.conn.execute(
            "SELECT id FROM approvals WHERE agent_id = ? AND channel_id = ? "
            "AND status = 'pending' AND applying_at IS NOT NULL AND id <> ? "
            "ORDER BY applying_at LIMIT 1",
            (approval.agent_id, approval.channel_id, approval.id),
        ).fetchone()
        if row is not None:
            raise RefusedInput(
                f"Approval {row[0]} of the same agent and channel is being applied; approve "
                f"{row[0]} again to finish it (or to let it go, if its memory moved), then "
                f"approve {approval.id}. Nothing changed.",
                code="approval_in_progress",
                approval=str(row[0]),
            )

    def _applied_text(self, approval: Approval, *, limit: bool = True) -> tuple[str, Instructions]:
        """The channel's instructions once ``approval`` is applied, and those it replaces.

        Raises:
            RefusedInput: ``invalid_instructions``, the result would be too long (with
                ``limit``).
        """
        current = self.instructions(approval.agent_id, approval.channel_id)
        if approval.mode == "append" and current.text:
            text = f"{current.text}\n\n{approval.text}"
        else:
            text = approval.text
        if limit and len(text) > self.settings.max_channel_instructions_chars:
            raise RefusedInput(
                f"With this change the channel's instructions would hold {len(text):,} "
                f"characters; at most {self.settings.max_channel_instructions_chars:,} are "
                "allowed. Deny it and propose a shorter replacement. Nothing changed.",
                code="invalid_instructions",
            )
        return text, current

    def _apply(self, conn: sqlite3.Connection, approval: Approval, now: float) -> None:
        """Apply exactly the approved text (inside the approval's transaction). A bundle
        being applied had its length checked when it was claimed, and no other change of the
        channel was applied since; that check is not made again here, where a smaller limit
        set since would leave it half applied for good."""
        text, current = self._applied_text(approval, limit=not approval.applying)
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
