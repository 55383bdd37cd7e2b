"""A local HTTP server that speaks the parts of Slack's Web API that Reverie uses, and a sender
that delivers events to a running app the way Slack does.

The real ``slack_sdk`` ``WebClient`` (and so bolt) talks to it unchanged, with
``base_url=server.api_url``: bearer-token checks, ``ok``/``error`` answers, GET query
parameters and JSON or form bodies, cursors, message metadata, and HTTP 429 with
``Retry-After``. Methods: ``auth.test``, ``chat.postMessage``, ``conversations.members``,
``conversations.info``, ``conversations.replies``, ``conversations.history``, ``users.info``,
``views.publish``, and ``apps.connections.open`` (with the app-level token: the URL of
``socket_url``, a :class:`tests.slack.fake_socket_mode.FakeSocketMode`). It listens on
127.0.0.1 on an ephemeral port, in a thread.

:class:`EventSender` signs each event as Slack does (``v0`` HMAC-SHA256 of
``v0:<timestamp>:<body>`` with the signing secret), with ``X-Slack-Retry-Num`` and
``X-Slack-Retry-Reason`` on retries, and posts it to the app's URL; any order, any timestamp.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.llm.fake_openai_server import FakeHTTPServer, Received, Reply

__all__ = ["EventSender", "FakeSlack", "SlackChannel", "sign"]


@dataclass
class SlackChannel:
    """A channel, DM or group DM as the fake holds it."""

    id: str
    kind: str  # "channel", "private", "im", "mpim"
    members: set[str]
    ext_shared: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)


class FakeSlack(FakeHTTPServer):
    """Slack's Web API for one workspace, with a bot user that the bot token belongs to."""

    def __init__(
        self,
        *,
        bot_token: str,
        team: str = "T0TEAM",
        bot_user: str = "U0BOT",
        bot_id: str = "B0BOT",
        app_token: str | None = None,
    ) -> None:
        super().__init__()
        self.bot_token = bot_token
        self.app_token = app_token
        #: What ``apps.connections.open`` hands out (Socket Mode's websocket).
        self.socket_url: str | None = None
        self.team = team
        self.bot_user = bot_user
        self.bot_id = bot_id
        self.users: dict[str, dict[str, Any]] = {}
        self.channels: dict[str, SlackChannel] = {}
        self.views: list[tuple[str, dict[str, Any]]] = []
        #: Method -> Slack error codes to answer with, one per call, before answering normally.
        self.refuse: dict[str, list[str]] = {}
        #: Method -> an event that, while clear, holds the answer after the call took effect
        #: (a post is recorded, its answer not yet sent): a client can be killed right there.
        self.hold: dict[str, threading.Event] = {}
        #: Calls per method.
        self.calls: dict[str, int] = {}
        self._clock = itertools.count(1)
        self.add_user(bot_user, "reverie", bot=True)

    @property
    def api_url(self) -> str:
        return f"{self.origin}/api/"

    def __enter__(self) -> FakeSlack:
        self.start()
        return self

    # -- the workspace -----------------------------------------------------------------------

    def add_user(
        self,
        user: str,
        name: str,
        *,
        admin: bool = False,
        owner: bool = False,
        deleted: bool = False,
        guest: bool = False,
        bot: bool = False,
    ) -> None:
        self.users[user] = {
            "id": user,
            "team_id": self.team,
            "name": name,
            "real_name": name.title(),
            "deleted": deleted,
            "is_admin": admin,
            "is_owner": owner,
            "is_restricted": guest,
            "is_ultra_restricted": False,
            "is_bot": bot,
            "is_app_user": False,
        }

    def add_channel(
        self, channel: str, members: list[str], *, kind: str = "channel", ext_shared: bool = False
    ) -> SlackChannel:
        ch = SlackChannel(channel, kind, {*members, self.bot_user}, ext_shared)
        self.channels[channel] = ch
        return ch

    def new_ts(self) -> str:
        return f"{1_700_000_000 + next(self._clock)}.{next(self._clock):06d}"

    def say(
        self, user: str, channel: str, text: str, thread_ts: str | None = None
    ) -> dict[str, Any]:
        """A person's message, as Slack stores it; the event for it is built from this."""
        message: dict[str, Any] = {
            "type": "message",
            "user": user,
            "text": text,
            "ts": self.new_ts(),
        }
        if thread_ts:
            message["thread_ts"] = thread_ts
        self.channels[channel].messages.append(message)
        return message

    def posted(self, channel: str | None = None) -> list[dict[str, Any]]:
        """The bot's messages, oldest first."""
        return [
            m
            for ch in self.channels.values()
            if channel in (None, ch.id)
            for m in ch.messages
            if m.get("bot_id") == self.bot_id
        ]

    # -- the Web API -------------------------------------------------------------------------

    def respond(self, request: Received) -> Reply:
        url = urlsplit(request.path)
        method = url.path.removeprefix("/api/")
        params: dict[str, Any] = dict(parse_qsl(url.query))
        if isinstance(request.body, dict):
            params.update(request.body)
        elif isinstance(request.body, str) and request.body:
            params.update(parse_qsl(request.body))
        with self._lock:
            self.calls[method] = self.calls.get(method, 0) + 1
            scripted = self.refuse.get(method)
            refusal = scripted.pop(0) if scripted else None
        # Socket Mode's connections are opened with the app-level token, all else with the bot's.
        token = self.app_token if method == "apps.connections.open" else self.bot_token
        if request.headers.get("authorization") != f"Bearer {token}":
            return _error("invalid_auth" if request.headers.get("authorization") else "not_authed")
        if refusal == "ratelimited":
            return Reply(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "0"})
        if refusal is not None:
            return _error(refusal)
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            return _error("unknown_method")
        with self._lock:
            reply: Reply = handler(params)
        hold = self.hold.get(method)
        if hold is not None:
            hold.wait(30)
        return reply

    def _channel(self, params: dict[str, Any]) -> SlackChannel | None:
        return self.channels.get(str(params.get("channel")))

    def _auth_test(self, params: dict[str, Any]) -> Reply:
        return _ok(
            url="https://fake.slack.test/",
            team="Fake",
            user="reverie",
            team_id=self.team,
            user_id=self.bot_user,
            bot_id=self.bot_id,
            is_enterprise_install=False,
        )

    def _users_info(self, params: dict[str, Any]) -> Reply:
        user = self.users.get(str(params.get("user")))
        return _ok(user=user) if user else _error("user_not_found")

    def _conversations_info(self, params: dict[str, Any]) -> Reply:
        ch = self._channel(params)
        if ch is None:
            return _error("channel_not_found")
        return _ok(
            channel={
                "id": ch.id,
                "is_channel": ch.kind == "channel",
                "is_group": ch.kind == "private",
                "is_private": ch.kind in ("private", "mpim", "im"),
                "is_im": ch.kind == "im",
                "is_mpim": ch.kind == "mpim",
                "is_ext_shared": ch.ext_shared,
                "is_shared": ch.ext_shared,
            }
        )

    def _conversations_members(self, params: dict[str, Any]) -> Reply:
        ch = self._channel(params)
        if ch is None:
            return _error("channel_not_found")
        members = sorted(ch.members)
        start = int(params.get("cursor") or 0)
        limit = min(int(params.get("limit") or 100), 2)  # small pages: clients must follow
        page = members[start : start + limit]
        more = start + limit < len(members)
        return _ok(
            members=page, response_metadata={"next_cursor": str(start + limit) if more else ""}
        )

    def _chat_postMessage(self, params: dict[str, Any]) -> Reply:
        ch = self._channel(params)
        if ch is None:
            return _error("channel_not_found")
        if self.bot_user not in ch.members:
            return _error("not_in_channel")
        if not params.get("text") and not params.get("blocks"):
            return _error("no_text")
        metadata = params.get("metadata")
        if isinstance(metadata, str):
            metadata = json.loads(metadata)
        message = {
            "type": "message",
            "subtype": "bot_message",
            "bot_id": self.bot_id,
            "user": self.bot_user,
            "text": params.get("text", ""),
            "ts": self.new_ts(),
        }
        if params.get("thread_ts"):
            message["thread_ts"] = params["thread_ts"]
        if metadata:
            message["metadata"] = metadata
        ch.messages.append(message)
        return _ok(channel=ch.id, ts=message["ts"], message=message)

    def _conversations_replies(self, params: dict[str, Any]) -> Reply:
        ch = self._channel(params)
        if ch is None:
            return _error("channel_not_found")
        ts = str(params.get("ts"))
        thread = [m for m in ch.messages if m["ts"] == ts or m.get("thread_ts") == ts]
        if not thread:
            return _error("thread_not_found")
        return _ok(messages=self._shown(thread, params), has_more=False)

    def _conversations_history(self, params: dict[str, Any]) -> Reply:
        ch = self._channel(params)
        if ch is None:
            return _error("channel_not_found")
        oldest = float(params.get("oldest") or 0)
        top = [m for m in ch.messages if "thread_ts" not in m and float(m["ts"]) > oldest]
        return _ok(messages=self._shown(top[::-1], params), has_more=False)

    def _shown(
        self, messages: list[dict[str, Any]], params: dict[str, Any]
    ) -> list[dict[str, Any]]:
        with_metadata = str(params.get("include_all_metadata")).lower() in ("1", "true")
        return [
            m if with_metadata else {k: v for k, v in m.items() if k != "metadata"}
            for m in messages
        ]

    def _apps_connections_open(self, params: dict[str, Any]) -> Reply:
        if self.socket_url is None:
            return _error("not_allowed_token_type")
        return _ok(url=self.socket_url)

    def _views_publish(self, params: dict[str, Any]) -> Reply:
        view = params.get("view")
        if isinstance(view, str):
            view = json.loads(view)
        if not params.get("user_id") or not isinstance(view, dict) or view.get("type") != "home":
            return _error("invalid_arguments")
        self.views.append((str(params["user_id"]), view))
        return _ok(view={"id": f"V{len(self.views)}", **view})


