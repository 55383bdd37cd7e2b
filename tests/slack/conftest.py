"""A running Slack app against local servers: Slack's Web API (the fake), the model (the fake
OpenAI server), and the app itself served over HTTP by uvicorn, as ``reverie serve`` would."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from reverie import Reverie
from reverie.config import Settings
from reverie.slack.app import SlackSurface
from reverie.slack.http import EVENTS_PATH, EventsEndpoint
from tests.conftest import fake
from tests.llm.fake_openai_server import FakeOpenAI
from tests.slack.fake_slack_server import EventSender, FakeSlack

BOT_TOKEN = fake("xoxb-", "1111-2222-", "fakebottoken")
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"

# The people of the workspace.
SAM, OLGA, EVE, GHOST, GUEST = "U0SAM", "U0OLGA", "U0EVE", "U0GHOST", "U0GUEST"
# A workspace channel Sam and Olga are in; a DM with Sam; a DM with Ghost (to be
# deactivated); a group DM; a channel shared with another organisation.
OPS, DM_SAM, DM_GHOST, MPIM, SHARED = "C0OPS", "D0SAM", "D0GHOST", "G0MPIM", "C0SHARED"


def settings_for(home: Path, slack: FakeSlack, llm: FakeOpenAI, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": BOT_TOKEN,
        "slack_signing_secret": SIGNING_SECRET,
        "slack_api_url": slack.api_url,
        "model": "openai:gpt-test",
        "openai_base_url": llm.base_url,
        "openai_api_key": "sk-local",
        "model_max_retries": 0,
    }
    return Settings.load(home, **(values | extra))


def workspace(slack: FakeSlack) -> None:
    slack.add_user(SAM, "sam")
    slack.add_user(OLGA, "olga", owner=True)
    slack.add_user(EVE, "eve")
    slack.add_user(GHOST, "ghost")
    slack.add_user(GUEST, "guest", guest=True)
    slack.add_channel(OPS, [SAM, OLGA, GUEST])
    slack.add_channel(DM_SAM, [SAM], kind="im")
    slack.add_channel(DM_GHOST, [GHOST], kind="im")
    slack.add_channel(MPIM, [SAM, OLGA, EVE], kind="mpim")
    slack.add_channel(SHARED, [SAM, OLGA], ext_shared=True)


def serve(app: Any) -> Iterator[str]:
    """Serve an ASGI app on 127.0.0.1 (an ephemeral port) in a thread; yields its events URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}{EVENTS_PATH}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@dataclass
class Stack:
    """Everything a Slack test drives."""

    rv: Reverie
    slack: FakeSlack
    model: FakeOpenAI
    surface: SlackSurface
    events: EventSender

    def settle(self) -> None:
        """Wait for the turns under way, then post the outbox."""
        assert self.surface.wait_idle(timeout=60)
        self.surface.worker.deliver_pending()

    def texts(self, channel: str | None = None) -> list[str]:
        """What the bot posted, in order."""
        return [m["text"] for m in self.slack.posted(channel)]

    def say(self, user: str, channel: str, text: str, **kw: Any) -> tuple[dict[str, Any], int]:
        """A person's message, delivered once; the event and the HTTP status."""
        body = self.events.message(user, channel, text, **kw)
        status, _ = self.events.deliver(body)
        return body, status


@pytest.fixture
def stack_factory(tmp_path: Path) -> Iterator[Callable[..., Stack]]:
    started: list[Any] = []

    def make(**settings: Any) -> Stack:
        slack = FakeSlack(bot_token=BOT_TOKEN)
        slack.start()
        started.append(slack.stop)
        model = FakeOpenAI(api_key="sk-local")
        model.start()
        started.append(model.stop)
        workspace(slack)
        rv = Reverie(
            tmp_path / "home",
            create=True,
            settings=settings_for(tmp_path / "home", slack, model, **settings),
        )
        started.append(rv.close)
        rv.create_agent("ada")
        surface = SlackSurface(rv)
        started.append(surface.stop)
        gen = serve(EventsEndpoint(surface))
        url = next(gen)
        started.append(lambda: next(gen, None))
        return Stack(rv, slack, model, surface, EventSender(slack, url, SIGNING_SECRET))

    yield make
    for stop in reversed(started):
        stop()


@pytest.fixture
def stack(stack_factory: Callable[..., Stack]) -> Stack:
    return stack_factory()
