"""MCP over streamable HTTP at ``/mcp``: the SDK's session manager behind a bearer check.

Every request must carry ``Authorization: Bearer <token>`` (``reverie token create MEMBER``);
the member it belongs to is what every tool call acts as. Without one the answer is 401 in the
API's JSON error shape (given before the body is read, as for the API), and 403
``inactive_member`` for a token whose member is deactivated.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from reverie.access import Actor
from reverie.api import Reverie
from reverie.errors import PermissionDenied
from reverie.mcp.server import build_server

from .auth import actor_of
from .errors import error_response, status_of

__all__ = ["mcp_asgi"]

_MEMBER = "reverie.member"


def mcp_asgi(
    rv: Reverie, *, stateless: bool = False
) -> tuple[Any, Callable[[], contextlib.AbstractAsyncContextManager[None]]]:
    """The ``/mcp`` ASGI app and the lifespan its session manager needs; ``stateless`` when
    requests of one client may reach different processes."""

    def resolve(ctx: Any) -> Actor:
        request = getattr(ctx, "request", None)
        name = request.scope.get(_MEMBER) if request is not None else None
        if name is None:
            raise PermissionDenied("No member for this MCP request.", code="unauthenticated")
        return rv.as_member(name)

    server = build_server(rv, resolve)
    manager = StreamableHTTPSessionManager(app=server, json_response=False, stateless=stateless)
    return _Bearer(rv, StreamableHTTPASGIApp(manager)), lambda: _running(manager)


class _Bearer:
    """An ASGI app (a class, so that Starlette routes every method to it) that lets through
    requests with a working bearer token, marked with their member."""

    def __init__(self, rv: Reverie, inner: Any) -> None:
        self.rv = rv
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        token = header[7:].strip() if header[:7].lower() == "bearer " else None
        found = (scope.get("state") or {}).get("actor")  # RequestLimits looked it up already
        try:
            actor = (
                found
                if isinstance(found, Actor)
                else await anyio.to_thread.run_sync(actor_of, self.rv, token)
            )
        except PermissionDenied as exc:
            response = error_response(status_of(exc), exc.code, exc.message)
            await response(scope, receive, send)
            return
        await self.inner({**scope, _MEMBER: actor.member.name}, receive, send)


@contextlib.asynccontextmanager
async def _running(manager: StreamableHTTPSessionManager) -> AsyncIterator[None]:
    async with manager.run():
        yield
