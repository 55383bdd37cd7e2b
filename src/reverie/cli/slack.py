"""``reverie grant AGENT --slack-channel ID [--revoke]`` and ``reverie slack --socket``: where
an agent may answer and be written to in Slack (C2), and the Slack app over Socket Mode.

Under ``reverie serve`` the same app receives Slack's events at ``POST /slack/events``.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

import click
from rich.table import Table

from reverie.errors import NotFound, RefusedInput
from reverie.slack.mapping import PREFIX, channel_ref, is_channel_id
from reverie.store.conversations import Grant

from ._contract import Options, app, emit, open_home, out, pass_opts, stamp
from .server import SLACK_EXTRA, need_extra


@app.command("grant")
@click.argument("agent")
@click.option(
    "--slack-channel",
    "slack_channel",
    help="The Slack channel's id (C0123ABCD), or the channel as `reverie grant AGENT` lists it "
    "(slack:C0123ABCD).",
)
@click.option("--revoke", is_flag=True, help="Revoke the grant instead.")
@pass_opts
def grant(opts: Options, agent: str, slack_channel: str | None, revoke: bool) -> None:
    """Admit AGENT to a Slack channel (or --revoke it); without --slack-channel, list its
    grants."""
    with open_home(opts) as rv:
        if slack_channel is None:
            if revoke:
                raise click.UsageError("--revoke needs --slack-channel ID.")
            grants = rv.grants(agent)

            def human_list() -> None:
                if not grants:
                    out.print(f"{agent} has no grants.")
                    return
                table = Table("channel", "status", "changed")
                for g in grants:
                    table.add_row(g.channel_id, g.status, stamp(g.changed_at))
                out.print(table)

            emit(opts, {"agent": agent, "grants": [_grant(g) for g in grants]}, human_list)
            return
        rv.agent(agent)
        slack_channel = _channel_id(slack_channel)
        ref = channel_ref(slack_channel)
        try:
            rv.channel(ref)
        except NotFound:
            # A DM's id starts with D; anything else is a channel (a group DM's messages are
            # told apart when they arrive).
            rv.ensure_channel(ref, "dm" if slack_channel.startswith("D") else "channel")
        g = rv.revoke(agent, ref) if revoke else rv.grant(agent, ref)

    def human() -> None:
        verb = "may no longer answer or be written to" if revoke else "may answer and be written to"
        out.print(f"{agent} {verb} in Slack channel {slack_channel} ({g.channel_id}).")

    emit(opts, _grant(g) | {"agent": agent, "slack_channel": slack_channel}, human)


def _channel_id(given: str) -> str:
    """The Slack channel id of ``--slack-channel``: as Slack shows it (``C0123ABCD``), or as
    ``reverie grant AGENT`` lists it (``slack:C0123ABCD``). A grant on anything else would
    name no chat Slack sends (a lowercase or empty id), or one the app keeps apart
    (``G0123ABCD:group``, a group DM's messages), and no message there would ever be admitted.

    Raises:
        RefusedInput: ``invalid_channel``, before anything is written.
    """
    found = given.strip()
    found = found[len(PREFIX) :] if found.startswith(PREFIX) else found
    if not is_channel_id(found):
        raise RefusedInput(
            f"{given[:80]!r} is not a Slack channel id: one is C, G or D followed by capital "
            "letters and digits, like C0123ABCD. Slack shows a channel's id at the bottom of "
            "its details (click the channel's name), and `reverie grant AGENT` lists the "
            "channels granted already. Nothing was changed.",
            code="invalid_channel",
            slack_channel=given[:80],
        )
    return found


def _grant(g: Grant) -> dict[str, Any]:
    return {"channel": g.channel_id, "status": g.status, "changed": stamp(g.changed_at)}


@app.command("slack")
@click.option("--socket", is_flag=True, help="Connect over Socket Mode (needs SLACK_APP_TOKEN).")
@pass_opts
def slack(opts: Options, socket: bool) -> None:
    """Run the Slack app over Socket Mode until Ctrl-C (HTTP events go to `reverie serve`)."""
    if not socket:
        raise click.UsageError(
            "Over HTTP, Slack's events arrive at POST /slack/events under `reverie serve`; "
            "pass --socket to connect over Socket Mode instead."
        )
    need_extra("slack --socket", "slack", SLACK_EXTRA)
    from reverie.slack.app import SlackSurface

    with open_home(opts) as rv:
        surface = SlackSurface(rv)
        handler = surface.socket_mode()
        surface.start()
        stopped = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stopped.set())
        handler.connect()
        if not opts.json:
            out.print("Connected to Slack over Socket Mode; Ctrl-C stops.")
        try:
            stopped.wait()
        except KeyboardInterrupt:
            pass
        finally:
            handler.close()
            surface.stop()
