"""Reverie as an MCP server (SPEC A2, 11), with the official ``mcp`` SDK.

Tools, for the member the connection stands for (over stdio, ``reverie mcp``: the home's owner;
over streamable HTTP under ``reverie serve``: the owner of the bearer token):

* ``inspect_memory(agent)``: the memory body and its revision, to those who may edit the agent;
* ``update_agent_memory(agent, body, expected_revision, instructions?)``: replace the body
  (``revision_conflict`` when memory moved), or, bundled with an instruction change, one
  proposal that waits for approval (A2);
* the channel-memory and context tools of the agent's own registry
  (:mod:`reverie.runtime.tools`), each with an ``agent`` argument added: the same definitions,
  descriptions and rules an agent's turn gets.

Every call goes through :class:`~reverie.access.Actor`, so A1 holds here as on every surface. A
refusal is a tool error whose text is the JSON error (``{"error": {"code", "message"}}``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reverie import __version__
from reverie.access import Actor
from reverie.api import Reverie
from reverie.errors import RefusedInput, ReverieError, shown
from reverie.llm.chat import ToolCall
from reverie.runtime.policy import PolicyEnvelope
from reverie.runtime.tools import Tool, ToolContext, schema_of

__all__ = ["MCP_TOOLS", "build_server"]

#: The registry tools MCP exposes (memory and history: what a person's assistant needs).
REGISTRY_TOOLS = (
    "search_channel_memory",
    "read_channel_memory",
    "context_sessions",
    "context_read",
)

INSTRUCTIONS = (
    "Reverie keeps each agent's durable memory: MEMORY.md (an index with sections) and topic "
    "files, in git, with a revision number per write. Read before you write: call "
    "inspect_memory, change only what you mean to, and send the revision you read as "
    "expected_revision."
)

#: Who a request acts as: the connection's member, resolved per call.
Resolver = Callable[[Any], Actor]


#: Arguments are taken as JSON sends them: ``true`` is no revision and ``"3"`` no number.
_STRICT = ConfigDict(extra="forbid", strict=True)
#: An agent's name, a channel id or a key longer than this is no such thing.
_NAME_CHARS = 200


class InstructionChange(BaseModel):
    model_config = _STRICT
    channel: str = Field(
        min_length=1,
        max_length=_NAME_CHARS,
        description="The chat whose instructions change: its channel id, as Reverie names it "
        "(a Slack channel is slack:C0123ABCD).",
    )
    text: str = Field(min_length=1, max_length=2400, description="The instruction text.")
    mode: str = Field("append", description="append, or replace (admins only).")


class InspectArgs(BaseModel):
    model_config = _STRICT
    agent: str = Field(min_length=1, max_length=_NAME_CHARS, description="The agent's name.")


class UpdateArgs(BaseModel):
    model_config = _STRICT
    agent: str = Field(min_length=1, max_length=_NAME_CHARS, description="The agent's name.")
    body: str = Field(
        description="The whole new MEMORY.md: what inspect_memory returned, with your change. "
        "An empty body clears the memory."
    )
    expected_revision: int = Field(
        ge=0, description="The revision inspect_memory returned; refused if memory moved since."
    )
    instructions: InstructionChange | None = Field(
        None,
        description="An instruction change to bundle with this memory change: then nothing "
        "applies until a person approves both.",
    )
    idempotency_key: str | None = Field(
        None,
        min_length=1,
        max_length=_NAME_CHARS,
        description="Any string unique to this change: a call sent again with the same key "
        "and body (a retry after a lost answer) returns the first answer instead of "
        "revision_conflict, and writes nothing twice.",
    )


INSPECT_DESCRIPTION = (
    "Read an agent's whole memory index (MEMORY.md) and its revision. Call it before "
    "update_agent_memory and send the revision back as expected_revision. Only people who may "
    "edit the agent (its creator, owners, admins, or everyone when the agent allows) can read "
    "it: otherwise permission_denied."
)
UPDATE_DESCRIPTION = (
    "Replace an agent's MEMORY.md with a new body, as one revision. Read it first with "
    "inspect_memory and keep every line you do not mean to change: what you send replaces the "
    "whole file. Send the revision you read as expected_revision; if memory moved since, "
    "nothing is written and the answer is revision_conflict with the current revision: read "
    "again and redo your change. Secrets are refused (memory_credential_rejected): memory is "
    "read into prompts and kept in git history. With instructions, the memory change and the "
    "instruction change become one proposal that a person must approve; nothing applies until "
    "then."
)


def build_server(rv: Reverie, resolve: Resolver) -> Server[Any]:
    """The MCP server over ``rv``; ``resolve(ctx)`` gives the member a call acts as."""
    registry = {t.name: t for t in rv.tools.tools.values() if t.name in REGISTRY_TOOLS}
    tools = [
        types.Tool(
            name="inspect_memory",
            description=INSPECT_DESCRIPTION,
            input_schema=schema_of(InspectArgs),
            annotations=_READ_ONLY,
        ),
        types.Tool(
            name="update_agent_memory",
            description=UPDATE_DESCRIPTION,
            input_schema=schema_of(UpdateArgs),
            annotations=types.ToolAnnotations(
                read_only_hint=False, destructive_hint=True, open_world_hint=False
            ),
        ),
        *(_with_agent(t) for t in registry.values()),
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})

        def run() -> dict[str, Any]:
            actor = resolve(ctx)
            if params.name == "inspect_memory":
                return _inspect(actor, InspectArgs.model_validate(arguments))
            if params.name == "update_agent_memory":
                return _update(actor, UpdateArgs.model_validate(arguments))
            tool = registry.get(params.name)
            if tool is None:
                raise RefusedInput(
                    f"No tool {params.name!r}; the tools are {', '.join(MCP_TOOLS)}.",
                    code="tool_not_available",
                )
            return _registry_call(actor, tool, arguments)

        try:
            payload = await anyio.to_thread.run_sync(run)
        except ReverieError as exc:
            return _error(exc.to_dict())
        except ValidationError as exc:
            first = exc.errors()[0]
            # The field may be a key the caller made up: said as an error says what was sent.
            where = shown(".".join(str(p) for p in first["loc"]) or "arguments", 200)
            return _error(
                {
                    "code": "invalid_arguments",
                    "message": f"{shown(params.name, 200)}: {where}: {first['msg']}. Fix the "
                    "arguments and call again.",
                    "field": where,
                }
            )
        if "error" in payload:
            return _error(payload["error"])
        text = json.dumps(payload, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=payload
        )

    return Server(
        "reverie",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


MCP_TOOLS = ("inspect_memory", "update_agent_memory", *REGISTRY_TOOLS)


def _error(error: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps({"error": error}, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


_READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)


class _AgentArg(BaseModel):
    """The ``agent`` argument MCP adds to a registry tool's own."""

    model_config = ConfigDict(strict=True)
    agent: str = Field(
        min_length=1,
        max_length=_NAME_CHARS,
        description="The agent whose memory or history this is.",
    )


