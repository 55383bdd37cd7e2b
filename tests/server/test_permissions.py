"""Who may write an agent's memory (SPEC A1, X1), on every write path: one table.

Each role and edit policy against HTTP, MCP and the CLI; the rule lives in one place
(``reverie.core.permissions``, applied by ``reverie.access.Actor``), so the three must agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from reverie.cli import main
from tests.server.conftest import Live

# (member, agent) -> allowed. ada's policy is "editors" and cy created it; open's is
# "all_workspace_members". ivy is inactive: nobody, everywhere.
TABLE = [
    ("olga", "ada", True),  # owner
    ("ann", "ada", True),  # admin
    ("cy", "ada", True),  # the agent's creator
    ("sam", "ada", False),  # a member, not the creator
    ("ivy", "ada", False),  # inactive
    ("olga", "open", True),
    ("sam", "open", True),  # any member, by the agent's policy
    ("ivy", "open", False),
]
PATHS = ("http", "mcp", "cli")


def write_http(live: Live, member: str, agent: str, text: str) -> tuple[bool, str]:
    with httpx2.Client(base_url=live.base, timeout=20) as c:
        r = c.post(
            f"/api/agents/{agent}/memory",
            headers={"Authorization": f"Bearer {live.tokens[member]}"},
            json={"action": "add", "text": text},
        )
    return r.status_code == 200, "" if r.status_code == 200 else r.json()["error"]["code"]


def write_mcp(live: Live, member: str, agent: str, text: str) -> tuple[bool, str]:
    result: dict[str, Any] = {}

    async def session() -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {live.tokens[member]}"})
        async with Client(streamable_http_client(f"{live.base}/mcp", http_client=http)) as c:
            current = live.rv.memory_read(agent)
            r = await c.call_tool(
                "update_agent_memory",
                {
                    "agent": agent,
                    "body": current.text + f"- {text}\n",
                    "expected_revision": current.revision,
                },
            )
            result["ok"] = not r.is_error
            result["code"] = (
                "" if not r.is_error else json.loads(r.content[0].text)["error"]["code"]
            )

    try:
        anyio.run(session)
    except Exception:
        # The SDK could not even open a session; that must be because the server refused the
        # token: 401, or 403 for a deactivated member's.
        with httpx2.Client(base_url=live.base) as c:
            probe = c.post(
                "/mcp",
                headers={"Authorization": f"Bearer {live.tokens[member]}"},
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            )
        assert probe.status_code in (401, 403), probe.text
        return False, str(probe.json()["error"]["code"])
    return bool(result["ok"]), str(result["code"])


def write_cli(
    live: Live, member: str, agent: str, text: str, tmp: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[bool, str]:
    batch = tmp / "batch.json"
    batch.write_text(json.dumps({"action": "add", "text": text}))
    code = main(
        [
            "memory",
            "apply",
            agent,
            str(batch),
            "--as",
            member,
            "--home",
            str(live.rv.home),
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    return code == 0, "" if code == 0 else out["error"]["code"]


@pytest.mark.parametrize(("member", "agent", "allowed"), TABLE)
def test_a1_one_rule_on_every_write_path(
    live: Live,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    member: str,
    agent: str,
    allowed: bool,
) -> None:
    outcomes = {}
    for path in PATHS:
        before = live.rv.memory_read(agent).revision
        text = f"written by {member} over {path}"
        if path == "http":
            ok, code = write_http(live, member, agent, text)
        elif path == "mcp":
            ok, code = write_mcp(live, member, agent, text)
        else:
            ok, code = write_cli(live, member, agent, text, tmp_path, capsys)
        after = live.rv.memory_read(agent)
        outcomes[path] = (ok, code)
        assert ok is allowed, (path, code)
        assert (after.revision == before + 1) is allowed
        assert (text in after.text) is allowed
        if not allowed:
            assert code in ("permission_denied", "unauthenticated", "inactive_member"), (path, code)
    assert len({ok for ok, _ in outcomes.values()}) == 1  # the three paths agree
