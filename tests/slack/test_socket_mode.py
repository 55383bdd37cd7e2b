"""``reverie slack --socket`` end to end (SPEC C1, C3, W7, T1): the command in a process of its
own, the real ``slack_sdk`` Socket Mode client connecting to a local Socket Mode endpoint that
Slack's Web API fake hands out, events pushed down the websocket as Slack pushes them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reverie import Reverie
from tests.conftest import fake
from tests.slack.conftest import BOT_TOKEN, DM_SAM, SAM, SIGNING_SECRET, workspace
from tests.slack.fake_slack_server import EventSender, FakeSlack
from tests.slack.fake_socket_mode import FakeSocketMode

APP_TOKEN = fake("xapp-", "1-A0APP-", "1234567890-", "fakeapptoken")
SRC = Path(__file__).resolve().parents[2] / "src"
CLI = "import sys; from reverie.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(bot_token=BOT_TOKEN, app_token=APP_TOKEN) as server:
        workspace(server)
        yield server


def wait_posted(slack: FakeSlack, count: int, timeout: float = 60) -> list[str]:
    deadline = time.monotonic() + timeout
    while len(slack.posted(DM_SAM)) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{count} answers never came: {slack.posted(DM_SAM)}")
        time.sleep(0.02)
    return [m["text"] for m in slack.posted(DM_SAM)]


def test_c1_c3_socket_mode_runs_commands_and_a_redelivery_writes_once(
    slack: FakeSlack, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    with Reverie(home, create=True) as rv:
        rv.create_agent("ada")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVERIE_", "SLACK_"))}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])]),
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "REVERIE_SLACK_API_URL": slack.api_url,
    }
    events = EventSender(slack, "unused: events go down the websocket", SIGNING_SECRET)
    with FakeSocketMode() as socket:
        slack.socket_url = socket.url
        proc = subprocess.Popen(
            [sys.executable, "-c", CLI, "--home", str(home), "slack", "--socket"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert socket.wait_connected(), proc.stderr
            remember = events.message(SAM, DM_SAM, "!remember Deploys - We deploy on Tuesdays")
            ack = socket.push(remember)
            assert set(ack) == {"envelope_id"}
            assert wait_posted(slack, 1) == ["Saved to ada's memory: revision 1."]
            # Slack delivers the same event again (its acknowledgement was late, say).
            socket.push(remember, retry_attempt=1)
            socket.push(events.message(SAM, DM_SAM, "!memory"))
            said = wait_posted(slack, 2)
        finally:
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Connected to Slack over Socket Mode" in out
    assert slack.calls.get("apps.connections.open", 0) >= 1
    assert said[1].startswith("ada has a memory at revision 1: MEMORY.md holds ")
    assert len(said) == 2
    with Reverie(home) as rv:
        assert rv.memory_read("ada").revision == 1
        assert rv.memory_read("ada").text.count("## Deploys") == 1
        assert [r.writer for r in rv.memory_history("ada")[:1]] == ["chat"]
