"""The agent's tools, each defined once (SPEC 5, 7, 8, 9, 12, 13): name, input schema,
description for the model, and a handler that calls the facade.

The run loop offers these to the model; the MCP server and the HTTP API expose the same
definitions. A handler only translates: limits, permissions and refusals come from the core
(the facade and the stores below it), so a rule is never re-implemented here. What a handler
returns is JSON for the model; a refusal becomes ``{"error": {"code", "message", ...}}``
with the core's stable code, never an exception in the loop.

Which tools a turn gets is decided at its start (:meth:`Registry.offered`): a memory-off
conversation gets no memory tools (M4), ``update_channel_memory`` is offered only where
conversations may write memory (W10), and host tools (connectors) join the list. A call to a
tool that was not offered is refused. An external write (a host tool with ``effect =
"external_write"``) also needs a matching intent in the turn's envelope (X2,
:mod:`reverie.runtime.policy`).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reverie.errors import PermissionDenied, RefusedInput, ReverieError
from reverie.llm.chat import ToolCall, ToolSpec

from .policy import PolicyEnvelope, check_external_write

__all__ = [
    "BUILTIN_TOOLS",
    "MEMORY_TOOLS",
    "Registry",
    "Services",
    "Tool",
    "ToolContext",
    "ToolOutcome",
    "default_registry",
]

log = logging.getLogger(__name__)

#: The tools that read or write memory or the history of other conversations (M4, O3).
MEMORY_TOOLS = frozenset(
    {
        "search_channel_memory",
        "read_channel_memory",
        "update_channel_memory",
        "context_sessions",
        "context_read",
    }
)


class Services(Protocol):
    """The facade methods the tools call (``reverie.api.Reverie`` provides them)."""

    def memory_search(
        self, agent: str, query: str, limit: int = 8, *, from_conversation: str | None = None
    ) -> Any: ...
    def memory_read(
        self,
        agent: str,
        source: str | None = None,
        revision: int | None = None,
        *,
        from_conversation: str | None = None,
    ) -> Any: ...
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
    ) -> Any: ...
    def propose_instructions(
        self, conversation_id: str, text: str, mode: str = "append", *, author: str | None
    ) -> Any: ...
    def context_sessions(
        self, agent: str, from_conversation: str | None = None, limit: int = 50
    ) -> Any: ...
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
    ) -> Any: ...
    def session_get(self, conversation_id: str, agent: str | None = None) -> Any: ...
    def notify(self, conversation_id: str, text: str, *, task: str, call_id: str) -> Any: ...
    def soul(self, agent: str, version: int | None = None) -> Any: ...
    def soul_draft(self, agent: str, conversation_id: str) -> Any: ...
    def soul_edit(self, agent: str, conversation_id: str, request: Any) -> Any: ...
    def soul_publish(self, agent: str, conversation_id: str) -> Any: ...


@dataclass
class ToolContext:
    """Who is calling, from where, within which turn."""

    services: Services
    agent: str
    #: The conversation of the turn; None for a person's call (MCP), which has none.
    conversation: str | None
    envelope: PolicyEnvelope
    #: The memory revision the turn is bound to (P3); the turn's own writes move it.
    bound_revision: int | None = None
    #: The id of the call being handled (idempotency keys, notify counts).
    call_id: str = ""

    @property
    def author(self) -> str | None:
        """The member who wrote the current request, if known."""
        return self.envelope.author

    def in_conversation(self) -> str:
        """The turn's conversation, for the tools that only make sense inside one.

        Raises:
            RefusedInput: ``tool_not_available`` outside a conversation.
        """
        if self.conversation is None:
            raise RefusedInput(
                "This tool works inside a conversation only.", code="tool_not_available"
            )
        return self.conversation


Handler = Callable[[ToolContext, Any], dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    """One tool: what the model sees and what runs when it calls it."""

    name: str
    description: str
    #: The arguments, as a pydantic model: its JSON Schema is what the model sees, and it
    #: validates what the model sends.
    arguments: type[BaseModel]
    handler: Handler
    #: ``read``, ``write`` (inside Reverie) or ``external_write`` (changes something outside:
    #: needs a matching intent, X2).
    effect: Literal["read", "write", "external_write"] = "read"
    #: For an external write: the intent that authorizes it and the words of a request that
    #: state it.
    intent: str | None = None
    intent_words: tuple[str, ...] = ()

    @functools.cached_property
    def spec(self) -> ToolSpec:
        """The tool as a model sees it (built once: a JSON Schema takes pydantic a while)."""
        return ToolSpec(self.name, self.description, schema_of(self.arguments))


@dataclass(frozen=True)
class ToolOutcome:
    """A handled call: what goes back to the model, and how it ended (for the audit)."""

    call: ToolCall
    payload: dict[str, Any]
    code: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the call did what it was asked."""
        return self.code is None

    def content(self) -> str:
        """The payload as the tool message the model reads."""
        return json.dumps(self.payload, ensure_ascii=False, default=str)


