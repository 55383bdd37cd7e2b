"""The facade as one member may use it (SPEC 1, A1, A2, I2, X1): every people's path.

HTTP, MCP, the admin page and the CLI's ``--as`` do not call :class:`~reverie.api.Reverie`
directly: they get an :class:`Actor` for the member behind the request (a token, a session,
the home's owner) and call it. Each method checks the member's standing in the state database
*now* (X1) with the rules of :mod:`reverie.core.permissions`, then calls the facade, so a rule
holds on every surface and lives in one place:

* reading or writing an agent's memory, its history, its soul, its conversations and its
  approvals needs the right to edit the agent (A1: owners, admins, the creator, or every member
  under ``all_workspace_members``);
* creating an agent needs an active member (who becomes its creator);
* importing conversations and reviewing every agent at once need an owner or admin.

It also satisfies :class:`reverie.runtime.tools.Services`, so the agent tools that MCP exposes
run through the same checks.

:func:`by_token` is who an API token stands for on every surface that takes one (the API, MCP,
the admin page's sign-in), with the one refusal for a deactivated member's token;
:func:`session_by_token` opens an admin-page session with a token, which ends when the token
is revoked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .core.permissions import may_edit_agent, require_admin, require_edit
from .errors import PermissionDenied

if TYPE_CHECKING:
    from .api import Reverie
    from .index.fts import SearchHit
    from .index.history import HistoryHit
    from .review.runner import AgentReport
    from .runtime import context
    from .store.conversations import Conversation, ImportSummary
    from .store.instructions import Approval
    from .store.memories import MemoryFile, WriteOutcome
    from .store.outbox import Delivery
    from .store.reviews import BatchRecord
    from .store.souls import SoulDraft, SoulReceipt, SoulVersion
    from .store.state import Agent, Member, RevisionRecord
    from .store.turns import TurnRecord

__all__ = ["Actor", "by_token", "session_by_token"]


class Actor:
    """Member ``member`` acting on the home ``rv`` (build it with ``Reverie.as_member`` or
    ``Reverie.authenticate``). An actor lives for one request or one tool call: the member's
    role and active flag are read from the state database when it is made, so a change
    applies from the next request (X1: re-checked at each use)."""

    def __init__(self, rv: Reverie, member: Member) -> None:
        self.rv = rv
        self.member = member

    def __repr__(self) -> str:
        return f"Actor(member={self.member.name!r}, role={self.member.role!r})"

    def _editable(self, agent: str) -> Agent:
        a = self.rv.agent(agent)
        require_edit(self.member, a)
        return a

    def _owner_agent(self, conversation_id: str) -> Agent:
        conv = self.rv.conversation(conversation_id)
        return self._editable(conv.agent_id)

    # agents

    def agents(self) -> list[Agent]:
        """Every agent of the workspace (their names are not secret to its members)."""
        return self.rv.agents()

    def agent(self, name: str) -> Agent:
        """One agent.

        Raises:
            NotFound: no such agent.
        """
        return self.rv.agent(name)

    def may_edit(self, agent: Agent) -> bool:
        """Whether this member may read and change the agent's memory (A1)."""
        return may_edit_agent(self.member, agent)

    def create_agent(self, name: str, **options: Any) -> Agent:
        """Create an agent whose creator is this member.

        Raises:
            PermissionDenied: the member is not active.  RefusedInput: as the facade.
        """
        return self.rv.create_agent(name, creator=self.member.name, **options)

    # memory (A1, A2)

    def memory_read(
        self,
        agent: str,
        source: str | None = None,
        revision: int | None = None,
        *,
        from_conversation: str | None = None,
    ) -> MemoryFile:
        """As :meth:`Reverie.memory_read`, for an editor of the agent.

        Raises:
            PermissionDenied: the member may not edit the agent.  As the facade otherwise.
        """
        self._editable(agent)
        return self.rv.memory_read(agent, source, revision, from_conversation=from_conversation)

    def memory_search(
        self, agent: str, query: str, limit: int = 8, *, from_conversation: str | None = None
    ) -> list[SearchHit]:
        """As :meth:`Reverie.memory_search`, for an editor of the agent."""
        self._editable(agent)
        return self.rv.memory_search(agent, query, limit, from_conversation=from_conversation)

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
        """As :meth:`Reverie.memory_apply`, for an editor of the agent.

        Raises:
            PermissionDenied: the member may not edit the agent.  As the facade otherwise.
        """
        self._editable(agent)
        return self.rv.memory_apply(
            agent,
            request,
            writer=writer,
            expected_revision=expected_revision,
            key=key,
            conversation_id=conversation_id,
            from_conversation=from_conversation,
        )

    def propose_bundle(self, agent: str, **fields: Any) -> Approval:
        """A2: a memory change bundled with an instruction change, as one pending proposal."""
        self._editable(agent)
        return self.rv.propose_bundle(agent, requested_by=self.member.name, **fields)

    def memory_history(
        self, agent: str, limit: int = 50, before: int | None = None
    ) -> list[RevisionRecord]:
        """As :meth:`Reverie.memory_history`, for an editor of the agent."""
        self._editable(agent)
        return self.rv.memory_history(agent, limit, before)

    def memory_revision(self, agent: str, revision: int) -> tuple[RevisionRecord, str]:
        """As :meth:`Reverie.memory_revision`, for an editor of the agent."""
        self._editable(agent)
        return self.rv.memory_revision(agent, revision)

    def memory_diff(self, agent: str, rev_a: int, rev_b: int) -> str:
        """As :meth:`Reverie.memory_diff`, for an editor of the agent."""
        self._editable(agent)
        return self.rv.memory_diff(agent, rev_a, rev_b)

    def memory_files(self, agent: str, revision: int | None = None) -> list[str]:
        """The memory's files at a revision (the index first, then the topic files)."""
        self._editable(agent)
        return self.rv.memory_files(agent, revision)

    def reaches(self, agent: str) -> list[str]:
        """Where the agent's memory reaches (A1): every DM, its granted channels, its
        scheduled runs."""
        a = self._editable(agent)
        granted = [g.channel_id for g in self.rv.grants(a.name) if g.status == "active"]
        return ["every DM", *(f"channel {c}" for c in granted), "every scheduled run"]

    # soul and approvals (S2, I2)

    def soul(self, agent: str, version: int | None = None) -> SoulVersion:
        """As :meth:`Reverie.soul`, for an editor of the agent."""
        self._editable(agent)
        return self.rv.soul(agent, version)

    def soul_history(self, agent: str) -> list[SoulVersion]:
        """As :meth:`Reverie.soul_history`, for an editor of the agent."""
        self._editable(agent)
        return self.rv.soul_history(agent)

    def soul_draft(self, agent: str, conversation_id: str) -> SoulDraft:
        """As :meth:`Reverie.soul_draft`, for an editor of the agent."""
        self._editable(agent)
        return self.rv.soul_draft(agent, conversation_id)

    def soul_edit(self, agent: str, conversation_id: str, request: Any) -> SoulDraft:
        """Only the agent edits its soul (S1): its turns call the facade, never a person.

        Raises:
            PermissionDenied: always.
        """
        raise _agent_only()

    def soul_publish(self, agent: str, conversation_id: str) -> SoulReceipt:
        """Only the agent publishes its soul (S1).

        Raises:
            PermissionDenied: always.
        """
        raise _agent_only()

    def approvals(self, agent: str | None = None, status: str | None = "pending") -> list[Approval]:
        """The approvals of the agents this member may edit."""
        member = self.member
        editable = {a.id for a in self.rv.agents() if may_edit_agent(member, a)}
        return [a for a in self.rv.approvals(agent, status) if a.agent_id in editable]

    def approval(self, approval_id: str) -> Approval:
        """One approval of an agent this member may edit."""
        approval = self.rv.approval(approval_id)
        self._editable(approval.agent_id)
        return approval

    def approve(self, approval_id: str) -> Approval:
        """As :meth:`Reverie.approve`, by this member."""
        return self.rv.approve(approval_id, by=self.member.name)

    def deny(self, approval_id: str) -> Approval:
        """As :meth:`Reverie.deny`, by this member."""
        return self.rv.deny(approval_id, by=self.member.name)

    def comment(self, approval_id: str, text: str) -> Approval:
        """As :meth:`Reverie.comment`, by this member."""
        return self.rv.comment(approval_id, text, by=self.member.name)

    def propose_instructions(
        self, conversation_id: str, text: str, mode: str = "append", *, author: str | None
    ) -> Approval:
        """A person proposes for themself: ``author`` is always this member."""
        self._owner_agent(conversation_id)
        return self.rv.propose_instructions(conversation_id, text, mode, author=self.member.name)

    def notify(self, conversation_id: str, text: str, *, task: str, call_id: str) -> list[Delivery]:
        """As :meth:`Reverie.notify`, into a conversation of an agent this member may edit."""
        self._owner_agent(conversation_id)
        return self.rv.notify(conversation_id, text, task=task, call_id=call_id)

    # conversations and their history (H1-H3)

    def conversations_of(self, agent: str, limit: int = 100) -> list[Conversation]:
        """The agent's conversations, newest first, whatever their memory mode."""
        a = self._editable(agent)
        return self.rv.conversations_of(a.name, limit)

    def context_sessions(
        self, agent: str, from_conversation: str | None = None, limit: int = 50
    ) -> list[context.SessionInfo]:
        """As :meth:`Reverie.context_sessions`, for an editor of the agent."""
        self._editable(agent)
        return self.rv.context_sessions(agent, from_conversation, limit)

    def context_read(
        self,
        agent: str | None,
        session: str,
        start: int | None = None,
        end: int | None = None,
        *,
        include_tools: bool = False,
        cursor: str | None = None,
        max_chars: int = 8000,
        from_conversation: str | None = None,
    ) -> context.ReadPage:
        """As :meth:`Reverie.context_read`, for an editor of the conversation's agent."""
        if agent is not None:
            self._editable(agent)
        else:
            self._owner_agent(session)
        return self.rv.context_read(
            agent,
            session,
            start,
            end,
            include_tools=include_tools,
            cursor=cursor,
            max_chars=max_chars,
            from_conversation=from_conversation,
        )

    def context_search(
        self, agent: str, query: str, limit: int = 8, from_conversation: str | None = None
    ) -> list[HistoryHit]:
        """As :meth:`Reverie.context_search`, for an editor of the agent."""
        self._editable(agent)
        return self.rv.context_search(agent, query, limit, from_conversation)

    def session_get(self, conversation_id: str, agent: str | None = None) -> context.SessionDetails:
        """As :meth:`Reverie.session_get`, for an editor of the conversation's agent."""
        self._owner_agent(conversation_id)
        return self.rv.session_get(conversation_id, agent)

    def turn_log(
        self, conversation_id: str, start: int = 0, end: int | None = None
    ) -> list[TurnRecord]:
        """As :meth:`Reverie.turn_log`, for an editor of the conversation's agent."""
        self._owner_agent(conversation_id)
        return self.rv.turn_log(conversation_id, start, end)

    def import_conversations(
        self, lines: Iterable[str], progress: Callable[[int, int], None] | None = None
    ) -> ImportSummary:
        """As :meth:`Reverie.import_conversations`, for an owner or admin (it creates agents)."""
        require_admin(self.member, "import conversations")
        return self.rv.import_conversations(lines, progress)

    def import_records(self, records: Iterable[Any]) -> ImportSummary:
        """As :meth:`Reverie.import_records`, for an owner or admin."""
        require_admin(self.member, "import conversations")
        return self.rv.import_records(records)

    # review (R9)

    def review_run(self, agent: str | None = None, *, force: bool = True) -> list[AgentReport]:
        """Review one agent (its editors) or every agent (owners and admins) now."""
        if agent is None:
            require_admin(self.member, "review every agent at once")
        else:
            self._editable(agent)
        return self.rv.review_run(agent, force=force)

    def review_log(self, agent: str, limit: int = 50) -> list[BatchRecord]:
        """As :meth:`Reverie.review_log`, for an editor of the agent."""
        self._editable(agent)
        return self.rv.review_log(agent, limit)


