"""The session-history tools of an agent (SPEC H1-H3), as plain functions over the store.

``context_sessions`` lists the agent's earlier memory-on conversations, ``context_read`` reads
a range of one, a page at a time, ``context_search`` finds messages in them, and
``session_get`` describes the current conversation. The same refusals hold on every surface:

* a conversation that does not exist, or belongs to another agent: ``not_found`` (the same
  answer for both, so an agent cannot learn that another agent's conversation exists);
* a deleted conversation: ``conversation_deleted``;
* a memory-off conversation, as the target or as the conversation asking: ``memory_off``,
  and nothing is loaded (O3, M4);
* a range outside the conversation: ``invalid_range``.

Every source that review writes, ``conv#start-end``, is a range that :func:`context_read`
opens, as long as the conversation stays memory-on and is not deleted.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from reverie.errors import NotFound, PermissionDenied, RefusedInput
from reverie.index.history import HistoryHit
from reverie.store.conversations import Conversation, ConversationStore

__all__ = [
    "DEFAULT_PAGE_CHARS",
    "ReadMessage",
    "ReadPage",
    "SessionDetails",
    "SessionInfo",
    "context_read",
    "context_search",
    "context_sessions",
    "require_memory_on",
    "session_get",
]

#: A page of ``context_read`` holds at most this many characters of message text.
DEFAULT_PAGE_CHARS = 8000
MIN_PAGE_CHARS = 100
MAX_PAGE_CHARS = 100_000
MAX_SESSIONS = 200


@dataclass(frozen=True)
class SessionInfo:
    """One earlier conversation, as ``context_sessions`` lists it (H1)."""

    id: str
    title: str
    created_at: float
    updated_at: float
    #: Number of messages: positions run from 0 to ``messages`` (excluded).
    messages: int
    #: Characters of user and assistant text: what a read without tool logs returns.
    chars: int


@dataclass(frozen=True)
class ReadMessage:
    """One message, or the part of it that fits the page."""

    position: int
    role: str
    author: str | None
    text: str
    time: float
    channel: str | None
    #: Where ``text`` starts inside the message (more than 0 on a continued message).
    offset: int = 0
    #: The message goes on in the next page.
    continues: bool = False


@dataclass(frozen=True)
class ReadPage:
    """A page of ``context_read`` (H2)."""

    conversation: str
    #: The position this page starts at, and the end of the range read (excluded).
    start: int
    end: int
    messages: list[ReadMessage]
    #: Pass it back to continue exactly where this page stopped; ``None`` at the end.
    next_cursor: str | None
    #: Tool messages in this page's span that were left out (``include_tools`` shows them).
    tools_omitted: int


@dataclass(frozen=True)
class SessionDetails:
    """The current conversation (H3): the fields of SPEC 1 and what started its task."""

    id: str
    title: str
    agent: str
    channel: str
    channel_kind: str
    linked_chats: list[str]
    parent: str | None
    created_at: float
    updated_at: float
    model: str | None
    #: ``"conversation"`` when the conversation chose the model, else ``"agent_default"``.
    model_source: str
    thinking: str | None
    memory_mode: str | None
    mode_reason: str | None
    started_by: dict[str, Any] | None
    closed: bool
    deleted: bool
    messages: int
    chars: int
    #: Fields left out because the conversation is not memory-on: its title and the free text
    #: of what started its task are built from what was said there (O3).
    withheld: list[str] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The details as JSON surfaces print them."""
        return dict(self.__dict__)


def _owned(store: ConversationStore, agent_id: str, conversation_id: str) -> Conversation:
    """The agent's conversation; another agent's is answered exactly like a missing one."""
    try:
        conv = store.get(conversation_id)
    except NotFound:
        conv = None
    if conv is None or conv.agent_id != agent_id:
        raise NotFound(
            f"No conversation {conversation_id!r} for this agent; list the agent's sessions to "
            "see the ones that can be read.",
            conversation=conversation_id,
        )
    return conv


def require_memory_on(
    store: ConversationStore, agent_id: str, conversation_id: str, *, asking: bool = False
) -> Conversation:
    """The agent's conversation, if memory may be read into or out of it (O3, M4).

    ``asking`` is True for the conversation that calls a tool, False for the one it reads.

    Raises:
        NotFound: missing or another agent's (``not_found``); deleted
            (``conversation_deleted``).
        PermissionDenied: ``memory_off``; nothing was loaded.
    """
    conv = _owned(store, agent_id, conversation_id)
    if conv.deleted:
        raise NotFound(
            f"Conversation {conversation_id} was deleted; it cannot be read. List the agent's "
            "sessions to see the ones that can be read.",
            code="conversation_deleted",
            conversation=conversation_id,
        )
    if conv.memory_mode != "on":
        why = (
            "its memory mode is not classified yet (its next run classifies it)"
            if conv.memory_mode is None
            else "it is or was part of a group chat"
        )
        if asking:
            message = (
                f"Memory is off in this conversation ({why}): memory and the history of "
                "other conversations are not available here. Nothing was loaded; answer "
                "from this conversation alone."
            )
        else:
            message = (
                f"Conversation {conversation_id} is memory-off ({why}): its history stays "
                "out of other conversations. Nothing was loaded."
            )
        raise PermissionDenied(message, code="memory_off", conversation=conversation_id)
    return conv