def _ok(**data: Any) -> Reply:
    return Reply(200, {"ok": True, **data})


def _error(code: str) -> Reply:
    return Reply(200, {"ok": False, "error": code})


def sign(secret: str, timestamp: int, body: str) -> str:
    """Slack's request signature (``X-Slack-Signature``)."""
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def signed_headers(secret: str, raw: str, *, retry: int = 0, age: float = 0.0) -> dict[str, str]:
    """The headers Slack sends with the request body ``raw``: its content type, the request's
    timestamp (``age`` seconds in the past) and signature, and with ``retry`` > 0 its retry
    headers."""
    timestamp = int(time.time() - age)
    headers = {
        "content-type": "application/json",
        "x-slack-request-timestamp": str(timestamp),
        "x-slack-signature": sign(secret, timestamp, raw),
    }
    if retry:
        headers["x-slack-retry-num"] = str(retry)
        headers["x-slack-retry-reason"] = "http_timeout"
    return headers


class EventSender:
    """Builds events as Slack sends them and posts them, signed, to the app's URL."""

    def __init__(self, slack: FakeSlack, url: str, signing_secret: str) -> None:
        self.slack = slack
        self.url = url
        self.secret = signing_secret
        self._ids = itertools.count(1)

    def envelope(self, event: dict[str, Any], *, ext_shared: bool = False) -> dict[str, Any]:
        return {
            "token": "legacy-verification-token",
            "team_id": self.slack.team,
            "api_app_id": "A0APP",
            "event": event,
            "type": "event_callback",
            "event_id": f"Ev{next(self._ids):08d}",
            "event_time": int(time.time()),
            "authorizations": [
                {"team_id": self.slack.team, "user_id": self.slack.bot_user, "is_bot": True}
            ],
            "is_ext_shared_channel": ext_shared,
        }

    def message(
        self,
        user: str,
        channel: str,
        text: str,
        *,
        thread_ts: str | None = None,
        mention: bool = False,
        channel_type: str | None = None,
    ) -> dict[str, Any]:
        """A person says ``text``: the message is stored and its event returned (an
        ``app_mention`` when ``mention``; the text then starts with the bot's mention)."""
        ch = self.slack.channels[channel]
        if mention:
            text = f"<@{self.slack.bot_user}> {text}"
        stored = self.slack.say(user, channel, text, thread_ts)
        event = {**stored, "channel": channel, "event_ts": stored["ts"]}
        if mention:
            event["type"] = "app_mention"
        else:
            event["channel_type"] = channel_type or {"private": "group"}.get(ch.kind, ch.kind)
        return self.envelope(event, ext_shared=ch.ext_shared)

    def deliver(
        self,
        body: dict[str, Any],
        *,
        retry: int = 0,
        age: float = 0.0,
        secret: str | None = None,
        timeout: float = 30.0,
    ) -> tuple[int, str]:
        """Post one event; ``retry`` > 0 adds Slack's retry headers, ``age`` moves the request's
        timestamp into the past. Returns the HTTP status and body."""
        raw = json.dumps(body)
        headers = signed_headers(secret or self.secret, raw, retry=retry, age=age)
        request = urllib.request.Request(self.url, raw.encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
