"""Posting the agent's outbox to Slack, exactly once (SPEC T1, P3).

Answers, the P3 failure notice, ``notify`` messages and command answers are outbox rows of
Slack channels (``slack:...``). The worker claims a row (a lease, so two workers never post the
same row), posts it in its conversation's thread with ``chat.postMessage``, and marks it
delivered with the message's ``ts`` as the receipt.

A worker can die between the post and the mark. Then the claim runs out, another worker
claims the row again (``attempts`` > 1), and before posting it looks in the thread (or the
channel) for a message whose metadata carries the delivery id: every post carries it
(``reverie_delivery``). Found, the row is marked delivered with that message's ``ts``; nothing
is posted twice.

A transient refusal (rate limited, Slack unreachable) leaves the row claimed until its lease
runs out, which spaces the next try; a final refusal (``channel_not_found``, ...) is recorded
as the receipt ``error:<code>`` and the row is not tried again.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from typing import Any

from slack_sdk import WebClient

from reverie.api import Reverie
from reverie.store.outbox import Delivery

from .client import SlackError, call
from .mapping import is_slack_channel, slack_channel, thread_of
from .text import to_slack

__all__ = ["METADATA_TYPE", "DeliveryWorker", "WakeSender"]

log = logging.getLogger(__name__)

#: The metadata event type of every message the worker posts; its payload names the delivery.
METADATA_TYPE = "reverie_delivery"

#: Receipts recorded in one transaction: the most posts a poster that dies can leave to be
#: looked up (not posted again) by the next.
MARK_EVERY = 16


class DeliveryWorker:
    """Posts pending Slack deliveries: :meth:`deliver_pending` once, or a thread that does it
    every ``poll_seconds`` and whenever :meth:`wake` is called."""

    def __init__(
        self,
        rv: Reverie,
        client: WebClient,
        *,
        lease_seconds: float = 60.0,
        poll_seconds: float = 1.0,
    ) -> None:
        self.rv = rv
        self.client = client
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._listener: socket.socket | None = None

    def deliver_pending(self) -> int:
        """Post every pending delivery of a Slack channel; how many were marked delivered.

        A page of rows is claimed in one transaction and the receipts are recorded
        :data:`MARK_EVERY` at a time, so that posting costs the state database a few
        transactions per page rather than two per message (the writers of commands wait for
        the same database). A row whose lease may have run out by the time its turn comes is
        left for the next pass rather than posted, and so are the rows after a deferred one in
        its conversation: the answers of a conversation are posted in order."""
        channels = [c.id for c in self.rv.channels() if is_slack_channel(c.id)]
        if not channels:
            return 0
        done = 0
        seen: set[str] = set()
        while True:  # pages of 100, oldest first, until a page brings nothing new
            page = [d.id for d in self.rv.pending_deliveries(channels=channels)]
            page = [i for i in page if i not in seen]
            if not page:
                return done
            seen.update(page)
            cutoff = time.monotonic() + self.lease_seconds / 2
            receipts: dict[str, str] = {}
            held: set[tuple[str, str | None]] = set()  # chats whose earlier answer is deferred
            try:
                for claimed in self.rv.outbox.claim_many(page, self.lease_seconds):
                    if time.monotonic() > cutoff:
                        break  # the rest are taken again once their leases run out
                    chat = (claimed.channel_id, claimed.conversation_id)
                    if chat in held:
                        continue  # after the deferred one, in order, once the leases run out
                    receipt = self._deliver(claimed)
                    if receipt is None:
                        held.add(chat)
                    else:
                        receipts[claimed.id] = receipt
                    if len(receipts) >= MARK_EVERY:
                        self.rv.outbox.delivered_many(receipts)
                        done += len(receipts)
                        receipts = {}
            finally:
                if receipts:
                    self.rv.outbox.delivered_many(receipts)
                    done += len(receipts)

    def _deliver(self, d: Delivery) -> str | None:
        """Post ``d`` (unless an earlier attempt did); its receipt, or None to try again
        later."""
        channel = slack_channel(d.channel_id)
        thread = thread_of(d.conversation_id)
        thread_ts = thread[1] if thread is not None and thread[0] == channel else None
        try:
            if d.attempts > 1:
                found = self._posted(channel, thread_ts, d.id, d.created_at)
                if found is not None:
                    return found
            posted = self._post(channel, thread_ts, d.text, d.id)
        except SlackError as exc:
            if exc.transient:
                log.warning("Slack delivery %s deferred: %s", d.id, exc.code)
                return None  # the lease spaces the next try
            log.warning("Slack delivery %s refused for good: %s", d.id, exc.code)
            return f"error:{exc.code}"
        return str(posted.get("ts") or "")

    def post_once(self, channel: str, thread_ts: str, text: str, key: str) -> None:
        """Post ``text`` in a thread once for ``key`` (a chat event's id), outside the outbox:
        for the answers that no agent gives, so no outbox row can hold (no agent answers DMs
        here). The post carries ``key`` as its delivery id, and a post for the same key found
        in the thread (a retried event) is not made again. Whatever Slack refuses is logged.
        """
        try:
            if self._posted(channel, thread_ts, key, 0.0) is None:
                self._post(channel, thread_ts, text, key)
        except SlackError as exc:
            log.warning("Slack refused the answer to %s: %s", key, exc.code)

    def _post(
        self, channel: str, thread_ts: str | None, text: str, delivery_id: str
    ) -> dict[str, Any]:
        """``chat.postMessage``, carrying the delivery id in the message's metadata.

        Raises:
            SlackError: Slack refused, or could not be reached.
        """
        return call(
            "chat.postMessage",
            self.client.chat_postMessage,
            channel=channel,
            thread_ts=thread_ts,
            text=to_slack(text),
            unfurl_links=False,
            unfurl_media=False,
            metadata={"event_type": METADATA_TYPE, "event_payload": {"delivery": delivery_id}},
        )

    def _posted(
        self, channel: str, thread_ts: str | None, delivery_id: str, created_at: float
    ) -> str | None:
        """The ts of a message already posted for the delivery ``delivery_id`` (by a worker
        that died before marking it), else None."""
        if thread_ts is not None:
            method, fn = "conversations.replies", self.client.conversations_replies
            args = {"ts": thread_ts}
        else:
            method, fn = "conversations.history", self.client.conversations_history
            args = {"oldest": f"{created_at - 1:.6f}"}
        cursor: str | None = None
        while True:
            page = call(
                method,
                fn,
                channel=channel,
                include_all_metadata=True,
                limit=200,
                cursor=cursor,
                **args,
            )
            for message in page.get("messages") or []:
                meta = message.get("metadata") or {}
                payload = meta.get("event_payload") or {}
                if (
                    meta.get("event_type") == METADATA_TYPE
                    and payload.get("delivery") == delivery_id
                ):
                    return str(message.get("ts") or "")
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                return None

    # the background thread

    def wake(self) -> None:
        """Deliver now rather than at the next poll."""
        self._wake.set()

    def listen(self) -> int:
        """Also wake on any datagram to a UDP port of ``127.0.0.1``, so that other processes
        queuing deliveries (the HTTP workers of ``reverie serve --workers N``) need not wait
        for the next poll; returns the port (:class:`WakeSender`). A datagram carries no
        command: it only makes the worker look at the outbox now, so a stray one is harmless."""
        if self._listener is None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind(("127.0.0.1", 0))
            sock.settimeout(0.5)
            self._listener = sock
            threading.Thread(
                target=self._hear, args=(sock,), name="reverie-slack-wake", daemon=True
            ).start()
        return int(self._listener.getsockname()[1])

    def _hear(self, sock: socket.socket) -> None:
        while self._listener is sock:
            try:
                sock.recv(64)
            except TimeoutError:
                continue
            except OSError:  # closed by stop()
                return
            self._wake.set()

    def start(self) -> None:
        """Run in a background thread until :meth:`stop`."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._loop, name="reverie-slack-delivery", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop the background thread (after the delivery under way)."""
        self._stop.set()
        self._wake.set()
        if self._listener is not None:
            sock, self._listener = self._listener, None
            sock.close()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                self.deliver_pending()
            except Exception:  # a fault here must not end deliveries for good
                log.exception("Slack delivery pass failed; trying again")
            self._wake.wait(self.poll_seconds)
        self.rv.close()


class WakeSender:
    """Wakes a :class:`DeliveryWorker` of another process that :meth:`~DeliveryWorker.listen`
    s on ``port``: one datagram, never waiting, and nothing lost but a little time when it is
    dropped (the worker polls anyway)."""

    def __init__(self, port: int) -> None:
        self.address = ("127.0.0.1", port)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.setblocking(False)

    def wake(self) -> None:
        """Ask the worker to look at the outbox now."""
        # A full buffer or no listener: the next poll finds the rows.
        with contextlib.suppress(OSError):
            self._sock.sendto(b"w", self.address)