def by_token(rv: Reverie, token: str | None) -> Actor | None:
    """The member an API token stands for, acting; None when the token is missing, unknown or
    revoked (each surface says so in its own words).

    Raises:
        PermissionDenied: ``inactive_member``: the token is one that works, but its member is
            deactivated. Only a caller holding the token learns this; any other token is None.
    """
    actor = rv.authenticate(token) if token else None
    if actor is None and token:
        held = rv.tokens.holder(token)
        if held is not None and not held[2]:
            raise PermissionDenied(
                "This API token's member is deactivated in this workspace, so the token lets "
                "no one in. An owner can reactivate them (`reverie member set NAME --active`); "
                "nothing was done.",
                code="inactive_member",
            )
    return actor


def session_by_token(rv: Reverie, token: str) -> tuple[Member, str] | None:
    """An admin-page session opened with an API token: its member and the cookie value; None
    when the token is missing, unknown or revoked. Revoking the token ends the session.

    Raises:
        PermissionDenied: ``inactive_member``, as :func:`by_token`.
    """
    actor = by_token(rv, token)
    held = rv.tokens.holder(token) if actor is not None else None
    if actor is None or held is None:  # revoked in between
        return None
    return actor.member, rv.tokens.open_session(actor.member, token_id=held[0])


def _agent_only() -> PermissionDenied:
    return PermissionDenied(
        "Only the agent changes its soul, through its own draft and publish; nothing was changed.",
        code="permission_denied",
    )
