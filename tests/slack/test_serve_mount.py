"""Slack under ``reverie serve`` (SPEC 10, 15): with Slack configured, the one server process
answers Slack's events at ``POST /slack/events`` beside the API, and posts the agent's answer."""

from __future__ import annotations

import os
import re
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reverie import Reverie
from tests.llm.fake_openai_server import FakeOpenAI
from tests.server.conftest import free_port
from tests.server.test_serve import start, stop
from tests.slack.conftest import BOT_TOKEN, DM_SAM, MPIM, SAM, SIGNING_SECRET, workspace
from tests.slack.fake_slack_server import EventSender, FakeSlack


def test_serve_mounts_the_slack_events_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, port = tmp_path / "home", free_port()
    with FakeSlack(bot_token=BOT_TOKEN) as slack, FakeOpenAI() as model:
        configure(home, slack, model, monkeypatch)
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


def test_W7_two_workers_answer_each_command_once_and_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under ``--workers 2`` both processes take events (they share the port), the parent
    posts: a retry sent to both at once writes once and is answered once, a thread's answers
    come in the order of its commands, and a group DM's command writes nothing (C2, O2)."""
    home, port = tmp_path / "home", free_port()
    with FakeSlack(bot_token=BOT_TOKEN) as slack, FakeOpenAI() as model:
        configure(home, slack, model, monkeypatch)
        proc, lines = start(home, port, "--workers", "2")
        try:
            assert "(2 processes)" in "\n".join(lines)
            assert any("/slack/events" in line for line in lines), lines
            events = EventSender(slack, f"http://127.0.0.1:{port}/slack/events", SIGNING_SECRET)
            # One thread, commands one after another (each may reach either process).
            root = events.message(SAM, DM_SAM, "!remember Thread fact 1 - one")
            ts = root["event"]["ts"]
            assert events.deliver(root)[0] == 200
            for i in (2, 3, 4):
                body = events.message(
                    SAM, DM_SAM, f"!remember Thread fact {i} - n{i}", thread_ts=ts
                )
                assert events.deliver(body)[0] == 200
            # Separate threads at once, one of them delivered three times at once.
            bodies = [
                events.message(SAM, DM_SAM, f"!remember Loose fact {i} - n{i}") for i in range(4)
            ]
            sends = [(b, 0) for b in bodies] + [(bodies[0], 1), (bodies[0], 2)]
            with ThreadPoolExecutor(len(sends)) as pool:
                codes = list(pool.map(lambda s: events.deliver(s[0], retry=s[1])[0], sends))
            assert codes == [200] * len(sends)
            group = events.message(SAM, MPIM, "!remember Group secret - never")
            assert events.deliver(group)[0] == 200
            hello = events.message(SAM, DM_SAM, "hi ada")
            assert events.deliver(hello)[0] == 200
            # The turn runs in the worker that took the event: killing that worker mid-turn
            # leaves the turn to the next start (resume), so the kill waits for its answer.
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not any(
                m["text"] == "Hello from ada." for m in slack.posted(DM_SAM)
            ):
                time.sleep(0.1)
            # A worker killed: the other takes the events, and uvicorn starts a new one.
            os.kill(workers_of(proc.pid)[0], signal.SIGKILL)
            for i in range(3):
                body = events.message(SAM, DM_SAM, f"!remember After kill {i} - k{i}")
                assert events.deliver(body)[0] == 200
            # a command's answer each, the group DM's refusal, the turn's answer
            wanted = 4 + 4 + 1 + 1 + 3

            deadline = time.monotonic() + 30
            while len(slack.posted()) < wanted and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(1.5)  # a second post would come within the poster's next pass
        finally:
            out = stop(proc, signal.SIGTERM)
        assert "Stopped." in out
        posted = slack.posted()
        assert len(posted) == wanted, [m["text"] for m in posted]
        in_thread = [m["text"] for m in posted if m.get("thread_ts") == ts]
        numbers = [int(re.findall(r"revision (\d+)", t)[0]) for t in in_thread]
        assert len(numbers) == 4 and numbers == sorted(numbers), in_thread
        assert [m["text"] for m in slack.posted(MPIM)] and "Group secret" not in str(
            slack.posted(MPIM)
        )
        assert [m["text"] for m in posted if m["text"] == "Hello from ada."] == ["Hello from ada."]
        with Reverie(home) as rv:
            history = rv.memory_history("ada")
            memory = rv.memory_read("ada")
        text = memory.text
        # 4 in the thread, 4 loose (the retried one once), 3 after the kill; 0 is the start.
        assert [r.revision for r in history] == list(range(11, -1, -1))
        assert memory.revision == 11
        assert text.count("Loose fact 0") == 1 and "Group secret" not in text


def workers_of(parent: int) -> list[int]:
    """The uvicorn worker processes (spawned by multiprocessing) of ``parent``."""
    found = []
    for task in Path(f"/proc/{parent}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(int(child))
    assert found, "no worker process"
    return found


def configure(
    home: Path, slack: FakeSlack, model: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A home with ada and an owner, the workspace in the local Slack, a model that answers,
    and the environment ``reverie serve`` reads Slack's and the model's settings from."""
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
