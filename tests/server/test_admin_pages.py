"""The admin page without a browser (SPEC A1, I2, 11): links, redirects, refusals and notices,
through the ASGI app with a cookie-keeping client. What needs a browser (a draft kept by Back,
the confirmation before an empty save, the layout at phone width) is in
``test_admin_browser.py``."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from fastapi.testclient import TestClient

from reverie import Reverie
from reverie.http import create_app
from tests.server.conftest import workspace

#: A name that is legal for an agent and means something else in a URL at every character.
ODD = "ada?x=1#y %z&"


@dataclass
class Home:
    rv: Reverie
    tokens: dict[str, str]
    client: TestClient


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    rv, tokens = workspace(tmp_path / "home")
    with TestClient(create_app(rv, mcp=False)) as client:
        yield Home(rv, tokens, client)
    rv.close()


def sign_in(client: TestClient, rv: Reverie, member: str = "cy") -> None:
    """Sign ``client`` in with a one-time link (pressing the link page's button when it has
    one)."""
    code = rv.sign_in_code(member)
    page = client.get(f"/admin/signin/{code}")
    if 'id="sign-in"' in page.text:
        page = client.post(f"/admin/signin/{code}", data={"login_csrf": login_csrf_of(page.text)})
    assert page.status_code == 200 and "Sign out" in page.text, page.text


def csrf_of(page_text: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page_text)
    assert found, page_text
    return found.group(1)


def login_csrf_of(page_text: str) -> str:
    found = re.search(r'name="login_csrf" value="([^"]+)"', page_text)
    assert found, page_text
    return found.group(1)


def links(page_text: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'(?:href|action)="([^"]*)"', page_text)]


def is_page(r: object) -> bool:
    return str(getattr(r, "headers", {}).get("content-type", "")).startswith("text/html")


# 1. agent names in links


def test_a1_an_agent_name_is_one_path_segment_in_every_link_and_redirect(home: Home) -> None:
    """A1: a name holding ``?``, ``#``, ``%``, ``&`` or a space links to its own pages, and
    Save writes to that agent, never to ``ada`` (the name up to the ``?``)."""
    rv, c = home.rv, home.client
    rv.create_agent(ODD, creator="cy")
    sign_in(c, rv)
    own = "/admin/agents/" + quote(ODD, safe="")
    assert own in links(c.get("/admin/").text)
    page = c.get(own)
    assert page.status_code == 200 and f"<h1>{html.escape(ODD)}" in page.text
    agent_links = [h for h in links(page.text) if h.startswith("/admin/agents/")]
    assert agent_links and all(h == own or h.startswith(own + "/") for h in agent_links)
    action = next(h for h in links(page.text) if h.endswith("/memory"))
    r = c.post(
        action,
        data={"body": "# Odd\n- mine\n", "expected_revision": "0", "csrf": csrf_of(page.text)},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == f"{own}?saved=1"
    assert rv.memory_read(ODD).text == "# Odd\n- mine\n"
    assert rv.memory_read("ada").revision == 0
    assert "Saved as revision 1." in c.get(r.headers["location"]).text


# 2. errors as pages


def test_a1_errors_under_admin_are_pages_with_the_right_status(home: Home) -> None:
    """A1: a refusal on the admin page is a page (never raw JSON) with the status the docs
    give: 404 unknown page, 422 a value the route cannot use, 413 a form too large, which says
    the limit of MEMORY.md and that Back keeps the draft. Nothing is written."""
    rv, c = home.rv, home.client
    sign_in(c, rv)
    csrf = csrf_of(c.get("/admin/agents/ada").text)
    cases = [
        (c.get("/admin/nope"), 404, "There is no page at this address"),
        (c.get("/admin/agents/ada/history/abc"), 422, "Nothing was changed"),
        (
            c.post(
                "/admin/agents/ada/memory",
                data={"body": "x", "expected_revision": "abc", "csrf": csrf},
            ),
            422,
            "expected_revision",
        ),
        (
            c.post(
                "/admin/agents/ada/memory",
                data={"body": "x" * (1024 * 1024 + 10), "expected_revision": "0", "csrf": csrf},
            ),
            413,
            f"{rv.settings.max_index_bytes:,} bytes",
        ),
    ]
    for r, status, said in cases:
        assert (r.status_code, is_page(r)) == (status, True), r.text[:300]
        assert said in html.unescape(r.text) and "Back" in r.text
    assert "Back button returns to the page with your draft" in cases[-1][0].text
    assert rv.memory_read("ada").revision == 0
    # The API keeps its one JSON shape.
    api = c.get("/api/agents/ada/memory/history/abc", headers={"Authorization": "Bearer no"})
    assert not is_page(api) and api.json()["error"]["code"] in ("unauthenticated", "not_found")


# 3. a refused CSRF token


def test_a1_a_form_from_before_the_current_sign_in_is_refused_and_explained(home: Home) -> None:
    """A1: a form posted with the token of an earlier sign-in is not processed; the page says
    the page was older than the current sign-in, that nothing was saved and that Back keeps
    the draft, and shows nothing of what was posted."""
    rv, c = home.rv, home.client
    sign_in(c, rv)
    old = csrf_of(c.get("/admin/agents/ada").text)
    sign_in(c, rv)  # signing in again (another tab) starts a new session
    r = c.post(
        "/admin/agents/ada/memory",
        data={"body": "<b>draft-marker</b>", "expected_revision": "0", "csrf": old},
    )
    text = html.unescape(r.text)
    assert r.status_code == 403 and is_page(r) and "csrf_failed" in text
    assert "opened before your current sign-in" in text and "nothing was saved" in text
    assert "Back button returns to the page with your draft" in text
    assert "draft-marker" not in text
    assert rv.memory_read("ada").revision == 0


# 4. a save after the session ended


def test_a1_a_save_after_the_session_ended_says_why_and_returns_after_sign_in(home: Home) -> None:
    """A1: the sign-in page says the session ended and nothing was saved, and signing in goes
    back to the memory tab."""
    rv, tokens, c = home.rv, home.tokens, home.client
    sign_in(c, rv)
    csrf = csrf_of(c.get("/admin/agents/ada").text)
    c.post("/admin/logout", data={"csrf": csrf})  # another tab signs out
    r = c.post(
        "/admin/agents/ada/memory",
        data={"body": "draft", "expected_revision": "0", "csrf": csrf},
        follow_redirects=False,
    )
    assert r.status_code == 303
    where = urlsplit(r.headers["location"])
    assert where.path == "/admin/login"
    assert parse_qs(where.query) == {"reason": ["unsaved"], "next": ["/admin/agents/ada"]}
    login = c.get(r.headers["location"])
    text = html.unescape(login.text)
    assert "nothing was saved" in text and "Back button returns to the page with your draft" in text
    signed = c.post(
        "/admin/login",
        data={
            "token": tokens["cy"],
            "login_csrf": login_csrf_of(login.text),
            "next": "/admin/agents/ada",
        },
        follow_redirects=False,
    )
    assert signed.status_code == 303 and signed.headers["location"] == "/admin/agents/ada"
    assert rv.memory_read("ada").revision == 0
    # A page opened with a session that has ended comes back after signing in, too.
    c.cookies.clear()
    c.cookies.set("reverie_session", "ended-long-ago")
    r = c.get("/admin/agents/ada/search", params={"q": "tea"}, follow_redirects=False)
    query = parse_qs(urlsplit(r.headers["location"]).query)
    assert query == {"reason": ["ended"], "next": ["/admin/agents/ada/search?q=tea"]}


def test_a1_sign_in_returns_only_to_a_page_of_the_admin(home: Home) -> None:
    """A1: ``next`` is used only as a local ``/admin/`` path; an absolute URL, a ``//host``
    one, a backslash or a dot segment goes to the agents instead."""
    rv, tokens, c = home.rv, home.tokens, home.client
    for target, lands in [
        ("/admin/agents/ada/history", "/admin/agents/ada/history"),
        ("https://evil.example/admin/", "/admin/"),
        ("//evil.example/admin/", "/admin/"),
        ("/admin/..//evil.example", "/admin/"),
        ("/admin/%2e%2e//evil.example", "/admin/"),
        ("/admin/\\evil.example", "/admin/"),
        ("/\\evil.example", "/admin/"),
        ("javascript:alert(1)", "/admin/"),
    ]:
        c.cookies.clear()
        login = c.get("/admin/login", params={"next": target})
        assert (html.escape(target) in login.text) == (target == lands), target
        r = c.post(
            "/admin/login",
            data={"token": tokens["cy"], "login_csrf": login_csrf_of(login.text), "next": target},
            follow_redirects=False,
        )
        assert r.status_code == 303 and r.headers["location"] == lands, target
    assert rv.memory_read("ada").revision == 0


# 5. saving a stale draft knowingly


def test_a1_a_stale_draft_can_be_saved_over_the_newest_revision(home: Home) -> None:
    """A1: after a stale save the page offers, besides Load latest, to save the draft over the
    current revision, and links to what changed since the draft's base."""
    rv, c = home.rv, home.client
    sign_in(c, rv)
    csrf = csrf_of(c.get("/admin/agents/ada").text)
    rv.memory_apply("ada", {"action": "add", "text": "Someone else's line."})
    draft = "# Mine\n- my draft\n"
    stale = c.post(
        "/admin/agents/ada/memory", data={"body": draft, "expected_revision": "0", "csrf": csrf}
    )
    assert stale.status_code == 409
    assert re.search(r'name="over_revision" value="1"[^>]*id="save-over"', stale.text)
    assert 'href="/admin/agents/ada/compare/0/1"' in stale.text
    assert 'name="expected_revision" value="0"' in stale.text  # the draft's base is kept
    changes = c.get("/admin/agents/ada/compare/0/1")
    assert changes.status_code == 200 and "Someone else&#39;s line." in changes.text
    r = c.post(
        "/admin/agents/ada/memory",
        data={"body": draft, "expected_revision": "0", "over_revision": "1", "csrf": csrf},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == "/admin/agents/ada?saved=2"
    assert rv.memory_read("ada").text == draft


# 6. sign-in links


def test_a1_opening_a_sign_in_link_spends_nothing_and_its_button_signs_in_once(home: Home) -> None:
    """11: a GET of a link (a chat app's preview) shows a Sign in button; only its POST uses
    the code up. A used, expired or unknown link and an inactive member's link sign nobody
    in, and the page says which."""
    rv, c = home.rv, home.client
    code = rv.sign_in_code("cy")
    for _ in range(2):
        page = c.get(f"/admin/signin/{code}", follow_redirects=False)
        assert page.status_code == 200 and 'id="sign-in"' in page.text
        assert "reverie_session" not in c.cookies
    token = login_csrf_of(page.text)
    r = c.post(f"/admin/signin/{code}", data={"login_csrf": token}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/admin/"
    assert "reverie_session" in c.cookies
    expired = rv.sign_in_code("cy")
    with rv.state.transaction() as conn:
        conn.execute("UPDATE sign_in_links SET expires_at = 0 WHERE used_at IS NULL")
    with TestClient(c.app) as other:
        for member_code, status, why in [
            (code, 410, "it was used already"),
            (rv.sign_in_code("ivy"), 403, "its member is deactivated"),
            (expired, 410, "it is older than 15 minutes"),
            ("no-such-code", 410, "no such link was made here"),
        ]:
            # Said when the link is opened, no button offered, and said again if posted.
            page = other.get(f"/admin/signin/{member_code}")
            assert page.status_code == status and why in page.text, page.text
            assert 'id="sign-in"' not in page.text
            token = login_csrf_of(page.text)
            r = other.post(f"/admin/signin/{member_code}", data={"login_csrf": token})
            assert r.status_code == status and why in r.text
            assert "reverie_session" not in other.cookies


# 7. notices built from stored state


def test_a1_notices_come_from_stored_state_not_from_the_address(home: Home) -> None:
    """A1, I2: ``?done=`` names an approval and the page says what became of it; ``?saved=``
    is shown only for a revision that exists; any other text in the address says nothing."""
    rv, c = home.rv, home.client
    sign_in(c, rv)
    forged = c.get("/admin/approvals", params={"done": "Everything is fine, trust me"})
    assert forged.status_code == 200 and "trust me" not in forged.text
    assert 'role="status"' not in forged.text
    for saved in ("12345", "1", "abc", "-1"):
        page = c.get("/admin/agents/ada", params={"saved": saved})
        assert page.status_code == 200 and "Saved as revision" not in page.text
    rv.ensure_channel("D-sam", "dm")
    conv = rv.create_conversation("ada", "D-sam").id
    a = rv.propose_instructions(conv, "Answer in bullet points.", author="sam")
    page = c.get("/admin/approvals")
    c.post(f"/admin/approvals/{a.id}/approve", data={"csrf": csrf_of(page.text)})
    done = c.get("/admin/approvals", params={"done": a.id})
    assert f'role="status">{a.id} approved.<' in done.text


# 8. the sign-in page of a signed-in member


def test_a1_the_sign_in_page_sends_a_signed_in_member_on(home: Home) -> None:
    """A1: a signed-in member opening /admin/login goes to the agents, or to a local
    ``next``."""
    rv, c = home.rv, home.client
    sign_in(c, rv)
    r = c.get("/admin/login", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/admin/"
    r = c.get("/admin/login", params={"next": "/admin/agents/ada"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/admin/agents/ada"
    r = c.get("/admin/login", params={"next": "//evil.example/"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/admin/"


# 9. an empty save clears topic files too


def test_a1_an_empty_save_clears_the_index_and_every_topic_file_in_one_revision(home: Home) -> None:
    """A1: saving an empty body clears the memory: MEMORY.md emptied and every topic file
    deleted in the same revision, so nothing of it is listed or found any more."""
    rv, c = home.rv, home.client
    rv.memory_apply(
        "ada",
        {
            "operations": [
                {"action": "add", "text": "We deploy on Tuesdays."},
                {"action": "write_topic", "topic": "deploys", "content": "# Deploys\nmake it\n"},
                {"action": "write_topic", "topic": "billing", "content": "# Billing\nFridays\n"},
            ]
        },
    )
    sign_in(c, rv)
    page = c.get("/admin/agents/ada")
    assert 'data-topics="2"' in page.text and "/admin/static/admin.js" in page.text
    r = c.post(
        "/admin/agents/ada/memory",
        data={"body": "\r\n  \r\n", "expected_revision": "1", "csrf": csrf_of(page.text)},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == "/admin/agents/ada?saved=2"
    assert rv.memory_read("ada").text == ""
    assert rv.memory_files("ada") in ([], ["MEMORY.md"])
    assert rv.memory_search("ada", "Fridays") == [] and rv.memory_search("ada", "make") == []
    assert "Topic files" not in c.get("/admin/agents/ada").text


# 10. wording and layout


def test_a1_reach_is_said_as_a_sentence_and_empty_tabs_say_so(home: Home) -> None:
    """A1: "every DM and every scheduled run"; with a grant, "every DM, channel C1 and every
    scheduled run"; an empty Conversations tab says there are none; tables scroll sideways."""
    rv, c = home.rv, home.client
    sign_in(c, rv)
    assert "reaches every DM and every scheduled run of ada." in c.get("/admin/agents/ada").text
    rv.ensure_channel("C1", "channel")
    rv.grant("ada", "C1")
    page = c.get("/admin/agents/ada").text
    assert "reaches every DM, channel C1 and every scheduled run of ada." in page
    conversations = c.get("/admin/agents/ada/conversations").text
    assert "No conversations with ada yet" in conversations and "<table" not in conversations
    history = c.get("/admin/agents/ada/history").text
    assert re.search(r'<div class="scroll">\s*<table', history)
    assert re.search(r'<div class="scroll">\s*<nav class="tabs"', history)


def test_i2_a_bundle_whose_memory_moved_warns_before_approve(home: Home) -> None:
    """I2, A2: a bundle expecting a revision the memory has left says, before Approve, that
    approving will fail and to deny it and ask again."""
    rv, c = home.rv, home.client
    rv.ensure_channel("C-eng", "channel")
    rv.grant("ada", "C-eng")
    bundle = rv.propose_bundle(
        "ada",
        body="# Memory\n- Only this.\n",
        expected_revision=0,
        channel_id="C-eng",
        instructions="Be brief.",
        requested_by="ann",
    )
    sign_in(c, rv)
    assert "approving will fail" not in c.get("/admin/approvals").text
    rv.memory_apply("ada", {"action": "add", "text": "Added since."})
    page = c.get("/admin/approvals").text
    article = page[page.index(f'id="{bundle.id}"') :]
    warning = article.index("approving will fail")
    assert warning < article.index('class="approve"')
    assert "Deny it and ask for it again" in article and "now at revision 1" in article
