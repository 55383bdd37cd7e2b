"""``reverie chat``, ``soul`` and ``approvals`` (SPEC 15, S2, I2): through a pipe, through a
pseudo-terminal, and in-process for the JSON shapes. The model is a local server speaking
OpenAI's protocol, reached by the real client from the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from reverie import Reverie
from reverie.cli import main
from tests.llm.fake_openai_server import FakeOpenAI, ToolUse

ROOT = Path(__file__).resolve().parents[1]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(list(args))
    text = capsys.readouterr().out
    return code, json.loads(text) if "--json" in args else text


@pytest.fixture
def home(tmp_path: Path, backend: str) -> str:
    h = tmp_path / "home"
    with Reverie(h, create=True) as rv:
        rv.create_agent("ada", soul="You are Ada.")
        rv.memory_apply(
            "ada", {"action": "add", "text": "We deploy on Tuesdays.", "section": "Decisions"}
        )
    return str(h)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


def env_for(server: FakeOpenAI | None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("REVERIE_", "OPENAI_", "ANTHROPIC_"))
    }
    env["PYTHONPATH"] = str(ROOT / "src")
    if "REVERIE_DATABASE_URL" in os.environ:  # the backend under test
        env["REVERIE_DATABASE_URL"] = os.environ["REVERIE_DATABASE_URL"]
    if server is not None:
        env.update(REVERIE_MODEL="openai:test-model", OPENAI_BASE_URL=server.base_url)
    return env


def chat(
    home: str, server: FakeOpenAI | None, stdin: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reverie.cli", "chat", "ada", "--home", home, *extra],
        input=stdin,
        capture_output=True,
        text=True,
        env=env_for(server),
        timeout=60,
    )


def terminal_chat(home: str, server: FakeOpenAI) -> pexpect.spawn:
    """`reverie chat ada` in a pseudo-terminal (200 columns), talking to ``server``."""
    return pexpect.spawn(
        sys.executable,
        ["-m", "reverie.cli", "chat", "ada", "--home", home],
        env={**env_for(server), "TERM": "xterm", "COLUMNS": "200"},
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 200),
    )


def test_chat_through_a_pipe_one_turn_per_line(home: str, server: FakeOpenAI) -> None:
    server.answer(ToolUse([("search_channel_memory", {"query": "deploy"})]))
    server.answer("We deploy on Tuesdays.")
    server.answer(ToolUse([("notify", {"text": "heads up"})]))
    server.answer("Done.")
    p = chat(home, server, "When do we deploy?\n\n/memory\nAnything else?\n")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "We deploy on Tuesdays."
    assert "MEMORY.md at revision 1:" in p.stdout and "- We deploy on Tuesdays." in p.stdout
    assert lines[-1] == "Done."
    # Tool calls and notifies go to stderr, so answers stay scriptable.
    assert '· search_channel_memory {"query": "deploy"}' in p.stderr
    assert "[notify] heads up" in p.stderr
    # Not streamed from a pipe; two turns, four model calls.
    assert len(server.requests) == 4 and not any(r.body.get("stream") for r in server.requests)
    with Reverie(home) as rv:
        [session] = rv.context_sessions("ada")
        conv = rv.conversation(session.id)
        # Recorded as a memory-on DM, closed on exit (review may read it), delivered once.
        assert (conv.memory_mode, conv.channel_kind, conv.closed) == ("on", "dm", True)
        assert rv.pending_deliveries(conversation_id=conv.id) == []
        assert [m.text for m in rv.context_read(None, conv.id).messages] == [
            "When do we deploy?",
            "We deploy on Tuesdays.",
            "Anything else?",
            "Done.",
        ]
        assert rv.member("owner").role == "owner"


def test_chat_json_lines_and_continuing_a_conversation(home: str, server: FakeOpenAI) -> None:
    server.answer("First.")
    p = chat(home, server, "hello\n", "--json", "--conversation", "c-term")
    assert p.returncode == 0, p.stderr
    [turn] = [json.loads(line) for line in p.stdout.splitlines()]
    assert turn["conversation"] == "c-term" and turn["outcome"] == "delivered"
    assert turn["answer"] == "First." and turn["memory_revision"] == 1 and turn["soul_version"] == 1
    assert [d["kind"] for d in turn["deliveries"]] == ["answer"]
    server.answer("Second.")
    p = chat(home, server, "again\n", "--json", "--conversation", "c-term")
    assert json.loads(p.stdout)["answer"] == "Second."
    roles = [m["role"] for m in server.requests[-1].body["messages"]]
    assert roles == ["system", "user", "assistant", "user"]  # the same session continued


def test_chat_json_gives_one_object_per_line_a_refused_one_too(
    home: str, server: FakeOpenAI
) -> None:
    """A script pairs each line it sends with a line it reads: a line refused before any
    turn (a control character) is an error object in its place, and the exit code says a
    turn got no answer."""
    server.answer("First.")
    server.answer("Third.")
    p = chat(home, server, "one\ntwo \x07 bell\nthree\n", "--json")
    assert p.returncode == 1, p.stderr
    said = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(said) == 3 and said[0]["answer"] == "First." and said[2]["answer"] == "Third."
    assert said[1]["error"]["code"] == "memory_invalid_control_character"


@pytest.mark.parametrize("json_flag", [False, True])
def test_chat_without_a_model_says_how_and_exits_2(home: str, json_flag: bool) -> None:
    p = chat(home, None, "hello\n", *(["--json"] if json_flag else []))
    assert p.returncode == 2
    said = json.loads(p.stdout)["error"] if json_flag else {"message": p.stderr}
    assert "REVERIE_MODEL" in said["message"]
    if json_flag:
        assert said["code"] == "no_model"
    with Reverie(home) as rv:
        assert rv.context_sessions("ada") == []  # nothing recorded


def test_chat_in_a_pseudo_terminal_streams_and_shows_tools(home: str, server: FakeOpenAI) -> None:
    server.event_delay = 0.005
    server.answer(ToolUse([("search_channel_memory", {"query": "deploy"})]))
    server.answer("We deploy on Tuesdays, after the standup, from a clean main.")
    child = terminal_chat(home, server)
    try:
        child.expect("you>")
        child.sendline("When do we deploy?")
        child.expect("you>")
        shown = child.before
        assert "search_channel_memory" in shown
        assert shown.count("We deploy on Tuesdays, after the standup, from a clean main.") == 1
        assert all(r.body.get("stream") for r in server.requests)
        child.sendline("/memory")
        child.expect("you>")
        assert "revision 1" in child.before
        child.sendline("/new")
        child.expect("you>")
        assert "Conversation cv_" in child.before
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    with Reverie(home) as rv:
        assert all(rv.conversation(s.id).closed for s in rv.context_sessions("ada"))


def test_soul_and_approvals_commands(home: str, capsys: pytest.CaptureFixture[str]) -> None:
    with Reverie(home) as rv:
        rv.add_member("sam", "member")
        rv.ensure_channel("D1", "dm")
        conv = rv.create_conversation("ada", "D1").id
        rv.soul_edit("ada", conv, {"action": "add", "text": "Be brief."})
        rv.soul_publish("ada", conv)
        a = rv.propose_instructions(conv, "Use metric units.", author="sam")
        b = rv.propose_instructions(conv, "Shout.", author="sam")
        c = rv.propose_instructions(conv, "Whisper.", author="sam")
    code, out = run(capsys, "soul", "show", "ada", "--home", home, "--json")
    assert code == 0 and out["version"] == 2 and out["text"] == "You are Ada.\n- Be brief.\n"
    code, out = run(capsys, "soul", "show", "ada", "--version", "1", "--home", home, "--json")
    assert out["text"] == "You are Ada.\n"
    code, out = run(capsys, "soul", "history", "ada", "--home", home, "--json")
    assert [v["version"] for v in out["versions"]] == [2, 1] and out["versions"][0]["time"]
    assert run(capsys, "soul", "show", "ada", "--version", "7", "--home", home, "--json")[0] == 5
    code, out = run(capsys, "approvals", "list", "--home", home, "--json")
    assert [x["id"] for x in out["approvals"]] == [a.id, b.id, c.id]
    assert out["approvals"][0]["state"] == "pending" and out["approvals"][0]["agent"] == "ada"
    code, out = run(capsys, "approvals", "approve", a.id, "--home", home, "--json")
    assert code == 0 and out["approval"]["applied_version"] == 1
    code, out = run(capsys, "approvals", "deny", b.id, "--home", home, "--json")
    assert out["approval"]["state"] == "denied"
    code, out = run(capsys, "approvals", "comment", c.id, "why?", "--home", home, "--json")
    assert out["approval"]["state"] == "commented" and out["approval"]["comment"] == "why?"
    code, out = run(capsys, "approvals", "approve", b.id, "--home", home, "--json")
    assert code == 3 and out["error"]["code"] == "approval_decided"
    code, out = run(capsys, "approvals", "approve", a.id, "--as", "sam", "--home", home, "--json")
    assert code == 3 and out["error"]["code"] == "permission_denied"
    assert run(capsys, "approvals", "list", "--agent", "ada", "--home", home, "--json")[1] == {
        "approvals": []
    }
    code, out = run(capsys, "approvals", "list", "--all", "--home", home)
    assert "Use metric units." in out and "comment by owner: why?" in out
    with Reverie(home) as rv:
        assert rv.channel_instructions("ada", "D1").text == "Use metric units."


def test_context_read_shows_why_the_agent_said_it(
    home: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from reverie.llm import ScriptedProvider, use_tools

    with Reverie(home) as rv:
        rv.ensure_channel("D1", "dm")
        conv = rv.create_conversation("ada", "D1").id
        provider = ScriptedProvider.replies(
            use_tools(("search_channel_memory", {"query": "deploy"})), "Tuesdays."
        )
        result = rv.turn(conv, "When?", author="sam", provider=provider)
    _, out = run(capsys, "context", "read", conv, "--home", home, "--json")
    [turn] = out["turns"]
    assert (
        turn["id"] == result.turn.id and turn["memory_revision"] == 1 and turn["soul_version"] == 1
    )
    assert turn["envelope"]["memory_injected"] is True and turn["answer_position"] == 2
    _, text = run(capsys, "context", "read", conv, "--home", home)
    assert f"turn {result.turn.id}: delivered; memory r1, soul v1" in text
    assert "tools: search_channel_memory" in text


def test_agent_set(home: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(
        capsys,
        "agent",
        "set",
        "ada",
        "--memory-framing",
        "advisory",
        "--model",
        "openai:m",
        "--home",
        home,
        "--json",
    )
    assert (
        code == 0
        and out["agent"]["memory_framing"] == "advisory"
        and out["agent"]["model"] == "openai:m"
    )
    code, out = run(capsys, "agent", "set", "ada", "--model", "nonsense", "--home", home, "--json")
    assert code == 3 and out["error"]["code"] == "invalid_setting"
    code, out = run(capsys, "agent", "set", "ada", "--model", "", "--home", home, "--json")
    assert out["agent"]["model"] is None and out["agent"]["memory_framing"] == "advisory"


def test_chat_from_a_pipe_exits_1_when_a_turn_got_no_answer(home: str, server: FakeOpenAI) -> None:
    """A script reads the exit code: a turn the model failed still lets the next one run, and
    the run ends with exit 1 and a count on stderr (the answers stay on stdout)."""
    server.fail(400, "The model does not exist.")
    server.answer("Second answer.")
    p = chat(home, server, "first\nsecond\n")
    assert p.returncode == 1, p.stderr
    assert p.stdout.splitlines()[-1] == "Second answer."
    assert "1 of 2 turns got no answer (1 model_error)." in p.stderr
    server.answer("All good.")
    p = chat(home, server, "third\n", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["outcome"] == "delivered"


def test_an_empty_as_is_refused_not_read_as_the_owner(
    home: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """SPEC A1, found by an authority audit: `--as ""` (a wrapper's `--as "$USER"` with the
    variable unset) had approved and written as the owner. It is a usage error now, and
    nothing is decided or written."""
    with Reverie(home) as rv:
        rv.ensure_channel("D1", "dm")
        conv = rv.create_conversation("ada", "D1").id
        a = rv.propose_instructions(conv, "Use metric units.", author=rv.ensure_owner().name)
        revision = rv.memory_read("ada").revision
    for blank in ("", "  "):
        code, out = run(
            capsys, "approvals", "approve", a.id, "--as", blank, "--home", home, "--json"
        )
        assert code == 2 and out["error"]["code"] == "usage_error"
        assert "--as" in out["error"]["message"] and "nothing was done" in out["error"]["message"]
    change = tmp_path / "change.json"
    change.write_text(
        json.dumps({"action": "add", "text": "Written as no one.", "section": "Decisions"})
    )
    code, out = run(
        capsys, "memory", "apply", "ada", str(change), "--as", "", "--home", home, "--json"
    )
    assert code == 2 and out["error"]["code"] == "usage_error"
    with Reverie(home) as rv:
        assert rv.approval(a.id).status == "pending"
        assert rv.memory_read("ada").revision == revision


def test_chat_as_an_inactive_member_is_refused(home: str, server: FakeOpenAI) -> None:
    """`--as sam` after `member set sam --inactive` delivered: a deactivated member chats
    no more than they write memory, and nothing is recorded or sent to the model."""
    with Reverie(home) as rv:
        rv.add_member("sam", "member")
        rv.update_member("sam", active=False)
    server.answer("Hello, Sam.")
    p = chat(home, server, "hi\n", "--as", "sam", "--json")
    assert p.returncode == 3, p.stdout
    error = json.loads(p.stdout)["error"]
    assert error["code"] == "permission_denied" and "sam is not active" in error["message"]
    assert server.requests == []
    with Reverie(home) as rv:
        assert rv.context_sessions("ada") == []
        rv.update_member("sam", active=True)
    p = chat(home, server, "hi\n", "--as", "sam", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["answer"] == "Hello, Sam."
