"""Slack's workspace, channels, DMs, group DMs and threads as Reverie's channels, conversations
and members (SPEC 1, O1-O3).

* A Slack channel or DM ``C1`` is the Reverie channel ``slack:C1``: kind ``dm`` for a DM,
  ``channel`` otherwise. Grants (``reverie grant AGENT --slack-channel C1``) live on it.
* A message that reaches a group (a group DM, or a channel shared with another organisation:
  Slack Connect) comes from the Reverie channel ``slack:C1:group``, of kind ``group``. The
  conversation store turns any conversation that receives one off for good (O2), and a
  conversation that starts there is off from the start (O1). Which kind a message is comes from
  Slack's own fields (``channel_type``, ``is_ext_shared_channel``) or ``conversations.info``.
* A thread is a conversation: ``slack:C1:<thread ts>`` (a message outside a thread starts its
  own thread, where the agent answers).
* A Slack user ``U1`` is the workspace member ``slack:U1``.

Nothing here calls Slack; :mod:`reverie.slack.directory` does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "PREFIX",
    "Chat",
    "channel_ref",
    "conversation_ref",
    "group_ref",
    "is_channel_id",
    "is_slack_channel",
    "member_name",
    "message_kind",
    "thread_of",
]

PREFIX = "slack:"
_GROUP = ":group"
#: A Slack conversation's id as Slack shows it: ``C`` (a channel), ``G`` (a private channel or
#: group DM of before 2021) or ``D`` (a DM), then capital letters and digits (``C0123ABCD``).
_CHANNEL_ID = re.compile(r"[CDG][A-Z0-9]{2,20}")


def is_channel_id(text: str) -> bool:
    """Whether ``text`` is shaped like a Slack channel's or DM's id."""
    return _CHANNEL_ID.fullmatch(text) is not None


def channel_ref(channel: str) -> str:
    """The Reverie channel of a Slack channel or DM (where its grants live)."""
    return f"{PREFIX}{channel}"


def group_ref(channel: str) -> str:
    """The Reverie channel (kind ``group``) of the Slack channel's messages that reach a group."""
    return f"{PREFIX}{channel}{_GROUP}"


def conversation_ref(channel: str, thread_ts: str) -> str:
    """The Reverie conversation of a Slack thread."""
    return f"{PREFIX}{channel}:{thread_ts}"


def member_name(user: str) -> str:
    """The workspace member of a Slack user."""
    return f"{PREFIX}{user}"


def is_slack_channel(channel_id: str) -> bool:
    """Whether a Reverie channel stands for a Slack channel (its deliveries are Slack's)."""
    return channel_id.startswith(PREFIX)


def slack_channel(channel_id: str) -> str:
    """The Slack channel behind a Reverie channel (``slack:C1`` or ``slack:C1:group``)."""
    return channel_id.removeprefix(PREFIX).removesuffix(_GROUP)


def thread_of(conversation_id: str | None) -> tuple[str, str] | None:
    """``(Slack channel, thread ts)`` of a conversation this module named, else None."""
    if not conversation_id or not conversation_id.startswith(PREFIX):
        return None
    parts = conversation_id.split(":")
    if len(parts) != 3 or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


def message_kind(channel_type: str | None, ext_shared: bool) -> str:
    """The Reverie kind of a Slack message's chat: ``dm`` (``im``), ``group`` (``mpim``, or any
    channel shared with another organisation), else ``channel`` (public and private)."""
    if channel_type == "mpim" or ext_shared:
        return "group"
    if channel_type == "im":
        return "dm"
    return "channel"


@dataclass(frozen=True)
class Chat:
    """Where a Slack message was said, as Reverie sees it."""

    #: Slack's channel id and the thread's ts.
    channel: str
    thread_ts: str
    #: ``dm``, ``channel`` or ``group`` (this message's kind, O1).
    kind: str
    #: The Reverie channel holding grants (``slack:C1``), and the one this message comes
    #: from (the same, or ``slack:C1:group``).
    base: str
    source: str
    #: The thread's conversation, and its agent's name.
    conversation: str
    agent: str
