"""``reverie serve``: the HTTP API, the admin page and MCP in one process, with the review
scheduler beside them, until SIGINT or SIGTERM.

On first start with an empty home (no member, no agent) it creates the workspace's owner and an
example agent, and prints an API token for the owner once. Every start prints a one-time
sign-in link for the admin page (valid fifteen minutes): there is no default password. While it
runs, the home notes where it serves (``reverie.store.tokens.record_server``), so that
``reverie token link`` prints links to it.
"""

from __future__ import annotations

import errno
import signal
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from reverie.api import Reverie
from reverie.config import (
    default_public_url,
    export_home,
    export_slack_wake_port,
    slack_wake_port,
)
from reverie.errors import RefusedInput
from reverie.store.postgres import redact
from reverie.store.tokens import forget_server, record_server

__all__ = ["EXAMPLE_SOUL", "Bootstrap", "bootstrap", "run", "worker_app"]

EXAMPLE_AGENT = "example"
EXAMPLE_SOUL = """\
You are Example, a helpful assistant for this workspace.

- Answer briefly and plainly; ask when a request is ambiguous.
- Say what you are unsure of instead of guessing.
"""


@dataclass(frozen=True)
class Bootstrap:
    """What the first start created (nothing on later starts)."""

    owner: str
    agent: str | None
    token: str | None


def bootstrap(rv: Reverie, owner: str = "owner") -> Bootstrap:
    """The owner (made if the home has none); on a home where no API token was ever made,
    the owner's first token, and the example agent too if there is no agent yet. Another
    command run first (``reverie mcp`` makes the owner, ``reverie agent create`` an agent)
    leaves a home where no one has a token yet, so that is what counts as a first start."""
    member = rv.ensure_owner(owner)
    if rv.tokens_of():
        return Bootstrap(member.name, None, None)
    agent = None
    if not rv.agents():
        rv.create_agent(EXAMPLE_AGENT, creator=member.name, soul=EXAMPLE_SOUL)
        agent = EXAMPLE_AGENT
    token, _ = rv.create_token(member.name, label="created by the first start")
    return Bootstrap(member.name, agent, token)


