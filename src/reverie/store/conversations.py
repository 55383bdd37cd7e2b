"""Channels, grants, conversations and their messages, on the state database (SPEC 1, 4, 15).

Memory modes (O1-O3) are decided here and nowhere else, when a conversation starts, when a
message arrives, when a chat is linked, and when an unclassified conversation is classified:

* on for ``dm``, ``web`` and (non-group) ``channel`` conversations, and for automations that
  do not report to a group; off when a conversation starts in a ``group``, or in an automation
  that reports to one (O1, O2);
* sticky: a conversation that ever receives a message from a group, or gets a group linked,
  turns off for good, and so do its sub-sessions; nothing turns it back on (O2);
* a sub-session starts off when its parent is off (O2);
* a conversation without a mode (older, or created unclassified) is classified by
  :meth:`ConversationStore.classify`: off if its last run could answer a group (O2).

A memory-off conversation has no history-search rows, is never in a pending review range, and
the history tools refuse it (O3, in :mod:`reverie.runtime.context`).

Message positions are 0-based in order of arrival; a range ``start``..``end`` includes
``start`` and excludes ``end`` everywhere. Each conversation records how far review has read
(``reviewed_upto``); its tail is complete when it is closed or idle for the idle window.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import time as _time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from reverie.config import Settings
from reverie.core.validation import check_control, check_not_secret, check_unicode
from reverie.errors import NotFound, RefusedInput, ReverieError
from reverie.index import history

from .state import SQLiteState, column_of

log = logging.getLogger(__name__)

__all__ = [
    "CHANNEL_KINDS",
    "ROLES",
    "TASK_KINDS",
    "Appended",
    "Channel",
    "ChannelRef",
    "CloseRecord",
    "Conversation",
    "ConversationStore",
    "Grant",
    "ImportSummary",
    "Message",
    "MessageRecord",
    "answers_group",
    "check_id",
    "check_started_by",
    "check_timestamp",
    "fingerprint",
    "parse_jsonl",
    "parse_records",
    "parse_time",
]

CHANNEL_KINDS = ("dm", "channel", "group", "web", "automation")
ROLES = ("user", "assistant", "tool")
#: What can start a conversation's task (H3).
TASK_KINDS = ("user_message", "automation", "sub_session", "sub_session_result", "api", "import")

# Ids end up in source citations ``(source: conv-7#12-14)``: no spaces, '#' or parentheses.
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,127}$")
_LEVEL = re.compile(r"^[a-z0-9_-]{1,32}$")
_MAX_NAME = 200
_MAX_STARTED_BY = 2048


@dataclass(frozen=True)
class Channel:
    """Where conversations happen (SPEC 1). An automation may report to another chat."""

    id: str
    kind: str
    name: str | None
    reports_to: str | None
    #: The kind of ``reports_to``, when there is one.
    reports_to_kind: str | None
    created_at: float

    @property
    def answers_group(self) -> bool:
        """Whether what is said here reaches a group (O1, O2)."""
        return answers_group(self.kind, self.reports_to_kind)


@dataclass(frozen=True)
class Grant:
    """An agent's admission to a channel."""

    agent_id: str
    channel_id: str
    status: str  # "active" or "revoked"
    changed_at: float


@dataclass(frozen=True)
class Conversation:
    """A conversation (session) as stored (SPEC 1)."""

    id: str
    agent_id: str
    channel_id: str
    channel_kind: str
    parent_id: str | None
    title: str
    created_at: float
    updated_at: float
    last_message_at: float | None
    #: The current task's model when the conversation chose one; ``None``: the agent's default.
    model: str | None
    thinking: str | None
    #: ``"on"``, ``"off"``, or ``None`` before classification.
    memory_mode: str | None
    #: Why the mode is what it is (``dm``, ``group_message``, ``parent_off``, ...).
    mode_reason: str | None
    started_by: dict[str, Any] | None
    linked_chats: tuple[str, ...]
    closed: bool
    deleted: bool
    message_count: int
    #: Characters of user and assistant text (tool logs not counted).
    text_chars: int
    #: Review has read the messages before this position.
    reviewed_upto: int

    @property
    def memory_on(self) -> bool:
        """Whether memory may be loaded into, reviewed from and searched from here (O3)."""
        return self.memory_mode == "on" and not self.deleted


@dataclass(frozen=True)
class Message:
    """One message of a conversation."""

    position: int
    role: str
    author: str | None
    text: str
    time: float
    channel_id: str | None


@dataclass(frozen=True)
class Appended:
    """The answer of an append: where the message is, and whether it is new."""

    conversation_id: str
    position: int
    #: False when the same message was already there (a retried append or re-import).
    added: bool
    memory_mode: str | None


@dataclass(frozen=True)
class ImportSummary:
    """What an import changed: conversations touched, messages added, conversations closed."""

    conversations: int
    messages: int
    closed: int
    #: Messages already present (an earlier import of the same lines), skipped.
    skipped: int = 0
    #: Memory ids of agents the import created; their repositories are made after commit.
    new_memories: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, int]:
        """The summary as ``reverie conversations import --json`` prints it (SPEC 15)."""
        return {
            "conversations": self.conversations,
            "messages": self.messages,
            "closed": self.closed,
        }


def answers_group(kind: str, reports_to_kind: str | None = None) -> bool:
    """Whether a chat of ``kind`` (reporting to ``reports_to_kind``) reaches a group (O1, O2)."""
    return kind == "group" or (kind == "automation" and reports_to_kind == "group")


# validation of caller-supplied values


def check_id(value: Any, what: str) -> str:
    """A conversation or channel id: 1 to 128 of letters, digits and ``._:@+/-``.

    Raises:
        RefusedInput: ``invalid_id``.
    """
    if not isinstance(value, str) or not _ID.match(value):
        raise RefusedInput(
            f"{what} must be 1 to 128 letters, digits or ._:@+/- (starting with a letter or "
            f"digit; no spaces, '#' or parentheses), not {str(value)[:60]!r}.",
            code="invalid_id",
            field=what,
        )
    check_not_secret(value, what, "invalid_id")
    return value


