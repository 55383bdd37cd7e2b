"""The Python API: one facade that every surface (CLI, HTTP, MCP, Slack) calls.

A surface parses its input, calls one method here, and formats the answer; rules (limits,
validation, permissions) live below this facade, so every path gets them. Every method passes
:mod:`reverie._guard` on its way in and out: text arguments must be Unicode, and nothing but a
:class:`reverie.errors.ReverieError` comes out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from . import doctor
from ._guard import guarded
from .access import Actor
from .config import Settings
from .core import validation
from .core.chat import ChatCommand, check_limits, remember_body, update_body
from .core.permissions import may_replace_instructions, require_chat_write, require_edit
from .errors import NotFound, PermissionDenied, RefusedInput, RevisionConflict, StorageFault
from .index import fts, history
from .index.fts import SearchHit
from .index.history import HistoryHit
from .llm.chat import ChatProvider
from .review.runner import AgentReport, Progress
from .review.schedule import run_review
from .runtime import context
from .runtime.delivery import notify_targets
from .runtime.run import EventSink, TurnResult, run_turn
from .runtime.tools import Registry, Tool, default_registry
from .store import moving
from .store.conversations import (
    Appended,
    Channel,
    Conversation,
    ConversationStore,
    Grant,
    ImportSummary,
    check_timestamp,
    parse_jsonl,
    parse_records,
)
from .store.dbmemories import DatabaseMemoryStore
from .store.faults import ENVIRONMENT
from .store.instructions import Approval, Instructions, InstructionStore
from .store.memories import CALLER_KEYS, MemoryFile, MemoryStore, WriteOutcome
from .store.outbox import Delivery, Outbox
from .store.postgres import PostgresState, is_postgres_url
from .store.reviews import BatchRecord, ReviewLog
from .store.souls import SoulDraft, SoulReceipt, SoulStore, SoulVersion
from .store.state import DB_NAME, Agent, Member, RevisionRecord, SQLiteState
from .store.tokens import AdminSession, TokenInfo, TokenStore
from .store.turns import TurnLog, TurnRecord, Unanswered

__all__ = ["Reverie"]


log = logging.getLogger(__name__)


#: Writers whose keys Reverie makes itself: a turn's tool call (``<turn>:<call id>``,
#: ``runtime/tools.py``) and a review batch (``review:<hash>``, ``review/runner.py``).
_OWN_KEYS = frozenset({"agent", "review"})


def _stored_key(key: Any, writer: str) -> Any:
    """W7: the key a write through :meth:`Reverie.memory_apply` is stored under. A key a
    caller gives (HTTP's ``Idempotency-Key``, MCP's ``idempotency_key``, the CLI's ``--key``,
    a Python caller's ``key=``) goes under :data:`CALLER_KEYS`, a namespace no key Reverie
    makes starts with (an approved bundle's ``approval:<id>``, a chat command's
    ``slack:<event id>``, a turn's ``<turn>:<call id>``, ``review:<hash>``): a caller can
    neither answer nor block those writes with a key of theirs, and the same key from the
    caller again still finds its first write. Keys are stored hashed and no message repeats
    one, so a caller only ever sees the key they sent. A key a caller stored before this
    namespace came (raw) still answers that caller (``store.memories._legacy_hash``)."""
    if not isinstance(key, str) or not key or writer in _OWN_KEYS:
        return key
    return CALLER_KEYS + key


def _derived(table: str) -> str | None:
    """Which search index a table belongs to (``memory``, ``history``), or ``None`` for the
    tables that hold the truth of what is not in git."""
    for family, tables in (("memory", fts.TABLES), ("history", history.TABLES)):
        if any(table == t or table.startswith(f"{t}_") for t in tables):
            return family
    return None


@guarded
class Reverie:
    """A Reverie data directory (the embedded default: SQLite and git under ``home``).

    ``Reverie(home)`` opens an existing home; ``Reverie(home, create=True)`` also creates it.
    """

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        create: bool = False,
        settings: Settings | None = None,
    ) -> None:
        self.settings = settings or Settings.load(home)
        self.home = self.settings.home
        url = self.settings.database_url
        self.state: SQLiteState
        self.memories: MemoryStore
        if url:  # the database is the home; the folder holds nothing then
            self.state = PostgresState(url, durable=self.settings.durable)
            self.memories = DatabaseMemoryStore(self.state, self.home, self.settings)
        elif not (self.home / DB_NAME).exists():
            if not create:
                raise NotFound(
                    f"No Reverie home at {self.home}; create it with "
                    f"Reverie({str(self.home)!r}, create=True), or open an existing one.",
                    code="home_not_found",
                    home=str(self.home),
                )
            self.home.mkdir(parents=True, exist_ok=True)
        if not url:
            self.state = SQLiteState(self.home / DB_NAME, durable=self.settings.durable)
            self.memories = MemoryStore(self.state, self.home, self.settings)
        self.conversations = ConversationStore(self.state, self.settings)
        self.souls = SoulStore(self.state, self.settings)
        self.instructions = InstructionStore(self.state, self.settings)
        self.outbox = Outbox(self.state)
        self.turns = TurnLog(self.state)
        self.tokens = TokenStore(self.state)
        #: The agent tools every turn, MCP and HTTP offer (host tools join per turn).
        self.tools: Registry = default_registry()
        # W8: a half-applied batch is discarded on the next open. After a crash the index is
        # checked too, and rebuilt if the crash (or anything else) damaged it; a memory whose
        # recovery still cannot finish answers its fault when used, and stops nothing else.
        found = self.memories.recover_all()
        #: The memories a crash had left mid-write, recovered as the home opened (the fault of
        #: those whose recovery could not finish): what ``reverie doctor`` reports.
        self.recovered = dict(found)
        if found and self.state.degraded is None:
            try:
                if self._repair_index():
                    found = self.memories.recover_all()
            except StorageFault as exc:
                log.warning("%s", exc.message)
        for memory_id, fault in found.items():
            if fault is not None and fault.code not in ENVIRONMENT:
                log.warning(
                    "Agent %s: its memory could not be recovered (%s). The other agents are "
                    "not affected; `reverie doctor %s` checks and repairs it.",
                    self.state.agent_of_memory(memory_id),
                    fault.message,
                    self.state.agent_of_memory(memory_id),
                )
        self._remove_deleted_memories()

    def close(self) -> None:
        """Release this thread's database connection."""
        self.state.close()

    def __enter__(self) -> Reverie:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # agents

    def create_agent(
        self,
        name: str,
        *,
        creator: str | None = None,
        edit_policy: str = "editors",
        memory_writers: str = "review_only",
        memory_framing: str = "guide",
        soul: str | None = None,
    ) -> Agent:
        """Create an agent with an empty memory at revision 0, and ``soul`` as its soul's
        version 1 when given (version 0, empty, otherwise).

        Raises:
            RefusedInput: the name is invalid or taken, a policy is unknown, or the soul
                breaks a content rule.
            NotFound: ``creator`` is no member (a member added later under that name would
                otherwise get the creator's rights).
        """
        if creator is not None:
            creator = self.state.get_member(creator).name
        with self.state.transaction() as conn:
            agent_id, memory_id = self.state.insert_agent(
                conn,
                name,
                creator=creator,
                edit_policy=edit_policy,
                memory_writers=memory_writers,
                memory_framing=memory_framing,
            )
            if soul:
                self.souls.publish_initial(conn, agent_id, soul)
        self.memories.create(memory_id)
        return self.state.get_agent(agent_id)

    def configure_agent(
        self,
        name: str,
        *,
        edit_policy: str | None = None,
        memory_writers: str | None = None,
        memory_framing: str | None = None,
        default_model: str | None = None,
    ) -> Agent:
        """Change an agent's settings (``None`` keeps one; ``default_model=""`` clears it).

        Raises:
            RefusedInput: an unknown value.  NotFound: no such agent.
        """
        return self.state.configure_agent(
            self.state.get_agent(name).id,
            edit_policy=edit_policy,
            memory_writers=memory_writers,
            memory_framing=memory_framing,
            default_model=default_model,
        )

    def agent(self, name: str) -> Agent:
        """The agent named ``name``.

        Raises:
            NotFound: no such agent.
        """
        return self.state.get_agent(name)

    def agents(self) -> list[Agent]:
        """Every agent, by name."""
        return self.state.list_agents()

    def _memory(self, agent: str) -> tuple[Agent, str]:
        return self.state.agent_and_memory(agent)

    # memory

    def memory_apply(
        self,
        agent: str,
        request: Any,
        *,
        writer: str = "api",
        expected_revision: int | None = None,
        key: str | None = None,
        conversation_id: str | None = None,
        from_conversation: str | None = None,
    ) -> WriteOutcome:
        """Write to the agent's memory through the one pipeline (W1-W10).

        ``request`` is ``{"operations": [...], "message": ...}`` or one operation's fields.
        ``key`` (W7): the same key with the same request again answers the revision it
        produced; a caller's keys live in a namespace of their own, apart from the keys
        Reverie makes for its own writes (:func:`_stored_key`). ``conversation_id`` keys the
        count of refusals in a row (W9); ``from_conversation`` names the stored conversation a
        tool call comes from, which must have memory on (M4) and also keys that count.

        Raises:
            RefusedInput, PermissionDenied (``memory_off``, ``memory_read_only``),
            RevisionConflict, NotFound, StorageFault.
        """
        key = _stored_key(key, writer)
        if from_conversation is None:  # the lookup and the write's first reads in one go
            return self.memories.apply_agent(
                agent,
                request,
                writer=writer,
                expected_revision=expected_revision,
                key=key,
                conversation_id=conversation_id,
            )
        a, memory_id = self._memory(agent)
        self._require_memory_on(a, from_conversation)
        return self.memories.apply(
            memory_id,
            request,
            writer=writer,
            writers_mode=a.memory_writers,
            expected_revision=expected_revision,
            key=key,
            conversation_id=conversation_id or from_conversation,
        )

    def memory_read(
        self,
        agent: str,
        source: str | None = None,
        revision: int | None = None,
        *,
        from_conversation: str | None = None,
    ) -> MemoryFile:
        """``MEMORY.md`` or ``memory/<slug>.md`` at the current or a past revision (M1).

        Raises:
            RefusedInput: ``invalid_path``.  NotFound: agent, revision or file.
            PermissionDenied: ``memory_off`` in ``from_conversation`` (M4).
        """
        a, memory_id = self._memory(agent)
        self._require_memory_on(a, from_conversation)
        return self.memories.read(memory_id, source, revision)

    def memory_search(
        self, agent: str, query: str, limit: int = 8, *, from_conversation: str | None = None
    ) -> list[SearchHit]:
        """Ranked full-text search of the agent's memory, best first (M2).

        Raises:
            RefusedInput: ``invalid_limit``.  NotFound: no such agent.
            PermissionDenied: ``memory_off`` in ``from_conversation`` (M4).
        """
        if from_conversation is None:  # the lookup and the search in one go (one round trip)
            return self.memories.search_agent(agent, query, limit)
        a, memory_id = self._memory(agent)
        self._require_memory_on(a, from_conversation)  # M4 before anything is read
        return self.memories.search(memory_id, query, limit)

    def _require_memory_on(self, agent: Agent, conversation: str | None) -> None:
        """M4: a memory tool called from a memory-off conversation loads nothing."""
        if conversation is not None:
            context.require_memory_on(self.conversations, agent.id, conversation, asking=True)

    def memory_history(
        self, agent: str, limit: int = 50, before: int | None = None
    ) -> list[RevisionRecord]:
        """Accepted writes, newest first (M3)."""
        return self.memories.history(self._memory(agent)[1], limit, before)

    def memory_revision(self, agent: str, revision: int) -> tuple[RevisionRecord, str]:
        """One revision and its diff against the one before (M3).

        Raises:
            NotFound: no such revision.
        """
        memory_id = self._memory(agent)[1]
        rec = self.memories.at_revision(memory_id, revision)
        diff = self.memories.diff(memory_id, revision - 1, revision) if revision > 0 else ""
        return rec, diff

    def memory_diff(self, agent: str, rev_a: int, rev_b: int) -> str:
        """A unified diff between two revisions (M3).

        Raises:
            NotFound: either revision does not exist.
        """
        return self.memories.diff(self._memory(agent)[1], rev_a, rev_b)

    def memory_files(self, agent: str, revision: int | None = None) -> list[str]:
        """The memory's files at the current or a past revision: ``MEMORY.md``, then the
        topic files by name.

        Raises:
            NotFound: no such agent or revision.
        """
        memory_id = self._memory(agent)[1]
        rec = (
            self.memories.current(memory_id)
            if revision is None
            else self.memories.at_revision(memory_id, revision)
        )
        return list(self.memories.files(memory_id, rec))

    def reindex(self, agent: str | None = None) -> dict[str, int]:
        """Rebuild the search index from the files, for one agent or all; lines per agent.

        A damaged index (unreadable pages, or an FTS5 table that disagrees with its rows) is
        dropped and remade whole first.
        """
        targets = [self.agent(agent)] if agent else self.agents()
        self._repair_index()
        return {a.name: self.memories.reindex(self.state.memory_of(a.id)) for a in targets}

    def doctor(self, agent: str | None = None, *, rewind: bool = False) -> doctor.DoctorReport:
        """Check the home (git objects, the state database, the index against the files,
        leftover markers) for one agent's memory or all, repair what can be rebuilt from the
        truth, and report (``reverie doctor``). ``rewind`` restores a memory whose newest
        revisions have objects damaged beyond repair to its last intact revision.

        Raises:
            NotFound: no such agent.
        """
        return doctor.run(self, agent, rewind=rewind)

    def migrate_to(self, url: str) -> dict[str, int]:
        """Copy this embedded home into the empty PostgreSQL database at ``url`` (D2): every
        row, and every memory's files at every revision. Rows per table.

        Raises:
            RefusedInput: this home is on PostgreSQL already, ``url`` is not PostgreSQL's,
                or the target holds agents (``target_not_empty``).
            StorageFault: the target cannot be reached or written (nothing was copied).
        """
        if self.settings.database_url:
            raise RefusedInput(
                "This home is on PostgreSQL already; migrate copies an embedded home.",
                code="invalid_operation",
            )
        if not is_postgres_url(url):
            raise RefusedInput(
                "--to takes a PostgreSQL URL: postgresql://USER@HOST:PORT/DATABASE.",
                code="invalid_url",
            )
        target = PostgresState(url)
        try:
            return moving.copy_to_postgres(self.state, self.memories, target)
        finally:
            target.shutdown()

    def export_git(self, agent: str, folder: str | Path) -> int:
        """Write the agent's memory to ``folder`` as a git repository, one commit per
        revision, from either backend. Returns the number of commits.

        Raises:
            NotFound: no such agent.  RefusedInput: ``invalid_path`` (not a new folder).
        """
        return moving.export_git(self.memories, self._memory(agent)[1], Path(folder))

    def _repair_index(self) -> bool:
        """Check the state database's tables; rebuild a damaged search index from the truth
        (memory files, messages) and say so on stderr. Returns whether anything was rebuilt.

        Raises:
            StorageFault: tables that are not derived are damaged (they cannot be rebuilt:
                the message names them), or the database cannot be written.
        """
        damaged = self.state.damaged_tables()
        if not damaged:
            return False
        truth = [t for t in damaged if _derived(t) is None]
        if truth:
            raise StorageFault(
                f"The state database is damaged in {', '.join(truth)}, which cannot be rebuilt "
                "from the memory files. Restore reverie.db from a backup; `reverie doctor` "
                "says what else it finds.",
                tables=truth,
            )
        if self.state.degraded is not None:
            raise StorageFault(
                f"The search index is damaged ({', '.join(damaged)}) and the storage takes no "
                "writes now, so it cannot be rebuilt; reads of files still work.",
                code=self.state.degraded,
                tables=damaged,
            )
        families = {_derived(t) for t in damaged}
        if "memory" in families:
            skipped = self.memories.rebuild_index(damaged)
            log.warning(
                "The memory search index was damaged (%s); rebuilt it from the memory files%s.",
                ", ".join(t for t in damaged if _derived(t) == "memory"),
                f" (not {', '.join(skipped)}: their files are damaged, see reverie doctor)"
                if skipped
                else "",
            )
        if "history" in families:
            count = self.conversations.rebuild_index(damaged)
            log.warning(
                "The history search index was damaged (%s); rebuilt it from %d messages.",
                ", ".join(t for t in damaged if _derived(t) == "history"),
                count,
            )
        self.state.vacuum()
        return True

    # workspace: members, agents' lifecycle, channels, grants (SPEC 1, A3)

    def add_member(self, name: str, role: str = "member", *, active: bool = True) -> Member:
        """Add a workspace member (``owner``, ``admin`` or ``member``).

        Raises:
            RefusedInput: bad name or role, or the name is taken.
        """
        return self.state.add_member(name, role, active=active)

    def member(self, name: str) -> Member:
        """The member named ``name``.

        Raises:
            NotFound: no such member.
        """
        return self.state.get_member(name)

    def members(self) -> list[Member]:
        """Every member, by name."""
        return self.state.list_members()

    def ensure_owner(self, name: str = "owner") -> Member:
        """The workspace's first active owner; one named ``name`` is created when there is
        none (the person at this machine's command line owns the home they can read)."""
        members = self.state.list_members()
        for member in members:
            if member.role == "owner" and member.active:
                return member
        if any(m.name == name for m in members):  # a home from before the last-owner rule
            raise PermissionDenied(
                f"This home has no active owner, and the member {name!r} is not one: make a "
                f"member the owner again with `reverie member set NAME --role owner --active`.",
                code="permission_denied",
            )
        return self.state.add_member(name, "owner")

    def update_member(
        self, name: str, *, role: str | None = None, active: bool | None = None
    ) -> Member:
        """Change a member's role or active flag.

        Raises:
            RefusedInput: unknown role.  NotFound: no such member.
        """
        return self.state.update_member(name, role=role, active=active)

    def archive_agent(self, name: str, archived: bool = True) -> Agent:
        """Archive (or restore) an agent; its memory and conversations are kept (A3).

        Raises:
            NotFound: no such agent.
        """
        return self.state.archive_agent(self.state.get_agent(name).id, archived)

    def delete_agent(self, name: str) -> None:
        """Delete an agent, its memory and its conversations (A3).

        The database rows go in one transaction, which leaves a tombstone per memory; the
        repositories are removed after it commits, and a tombstone left by a crash in between
        is honoured when the home is next opened.

        Raises:
            NotFound: no such agent.
        """
        agent = self.state.get_agent(name)
        try:
            memory_ids = [self.state.memory_of(agent.id)]
        except NotFound:
            memory_ids = []
        with contextlib.ExitStack() as held:
            for memory_id in memory_ids:
                # An in-flight write finishes first, instead of failing half-way on vanished rows.
                held.enter_context(self.memories.lock(memory_id))
            self.state.delete_agent(agent.id)
        self._remove_deleted_memories()

    def _remove_deleted_memories(self) -> None:
        if self.state.degraded is not None:
            return  # nothing can be removed from storage that takes no writes; next time
        for memory_id in self.state.deleted_memories():
            # Ids come from the database and are never reused, but stay careful with rmtree.
            if "/" in memory_id or memory_id.startswith("."):
                continue
            shutil.rmtree(self.home / "memories" / memory_id, ignore_errors=True)
            (self.home / "locks" / f"{memory_id}.lock").unlink(missing_ok=True)
            self.state.forget_deleted_memory(memory_id)

    def ensure_channel(
        self,
        channel_id: str,
        kind: str,
        *,
        name: str | None = None,
        reports_to: str | None = None,
    ) -> Channel:
        """The channel ``channel_id``, created with ``kind`` (``dm``, ``channel``, ``group``,
        ``web``, ``automation``) if new; an automation may report to another chat.

        Raises:
            RefusedInput: bad id or kind, or a kind other than the stored one.
        """
        return self.conversations.ensure_channel(channel_id, kind, name=name, reports_to=reports_to)

    def channel(self, channel_id: str) -> Channel:
        """One channel.

        Raises:
            NotFound: no such channel.
        """
        return self.conversations.channel(channel_id)

    def channels(self, kind: str | None = None) -> list[Channel]:
        """Every channel (of one kind), by id."""
        return self.conversations.channels(kind)

    def grant(self, agent: str, channel_id: str) -> Grant:
        """Admit the agent to a channel (an active grant).

        Raises:
            NotFound: no such agent or channel.
        """
        return self.conversations.set_grant(self.state.get_agent(agent).id, channel_id, True)

    def revoke(self, agent: str, channel_id: str) -> Grant:
        """Revoke the agent's grant for a channel.

        Raises:
            NotFound: no such agent or channel.
        """
        return self.conversations.set_grant(self.state.get_agent(agent).id, channel_id, False)

    def grants(self, agent: str) -> list[Grant]:
        """The agent's grants, active and revoked.

        Raises:
            NotFound: no such agent.
        """
        return self.conversations.grants(self.state.get_agent(agent).id)

    def channel_grants(self, channel_id: str) -> list[Grant]:
        """The grants held in a channel, by any agent, active and revoked (by agent id): which
        agent a chat surface's new thread there belongs to, in one query."""
        return self.conversations.channel_grants(channel_id)

    # conversations (SPEC 1, 4)

    def create_conversation(
        self,
        agent: str,
        channel_id: str,
        *,
        conversation_id: str | None = None,
        title: str = "",
        parent: str | None = None,
        model: str | None = None,
        thinking: str | None = None,
        started_by: dict[str, Any] | None = None,
        unclassified: bool = False,
        now: float | None = None,
    ) -> Conversation:
        """Start a conversation of ``agent`` in a channel; its memory mode follows O1/O2.

        Raises:
            RefusedInput: a bad value, or the id is taken.
            NotFound: no such agent, channel or parent conversation.
        """
        return self.conversations.create(
            self.state.get_agent(agent).id,
            channel_id,
            conversation_id=conversation_id,
            title=title,
            parent_id=parent,
            model=model,
            thinking=thinking,
            started_by=started_by,
            unclassified=unclassified,
            now=now,
        )

    def conversations_of(self, agent: str, limit: int = 100) -> list[Conversation]:
        """The agent's conversations (any memory mode, not deleted), newest first.

        Raises:
            NotFound: no such agent.
        """
        return self.conversations.of_agent(self.state.get_agent(agent).id, limit=limit)

    def conversation(self, conversation_id: str) -> Conversation:
        """A conversation as stored, whatever its mode.

        Raises:
            NotFound: no such conversation.
        """
        return self.conversations.get(conversation_id)

    def append_message(
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
        """Add a message (``user``, ``assistant`` or ``tool``) at the next position.

        A message from a group turns the conversation off for good (O2); the same message
        again (same ``message_id``, or same time, role, author and text) is not added twice.

        Raises:
            RefusedInput: a bad value.  NotFound: no such conversation or channel, or
                ``conversation_deleted``.
        """
        return self.conversations.append(
            conversation_id,
            role,
            text,
            author=author,
            channel_id=channel_id,
            time=time,
            message_id=message_id,
            started_by=started_by,
        )

    def close_conversation(self, conversation_id: str) -> Conversation:
        """Close a conversation: its tail is complete for review.

        Raises:
            NotFound: no such conversation, or ``conversation_deleted``.
        """
        return self.conversations.close(conversation_id)

    def delete_conversation(self, conversation_id: str) -> Conversation:
        """Delete a conversation and its sub-sessions from search, review and reads.

        Raises:
            NotFound: no such conversation.
        """
        return self.conversations.delete(conversation_id)

    def link_chat(self, conversation_id: str, channel_id: str) -> Conversation:
        """Link a chat to a conversation; linking a group turns memory off for good (O2).

        Raises:
            NotFound: no such conversation or channel, or ``conversation_deleted``.
        """
        return self.conversations.link_chat(conversation_id, channel_id)

    def set_task(
        self,
        conversation_id: str,
        started_by: dict[str, Any],
        *,
        model: str | None = None,
        thinking: str | None = None,
    ) -> Conversation:
        """Record what started the current task and its model (``None``: the agent's default).

        Raises:
            RefusedInput: a bad value.  NotFound: no such conversation, or deleted.
        """
        return self.conversations.set_task(
            conversation_id, started_by, model=model, thinking=thinking
        )

    def classify_conversation(self, conversation_id: str) -> Conversation:
        """Give a conversation without a memory mode its mode (O2); others keep theirs.

        Raises:
            NotFound: no such conversation.
        """
        return self.conversations.classify(conversation_id)

    def import_conversations(
        self,
        lines: Iterable[str],
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportSummary:
        """Import JSON Lines (SPEC 15), all or nothing; importing again adds nothing.

        Raises:
            RefusedInput: a bad line (its number is in the message and ``line``).
        """
        return self._import(parse_jsonl(lines, self.settings), progress)

    def import_records(
        self,
        records: Iterable[Any],
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportSummary:
        """Import already-decoded records of the JSON Lines format (numbered from 1).

        Raises:
            RefusedInput: a bad record (its number is in the message and ``line``).
        """
        return self._import(parse_records(enumerate(records, start=1), self.settings), progress)

    def _import(self, records: Any, progress: Callable[[int, int], None] | None) -> ImportSummary:
        summary = self.conversations.import_records(records, progress)
        for memory_id in summary.new_memories:
            self.memories.create(memory_id)
        return summary

    # review bookkeeping (R1)

    def pending_ranges(self, agent: str, now: float | None = None) -> list[tuple[str, int, int]]:
        """Complete, unreviewed ``(conversation, start, end)`` ranges of the agent's
        memory-on conversations (never memory-off or deleted ones).

        Raises:
            NotFound: no such agent.
        """
        return self.conversations.pending_ranges(
            self.state.get_agent(agent).id,
            time.time() if now is None else check_timestamp(now, "now"),
        )

    def mark_reviewed(self, conversation_id: str, end: int) -> Conversation:
        """Record that review has read the conversation up to ``end`` (excluded).

        Raises:
            RefusedInput: ``invalid_range``.  NotFound: no such conversation.
        """
        return self.conversations.mark_reviewed(conversation_id, end)

    # session history tools (SPEC H1-H3)

    def context_sessions(
        self, agent: str, from_conversation: str | None = None, limit: int = 50
    ) -> list[context.SessionInfo]:
        """The agent's earlier memory-on conversations, newest first (H1).

        Raises:
            PermissionDenied: ``memory_off`` from a memory-off conversation.
            NotFound: no such agent; ``from_conversation`` not the agent's, or deleted.
            RefusedInput: ``invalid_limit``.
        """
        return context.context_sessions(
            self.conversations, self.state.get_agent(agent).id, from_conversation, limit
        )

    def context_read(
        self,
        agent: str | None,
        session: str,
        start: int | None = None,
        end: int | None = None,
        *,
        include_tools: bool = False,
        cursor: str | None = None,
        max_chars: int = context.DEFAULT_PAGE_CHARS,
        from_conversation: str | None = None,
    ) -> context.ReadPage:
        """Messages ``start`` <= p < ``end`` of one of the agent's conversations, a page at a
        time (H2). ``agent=None`` reads as the conversation's own agent (people's paths).

        Raises:
            NotFound: no such agent; the conversation is missing or another agent's
                (``not_found``) or deleted (``conversation_deleted``).
            PermissionDenied: ``memory_off``.
            RefusedInput: ``invalid_range``, ``invalid_cursor``, ``invalid_limit``.
        """
        agent_id = self.state.get_agent(agent).id if agent is not None else self._owner_of(session)
        return context.context_read(
            self.conversations,
            agent_id,
            session,
            start,
            end,
            include_tools=include_tools,
            cursor=cursor,
            max_chars=max_chars,
            from_conversation=from_conversation,
        )

    def _owner_of(self, conversation_id: str) -> str:
        try:
            return self.conversations.get(conversation_id).agent_id
        except NotFound:
            raise NotFound(
                f"No conversation {conversation_id!r}.", conversation=conversation_id
            ) from None

    def context_search(
        self, agent: str, query: str, limit: int = 8, from_conversation: str | None = None
    ) -> list[HistoryHit]:
        """Ranked search of the agent's memory-on conversations; hits open with
        :meth:`context_read` (H1, O3).

        Raises:
            RefusedInput: ``invalid_limit``.  PermissionDenied: ``memory_off``.
            NotFound: no such agent.
        """
        return context.context_search(
            self.conversations, self.state.get_agent(agent).id, query, limit, from_conversation
        )

    def session_get(self, conversation_id: str, agent: str | None = None) -> context.SessionDetails:
        """A conversation's details and what started its current task (H3).

        Raises:
            NotFound: no such conversation (or not ``agent``'s).
        """
        agent_id = self.state.get_agent(agent).id if agent is not None else None
        return context.session_get(self.conversations, conversation_id, agent_id)

    def history_reindex(self, tokenize: str | None = None) -> int:
        """Rebuild the history search rows (with another FTS5 tokenizer, if given).

        Returns the number of indexed messages.

        Raises:
            RefusedInput: ``invalid_tokenizer``.
        """
        return self.conversations.reindex(tokenize)

    # review (SPEC R1-R10)

    def review_run(
        self,
        agent: str | None = None,
        *,
        force: bool = False,
        now: float | None = None,
        progress: Progress | None = None,
    ) -> list[AgentReport]:
        """Review one agent or all, as the scheduler would: the due ones, or every one with
        ``force`` (R9). Reports what each run did and cost.

        Raises:
            NotFound: no such agent.
        """
        if now is not None:
            check_timestamp(now, "now")
        return run_review(self, agent, force=force, now=now, progress=progress)

    # soul (SPEC S1-S3)

    def _agent_conversation(self, agent: str, conversation_id: str) -> tuple[Agent, Conversation]:
        a = self.state.get_agent(agent)
        conv = self.conversations.get(conversation_id)
        if conv.agent_id != a.id or conv.deleted:
            raise NotFound(
                f"No conversation {conversation_id!r} of agent {a.name}.",
                conversation=conversation_id,
            )
        return a, conv

    def soul(self, agent: str, version: int | None = None) -> SoulVersion:
        """The agent's current soul, or a published version (S2).

        Raises:
            NotFound: no such agent or version.
        """
        agent_id = self.state.get_agent(agent).id
        return (
            self.souls.current(agent_id)
            if version is None
            else self.souls.version(agent_id, version)
        )

    def soul_history(self, agent: str) -> list[SoulVersion]:
        """Every published version of the agent's soul, newest first (S2).

        Raises:
            NotFound: no such agent.
        """
        return self.souls.history(self.state.get_agent(agent).id)

    def soul_draft(self, agent: str, conversation_id: str) -> SoulDraft:
        """The conversation's soul draft (the current text when it has not edited one).

        Raises:
            NotFound: no such agent, or not its conversation.
        """
        a, conv = self._agent_conversation(agent, conversation_id)
        return self.souls.draft(a.id, conv.id)

    def soul_edit(self, agent: str, conversation_id: str, request: Any) -> SoulDraft:
        """Edit the conversation's soul draft with memory operations (S1); nothing is
        published.

        Raises:
            RefusedInput: a bad batch or content (W2-W4 rules).  NotFound: as above.
        """
        a, conv = self._agent_conversation(agent, conversation_id)
        return self.souls.edit(a.id, conv.id, request)

    def soul_publish(self, agent: str, conversation_id: str) -> SoulReceipt:
        """Publish the conversation's draft as the next version; the receipt's version is the
        only proof it was saved (S2, S3).

        Raises:
            RefusedInput: ``no_draft``.  RevisionConflict: ``soul_version_conflict`` (the
                draft is reset).  NotFound: as above.
        """
        a, conv = self._agent_conversation(agent, conversation_id)
        return self.souls.publish(a.id, conv.id)

    # instructions and approvals (SPEC I1-I3, X1)

    def channel_instructions(self, agent: str, channel_id: str) -> Instructions:
        """The agent's instructions in a channel (version 0, empty, when none).

        Raises:
            NotFound: no such agent.
        """
        return self.instructions.instructions(self.state.get_agent(agent).id, channel_id)

    def propose_instructions(
        self, conversation_id: str, text: str, mode: str = "append", *, author: str | None
    ) -> Approval:
        """Propose a change to the instructions of the conversation's channel; it waits for
        approval and changes nothing (I1, I2). ``append`` needs the author to be an active
        member admitted to the chat (a grant, in a shared channel); ``replace`` an admin. The
        author's standing is read from stored state now (X1).

        Raises:
            PermissionDenied: the author may not propose this.  RefusedInput: I1's rules.
            NotFound: no such conversation, or deleted.
        """
        conv = self.conversations.get(conversation_id)
        if conv.deleted:
            raise NotFound(
                f"Conversation {conversation_id} was deleted.",
                code="conversation_deleted",
                conversation=conversation_id,
            )
        member = self._member_or_none(author)
        if mode == "replace" and not may_replace_instructions(member):
            raise PermissionDenied(
                "Only a workspace admin can replace a channel's instructions, and the person "
                "asking is not one. Propose an append instead, or ask an admin. Nothing was "
                "proposed.",
                code="permission_denied",
            )
        if member is None or not member.active:
            raise PermissionDenied(
                "Only an active workspace member can propose instructions, and the person "
                "asking is not one. Nothing was proposed.",
                code="permission_denied",
            )
        self._require_admitted(conv.agent_id, conv.channel_id, conv.channel_kind)
        return self.instructions.propose(
            conv.agent_id,
            conv.channel_id,
            text,
            mode,
            requested_by=member.name,
            conversation_id=conv.id,
        )

    def _require_admitted(
        self, agent_id: str, channel_id: str, kind: str, nothing: str = "proposed"
    ) -> None:
        """I1: a shared chat's instructions change only where the agent holds a grant, read
        now (X1). ``nothing`` says what did not happen: ``proposed``, ``applied``.

        Raises:
            PermissionDenied: no active grant there.
        """
        shared = kind in ("channel", "group")
        if shared and not self.conversations.has_grant(agent_id, channel_id):
            raise PermissionDenied(
                f"The agent is not admitted to chat {channel_id} (no active grant), so "
                f"its instructions there cannot change. Nothing was {nothing}.",
                code="permission_denied",
            )

    def _member_or_none(self, name: str | None) -> Member | None:
        if not name:
            return None
        try:
            return self.state.get_member(name)
        except NotFound:
            return None

    def approvals(self, agent: str | None = None, status: str | None = "pending") -> list[Approval]:
        """Approvals, oldest first: the pending ones by default, every one with ``status=None``.

        Raises:
            NotFound: no such agent.
        """
        agent_id = self.state.get_agent(agent).id if agent is not None else None
        return self.instructions.list(agent_id, status)

    def approval(self, approval_id: str) -> Approval:
        """One approval.

        Raises:
            NotFound: no such approval.
        """
        return self.instructions.get(approval_id)

    def approve(self, approval_id: str, *, by: str) -> Approval:
        """Approve a pending change and apply exactly its text, once (I2), if the agent still
        holds its grant in a shared channel (X1). An instruction change is approved and
        applied in one transaction, so a process that dies leaves it pending or applied,
        never both or half.

        A bundle (A2) is claimed first: one transaction checks everything its instructions
        half can refuse and marks it as being applied; then its memory half is written
        (keyed by the approval: once), then a second transaction marks it approved and
        applies its instructions. Approving one being applied (after a crash between the
        steps, say) finishes it; while it is being applied it cannot be denied or commented
        on. Refused before its memory half is written (a refusal of either half, or the
        memory moved since it was proposed), nothing changes and it stays pending, to be
        denied or approved again.

        Raises:
            NotFound: no such approval.  PermissionDenied: ``by`` may not edit the agent
            (A1), or the agent holds no grant in that shared channel any more (X1).
            RefusedInput: ``approval_decided`` (denied or commented before);
            ``approval_in_progress`` (another change of the same agent and channel is being
            applied); ``invalid_instructions`` (the channel's instructions would be too
            long); a W3-W5 code for a bundle's body.  RevisionConflict: a bundle's memory
            moved since it was proposed (it stays pending and can be denied).
        """
        if self.instructions.get(approval_id).kind == "bundle":
            return self._approve_bundle(approval_id, by)
        return self._decide(approval_id, "approve", by)

    def deny(self, approval_id: str, *, by: str) -> Approval:
        """Deny a pending change; nothing is applied (I2).

        Raises:
            NotFound: no such approval.  PermissionDenied: ``by`` may not edit the agent
            (A1); the agent's grant is not needed.  RefusedInput: ``approval_decided``
            (approved or commented before); ``approval_in_progress`` (a bundle being
            applied: approving it again finishes it).
        """
        return self._decide(approval_id, "deny", by)

    def comment(self, approval_id: str, text: str, *, by: str) -> Approval:
        """Answer a pending change with a comment, which cancels it (I2); the agent's
        conversation is told.

        Raises:
            NotFound, PermissionDenied, RefusedInput: as :meth:`deny`; an empty comment.
        """
        return self._decide(approval_id, "comment", by, text)

    def _authorizer(self, decision: str, by: str) -> Callable[[Any, Approval], None]:
        """Who may decide (A1: the agent's editors), and, to approve a pending change not yet
        being applied, the agent's grant in a shared channel (X1), read in the deciding
        transaction. Deny and comment need no grant; a bundle being applied was checked when
        it was claimed, and its memory half may be written, so it is finished without."""

        def authorize(conn: Any, approval: Approval) -> None:
            require_edit(self._member_or_none(by), self.state.get_agent(approval.agent_id), by)
            if decision == "approve" and approval.status == "pending" and not approval.applying:
                channel = self.conversations.channel(approval.channel_id)
                self._require_admitted(approval.agent_id, channel.id, channel.kind, "applied")

        return authorize

    def _decide(
        self, approval_id: str, decision: str, by: str, text: str | None = None
    ) -> Approval:
        def tell(conn: Any, approval: Approval) -> None:
            if approval.conversation_id is None:
                return
            try:
                conv = self.conversations.get(approval.conversation_id)
            except NotFound:
                return
            said = {
                "approved": "was approved; it applies from the next run",
                "denied": "was denied; nothing changed",
                "commented": f"was not applied; {by} commented: {approval.comment}",
            }[approval.status]
            self.outbox.enqueue(
                conn,
                agent_id=approval.agent_id,
                conversation_id=conv.id,
                channel_id=conv.channel_id,
                kind="notice",
                text=f"The instruction change {approval.id} {said}.",
            )

        return self.instructions.decide(
            approval_id,
            decision,
            by=by,
            comment=text,
            authorize=self._authorizer(decision, by),
            on_decided=tell,
        )

    def _approve_bundle(self, approval_id: str, by: str) -> Approval:
        """A2: check, claim, write the memory half, finish (see :meth:`approve`). The memory
        half is checked before the claim (its rules, the revision it expects), so that a
        refusal leaves the approval pending as it was. Once claimed, a refusal of the memory
        half (nothing written: the memory moved in between, or the approval's key was taken
        by another write, as a caller could before keys had a namespace of their own) lets
        the claim go, so that the approval can be denied; a storage failure keeps it, for
        approving again to finish."""
        authorize = self._authorizer("approve", by)
        approval = self.instructions.get(approval_id)
        if approval.status == "pending" and not approval.applying:
            authorize(None, approval)
            self._bundle_memory(approval, write=False)
        claimed = self.instructions.claim(approval_id, by=by, authorize=authorize)
        if claimed.status != "pending":
            return claimed  # approved before: answered as it stands
        try:
            self._bundle_memory(claimed, write=True)
        except (RevisionConflict, RefusedInput, PermissionDenied) as exc:
            self.instructions.release(approval_id)
            if exc.code == "idempotency_key_reused":
                raise RefusedInput(
                    f"Another write already used the key of change {approval_id} "
                    f"(approval:{approval_id}) with other content, so its memory half cannot "
                    "be told apart from it: nothing was applied, and it is pending as before. "
                    "Deny it and propose the change again.",
                    code="idempotency_key_reused",
                ) from None
            raise
        return self._decide(approval_id, "approve", by)

    def _bundle_memory(self, approval: Approval, *, write: bool) -> None:
        """The memory half of a bundle (A2): checked (``write=False``), or written before its
        instructions half commits. Keyed by the approval (``approval:<id>``, a key no caller
        can send: see :func:`_stored_key`), so approving again after a crash in between
        writes the body once, then the instructions.

        Raises:
            RevisionConflict: memory moved since it was proposed; nothing was written.
            RefusedInput: the body breaks a rule; nothing was written.
        """
        assert approval.memory_body is not None
        agent, memory_id = self._memory(approval.agent_id)
        request = {
            "action": "set_body",
            "text": approval.memory_body,
            "message": f"Approved change {approval.id}",
        }
        try:
            if not write:
                self.memories.preview(
                    memory_id, request, expected_revision=approval.memory_revision
                )
                return
            self.memories.apply(
                memory_id,
                request,
                writer="mcp",
                writers_mode=agent.memory_writers,
                expected_revision=approval.memory_revision,
                key=f"approval:{approval.id}",
            )
        except RevisionConflict as exc:
            raise RevisionConflict(
                f"Memory moved since change {approval.id} was proposed (it expected revision "
                f"{approval.memory_revision}, memory is at {exc.details.get('current_revision')})"
                ": nothing was applied, and it is pending as before. Deny it and propose the "
                "change again on the current memory.",
                **exc.details,
            ) from None

    def propose_bundle(
        self,
        agent: str,
        *,
        body: str,
        expected_revision: int,
        channel_id: str,
        instructions: str,
        mode: str = "append",
        requested_by: str,
    ) -> Approval:
        """A2: a memory body bundled with an instruction change waits for approval as one
        proposal; approving applies both (the body only if memory is still at
        ``expected_revision``).

        The same checks as each part alone, before anything is stored: the channel exists
        and (shared) admits the agent, as for :meth:`propose_instructions`, and memory is still
        at ``expected_revision``, as for a write, so that no one approves a proposal that could
        only fail.

        Raises:
            PermissionDenied: the member may not edit the agent, or (replace) is no admin, or
                the agent holds no grant in that shared channel.
            RefusedInput: the body or instructions break a content rule.
            RevisionConflict: memory moved since ``expected_revision``.
            NotFound: no such agent or channel.
        """
        a = self.state.get_agent(agent)
        member = self._member_or_none(requested_by)
        require_edit(member, a, requested_by)
        if mode == "replace" and not may_replace_instructions(member):
            raise PermissionDenied(
                "Only a workspace admin can replace a channel's instructions. Nothing was "
                "proposed.",
                code="permission_denied",
            )
        channel = self.conversations.channel(channel_id)
        self._require_admitted(a.id, channel.id, channel.kind)
        self.memories.preview(
            self.state.memory_of(a.id),
            {"action": "set_body", "text": body},
            expected_revision=expected_revision,
        )
        assert member is not None
        return self.instructions.propose(
            a.id,
            channel_id,
            instructions,
            mode,
            requested_by=member.name,
            memory=(body, expected_revision),
        )

    def review_log(self, agent: str, limit: int = 50) -> list[BatchRecord]:
        """The agent's review batches, newest first: ranges, revision, what was dropped, cost.

        Raises:
            NotFound: no such agent.
        """
        return ReviewLog(self.state).batches(self.state.get_agent(agent).id, limit)

    # who is calling (SPEC 1, A1): tokens, sign-in links, the facade as a member sees it

    def as_member(self, name: str) -> Actor:
        """The facade as member ``name`` may use it: every people's path (HTTP, MCP, admin,
        CLI) goes through this view, so A1 and the roles hold on each.

        Raises:
            NotFound: no such member.  PermissionDenied: the member is not active.
        """
        member = self.state.get_member(name)
        if not member.active:
            raise PermissionDenied(f"Member {member.name} is not active.", code="permission_denied")
        return Actor(self, member)

    def create_token(self, member: str, label: str | None = None) -> tuple[str, TokenInfo]:
        """A new API token for a member: the token (show it once; only its hash is kept) and
        its record.

        Raises:
            NotFound: no such member.
        """
        return self.tokens.create(self.state.get_member(member), label)

    def tokens_of(self, member: str | None = None) -> list[TokenInfo]:
        """API tokens (of one member), oldest first; never the tokens themselves.

        Raises:
            NotFound: no such member.
        """
        return self.tokens.list(self.state.get_member(member) if member else None)

    def revoke_token(self, token_id: str) -> TokenInfo:
        """Revoke an API token at once (idempotent).

        Raises:
            NotFound: no such token.
        """
        return self.tokens.revoke(token_id)

    def sign_in_code(self, member: str) -> str:
        """A one-time code for ``/admin/signin/<code>``, valid fifteen minutes.

        Raises:
            NotFound: no such member.
        """
        return self.tokens.sign_in_code(self.state.get_member(member))

    def sign_in_code_state(self, code: str) -> str:
        """Whether a sign-in code would sign someone in, without using it: ``valid``, or why
        not: ``used``, ``expired``, ``inactive`` (its member is deactivated), ``unknown``."""
        state, member_id = self.tokens.sign_in_code_state(code)
        if state == "valid" and member_id is not None:
            return "valid" if self.state.get_member(member_id).active else "inactive"
        return state

    def redeem_sign_in_code(self, code: str) -> Member | None:
        """The active member of an unused, unexpired sign-in code (now used up), or None."""
        member_id = self.tokens.use_sign_in_code(code)
        member = self.state.get_member(member_id) if member_id else None
        return member if member is not None and member.active else None

    def open_session(self, member: Member) -> str:
        """A new admin-page session for ``member``; the cookie value."""
        return self.tokens.open_session(member)

    def session(self, value: str) -> AdminSession | None:
        """The live admin-page session of a cookie value, for an active member; else None."""
        found = self.tokens.session(value) if value else None
        if found is None:
            return None
        member = self.state.get_member(found[0])
        return AdminSession(member, found[1], found[2]) if member.active else None

    def close_session(self, value: str) -> None:
        """Sign a browser out."""
        self.tokens.close_session(value)

    def authenticate(self, token: str) -> Actor | None:
        """The member an API token belongs to, as an :class:`Actor`; None when the token is
        unknown, revoked, or its member inactive."""
        member_id = self.tokens.member_of(token) if token else None
        if member_id is None:
            return None
        member = self.state.get_member(member_id)
        return Actor(self, member) if member.active else None

    # notify and the outbox (SPEC T1)

    def notify(self, conversation_id: str, text: str, *, task: str, call_id: str) -> list[Delivery]:
        """Queue a message to the conversation's chats (T1): at most ``max_notify_chars``, and
        at most ``max_notifies_per_task`` calls in one task.

        Raises:
            RefusedInput: ``notify_too_long``, ``notify_limit``, a control character,
                ``notify_credential_rejected`` (nothing is queued).
            NotFound: no such conversation, or deleted.
        """
        if not isinstance(text, str) or not text.strip():
            raise RefusedInput("notify needs a text.", code="invalid_arguments")
        if len(text) > self.settings.max_notify_chars:
            raise RefusedInput(
                f"This notify holds {len(text):,} characters; at most "
                f"{self.settings.max_notify_chars:,} are allowed. Shorten it. Nothing was sent.",
                code="notify_too_long",
                limit=self.settings.max_notify_chars,
            )
        validation.check_control(text, "text")
        validation.check_not_sent_secret(text, "text", "notify_credential_rejected", "notify")
        conv = self.conversations.get(conversation_id)
        if conv.deleted:
            raise NotFound(
                f"Conversation {conversation_id} was deleted.",
                code="conversation_deleted",
                conversation=conversation_id,
            )
        channel = self.conversations.channel(conv.channel_id)
        granted = [
            g.channel_id for g in self.conversations.grants(conv.agent_id) if g.status == "active"
        ]
        targets = notify_targets(
            channel=conv.channel_id,
            channel_kind=conv.channel_kind,
            reports_to=channel.reports_to,
            linked=conv.linked_chats,
            is_sub_session=conv.parent_id is not None,
            granted=granted,
        )
        with self.state.transaction() as conn:
            used = self.outbox.calls_in_task(conn, task, "notify")
            if used >= self.settings.max_notifies_per_task:
                raise RefusedInput(
                    f"This task has sent {used} notifies, the most allowed. Put the rest in "
                    "your final answer. Nothing was sent.",
                    code="notify_limit",
                    limit=self.settings.max_notifies_per_task,
                )
            ids = [
                self.outbox.enqueue(
                    conn,
                    agent_id=conv.agent_id,
                    conversation_id=conv.id,
                    channel_id=target,
                    kind="notify",
                    text=text,
                    task=task,
                    call_id=call_id,
                )
                for target in targets
            ]
        return [self.outbox.get(i) for i in ids]

    def pending_deliveries(
        self, *, conversation_id: str | None = None, channels: list[str] | None = None
    ) -> list[Delivery]:
        """Outbox rows waiting to be sent (or whose claim expired), oldest first."""
        return self.outbox.pending(channels=channels, conversation_id=conversation_id)

    def claim_delivery(self, delivery_id: str, lease_seconds: float = 60.0) -> Delivery | None:
        """Take a delivery for sending; None when another worker has it or it was sent."""
        return self.outbox.claim(delivery_id, lease_seconds)

    def mark_delivered(self, delivery_id: str, receipt: str | None = None) -> Delivery:
        """Record that a delivery was sent, with what the chat answered.

        Raises:
            NotFound: no such delivery.
        """
        return self.outbox.delivered(delivery_id, receipt)

    def reply(
        self, conversation_id: str, texts: str | Sequence[str], *, key: str
    ) -> list[Delivery]:
        """Queue the agent's answer to a request that is not a turn (a chat command) in the
        conversation's chat, once per ``key``: the same key again returns the deliveries it
        queued and queues nothing (a retried chat event posts nothing twice). Several texts
        are sent as several messages, in order.

        Raises:
            NotFound: no such conversation.
        """
        conv = self.conversations.get(conversation_id)
        parts = [texts] if isinstance(texts, str) else list(texts)
        with self.state.transaction() as conn:
            ids = self.outbox.enqueue_once(
                conn,
                key,
                parts,
                agent_id=conv.agent_id,
                channel_id=conv.channel_id,
                kind="notice",
                conversation_id=conv.id,
            )
            # read in the same transaction: one lock on the state instead of two
            return [self.outbox.get(i) for i in ids]

    # chat commands (SPEC C1-C3)

    def chat_write(
        self,
        conversation_id: str,
        command: ChatCommand,
        *,
        author: str | None,
        channel_id: str | None = None,
        in_chat: bool,
        guest: bool = False,
        key: str,
    ) -> WriteOutcome:
        """Apply a chat command that writes memory (``!remember``, ``!memory update memory``)
        to the memory of the conversation's agent, after C2's checks on stored state: memory
        on in the conversation and the chat (``channel_id``, default the conversation's); in
        a DM an active workspace member; in a channel an active grant, an author who is not
        deactivated (``guest``: the platform reports an active guest, stored as an inactive
        member) and ``in_chat``, the author's membership as the chat platform confirmed it
        just now. ``key`` (the chat event's id) makes a retry answer the revision it produced
        and write nothing (C3, W7).

        Raises:
            PermissionDenied: ``memory_off``, ``no_grant``, ``inactive_member``,
                ``not_in_channel``.  RefusedInput: ``chat_command_too_large``, W3-W5 rules.
            NotFound: no such conversation.
        """
        if not command.writes:
            raise RefusedInput(
                f"!{command.action} does not write memory.", code="invalid_operation"
            )
        with self.state.reading():  # C2's checks on one snapshot of the state
            conv = self.conversations.get(conversation_id)
            agent = self.state.get_agent(conv.agent_id)
            chat = self.conversations.channel(channel_id or conv.channel_id)
            require_chat_write(
                self._member_or_none(author),
                agent.name,
                channel_kind=chat.kind,
                memory_on=conv.memory_on and not chat.answers_group,
                granted=self.conversations.has_grant(agent.id, chat.id),
                in_chat=in_chat,
                guest=guest,
                who=author,
            )
            check_limits(command, self.settings)
            memory_id = self.state.memory_of(agent.id)
        message = f"chat: !{command.action} {command.name}".rstrip() + f" by {author}"
        if command.action == "update":
            request = {"action": "set_body", "text": update_body(command), "message": message}
            return self.memories.apply(memory_id, request, writer="chat", key=key)
        # !remember appends to the text as it is when the write holds the memory's lock: the
        # store builds the batch there, so concurrent commands neither conflict nor redo. A
        # retry (even two deliveries at once) is answered from its key, whatever the text is.

        def build(current: str | None) -> dict[str, str]:
            text = remember_body(current or "", command)
            return {"action": "set_body", "text": text, "message": message}

        return self.memories.apply(memory_id, writer="chat", key=key, build=build)

    # the agent's turn (SPEC P1-P4, X1, X2)

    def chat_provider(self, agent: str) -> ChatProvider:
        """The model the agent's turns use: its own default model, else ``REVERIE_MODEL``.

        Raises:
            RefusedInput: ``no_model`` when neither is set; ``invalid_setting``.
            ProviderError: the provider's SDK is missing.
        """
        from .llm.factory import chat_provider_from_settings

        a = self.state.get_agent(agent)
        model = a.default_model or self.settings.model
        provider = (
            chat_provider_from_settings(dataclasses.replace(self.settings, model=model))
            if model
            else None
        )
        if provider is None:
            raise RefusedInput(
                "No model is configured, so the agent cannot answer. Set REVERIE_MODEL, for "
                "example REVERIE_MODEL=openai:gpt-4o-mini with OPENAI_API_KEY, "
                "REVERIE_MODEL=openai:llama3.1 with OPENAI_BASE_URL=http://127.0.0.1:11434/v1 "
                "for a local server, or REVERIE_MODEL=anthropic:NAME with ANTHROPIC_API_KEY.",
                code="no_model",
            )
        return provider

    def turn(
        self,
        conversation_id: str,
        text: str,
        *,
        author: str | None = None,
        provider: ChatProvider | None = None,
        message_id: str | None = None,
        intents: Iterable[str] = (),
        tools: Iterable[Tool] = (),
        on_event: EventSink | None = None,
        stream: bool = False,
        resume: bool = False,
    ) -> TurnResult:
        """Run one turn of the conversation's agent on a person's message (P1-P4).

        ``author`` is the member writing; ``intents`` are explicit intents the host knows
        (X2); ``tools`` are host tools (connectors) offered beside the built-in ones;
        ``message_id`` makes a retried delivery answer once. With ``stream`` the answer's
        text arrives in ``on_event`` as it is written. ``resume``: the turn of the message
        ``message_id`` was cut short and the caller holds its turn lock (no live process
        runs it), so a turn of it left ``running`` is marked ``interrupted``.

        Raises:
            NotFound: no such conversation, or deleted.  PermissionDenied: ``agent_archived``.
            RefusedInput: ``no_model`` (and no ``provider``), a bad message.
        """
        conv = self.conversations.get(conversation_id)
        chosen = provider or self.chat_provider(conv.agent_id)
        registry = self.tools.with_tools(tools)
        return run_turn(
            self,
            chosen,
            registry,
            conversation_id,
            text,
            author=author,
            message_id=message_id,
            intents=tuple(intents),
            on_event=on_event,
            stream=stream,
            resume=resume,
        )

    def turn_log(
        self, conversation_id: str, start: int = 0, end: int | None = None
    ) -> list[TurnRecord]:
        """The audit of the conversation's turns whose request is in ``start``..``end``:
        which memory revision, soul and instructions versions entered each prompt, its
        policy envelope, tools and outcome.

        Raises:
            NotFound: no such conversation.
        """
        self.conversations.get(conversation_id)
        return self.turns.for_conversation(conversation_id, start, end)

    def running_turns(self, message_prefix: str) -> list[tuple[str, int, str]]:
        """The turns left ``running`` on people's messages recorded with an id that starts
        with ``message_prefix`` (a chat surface's): ``(conversation, position, message id)``.
        Some may be under way; the surface knows which by their turn locks."""
        return self.turns.running(message_prefix)

    def interrupt_turns(self, conversation_id: str, position: int) -> int:
        """Mark ``interrupted`` (ended now) the turns of the message at ``position`` still
        ``running``: for a surface that holds the message's turn lock, so no live process runs
        them, and will not run the turn again. Returns how many were marked."""
        with self.state.transaction() as conn:
            return self.turns.interrupt(conn, conversation_id, position, time.time())

    def unanswered(self, message_prefix: str, since: float) -> list[Unanswered]:
        """The people's messages recorded with an id that starts with ``message_prefix``
        (a chat surface's, ``slack:``) at ``since`` (epoch seconds) or later that no turn
        finished answering and nothing followed: turns a stop cut short, for the surface to
        run again when it starts (:meth:`turn` with the same ``message_id`` runs it once)."""
        return self.turns.unanswered(message_prefix, since)