def _server_class() -> type:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, minus re-raising the signal after its graceful shutdown: that
        would kill the process before the scheduler stops and the home is closed."""

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True  # a second Ctrl-C: stop waiting for open requests
            else:
                self.should_exit = True

    return Server


def run(
    home: Path | None,
    host: str,
    port: int,
    tick: float,
    *,
    owner: str = "owner",
    workers: int = 1,
    say: Callable[[str], None] = print,
) -> None:
    """Serve until interrupted; returns after a clean stop.

    With ``workers`` above one, that many processes serve HTTP (the store is safe across
    processes) and this one runs the review scheduler; MCP sessions are then stateless, since
    a client's next request may reach another process. With Slack, every worker handles
    ``POST /slack/events`` and this process alone posts the outbox (in order, once) and
    resumes the turns a stop cut short: a worker that dies and is restarted changes neither.
    """
    import uvicorn

    from reverie.review.schedule import serve_forever

    from .app import create_app

    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    base = f"http://{shown}:{port}"
    default_public_url(base)
    check_listen(host, port)  # before anything is made or printed: nothing to undo
    rv = Reverie(home, create=True)
    first = bootstrap(rv, owner)
    slack, routes = _slack(rv)
    stop = threading.Event()
    reviews = threading.Thread(
        target=serve_forever, args=(rv, stop, tick), name="review-scheduler", daemon=True
    )
    code = rv.sign_in_code(first.owner)
    say(
        f"Reverie is serving {_where(rv)} at {base}"
        + (f" ({workers} processes)" if workers > 1 else "")
    )
    if first.agent:
        say(f"  First start: created the owner '{first.owner}' and the agent '{first.agent}'.")
    say(f"  Admin page: {base}/admin/signin/{code}")
    say("    (a one-time sign-in link, valid 15 minutes; `reverie token link NAME` makes another)")
    if first.token:
        say(f"  API and MCP token for {first.owner} (shown once): {first.token}")
        say(f"    curl -H 'Authorization: Bearer {first.token}' {base}/api/agents")
    else:
        say("  API and MCP tokens: `reverie token create NAME` makes one (shown once).")
    say(f"  MCP (streamable HTTP): {base}/mcp    OpenAPI: {base}/openapi.json")
    if slack is not None:
        say(f"  Slack events: {base}/slack/events")
    elif rv.settings.slack_bot_token or rv.settings.slack_signing_secret:
        unset = "SLACK_SIGNING_SECRET" if rv.settings.slack_bot_token else "SLACK_BOT_TOKEN"
        say(
            f"  Slack events: not served, {unset} is not set (events over HTTP need "
            "SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET; Socket Mode is `reverie slack --socket`)."
        )
    say(f"  Reviewing due agents every {tick:g} s. Ctrl-C stops.")
    reviews.start()
    if slack is not None:
        slack.start()
        if workers > 1:  # the workers queue answers; this process posts them
            export_slack_wake_port(slack.worker.listen())
    try:
        record_server(rv.home, rv.settings.public_url, shown, port)  # for `reverie token link`
        if workers > 1:
            export_home(rv.home)  # the workers open this same home
            uvicorn.run(
                "reverie.http.serve:worker_app",
                factory=True,
                host=host,
                port=port,
                workers=workers,
                log_level="warning",
            )
        else:
            config = uvicorn.Config(
                create_app(rv, routes=routes), host=host, port=port, log_level="warning"
            )
            _server_class()(config).run()
    finally:
        forget_server(rv.home)
        stop.set()
        if slack is not None:
            slack.stop()
        reviews.join(timeout=30)
        rv.close()
        say("Stopped.")


def check_listen(host: str, port: int) -> None:
    """That the server can listen at ``host``:``port``, tried with a socket bound and closed
    again as uvicorn will bind it, so that a taken port or an unknown host is said before the
    banner claims the address.

    Raises:
        RefusedInput: ``address_unavailable``, saying why.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise RefusedInput(
            f"Cannot listen on {host!r}: the host name is unknown ({exc}). Pass --host an "
            "address of this machine, such as 127.0.0.1 or 0.0.0.0. Nothing was started.",
            code="address_unavailable",
        ) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            why = (
                "another program is listening there"
                if exc.errno == errno.EADDRINUSE
                else (exc.strerror or str(exc))
            )
            raise RefusedInput(
                f"Cannot listen on {host}:{port}: {why}. Choose another --port (or stop the "
                "other server). Nothing was started.",
                code="address_unavailable",
            ) from None


def worker_app() -> Any:
    """The app of one HTTP worker of ``reverie serve --workers N``: the home from the
    environment, MCP without sessions (a client's next request may reach another worker), and
    with Slack configured the events endpoint, whose answers the parent process posts."""
    from .app import create_app

    rv = Reverie()
    _, routes = _slack(rv, wake_port=slack_wake_port())
    return create_app(rv, routes=routes, stateless_mcp=True)


def _slack(rv: Reverie, *, wake_port: int | None = None) -> tuple[Any, list[Any]]:
    """The Slack app and its ``POST /slack/events`` route, when Slack is configured
    (``SLACK_BOT_TOKEN`` and ``SLACK_SIGNING_SECRET``); else nothing. With ``wake_port``
    (a worker process) another process posts the outbox."""
    if not (rv.settings.slack_bot_token and rv.settings.slack_signing_secret):
        return None, []
    from starlette.routing import Route

    from reverie.slack.app import SlackSurface
    from reverie.slack.http import EVENTS_PATH, EventsEndpoint

    surface = SlackSurface(rv, wake_port=wake_port)
    return surface, [Route(EVENTS_PATH, EventsEndpoint(surface), methods=["POST"])]


def _where(rv: Reverie) -> str:
    """What the server serves: the data directory, or the PostgreSQL database (no password)."""
    url = rv.settings.database_url
    return f"the PostgreSQL database {redact(url)}" if url else str(rv.home)
