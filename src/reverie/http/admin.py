"""The admin page (SPEC A1, I2, 11): server-rendered with Jinja2, plain forms, no build step.

A person signs in with a one-time link (``reverie serve`` prints one at first start; ``reverie
token link MEMBER`` makes another) or an API token, and gets a session cookie. A session signed
in with a token ends when the token is revoked; any session ends, for good, when its member is
deactivated (``reverie.store.tokens``). Opening a link only shows a Sign in button: the
button's POST uses the code up, so that a chat app fetching the link for a preview cannot spend
it. Every form carries the session's CSRF secret and is refused without it. Every page acts
through the member's :class:`~reverie.access.Actor`: the rules of the API hold here too, and a
refusal says what the API would say, as a page (never raw JSON).

The memory tab (A1) is one editor over the whole body: Save writes it as one revision expecting
the revision it was loaded at; a stale save keeps the draft, shows the current revision, offers
to load the latest and to save the draft over the current revision knowingly; saving an empty
body clears the memory (MEMORY.md and every topic file, in one revision); Discard puts back what
was loaded. It says where this memory reaches: every DM, the agent's granted channels and every
scheduled run.

The conversations tab lists every conversation with its memory mode, but a conversation's
title (its first message) only where the API lists it (``Actor.context_sessions``, H1): nothing
said in a memory-off conversation is shown (O3).

An agent's name goes into a link as one path segment, every reserved character encoded
(:func:`segment`): ``example?evil`` links to its own pages, never to ``example``'s. Notices
(saved, decided) are built from stored state, never from text in the address.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, unquote, urlencode

from fastapi import APIRouter, Depends, FastAPI, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from reverie.access import Actor, session_by_token
from reverie.core.paths import INDEX, TOPIC_DIR
from reverie.errors import PermissionDenied, RefusedInput, ReverieError, RevisionConflict
from reverie.store.tokens import LINK_SECONDS, SESSION_SECONDS, AdminSession

from .api import approval_out, iso
from .auth import SESSION_COOKIE, home
from .errors import status_of

__all__ = ["agent_url", "install", "local_next", "segment"]

HERE = Path(__file__).parent
router = APIRouter(prefix="/admin", include_in_schema=False)
_LOGIN_CSRF = "reverie_login_csrf"


def segment(value: object) -> str:
    """``value`` as one URL path segment: everything but letters, digits and ``_.-~``
    percent-encoded, ``/``, ``?``, ``#`` and ``%`` included (Jinja's ``urlencode`` leaves ``/``
    alone), so that a link to ``example?evil`` reaches that agent and no other."""
    return quote(str(value), safe="")


def agent_url(agent: str, *rest: str | int) -> str:
    """The admin page of ``agent`` (or one below it), each part encoded as one segment."""
    return "/".join(["/admin/agents", segment(agent), *(segment(part) for part in rest)])


def and_join(items: Iterable[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: a list as a sentence says it."""
    words = list(items)
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


templates = Jinja2Templates(directory=str(HERE / "templates"))
templates.env.filters["iso"] = iso
templates.env.filters["seg"] = segment
templates.env.filters["and_join"] = and_join

#: Pages a sign-in never returns to: the sign-in pages themselves, and static files.
_NO_RETURN = ("/admin/login", "/admin/signin/", "/admin/logout", "/admin/static/")


def local_next(value: str | None) -> str | None:
    """``value`` when it is a page of this admin to return to after signing in, else None.

    Only a path starting ``/admin/``, in printable ASCII, with no ``//``, no ``\\`` and no dot
    segment (``..``, ``%2e%2e``): never an absolute URL or a ``//host`` one, so that a crafted
    link cannot send a person who signs in to another site.
    """
    if not value or len(value) > 2000 or not value.startswith("/admin/"):
        return None
    if any(not 33 <= ord(c) < 127 for c in value) or "\\" in value or "//" in value:
        return None
    path = value.split("?", 1)[0].split("#", 1)[0]
    if path.startswith(_NO_RETURN) or any(unquote(part) in {".", ".."} for part in path.split("/")):
        return None
    return value


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
    """Every form must echo the session's CSRF secret. A refused form is not read further and
    nothing of it is shown again (a page showing a posted draft with a fresh token would let
    another site save through it).

    Raises:
        PermissionDenied: ``csrf_failed``.
    """
    if not session.csrf_ok(token):
        raise PermissionDenied(
            "This form came from a page opened before your current sign-in (or from another "
            "site), so it was not accepted: nothing was saved or changed.",
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


def _signed_in(cookie: str, target: str = "/admin/") -> Response:
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        cookie,
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="lax",
        path="/",
    )
    response.delete_cookie(_LOGIN_CSRF, path="/admin")
    return response