def _check_kind(kind: Any) -> str:
    if kind not in CHANNEL_KINDS:
        raise RefusedInput(
            f"A channel kind is one of {', '.join(CHANNEL_KINDS)}, not {str(kind)[:40]!r}.",
            code="invalid_channel",
        )
    return str(kind)


def _check_name(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > _MAX_NAME:
        raise RefusedInput(
            f"{what} must be text of 1 to {_MAX_NAME} characters.", code="invalid_operation"
        )
    check_control(value, what)
    check_not_secret(value, what, "invalid_operation")
    return value


def _check_text(text: Any, settings: Settings, what: str = "text") -> str:
    if not isinstance(text, str):
        raise RefusedInput(f"{what} must be a string.", code="invalid_operation", field=what)
    # The rule of memory writes (W4): history is read into prompts and review too.
    check_control(text, what)
    size = len(text.encode())
    if size > settings.max_file_bytes:
        raise RefusedInput(
            f"{what} holds {size:,} bytes; a message may hold at most {settings.max_file_bytes:,}.",
            code="message_too_large",
            limit=settings.max_file_bytes,
        )
    return text.replace("\r\n", "\n")


def _check_role(role: Any) -> str:
    if role not in ROLES:
        raise RefusedInput(
            f"A message role is one of {', '.join(ROLES)}, not {str(role)[:40]!r}.",
            code="invalid_role",
        )
    return str(role)


def check_started_by(value: Any) -> dict[str, Any]:
    """What started a task: ``{"kind": ..., "by": ..., ...}`` with plain values (H3).

    Raises:
        RefusedInput: ``invalid_operation``.
    """
    if not isinstance(value, dict) or value.get("kind") not in TASK_KINDS:
        raise RefusedInput(
            f"started_by must be an object whose kind is one of {', '.join(TASK_KINDS)}.",
            code="invalid_operation",
        )
    for key, item in value.items():
        if not isinstance(key, str) or not (item is None or isinstance(item, str | int | float)):
            raise RefusedInput(
                "started_by holds only text, numbers and null.", code="invalid_operation"
            )
    if len(json.dumps(value)) > _MAX_STARTED_BY:
        raise RefusedInput(
            f"started_by is at most {_MAX_STARTED_BY} characters of JSON.",
            code="invalid_operation",
        )
    return dict(value)


def _check_level(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not (
        _LEVEL.match(value) if what == "thinking" else 0 < len(value) <= _MAX_NAME
    ):
        raise RefusedInput(f"{what} {str(value)[:40]!r} is not valid.", code="invalid_operation")
    check_control(value, what)
    return value


def fingerprint(time: float, role: str, author: str | None, text: str, occurrence: int = 0) -> str:
    """A message's identity when the caller gives none: what it says, who, when, and which
    occurrence of exactly that (so identical lines in one file stay distinct)."""
    raw = json.dumps([round(time, 6), role, author, text, occurrence], ensure_ascii=False)
    return "h:" + hashlib.sha256(raw.encode()).hexdigest()


#: The latest time a message, a task or a review may carry (year 3000): later is a mistake, and
#: past year 9999 dates cannot be computed.
LATEST_TIME = 32_503_680_000.0


def check_timestamp(value: Any, what: str = "time") -> float:
    """A time in seconds since the epoch: a finite number from 0 to :data:`LATEST_TIME`.

    Raises:
        RefusedInput: ``invalid_time``.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RefusedInput(f"{what} is a number of seconds since 1970.", code="invalid_time")
    if not 0 <= value <= LATEST_TIME:  # NaN fails this too
        raise RefusedInput(
            f"{what} must be between 0 (1970) and {LATEST_TIME:.0f} (the year 3000).",
            code="invalid_time",
        )
    return float(value)


def parse_time(value: Any, what: str = "time") -> float:
    """An ISO-8601 time as seconds since the epoch; a time without an offset is UTC.

    Raises:
        RefusedInput: ``invalid_time``.
    """
    if not isinstance(value, str):
        raise RefusedInput(f"{what} must be an ISO-8601 string.", code="invalid_time")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise RefusedInput(
            f"{what} {value[:40]!r} is not an ISO-8601 time (say 2024-05-08T13:56:00Z).",
            code="invalid_time",
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return check_timestamp(parsed.timestamp(), what)


# JSON Lines import (SPEC 15): parsed and checked entirely before anything is written.


@dataclass(frozen=True)
class ChannelRef:
    """A channel as an import line names it."""

    id: str
    kind: str
    name: str | None = None
    reports_to: ChannelRef | None = None


@dataclass(frozen=True)
class MessageRecord:
    """One message line of an import."""

    line: int
    conversation: str
    agent: str
    channel: ChannelRef
    author: str | None
    role: str
    text: str
    time: float
    id: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class CloseRecord:
    """A ``{"conversation": ID, "closed": true}`` line."""

    line: int
    conversation: str


_MESSAGE_KEYS = {"conversation", "agent", "channel", "author", "role", "text", "time"}
_OPTIONAL_KEYS = {"id", "title"}


def parse_jsonl(
    lines: Iterable[str], settings: Settings | None = None
) -> list[MessageRecord | CloseRecord]:
    """Parse and check every line of a JSON Lines import; blank lines are skipped.

    Raises:
        RefusedInput: the first bad line, with its number in the message and ``line``.
    """
    return parse_records(
        ((n, _decode_line(raw)) for n, raw in enumerate(lines, start=1) if raw.strip()), settings
    )


def parse_records(
    objects: Iterable[tuple[int, Any]], settings: Settings | None = None
) -> list[MessageRecord | CloseRecord]:
    """Check ``(line number, decoded JSON value)`` pairs, such as an importer produces.

    Raises:
        RefusedInput: the first bad record, with its number in the message and ``line``.
    """
    settings = settings or Settings()
    records: list[MessageRecord | CloseRecord] = []
    seen_ids: set[tuple[str, str]] = set()
    for number, obj in objects:
        try:
            if isinstance(obj, _BadLine):
                raise RefusedInput(f"not valid JSON ({obj.reason}).", code="invalid_import")
            record = _parse_object(obj, number, settings)
            if isinstance(record, MessageRecord) and record.id is not None:
                if (record.conversation, record.id) in seen_ids:
                    raise RefusedInput(
                        f"id {record.id!r} appears twice in conversation {record.conversation}.",
                        code="invalid_import",
                    )
                seen_ids.add((record.conversation, record.id))
        except ReverieError as exc:
            raise _at_line(exc, number) from None
        records.append(record)
    return records


def _at_line(exc: ReverieError, number: int) -> RefusedInput:
    code = exc.code if isinstance(exc, RefusedInput) else "invalid_import"
    details = {k: v for k, v in exc.details.items() if k != "line"}
    return RefusedInput(
        f"line {number}: {exc.message} Nothing was imported.", code=code, line=number, **details
    )


@dataclass(frozen=True)
class _BadLine:
    reason: str


def _decode_line(raw: str) -> Any:
    # Decoding errors are reported in order with the other checks, by parse_records.
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        return _BadLine(exc.msg)
    except RecursionError:
        return _BadLine("nested too deeply")


def _parse_object(obj: Any, number: int, settings: Settings) -> MessageRecord | CloseRecord:
    if not isinstance(obj, dict):
        raise RefusedInput("each line must be a JSON object.", code="invalid_import")
    conversation = check_id(obj.get("conversation"), "conversation")
    if "closed" in obj:
        if set(obj) != {"conversation", "closed"} or obj["closed"] is not True:
            raise RefusedInput(
                'a closing line is exactly {"conversation": ID, "closed": true}.',
                code="invalid_import",
            )
        return CloseRecord(number, conversation)
    missing = sorted(_MESSAGE_KEYS - set(obj) - {"author"})
    if missing:
        raise RefusedInput(f"missing {', '.join(missing)}.", code="invalid_import")
    unknown = sorted(set(obj) - _MESSAGE_KEYS - _OPTIONAL_KEYS)
    if unknown:
        raise RefusedInput(
            f"unknown field {', '.join(unknown)}; a message line has "
            f"{', '.join(sorted(_MESSAGE_KEYS | _OPTIONAL_KEYS))}.",
            code="invalid_import",
        )
    agent = obj["agent"]
    if not isinstance(agent, str) or not agent.strip():
        raise RefusedInput("agent must be an agent's name.", code="invalid_import")
    check_unicode(agent, "agent")
    message_id = obj.get("id")
    if message_id is not None and (
        not isinstance(message_id, str | int) or isinstance(message_id, bool) or message_id == ""
    ):
        raise RefusedInput("id must be a non-empty string or a number.", code="invalid_import")
    if isinstance(message_id, str):
        check_unicode(message_id, "id")
    return MessageRecord(
        line=number,
        conversation=conversation,
        agent=agent.strip(),
        channel=_parse_channel(obj["channel"], "channel"),
        author=_check_name(obj.get("author"), "author"),
        role=_check_role(obj["role"]),
        text=_check_text(obj["text"], settings),
        time=parse_time(obj["time"]),
        id=None if message_id is None else str(message_id),
        title=_check_name(obj.get("title"), "title"),
    )


def _parse_channel(value: Any, what: str, *, nested: bool = False) -> ChannelRef:
    if not isinstance(value, dict) or "kind" not in value or "id" not in value:
        raise RefusedInput(
            f'{what} must be an object such as {{"kind": "dm", "id": "D1"}}.',
            code="invalid_channel",
        )
    allowed = {"kind", "id", "name"} | (set() if nested else {"reports_to"})
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise RefusedInput(
            f"{what} has unknown field {', '.join(unknown)}.", code="invalid_channel"
        )
    reports_to = value.get("reports_to")
    return ChannelRef(
        id=check_id(value["id"], f"{what}.id"),
        kind=_check_kind(value["kind"]),
        name=_check_name(value.get("name"), f"{what}.name"),
        reports_to=None
        if reports_to is None
        else _parse_channel(reports_to, f"{what}.reports_to", nested=True),
    )


_CONVERSATION_COLUMNS = (
    "c.id, c.agent_id, c.channel_id, ch.kind, c.parent_id, c.title, c.created_at, "
    "c.updated_at, c.last_message_at, c.model, c.thinking, c.memory_mode, c.mode_reason, "
    "c.started_by, c.closed, c.deleted, c.message_count, c.text_chars, c.reviewed_upto"
)


class ConversationStore:
    """Channels, grants, conversations and messages of one state database.

    ``document`` builds the indexed fields of a message and ``weights`` weighs them in
    ranking (see :mod:`reverie.index.history`); both may be tuned, then :meth:`reindex`.
    """

    def __init__(
        self,
        state: SQLiteState,
        settings: Settings,
        *,
        document: history.DocumentBuilder = history.default_document,
        weights: tuple[float, float, float, float] = history.DEFAULT_WEIGHTS,
    ) -> None:
        self.state = state
        self.settings = settings
        self.document = document
        self.weights = weights
        if state.has_fts5 and not history.is_current(state.conn):
            self._upgrade_index()

    def _upgrade_index(self) -> None:
        """Build the FTS5 table if it is missing (a new home, or rows written by a build
        without FTS5) or older than this version, keeping its tokenizer."""
        with self.state.transaction() as conn:
            if not history.is_current(conn):  # another process may have just done it
                rows = list(self._doc_rows(conn))
                if rows:  # an upgraded home: say why this open takes longer, once
                    log.warning(
                        "Rebuilding the history search index of %d messages for this version "
                        "of Reverie (once; about 0.1 s per 1,000 messages).",
                        len(rows),
                    )
                history.rebuild(conn, rows, self.document)

    # channels and grants

    def ensure_channel(
        self,
        channel_id: str,
        kind: str,
        *,
        name: str | None = None,
        reports_to: str | None = None,
    ) -> Channel:
        """The channel ``channel_id``, created with ``kind`` if it is new.

        ``reports_to`` (automations only) names the chat its runs report to; pointing it at a
        group turns the automation's conversations off for good (O2).

        Raises:
            RefusedInput: bad id or kind, a kind other than the stored one
                (``channel_kind_mismatch``), or an unknown ``reports_to``.
        """
        with self.state.transaction() as conn:
            return self._ensure_channel(conn, channel_id, kind, name, reports_to)

    def _ensure_channel(
        self,
        conn: sqlite3.Connection,
        channel_id: str,
        kind: str,
        name: str | None,
        reports_to: str | None,
    ) -> Channel:
        check_id(channel_id, "channel")
        _check_kind(kind)
        _check_name(name, "channel name")
        existing = self._channel(conn, channel_id)
        if existing is not None:
            if existing.kind != kind:
                raise RefusedInput(
                    f"Channel {channel_id} is a {existing.kind}, not a {kind}; a channel keeps "
                    "its kind.",
                    code="channel_kind_mismatch",
                    channel=channel_id,
                )
            if reports_to is not None and reports_to != existing.reports_to:
                self._check_reports_to(conn, kind, reports_to)
                conn.execute(
                    "UPDATE channels SET reports_to = ? WHERE id = ?", (reports_to, channel_id)
                )
                changed = self._need_channel(conn, channel_id)
                if changed.answers_group:
                    # O2: the automation's runs now answer a group; what ran there before is
                    # off too, for good (pointing it elsewhere later changes nothing).
                    for (cid,) in conn.execute(
                        "SELECT id FROM conversations WHERE channel_id = ? UNION "
                        "SELECT conversation_id FROM conversation_links WHERE channel_id = ?",
                        (channel_id, channel_id),
                    ).fetchall():
                        self._switch_off(conn, cid, "automation_reports_to_group")
                return changed
            return existing
        if reports_to is not None:
            self._check_reports_to(conn, kind, reports_to)
        conn.execute(
            "INSERT INTO channels (id, kind, name, reports_to, created_at) VALUES (?, ?, ?, ?, ?)",
            (channel_id, kind, name, reports_to, _time.time()),
        )
        return self._need_channel(conn, channel_id)

    def _check_reports_to(self, conn: sqlite3.Connection, kind: str, reports_to: str) -> None:
        if kind != "automation":
            raise RefusedInput(
                "Only an automation reports to another chat.", code="invalid_channel"
            )
        if self._channel(conn, reports_to) is None:
            raise RefusedInput(
                f"Channel {reports_to} does not exist; create the chat an automation reports "
                "to first.",
                code="invalid_channel",
                channel=reports_to,
            )

    def _channel(self, conn: sqlite3.Connection, channel_id: str) -> Channel | None:
        row = conn.execute(
            "SELECT ch.id, ch.kind, ch.name, ch.reports_to, r.kind, ch.created_at "
            "FROM channels ch LEFT JOIN channels r ON r.id = ch.reports_to WHERE ch.id = ?",
            (channel_id,),
        ).fetchone()
        return Channel(*row) if row else None

    def _need_channel(self, conn: sqlite3.Connection, channel_id: str) -> Channel:
        found = self._channel(conn, channel_id)
        if found is None:
            raise NotFound(
                f"No channel {channel_id!r}: a channel exists once a conversation or a grant "
                "names it (a Slack channel is slack:C0123ABCD; `reverie grant AGENT` lists an "
                "agent's).",
                channel=channel_id,
            )
        return found

    def channel(self, channel_id: str) -> Channel:
        """One channel.

        Raises:
            NotFound: no such channel.
        """
        return self._need_channel(self.state.conn, channel_id)

    def channels(self, kind: str | None = None) -> list[Channel]:
        """All channels (of one kind), by id."""
        rows = self.state.conn.execute(
            "SELECT id FROM channels WHERE CAST(? AS TEXT) IS NULL OR kind = ? ORDER BY id",
            (kind, kind),
        ).fetchall()
        return [self.channel(r[0]) for r in rows]

    def set_grant(self, agent_id: str, channel_id: str, active: bool) -> Grant:
        """Admit an agent to a channel, or revoke its admission.

        Raises:
            NotFound: no such channel.
        """
        self.channel(channel_id)
        with self.state.transaction() as conn:
            conn.execute(
                "INSERT INTO grants (agent_id, channel_id, status, changed_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (agent_id, channel_id) DO UPDATE SET status = excluded.status, "
                "changed_at = excluded.changed_at",
                (agent_id, channel_id, "active" if active else "revoked", _time.time()),
            )
        return next(g for g in self.grants(agent_id) if g.channel_id == channel_id)

    def grants(self, agent_id: str) -> list[Grant]:
        """The agent's grants, active and revoked, by channel."""
        rows = self.state.conn.execute(
            "SELECT agent_id, channel_id, status, changed_at FROM grants WHERE agent_id = ? "
            "ORDER BY channel_id",
            (agent_id,),
        ).fetchall()
        return [Grant(*r) for r in rows]

    def channel_grants(self, channel_id: str) -> list[Grant]:
        """The grants held in a channel, active and revoked, by agent id."""
        rows = self.state.conn.execute(
            "SELECT agent_id, channel_id, status, changed_at FROM grants WHERE channel_id = ? "
            "ORDER BY agent_id",
            (channel_id,),
        ).fetchall()
        return [Grant(*r) for r in rows]

    def has_grant(self, agent_id: str, channel_id: str) -> bool:
        """Whether the agent holds an active grant for the channel."""
        row = self.state.conn.execute(
            "SELECT 1 FROM grants WHERE agent_id = ? AND channel_id = ? AND status = 'active'",
            (agent_id, channel_id),
        ).fetchone()
        return row is not None

    # conversations

    def get(self, conversation_id: str) -> Conversation:
        """A conversation, deleted or not, of any mode (callers decide what they may show).

        Raises:
            NotFound: no such conversation.
        """
        found = self._get(self.state.conn, conversation_id)
        if found is None:
            raise NotFound(f"No conversation {conversation_id!r}.", conversation=conversation_id)
        return found

    def _get(self, conn: sqlite3.Connection, conversation_id: str) -> Conversation | None:
        row = conn.execute(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c "
            "JOIN channels ch ON ch.id = c.channel_id WHERE c.id = ?",
            (conversation_id,),
        ).fetchone()
        if row is None:
            return None
        links = conn.execute(
            "SELECT channel_id FROM conversation_links WHERE conversation_id = ? "
            "ORDER BY channel_id",
            (conversation_id,),
        ).fetchall()
        return _conversation(row, tuple(r[0] for r in links))

    def _need(self, conn: sqlite3.Connection, conversation_id: str) -> Conversation:
        found = self._get(conn, conversation_id)
        if found is None:
            raise NotFound(f"No conversation {conversation_id!r}.", conversation=conversation_id)
        return found

    def _live(self, conn: sqlite3.Connection, conversation_id: str) -> Conversation:
        conv = self._need(conn, conversation_id)
        if conv.deleted:
            raise NotFound(
                f"Conversation {conversation_id} was deleted; nothing was changed.",
                code="conversation_deleted",
                conversation=conversation_id,
            )
        return conv

    def create(
        self,
        agent_id: str,
        channel_id: str,
        *,
        conversation_id: str | None = None,
        title: str = "",
        parent_id: str | None = None,
        model: str | None = None,
        thinking: str | None = None,
        started_by: dict[str, Any] | None = None,
        unclassified: bool = False,
        now: float | None = None,
    ) -> Conversation:
        """Start a conversation of ``agent_id`` in ``channel_id``; its mode follows O1/O2.

        ``unclassified`` leaves the mode unset, as for conversations from before modes
        existed; :meth:`classify` sets it.

        Raises:
            RefusedInput: a bad value, or the id is taken (``already_exists``).
            NotFound: the channel, or the parent (of this agent), does not exist.
        """
        with self.state.transaction() as conn:
            return self._create(
                conn,
                agent_id,
                self._need_channel(conn, channel_id),
                conversation_id=conversation_id,
                title=title,
                parent_id=parent_id,
                model=model,
                thinking=thinking,
                started_by=started_by,
                unclassified=unclassified,
                now=_time.time() if now is None else check_timestamp(now, "now"),
            )

    def _create(
        self,
        conn: sqlite3.Connection,
        agent_id: str,
        channel: Channel,
        *,
        conversation_id: str | None,
        title: str,
        parent_id: str | None,
        model: str | None,
        thinking: str | None,
        started_by: dict[str, Any] | None,
        unclassified: bool,
        now: float,
    ) -> Conversation:
        cid = check_id(conversation_id, "conversation") if conversation_id else _new_id()
        if self._get(conn, cid) is not None:
            raise RefusedInput(
                f"Conversation {cid} already exists.", code="already_exists", conversation=cid
            )
        title = (_check_name(title, "title") or "") if title else ""
        parent = None
        if parent_id is not None:
            parent = self._get(conn, parent_id)
            if parent is None or parent.agent_id != agent_id:
                raise NotFound(f"No conversation {parent_id!r}.", conversation=parent_id)
            if parent.deleted:
                raise NotFound(
                    f"Conversation {parent_id} was deleted.",
                    code="conversation_deleted",
                    conversation=parent_id,
                )
        mode, reason = _initial_mode(channel, parent, unclassified)
        conn.execute(
            "INSERT INTO conversations (id, agent_id, channel_id, parent_id, title, created_at, "
            "updated_at, model, thinking, memory_mode, mode_reason, started_by) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                cid,
                agent_id,
                channel.id,
                parent_id,
                title,
                now,
                now,
                _check_level(model, "model"),
                _check_level(thinking, "thinking"),
                mode,
                reason,
                None if started_by is None else json.dumps(check_started_by(started_by)),
            ),
        )
        return self._need(conn, cid)

    def append(
        self,
        conversation_id: str,
        role: str,
        text: str,
        *,
        author: str | None = None,
        channel_id: str | None = None,
        time: float | None = None,
        message_id: str | None = None,
        started_by: dict[str, Any] | None = None,
    ) -> Appended:
        """Add a message at the next position; the same message again is not added twice.

        A message is the same when it has the same ``message_id``, or (without one) the same
        time, role, author and text. A message from a group turns the conversation off for
        good (O2); a message from another chat links that chat. A user message starts a new
        task (``started_by``) unless ``started_by`` says otherwise. A closed conversation
        that receives a message is open again.

        Raises:
            RefusedInput: a bad role, text, author or started_by.
            NotFound: no such conversation or channel; ``conversation_deleted``.
        """
        with self.state.transaction() as conn:
            return self.append_in(
                conn,
                conversation_id,
                role,
                text,
                author=author,
                channel_id=channel_id,
                time=time,
                message_id=message_id,
                started_by=started_by,
            )

    def append_in(
        self,
        conn: sqlite3.Connection,
        conversation_id: str,
        role: str,
        text: str,
        *,
        author: str | None = None,
        channel_id: str | None = None,
        time: float | None = None,
        message_id: str | None = None,
        started_by: dict[str, Any] | None = None,
    ) -> Appended:
        """:meth:`append` inside the caller's transaction (a turn's answer commits with its
        outbox row and audit).

        Raises:
            RefusedInput, NotFound: as :meth:`append`.
        """
        role = _check_role(role)
        text = _check_text(text, self.settings)
        author = _check_name(author, "author")
        at = _time.time() if time is None else check_timestamp(time)
        key = f"id:{message_id}" if message_id is not None else fingerprint(at, role, author, text)
        conv = self._live(conn, conversation_id)
        channel = self._need_channel(conn, channel_id or conv.channel_id)
        return self._append(conn, conv, channel, role, text, author, at, key, started_by)

    def _append(
        self,
        conn: sqlite3.Connection,
        conv: Conversation,
        channel: Channel,
        role: str,
        text: str,
        author: str | None,
        at: float,
        key: str,
        started_by: dict[str, Any] | None,
    ) -> Appended:
        seen = conn.execute(
            "SELECT position FROM messages WHERE conversation_id = ? AND fingerprint = ?",
            (conv.id, key),
        ).fetchone()
        if seen is not None:
            return Appended(conv.id, int(seen[0]), False, conv.memory_mode)
        position = conv.message_count
        cur = conn.execute(
            "INSERT INTO messages (conversation_id, position, role, author, text, created_at, "
            "channel_id, fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (conv.id, position, role, author, text, at, channel.id, key),
        )
        message_id = int(cur.fetchone()[0])
        if started_by is None and role == "user":
            started_by = {"kind": "user_message", "by": author, "position": position}
        title = conv.title or (_title_of(text) if role == "user" else "")
        conn.execute(
            "UPDATE conversations SET message_count = message_count + 1, "
            "text_chars = text_chars + ?, last_message_at = MAX(COALESCE(last_message_at, ?), ?),"
            " updated_at = MAX(updated_at, ?), closed = 0, title = ?, "
            "started_by = COALESCE(?, started_by) WHERE id = ?",
            (
                0 if role == "tool" else len(text),
                at,
                at,
                at,
                title,
                None if started_by is None else json.dumps(check_started_by(started_by)),
                conv.id,
            ),
        )
        if channel.id != conv.channel_id:
            conn.execute(
                "INSERT OR IGNORE INTO conversation_links (conversation_id, channel_id) "
                "VALUES (?, ?)",
                (conv.id, channel.id),
            )
        mode = conv.memory_mode
        if channel.answers_group:
            # O2: one message from a group and the conversation is off for good.
            self._switch_off(conn, conv.id, "group_message")
            mode = "off"
        elif mode == "on":
            history.index_messages(
                conn,
                [
                    (
                        message_id,
                        conv.agent_id,
                        conv.id,
                        position,
                        history.MessageText(role, author, text, at),
                    )
                ],
                self.document,
            )
        return Appended(conv.id, position, True, mode)

    def _switch_off(self, conn: sqlite3.Connection, conversation_id: str, reason: str) -> None:
        """Turn a conversation and its sub-sessions off for good, and out of search (O2)."""
        family = [(conversation_id, reason)] + [
            (cid, "parent_off") for cid in self._descendants(conn, conversation_id)
        ]
        for cid, why in family:
            conn.execute(
                "UPDATE conversations SET memory_mode = 'off', mode_reason = ? "
                "WHERE id = ? AND (memory_mode IS NULL OR memory_mode = 'on')",
                (why, cid),
            )
            history.drop_conversation(conn, cid)

    def _descendants(self, conn: sqlite3.Connection, conversation_id: str) -> list[str]:
        rows = conn.execute(
            "WITH RECURSIVE sub (id) AS (SELECT id FROM conversations WHERE parent_id = ? "
            "UNION SELECT c.id FROM conversations c JOIN sub ON c.parent_id = sub.id) "
            "SELECT id FROM sub",
            (conversation_id,),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def link_chat(self, conversation_id: str, channel_id: str) -> Conversation:
        """Link a chat to the conversation (where its notices go); a group turns it off (O2).

        Raises:
            NotFound: no such conversation or channel; ``conversation_deleted``.
        """
        with self.state.transaction() as conn:
            conv = self._live(conn, conversation_id)
            channel = self._need_channel(conn, channel_id)
            if channel.id != conv.channel_id:
                conn.execute(
                    "INSERT OR IGNORE INTO conversation_links (conversation_id, channel_id) "
                    "VALUES (?, ?)",
                    (conv.id, channel.id),
                )
            if channel.answers_group:
                # Its answers could now reach a group: memory must not be in them.
                self._switch_off(conn, conv.id, "linked_group")
            return self._need(conn, conv.id)

    def classify(self, conversation_id: str) -> Conversation:
        """Give a conversation without a mode its mode: off if its last run could answer a
        group (its chat, a linked chat, or an off parent), else on (O2). A conversation that
        has a mode keeps it.

        Raises:
            NotFound: no such conversation.
        """
        with self.state.transaction() as conn:
            return self._classify(conn, self._need(conn, conversation_id))

    def _classify(self, conn: sqlite3.Connection, conv: Conversation) -> Conversation:
        if conv.memory_mode is not None:
            return conv
        parent_off = False
        if conv.parent_id is not None:
            parent = self._classify(conn, self._need(conn, conv.parent_id))
            parent_off = parent.memory_mode == "off"
        chats = [self._need_channel(conn, c) for c in (conv.channel_id, *conv.linked_chats)]
        if parent_off:
            self._switch_off(conn, conv.id, "parent_off")
        elif any(ch.answers_group for ch in chats):
            self._switch_off(conn, conv.id, "classified_group")
        else:
            conn.execute(
                "UPDATE conversations SET memory_mode = 'on', mode_reason = 'classified' "
                "WHERE id = ? AND memory_mode IS NULL",
                (conv.id,),
            )
            if not conv.deleted:
                history.index_messages(conn, self._doc_rows(conn, conv.id), self.document)
        return self._need(conn, conv.id)

    def _doc_rows(
        self, conn: sqlite3.Connection, conversation_id: str | None = None
    ) -> Iterator[history.Row]:
        """The rows the index should hold: all of them, or one conversation's."""
        sql = (
            "SELECT m.id, c.agent_id, m.conversation_id, m.position, m.role, m.author, m.text, "
            "m.created_at FROM messages m JOIN conversations c ON c.id = m.conversation_id "
            "WHERE m.role != 'tool' AND "
        )
        if conversation_id is None:
            rows = conn.execute(sql + "c.memory_mode = 'on' AND c.deleted = 0").fetchall()
        else:
            rows = conn.execute(sql + "c.id = ?", (conversation_id,)).fetchall()
        for mid, aid, cid, pos, role, author, text, at in rows:
            yield mid, aid, cid, pos, history.MessageText(role, author, text, at)

    def close(self, conversation_id: str) -> Conversation:
        """Mark the conversation closed: its tail is complete for review.

        Raises:
            NotFound: no such conversation; ``conversation_deleted``.
        """
        with self.state.transaction() as conn:
            self._live(conn, conversation_id)
            conn.execute("UPDATE conversations SET closed = 1 WHERE id = ?", (conversation_id,))
            return self._need(conn, conversation_id)

    def delete(self, conversation_id: str) -> Conversation:
        """Delete a conversation and its sub-sessions (T2): out of search, review and reads.

        Raises:
            NotFound: no such conversation.
        """
        with self.state.transaction() as conn:
            self._need(conn, conversation_id)
            for cid in (conversation_id, *self._descendants(conn, conversation_id)):
                conn.execute("UPDATE conversations SET deleted = 1 WHERE id = ?", (cid,))
                history.drop_conversation(conn, cid)
            return self._need(conn, conversation_id)

    def set_task(
        self,
        conversation_id: str,
        started_by: dict[str, Any],
        *,
        model: str | None = None,
        thinking: str | None = None,
    ) -> Conversation:
        """Record what started the current task, and its model and thinking level (H3).

        ``model=None`` means the agent's default model.

        Raises:
            RefusedInput: a bad value.  NotFound: no such conversation; ``conversation_deleted``.
        """
        started = json.dumps(check_started_by(started_by))
        model = _check_level(model, "model")
        thinking = _check_level(thinking, "thinking")
        with self.state.transaction() as conn:
            self._live(conn, conversation_id)
            conn.execute(
                "UPDATE conversations SET started_by = ?, model = ?, thinking = ?, "
                "updated_at = MAX(updated_at, ?) WHERE id = ?",
                (started, model, thinking, _time.time(), conversation_id),
            )
            return self._need(conn, conversation_id)

    def set_title(self, conversation_id: str, title: str) -> Conversation:
        """Rename a conversation.

        Raises:
            RefusedInput: a bad title.  NotFound: no such conversation; ``conversation_deleted``.
        """
        title = _check_name(title, "title") or ""
        with self.state.transaction() as conn:
            self._live(conn, conversation_id)
            conn.execute(
                "UPDATE conversations SET title = ? WHERE id = ?", (title, conversation_id)
            )
            return self._need(conn, conversation_id)

    def messages(
        self, conversation_id: str, start: int = 0, end: int | None = None
    ) -> Iterator[Message]:
        """The messages at positions ``start`` <= p < ``end``, in order (read lazily)."""
        cur = self.state.conn.execute(
            "SELECT position, role, author, text, created_at, channel_id FROM messages "
            "WHERE conversation_id = ? AND position >= ? AND position < ? ORDER BY position",
            (conversation_id, start, 2**62 if end is None else end),
        )
        for row in cur:
            yield Message(*row)

    def memory_on_conversations(
        self, agent_id: str, *, exclude: str | None = None, limit: int = 50
    ) -> list[Conversation]:
        """The agent's memory-on, not deleted conversations, most recently updated first."""
        return self.of_agent(agent_id, memory_on_only=True, exclude=exclude, limit=limit)

    def of_agent(
        self,
        agent_id: str,
        *,
        memory_on_only: bool = False,
        exclude: str | None = None,
        limit: int = 50,
    ) -> list[Conversation]:
        """The agent's not deleted conversations (memory-on ones only, when asked), most
        recently updated first."""
        mode = "AND memory_mode = 'on' " if memory_on_only else ""
        rows = self.state.conn.execute(
            f"SELECT id FROM conversations WHERE agent_id = ? {mode}"
            "AND deleted = 0 AND id != ? ORDER BY updated_at DESC, id LIMIT ?",
            (agent_id, exclude or "", limit),
        ).fetchall()
        return [self.get(r[0]) for r in rows]

    # review bookkeeping (R1): which ranges are complete and not yet reviewed

    def tail_complete(self, conv: Conversation, now: float | None = None) -> bool:
        """Whether the conversation's tail is complete: closed, or idle for the idle window."""
        now = _time.time() if now is None else now
        return conv.closed or (
            conv.last_message_at is not None
            and conv.last_message_at <= now - self.settings.idle_window_seconds
        )

    def pending_ranges(self, agent_id: str, now: float | None = None) -> list[tuple[str, int, int]]:
        """``(conversation, start, end)`` of each complete, unreviewed tail of the agent's
        memory-on, not deleted conversations, the longest-idle first (R1, O3)."""
        now = _time.time() if now is None else now
        rows = self.state.conn.execute(
            "SELECT id, reviewed_upto, message_count FROM conversations "
            "WHERE agent_id = ? AND memory_mode = 'on' AND deleted = 0 "
            "AND message_count > reviewed_upto AND (closed = 1 OR last_message_at <= ?) "
            "ORDER BY last_message_at, id",
            (agent_id, now - self.settings.idle_window_seconds),
        ).fetchall()
        return [(str(c), int(s), int(e)) for c, s, e in rows]

    def mark_reviewed(self, conversation_id: str, end: int) -> Conversation:
        """Record that review has read the messages before ``end``; it never moves back.

        Raises:
            RefusedInput: ``invalid_range`` unless 0 <= end <= the number of messages.
            NotFound: no such conversation.
        """
        with self.state.transaction() as conn:
            return self.mark_reviewed_in(conn, conversation_id, end)

    def mark_reviewed_in(self, conn: Any, conversation_id: str, end: int) -> Conversation:
        """:meth:`mark_reviewed` inside the caller's transaction (a review batch marks its
        ranges and records itself in one)."""
        conv = self._need(conn, conversation_id)
        if not isinstance(end, int) or not 0 <= end <= conv.message_count:
            raise RefusedInput(
                f"end must be between 0 and {conv.message_count} (the number of messages).",
                code="invalid_range",
                end=end,
            )
        conn.execute(
            "UPDATE conversations SET reviewed_upto = MAX(reviewed_upto, ?) WHERE id = ?",
            (end, conversation_id),
        )
        return self._need(conn, conversation_id)

    # history search (H1, O3)

    def search(self, agent_id: str, query: str, limit: int = 8) -> list[history.HistoryHit]:
        """Ranked search over the agent's memory-on, not deleted conversations.

        Raises:
            RefusedInput: ``invalid_limit`` unless 1 <= limit <= 20.
        """
        if not isinstance(limit, int) or not 1 <= limit <= 20:
            raise RefusedInput("limit must be between 1 and 20.", code="invalid_limit", limit=limit)
        return history.search(
            self.state.conn,
            agent_id,
            query,
            limit,
            use_fts=self.state.text_search and self.settings.search_backend == "fts5",
            weights=self.weights,
            scan_max_rows=self.settings.scan_max_lines,
        )

    def reindex(self, tokenize: str | None = None) -> int:
        """Rebuild the history rows with :attr:`document` (and the tokenizer, if given).

        Returns the number of indexed messages.

        Raises:
            RefusedInput: ``invalid_tokenizer``.
        """
        with self.state.transaction() as conn:
            return history.rebuild(
                conn,
                list(self._doc_rows(conn)),
                self.document,
                tokenize=tokenize,
                has_fts5=self.state.has_fts5,
            )

    def rebuild_index(self, damaged: list[str]) -> int:
        """Drop the history index (``damaged`` names its damaged tables) and remake it from the
        messages, keeping its tokenizer. Returns the number of indexed messages.

        Raises:
            StorageFault: the state database cannot be written.
        """
        with self.state.transaction() as conn:
            tokenizer = history.table_tokenizer(conn) if self.state.has_fts5 else None
            self.state.drop_tables(conn, history.TABLES, damaged)
            history.create_docs_table(conn)
            return history.rebuild(
                conn,
                list(self._doc_rows(conn)),
                self.document,
                tokenize=tokenizer or history.TOKENIZE,
                has_fts5=self.state.has_fts5,
            )

    def history_rows(self) -> Counter[tuple[str, int]]:
        """The indexed ``(conversation, position)`` rows, to compare the index with the rules."""
        rows = self.state.conn.execute(
            "SELECT conversation_id, position FROM history_docs"
        ).fetchall()
        return Counter((str(c), int(p)) for c, p in rows)

    # import (SPEC 15)

    def import_records(
        self,
        records: list[MessageRecord | CloseRecord],
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportSummary:
        """Apply parsed import lines in one transaction: all of them, or none.

        Agents, channels and conversations are created as needed; a message already present
        (same ``id``, or same time, role, author and text at the same occurrence) is skipped,
        so importing a file again adds nothing. The repositories of new agents' memories are
        the caller's to create (``new_memories``).

        Raises:
            RefusedInput: a line conflicts with stored data (another agent's conversation, a
                channel of another kind, a deleted conversation, closing an unknown one); the
                message names the line.
        """
        touched: set[str] = set()
        added = skipped = closed = 0
        new_memories: list[str] = []
        agents: dict[str, str] = {}
        occurrences: Counter[tuple[str, str]] = Counter()
        with self.state.transaction() as conn:
            for done, rec in enumerate(records, start=1):
                try:
                    if isinstance(rec, CloseRecord):
                        conv = self._live(conn, rec.conversation)
                        if not conv.closed:
                            conn.execute(
                                "UPDATE conversations SET closed = 1 WHERE id = ?", (conv.id,)
                            )
                            closed += 1
                            touched.add(conv.id)
                    else:
                        out = self._import_message(conn, rec, agents, occurrences, new_memories)
                        added += out.added
                        skipped += not out.added
                        if out.added:
                            touched.add(out.conversation_id)
                except ReverieError as exc:
                    raise _at_line(exc, rec.line) from None
                if progress is not None:
                    progress(done, len(records))
            if added and self.state.has_fts5:
                history.optimize(conn)
        return ImportSummary(len(touched), added, closed, skipped, new_memories)

    def _import_message(
        self,
        conn: sqlite3.Connection,
        rec: MessageRecord,
        agents: dict[str, str],
        occurrences: Counter[tuple[str, str]],
        new_memories: list[str],
    ) -> Appended:
        agent_id = agents.get(rec.agent)
        if agent_id is None:
            agent_id, memory_id = self._import_agent(conn, rec.agent)
            agents[rec.agent] = agent_id
            if memory_id is not None:
                new_memories.append(memory_id)
        channel = self._import_channel(conn, rec.channel)
        conv = self._get(conn, rec.conversation)
        if conv is None:
            conv = self._create(
                conn,
                agent_id,
                channel,
                conversation_id=rec.conversation,
                title=rec.title or "",
                parent_id=None,
                model=None,
                thinking=None,
                started_by=None,
                unclassified=False,
                now=rec.time,
            )
        elif conv.agent_id != agent_id:
            raise RefusedInput(
                f"conversation {conv.id} belongs to another agent.", code="invalid_import"
            )
        elif conv.deleted:
            raise RefusedInput(f"conversation {conv.id} was deleted.", code="conversation_deleted")
        if rec.id is not None:
            key = f"id:{rec.id}"
        else:
            # The n-th identical line of this file is the n-th identical message: a line said
            # twice stays two messages, and the same file again matches them one to one.
            base = fingerprint(rec.time, rec.role, rec.author, rec.text)
            key = fingerprint(
                rec.time, rec.role, rec.author, rec.text, occurrences[(conv.id, base)]
            )
            occurrences[(conv.id, base)] += 1
        return self._append(
            conn, conv, channel, rec.role, rec.text, rec.author, rec.time, key, None
        )

    def _import_agent(self, conn: sqlite3.Connection, name: str) -> tuple[str, str | None]:
        row = conn.execute(
            f"SELECT id FROM agents WHERE {column_of(name)} = ?",
            (name,),
        ).fetchone()
        if row is not None:
            return str(row[0]), None
        agent_id, memory_id = self.state.insert_agent(conn, name)
        return agent_id, memory_id

    def _import_channel(self, conn: sqlite3.Connection, ref: ChannelRef) -> Channel:
        reports_to = None
        if ref.reports_to is not None:
            reports_to = self._import_channel(conn, ref.reports_to).id
        return self._ensure_channel(conn, ref.id, ref.kind, ref.name, reports_to)


def _initial_mode(
    channel: Channel, parent: Conversation | None, unclassified: bool
) -> tuple[str | None, str | None]:
    """The mode a conversation starts with (O1, O2), and why."""
    if unclassified:
        return None, None
    if channel.kind == "group":
        return "off", "started_in_group"
    if channel.answers_group:
        return "off", "automation_reports_to_group"
    if parent is not None:
        if parent.memory_mode == "off":
            return "off", "parent_off"
        if parent.memory_mode is None:
            return None, None  # classified with its parent
    return "on", channel.kind


def _conversation(row: Any, links: tuple[str, ...]) -> Conversation:
    return Conversation(
        id=row[0],
        agent_id=row[1],
        channel_id=row[2],
        channel_kind=row[3],
        parent_id=row[4],
        title=row[5],
        created_at=row[6],
        updated_at=row[7],
        last_message_at=row[8],
        model=row[9],
        thinking=row[10],
        memory_mode=row[11],
        mode_reason=row[12],
        started_by=json.loads(row[13]) if row[13] else None,
        linked_chats=links,
        closed=bool(row[14]),
        deleted=bool(row[15]),
        message_count=row[16],
        text_chars=row[17],
        reviewed_upto=row[18],
    )


def _new_id() -> str:
    return "cv_" + uuid.uuid4().hex[:12]


def _title_of(text: str) -> str:
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    return first if len(first) <= 80 else first[:79] + "…"
