"""What Slack says about its users and channels, asked when needed and trusted briefly (C2).

* ``users.info``: whether a user is an active member of the workspace (not deactivated, not a
  guest, not a bot). The user's workspace member (``slack:U1``) is created on first sight with
  Slack's role; when Slack reports the user deactivated, the member is deactivated too, so every
  surface sees it. Reactivation is left to an admin.
* ``conversations.members``: whether a user is in a channel, the check behind every memory
  write from a channel. An event's own claims are never taken for it.
* ``conversations.info``: a channel's kind, for events that do not carry it (``app_mention``).

Answers are kept for ``slack_membership_cache_seconds`` (60). Join and leave events only drop
a channel's cached member list, so that the next check asks Slack again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from slack_sdk import WebClient

from reverie.api import Reverie
from reverie.errors import NotFound, RefusedInput

from .client import call
from .mapping import member_name

__all__ = ["Directory", "SlackUser"]


@dataclass(frozen=True)
class SlackUser:
    """A Slack user as Reverie uses it."""

    id: str
    #: The workspace member it maps to.
    member: str
    #: Slack reports a full, active member of the workspace.
    active: bool
    #: A bot or an app, whose messages are never commands or turns.
    bot: bool
    #: Slack reports a guest of the workspace who is not deactivated: inactive as a member
    #: (no writes from a DM), yet one who may write in a channel they are in (C2).
    guest: bool = False


T = TypeVar("T")


class _Cache(Generic[T]):
    """Values by key, each trusted for ``ttl`` seconds."""

    def __init__(self, ttl: float, clock: Callable[[], float]) -> None:
        self.ttl = ttl
        self.clock = clock
        self._items: dict[str, tuple[float, T]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> T | None:
        with self._lock:
            item = self._items.get(key)
            if item is None or self.clock() - item[0] > self.ttl:
                return None
            return item[1]

    def put(self, key: str, value: T) -> None:
        with self._lock:
            self._items[key] = (self.clock(), value)

    def drop(self, key: str) -> None:
        with self._lock:
            self._items.pop(key, None)


class Directory:
    """Slack's users and channels for one workspace, cached briefly."""

    def __init__(
        self,
        rv: Reverie,
        client: WebClient,
        ttl: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rv = rv
        self.client = client
        self._users: _Cache[SlackUser] = _Cache(ttl, clock)
        self._members: _Cache[frozenset[str]] = _Cache(ttl, clock)
        self._kinds: _Cache[tuple[str, bool]] = _Cache(ttl, clock)

    def user(self, user_id: str) -> SlackUser:
        """The user as Slack reports it now (or within the cache window), with its workspace
        member created or deactivated to match.

        Raises:
            SlackError: Slack refused or could not be reached.
        """
        cached = self._users.get(user_id)
        if cached is not None:
            return cached
        info = call("users.info", self.client.users_info, user=user_id).get("user") or {}
        bot = bool(info.get("is_bot") or info.get("is_app_user")) or user_id == "USLACKBOT"
        guest = bool(info.get("is_restricted") or info.get("is_ultra_restricted"))
        active = not info.get("deleted") and not guest and not bot
        role = "owner" if info.get("is_owner") else "admin" if info.get("is_admin") else "member"
        member = self._sync_member(user_id, role, active)
        found = SlackUser(
            user_id, member, active, bot, guest=guest and not bot and not info.get("deleted")
        )
        self._users.put(user_id, found)
        return found

    def _sync_member(self, user_id: str, role: str, active: bool) -> str:
        name = member_name(user_id)
        try:
            member = self.rv.member(name)
        except NotFound:
            try:
                member = self.rv.add_member(name, role, active=active)
            except RefusedInput as exc:
                if exc.code != "already_exists":  # another thread added it first
                    raise
                member = self.rv.member(name)
        if member.active and not active:
            self.rv.update_member(name, active=False)
        return name

    def in_channel(self, channel: str, user_id: str) -> bool:
        """Whether ``user_id`` is a member of ``channel``, as ``conversations.members`` says.

        Raises:
            SlackError: Slack refused or could not be reached.
        """
        members = self._members.get(channel)
        if members is None:
            found: set[str] = set()
            cursor: str | None = None
            while True:
                page = call(
                    "conversations.members",
                    self.client.conversations_members,
                    channel=channel,
                    limit=1000,
                    cursor=cursor,
                )
                found.update(page.get("members") or [])
                cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
                if not cursor:
                    break
            members = frozenset(found)
            self._members.put(channel, members)
        return user_id in members

    def forget_members(self, channel: str) -> None:
        """Drop the channel's cached member list (someone joined or left)."""
        self._members.drop(channel)

    def channel_kind(self, channel: str) -> tuple[str, bool]:
        """Slack's ``channel_type`` of a channel (``im``, ``mpim``, ``channel``, ``group``) and
        whether it is shared with another organisation.

        Raises:
            SlackError: Slack refused or could not be reached.
        """
        cached = self._kinds.get(channel)
        if cached is not None:
            return cached
        info = call("conversations.info", self.client.conversations_info, channel=channel)
        ch = info.get("channel") or {}
        kind = (
            "im"
            if ch.get("is_im")
            else "mpim"
            if ch.get("is_mpim")
            else "group"
            if ch.get("is_private")
            else "channel"
        )
        found = (kind, bool(ch.get("is_ext_shared")))
        self._kinds.put(channel, found)
        return found
