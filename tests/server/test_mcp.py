"""MCP (SPEC A1, A2, 11) with the official SDK's client: over stdio (``reverie mcp``, as the
home's owner) and over streamable HTTP under a running server (a bearer token per member)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from reverie import Reverie
from tests.conftest import fake
from tests.server.conftest import Live

ROOT = Path(__file__).resolve().parents[2]
SECRET = fake("xoxb-", "1234567890-", "abcdefghijklmnopqrstuvwx")


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, result
    return dict(json.loads(result.content[0].text)["error"])


def over_http(live: Live, member: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {live.tokens[member]}"})
    return Client(streamable_http_client(f"{live.base}/mcp", http_client=http))


def run(session: Callable[[Any], Awaitable[None]], client: Client) -> None:
    async def main() -> None:
        async with client as c:
            await session(c)

    anyio.run(main)


async def inspect_update_and_refusals(c: Any) -> None:
    names = [t.name for t in (await c.list_tools()).tools]
    assert names[:2] == ["inspect_memory", "update_agent_memory"]
    assert {
        "search_channel_memory",
        "read_channel_memory",
        "context_sessions",
        "context_read",
    } <= set(names)
    tools = {t.name: t for t in (await c.list_tools()).tools}
    assert (
        "read first" in tools["update_agent_memory"].description.lower()
        or "inspect_memory" in tools["update_agent_memory"].description
    )
    assert "keep every line you do not mean to change" in tools["update_agent_memory"].description
    assert tools["search_channel_memory"].input_schema["required"][0] == "agent"
    got = (await c.call_tool("inspect_memory", {"agent": "ada"})).structured_content
    assert got["revision"] == 0 and "## Decisions" in got["body"]
    body = got["body"].replace("## Decisions\n", "## Decisions\n- We deploy on Tuesdays.\n")
    saved = await c.call_tool(
        "update_agent_memory", {"agent": "ada", "body": body, "expected_revision": 0}
    )
    assert not saved.is_error and saved.structured_content["revision"] == 1
    stale = await c.call_tool(
        "update_agent_memory", {"agent": "ada", "body": "# Memory\n", "expected_revision": 0}
    )
    err = error_of(stale)
    assert err["code"] == "revision_conflict" and err["current_revision"] == 1
    secret = await c.call_tool(
        "update_agent_memory",
        {
            "agent": "ada",
            "body": body + f"- The Slack bot token is {SECRET}\n",
            "expected_revision": 1,
        },
    )
    assert error_of(secret)["code"] == "memory_credential_rejected"
    assert SECRET not in secret.content[0].text
    hits = await c.call_tool("search_channel_memory", {"agent": "ada", "query": "deploy"})
    assert hits.structured_content["results"][0]["excerpt"] == "- We deploy on Tuesdays."
    missing = await c.call_tool("inspect_memory", {"agent": "nobody"})
    assert error_of(missing)["code"] == "not_found"
    bad = error_of(await c.call_tool("update_agent_memory", {"agent": "ada", "body": "x"}))
    assert bad["code"] == "invalid_arguments" and bad["field"] == "expected_revision"


def test_mcp_over_stdio_acts_as_the_owner(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Reverie(home, create=True) as rv:
        rv.create_agent("ada")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "reverie.cli", "mcp", "--home", str(home)],
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": os.environ.get("PATH", "")},
        cwd=str(tmp_path),
    )
    run(inspect_update_and_refusals, Client(params))
    with Reverie(home) as rv:
        [rec] = rv.memory_history("ada", 1)
        assert rec.writer == "mcp" and rec.revision == 1
        assert rv.member("owner").role == "owner"


def test_mcp_over_streamable_http_with_a_bearer_token(live: Live) -> None:
    run(inspect_update_and_refusals, over_http(live, "cy"))  # cy created ada


def test_a_member_without_edit_rights_is_refused(live: Live) -> None:
    async def session(c: Any) -> None:
        for call, args in [
            ("inspect_memory", {"agent": "ada"}),
            ("update_agent_memory", {"agent": "ada", "body": "# Memory\n", "expected_revision": 0}),
            ("search_channel_memory", {"agent": "ada", "query": "x"}),
        ]:
            assert error_of(await c.call_tool(call, args))["code"] == "permission_denied"
        # The agent whose policy lets every member edit is open to sam.
        ok = await c.call_tool("inspect_memory", {"agent": "open"})
        assert not ok.is_error

    run(session, over_http(live, "sam"))
    assert live.rv.memory_read("ada").revision == 0


def test_anonymous_and_revoked_tokens_get_401(live: Live) -> None:
    with httpx2.Client(base_url=live.base) as c:
        r = c.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"
    [info] = live.rv.tokens_of("cy")
    live.rv.revoke_token(info.id)
    with pytest.raises(BaseException):  # noqa: B017 - the SDK raises its own group of errors
        run(inspect_update_and_refusals, over_http(live, "cy"))
    with httpx2.Client(base_url=live.base) as c:  # what the SDK was answered
        r = c.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": f"Bearer {live.tokens['cy']}"},
        )
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"


def test_a2_a_bundle_waits_for_approval_as_one_proposal(live: Live) -> None:
    rv = live.rv
    rv.ensure_channel("C-eng", "channel")
    rv.grant("ada", "C-eng")

    async def session(c: Any) -> None:
        got = (await c.call_tool("inspect_memory", {"agent": "ada"})).structured_content
        result = await c.call_tool(
            "update_agent_memory",
            {
                "agent": "ada",
                "body": got["body"] + "- Deploys need two reviewers.\n",
                "expected_revision": got["revision"],
                "instructions": {"channel": "C-eng", "text": "Ask for two reviewers."},
            },
        )
        assert result.structured_content["status"] == "pending_approval"

    run(session, over_http(live, "ann"))
    [approval] = rv.approvals("ada")
    assert approval.kind == "bundle" and approval.memory_revision == 0
    assert rv.memory_read("ada").revision == 0  # nothing applied yet
    rv.approve(approval.id, by="olga")
    assert "Deploys need two reviewers." in rv.memory_read("ada").text
    assert rv.channel_instructions("ada", "C-eng").text == "Ask for two reviewers."
    rv.approve(approval.id, by="olga")  # again: applied once
    assert rv.memory_read("ada").revision == 1


def test_a2_a_bundle_on_a_moved_memory_is_not_applied(live: Live) -> None:
    rv = live.rv
    rv.ensure_channel("C-eng", "channel")
    rv.grant("ada", "C-eng")
    approval = rv.propose_bundle(
        "ada",
        body="# Memory\n- Only this.\n",
        expected_revision=0,
        channel_id="C-eng",
        instructions="Be brief.",
        requested_by="ann",
    )
    rv.memory_apply("ada", {"action": "add", "text": "Added since."})
    from reverie.errors import RevisionConflict

    with pytest.raises(RevisionConflict, match="Deny it and propose the change again"):
        rv.approve(approval.id, by="olga")
    assert rv.approval(approval.id).status == "pending"
    assert rv.channel_instructions("ada", "C-eng").version == 0
    assert "Added since." in rv.memory_read("ada").text


GITHUB_TOKEN = fake("ghp_", "Zq8Lm2Xv7Rt4Nw9Bp3Kd", "6Hs1Yc5Fj0Ga")


def test_a2_a_bundle_is_checked_like_each_part_before_it_waits(live: Live) -> None:
    """A bundle is refused at once for what would refuse either part alone: an unknown or
    ungranted channel, a memory that moved. No one is asked to approve what could only fail,
    and a token pasted as a channel id is stored nowhere and not echoed."""
    rv = live.rv
    rv.ensure_channel("C-ops", "channel")  # ada holds no grant there
    good = {"channel": "C-ops", "text": "Be brief."}

    async def session(c: Any) -> None:
        body = (await c.call_tool("inspect_memory", {"agent": "ada"})).structured_content["body"]

        async def bundle(channel: str, revision: int) -> dict[str, Any]:
            result = await c.call_tool(
                "update_agent_memory",
                {
                    "agent": "ada",
                    "body": body + "- One more.\n",
                    "expected_revision": revision,
                    "instructions": {**good, "channel": channel},
                },
            )
            assert GITHUB_TOKEN not in result.content[0].text
            return error_of(result)

        assert (await bundle(GITHUB_TOKEN, 0))["code"] == "not_found"
        assert (await bundle("C-nowhere", 0))["code"] == "not_found"
        assert (await bundle("", 0))["code"] == "invalid_arguments"
        assert (await bundle("C-ops", 0))["code"] == "permission_denied"
        rv.grant("ada", "C-ops")
        moved = await bundle("C-ops", 7)
        assert moved["code"] == "revision_conflict" and moved["current_revision"] == 0

    run(session, over_http(live, "cy"))
    assert rv.approvals("ada") == [] and rv.memory_read("ada").revision == 0


def test_a_retried_update_with_its_key_answers_the_first_write(live: Live) -> None:
    """W7 over MCP: a call sent again after a lost answer, with the same idempotency key,
    returns the revision it saved, not revision_conflict; the key reused for another body is
    refused."""

    async def session(c: Any) -> None:
        args = {
            "agent": "ada",
            "body": "# Memory\n\n## Decisions\n- We deploy on Tuesdays.\n",
            "expected_revision": 0,
            "idempotency_key": "desk-7",
        }
        first = (await c.call_tool("update_agent_memory", args)).structured_content
        again = (await c.call_tool("update_agent_memory", args)).structured_content
        assert first["status"] == "saved" and first["revision"] == 1
        assert again["revision"] == 1 and again["replayed"] is True
        # Not "saved": nothing was written by this call, and it says so (W7).
        assert again["status"] == "already_applied"
        assert "nothing was written this time" in again["message"]
        other = await c.call_tool("update_agent_memory", {**args, "body": "# Memory\n"})
        assert error_of(other)["code"] == "idempotency_key_reused"

    run(session, over_http(live, "cy"))
    assert live.rv.memory_read("ada").revision == 1


def test_arguments_are_taken_as_json_sends_them(live: Live) -> None:
    """``true`` is no revision and ``"3"`` no number: such a call is refused with the field
    to fix, on MCP's own tools and on the registry's, and nothing is written."""

    async def session(c: Any) -> None:
        for name, args, field in [
            (
                "update_agent_memory",
                {"agent": "ada", "body": "x", "expected_revision": False},
                "expected_revision",
            ),
            (
                "update_agent_memory",
                {"agent": "ada", "body": "x", "expected_revision": "0"},
                "expected_revision",
            ),
            ("search_channel_memory", {"agent": "ada", "query": "x", "limit": True}, "limit"),
            ("search_channel_memory", {"query": "x"}, "agent"),
            ("search_channel_memory", {"agent": 3, "query": "x"}, "agent"),
        ]:
            err = error_of(await c.call_tool(name, args))
            assert err["code"] == "invalid_arguments" and err["field"] == field, (args, err)
        unknown = error_of(await c.call_tool("forget_everything", {}))
        assert unknown["code"] == "tool_not_available" and "inspect_memory" in unknown["message"]

    run(session, over_http(live, "cy"))
    assert live.rv.memory_read("ada").revision == 0


def test_what_a_caller_sent_is_echoed_short_and_never_a_secret(live: Live) -> None:
    """A name longer than any agent's is refused without being sent back; a token pasted
    as an agent's name is not echoed in the refusal."""
    huge = "n" * 100_000

    async def session(c: Any) -> None:
        for name in ("inspect_memory", "search_channel_memory"):
            long = await c.call_tool(
                name, {"agent": huge, "query": "x"} if "search" in name else {"agent": huge}
            )
            assert error_of(long)["code"] == "invalid_arguments"
            assert len(long.content[0].text) < 1000
            pasted = await c.call_tool(
                name,
                {"agent": GITHUB_TOKEN, "query": "x"}
                if "search" in name
                else {"agent": GITHUB_TOKEN},
            )
            assert error_of(pasted)["code"] == "not_found"
            assert GITHUB_TOKEN not in pasted.content[0].text

    run(session, over_http(live, "cy"))


