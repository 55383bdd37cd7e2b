"""Slack under ``reverie serve`` (SPEC 10, 15): with Slack configured, the one server process
answers Slack's events at ``POST /slack/events`` beside the API, and posts the agent's answer."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from reverie import Reverie
from tests.llm.fake_openai_server import FakeOpenAI
from tests.server.conftest import free_port
from tests.server.test_serve import start, stop
from tests.slack.conftest import BOT_TOKEN, DM_SAM, SAM, SIGNING_SECRET, workspace
from tests.slack.fake_slack_server import EventSender, FakeSlack


def test_serve_mounts_the_slack_events_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, port = tmp_path / "home", free_port()
    with FakeSlack(bot_token=BOT_TOKEN) as slack, FakeOpenAI() as model:
        workspace(slack)
        with Reverie(home, create=True) as rv:
            rv.add_member("olga", "owner")
            rv.create_agent("ada")
        model.answer("Hello from ada.")
        for name, value in {
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "REVERIE_SLACK_API_URL": slack.api_url,
            "REVERIE_MODEL": "openai:test",
            "OPENAI_BASE_URL": model.base_url,
        }.items():
            monkeypatch.setenv(name, value)
        proc, lines = start(home, port)
        try:
            assert any("/slack/events" in line for line in lines), lines
            events = EventSender(slack, f"http://127.0.0.1:{port}/slack/events", SIGNING_SECRET)
            status, _ = events.deliver(events.message(SAM, DM_SAM, "hi ada"))
            assert status == 200
            deadline = time.monotonic() + 30
            while not slack.posted(DM_SAM) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert [m["text"] for m in slack.posted(DM_SAM)] == ["Hello from ada."]
            bad = EventSender(slack, f"http://127.0.0.1:{port}/slack/events", "wrong-secret")
            assert bad.deliver(bad.message(SAM, DM_SAM, "again"))[0] == 401
        finally:
            out = stop(proc, signal.SIGTERM)
        assert "Stopped." in out
