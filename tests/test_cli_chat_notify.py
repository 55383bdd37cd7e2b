"""``reverie chat`` shows a ``notify`` when it is sent (SPEC T1): in a terminal before the
answer the model writes after it, in ``--json`` in the turn's one line in the order sent; and
the tool line never shows a credential the model passed. The model is a local server speaking
OpenAI's protocol, reached by the real client from the real command."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from reverie import Reverie
from tests.conftest import fake
from tests.llm.fake_openai_server import FakeOpenAI, ToolUse
from tests.test_cli_agentrun import chat, env_for, terminal_chat

ROOT = Path(__file__).resolve().parents[1]
GITHUB = fake("ghp_", "Zq8Lm2Xv7Rt4Nw9Bp3Kd", "6Hs1Yc5Fj0Ga")


@pytest.fixture
def home(tmp_path: Path, backend: str) -> str:
    h = tmp_path / "home"
    with Reverie(h, create=True) as rv:
        rv.create_agent("ada", soul="You are Ada.")
    return str(h)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


def test_in_a_terminal_a_notify_shows_before_the_answer_written_after_it(
    home: str, server: FakeOpenAI
) -> None:
    """The answer streams as it is written; a notify the model sent before writing it is
    on the screen before it, not after."""
    server.event_delay = 0.005
    server.answer(ToolUse([("notify", {"text": "Starting the deploy now."})]))
    server.answer("The deploy is done, all green.")
    child = terminal_chat(home, server)
    try:
        child.expect("you>")
        child.sendline("Deploy, and tell me when you start.")
        child.expect("you>")
        shown = child.before
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert all(r.body.get("stream") for r in server.requests)
    notify = shown.index("[notify] Starting the deploy now.")
    answer = shown.index("The deploy is done, all green.")
    assert shown.index("· notify") < notify < answer
    assert shown.count("Starting the deploy now.") == 2  # the tool line and the notify, once
    with Reverie(home) as rv:
        [session] = rv.context_sessions("ada")
        assert rv.pending_deliveries(conversation_id=session.id) == []


def test_json_gives_one_line_per_turn_with_its_deliveries_in_the_order_sent(
    home: str, server: FakeOpenAI
) -> None:
    server.answer(ToolUse([("notify", {"text": "first"})]))
    server.answer(ToolUse([("notify", {"text": "second"})]))
    server.answer("Done.")
    server.answer("Nothing to send.")
    p = chat(home, server, "go\nagain\n", "--json")
    assert p.returncode == 0, p.stderr
    said = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(said) == 2  # a script pairs each line it sends with a line it reads
    assert [(d["kind"], d["text"]) for d in said[0]["deliveries"]] == [
        ("notify", "first"),
        ("notify", "second"),
        ("answer", "Done."),
    ]
    assert [(d["kind"], d["text"]) for d in said[1]["deliveries"]] == [
        ("answer", "Nothing to send.")
    ]
    assert "[notify]" not in p.stdout and "[notify]" not in p.stderr


def test_from_a_pipe_a_notify_goes_to_stderr_before_the_answer(
    home: str, server: FakeOpenAI
) -> None:
    server.answer(ToolUse([("notify", {"text": "heads up"})]))
    server.answer("Done.")
    p = subprocess.run(
        [sys.executable, "-m", "reverie.cli", "chat", "ada", "--home", home],
        input="go\n",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream: the order they were written in
        text=True,
        env=env_for(server),
        timeout=60,
    )
    assert p.returncode == 0, p.stdout
    assert p.stdout.index("[notify] heads up") < p.stdout.index("Done.")


def test_the_tool_line_never_shows_a_credential_the_model_passed(
    home: str, server: FakeOpenAI
) -> None:
    server.answer(ToolUse([("notify", {"text": f"use {GITHUB} for the release"})]))
    server.answer("I will not post that.")
    p = chat(home, server, "post the token\n")
    assert p.returncode == 0, p.stderr
    assert GITHUB not in p.stdout + p.stderr and "ghp_" not in p.stderr
    assert '· notify {"text": "use [redacted] for the release"}' in p.stderr
    assert "refused: notify_credential_rejected" in p.stderr
    assert "[notify]" not in p.stderr and p.stdout.strip() == "I will not post that."