# signing in and out

#: Why the sign-in page was shown (``?reason=``): fixed texts, never text from the address.
_REASONS = {
    "ended": "Your session ended (you signed out, or it expired). Sign in again to return to "
    "the page you asked for.",
    "unsaved": "Your session ended (you signed out, or it expired) before that form was sent, "
    "so nothing was saved. Your browser's Back button returns to the page with your draft: "
    "copy it, sign in, and save it again.",
}


def _login_form(
    request: Request,
    template: str = "login.html",
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    """A sign-in form with a fresh login CSRF secret (a cookie, and the form's copy)."""
    token = secrets.token_urlsafe(16)
    response = render(request, template, {**context, "login_csrf": token}, status=status)
    response.set_cookie(_LOGIN_CSRF, token, httponly=True, samesite="strict", path="/admin")
    response.headers["Cache-Control"] = "no-store"
    return response


def _login_csrf_ok(request: Request, given: str) -> bool:
    expected = request.cookies.get(_LOGIN_CSRF)
    return bool(expected) and secrets.compare_digest(expected or "", given)


def _signed_in_already(request: Request) -> bool:
    try:
        session_of(request)
    except SignInNeeded:
        return False
    return True


@router.get("/login")
def login_page(
    request: Request,
    reason: str | None = None,
    next_path: Annotated[str | None, Query(alias="next")] = None,
) -> Response:
    """The sign-in form; a member already signed in goes on to ``next`` (or the agents)."""
    target = local_next(next_path)
    if _signed_in_already(request):
        return RedirectResponse(target or "/admin/", status_code=303)
    return _login_form(request, notice=_REASONS.get(reason or ""), next=target)


@router.post("/login")
def login(
    request: Request,
    token: Annotated[str, Form()],
    login_csrf: Annotated[str, Form()] = "",
    next_path: Annotated[str, Form(alias="next")] = "",
) -> Response:
    rv = home(request)
    target = local_next(next_path)
    if not _login_csrf_ok(request, login_csrf):
        return _login_form(request, error="The sign-in form expired; try again.", next=target)
    try:
        opened = session_by_token(rv, token.strip())
    except PermissionDenied as exc:  # a working token of a deactivated member
        return _login_form(
            request, error=f"{exc.message} Nobody was signed in.", next=target, status=403
        )
    if opened is None:
        return _login_form(request, error="That token is unknown or revoked.", next=target)
    return _signed_in(opened[1], target or "/admin/")


def _link_refused(request: Request, state: str) -> Response:
    """The sign-in form, saying why a link signs no one in (used, expired, its member
    deactivated, or no such link): 403 for a deactivated member, else 410."""
    why = {
        "used": "it was used already (a link works once)",
        "expired": f"it is older than {LINK_SECONDS // 60} minutes",
        "inactive": "its member is deactivated in this workspace (an owner can reactivate "
        "them: reverie member set NAME --active)",
    }.get(state, "no such link was made here")
    return _login_form(
        request,
        error=f"That sign-in link is not valid: {why}. Nobody was signed in. Ask for a new link "
        "(reverie token link MEMBER), or sign in with an API token below.",
        status=403 if state == "inactive" else 410,
    )


@router.get("/signin/{code}")
def sign_in_link(request: Request, code: str) -> Response:
    """A Sign in button for a one-time link, or why it signs no one in. Opening the link
    spends nothing: a chat app that fetches it for a preview must not use it up before the
    person clicks it."""
    state = home(request).sign_in_code_state(code)
    if state != "valid":
        response = _link_refused(request, state)
    else:
        response = _login_form(request, "signin.html", code=code)
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@router.post("/signin/{code}")
def sign_in_with_link(
    request: Request, code: str, login_csrf: Annotated[str, Form()] = ""
) -> Response:
    """Use the link's code up and sign in as its member."""
    rv = home(request)
    if not _login_csrf_ok(request, login_csrf):
        return _login_form(
            request,
            "signin.html",
            code=code,
            error="The sign-in form expired; press Sign in again.",
        )
    state = rv.sign_in_code_state(code)
    member = rv.redeem_sign_in_code(code) if state == "valid" else None
    if member is None:  # not valid, or used up by another click in between
        return _link_refused(request, state if state != "valid" else "used")
    return _signed_in(rv.open_session(member))


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


def _topics(me: Actor, agent: str) -> list[str]:
    return [p for p in me.memory_files(agent) if p != INDEX]


_REVISION = re.compile(r"[0-9]{1,15}")


def _saved_revision(me: Actor, agent: str, saved: str | None, current: int) -> int | None:
    """``?saved=N`` when revision N exists (the address alone never makes the page say
    "Saved")."""
    if saved is None or not _REVISION.fullmatch(saved) or int(saved) > current:
        return None
    found = me.memory_history(agent, 1, before=int(saved) + 1)
    return found[0].revision if found and found[0].revision == int(saved) else None


@router.get("/agents/{agent}")
def memory_page(
    request: Request, session: Session, agent: str, saved: str | None = None
) -> Response:
    me = actor(request, session)
    f = me.memory_read(agent)
    return render(
        request,
        "memory.html",
        {
            **_tabs(me, agent),
            "tab": "memory",
            "text": f.text,
            "revision": f.revision,
            "current": f.revision,
            "topics": _topics(me, agent),
            "saved": _saved_revision(me, agent, saved, f.revision),
        },
    )


def _save_request(me: Actor, agent: str, draft: str, base: int) -> dict[str, Any]:
    """The write of a Save: the body, or (an empty body clears the memory, A1) an empty index
    and every topic file deleted, as one batch, so one revision."""
    if draft.strip():
        return {"action": "set_body", "text": draft}
    # The topic files at the draft's base: if the memory moved since, the write is refused
    # as stale anyway, so a topic added meanwhile is never left out silently.
    at = base if base >= 0 else None
    try:
        paths = me.memory_files(agent, at)
    except ReverieError:
        paths = me.memory_files(agent)
    topics = [p[len(TOPIC_DIR) + 1 : -3] for p in paths if p != INDEX]
    operations: list[dict[str, Any]] = [
        {"action": "write_topic", "topic": slug, "content": ""} for slug in topics
    ]
    operations.append({"action": "set_body", "text": ""})
    return {"operations": operations}


@router.post("/agents/{agent}/memory")
def save_memory(
    request: Request,
    session: Session,
    agent: str,
    body: Annotated[str, Form()] = "",
    expected_revision: Annotated[int, Form()] = -1,
    over_revision: Annotated[int | None, Form()] = None,
    csrf: Annotated[str, Form()] = "",
) -> Response:
    """Save the draft expecting the revision it was loaded at (``expected_revision``), or,
    from the stale-save page's "Save over revision N", expecting N (``over_revision``): the
    person saw that the memory moved and chose to replace it with the draft."""
    check_csrf(session, csrf)
    me = actor(request, session)
    draft = body.replace("\r\n", "\n")
    expected = expected_revision if over_revision is None else over_revision
    try:
        outcome = me.memory_apply(
            agent,
            _save_request(me, agent, draft, expected),
            writer="admin",
            expected_revision=expected,
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
                "revision": expected_revision,  # the draft's base, kept for the next try
                "current": f.revision,
                "topics": _topics(me, agent),
                "conflict": stale,
                "error": exc,
            },
            status=status_of(exc),
        )
    return RedirectResponse(
        f"{agent_url(agent)}?{urlencode({'saved': outcome.revision})}", status_code=303
    )


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


