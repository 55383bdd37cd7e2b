"""Slack's Events API over HTTP: an ASGI endpoint for ``POST /slack/events``.

``reverie serve`` mounts it as a route (an instance, so that Starlette and FastAPI treat it as
an ASGI app)::

    surface = SlackSurface(rv)
    surface.start()                      # the outbox worker; surface.stop() on shutdown
    app.router.routes.append(Route(EVENTS_PATH, EventsEndpoint(surface), methods=["POST"]))

The request is handed to :meth:`SlackSurface.dispatch` on a worker thread, so that a command's
write or a Slack lookup never holds up the server's event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from reverie.errors import ReverieError

from .app import HTTPAnswer, SlackSurface
from .client import require

__all__ = ["EVENTS_PATH", "EventsEndpoint"]

#: Where Slack posts events (the app manifest's ``request_url`` ends with it).
EVENTS_PATH = "/slack/events"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class EventsEndpoint:
    """An ASGI app answering Slack's event requests with :meth:`SlackSurface.dispatch`.

    Raises:
        RefusedInput: ``slack_not_configured`` at construction without
            ``SLACK_SIGNING_SECRET``: unsigned events are never accepted.
    """

    def __init__(self, surface: SlackSurface) -> None:
        require(surface.settings.slack_signing_secret, "SLACK_SIGNING_SECRET")
        self.surface = surface

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        if scope["method"] != "POST":
            answer = HTTPAnswer(405, {"allow": "POST"}, b"")
        else:
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            query = scope.get("query_string", b"").decode("latin-1")
            loop = asyncio.get_running_loop()
            try:
                answer = await loop.run_in_executor(
                    None, self.surface.dispatch, body, query, headers
                )
            except ReverieError as exc:
                answer = HTTPAnswer(503, {"content-type": "text/plain"}, exc.message.encode())
        await send(
            {
                "type": "http.response.start",
                "status": answer.status,
                "headers": [
                    (k.encode(), v.encode())
                    for k, v in answer.headers.items()
                    if k != "content-length"
                ]
                + [(b"content-length", str(len(answer.body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": answer.body})
