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

Under ``/admin/`` the same refusals are pages, never JSON (``install(app, html)``): the same
status and code, a form over the form parser's limit answered 413 ``form_too_large`` (Starlette
says 400), an unknown page 404, a value the route cannot use 422.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException
from starlette.routing import Match

from reverie.errors import (
    NotFound,
    PermissionDenied,
    RefusedInput,
    ReverieError,
    RevisionConflict,
    StorageFault,
    shown,
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

    def page(request: Request) -> HtmlErrors | None:
        return html if html is not None and request.url.path.startswith("/admin/") else None

    @app.exception_handler(ReverieError)
    async def reverie_error(request: Request, exc: ReverieError) -> Response:
        status = status_of(exc, if_match=getattr(request.state, "if_match", False))
        if (as_page := page(request)) is not None:
            return as_page(request, status, exc.code, exc.message)
        return error_response(status, exc.code, exc.message, exc.details)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        # A field's name is what the caller sent (an unknown key): said as an error says it.
        problems = [
            {
                "field": shown(".".join(str(p) for p in e.get("loc", ())), 200),
                "problem": shown(str(e.get("msg", "")), 500),
            }
            for e in exc.errors()[:20]
        ]
        first = problems[0] if problems else {"field": "", "problem": "invalid"}
        if (as_page := page(request)) is not None:
            return as_page(
                request,
                422,
                "invalid_request",
                f"This address or form holds a value the page cannot use ({first['field']}: "
                f"{first['problem']}). Nothing was changed.",
            )
        return error_response(
            422,
            "invalid_request",
            f"{first['field']}: {first['problem']}. See /openapi.json for the request's shape.",
            {"problems": problems},
        )

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        if (as_page := page(request)) is not None:
            return _as_page(as_page, request, exc, code)
        message = str(exc.detail)
        if exc.status_code == 405:
            message = (
                f"{request.url.path} does not answer {request.method}; it answers "
                f"{_allowed(request, exc)}. Nothing was done."
            )
        if exc.status_code == 400 and message == _UNREADABLE_BODY:
            code, message = (
                "invalid_body",
                "The request body could not be read as JSON: send UTF-8 JSON (nested at most "
                "a few hundred levels) with `Content-Type: application/json`. Nothing was "
                "written.",
            )
        response = error_response(exc.status_code, code, message)
        response.headers.update(_headers(request, exc))
        return response


def _headers(request: Request, exc: HTTPException) -> dict[str, str]:
    """The headers an HTTP error of the app carries: its own, a 405's ``Allow`` made whole."""
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = _allowed(request, exc)
    return headers


#: The methods a 405's ``Allow`` may name, in the order it names them.
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _allowed(request: Request, exc: HTTPException) -> str:
    """Every method the request's path answers, for a 405's ``Allow`` (RFC 9110 15.5.6).
    Each method of a path is a route of its own here, and Starlette's 405 names only the
    methods of the first route whose path matched: the app's routes are asked again, for
    each method, whether they would take the path with it."""
    routes = getattr(request.app, "routes", ())
    allowed = [
        method
        for method in _METHODS
        if any(r.matches({**request.scope, "method": method})[0] is Match.FULL for r in routes)
    ]
    if not allowed:  # not a route of this app's (a mounted app's own): as it said
        return str((exc.headers or {}).get("Allow", ""))
    return ", ".join(allowed)


#: What FastAPI says of a body it could not parse (bytes that are not UTF-8, JSON too deep).
_UNREADABLE_BODY = "There was an error parsing the body"


#: How Starlette's form parser says a field or part is over its limit (it answers 400).
_FORM_TOO_LARGE = ("Field exceeded maximum size", "Part exceeded maximum size")


def _as_page(html: HtmlErrors, request: Request, exc: HTTPException, code: str) -> Response:
    """An HTTP error of the admin page's paths, as a page that says what happened."""
    detail = str(exc.detail)
    if exc.status_code == 400 and detail.startswith(_FORM_TOO_LARGE):
        return html(
            request,
            413,
            "form_too_large",
            "The form was larger than the server reads (1 MB a field), so it was not read: "
            "nothing was saved.",
        )
    if exc.status_code == 404:
        return html(request, 404, code, "There is no page at this address.")
    if exc.status_code == 405:
        page = html(
            request, 405, code, f"This address does not answer {request.method}; open it as a link."
        )
        page.headers.update(_headers(request, exc))
        return page
    return html(request, exc.status_code, code, f"{detail.rstrip('.')}. Nothing was changed.")


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