def context_sessions(
    store: ConversationStore,
    agent_id: str,
    from_conversation: str | None = None,
    limit: int = 50,
) -> list[SessionInfo]:
    """The agent's earlier memory-on, not deleted conversations, newest first (H1).

    ``from_conversation``, the conversation asking, is left out of the list.

    Raises:
        RefusedInput: ``invalid_limit`` unless 1 <= limit <= 200.
        PermissionDenied: ``memory_off`` when asked from a memory-off conversation.
        NotFound: ``from_conversation`` is not this agent's, or was deleted.
    """
    if from_conversation is not None:
        require_memory_on(store, agent_id, from_conversation, asking=True)
    if not isinstance(limit, int) or not 1 <= limit <= MAX_SESSIONS:
        raise RefusedInput(
            f"limit must be between 1 and {MAX_SESSIONS}.", code="invalid_limit", limit=limit
        )
    return [
        SessionInfo(c.id, c.title, c.created_at, c.updated_at, c.message_count, c.text_chars)
        for c in store.memory_on_conversations(agent_id, exclude=from_conversation, limit=limit)
    ]


def context_read(
    store: ConversationStore,
    agent_id: str,
    session: str,
    start: int | None = None,
    end: int | None = None,
    *,
    include_tools: bool = False,
    cursor: str | None = None,
    max_chars: int = DEFAULT_PAGE_CHARS,
    from_conversation: str | None = None,
) -> ReadPage:
    """The messages at positions ``start`` <= p < ``end`` of one conversation (H2).

    The default range is the whole conversation. Tool logs are left out unless
    ``include_tools``. A page holds at most ``max_chars`` characters of text; ``next_cursor``
    continues exactly where it stopped, inside a long message if need be. A cursor carries
    its range and ``include_tools``: pass it with ``session`` alone.

    Raises:
        NotFound: missing or another agent's (``not_found``); ``conversation_deleted``.
        PermissionDenied: ``memory_off`` (this conversation, or the one asking).
        RefusedInput: ``invalid_range``, ``invalid_cursor``, ``invalid_limit``.
    """
    if from_conversation is not None:
        require_memory_on(store, agent_id, from_conversation, asking=True)
    conv = require_memory_on(store, agent_id, session)
    if not isinstance(max_chars, int) or not MIN_PAGE_CHARS <= max_chars <= MAX_PAGE_CHARS:
        raise RefusedInput(
            f"max_chars must be between {MIN_PAGE_CHARS} and {MAX_PAGE_CHARS}.",
            code="invalid_limit",
            max_chars=max_chars,
        )
    offset = 0
    if cursor is not None:
        at, offset, cursor_end, include_tools = _decode(cursor, conv.id)
        if start is not None or (end is not None and end != cursor_end):
            raise RefusedInput(
                "A cursor continues the range it came from: pass it without start and end.",
                code="invalid_cursor",
            )
        start, end = at, cursor_end
    start = 0 if start is None else start
    end = conv.message_count if end is None else end
    if not (
        isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= conv.message_count
    ):
        raise RefusedInput(
            f"Conversation {conv.id} has {conv.message_count} messages: read a range with "
            f"0 <= start <= end <= {conv.message_count} (start included, end excluded).",
            code="invalid_range",
            start=start,
            end=end,
            messages=conv.message_count,
        )
    page: list[ReadMessage] = []
    budget = max_chars
    omitted = 0
    next_cursor = None
    for msg in store.messages(conv.id, start, end):
        if (
            offset
            and msg.position == start
            and (offset >= len(msg.text) or (msg.role == "tool" and not include_tools))
        ):
            # A cursor stops inside a message it showed the first part of: never at or past
            # its end, never inside one it leaves out.
            raise _invalid_cursor()
        if msg.role == "tool" and not include_tools:
            omitted += 1
            continue
        skip = offset if msg.position == start else 0
        rest = msg.text[skip:]
        if len(rest) <= budget:
            page.append(
                ReadMessage(
                    msg.position, msg.role, msg.author, rest, msg.time, msg.channel_id, skip
                )
            )
            budget -= len(rest)
            continue
        if budget == 0 or (page and len(rest) <= max_chars):
            # It fits whole on the next page: keep a message in one piece where it can be.
            next_cursor = _encode(conv.id, msg.position, skip, end, include_tools)
            break
        page.append(
            ReadMessage(
                msg.position,
                msg.role,
                msg.author,
                rest[:budget],
                msg.time,
                msg.channel_id,
                skip,
                True,
            )
        )
        next_cursor = _encode(conv.id, msg.position, skip + budget, end, include_tools)
        break
    return ReadPage(conv.id, start, end, page, next_cursor, omitted)


