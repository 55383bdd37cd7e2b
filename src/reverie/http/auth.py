"""Who is calling over HTTP: a bearer API token for the API and MCP, a session cookie (with a
CSRF secret on every form) for the admin page. No token, or one that works for no one, is
answered 401; a working token whose member is deactivated, 403 ``inactive_member``."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from reverie.access import Actor, by_token
from reverie.api import Reverie
from reverie.errors import PermissionDenied

__all__ = ["SESSION_COOKIE", "actor_of", "bearer", "current_actor", "home"]

SESSION_COOKIE = "reverie_session"
bearer = HTTPBearer(auto_error=False, description="An API token: `reverie token create MEMBER`.")


def home(request: Request) -> Reverie:
    """The home this app serves."""
    rv: Reverie = request.app.state.reverie
    return rv


def actor_of(rv: Reverie, token: str | None) -> Actor:
    """The member a bearer token stands for.

    Raises:
        PermissionDenied: ``unauthenticated`` (HTTP 401); ``inactive_member`` (HTTP 403).
    """
    actor = by_token(rv, token)
    if actor is None:
        raise PermissionDenied(
            "Send an API token as `Authorization: Bearer <token>` (create one with "
            "`reverie token create MEMBER`); this one is missing, unknown or revoked.",
            code="unauthenticated",
        )
    return actor


async def current_actor(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Actor:
    """The calling member of an API request (two indexed reads: run inline, not in a thread),
    or the one :class:`~reverie.http.limits.RequestLimits` found for it before its body."""
    found = getattr(request.state, "actor", None)
    if isinstance(found, Actor):
        return found
    return actor_of(home(request), credentials.credentials if credentials else None)
