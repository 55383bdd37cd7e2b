"""Where an agent's messages go (SPEC T1): the target chats of a conversation's ``notify``.

From a conversation in a chat: that chat and the chats linked to the conversation. From a web
session: every chat the agent is admitted to (its active grants), or the session itself when
there is none. From an automation or a sub-session: only that run's chat (the chat the
automation reports to, or the sub-session's own).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["notify_targets"]


def notify_targets(
    *,
    channel: str,
    channel_kind: str,
    reports_to: str | None,
    linked: Sequence[str],
    is_sub_session: bool,
    granted: Sequence[str],
) -> list[str]:
    """The chats a ``notify`` from this conversation reaches, in a stable order."""
    if channel_kind == "automation":
        return [reports_to or channel]
    if is_sub_session:
        return [channel]
    if channel_kind == "web":
        return sorted(set(granted)) or [channel]
    return [channel, *sorted(set(linked) - {channel})]