@router.get("/agents/{agent}/compare/{base}/{to}")
def compare_page(request: Request, session: Session, agent: str, base: int, to: int) -> Response:
    """What changed from revision ``base`` to ``to``: the revisions between and one diff. The
    stale-save page links here, to show what saving the draft over the newest would undo."""
    me = actor(request, session)
    diff = me.memory_diff(agent, base, to)
    low, high = min(base, to), max(base, to)
    between = me.memory_history(agent, min(max(high - low, 1), 200), before=high + 1)
    return render(
        request,
        "compare.html",
        {
            **_tabs(me, agent),
            "tab": "history",
            "base": base,
            "to": to,
            "revisions": [r for r in between if r.revision > low],
            "lines": _diff_lines(diff),
        },
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
    """Every conversation of the agent with its memory mode; the title of those the API's
    session list gives (memory-on, H1), and of no other (O3: a title is said in its
    conversation)."""
    me = actor(request, session)
    found = me.conversations_of(agent)
    # Same order and filter as conversations_of, so these cover every memory-on one above.
    listed = me.context_sessions(agent, None, max(len(found), 1))
    return render(
        request,
        "conversations.html",
        {
            **_tabs(me, agent),
            "tab": "conversations",
            "conversations": found,
            "titles": {s.id: s.title for s in listed},
        },
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

#: How the approvals page says what became of a decided approval.
_DECIDED = {"approved": "approved", "denied": "denied", "commented": "commented on (cancelled)"}


def _decided_notice(me: Actor, done: str | None) -> str | None:
    """``?done=<approval id>`` as "apr_… approved", from the stored approval; anything else in
    the address says nothing."""
    if not done:
        return None
    try:
        found = me.approval(done)
    except ReverieError:
        return None
    said = _DECIDED.get(found.status)
    return f"{found.id} {said}." if said else None


def _moved_since(me: Actor, agent: str, expected: int | None) -> int | None:
    """The memory's current revision when it is no longer the one a bundle expects."""
    if expected is None:
        return None
    try:
        current = me.memory_read(agent).revision
    except ReverieError:
        return None
    return current if current != expected else None


@router.get("/approvals")
def approvals_page(request: Request, session: Session, done: str | None = None) -> Response:
    me = actor(request, session)
    found = [approval_out(me, a) for a in me.approvals()]
    moved = {
        a.id: _moved_since(me, a.agent, a.memory_revision) for a in found if a.kind == "bundle"
    }
    return render(
        request,
        "approvals.html",
        {"approvals": found, "done": _decided_notice(me, done), "moved": moved},
    )


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
    return RedirectResponse(f"/admin/approvals?{urlencode({'done': approval_id})}", status_code=303)


# refusals and errors, as pages


def _hint(request: Request, code: str) -> str | None:
    """What to do next, for the refusals where the page can say more than the message."""
    if code == "csrf_failed" and request.url.path == "/admin/logout":
        return "Reload the page, then press Sign out again."
    if code == "csrf_failed":
        return (
            "Your browser's Back button returns to the page with your draft. Copy it, reload "
            "that page (the reloaded page carries your current sign-in), then paste it and save "
            "again."
        )
    if code == "form_too_large":
        back = "Your browser's Back button returns to the page with your draft, to shorten it."
        if not request.url.path.endswith("/memory"):
            return back
        limit = home(request).settings.max_index_bytes
        return f"MEMORY.md may hold at most {limit:,} bytes; move detail into topic files. {back}"
    if code == "invalid_request":
        return "Go back and reload the page before trying again, or follow a link from it."
    return None


def error_page(request: Request, status: int, code: str, message: str) -> Response:
    """A refusal on the admin page: the API's code and message, as a page, with what to do
    next where the page knows more (a stale form, one too large) and a way back."""
    return render(
        request,
        "error.html",
        {"code": code, "message": message, "hint": _hint(request, code), "status": status},
        status=status,
    )


def _return_path(request: Request) -> str | None:
    """The page to come back to after signing in: the page asked for, or for a form, the page
    it was on (the memory tab, the approvals), never the form's own address."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if raw else quote(request.url.path)
    if request.method in ("GET", "HEAD"):
        query = request.url.query
        return local_next(f"{path}?{query}" if query else path)
    parts = path.split("/")  # "", "admin", "agents", NAME, "memory"
    if len(parts) == 5 and parts[2] == "agents" and parts[4] == "memory":
        return local_next("/".join(parts[:4]))
    if len(parts) == 5 and parts[2] == "approvals":
        return "/admin/approvals"
    return None


def install(app: FastAPI) -> None:
    """Add the admin page and its static files to ``app``."""
    app.include_router(router)
    app.mount("/admin/static", StaticFiles(directory=str(HERE / "static")), name="admin-static")

    @app.exception_handler(SignInNeeded)
    async def sign_in(request: Request, exc: SignInNeeded) -> Response:
        posted = request.method not in ("GET", "HEAD")
        if request.url.path == "/admin/logout" or not (
            posted or request.cookies.get(SESSION_COOKIE)
        ):
            return RedirectResponse("/admin/login", status_code=303)  # nothing ended or lost
        query = {"reason": "unsaved" if posted else "ended"}
        back = _return_path(request)
        if back is not None:
            query["next"] = back
        return RedirectResponse(f"/admin/login?{urlencode(query)}", status_code=303)
