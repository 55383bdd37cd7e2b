"""Who may do what (SPEC A1, C2, I1, X1): the rules as pure functions of stored state.

Every surface asks these functions, with the member and agent as the state database holds them
now, never as anything said during a turn describes them (X1). ``None`` for a member means an
unknown author: nobody, for every rule here.
"""

from __future__ import annotations

from typing import Protocol

from reverie.errors import PermissionDenied

__all__ = [
    "AgentLike",
    "MemberLike",
    "is_admin",
    "may_edit_agent",
    "may_replace_instructions",
    "require_admin",
    "require_chat_write",
    "require_edit",
]


class MemberLike(Protocol):
    """What the rules read of a member."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def active(self) -> bool: ...


class AgentLike(Protocol):
    """What the rules read of an agent."""

    @property
    def name(self) -> str: ...
    @property
    def creator(self) -> str | None: ...
    @property
    def edit_policy(self) -> str: ...


def is_admin(member: MemberLike | None) -> bool:
    """An active owner or admin of the workspace."""
    return member is not None and member.active and member.role in ("owner", "admin")


def may_edit_agent(member: MemberLike | None, agent: AgentLike) -> bool:
    """A1: owners, admins and the agent's creator; any active member when the agent's edit
    policy is ``all_workspace_members``. Reading and writing its memory, and deciding its
    pending approvals, all follow this one rule."""
    if member is None or not member.active:
        return False
    if is_admin(member) or agent.edit_policy == "all_workspace_members":
        return True
    return agent.creator is not None and agent.creator in (member.id, member.name)


def may_replace_instructions(member: MemberLike | None) -> bool:
    """I1: replacing a channel's instructions is for admins (and owners) only."""
    return is_admin(member)


def require_edit(member: MemberLike | None, agent: AgentLike, who: str | None = None) -> None:
    """A1 as a refusal: reading or writing the agent's memory, history, soul and approvals.

    Raises:
        PermissionDenied: ``permission_denied`` naming who may.
    """
    if not may_edit_agent(member, agent):
        name = who or (member.name if member is not None else "This caller")
        raise PermissionDenied(
            f"{name} may not read or change agent {agent.name}'s memory, history or approvals: "
            "that takes an owner, an admin, the agent's creator, or any member when the "
            "agent's edit policy is all_workspace_members. Nothing was read or changed.",
            code="permission_denied",
            agent=agent.name,
        )


def require_admin(member: MemberLike | None, what: str) -> None:
    """Workspace-wide actions (importing conversations, reviewing every agent, tokens of
    others) are for owners and admins.

    Raises:
        PermissionDenied: ``permission_denied``.
    """
    if not is_admin(member):
        raise PermissionDenied(
            f"Only a workspace owner or admin may {what}. Nothing was changed.",
            code="permission_denied",
        )


def require_chat_write(
    member: MemberLike | None,
    agent: str,
    *,
    channel_kind: str,
    memory_on: bool,
    granted: bool,
    in_chat: bool,
    guest: bool = False,
    who: str | None = None,
) -> None:
    """C2: a chat command that writes memory. In a DM the author must be an active workspace
    member; in a channel the agent needs an active grant there, the author must not be
    deactivated, and the chat platform must confirm, now, that the author is in the channel
    (``in_chat``: never taken from the event alone). A guest of the workspace is stored as an
    inactive member (from a DM a guest may not write), yet may write in a channel they are
    in: ``guest`` is whether the chat platform reports the author, now, as an active guest.
    Nothing from a group chat reaches memory (O3): where memory is off, no command writes.
    Reading needs none of this.

    Raises:
        PermissionDenied: ``memory_off``, ``no_grant``, ``not_in_channel`` or
            ``inactive_member``, each saying why and that nothing changed.
    """
    name = who or (member.name if member is not None else "The author")
    if not memory_on:
        raise PermissionDenied(
            "Memory is off in this conversation: it is (or once was) a group chat, and "
            "nothing said in a group chat reaches memory. Send the command in a DM or a "
            "workspace channel. Nothing changed.",
            code="memory_off",
        )
    if channel_kind == "dm":
        if member is None or not member.active:
            raise PermissionDenied(
                f"{name} is not an active member of the workspace (deactivated, a guest, or "
                "unknown), and only active members may write memory from a DM. Nothing "
                "changed.",
                code="inactive_member",
            )
        return
    if not granted:
        raise PermissionDenied(
            f"Agent {agent} has no active grant in this channel, so its memory cannot be "
            f"written from here. An admin can grant it (`reverie grant {agent} "
            "--slack-channel ID`). Nothing changed.",
            code="no_grant",
            agent=agent,
        )
    if member is None or not (member.active or guest):
        raise PermissionDenied(
            f"{name} is deactivated in this workspace (as the chat platform reports it, or by "
            "an admin here), and a deactivated member writes memory from nowhere, a channel "
            "they are still listed in included. Nothing changed.",
            code="inactive_member",
        )
    if not in_chat:
        raise PermissionDenied(
            f"{name} is not a member of this channel (as the chat platform reports it now), "
            "and only the channel's members may write memory from it. Nothing changed.",
            code="not_in_channel",
        )