@dataclass
class Registry:
    """A set of tools by name."""

    tools: dict[str, Tool] = field(default_factory=dict)

    def add(self, tool: Tool) -> None:
        """Register a tool.

        Raises:
            RefusedInput: ``invalid_tool`` when the name is taken, or an external write
                names no intent.
        """
        if tool.name in self.tools:
            raise RefusedInput(f"A tool named {tool.name} exists already.", code="invalid_tool")
        if tool.effect == "external_write" and not tool.intent:
            raise RefusedInput(
                f"{tool.name} is an external write: it must name the intent that authorizes it.",
                code="invalid_tool",
            )
        self.tools[tool.name] = tool

    def with_tools(self, extra: Iterable[Tool]) -> Registry:
        """A copy with host tools added."""
        copy = Registry(dict(self.tools))
        for tool in extra:
            copy.add(tool)
        return copy

    def offered(self, *, memory_on: bool, memory_writable: bool) -> list[Tool]:
        """The tools a turn offers: no memory tools where memory is off (M4), no
        ``update_channel_memory`` where review alone writes memory (W10)."""
        out = []
        for tool in self.tools.values():
            if tool.name in MEMORY_TOOLS and not memory_on:
                continue
            if tool.name == "update_channel_memory" and not memory_writable:
                continue
            out.append(tool)
        return out

    def intents(self) -> list[tuple[str, tuple[str, ...]]]:
        """The ``(intent, words)`` each external write declares."""
        return [(t.intent, t.intent_words) for t in self.tools.values() if t.intent]

    def call(self, ctx: ToolContext, call: ToolCall, offered: Sequence[Tool]) -> ToolOutcome:
        """Run one call the model made; every refusal becomes an error payload."""
        ctx.call_id = call.id
        tool = next((t for t in offered if t.name == call.name), None)
        try:
            if tool is None:
                raise PermissionDenied(
                    f"There is no tool {call.name!r} in this conversation; use one of: "
                    f"{', '.join(t.name for t in offered) or 'none'}.",
                    code="tool_not_available",
                    tool=call.name,
                )
            if call.arguments is None:
                raise RefusedInput(
                    f"The arguments of {call.name} were not a JSON object; send them again as one.",
                    code="invalid_arguments",
                )
            if tool.effect == "external_write":
                assert tool.intent is not None
                check_external_write(ctx.envelope, tool.name, tool.intent)
            args = _validate(tool, call.arguments)
            payload = tool.handler(ctx, args)
        except ReverieError as exc:
            return ToolOutcome(call, {"error": exc.to_dict()}, exc.code)
        except Exception:
            # A bug in a handler must not end the turn with a traceback; the model is told.
            log.exception("tool %s failed", call.name)
            return ToolOutcome(
                call,
                {"error": {"code": "tool_failed", "message": f"{call.name} failed unexpectedly."}},
                "tool_failed",
            )
        return ToolOutcome(call, payload)


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """A pydantic model's JSON Schema as a model reads it: no titles, no extra keys."""
    schema: dict[str, Any] = _strip_titles(model.model_json_schema())
    schema["additionalProperties"] = False
    schema.setdefault("properties", {})
    return schema


def _strip_titles(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_titles(v) for k, v in value.items() if k != "title"}
    if isinstance(value, list):
        return [_strip_titles(v) for v in value]
    return value


def _validate(tool: Tool, arguments: dict[str, Any]) -> Any:
    try:
        return tool.arguments.model_validate(arguments)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        raise RefusedInput(
            f"{tool.name}: {where}: {first['msg']}. Fix the arguments and call again.",
            code="invalid_arguments",
            field=where,
        ) from None


# The built-in tools --------------------------------------------------------------------------


