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

from reverie import Reverie
from tests.server.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]


def start(home: Path, port: int, *extra: str) -> tuple[subprocess.Popen[str], list[str]]:
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
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
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
        signed = c.get(link.group(1), follow_redirects=False)
        assert signed.status_code == 303 and "reverie_session" in signed.cookies
        again = c.get(link.group(1), follow_redirects=False)  # one use only
        assert again.status_code == 200 and "used already" in again.text
        page = c.get("/admin/agents/example")  # the client keeps the session cookie
        assert page.status_code == 200 and "MEMORY.md at revision" in page.text
    out = stop(proc, signal.SIGTERM)
    assert "Stopped." in out
    with Reverie(home) as rv:
        assert rv.soul("example").version == 1 and rv.member("owner").role == "owner"
    # A later start creates nothing and shows no token, but a new sign-in link.
    proc, lines = start(home, port)
    banner = "\n".join(lines)
    assert "rvt_" not in banner and "First start" not in banner and "/admin/signin/" in banner
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