def test_an_argument_the_caller_made_up_is_echoed_short_and_never_a_secret(live: Live) -> None:
    async def session(c: Any) -> None:
        for key in (GITHUB_TOKEN, "k" * 100_000):
            result = await c.call_tool("inspect_memory", {"agent": "ada", key: 1})
            assert error_of(result)["code"] == "invalid_arguments"
            assert GITHUB_TOKEN not in result.content[0].text
            assert len(result.content[0].text) < 1000

    run(session, over_http(live, "cy"))


def test_read_only_tools_say_so_to_the_client(live: Live) -> None:
    """Annotations let a client approve the reading tools once and ask before each write."""

    async def session(c: Any) -> None:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert tools["update_agent_memory"].annotations.read_only_hint is False
        for name in ("inspect_memory", "search_channel_memory", "context_read"):
            assert tools[name].annotations.read_only_hint is True, name
        assert tools["inspect_memory"].input_schema["properties"]["agent"]["maxLength"] == 200

    run(session, over_http(live, "cy"))


def test_a_refused_body_is_named_as_the_argument_sent(live: Live) -> None:
    """A control character in the body is refused naming ``body`` and where in it (line and
    column), not the batch field the store checked."""

    async def session(c: Any) -> None:
        err = error_of(
            await c.call_tool(
                "update_agent_memory",
                {"agent": "ada", "body": "# Memory\n\n- bell\x07 here\n", "expected_revision": 0},
            )
        )
        assert err["code"] == "memory_invalid_control_character" and err["field"] == "body"
        assert err["message"].startswith("body holds the control character U+0007 at line 3")

    run(session, over_http(live, "cy"))
    assert live.rv.memory_read("ada").revision == 0