class _Args(BaseModel):
    # Taken as JSON sends them: a model that sends ``true`` for a number or ``"3"`` for a
    # revision is told so (invalid_arguments), rather than having it read as 1 or 3.
    model_config = ConfigDict(extra="forbid", strict=True)


class SearchArgs(_Args):
    query: str = Field(
        min_length=1,
        max_length=500,
        description="The words to look for: names, nouns, key terms (not a whole question).",
    )
    limit: int = Field(8, ge=1, le=20, description="How many hits, 1 to 20.")


class ReadArgs(_Args):
    source: str = Field(
        "MEMORY.md", description="MEMORY.md, or a topic file memory/<name>.md that it links."
    )
    revision: int | None = Field(
        None, ge=0, description="A past revision to read; leave out for the current one."
    )


class UpdateArgs(_Args):
    operations: list[dict[str, Any]] = Field(
        min_length=1,
        description=(
            "Applied all together or not at all. Each is one of: "
            '{"action": "add", "text": "<the entry>", "section": "<People & preferences | '
            'Decisions | Environment & gotchas | Project state>"}; '
            '{"action": "replace", "old": "<a unique part of the line>", "text": "<the whole '
            'new line>"}; {"action": "remove", "old": "<a part of the lines to remove>"}; '
            '{"action": "write_topic", "topic": "<name>", "content": "<the whole file>"}. '
            'replace and remove take "source": "memory/<name>.md" for a topic file.'
        ),
    )
    message: str | None = Field(None, max_length=300, description="Why, in a few words.")
    expected_revision: int | None = Field(
        None, ge=0, description="Refuse unless memory is still at this revision."
    )


class InstructionsArgs(_Args):
    text: str = Field(
        min_length=1,
        max_length=2400,
        description="The instruction text to add (append) or the whole new text (replace).",
    )
    mode: Literal["append", "replace"] = Field(
        "append", description="append adds to the instructions; replace (admins only) rewrites."
    )


class SessionsArgs(_Args):
    limit: int = Field(20, ge=1, le=200, description="How many conversations, newest first.")


class ContextReadArgs(_Args):
    session: str = Field(description="The conversation id, as context_sessions lists it.")
    start: int | None = Field(None, ge=0, description="First position (0-based, included).")
    end: int | None = Field(None, ge=0, description="Position to stop before (excluded).")
    include_tools: bool = Field(False, description="Also show tool logs.")
    cursor: str | None = Field(
        None, description="next_cursor of the previous page, to continue (alone)."
    )


class NoArgs(_Args):
    pass


class NotifyArgs(_Args):
    text: str = Field(min_length=1, description="The message, at most 3,500 characters.")


class SoulArgs(_Args):
    version: int | None = Field(
        None, ge=0, description="A past version to read; leave out for the current one."
    )


class SoulEditArgs(_Args):
    operations: list[dict[str, Any]] = Field(
        min_length=1,
        description=(
            'Applied together or not at all: {"action": "add", "text": "...", "section": '
            '"<heading>"}, {"action": "replace", "old": "<a unique part of a line>", '
            '"text": "<the whole new line>"}, {"action": "remove", "old": "..."}, or '
            '{"action": "set_body", "text": "<the whole soul>"}.'
        ),
    )


def _search(ctx: ToolContext, a: SearchArgs) -> dict[str, Any]:
    hits = ctx.services.memory_search(
        ctx.agent, a.query, a.limit, from_conversation=ctx.conversation
    )
    results = [{"source": h.source, "excerpt": h.excerpt} for h in hits]
    out: dict[str, Any] = {"results": results}
    if not results:
        out["hint"] = "No match. Try other words (a name, a noun), or read MEMORY.md."
    return out


def _read(ctx: ToolContext, a: ReadArgs) -> dict[str, Any]:
    f = ctx.services.memory_read(
        ctx.agent, a.source, a.revision, from_conversation=ctx.conversation
    )
    return {"source": f.source, "revision": f.revision, "text": f.text}


def _update(ctx: ToolContext, a: UpdateArgs) -> dict[str, Any]:
    request: dict[str, Any] = {"operations": a.operations}
    if a.message:
        request["message"] = a.message
    expected = a.expected_revision if a.expected_revision is not None else ctx.bound_revision
    outcome = ctx.services.memory_apply(
        ctx.agent,
        request,
        writer="agent",
        expected_revision=expected,
        key=f"{ctx.envelope.turn}:{ctx.call_id}",
        from_conversation=ctx.conversation,
    )
    if outcome.changed and ctx.bound_revision is not None:
        ctx.bound_revision = outcome.revision  # the turn's own write keeps it current (P3)
    return {"saved": outcome.changed, **outcome.to_dict()}


