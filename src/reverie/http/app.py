"""The one ASGI application of ``reverie serve``: the JSON API under ``/api``, the admin page
under ``/admin``, MCP over streamable HTTP at ``/mcp``, OpenAPI at ``/openapi.json``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from pydantic import BaseModel
from starlette.routing import Route

from reverie import __version__
from reverie.api import Reverie

from . import errors
from .api import router
from .limits import RequestLimits

__all__ = ["app_from_environment", "create_app"]


class Health(BaseModel):
    status: str
    version: str


def create_app(
    rv: Reverie,
    *,
    mcp: bool = True,
    admin: bool = True,
    routes: list[Route] | None = None,
    stateless_mcp: bool = False,
) -> FastAPI:
    """The app serving ``rv``: API, admin page and (with ``mcp``) the MCP endpoint.
    ``routes`` adds other ASGI endpoints (the Slack events endpoint, say)."""
    lifespans: list[Callable[[], Any]] = []
    mcp_app = None
    if mcp:
        from .mcp_http import mcp_asgi

        mcp_app, mcp_lifespan = mcp_asgi(rv, stateless=stateless_mcp)
        lifespans.append(mcp_lifespan)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for enter in lifespans:
                await stack.enter_async_context(enter())
            yield

    app = FastAPI(
        title="Reverie",
        version=__version__,
        description="Durable, revisioned memory for chat agents. Authenticate with "
        "`Authorization: Bearer <token>` (`reverie token create MEMBER`).",
        lifespan=lifespan,
    )
    app.state.reverie = rv
    html = None
    if admin:
        from .admin import error_page

        html = error_page
    errors.install(app, html)
    app.add_middleware(RequestLimits, settings=rv.settings)
    app.include_router(router)

    @app.get("/api/health", response_model=Health, tags=["health"], summary="Is it up?")
    def health() -> Health:
        return Health(status="ok", version=__version__)

    if admin:
        from .admin import install as install_admin

        install_admin(app)

        @app.get("/", include_in_schema=False)
        def root() -> RedirectResponse:
            return RedirectResponse("/admin/", status_code=303)

    if mcp_app is not None:
        app.router.routes.append(Route("/mcp", endpoint=mcp_app, include_in_schema=False))
    app.router.routes.extend(routes or ())
    return app


def app_from_environment() -> FastAPI:
    """The app of one HTTP worker of ``reverie serve --workers N``: the home from the
    environment, MCP without sessions (a client's next request may reach another worker)."""
    rv = Reverie()
    return create_app(rv, stateless_mcp=True)
