"""An agent's soul: numbered, immutable published versions and per-conversation drafts (S1-S3).

Version 0 is the empty soul every agent starts with (no row). Publishing inserts the next
number in the same transaction that checks the draft's base: a draft started from an older
version than the current one is refused (S2) and reset to the current text, so the agent can
redo its edits on top. A trigger makes published rows immutable.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reverie.config import Settings
from reverie.core.soul import edit_soul
from reverie.errors import NotFound, RefusedInput, RevisionConflict

if TYPE_CHECKING:
    from .state import SQLiteState

__all__ = ["SCHEMA", "SoulDraft", "SoulReceipt", "SoulStore", "SoulVersion"]

SCHEMA = """
CREATE TABLE soul_versions (
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    version INTEGER NOT NULL CHECK (version > 0),
    text TEXT NOT NULL,
    created_at REAL NOT NULL,
    conversation_id TEXT,
    PRIMARY KEY (agent_id, version)
);
CREATE TRIGGER soul_versions_immutable BEFORE UPDATE ON soul_versions
BEGIN
    SELECT RAISE(ABORT, 'published soul versions are immutable');
END;
CREATE TABLE soul_drafts (
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    base_version INTEGER NOT NULL,
    text TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (agent_id, conversation_id)
);
"""


@dataclass(frozen=True)
class SoulVersion:
    """One published version (0: the empty soul before any was published)."""

    version: int
    text: str
    created_at: float | None
    #: The conversation whose draft it was; None for version 0 and a soul given at creation.
    conversation_id: str | None


@dataclass(frozen=True)
class SoulDraft:
    """A conversation's private draft and the version it started from."""

    conversation_id: str
    base_version: int
    text: str
    #: Notes from the last edit (an entry that was already there, say).
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The draft as the tools and JSON surfaces show it."""
        return {
            "base_version": self.base_version,
            "text": self.text,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class SoulReceipt:
    """The answer of a publish (S3): only a version number here means it was saved."""

    version: int
    changed: bool

    def to_dict(self) -> dict[str, Any]:
        """The receipt as the tools and JSON surfaces show it."""
        return {"version": self.version, "changed": self.changed}


class SoulStore:
    """Souls of one state database."""

    def __init__(self, state: SQLiteState, settings: Settings) -> None:
        self.state = state
        self.settings = settings

    def current(self, agent_id: str) -> SoulVersion:
        """The highest published version (version 0, empty, before any)."""
        row = self.state.conn.execute(
            "SELECT version, text, created_at, conversation_id FROM soul_versions "
            "WHERE agent_id = ? ORDER BY version DESC LIMIT 1",
            (agent_id,),
        ).fetchone()
        return SoulVersion(*row) if row else SoulVersion(0, "", None, None)

    def version(self, agent_id: str, version: int) -> SoulVersion:
        """One published version.

        Raises:
            NotFound: no such version (the message names the current one).
        """
        if version == 0:
            return SoulVersion(0, "", None, None)
        row = self.state.conn.execute(
            "SELECT version, text, created_at, conversation_id FROM soul_versions "
            "WHERE agent_id = ? AND version = ?",
            (agent_id, version),
        ).fetchone()
        if row is None:
            current = self.current(agent_id).version
            raise NotFound(
                f"Soul version {version} does not exist; the current version is {current}.",
                version=version,
                current_version=current,
            )
        return SoulVersion(*row)

    def history(self, agent_id: str) -> list[SoulVersion]:
        """Every published version, newest first."""
        rows = self.state.conn.execute(
            "SELECT version, text, created_at, conversation_id FROM soul_versions "
            "WHERE agent_id = ? ORDER BY version DESC",
            (agent_id,),
        ).fetchall()
        return [SoulVersion(*r) for r in rows]

    def publish_initial(self, conn: sqlite3.Connection, agent_id: str, text: str) -> None:
        """Version 1 of a new agent's soul, given when it is created (inside its transaction).

        Raises:
            RefusedInput: the text breaks a content rule.
        """
        new, _ = edit_soul("", {"action": "set_body", "text": text}, self.settings)
        if new:
            conn.execute(
                "INSERT INTO soul_versions (agent_id, version, text, created_at) "
                "VALUES (?, 1, ?, ?)",
                (agent_id, new, time.time()),
            )

    def draft(self, agent_id: str, conversation_id: str) -> SoulDraft:
        """The conversation's draft; a fresh one (the current text) if it has none."""
        row = self.state.conn.execute(
            "SELECT base_version, text FROM soul_drafts WHERE agent_id = ? AND conversation_id = ?",
            (agent_id, conversation_id),
        ).fetchone()
        if row is not None:
            return SoulDraft(conversation_id, int(row[0]), str(row[1]))
        current = self.current(agent_id)
        return SoulDraft(conversation_id, current.version, current.text)

    def edit(self, agent_id: str, conversation_id: str, request: Any) -> SoulDraft:
        """Apply memory-style operations to the conversation's draft (S1); nothing is
        published. The draft keeps the version it started from.

        Raises:
            RefusedInput: as :func:`~reverie.core.soul.edit_soul`; nothing is stored.
        """
        with self.state.transaction() as conn:
            draft = self.draft(agent_id, conversation_id)
            text, notes = edit_soul(draft.text, request, self.settings)
            conn.execute(
                "INSERT INTO soul_drafts (agent_id, conversation_id, base_version, text, "
                "updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent_id, conversation_id) "
                "DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
                (agent_id, conversation_id, draft.base_version, text, time.time()),
            )
        return SoulDraft(conversation_id, draft.base_version, text, tuple(notes))

    def publish(self, agent_id: str, conversation_id: str) -> SoulReceipt:
        """Publish the conversation's draft as the next version (S2, S3).

        A draft equal to the current text publishes nothing and answers the current version
        with ``changed`` False.

        Raises:
            RefusedInput: ``no_draft`` when the conversation has not edited a draft.
            RevisionConflict: ``soul_version_conflict`` when another version was published
                since the draft started; the draft is reset to the current text.
        """
        conflict: RevisionConflict | None = None
        with self.state.transaction() as conn:
            row = conn.execute(
                "SELECT base_version, text FROM soul_drafts "
                "WHERE agent_id = ? AND conversation_id = ?",
                (agent_id, conversation_id),
            ).fetchone()
            if row is None:
                raise RefusedInput(
                    "There is no draft to publish in this conversation: edit it first with "
                    "edit_soul_draft. Nothing was published.",
                    code="no_draft",
                )
            base, text = int(row[0]), str(row[1])
            current = self.current(agent_id)
            if base != current.version:
                # S2: refused, and the draft starts over from the current text.
                conn.execute(
                    "UPDATE soul_drafts SET base_version = ?, text = ?, updated_at = ? "
                    "WHERE agent_id = ? AND conversation_id = ?",
                    (current.version, current.text, time.time(), agent_id, conversation_id),
                )
                conflict = RevisionConflict(
                    f"Soul version {current.version} was published after your draft started "
                    f"from version {base}, so nothing was published. Your draft now holds "
                    f"version {current.version}'s text: read it (read_soul), redo your "
                    "edits on top, and publish again.",
                    code="soul_version_conflict",
                    current_version=current.version,
                    draft_base=base,
                )
            elif text == current.text:
                conn.execute(
                    "DELETE FROM soul_drafts WHERE agent_id = ? AND conversation_id = ?",
                    (agent_id, conversation_id),
                )
                return SoulReceipt(current.version, False)
            else:
                version = current.version + 1
                conn.execute(
                    "INSERT INTO soul_versions (agent_id, version, text, created_at, "
                    "conversation_id) VALUES (?, ?, ?, ?, ?)",
                    (agent_id, version, text, time.time(), conversation_id),
                )
                conn.execute(
                    "DELETE FROM soul_drafts WHERE agent_id = ? AND conversation_id = ?",
                    (agent_id, conversation_id),
                )
                return SoulReceipt(version, True)
        assert conflict is not None
        raise conflict