def context_search(
    store: ConversationStore,
    agent_id: str,
    query: str,
    limit: int = 8,
    from_conversation: str | None = None,
) -> list[HistoryHit]:
    """Ranked search over the agent's memory-on conversations; each hit opens with
    ``context_read(hit.conversation, hit.start, hit.end)``.

    Raises:
        RefusedInput: ``invalid_limit`` unless 1 <= limit <= 20.
        PermissionDenied: ``memory_off`` when asked from a memory-off conversation.
        NotFound: ``from_conversation`` is not this agent's, or was deleted.
    """
    if from_conversation is not None:
        require_memory_on(store, agent_id, from_conversation, asking=True)
    return store.search(agent_id, query, limit)


def session_get(
    store: ConversationStore, conversation_id: str, agent_id: str | None = None
) -> SessionDetails:
    """The conversation's details and what started its current task (H3).

    It describes the conversation itself, so it answers in memory-off conversations too, but
    gives nothing said there (O3): the title and the free text of ``started_by`` (all but its
    ``kind`` and ``by``) are withheld, and ``withheld`` names them.

    Raises:
        NotFound: missing, or not ``agent_id``'s when that is given.
    """
    conv = (
        store.get(conversation_id) if agent_id is None else _owned(store, agent_id, conversation_id)
    )
    agent = store.state.get_agent(conv.agent_id)
    title, started_by, withheld = conv.title, conv.started_by, []
    if not conv.memory_on:
        if title:
            title, withheld = "", ["title"]
        if started_by and set(started_by) - {"kind", "by"}:
            started_by = {k: v for k, v in started_by.items() if k in ("kind", "by")}
            withheld.append("started_by")
    return SessionDetails(
        id=conv.id,
        title=title,
        agent=agent.name,
        channel=conv.channel_id,
        channel_kind=conv.channel_kind,
        linked_chats=list(conv.linked_chats),
        parent=conv.parent_id,
        created_at=conv.created_at,
        updated_at=conv.updated_at,
        model=conv.model or agent.default_model,
        model_source="conversation" if conv.model else "agent_default",
        thinking=conv.thinking,
        memory_mode=conv.memory_mode,
        mode_reason=conv.mode_reason,
        started_by=started_by,
        closed=conv.closed,
        deleted=conv.deleted,
        messages=conv.message_count,
        chars=conv.text_chars,
        withheld=withheld,
    )


def _encode(conversation: str, position: int, offset: int, end: int, tools: bool) -> str:
    raw = json.dumps([1, conversation, position, offset, end, int(tools)], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode(cursor: str, conversation: str) -> tuple[int, int, int, bool]:
    """The position, offset, end and ``include_tools`` of a cursor of ``conversation``.

    Only a cursor exactly as :func:`_encode` writes it is taken: whole numbers that are not
    booleans, a flag that is 0 or 1, a position before the end. Whether the offset falls
    inside its message is for :func:`context_read`, which reads the message.

    Raises:
        RefusedInput: ``invalid_cursor``.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        fields = json.loads(raw)
        if not isinstance(fields, list) or len(fields) != 6:
            raise ValueError(fields)
        version, conv, position, offset, end, tools = fields
        if not all(type(v) is int for v in (version, position, offset, end, tools)):
            raise ValueError(fields)  # a float, a string, a boolean (which is an int)
        if version != 1 or conv != conversation or tools not in (0, 1):
            raise ValueError(fields)
        if not 0 <= position < end or offset < 0:
            raise ValueError(fields)
        # Anything else that decodes to the same fields (spaces, junk base64 skips) is not
        # a cursor this module wrote.
        if _encode(conv, position, offset, end, bool(tools)) != cursor:
            raise ValueError(cursor)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError, RecursionError):
        raise _invalid_cursor() from None
    return position, offset, end, bool(tools)


def _invalid_cursor() -> RefusedInput:
    return RefusedInput(
        "This cursor did not come from a read of this conversation; read it again without a "
        "cursor.",
        code="invalid_cursor",
    )
