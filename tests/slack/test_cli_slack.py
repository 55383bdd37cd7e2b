"""``reverie grant`` and ``reverie slack`` (SPEC 15, C2), and the core without the Slack extra."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(list(args))
    text = capsys.readouterr().out
    return code, json.loads(text) if "--json" in args else text


@pytest.fixture
def home(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    h = str(tmp_path / "home")
    assert run(capsys, "--home", h, "init")[0] == 0
    assert run(capsys, "--home", h, "agent", "create", "ada")[0] == 0
    return h


def test_grant_and_revoke_a_slack_channel(home: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "grant", "ada", "--slack-channel", "C0OPS", "--home", home, "--json")
    assert code == 0
    assert (out["channel"], out["status"], out["slack_channel"]) == (
        "slack:C0OPS",
        "active",
        "C0OPS",
    )
    code, out = run(
        capsys, "--home", home, "--json", "grant", "ada", "--slack-channel", "C0OPS", "--revoke"
    )
    assert (code, out["status"]) == (0, "revoked")
    code, out = run(capsys, "--home", home, "--json", "grant", "ada")
    assert [(g["channel"], g["status"]) for g in out["grants"]] == [("slack:C0OPS", "revoked")]
    with Reverie(home) as rv:
        assert rv.channel("slack:C0OPS").kind == "channel"
        assert [g.status for g in rv.grants("ada")] == ["revoked"]
    code, text = run(capsys, "--home", home, "grant", "ada", "--slack-channel", "C0OPS")
    assert code == 0 and "may answer and be written to in Slack channel C0OPS" in text


def test_grant_refusals(home: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "--home", home, "--json", "grant", "bo", "--slack-channel", "C1")
    assert (code, out["error"]["code"]) == (5, "not_found")
    code, out = run(capsys, "--home", home, "--json", "grant", "ada", "--slack-channel", "C 1")
    assert (code, out["error"]["code"]) == (3, "invalid_channel")
    code, out = run(capsys, "--home", home, "--json", "grant", "ada", "--revoke")
    assert (code, out["error"]["code"]) == (2, "usage_error")


def test_c2_grant_takes_a_slack_channel_id_or_the_id_as_listed(
    home: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A grant names a chat Slack sends events from: an id not shaped like Slack's (empty,
    lowercase, a group DM's internal ``:group`` channel) is refused and writes nothing, and the
    id as ``reverie grant AGENT`` lists it (``slack:C...``) is that channel, so that revoking
    it revokes the real grant."""
    for bad in ("", "  ", "c0123abcd", "G0MPIM:group", "slack:", "#ops", "C0123ABCD!"):
        code, out = run(capsys, "--home", home, "--json", "grant", "ada", "--slack-channel", bad)
        assert (code, out["error"]["code"]) == (3, "invalid_channel"), bad
        assert "like C0123ABCD" in out["error"]["message"]
        assert "Nothing was changed." in out["error"]["message"]
    with Reverie(home) as rv:
        assert [c.id for c in rv.channels() if c.id.startswith("slack:")] == []
        assert rv.grants("ada") == []
    code, out = run(
        capsys, "--home", home, "--json", "grant", "ada", "--slack-channel", "C0123ABCD"
    )
    assert (code, out["channel"], out["status"]) == (0, "slack:C0123ABCD", "active")
    listed = run(capsys, "--home", home, "--json", "grant", "ada")[1]["grants"][0]["channel"]
    code, out = run(
        capsys, "--home", home, "--json", "grant", "ada", "--slack-channel", listed, "--revoke"
    )
    assert (code, out["channel"], out["status"], out["slack_channel"]) == (
        0,
        "slack:C0123ABCD",
        "revoked",
        "C0123ABCD",
    )
    with Reverie(home) as rv:
        assert [(g.channel_id, g.status) for g in rv.grants("ada")] == [
            ("slack:C0123ABCD", "revoked")
        ]
        assert [c.id for c in rv.channels() if c.id.startswith("slack:")] == ["slack:C0123ABCD"]


def test_slack_needs_socket_mode_and_its_token(
    home: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = run(capsys, "--home", home, "--json", "slack")
    assert (code, out["error"]["code"]) == (2, "usage_error")
    assert "POST /slack/events" in out["error"]["message"]
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    code, out = run(capsys, "--home", home, "--json", "slack", "--socket")
    assert (code, out["error"]["code"], out["error"]["setting"]) == (
        2,
        "slack_not_configured",
        "SLACK_BOT_TOKEN",
    )


def test_the_core_and_the_cli_import_without_the_slack_extra() -> None:
    script = (
        "import sys, reverie, reverie.cli, reverie.api; "
        "bad = sorted(m for m in sys.modules if m.startswith(('slack_bolt', 'slack_sdk'))); "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
