"""What an authority audit found (SPEC 1, 11, 12, O3), each reproduced before its fix:

1. an admin-page session signed in with an API token outlived the token's revocation, and a
   deactivated member's session came back when the member was reactivated;
2. the admin page's conversation list showed a memory-off conversation's title (its first
   message), which the API and the CLI withhold;
3. a deactivated member's token was called "unknown or revoked"; a 413 said "over 0 MiB"; an
   oversized MCP request without a token was answered 413 where the API says 401; `reverie token
   link` printed the default address while `reverie serve` served the home on another port.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from fastapi.testclient import TestClient

import reverie
from reverie import Reverie, Settings
from reverie.cli import main
from reverie.http import create_app
from tests.server.conftest import free_port, workspace
from tests.server.test_admin_pages import csrf_of, login_csrf_of

#: The source of the reverie under test, for the processes a test starts.
SRC = str(Path(reverie.__file__).resolve().parents[1])
SECRET_TITLE = "Salary for Dana will be 95k, do not share"


@dataclass
class Home:
    rv: Reverie
    tokens: dict[str, str]
    client: TestClient


@pytest.fixture
def home(tmp_path: Path, backend: str) -> Iterator[Home]:
    rv, tokens = workspace(tmp_path / "home")
    with TestClient(create_app(rv)) as client:
        yield Home(rv, tokens, client)
    rv.close()


def token_sign_in(client: TestClient, token: str) -> TestClient:
    page = client.get("/admin/login")
    r = client.post(
        "/admin/login",
        data={"token": token, "login_csrf": login_csrf_of(page.text)},
        follow_redirects=False,
    )
    assert r.status_code == 303 and "reverie_session" in client.cookies, r.text
    return client


def link_sign_in(client: TestClient, rv: Reverie, member: str) -> TestClient:
    code = rv.sign_in_code(member)
    page = client.get(f"/admin/signin/{code}")
    r = client.post(
        f"/admin/signin/{code}",
        data={"login_csrf": login_csrf_of(page.text)},
        follow_redirects=False,
    )
    assert r.status_code == 303 and "reverie_session" in client.cookies, r.text
    return client


def signed_in(client: TestClient) -> bool:
    r = client.get("/admin/agents/ada", follow_redirects=False)
    if r.status_code == 303:
        assert r.headers["location"].startswith("/admin/login"), r.headers
        return False
    assert r.status_code == 200 and "Sign out" in r.text, r.text
    return True


def save(client: TestClient, rv: Reverie, line: str) -> int:
    """Post the memory tab's Save with the page's CSRF secret (read while still signed in)."""
    current = rv.memory_read("ada")
    r = client.post(
        "/admin/agents/ada/memory",
        data={
            "body": current.text + f"- {line}\n",
            "expected_revision": str(current.revision),
            "csrf": csrf_of(client.get("/admin/agents/ada").text),
        },
        follow_redirects=False,
    )
    return r.status_code


def cli(home: Path, *args: str, public_url: str = "") -> tuple[int, str]:
    out = subprocess.run(
        [sys.executable, "-m", "reverie.cli", "--home", str(home), "--json", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": SRC, "REVERIE_PUBLIC_URL": public_url},
    )
    return out.returncode, out.stdout + out.stderr


def error_of(r: httpx2.Response | object) -> dict[str, str]:
    body = r.json()  # type: ignore[attr-defined]
    return dict(body["error"])


# 1. sessions end with their token and their member


def test_a_session_signed_in_with_a_token_ends_when_the_token_is_revoked(home: Home) -> None:
    """11: `reverie token revoke` stops the token everywhere, the admin sessions signed in with
    it included (read and save, at their next request); a session from a sign-in link, and
    one signed in with another token of the same member, go on."""
    rv = home.rv
    with_token = token_sign_in(TestClient(home.client.app), home.tokens["cy"])
    other_token = token_sign_in(TestClient(home.client.app), rv.create_token("cy")[0])
    with_link = link_sign_in(TestClient(home.client.app), rv, "cy")
    assert signed_in(with_token) and save(with_token, rv, "before revoking") == 303
    csrf = csrf_of(with_token.get("/admin/agents/ada").text)
    [first, _] = rv.tokens_of("cy")
    main(["token", "revoke", first.id, "--home", str(rv.home)])
    assert not signed_in(with_token)
    current = rv.memory_read("ada")
    r = with_token.post(
        "/admin/agents/ada/memory",
        data={"body": "# Taken\n", "expected_revision": str(current.revision), "csrf": csrf},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"].startswith("/admin/login?reason=")
    assert rv.memory_read("ada").revision == current.revision
    assert signed_in(other_token) and signed_in(with_link)


def test_a_deactivated_members_sessions_end_for_good(home: Home) -> None:
    """1, 11: deactivating a member ends their sessions, from a token or a link; reactivating
    them brings none back (their token, never revoked, works again on the API)."""
    rv = home.rv
    with_token = token_sign_in(TestClient(home.client.app), home.tokens["cy"])
    with_link = link_sign_in(TestClient(home.client.app), rv, "cy")
    assert signed_in(with_token) and signed_in(with_link)
    csrf = csrf_of(with_link.get("/admin/agents/ada").text)
    rv.update_member("cy", active=False)
    assert not signed_in(with_token) and not signed_in(with_link)
    rv.update_member("cy", active=True)
    assert not signed_in(with_token) and not signed_in(with_link)
    current = rv.memory_read("ada")
    r = with_link.post(
        "/admin/agents/ada/memory",
        data={"body": "# Back\n", "expected_revision": str(current.revision), "csrf": csrf},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"].startswith("/admin/login?reason=")
    assert rv.memory_read("ada").revision == current.revision
    me = home.client.get("/api/me", headers={"Authorization": f"Bearer {home.tokens['cy']}"})
    assert me.status_code == 200


def test_a_session_is_not_revived_by_reactivation_with_no_request_between(home: Home) -> None:
    rv = home.rv
    with_link = link_sign_in(TestClient(home.client.app), rv, "cy")
    rv.update_member("cy", active=False)
    rv.update_member("cy", active=True)
    assert not signed_in(with_link)


# 2. a memory-off conversation's title


def test_o3_the_conversations_tab_shows_no_title_of_a_memory_off_conversation(
    home: Home,
) -> None:
    """O3, A1: the admin page lists a group chat's conversation with its memory mode but not
    its title (its first message), as the API's session list leaves it out; a DM's title is
    shown."""
    rv = home.rv

    def said(conversation: str, kind: str, channel: str, text: str) -> dict[str, object]:
        return {
            "conversation": conversation,
            "agent": "ada",
            "channel": {"kind": kind, "id": channel},
            "author": "cy",
            "role": "user",
            "text": text,
            "time": "2026-11-30T10:00:00Z",
        }

    rv.import_records(
        [
            said("c-dm", "dm", "D1", "Deploys move to Tuesdays"),
            said("c-group", "group", "G1", SECRET_TITLE),
        ]
    )
    assert rv.conversation("c-group").title == SECRET_TITLE  # what there is to withhold
    auth = {"Authorization": f"Bearer {home.tokens['cy']}"}
    listed = home.client.get("/api/agents/ada/sessions", headers=auth).json()["sessions"]
    assert [s["id"] for s in listed] == ["c-dm"]
    c = link_sign_in(TestClient(home.client.app), rv, "cy")
    page = c.get("/admin/agents/ada/conversations")
    assert page.status_code == 200
    assert "c-group" in page.text and "Deploys move to Tuesdays" in page.text
    assert "Salary" not in page.text and "95k" not in page.text
    assert "title not shown" in page.text


# 3. clear errors, alike on every surface


def test_a_deactivated_members_token_is_told_so_on_api_mcp_and_admin(home: Home) -> None:
    """1, 11: a working token of a deactivated member is answered 403 ``inactive_member`` on
    the API, MCP and the admin sign-in, saying an owner can reactivate the member; a wrong
    token is still 401 and learns nothing of the kind."""
    c = home.client
    ivy = {"Authorization": f"Bearer {home.tokens['ivy']}"}
    wrong = {"Authorization": "Bearer rvt_works-for-no-one"}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for r in (c.get("/api/agents", headers=ivy), c.post("/mcp", json=ping, headers=ivy)):
        assert r.status_code == 403 and error_of(r)["code"] == "inactive_member", r.text
        assert "deactivated" in error_of(r)["message"]
        assert "reactivate" in error_of(r)["message"]
    for r in (c.get("/api/agents", headers=wrong), c.post("/mcp", json=ping, headers=wrong)):
        assert r.status_code == 401 and error_of(r)["code"] == "unauthenticated", r.text
        assert "deactivated" not in r.text
    other = TestClient(c.app)
    page = other.get("/admin/login")
    r = other.post(
        "/admin/login", data={"token": home.tokens["ivy"], "login_csrf": login_csrf_of(page.text)}
    )
    assert r.status_code == 403 and "deactivated" in r.text and "reactivate" in r.text
    assert "reverie_session" not in other.cookies
    page = other.get("/admin/login")
    r = other.post(
        "/admin/login", data={"token": "rvt_nope", "login_csrf": login_csrf_of(page.text)}
    )
    assert "unknown or revoked" in r.text and "deactivated" not in r.text


@pytest.fixture
def small(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str], Reverie]]:
    """A home with REVERIE_MAX_BATCH_BYTES=200000: a request body may bring 400,000 bytes."""
    settings = Settings.load(tmp_path / "home", max_batch_bytes=200_000)
    with Reverie(settings=settings, create=True) as rv:
        rv.add_member("olga", "owner")
        rv.create_agent("ada")
        auth = {"Authorization": f"Bearer {rv.create_token('olga')[0]}"}
        with TestClient(create_app(rv)) as c:
            yield c, auth, rv
        assert rv.memory_read("ada").revision == 0


BIG = json.dumps({"action": "add", "text": "x" * 500_000}).encode()
JSON = {"Content-Type": "application/json"}


def test_the_size_limit_is_said_readably_on_api_and_mcp(
    small: tuple[TestClient, dict[str, str], Reverie],
) -> None:
    """15: with REVERIE_MAX_BATCH_BYTES=200000 the 413 names the limit as people read it."""
    c, auth, _ = small
    for path in ("/api/agents/ada/memory", "/mcp"):
        r = c.post(path, content=BIG, headers={**auth, **JSON})
        assert r.status_code == 413 and error_of(r)["code"] == "request_too_large"
        message = error_of(r)["message"]
        assert "390.6 KiB" in message and "400,000 bytes" in message, message
        assert "0 MiB" not in message


def test_mcp_asks_for_a_token_before_the_size_of_its_body(
    small: tuple[TestClient, dict[str, str], Reverie],
) -> None:
    """11, 15: an oversized request without a working token is 401 on MCP, as on the API."""
    c, _, _ = small
    for path in ("/api/agents/ada/memory", "/mcp"):
        for who in ({}, {"Authorization": "Bearer rvt_works-for-no-one"}):
            r = c.post(path, content=BIG, headers={**who, **JSON})
            assert r.status_code == 401, (path, r.status_code, r.text)
            assert error_of(r)["code"] == "unauthenticated"


def serve(home: Path, port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "reverie.cli", "serve", "--home", str(home), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC, **env},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return proc
        except httpx2.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(proc.communicate()[0])


def link_of(home: Path) -> str:
    code, out = cli(home, "token", "link", "owner")
    assert code == 0, out
    return str(json.loads(out)["link"])


def test_token_link_points_at_the_server_running_on_the_home(tmp_path: Path) -> None:
    """15: `reverie token link` prints a link to where `reverie serve` of the home serves (not
    the default port); once the server stops, or when its note is stale, the default; an
    explicit REVERIE_PUBLIC_URL or --url wins."""
    home, port = tmp_path / "home", free_port()
    proc = serve(home, port, {"REVERIE_PUBLIC_URL": ""})
    try:
        assert link_of(home).startswith(f"http://127.0.0.1:{port}/admin/signin/")
        code, out = cli(home, "token", "link", "owner", "--url", "https://x.example/")
        assert code == 0 and json.loads(out)["link"].startswith("https://x.example/admin/signin/")
        code, out = cli(home, "token", "link", "owner", public_url="https://r.example")
        assert code == 0 and json.loads(out)["link"].startswith("https://r.example/admin/signin/")
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert link_of(home).startswith("http://127.0.0.1:8765/admin/signin/")
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    stale = [
        {"url": f"http://127.0.0.1:{port}", "host": "127.0.0.1", "port": port, "pid": pid}
        for pid in (int(gone.stdout), os.getpid())  # a dead process; a live one, no listener
    ]
    for note in stale:
        (home / "server.json").write_text(json.dumps(note))
        assert link_of(home).startswith("http://127.0.0.1:8765/admin/signin/")


def test_token_link_knows_a_server_while_any_of_the_homes_servers_runs(tmp_path: Path) -> None:
    """15: two `reverie serve` on one home (two ports): the link points at the newer; once the
    newer stops, at the older, which still runs; once both stop, the default. A server that
    stops takes only its own note away."""
    home, first_port, second_port = tmp_path / "home", free_port(), free_port()
    env = {"REVERIE_PUBLIC_URL": ""}
    first = serve(home, first_port, env)
    try:
        second = serve(home, second_port, env)
        try:
            assert link_of(home).startswith(f"http://127.0.0.1:{second_port}/admin/signin/")
        finally:
            second.terminate()
            second.communicate(timeout=30)
        assert link_of(home).startswith(f"http://127.0.0.1:{first_port}/admin/signin/")
        # The older stops first this time: the newer's note stays.
        second = serve(home, second_port, env)
        try:
            first.terminate()
            first.communicate(timeout=30)
            assert link_of(home).startswith(f"http://127.0.0.1:{second_port}/admin/signin/")
        finally:
            second.terminate()
            second.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.terminate()
            first.communicate(timeout=30)
    assert link_of(home).startswith("http://127.0.0.1:8765/admin/signin/")
    assert not (home / "server.json").exists()
