"""``notify`` never carries a credential (SPEC T1, W4): the model's text is refused with
``notify_credential_rejected`` and nothing reaches the outbox, the chat or the tool log.
A scripted model, real stores underneath."""

from __future__ import annotations

import json
import logging

import pytest

from reverie import Reverie
from reverie.llm import ScriptedProvider, use_tools
from reverie.runtime.tools import default_registry
from tests.conftest import fake

GITHUB = fake("ghp_", "Zq8Lm2Xv7Rt4Nw9Bp3Kd", "6Hs1Yc5Fj0Ga")
SLACK = fake("xoxb-", "1234567890-", "abcdefghijklmnopqrstuvwx")
DB_PASSWORD = fake("Xk9vQ2m", "Z7rT4pL8w")


@pytest.fixture
def ws(rv: Reverie) -> Reverie:
    rv.add_member("sam", "member")
    rv.ensure_channel("D-sam", "dm")
    rv.ensure_channel("C-ops", "channel")
    return rv


def outbox_texts(rv: Reverie) -> list[str]:
    """Every outbox row's text, sent or not."""
    return [str(r[0]) for r in rv.state.conn.execute("SELECT text FROM outbox").fetchall()]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"Deploy key for the bot: {SLACK}", SLACK),
        (f"Use token {GITHUB} for the release", GITHUB),
        (f"The database: postgres://admin:{DB_PASSWORD}@db.internal:5432/app", DB_PASSWORD),
        # After a literal escape ("\t" as two characters), as the logs' blanking reads it.
        (f"config: 'deploy\\t{GITHUB}'", GITHUB),
        (f"Progress: step 2 of 3 done.\nAnd the token is\n{GITHUB}", GITHUB),
    ],
    ids=["slack_token", "github_token", "url_password", "after_an_escape", "own_line"],
)
def test_a_notify_holding_a_credential_is_refused_and_nothing_is_queued(
    ws: Reverie, caplog: pytest.LogCaptureFixture, text: str, secret: str
) -> None:
    caplog.set_level(logging.DEBUG)
    c = ws.create_conversation("ada", "D-sam").id
    ws.link_chat(c, "C-ops")  # a notify from here would reach two chats
    provider = ScriptedProvider.replies(use_tools(("notify", {"text": text})), "Done.")
    result = ws.turn(c, "Ship it and tell us.", author="sam", provider=provider)
    assert result.outcome == "delivered"
    assert result.turn.tools == [
        {"id": "call_0_notify", "name": "notify", "ok": False, "code": "notify_credential_rejected"}
    ]
    # Nothing queued: the outbox holds the answer alone, in this chat only.
    assert [(d.kind, d.channel_id) for d in result.deliveries] == [("answer", "D-sam")]
    assert [d.kind for d in ws.pending_deliveries(conversation_id=c)] == ["answer"]
    assert not any(secret in t for t in outbox_texts(ws))
    # The model reads the refusal with its code, and a message that quotes no secret.
    tool_message = provider.calls[1].transcript[-1]
    error = json.loads(tool_message.content)["error"]
    assert error["code"] == "notify_credential_rejected" and error["field"] == "text"
    assert "Nothing was sent" in error["message"] and secret not in tool_message.content
    # The tool log kept with the conversation, and the process's log, hold no secret.
    logs = [m.text for m in ws.context_read(None, c, include_tools=True).messages]
    assert logs[1].startswith("notify ") and "[redacted]" in logs[1]
    assert not any(secret in m for m in logs)
    assert secret not in caplog.text


def test_the_refusal_names_the_kind_of_credential_and_its_line(ws: Reverie) -> None:
    c = ws.create_conversation("ada", "D-sam").id
    provider = ScriptedProvider.replies(
        use_tools(("notify", {"text": f"Progress.\nToken: {GITHUB}"})), "Done."
    )
    ws.turn(c, "Go.", author="sam", provider=provider)
    error = json.loads(provider.calls[1].transcript[-1].content)["error"]
    assert "GitHub token on line 2" in error["message"]
    assert error["kinds"] == ["github_token"]


def test_ordinary_notifies_still_go_out(ws: Reverie) -> None:
    """Talk about secrets, hashes and links is not a secret: it is sent as written."""
    c = ws.create_conversation("ada", "D-sam").id
    texts = [
        "The deploy token lives in 1Password under 'ops'; rotate it on Friday.",
        "Built 3f9c2a7d41e0b8c6a5d4e3f2a1b0c9d8e7f6a5b4, see https://ci.example.org/runs/42",
        "password_length is 16 and the api_key is ${OPS_API_KEY}",
    ]
    provider = ScriptedProvider.replies(
        use_tools(*[("notify", {"text": t}) for t in texts]), "Done."
    )
    result = ws.turn(c, "Go.", author="sam", provider=provider)
    assert [t["code"] for t in result.turn.tools] == [None, None, None]
    assert [d.text for d in result.deliveries if d.kind == "notify"] == texts


def test_the_refusal_comes_before_the_limits_are_counted(ws: Reverie) -> None:
    """A refused notify sends nothing, so it does not use one of the task's ten."""
    c = ws.create_conversation("ada", "D-sam").id
    calls = [("notify", {"text": f"token {GITHUB}"})] + [
        ("notify", {"text": f"step {i}"}) for i in range(10)
    ]
    provider = ScriptedProvider.replies(use_tools(*calls), "Done.")
    result = ws.turn(c, "Go.", author="sam", provider=provider)
    codes = [t["code"] for t in result.turn.tools]
    assert codes == ["notify_credential_rejected"] + [None] * 10


def test_the_tool_tells_the_model_its_error_codes() -> None:
    notify = default_registry().tools["notify"]
    assert "notify_credential_rejected" in notify.description
    assert "notify_too_long" in notify.description and "notify_limit" in notify.description
