"""The Slack surface: a bolt ``App`` whose listeners map Slack's events to Reverie.

What each event does:

* ``message`` (DMs, and channel messages that are commands) and ``app_mention`` (the agent
  named in a channel): a ``!memory`` command runs at once (C1-C3) and its answer is queued once
  per event; anything else said to the agent starts a turn (P1-P4) in the thread. An event
  that was answered already (its command refused or saved, its turn refused), here or in
  another process, before a restart too, runs nothing again: its answer is in the outbox
  under the event's key, and a retry is answered by it. A refusal never fails the request
  (Slack would only send it again); a fault does, so that Slack's retry finds it mended.
* ``app_home_opened``: the Home tab is published.
* ``member_joined_channel`` / ``member_left_channel``: the channel's cached member list is
  dropped, so the next write check asks Slack again (C2).

The app runs with ``process_before_response``: a command's write commits before Slack gets its
acknowledgement, so a crash before the acknowledgement means a retry, which the event's
idempotency key answers without writing twice (W7). A turn only records the person's message
before the acknowledgement; the model is called on a worker thread, so Slack hears back within
its three seconds however slow the model is, and the answer follows through the outbox. A
retry of an event whose turn is still running is acknowledged and ignored; one whose turn is
done finds that turn and runs nothing (``message_id``).

Every message the agent sends goes through the outbox and :class:`DeliveryWorker`, in the
thread it answers.

Under ``reverie serve --workers N`` every HTTP worker process has a surface that handles
events (``wake_port`` given), and only the parent's surface posts the outbox and resumes the
turns a stop cut short (:meth:`start`); a worker wakes the parent's poster with a datagram
after queuing an answer. What holds across processes is in the state database: a command's
idempotency key (its write and its answer, W7), the outbox's claims (each row posted once,
in order by one poster), and a turn's message id (a retry that finds the message recorded and
its turn started, here or in another process, starts none). A turn's event is also held by
a lock from before its message is recorded until its turn ends (:meth:`_turn_lock`: a file
lock in the home's ``locks`` folder, on PostgreSQL an advisory lock that holds for every
server on the database), so a retry reaching another process while the turn waits for a free
turn worker starts nothing, and one reaching it after the holder died (the kernel, or the
database server, drops the lock) runs the turn.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

from slack_bolt import App
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_bolt.request import BoltRequest
from slack_sdk import WebClient

from reverie.api import Reverie
from reverie.core.chat import parse_command
from reverie.errors import NotFound, PermissionDenied, RefusedInput, ReverieError
from reverie.llm.chat import ChatProvider

from .client import call, require, web_client
from .commands import about_message, ending, run_command
from .delivery import DeliveryWorker, WakeSender
from .directory import Directory, SlackUser
from .home import home_view
from .mapping import (
    PREFIX,
    Chat,
    channel_ref,
    conversation_ref,
    group_ref,
    message_kind,
)
from .text import from_slack, mentions

__all__ = ["HTTPAnswer", "SlackSurface"]

log = logging.getLogger(__name__)


class _ClientWins(logging.Filter):
    """Bolt reads ``SLACK_BOT_TOKEN`` itself and, given the client made from that same token
    (through the settings), warns on every start that its token "will be unused": true, and
    of no use to whoever reads the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


log.addFilter(_ClientWins())

#: A turn that a stop cut short (its message recorded and Slack acknowledged, its answer never
#: given, no process holding its turn lock) is run again when the app starts, or by the look
#: it takes every minute after, if the message is at most this old; an older one is left
#: unanswered rather than answered late.
RESUME_SECONDS = 15 * 60

#: Message subtypes that are a person speaking; edits, deletions, joins and bots are not.
_SPOKEN = (None, "thread_broadcast", "file_share")

#: Refusals of a turn written for the person in the chat, said as they are; any other failure
#: is said in a short notice, its detail left to the server log.
_SAID_AS_IS = frozenset({"no_model", "agent_archived"})


class HTTPAnswer(NamedTuple):
    """What to answer Slack's HTTP request with."""

    status: int
    headers: dict[str, str]
    body: bytes


