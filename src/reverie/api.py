"""The Python API: one facade that every surface (CLI, HTTP, MCP, Slack) calls.

A surface parses its input, calls one method here, and formats the answer; rules (limits,
validation, permissions) live below this facade, so every path gets them. Every method passes
:mod:`reverie._guard` on its way in and out: text arguments must be Unicode, and nothing but a
:class:`reverie.errors.ReverieError` comes out.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from . import doctor
from ._guard import guarded
from .config import Settings
from .errors import NotFound, StorageFault
from .index import fts, history
from .index.fts import SearchHit
from .index.history import HistoryHit
from .review.runner import AgentReport, Progress
from .review.schedule import run_review
from .runtime import context
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
from .store.faults import ENVIRONMENT
from .store.memories import MemoryFile, MemoryStore, WriteOutcome
from .store.state import Agent, Member, RevisionRecord, SQLiteState

__all__ = ["Reverie"]

DB_NAME = "reverie.db"

log = logging.getLogger(__name__)


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
        if not (self.home / DB_NAME).exists():
            if not create:
                raise NotFound(
                    f"No Reverie home at {self.home}; create it with "
                    f"Reverie({str(self.home)!r}, create=True), or open an existing one.",
                    code="home_not_found",
                    home=str(self.home),
                )
            self.home.mkdir(parents=True, exist_ok=True)
        self.state = SQLiteState(self.home / DB_NAME, durable=self.settings.durable)
        self.memories = MemoryStore(self.state, self.home, self.settings)
        self.conversations = ConversationStore(self.state, self.settings)
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
    ) -> Agent:
        """Create an agent with an empty memory at revision 0.

        Raises:
            RefusedInput: the name is invalid or taken, or a policy is unknown.
        """
        agent, memory_id = self.state.create_agent(
            name, creator=creator, edit_policy=edit_policy, memory_writers=memory_writers
        )
        self.memories.create(memory_id)
        return agent

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
        a = self.state.get_agent(agent)
        return a, self.state.memory_of(a.id)

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
        ``conversation_id`` keys the count of refusals in a row (W9); ``from_conversation``
        names the stored conversation a tool call comes from, which must have memory on (M4)
        and also keys that count.

        Raises:
            RefusedInput, PermissionDenied (``memory_off``, ``memory_read_only``),
            RevisionConflict, NotFound, StorageFault.
        """
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
        a, memory_id = self._memory(agent)
        self._require_memory_on(a, from_conversation)
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
