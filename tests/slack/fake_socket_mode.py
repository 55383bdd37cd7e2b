"""Slack's Socket Mode on 127.0.0.1: the websocket an app opens after ``apps.connections.open``.

It speaks the protocol as Slack does: on each connection it says ``hello``; an event arrives as
an envelope ``{"envelope_id", "type": "events_api", "payload": <the Events API body>,
"accepts_response_payload", "retry_attempt", "retry_reason"}``; the app acknowledges it by
sending back ``{"envelope_id": ...}``. The real ``slack_sdk`` ``SocketModeClient`` (through
bolt's ``SocketModeHandler``) connects to it unchanged: :class:`FakeSlack` hands out its URL
from ``apps.connections.open``.
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Server, ServerConnection, serve

__all__ = ["FakeSocketMode"]


class FakeSocketMode:
    """A Socket Mode endpoint for one app; :meth:`push` sends an event and waits for its ack."""

    def __init__(self, app_id: str = "A0APP") -> None:
        self.app_id = app_id
        #: Acknowledgements received, by envelope id.
        self.acks: dict[str, dict[str, Any]] = {}
        #: Connections opened so far.
        self.connections = 0
        self._changed = threading.Condition()
        self._conn: ServerConnection | None = None
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def __enter__(self) -> FakeSocketMode:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._server = serve(self._session, "127.0.0.1", 0)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        port = self._server.socket.getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/link/?ticket=local-ticket&app_id={self.app_id}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _session(self, conn: ServerConnection) -> None:
        hello = {
            "type": "hello",
            "num_connections": 1,
            "debug_info": {"host": "local", "approximate_connection_time": 18060},
            "connection_info": {"app_id": self.app_id},
        }
        conn.send(json.dumps(hello))
        with self._changed:
            self._conn = conn
            self.connections += 1
            self._changed.notify_all()
        try:
            for message in conn:
                data = json.loads(message)
                if isinstance(data, dict) and "envelope_id" in data:
                    with self._changed:
                        self.acks[str(data["envelope_id"])] = data
                        self._changed.notify_all()
        except ConnectionClosed:
            pass
        finally:
            with self._changed:
                if self._conn is conn:
                    self._conn = None
                self._changed.notify_all()

    def wait_connected(self, timeout: float = 60) -> bool:
        """Whether an app is connected (waiting up to ``timeout`` seconds for one)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._conn is not None, timeout)

    def push(
        self, body: dict[str, Any], *, retry_attempt: int = 0, timeout: float = 60
    ) -> dict[str, Any]:
        """Send one Events API body as Slack does over Socket Mode; the app's acknowledgement.

        Raises:
            TimeoutError: no app connected, or no acknowledgement within ``timeout`` seconds.
        """
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": "events_api",
            "payload": body,
            "accepts_response_payload": False,
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
        }
        if not self.wait_connected(timeout):
            raise TimeoutError("no app is connected over Socket Mode")
        with self._changed:
            conn = self._conn
        assert conn is not None
        conn.send(json.dumps(envelope))
        with self._changed:
            if not self._changed.wait_for(lambda: envelope_id in self.acks, timeout):
                raise TimeoutError(f"envelope {envelope_id} was never acknowledged")
            return self.acks[envelope_id]