def _instructions(ctx: ToolContext, a: InstructionsArgs) -> dict[str, Any]:
    approval = ctx.services.propose_instructions(
        ctx.in_conversation(), a.text, a.mode, author=ctx.author
    )
    return {
        "approval_id": approval.id,
        "status": approval.status,
        "message": "Pending: nothing changes until a person approves it. Tell the user it "
        f"waits for approval ({approval.id}); do not say it is done.",
    }


def _sessions(ctx: ToolContext, a: SessionsArgs) -> dict[str, Any]:
    sessions = ctx.services.context_sessions(ctx.agent, ctx.conversation, a.limit)
    return {"sessions": [s.__dict__ for s in sessions]}


def _context_read(ctx: ToolContext, a: ContextReadArgs) -> dict[str, Any]:
    page = ctx.services.context_read(
        ctx.agent,
        a.session,
        a.start,
        a.end,
        include_tools=a.include_tools,
        cursor=a.cursor,
        from_conversation=ctx.conversation,
    )
    return {
        "conversation": page.conversation,
        "start": page.start,
        "end": page.end,
        "messages": [
            {"position": m.position, "role": m.role, "author": m.author, "text": m.text}
            for m in page.messages
        ],
        "next_cursor": page.next_cursor,
        "tools_omitted": page.tools_omitted,
    }


def _session_get(ctx: ToolContext, a: NoArgs) -> dict[str, Any]:
    details: dict[str, Any] = ctx.services.session_get(ctx.in_conversation(), ctx.agent).to_dict()
    return details


def _notify(ctx: ToolContext, a: NotifyArgs) -> dict[str, Any]:
    sent = ctx.services.notify(
        ctx.in_conversation(), a.text, task=ctx.envelope.turn, call_id=ctx.call_id
    )
    return {
        "queued": [{"delivery": d.id, "chat": d.channel_id} for d in sent],
        "message": "Sent to the chats above. Your final answer is delivered without notify.",
    }


def _read_soul(ctx: ToolContext, a: SoulArgs) -> dict[str, Any]:
    soul = ctx.services.soul(ctx.agent, a.version)
    draft = ctx.services.soul_draft(ctx.agent, ctx.in_conversation())
    out: dict[str, Any] = {"version": soul.version, "text": soul.text}
    if a.version is None and (draft.text != soul.text or draft.base_version != soul.version):
        out["draft"] = draft.to_dict()
    return out


def _edit_soul(ctx: ToolContext, a: SoulEditArgs) -> dict[str, Any]:
    draft = ctx.services.soul_edit(ctx.agent, ctx.in_conversation(), {"operations": a.operations})
    return {
        "draft": draft.to_dict(),
        "message": "Draft saved for this conversation; nothing is published until publish_soul.",
    }


def _publish_soul(ctx: ToolContext, a: NoArgs) -> dict[str, Any]:
    receipt = ctx.services.soul_publish(ctx.agent, ctx.in_conversation())
    note = (
        f"Published as version {receipt.version}; it applies from your next run."
        if receipt.changed
        else f"The draft equals version {receipt.version}; nothing new was published."
    )
    return {**receipt.to_dict(), "message": note}