class SlackSurface:
    """Reverie in one Slack workspace: the bolt app, the member directory, the turn runner and
    the delivery worker. ``provider`` replaces the configured model (tests, embedding).

    With ``wake_port`` the surface only handles events: the process listening on that port
    (:meth:`DeliveryWorker.listen`) posts the outbox, and is woken there when an answer is
    queued; this one's :meth:`start` is never called."""

    def __init__(
        self,
        rv: Reverie,
        *,
        client: WebClient | None = None,
        provider: ChatProvider | None = None,
        turn_workers: int = 4,
        wake_port: int | None = None,
        resume_every: float = 60.0,
    ) -> None:
        self.rv = rv
        self.settings = rv.settings
        self._check_dm_agent()
        self.client = client or web_client(self.settings)
        who = call("auth.test", self.client.auth_test)
        self.bot_user: str | None = who.get("user_id")
        self.team: str | None = who.get("team_id")
        self.directory = Directory(rv, self.client, self.settings.slack_membership_cache_seconds)
        self.worker = DeliveryWorker(rv, self.client)
        # Set in an HTTP worker process of `reverie serve --workers N`: another process posts.
        self._poster = WakeSender(wake_port) if wake_port is not None else None
        self.provider = provider
        self._turns = concurrent.futures.ThreadPoolExecutor(
            max_workers=turn_workers, thread_name_prefix="reverie-slack-turn"
        )
        self._running: dict[str, concurrent.futures.Future[None]] = {}
        self._providers: dict[str, ChatProvider] = {}
        self._lock = threading.Lock()
        # The state database takes one writer at a time, and a second one waits in SQLite's
        # busy handler, which sleeps 1, 2, 5, 10 ms and more between tries: events handled at
        # once take turns here instead for their conversation and answer, while their Slack
        # lookups and checks run side by side. The command's own write queues on the memory's
        # lock instead, where the writes waiting together are saved as one group (one state
        # transaction), and a !remember is built there from the newest text.
        self._writing = threading.Lock()
        self._resume_every = resume_every
        self._stopping = threading.Event()
        self._resumer: threading.Thread | None = None
        self.app = self._build()

    def _check_dm_agent(self) -> None:
        """``REVERIE_SLACK_AGENT`` names an agent (by name or id), or is unset.

        Raises:
            RefusedInput: ``invalid_setting``, naming the agents it may be set to.
        """
        setting = self.settings.slack_agent
        if not setting:
            return
        try:
            self.rv.agent(setting)
        except NotFound:
            names = sorted(a.name for a in self.rv.agents() if not a.archived)
            shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
            raise RefusedInput(
                f"REVERIE_SLACK_AGENT is {setting!r}, and no agent has that name: set it to "
                f"the agent that answers Slack DMs ({shown or 'create one first'}; `reverie "
                "agent list` shows them), or unset it when there is only one agent. The Slack "
                "app was not started.",
                code="invalid_setting",
                setting="REVERIE_SLACK_AGENT",
            ) from None

    # the bolt app

    def _build(self) -> App:
        app = App(
            client=self.client,
            signing_secret=self.settings.slack_signing_secret or "",
            process_before_response=True,
            logger=log,
        )
        app.event("message")(self._on_message)
        app.event("app_mention")(self._on_mention)
        app.event("app_home_opened")(self._on_home)
        app.event("member_joined_channel")(self._on_membership)
        app.event("member_left_channel")(self._on_membership)
        return app

    def dispatch(self, body: bytes, query: str, headers: Mapping[str, str]) -> HTTPAnswer:
        """Answer one HTTP request of Slack's Events API (``POST /slack/events``): the
        signature and its timestamp (at most five minutes old) checked by bolt, then the event
        handled. Blocking: run it on a worker thread under an async server.

        Raises:
            RefusedInput: ``slack_not_configured`` without ``SLACK_SIGNING_SECRET``.
        """
        require(self.settings.slack_signing_secret, "SLACK_SIGNING_SECRET")
        answer = self.app.dispatch(
            BoltRequest(
                body=body.decode("utf-8", "replace"),
                query=query,
                headers={k.lower(): v for k, v in headers.items()},
            )
        )
        flat = {k: ", ".join(v) for k, v in answer.headers.items()}
        return HTTPAnswer(answer.status, flat, answer.body.encode())

    def socket_mode(self) -> Any:
        """bolt's Socket Mode handler for this app (``.start()`` blocks; ``.connect()`` does
        not).

        Raises:
            RefusedInput: ``slack_not_configured`` without ``SLACK_APP_TOKEN``.
        """
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        token = require(self.settings.slack_app_token, "SLACK_APP_TOKEN")
        return SocketModeHandler(self.app, token)

    def start(self) -> None:
        """Start posting the outbox (a background thread), and run again the turns that a
        stop cut short (:meth:`resume`): now, and every ``resume_every`` seconds after, for
        the turns of a worker process that died while the server went on."""
        self.rv.state.prune_turn_locks()
        self.worker.start()
        self._resume_logged()
        self._resumer = threading.Thread(
            target=self._resume_loop, name="reverie-slack-resume", daemon=True
        )
        self._resumer.start()

    def _resume_loop(self) -> None:
        while not self._stopping.wait(self._resume_every):
            self._resume_logged()

    def _resume_logged(self) -> None:
        # Whatever fails here (the state store down, Slack unreachable), new events still get
        # answered, and the next look tries again: said in the log, never raised.
        try:
            self.resume()
        except Exception:
            log.exception("Could not look for the turns a stop cut short")

    def resume(self) -> int:
        """Run again, on the turn workers, the turns of the last :data:`RESUME_SECONDS` that
        a stop or a dead worker process cut short: a person's message recorded (and Slack
        acknowledged) with no finished turn, nothing after it, and no process holding its
        turn lock. The turn binds to the same message (its event's key), so it runs once, and
        marks the turn the dead process left ``running`` as ``interrupted``; where the agent
        has lost its grant meanwhile, the refusal is posted instead. Then the turns cut short
        that are not run again (older, or followed by another message) are marked
        ``interrupted`` (:meth:`_interrupt_left`). Returns how many were started."""
        started = 0
        since = time.time() - RESUME_SECONDS
        for m in self.rv.unanswered(PREFIX, since):
            channel = m.conversation_id.removeprefix(PREFIX).split(":", 1)[0]
            with self._lock:
                if m.message_id in self._running:
                    continue
            hold = contextlib.ExitStack()
            if not hold.enter_context(self._turn_lock(m.message_id)):
                hold.close()
                continue  # its turn is under way, here or in another process
            if not self._still_unanswered(m.message_id, since):
                hold.close()  # its turn ended between the look and the lock
                continue
            if not self._admitted(channel_ref(channel), m.agent):
                with hold:
                    self._refuse(m.conversation_id, m.agent, channel, m.message_id)
                continue
            log.info("Answering %s, which a stop left unanswered", m.message_id)
            with self._lock:
                self._running[m.message_id] = self._turns.submit(
                    self._run_turn,
                    m.agent,
                    m.conversation_id,
                    m.author,
                    m.text,
                    m.message_id,
                    hold,
                    resume=True,
                )
            started += 1
        self._interrupt_left()
        return started

    def _interrupt_left(self) -> int:
        """Mark ``interrupted`` the turns left ``running`` that no process holds the turn lock
        of (their process died) and that are not being run again here. Returns how many."""
        marked = 0
        for conversation, position, message_id in self.rv.running_turns(PREFIX):
            with self._lock:
                if message_id in self._running:
                    continue
            with self._turn_lock(message_id) as held:
                if held:
                    marked += self.rv.interrupt_turns(conversation, position)
        return marked

    def _still_unanswered(self, message_id: str, since: float) -> bool:
        return any(u.message_id == message_id for u in self.rv.unanswered(PREFIX, since))

    def stop(self) -> None:
        """Stop looking for cut-short turns, finish the turns under way, then stop posting."""
        self._stopping.set()
        if self._resumer is not None:
            self._resumer.join()
        self._turns.shutdown(wait=True)
        self.worker.stop()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for the turns under way; True when none is left."""
        with self._lock:
            running = list(self._running.values())
        _, pending = concurrent.futures.wait(running, timeout=timeout)
        return not pending

    def _wake(self) -> None:
        """Have the outbox posted now, by this process or by the one that posts."""
        if self._poster is not None:
            self._poster.wake()
        else:
            self.worker.wake()

    # listeners (bolt passes the arguments by name)

    def _on_message(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        self._handled(body, event, mention=False)

    def _on_mention(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        self._handled(body, event, mention=True)

    def _handled(self, body: dict[str, Any], event: dict[str, Any], *, mention: bool) -> None:
        """:meth:`_handle`, with a refusal that reached this far acknowledged and logged: it
        would refuse every retry of the event too, and an error answer only makes Slack send
        it again. A fault (the state store, Slack unreachable) still fails the request, so
        that Slack's retry finds it mended."""
        try:
            self._handle(body, event, mention=mention)
        except (RefusedInput, PermissionDenied, NotFound) as exc:
            log.warning(
                "Slack event %s not handled (%s): %s", body.get("event_id"), exc.code, exc.message
            )

    def _on_home(self, event: dict[str, Any]) -> None:
        if event.get("tab", "home") != "home" or not event.get("user"):
            return
        view = home_view(self.rv, self.dm_agent())
        call("views.publish", self.client.views_publish, user_id=event["user"], view=view)

    def _on_membership(self, event: dict[str, Any]) -> None:
        if event.get("channel"):
            self.directory.forget_members(event["channel"])

    # events

    def _handle(self, body: dict[str, Any], event: dict[str, Any], *, mention: bool) -> None:
        if event.get("subtype") not in _SPOKEN or event.get("bot_id") or not event.get("user"):
            return
        raw, channel, ts = event.get("text") or "", event.get("channel"), event.get("ts")
        if not channel or not ts:
            return
        kind = self._kind(body, event)
        # A DM is handled by its message event, a mention in a channel by app_mention: a
        # message that arrives as both is handled once.
        if mention and kind == "dm":
            return
        if not mention and kind != "dm" and mentions(raw, self.bot_user):
            return
        text = from_slack(raw, self.bot_user)
        command = parse_command(text)
        thread_ts = event.get("thread_ts") or ts
        if not text.strip() or (command is None and kind != "dm" and not mention):
            # Channel talk not meant for the agent; but a thread it is in now reaches a group.
            if kind == "group":
                self._heard_from_group(channel, thread_ts)
            return
        key = f"slack:{body.get('event_id') or f'{channel}:{ts}'}"
        if self.rv.outbox.for_task(key):
            # Answered already (refused, saved, or a turn that failed), by this process or
            # another, before a restart too: a retry of the event is answered by that first
            # answer, which is posted once, and runs nothing again, whatever changed since.
            self._wake()
            return
        user = self.directory.user(event["user"])
        if user.bot:
            return
        with self._writing:
            chat = self._chat(channel, thread_ts, kind)
        if chat is None:
            self._no_agent(channel, thread_ts, kind, key)
            return
        if command is not None:
            answer = run_command(
                self.rv,
                self.directory,
                chat,
                command,
                user,
                key=key,
            )
            with self._writing:
                self.rv.reply(chat.conversation, answer, key=key)
            self._wake()
        else:
            self._start_turn(chat, user, text, key)

    def _heard_from_group(self, channel: str, thread_ts: str) -> None:
        """A group's message in a thread the agent is in turns its conversation off for good
        (O2), even when the message was not for the agent."""
        try:
            self.rv.conversation(conversation_ref(channel, thread_ts))
        except NotFound:
            return
        self._chat(channel, thread_ts, "group")

    def _kind(self, body: dict[str, Any], event: dict[str, Any]) -> str:
        shared = bool(body.get("is_ext_shared_channel"))
        channel_type = event.get("channel_type")
        if channel_type is None:  # app_mention carries none
            channel_type, ext = self.directory.channel_kind(event["channel"])
            shared = shared or ext
        return message_kind(channel_type, shared)

    def dm_agent(self) -> str | None:
        """The name of the agent that answers DMs: ``REVERIE_SLACK_AGENT`` (a name or an
        id), else the only active agent; None when there is none, or the setting names an
        agent deleted since the app started."""
        if self.settings.slack_agent:
            try:
                return self.rv.agent(self.settings.slack_agent).name
            except NotFound:
                return None
        active = [a.name for a in self.rv.agents() if not a.archived]
        return active[0] if len(active) == 1 else None

    def _no_agent(self, channel: str, thread_ts: str, kind: str, key: str) -> None:
        """Say in the thread that no agent answers there, and who can change that. No agent
        means no outbox row to queue, so it is posted at once, once per event."""
        if kind == "dm":
            if self.settings.slack_agent:
                why = "REVERIE_SLACK_AGENT names an agent that no longer exists"
            elif any(not a.archived for a in self.rv.agents()):
                why = "there are several agents and none is set to answer DMs"
            else:
                why = "there is no agent yet (`reverie agent create NAME` makes one)"
            text = (
                f"No agent answers DMs here: {why}. An admin sets REVERIE_SLACK_AGENT to the "
                "agent that should answer. Nothing was kept."
            )
        else:
            text = (
                "No agent answers in this channel: none holds a grant here. An admin grants "
                f"one with `reverie grant AGENT --slack-channel {channel}`. Nothing was kept."
            )
        log.warning("No agent answers Slack chat %s: %s", channel, text)
        self.worker.post_once(channel, thread_ts, text, key)

    def _agent_for(self, base: str, base_kind: str) -> str | None:
        """The agent of a chat: the DM agent in a DM; in a channel the one granted there (the
        DM agent first when several are), else one whose grant was revoked (so that its
        refusals can say so), else the DM agent."""
        dm = self.dm_agent()
        if base_kind == "dm":
            return dm
        active = {a.id: a.name for a in self.rv.agents() if not a.archived}
        held = {
            active[g.agent_id]: g.status
            for g in self.rv.channel_grants(base)
            if g.agent_id in active
        }
        for status in ("active", "revoked"):
            names = sorted(n for n, s in held.items() if s == status)
            if names:
                return dm if dm in names else names[0]
        return dm

    def _chat(self, channel: str, thread_ts: str, kind: str) -> Chat | None:
        base = channel_ref(channel)
        try:
            base_kind = self.rv.channel(base).kind
        except NotFound:
            base_kind = self.rv.ensure_channel(base, "dm" if kind == "dm" else "channel").kind
        source = base
        if kind == "group":
            source = self.rv.ensure_channel(group_ref(channel), "group").id
        elif base_kind == "dm":
            kind = "dm"
        conversation = conversation_ref(channel, thread_ts)
        agent_name = None
        try:
            conv = self.rv.conversation(conversation)
        except NotFound:
            agent = self._agent_for(base, base_kind)
            if agent is None:
                return None
            conv, created = self._create(agent, source, conversation)
            if created and agent != conv.agent_id:  # a name (REVERIE_SLACK_AGENT may be an id)
                agent_name = agent
        if source != conv.channel_id and source not in conv.linked_chats:
            # The thread now reaches a group: its memory is off for good (O2).
            conv = self.rv.link_chat(conv.id, source)
        if agent_name is None:
            agent_name = self.rv.agent(conv.agent_id).name
        return Chat(channel, thread_ts, kind, base, source, conv.id, agent_name)

    def _create(self, agent: str, source: str, conversation: str) -> tuple[Any, bool]:
        """The thread's conversation, created for ``agent``, and whether this call created
        it (else another delivery of the event did, just now)."""
        try:
            return self.rv.create_conversation(agent, source, conversation_id=conversation), True
        except RefusedInput as exc:
            if exc.code != "already_exists":
                raise
            return self.rv.conversation(conversation), False

    # turns

    def _admitted(self, base: str, agent: str) -> bool:
        if self.rv.channel(base).kind == "dm":
            return True
        return any(g.channel_id == base and g.status == "active" for g in self.rv.grants(agent))

    def _refuse(self, conversation: str, agent: str, channel: str, key: str) -> None:
        self.rv.reply(
            conversation,
            f"I can't answer here: agent {agent} has no active grant in this channel. "
            f"An admin can add one with `reverie grant {agent} --slack-channel {channel}`.",
            key=key,
        )
        self._wake()

    # the locks of turns under way

    def _turn_lock(self, key: str) -> contextlib.AbstractContextManager[bool]:
        """Hold the turn of the event ``key`` (never waits; yields whether it is held), for
        every process serving this home: a file lock in the home's folder, or on PostgreSQL
        an advisory lock, for every server sharing the database."""
        return self.rv.state.try_turn_lock(key)

    def _start_turn(self, chat: Chat, user: SlackUser, text: str, key: str) -> None:
        if not self._admitted(chat.base, chat.agent):
            self._refuse(chat.conversation, chat.agent, chat.channel, key)
            return
        hold = contextlib.ExitStack()
        handed = False
        refused: RefusedInput | None = None
        try:
            if not hold.enter_context(self._turn_lock(key)):
                return  # another delivery of the event (here or elsewhere) has the turn
            with self._lock:
                if key in self._running:
                    return  # a retry while the turn is still under way
                # The person's message is recorded before Slack is acknowledged; from a group
                # it turns the conversation off for good (O2).
                try:
                    appended = self.rv.append_message(
                        chat.conversation,
                        "user",
                        text,
                        author=user.member,
                        channel_id=chat.source,
                        message_id=key,
                    )
                except RefusedInput as exc:  # a control character, too long: nothing kept
                    refused = exc
                else:
                    if not appended.added and self.rv.turn_log(
                        chat.conversation, appended.position, appended.position + 1
                    ):
                        # An earlier delivery (maybe to another process) recorded the message
                        # and its turn started: it answers, or has answered.
                        return
                    self._running[key] = self._turns.submit(
                        self._run_turn, chat.agent, chat.conversation, user.member, text, key, hold
                    )
                    handed = True
            if refused is not None:
                # The refusal is the event's answer (Slack is acknowledged, and a retry finds
                # the answer and runs nothing).
                said = ending(about_message(refused, text) or refused.message, "Nothing was kept.")
                self.rv.reply(chat.conversation, said, key=key)
                self._wake()
        finally:
            if not handed:
                hold.close()

    def _provider(self, agent: str) -> ChatProvider:
        """The agent's model, built once per model name (an SDK client is slow to build)."""
        model = self.rv.agent(agent).default_model or self.settings.model or ""
        with self._lock:
            provider = self._providers.get(model)
        if provider is None:
            provider = self.rv.chat_provider(agent)
            with self._lock:
                self._providers[model] = provider
        return provider

    def _run_turn(
        self,
        agent: str,
        conversation: str,
        member: str | None,
        text: str,
        key: str,
        hold: contextlib.ExitStack | None = None,
        *,
        resume: bool = False,
    ) -> None:
        try:
            provider = self.provider or self._provider(agent)
            self.rv.turn(
                conversation,
                text,
                author=member,
                message_id=key,
                provider=provider,
                resume=resume,
            )
        except ReverieError as exc:
            if exc.code in _SAID_AS_IS:
                said = f"I could not answer: {exc.message}"
            else:
                log.warning("A Slack turn in %s failed (%s): %s", conversation, exc.code, exc)
                said = (
                    f"I could not answer just now ({exc.code}). Please try again later; an "
                    "admin finds the reason in the server log."
                )
            self.rv.reply(conversation, said, key=key)
        except Exception:
            log.exception("A Slack turn failed in conversation %s", conversation)
        finally:
            with self._lock:
                self._running.pop(key, None)
            if hold is not None:
                hold.close()  # the event's turn lock
            self._wake()
