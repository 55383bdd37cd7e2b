"""The JSON API (SPEC 11, 12, 15): agents, memory, conversations and their history, soul,
approvals and review, for the member behind a bearer token.

The quick reads (the member, agents, a memory file, a search: a few indexed reads each) are
``async`` and run on the event loop, saving a thread hop per request (1.5x the searches per
second, ``bench/serve_bench.py``); everything that writes or may take long runs in the thread
pool.

Every route parses, calls the member's :class:`~reverie.access.Actor`, and shapes the answer:
no rule lives here. Memory writes take their expected revision from ``If-Match`` (a stale one
answers 412) or from the body (409), and an ``Idempotency-Key`` header as the write's key (W6,
W7). ``GET`` of a memory file answers its revision as an ``ETag``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from reverie.access import Actor
from reverie.errors import RefusedInput
from reverie.store.instructions import Approval
from reverie.store.souls import SoulVersion
from reverie.store.state import Agent, RevisionRecord
from reverie.store.turns import TurnRecord

from .auth import current_actor
from .errors import ErrorBody

__all__ = ["iso", "router"]

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody} for status in (400, 401, 403, 404, 409, 412, 413, 422, 502, 503)
}
router = APIRouter(prefix="/api", responses=_ERRORS)
Me = Annotated[Actor, Depends(current_actor)]
AgentName = Annotated[str, Path(min_length=1, max_length=80, description="The agent's name.")]


def iso(ts: float | None) -> str | None:
    """A time as ISO 8601 in UTC (``2026-12-01T10:00:00Z``)."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# shapes


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemberOut(_Out):
    name: str
    role: str


class AgentOut(_Out):
    id: str
    name: str
    creator: str | None
    edit_policy: str
    memory_writers: str
    memory_framing: str
    model: str | None
    archived: bool
    created: str | None

    @classmethod
    def of(cls, a: Agent) -> AgentOut:
        return cls(
            id=a.id,
            name=a.name,
            creator=a.creator,
            edit_policy=a.edit_policy,
            memory_writers=a.memory_writers,
            memory_framing=a.memory_framing,
            model=a.default_model,
            archived=a.archived,
            created=iso(a.created_at),
        )


class AgentsOut(_Out):
    agents: list[AgentOut]


class AgentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=80)
    edit_policy: Literal["editors", "all_workspace_members"] = "editors"
    memory_writers: Literal["review_only", "conversations"] = "review_only"
    memory_framing: Literal["guide", "advisory"] = "guide"
    soul: str | None = Field(None, description="The soul's version 1.")


class FileOut(_Out):
    revision: int
    source: str
    text: str


class WriteIn(BaseModel):
    """A batch (``operations``) or, as a fallback, one operation's fields (SPEC W2). Taken as
    JSON sends it: ``true`` or ``"2"`` is no revision."""

    model_config = ConfigDict(extra="forbid", strict=True)
    operations: list[dict[str, Any]] | None = Field(
        None,
        description='[{"action": "add", "text": ..., "section": ...}, {"action": "replace", '
        '"old": ..., "text": ...}, {"action": "remove", "old": ...}, {"action": "write_topic", '
        '"topic": ..., "content": ...}, {"action": "set_body", "text": ...}]',
    )
    message: str | None = None
    expected_revision: int | None = Field(None, ge=0)
    action: str | None = None
    text: str | None = None
    section: str | None = None
    old: str | None = None
    source: str | None = None
    topic: str | None = None
    content: str | None = None


class WriteOut(_Out):
    revision: int
    changed: bool
    paths: list[str]
    diagnostics: list[dict[str, Any]]
    replayed: bool
    #: Only on a replay (W7): that nothing was written this time.
    message: str | None = None


class Hit(_Out):
    source: str
    excerpt: str
    score: float


class HitsOut(_Out):
    results: list[Hit]


class RevisionOut(_Out):
    revision: int
    time: str | None
    writer: str
    message: str
    paths: list[str]
    commit: str
    diff: str | None = None

    @classmethod
    def of(cls, r: RevisionRecord, diff: str | None = None) -> RevisionOut:
        return cls(
            revision=r.revision,
            time=iso(r.created_at),
            writer=r.writer,
            message=r.message,
            paths=r.paths,
            commit=r.oid,
            diff=diff,
        )


class RevisionsOut(_Out):
    revisions: list[RevisionOut]


class DiffOut(_Out):
    from_revision: int
    to_revision: int
    diff: str


class FilesOut(_Out):
    revision: int | None
    files: list[str]


class SessionOut(_Out):
    id: str
    title: str
    created: str | None
    updated: str | None
    messages: int
    chars: int


class SessionsOut(_Out):
    sessions: list[SessionOut]


