"""``reverie soul ...`` and ``reverie approvals ...``: what an agent is, and the changes that
wait for a person (SPEC S1-S3, I1-I3, 15).

The command line acts as a member (``--as``; default: the workspace's owner), and deciding an
approval needs that member to be allowed to edit the agent (A1), the same rule as every other
surface.
"""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table
from rich.text import Text

from reverie.store.instructions import Approval
from reverie.store.souls import SoulVersion

from ._contract import Options, app, as_member_option, emit, open_home, out, pass_opts, stamp


@app.group("soul")
def soul_group() -> None:
    """Read an agent's soul and its published versions (only the agent changes it)."""


@soul_group.command("show")
@click.argument("agent")
@click.option("--version", type=click.IntRange(min=0), help="A past version (default: current).")
@pass_opts
def soul_show(opts: Options, agent: str, version: int | None) -> None:
    """Print the agent's soul (the current version, or --version N)."""
    with open_home(opts) as rv:
        soul = rv.soul(agent, version)

    def human() -> None:
        if soul.version == 0:
            out.print(f"{agent} has no soul published yet (version 0).")
        else:
            out.print(soul.text, end="")

    emit(opts, _soul(soul, with_text=True), human)


@soul_group.command("history")
@click.argument("agent")
@pass_opts
def soul_history(opts: Options, agent: str) -> None:
    """List the published versions of the agent's soul, newest first."""
    with open_home(opts) as rv:
        versions = rv.soul_history(agent)

    def human() -> None:
        if not versions:
            out.print(f"{agent} has no soul published yet (version 0).")
            return
        table = Table("version", "published", "from conversation", "first line")
        for v in versions:
            first = next((line for line in v.text.splitlines() if line.strip()), "")
            table.add_row(
                str(v.version),
                stamp(v.created_at) if v.created_at else "",
                v.conversation_id or "(at creation)",
                first[:60],
            )
        out.print(table)

    emit(opts, {"versions": [_soul(v, with_text=True) for v in versions]}, human)


def _soul(v: SoulVersion, *, with_text: bool) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "version": v.version,
        "time": stamp(v.created_at) if v.created_at else None,
        "conversation": v.conversation_id,
    }
    if with_text:
        payload["text"] = v.text
    return payload


@app.group("approvals")
def approvals_group() -> None:
    """List and decide the changes that wait for a person (instruction changes)."""


@approvals_group.command("list")
@click.option("--agent", help="Only this agent's.")
@click.option("--all", "everything", is_flag=True, help="Decided ones too, not only pending.")
@pass_opts
def approvals_list(opts: Options, agent: str | None, everything: bool) -> None:
    """Pending approvals, oldest first (with --all, decided ones too)."""
    with open_home(opts) as rv:
        found = rv.approvals(agent, None if everything else "pending")
        names = {a.id: a.name for a in rv.agents()}

    def human() -> None:
        if not found:
            out.print("Nothing waits for approval." if not everything else "No approvals.")
            return
        for a in found:
            who = a.requested_by or "unknown"
            out.print(
                Text.assemble(
                    (a.id, "bold"),
                    f"  {a.status}  {names.get(a.agent_id, a.agent_id)}  {a.mode} instructions "
                    f"of {a.channel_id}, asked by {who} at {stamp(a.created_at)}",
                )
            )
            out.print(_indent(a.text))
            if a.comment:
                out.print(f"  comment by {a.decided_by}: {a.comment}")

    emit(opts, {"approvals": [_approval(a, names) for a in found]}, human)


def _approval(a: Approval, names: dict[str, str]) -> dict[str, Any]:
    return {
        "id": a.id,
        "agent": names.get(a.agent_id, a.agent_id),
        "kind": a.kind,
        "channel": a.channel_id,
        "conversation": a.conversation_id,
        "mode": a.mode,
        "text": a.text,
        "requested_by": a.requested_by,
        "state": a.status,
        "created": stamp(a.created_at),
        "decided": stamp(a.decided_at) if a.decided_at else None,
        "decided_by": a.decided_by,
        "comment": a.comment,
        "applied_version": a.applied_version,
    }


def _indent(text: str) -> str:
    return "\n".join(f"  | {line}" for line in text.splitlines())


_AS = as_member_option("Decide as this member (default: the owner).")


@approvals_group.command("approve")
@click.argument("approval_id")
@_AS
@pass_opts
def approvals_approve(opts: Options, approval_id: str, member: str | None) -> None:
    """Approve: apply exactly the proposed text, once."""
    _decide(opts, approval_id, "approve", member, None)


@approvals_group.command("deny")
@click.argument("approval_id")
@_AS
@pass_opts
def approvals_deny(opts: Options, approval_id: str, member: str | None) -> None:
    """Deny: nothing is applied."""
    _decide(opts, approval_id, "deny", member, None)


@approvals_group.command("comment")
@click.argument("approval_id")
@click.argument("text")
@_AS
@pass_opts
def approvals_comment(opts: Options, approval_id: str, text: str, member: str | None) -> None:
    """Answer with a comment; the change is not applied and the agent is told."""
    _decide(opts, approval_id, "comment", member, text)


def _decide(
    opts: Options, approval_id: str, decision: str, member: str | None, text: str | None
) -> None:
    with open_home(opts) as rv:
        by = rv.member(member).name if member else rv.ensure_owner().name
        if decision == "approve":
            a = rv.approve(approval_id, by=by)
        elif decision == "deny":
            a = rv.deny(approval_id, by=by)
        else:
            a = rv.comment(approval_id, text or "", by=by)
        names = {x.id: x.name for x in rv.agents()}
    said = {
        "approved": f"applied as version {a.applied_version} of the instructions of {a.channel_id}",
        "denied": "nothing was applied",
        "commented": "nothing was applied; the comment was sent to the conversation",
    }[a.status]
    emit(
        opts,
        {"approval": _approval(a, names)},
        lambda: out.print(f"{a.id} {a.status} by {a.decided_by}: {said}."),
    )
