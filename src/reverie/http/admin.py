"""The admin page (SPEC A1, I2, 11): server-rendered with Jinja2, plain forms, no build step.

A person signs in with a one-time link (``reverie serve`` prints one at first start; ``reverie
token link MEMBER`` makes another) or an API token, and gets a session cookie. Every form carries
the session's CSRF secret and is refused without it. Every page acts through the member's
:class:`~reverie.access.Actor`: the rules of the API hold here too, and a refusal says what the
API would say.

The memory tab (A1) is one editor over the whole body: Save writes it as one revision expecting
the revision it was loaded at; a stale save keeps the draft, shows the current revision and
offers to load the latest; saving an empty body clears the memory; Discard puts back what was
loaded. It says where this memory reaches: every DM, the agent's granted channels and every
scheduled run.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from reverie.access import Actor
from reverie.api import Reverie
from reverie.core.paths import INDEX
from reverie.errors import PermissionDenied, RefusedInput, ReverieError, RevisionConflict
from reverie.store.state import Member
from reverie.store.tokens import SESSION_SECONDS, AdminSession

from .api import approval_out, iso
from .auth import SESSION_COOKIE, home

__all__ = ["install"]

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
templates.env.filters["iso"] = iso
router = APIRouter(prefix="/admin", include_in_schema=False)
_LOGIN_CSRF = "reverie_login_csrf"


class SignInNeeded(Exception):
    """Raised by a page that needs a signed-in member; answered with the sign-in page."""


def session_of(request: Request) -> AdminSession:
    """The signed-in session of this browser.

    Raises:
        SignInNeeded: no session, an expired one, or an inactive member.
    """
    session = home(request).session(request.cookies.get(SESSION_COOKIE) or "")
    if session is None:
        raise SignInNeeded
    return session


Session = Annotated[AdminSession, Depends(session_of)]


def actor(request: Request, session: AdminSession) -> Actor:
    """The signed-in member, acting."""
    return home(request).as_member(session.member.name)


def check_csrf(session: AdminSession, token: str | None) -> None:
    """Every form must echo the session's CSRF secret.

    Raises:
        PermissionDenied: ``csrf_failed``.
    """
    if not session.csrf_ok(token):
        raise PermissionDenied(
            "This form is stale or did not come from this page (its CSRF token does not "
            "match); reload the page and try again. Nothing was changed.",
            code="csrf_failed",
        )


def render(request: Request, name: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    """A page, with what every page needs (the member, the CSRF secret, pending approvals)."""
    base: dict[str, Any] = {"request": request}
    try:
        session = session_of(request)
        base["session"] = session
        base["member"] = session.member
        base["csrf"] = session.csrf
        base["pending"] = len(actor(request, session).approvals())
    except (SignInNeeded, ReverieError):
        pass
    return templates.TemplateResponse(request, name, {**base, **context}, status_code=status)


def _signed_in(rv: Reverie, member: Member, target: str = "/admin/") -> Response:
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        rv.open_session(member),
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="lax",
        path="/",
    )
    response.delete_cookie(_LOGIN_CSRF, path="/admin")
    return response


# signing in and out


@router.get("/login")
def login_page(request: Request, error: str | None = None) -> Response:
    token = secrets.token_urlsafe(16)
    response = render(request, "login.html", {"error": error, "login_csrf": token})
    response.set_cookie(_LOGIN_CSRF, token, httponly=True, samesite="strict", path="/admin")
    return response


@router.post("/login")
def login(
    request: Request, token: Annotated[str, Form()], login_csrf: Annotated[str, Form()] = ""
) -> Response:
    rv = home(request)
    expected = request.cookies.get(_LOGIN_CSRF)
    if not expected or not secrets.compare_digest(expected, login_csrf):
        return login_page(request, "The sign-in form expired; try again.")
    actor = rv.authenticate(token.strip())
    if actor is None:
        return login_page(request, "That token is unknown or revoked.")
    return _signed_in(rv, actor.member)


@router.get("/signin/{code}")
def sign_in_link(request: Request, code: str) -> Response:
    rv = home(request)
    member = rv.redeem_sign_in_code(code)
    if member is None:
        return login_page(
            request, "That sign-in link was used already or has expired; ask for a new one."
        )
    return _signed_in(rv, member)


@router.post("/logout")
def logout(request: Request, session: Session, csrf: Annotated[str, Form()] = "") -> Response:
    check_csrf(session, csrf)
    value = request.cookies.get(SESSION_COOKIE)
    if value:
        home(request).close_session(value)
    response = RedirectResponse("/admin/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


# agents and the memory tab (A1)


@router.get("/")
def agents_page(request: Request, session: Session) -> Response:
    me = actor(request, session)
    rows = [{"agent": a, "editable": me.may_edit(a)} for a in me.agents()]
    return render(request, "agents.html", {"rows": rows})


def _tabs(me: Actor, agent: str) -> dict[str, Any]:
    a = me.agent(agent)
    return {"agent": a, "reaches": me.reaches(a.name)}


@router.get("/agents/{agent}")
def memory_page(
    request: Request, session: Session, agent: str, saved: int | None = None
) -> Response:
    me = actor(request, session)
    f = me.memory_read(agent)
    files = [p for p in me.memory_files(agent) if p != INDEX]
    return render(
        request,
        "memory.html",
        {
            **_tabs(me, agent),
            "tab": "memory",
            "text": f.text,
            "loaded": f.text,
            "revision": f.revision,
            "current": f.revision,
            "topics": files,
            "saved": saved,
        },
    )


@router.post("/agents/{agent}/memory")
def save_memory(
    request: Request,
    session: Session,
    agent: str,
    body: Annotated[str, Form()] = "",
    expected_revision: Annotated[int, Form()] = -1,
    csrf: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(session, csrf)
    me = actor(request, session)
    draft = body.replace("\r\n", "\n")
    try:
        outcome = me.memory_apply(
            agent,
            {"action": "set_body", "text": draft},
            writer="admin",
            expected_revision=expected_revision,
        )
    except (RevisionConflict, RefusedInput) as exc:
        f = me.memory_read(agent)
        stale = isinstance(exc, RevisionConflict)
        return render(
            request,
            "memory.html",
            {
                **_tabs(me, agent),
                "tab": "memory",
                "text": draft,  # the draft is kept, whatever went wrong
                "loaded": draft,
                "revision": expected_revision,
                "current": f.revision,
                "topics": [p for p in me.memory_files(agent) if p != INDEX],
                "conflict": stale,
                "error": exc,
            },
            status=409 if stale else 400,
        )
    return RedirectResponse(f"/admin/agents/{agent}?saved={outcome.revision}", status_code=303)


@router.get("/agents/{agent}/topics/{slug}")
def topic_page(request: Request, session: Session, agent: str, slug: str) -> Response:
    me = actor(request, session)
    f = me.memory_read(agent, f"memory/{slug}.md")
    return render(request, "topic.html", {**_tabs(me, agent), "tab": "memory", "file": f})


@router.get("/agents/{agent}/history")
def history_page(request: Request, session: Session, agent: str) -> Response:
    me = actor(request, session)
    return render(
        request,
        "history.html",
        {**_tabs(me, agent), "tab": "history", "revisions": me.memory_history(agent, 200)},
    )


@router.get("/agents/{agent}/history/{revision}")
def revision_page(request: Request, session: Session, agent: str, revision: int) -> Response:
    me = actor(request, session)
    rec, diff = me.memory_revision(agent, revision)
    return render(
        request,
        "revision.html",
        {**_tabs(me, agent), "tab": "history", "rec": rec, "lines": _diff_lines(diff)},
    )


def _diff_lines(diff: str) -> list[tuple[str, str]]:
    kinds = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            kinds.append(("file", line))
        elif line.startswith("@@"):
            kinds.append(("hunk", line))
        elif line.startswith("+"):
            kinds.append(("add", line))
        elif line.startswith("-"):
            kinds.append(("del", line))
        else:
            kinds.append(("ctx", line))
    return kinds


@router.get("/agents/{agent}/search")
def search_page(request: Request, session: Session, agent: str, q: str = "") -> Response:
    me = actor(request, session)
    hits = me.memory_search(agent, q, 20) if q.strip() else []
    return render(
        request, "search.html", {**_tabs(me, agent), "tab": "search", "q": q, "hits": hits}
    )


@router.get("/agents/{agent}/conversations")
def conversations_page(request: Request, session: Session, agent: str) -> Response:
    me = actor(request, session)
    return render(
        request,
        "conversations.html",
        {**_tabs(me, agent), "tab": "conversations", "conversations": me.conversations_of(agent)},
    )


@router.get("/agents/{agent}/reviews")
def reviews_page(request: Request, session: Session, agent: str) -> Response:
    me = actor(request, session)
    return render(
        request,
        "reviews.html",
        {**_tabs(me, agent), "tab": "reviews", "batches": me.review_log(agent, 100)},
    )


# approvals (I2)


@router.get("/approvals")
def approvals_page(request: Request, session: Session, done: str | None = None) -> Response:
    me = actor(request, session)
    found = [approval_out(me, a) for a in me.approvals()]
    return render(request, "approvals.html", {"approvals": found, "done": done})


@router.post("/approvals/{approval_id}/{decision}")
def decide(
    request: Request,
    session: Session,
    approval_id: str,
    decision: str,
    csrf: Annotated[str, Form()] = "",
    text: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(session, csrf)
    me = actor(request, session)
    if decision == "approve":
        me.approve(approval_id)
    elif decision == "deny":
        me.deny(approval_id)
    elif decision == "comment":
        me.comment(approval_id, text)
    else:
        raise RefusedInput(f"Unknown decision {decision!r}.", code="invalid_operation")
    return RedirectResponse(f"/admin/approvals?done={approval_id}", status_code=303)


def error_page(request: Request, status: int, code: str, message: str) -> Response:
    """A refusal on the admin page: the API's code and message, as a page."""
    return render(request, "error.html", {"code": code, "message": message}, status=status)


def install(app: FastAPI) -> None:
    """Add the admin page and its static files to ``app``."""
    app.include_router(router)
    app.mount("/admin/static", StaticFiles(directory=str(HERE / "static")), name="admin-static")

    @app.exception_handler(SignInNeeded)
    async def sign_in(request: Request, exc: SignInNeeded) -> Response:
        return RedirectResponse("/admin/login", status_code=303)