class MessageOut(_Out):
    position: int
    role: str
    author: str | None
    text: str
    time: str | None
    channel: str | None
    offset: int
    continues: bool


class TurnOut(_Out):
    id: str
    outcome: str
    request_position: int
    answer_position: int | None
    session: str
    memory_revision: int | None
    soul_version: int
    instructions_version: int
    envelope: dict[str, Any]
    tools: list[dict[str, Any]]
    model: str | None
    model_calls: int
    tokens_in: int
    tokens_out: int
    started: str | None
    finished: str | None

    @classmethod
    def of(cls, t: TurnRecord) -> TurnOut:
        return cls(
            id=t.id,
            outcome=t.outcome,
            request_position=t.request_position,
            answer_position=t.answer_position,
            session=t.session_key,
            memory_revision=t.memory_revision,
            soul_version=t.soul_version,
            instructions_version=t.instructions_version,
            envelope=t.envelope,
            tools=t.tools,
            model=t.model,
            model_calls=t.model_calls,
            tokens_in=t.tokens_in,
            tokens_out=t.tokens_out,
            started=iso(t.started_at),
            finished=iso(t.finished_at),
        )


class PageOut(_Out):
    conversation: str
    start: int
    end: int
    messages: list[MessageOut]
    next_cursor: str | None
    tools_omitted: int
    turns: list[TurnOut]


class HistoryHit(_Out):
    conversation: str
    start: int
    end: int
    excerpt: str
    score: float


class HistoryHitsOut(_Out):
    results: list[HistoryHit]


class ImportIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    records: list[dict[str, Any]] = Field(
        description="The lines of `reverie conversations import`, as JSON objects."
    )


class ImportOut(_Out):
    conversations: int
    messages: int
    closed: int


class SoulOut(_Out):
    version: int
    time: str | None
    conversation: str | None
    text: str

    @classmethod
    def of(cls, v: SoulVersion) -> SoulOut:
        return cls(
            version=v.version, time=iso(v.created_at), conversation=v.conversation_id, text=v.text
        )


class SoulsOut(_Out):
    versions: list[SoulOut]


class ApprovalOut(_Out):
    id: str
    agent: str
    kind: str
    channel: str
    conversation: str | None
    mode: str
    text: str
    requested_by: str | None
    state: str
    created: str | None
    decided: str | None
    decided_by: str | None
    comment: str | None
    applied_version: int | None
    memory_revision: int | None
    memory_body: str | None


class ApprovalsOut(_Out):
    approvals: list[ApprovalOut]


class CommentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=4000)


class ReportOut(_Out):
    model_config = ConfigDict(extra="allow")
    agent: str
    batches: int
    commits: int
    model_calls: int
    tokens_in: int
    tokens_out: int
    revision: int


class ReviewOut(_Out):
    agents: list[ReportOut]


class BatchOut(_Out):
    time: str | None
    ranges: list[Any]
    revision: int
    changed: bool
    model_calls: int
    tokens_in: int
    tokens_out: int
    dropped: list[Any]


class BatchesOut(_Out):
    batches: list[BatchOut]


# routes


@router.get("/me", response_model=MemberOut, summary="The member behind the token")
async def me(actor: Me) -> MemberOut:
    return MemberOut(name=actor.member.name, role=actor.member.role)


@router.get("/agents", response_model=AgentsOut, summary="Every agent")
async def list_agents(actor: Me) -> AgentsOut:
    return AgentsOut(agents=[AgentOut.of(a) for a in actor.agents()])


@router.post("/agents", response_model=AgentOut, status_code=201, summary="Create an agent")
def create_agent(actor: Me, body: AgentIn) -> AgentOut:
    return AgentOut.of(actor.create_agent(**body.model_dump()))


@router.get("/agents/{agent}", response_model=AgentOut, summary="One agent")
async def get_agent(actor: Me, agent: AgentName) -> AgentOut:
    return AgentOut.of(actor.agent(agent))


@router.get(
    "/agents/{agent}/memory",
    response_model=FileOut,
    summary="Read MEMORY.md or a topic file, now or at a past revision",
)
async def read_memory(
    actor: Me,
    agent: AgentName,
    response: Response,
    source: Annotated[str | None, Query(max_length=300)] = None,
    revision: Annotated[int | None, Query(ge=0)] = None,
) -> FileOut:
    f = actor.memory_read(agent, source, revision)
    response.headers["ETag"] = f'"{f.revision}"'
    return FileOut(revision=f.revision, source=f.source, text=f.text)


