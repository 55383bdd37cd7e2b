"""One JSON error shape for every HTTP answer that is not a success.

``{"error": {"code": "...", "message": "...", ...}}``, the shape of the CLI's ``--json``, with
the stable code of :mod:`reverie.errors` and the HTTP status that says the same thing:

* 400 the request is wrong (``RefusedInput``); 413 when it is too large;
* 401 no credentials, or ones that do not work (``unauthenticated``);
* 403 the member may not (``PermissionDenied``);
* 404 no such agent, revision, file, conversation or approval (``NotFound``);
* 409 the memory moved (``revision_conflict``); 412 when the expectation came in ``If-Match``;
* 422 the request does not match the API's schema (``invalid_request``);
* 502 the model failed; 503 the data directory failed (``StorageFault``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException

from reverie.errors import (
    NotFound,
    PermissionDenied,
    RefusedInput,
    ReverieError,
    RevisionConflict,
    StorageFault,
)

__all__ = ["ErrorBody", "install", "status_of"]

_TOO_LARGE = {"memory_too_large", "message_too_large", "soul_too_large"}


class ErrorDetail(BaseModel):
    """What went wrong: a stable code and a message that says what to do."""

    model_config = ConfigDict(extra="allow")
    code: str
    message: str


class ErrorBody(BaseModel):
    """Every error answer of the API."""

    error: ErrorDetail


def status_of(exc: ReverieError, *, if_match: bool = False) -> int:
    """The HTTP status of a refusal or fault."""
    if isinstance(exc, RevisionConflict):
        return 412 if if_match else 409
    if isinstance(exc, PermissionDenied):
        return 401 if exc.code == "unauthenticated" else 403
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, RefusedInput):
        return 413 if exc.code in _TOO_LARGE else 400
    if isinstance(exc, StorageFault):
        return 503
    if exc.code in ("model_unavailable", "model_bad_answer"):
        return 502
    return 500


def error_response(
    status: int, code: str, message: str, details: dict[str, Any] | None = None
) -> JSONResponse:
    """An error answer in the one shape (``details`` never override the code or message)."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    body = {"error": {**_jsonable(details or {}), "code": code, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


#: Renders a refusal as a page for the admin page's paths.
HtmlErrors = Callable[[Request, int, str, str], Response]


def install(app: FastAPI, html: HtmlErrors | None = None) -> None:
    """Route every error of the app to the one shape (a page under ``/admin/`` with ``html``)."""

    @app.exception_handler(ReverieError)
    async def reverie_error(request: Request, exc: ReverieError) -> Response:
        status = status_of(exc, if_match=getattr(request.state, "if_match", False))
        if html is not None and request.url.path.startswith("/admin/"):
            return html(request, status, exc.code, exc.message)
        return error_response(status, exc.code, exc.message, exc.details)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {"field": ".".join(str(p) for p in e.get("loc", ())), "problem": e.get("msg", "")}
            for e in exc.errors()
        ]
        first = problems[0] if problems else {"field": "", "problem": "invalid"}
        return error_response(
            422,
            "invalid_request",
            f"{first['field']}: {first['problem']}. See /openapi.json for the request's shape.",
            {"problems": problems},
        )

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, str(exc.detail))


def _jsonable(details: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in details.items():
        if key in ("code", "message"):
            continue
        out[key] = (
            value
            if isinstance(value, str | int | float | bool | list | dict) or value is None
            else str(value)
        )
    return out