def _with_agent(tool: Tool) -> types.Tool:
    schema = dict(tool.spec.parameters)
    schema["properties"] = {
        **schema_of(_AgentArg)["properties"],
        **schema.get("properties", {}),
    }
    schema["required"] = ["agent", *schema.get("required", [])]
    return types.Tool(
        name=tool.name, description=tool.description, input_schema=schema, annotations=_READ_ONLY
    )


def _inspect(actor: Actor, args: InspectArgs) -> dict[str, Any]:
    f = actor.memory_read(args.agent)
    return {"agent": args.agent, "revision": f.revision, "body": f.text}


def _update(actor: Actor, args: UpdateArgs) -> dict[str, Any]:
    if args.instructions is not None:
        approval = actor.propose_bundle(
            args.agent,
            body=args.body,
            expected_revision=args.expected_revision,
            channel_id=args.instructions.channel,
            instructions=args.instructions.text,
            mode=args.instructions.mode,
        )
        return {
            "status": "pending_approval",
            "approval_id": approval.id,
            "message": "Nothing changed yet: a person must approve this proposal "
            f"({approval.id}) before the memory and the instructions change.",
        }
    try:
        outcome = actor.memory_apply(
            args.agent,
            {"action": "set_body", "text": args.body},
            writer="mcp",
            expected_revision=args.expected_revision,
            key=args.idempotency_key,
        )
    except RefusedInput as exc:
        raise _about_body(exc) from None
    status = "already_applied" if outcome.replayed else "saved" if outcome.changed else "unchanged"
    return {"status": status, **outcome.to_dict()}


#: The field the store names when it refuses the body this tool writes as one operation.
_BODY_FIELD = "operations[0].text"


def _about_body(exc: RefusedInput) -> RefusedInput:
    """The store's refusal of the one operation ``update_agent_memory`` sends, in the tool's
    own words: ``body``, the argument the caller sent, not the batch's field."""
    if exc.details.get("field") != _BODY_FIELD:
        return exc
    details = {**exc.details, "field": "body"}
    return RefusedInput(exc.message.replace(_BODY_FIELD, "body"), code=exc.code, **details)


def _registry_call(actor: Actor, tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    agent = _AgentArg.model_validate(
        {"agent": arguments.pop("agent")} if "agent" in arguments else {}
    ).agent
    actor.agent(agent)  # NotFound before anything else
    envelope = PolicyEnvelope(
        turn="mcp-" + uuid.uuid4().hex[:10],
        conversation="",
        author=actor.member.name,
        channel_kind="mcp",
        memory_injected=False,
        memory_revision=None,
        intents=(),
    )
    ctx = ToolContext(actor, agent, None, envelope)
    call = ToolCall(envelope.turn, tool.name, arguments, json.dumps(arguments))
    outcome = actor.rv.tools.call(ctx, call, [tool])
    return outcome.payload


def owner_resolver(rv: Reverie) -> Resolver:
    """For ``reverie mcp`` over stdio: every call acts as the home's owner."""
    name = rv.ensure_owner().name

    def resolve(ctx: Any) -> Actor:
        return rv.as_member(name)

    return resolve
