"""``reverie serve`` as a process (SPEC 15): first start on an empty home, sign-in, API, MCP
and review in one process, and a clean stop on SIGTERM and SIGINT."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest

from reverie import Reverie
from tests.conftest import fake
from tests.server.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]


def start(
    home: Path, port: int, *extra: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reverie.cli",
            "serve",
            "--home",
            str(home),
            "--port",
            str(port),
            "--tick",
            "0.5",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})},
    )
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if "Ctrl-C stops" in line:
            break
    base = f"http://127.0.0.1:{port}"
    while time.monotonic() < deadline:  # the banner comes just before the socket listens
        try:
            if httpx2.get(f"{base}/api/health", timeout=1).status_code == 200:
                return proc, lines
        except httpx2.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError("\n".join(lines))


def stop(proc: subprocess.Popen[str], sig: int) -> str:
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    return out


def test_first_start_then_a_clean_stop(tmp_path: Path) -> None:
    home, port = tmp_path / "home", free_port()
    proc, lines = start(home, port)
    banner = "\n".join(lines)
    base = f"http://127.0.0.1:{port}"
    assert f"at {base}" in banner and "created the owner 'owner' and the agent 'example'" in banner
    link = re.search(r"(http://\S+/admin/signin/\S+)", banner)
    token = re.search(r"(rvt_[A-Za-z0-9_-]+)", banner)
    assert link and token, banner
    assert "password" not in banner.lower()
    with httpx2.Client(base_url=base, timeout=10) as c:
        agents = c.get("/api/agents", headers={"Authorization": f"Bearer {token.group(1)}"})
        assert [a["name"] for a in agents.json()["agents"]] == ["example"]
        # Opening the link spends nothing (a chat app's preview must not use it up); its
        # Sign in button posts it once.
        for _ in range(2):
            shown = c.get(link.group(1))
            assert shown.status_code == 200 and "Sign in" in shown.text
        csrf = re.search(r'name="login_csrf" value="([^"]+)"', shown.text)
        assert csrf, shown.text
        signed = c.post(link.group(1), data={"login_csrf": csrf.group(1)}, follow_redirects=False)
        assert signed.status_code == 303 and "reverie_session" in signed.cookies
        shown = c.get(link.group(1))
        csrf = re.search(r'name="login_csrf" value="([^"]+)"', shown.text)
        assert csrf, shown.text
        again = c.post(link.group(1), data={"login_csrf": csrf.group(1)})  # one use only
        assert again.status_code == 410 and "not valid" in again.text
        page = c.get("/admin/agents/example")  # the client keeps the session cookie
        assert page.status_code == 200 and "MEMORY.md at revision" in page.text
    out = stop(proc, signal.SIGTERM)
    assert "Stopped." in out
    with Reverie(home) as rv:
        assert rv.soul("example").version == 1 and rv.member("owner").role == "owner"
    # A later start creates nothing and shows no token, but a new sign-in link and how to
    # make a token; Slack half set up is said, not silently left out.
    slack_token = fake("xoxb-", "1234567890-", "abcdefghijklmnopqrstuvwx")
    proc, lines = start(home, port, env={"SLACK_BOT_TOKEN": slack_token})
    banner = "\n".join(lines)
    assert "rvt_" not in banner and "First start" not in banner and "/admin/signin/" in banner
    assert "`reverie token create NAME` makes one" in banner
    assert "Slack events: not served, SLACK_SIGNING_SECRET is not set" in banner
    assert slack_token not in banner
    assert "Stopped." in stop(proc, signal.SIGINT)
    with Reverie(home) as rv:
        assert [a.name for a in rv.agents()] == ["example"] and len(rv.tokens_of()) == 1


def test_review_runs_on_its_schedule_inside_serve(tmp_path: Path) -> None:
    home, port = tmp_path / "home", free_port()
    with Reverie(home, create=True) as rv:
        rv.add_member("olga", "owner")
        rv.create_agent("ada")
        rv.ensure_channel("D1", "dm")
        conv = rv.create_conversation("ada", "D1").id
        rv.append_message(conv, "user", "I prefer tea over coffee.", author="olga")
        rv.close_conversation(conv)
    proc, _ = start(home, port)
    try:
        deadline = time.monotonic() + 30
        with Reverie(home) as rv:
            while rv.pending_ranges("ada") and time.monotonic() < deadline:
                time.sleep(0.2)
            assert rv.pending_ranges("ada") == []
            assert "tea" in rv.memory_read("ada").text.lower()
    finally:
        stop(proc, signal.SIGTERM)


def test_several_worker_processes_serve_one_home(tmp_path: Path) -> None:
    import anyio
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    home, port = tmp_path / "home", free_port()
    proc, lines = start(home, port, "--workers", "2")
    banner = "\n".join(lines)
    assert "(2 processes)" in banner
    token = re.search(r"(rvt_[A-Za-z0-9_-]+)", banner)
    assert token, banner
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token.group(1)}"}
    try:
        with httpx2.Client(base_url=base, headers=headers, timeout=10) as c:
            revisions = [
                c.post(
                    "/api/agents/example/memory", json={"action": "add", "text": f"fact {i}"}
                ).json()["revision"]
                for i in range(20)
            ]
        assert revisions == list(range(1, 21))  # one pipeline, whichever process served

        async def mcp() -> None:
            http = httpx2.AsyncClient(headers=headers)
            async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
                for _ in range(3):  # stateless: any worker answers any request
                    got = await client.call_tool("inspect_memory", {"agent": "example"})
                    assert got.structured_content["revision"] == 20

        anyio.run(mcp)
    finally:
        assert "Stopped." in stop(proc, signal.SIGTERM)


def test_a_home_another_command_touched_first_still_gets_its_first_token(
    tmp_path: Path,
) -> None:
    """`reverie mcp` makes the owner and `reverie agent create` an agent before any server
    started: the first start still gives the owner a token (and the example agent when there
    is no agent), once."""
    from reverie.http.serve import bootstrap

    with Reverie(tmp_path / "a", create=True) as rv:
        rv.ensure_owner()  # what `reverie mcp` does first
        first = bootstrap(rv)
        assert first.agent == "example" and first.token is not None
        assert bootstrap(rv).token is None  # later starts make nothing
    with Reverie(tmp_path / "b", create=True) as rv:
        rv.create_agent("ada")
        first = bootstrap(rv)
        assert first.agent is None and first.token is not None
        assert [a.name for a in rv.agents()] == ["ada"] and len(rv.tokens_of()) == 1


def test_links_point_at_the_server_unless_a_public_url_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The admin links Slack shows come from REVERIE_PUBLIC_URL; `reverie serve` makes it
    the address it listens on when it is unset, and leaves a set one alone."""
    from reverie.config import Settings, default_public_url

    monkeypatch.setenv("REVERIE_PUBLIC_URL", "")  # unset, and put back as it was after
    default_public_url("http://127.0.0.1:18795")
    assert Settings.load().public_url == "http://127.0.0.1:18795"
    monkeypatch.setenv("REVERIE_PUBLIC_URL", "https://reverie.example.com")
    default_public_url("http://127.0.0.1:18795")
    assert Settings.load().public_url == "https://reverie.example.com"


SERVE = [sys.executable, "-m", "reverie.cli", "--json", "serve"]


def test_a_taken_port_is_said_before_anything_is_made_or_claimed(tmp_path: Path) -> None:
    """`reverie serve` on a port another program listens on stops with address_unavailable
    (exit 3) before its banner claims the address and before it makes the home."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        home = tmp_path / "home"
        done = subprocess.run(
            [*SERVE, "--home", str(home), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
    assert done.returncode == 3, done.stdout + done.stderr
    assert '"address_unavailable"' in done.stdout and "Reverie is serving" not in done.stdout
    assert not home.exists()