@router.post(
    "/agents/{agent}/memory",
    response_model=WriteOut,
    response_model_exclude_none=True,
    summary="Apply a batch to memory (one revision, all or nothing)",
)
def write_memory(
    request: Request,
    actor: Me,
    agent: AgentName,
    body: WriteIn,
    if_match: Annotated[str | None, Header(description='"N": the revision you read.')] = None,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> WriteOut:
    expected = body.expected_revision
    if if_match is not None:
        from_header = _revision_of(if_match)
        if expected is not None and expected != from_header:
            raise RefusedInput(
                f"If-Match says revision {from_header} and the body says {expected}; send one.",
                code="invalid_operation",
            )
        expected = from_header
        request.state.if_match = True
    fields = body.model_dump(exclude_none=True, exclude={"expected_revision"})
    outcome = actor.memory_apply(
        agent, fields, writer="api", expected_revision=expected, key=idempotency_key
    )
    return WriteOut(**outcome.to_dict())


def _revision_of(header: str) -> int:
    m = re.fullmatch(r'\s*(?:W/)?"?(\d{1,18})"?\s*', header)
    if m is None:
        raise RefusedInput(
            f'If-Match must be the revision you read, as its ETag gives it ("7"), not {header!r}.',
            code="invalid_operation",
        )
    return int(m.group(1))


@router.get("/agents/{agent}/memory/files", response_model=FilesOut, summary="The memory's files")
def memory_files(
    actor: Me, agent: AgentName, revision: Annotated[int | None, Query(ge=0)] = None
) -> FilesOut:
    return FilesOut(revision=revision, files=actor.memory_files(agent, revision))


@router.get("/agents/{agent}/memory/search", response_model=HitsOut, summary="Search memory")
async def search_memory(
    actor: Me,
    agent: AgentName,
    q: Annotated[str, Query(min_length=1, max_length=500, description="The words to find.")],
    limit: Annotated[int, Query(ge=1, le=20)] = 8,
) -> HitsOut:
    hits = actor.memory_search(agent, q, limit)
    return HitsOut(results=[Hit(source=h.source, excerpt=h.excerpt, score=h.score) for h in hits])


@router.get(
    "/agents/{agent}/memory/history", response_model=RevisionsOut, summary="Accepted writes"
)
def memory_history(
    actor: Me,
    agent: AgentName,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before: Annotated[int | None, Query(ge=0)] = None,
) -> RevisionsOut:
    recs = actor.memory_history(agent, limit, before)
    return RevisionsOut(revisions=[RevisionOut.of(r) for r in recs])


@router.get(
    "/agents/{agent}/memory/history/{revision}",
    response_model=RevisionOut,
    summary="One revision with its diff",
)
def memory_revision(
    actor: Me, agent: AgentName, revision: Annotated[int, Path(ge=0)]
) -> RevisionOut:
    rec, diff = actor.memory_revision(agent, revision)
    return RevisionOut.of(rec, diff)


@router.get("/agents/{agent}/memory/diff", response_model=DiffOut, summary="Diff two revisions")
def memory_diff(
    actor: Me,
    agent: AgentName,
    from_revision: Annotated[int, Query(alias="from", ge=0)],
    to_revision: Annotated[int, Query(alias="to", ge=0)],
) -> DiffOut:
    diff = actor.memory_diff(agent, from_revision, to_revision)
    return DiffOut(from_revision=from_revision, to_revision=to_revision, diff=diff)


@router.post("/conversations/import", response_model=ImportOut, summary="Import conversations")
def import_conversations(actor: Me, body: ImportIn) -> ImportOut:
    summary = actor.import_records(body.records)
    return ImportOut(**summary.to_dict())


@router.get(
    "/agents/{agent}/sessions", response_model=SessionsOut, summary="Memory-on conversations"
)
def sessions(
    actor: Me, agent: AgentName, limit: Annotated[int, Query(ge=1, le=200)] = 50
) -> SessionsOut:
    found = actor.context_sessions(agent, None, limit)
    return SessionsOut(
        sessions=[
            SessionOut(
                id=s.id,
                title=s.title,
                created=iso(s.created_at),
                updated=iso(s.updated_at),
                messages=s.messages,
                chars=s.chars,
            )
            for s in found
        ]
    )


@router.get(
    "/conversations/{conversation}/messages",
    response_model=PageOut,
    summary="Read a range of a conversation, with each turn's audit",
)
def read_conversation(
    actor: Me,
    conversation: Annotated[str, Path(min_length=1, max_length=128)],
    start: Annotated[int | None, Query(ge=0)] = None,
    end: Annotated[int | None, Query(ge=0)] = None,
    include_tools: bool = False,
    cursor: Annotated[str | None, Query(max_length=1000)] = None,
    max_chars: Annotated[int, Query(ge=100, le=100_000)] = 8000,
) -> PageOut:
    page = actor.context_read(
        None,
        conversation,
        start,
        end,
        include_tools=include_tools,
        cursor=cursor,
        max_chars=max_chars,
    )
    turns = [
        TurnOut.of(t)
        for t in actor.turn_log(page.conversation)
        if page.start <= (t.answer_position or t.request_position) < page.end
    ]
    return PageOut(
        conversation=page.conversation,
        start=page.start,
        end=page.end,
        messages=[
            MessageOut(
                position=m.position,
                role=m.role,
                author=m.author,
                text=m.text,
                time=iso(m.time),
                channel=m.channel,
                offset=m.offset,
                continues=m.continues,
            )
            for m in page.messages
        ],
        next_cursor=page.next_cursor,
        tools_omitted=page.tools_omitted,
        turns=turns,
    )


@router.get(
    "/agents/{agent}/history/search",
    response_model=HistoryHitsOut,
    summary="Search the agent's memory-on conversations",
)
def search_history(
    actor: Me,
    agent: AgentName,
    q: Annotated[str, Query(min_length=1, max_length=500)],
    limit: Annotated[int, Query(ge=1, le=20)] = 8,
) -> HistoryHitsOut:
    hits = actor.context_search(agent, q, limit)
    return HistoryHitsOut(
        results=[
            HistoryHit(
                conversation=h.conversation,
                start=h.start,
                end=h.end,
                excerpt=h.excerpt,
                score=h.score,
            )
            for h in hits
        ]
    )


@router.get("/agents/{agent}/soul", response_model=SoulOut, summary="The agent's soul")
def soul(
    actor: Me, agent: AgentName, version: Annotated[int | None, Query(ge=0)] = None
) -> SoulOut:
    return SoulOut.of(actor.soul(agent, version))


@router.get("/agents/{agent}/soul/versions", response_model=SoulsOut, summary="Soul versions")
def soul_versions(actor: Me, agent: AgentName) -> SoulsOut:
    return SoulsOut(versions=[SoulOut.of(v) for v in actor.soul_history(agent)])


def approval_out(actor: Actor, a: Approval) -> ApprovalOut:
    """An approval as the API and admin page show it."""
    names = {x.id: x.name for x in actor.rv.agents()}
    return ApprovalOut(
        id=a.id,
        agent=names.get(a.agent_id, a.agent_id),
        kind=a.kind,
        channel=a.channel_id,
        conversation=a.conversation_id,
        mode=a.mode,
        text=a.text,
        requested_by=a.requested_by,
        state=a.status,
        created=iso(a.created_at),
        decided=iso(a.decided_at),
        decided_by=a.decided_by,
        comment=a.comment,
        applied_version=a.applied_version,
        memory_revision=a.memory_revision,
        memory_body=a.memory_body,
    )


@router.get("/approvals", response_model=ApprovalsOut, summary="Approvals you may decide")
def approvals(
    actor: Me,
    agent: Annotated[str | None, Query(max_length=80)] = None,
    state: Literal["pending", "approved", "denied", "commented", "all"] = "pending",
) -> ApprovalsOut:
    found = actor.approvals(agent, None if state == "all" else state)
    return ApprovalsOut(approvals=[approval_out(actor, a) for a in found])


@router.post(
    "/approvals/{approval}/approve",
    response_model=ApprovalOut,
    summary="Approve: apply exactly the proposed change, once",
)
def approve(actor: Me, approval: Annotated[str, Path(max_length=64)]) -> ApprovalOut:
    return approval_out(actor, actor.approve(approval))


@router.post("/approvals/{approval}/deny", response_model=ApprovalOut, summary="Deny")
def deny(actor: Me, approval: Annotated[str, Path(max_length=64)]) -> ApprovalOut:
    return approval_out(actor, actor.deny(approval))


@router.post(
    "/approvals/{approval}/comment", response_model=ApprovalOut, summary="Comment (cancels)"
)
def comment(
    actor: Me, approval: Annotated[str, Path(max_length=64)], body: CommentIn
) -> ApprovalOut:
    return approval_out(actor, actor.comment(approval, body.text))


@router.post("/agents/{agent}/reviews", response_model=ReviewOut, summary="Review now")
def review_now(actor: Me, agent: AgentName) -> ReviewOut:
    return ReviewOut(agents=[ReportOut(**r.to_dict()) for r in actor.review_run(agent)])


@router.get(
    "/agents/{agent}/reviews", response_model=BatchesOut, summary="Review batches, newest first"
)
def reviews(
    actor: Me, agent: AgentName, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> BatchesOut:
    return BatchesOut(
        batches=[
            BatchOut(
                time=iso(b.created_at),
                ranges=list(b.ranges),
                revision=b.revision,
                changed=b.changed,
                model_calls=b.model_calls,
                tokens_in=b.tokens_in,
                tokens_out=b.tokens_out,
                dropped=list(b.dropped),
            )
            for b in actor.review_log(agent, limit)
        ]
    )
