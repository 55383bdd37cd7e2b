"""What a request may bring, checked before anything reads its body.

A body larger than :func:`max_body_bytes` is answered 413 ``request_too_large`` (from its
``Content-Length`` at once, or as soon as a streamed body passes the limit), and an API or MCP
call without a working token is answered 401 (403 for a deactivated member's) before its body
is read, whatever its size: parsing hundreds of megabytes of JSON would cost the server the
memory it needs for everyone else.
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reverie.config import Settings
from reverie.errors import ReverieError

from .auth import actor_of
from .errors import error_response, status_of

__all__ = ["RequestLimits", "max_body_bytes", "size_text"]

#: Paths that answer without credentials.
_OPEN = ("/api/health",)
KIB = 1024
MIB = 1024 * KIB


def max_body_bytes(settings: Settings) -> int:
    """The largest request body: twice the largest batch, room for a batch's JSON escapes."""
    return 2 * settings.max_batch_bytes


def size_text(size: int) -> str:
    """A number of bytes as people read it: ``64 MiB``, ``390.6 KiB (400,000 bytes)``,
    ``900 bytes`` (the exact count added where the short form is rounded)."""
    for unit, name in ((MIB, "MiB"), (KIB, "KiB")):
        if size >= unit:
            tenths = round(size * 10 / unit)
            short = f"{tenths / 10:,.1f}".removesuffix(".0")
            exact = tenths * unit == size * 10
            return f"{short} {name}" if exact else f"{short} {name} ({size:,} bytes)"
    return f"{size:,} bytes"


def _needs_token(path: str) -> bool:
    """The API (but its health check) and MCP answer only a caller with a working token."""
    if path.startswith("/api/"):
        return path not in _OPEN
    return path == "/mcp" or path.startswith("/mcp/")


class RequestLimits:
    """ASGI middleware: the body limit, and the API's credentials asked for before its body."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.limit = max_body_bytes(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        path = scope["path"]
        length = headers.get(b"content-length", b"")
        brings_body = length not in (b"", b"0") or b"transfer-encoding" in headers
        if _needs_token(path):
            # No token, or (before a body is read) one that works for no one: 401 at once.
            given = headers.get(b"authorization", b"").decode("latin-1")
            token = given[7:].strip() if given[:7].lower() == "bearer " else None
            if token is None or brings_body:
                try:
                    actor = actor_of(scope["app"].state.reverie, token)
                except ReverieError as exc:  # no such member, or the state store failed
                    status = status_of(exc)
                    await error_response(status, exc.code, exc.message)(scope, receive, send)
                    return
                # The endpoint (its dependency, MCP's bearer check) takes it from here: one
                # lookup a request.
                scope.setdefault("state", {})["actor"] = actor
        if length.isdigit() and int(length) > self.limit:
            await self._refuse(scope, receive, send)
            return
        seen = 0
        started = refused = False

        async def counted() -> Message:
            # Past the limit the app is told the client went away, so it stops reading; the
            # 413 is sent here, and whatever the app answers after it is dropped.
            nonlocal seen, refused
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit and not refused:
                refused = True
                if not started:
                    await self._refuse(scope, receive, send)
            return {"type": "http.disconnect"} if refused else message

        async def watched(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counted, watched)

    async def _refuse(self, scope: Scope, receive: Receive, send: Any) -> None:
        await error_response(
            413,
            "request_too_large",
            f"The request body is over {size_text(self.limit)}, the most a request may bring "
            "(twice REVERIE_MAX_BATCH_BYTES). Send less at once (import conversations in parts, "
            "move detail into topic files); nothing was read or written.",
        )(scope, receive, send)