BUILTIN_TOOLS: tuple[Tool, ...] = (
    Tool(
        "search_channel_memory",
        "Search your memory (MEMORY.md and its topic files) for lines that match words. Use it "
        "before answering anything about the people, preferences, decisions, environment or "
        "projects of this workspace, and always before saying you don't know. Returns ranked "
        "hits, each with its file (source) and the matching lines; open a file with "
        "read_channel_memory for the context. It matches words, not meaning: use key nouns "
        "and names, and try other words if nothing matches. Errors: memory_off (memory is not "
        "available in this conversation: answer without it).",
        SearchArgs,
        _search,
    ),
    Tool(
        "read_channel_memory",
        "Read one memory file: MEMORY.md (the index; the default) or a topic file "
        "memory/<name>.md that the index links as [[memory/<name>.md]]. Read MEMORY.md in full "
        "when the index in your prompt ends with a notice that it was cut. Returns the text and "
        "the revision it was read at. Errors: invalid_path (only MEMORY.md and "
        "memory/<name>.md exist), not_found (no such file or revision: search instead), "
        "memory_off.",
        ReadArgs,
        _read,
    ),
    Tool(
        "update_channel_memory",
        "Write to memory yourself, as one all-or-nothing batch: add an entry, replace or "
        "remove a line, or write a topic file. Use it when the person asks you to remember or "
        "correct something; otherwise say the fact in your reply and review keeps it. Only an "
        "answer with a revision means it was saved. Errors: no_match or ambiguous_match (quote "
        "a unique part of the existing line in old), memory_credential_rejected (never store a "
        "secret: note where it is kept instead), revision_conflict (memory changed: read it "
        "again), memory_read_only (review writes this memory: say the fact in your reply). "
        "After three refusals in a row, stop retrying and tell the person what could not be "
        "saved.",
        UpdateArgs,
        _update,
        effect="write",
    ),
    Tool(
        "update_channel_instructions",
        "Propose a change to this channel's standing instructions: how you should work here "
        "(format, tone, process), not facts about people or projects (those belong in "
        "memory). A person must approve it and nothing changes until then: tell the person it "
        "waits for approval, with its id, never that it is done. mode append adds to the "
        "instructions (the person asking must be a workspace member admitted to this "
        "channel); replace rewrites them (admins only). At most 2,400 characters, no ``` "
        "fences. Errors: permission_denied (say who may ask), invalid_instructions.",
        InstructionsArgs,
        _instructions,
        effect="write",
    ),
    Tool(
        "context_sessions",
        "List your earlier conversations that have memory on (id, title, times, number of "
        "messages), newest first, to find where something was discussed; open one with "
        "context_read. Errors: memory_off.",
        SessionsArgs,
        _sessions,
    ),
    Tool(
        "context_read",
        "Read messages of one earlier conversation: positions start (included) to end "
        "(excluded), counted from 0. Tool logs are left out unless include_tools. A long read "
        "comes a page at a time: pass next_cursor back as cursor, alone, to continue. A memory "
        "entry's source such as (source: c-7#12-14) is read with session c-7, start 12, end "
        "14. Errors: not_found (no such conversation of yours), conversation_deleted, "
        "memory_off (a group conversation: its history stays private), invalid_range.",
        ContextReadArgs,
        _context_read,
    ),
    Tool(
        "session_get",
        "Details of the current conversation: its chat and kind, linked chats, title, model, "
        "whether memory is on, and what started the current task.",
        NoArgs,
        _session_get,
    ),
    Tool(
        "notify",
        "Send a short message to the people in this conversation's chats now, before your "
        "final answer: progress on long work, or something they must see at once. Your final "
        "answer is delivered without it, so do not repeat it here. At most 3,500 characters "
        "and 10 per task. From a web session it reaches every chat you are admitted to; from "
        "an automation or a sub-session, only that run's chat. Never put a secret in it. "
        "Errors: notify_too_long, notify_limit, notify_credential_rejected (it held a "
        "credential: nothing was sent; say where the secret is kept instead).",
        NotifyArgs,
        _notify,
        effect="write",
    ),
    Tool(
        "read_soul",
        "Read your soul: your role, personality, tone and lasting working rules, as "
        "published (the current version, or a past one), with your unpublished draft in this "
        "conversation if you are editing one.",
        SoulArgs,
        _read_soul,
    ),
    Tool(
        "edit_soul_draft",
        "Edit your private soul draft in this conversation, with the operations of memory: "
        "add, replace, remove, or set_body for the whole text. Nothing changes until "
        "publish_soul. The soul is who you are and how you work; facts about people and "
        "projects belong in memory. Errors: no_match, ambiguous_match, "
        "memory_credential_rejected, soul_too_large.",
        SoulEditArgs,
        _edit_soul,
        effect="write",
    ),
    Tool(
        "publish_soul",
        "Publish your soul draft as the next version. Only a version number in the answer "
        "means it was saved; it applies from your next run. If another version was published "
        "since your draft started, nothing is published and your draft is reset to the "
        "current text (soul_version_conflict): read it, redo your edits, publish again.",
        NoArgs,
        _publish_soul,
        effect="write",
    ),
)


def default_registry() -> Registry:
    """A registry holding the built-in tools."""
    registry = Registry()
    for tool in BUILTIN_TOOLS:
        registry.add(tool)
    return registry
