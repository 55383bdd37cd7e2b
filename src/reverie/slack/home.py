"""The App Home tab: per agent, whether it has a memory and its revision, its granted channels
and a link to its admin page. Published with ``views.publish`` when a person opens the tab."""

from __future__ import annotations

from typing import Any

from reverie.api import Reverie
from reverie.store.tokens import links_base

from .commands import admin_link
from .mapping import is_channel_id, is_slack_channel, slack_channel
from .text import to_slack

__all__ = ["home_view"]

#: The granted channels named per agent; past these, how many more. A section's text holds at
#: most 3,000 characters.
SHOWN_CHANNELS = 50


def home_view(rv: Reverie, dm_agent: str | None) -> dict[str, Any]:
    """The Home tab's view: one section per agent (archived ones last)."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Reverie: agents and memory"}},
    ]
    agents = sorted(rv.agents(), key=lambda a: (a.archived, a.name))
    base = links_base(rv.settings)  # once: it may look for the home's server
    if not agents:
        blocks.append(_text("No agents yet: create one with `reverie agent create NAME`."))
    for agent in agents:
        current = rv.memory_read(agent.name)
        has = (
            f"memory at revision {current.revision}"
            if current.revision > 0
            else "no memory yet (revision 0)"
        )
        granted = [g.channel_id for g in rv.grants(agent.name) if g.status == "active"]
        notes = [has, f"{len(granted)} granted channel{'s' * (len(granted) != 1)}"]
        if agent.name == dm_agent:
            notes.append("answers DMs")
        if agent.archived:
            notes.append("archived")
        link = admin_link(rv.settings, agent.name, base)
        lines = [f"*{to_slack(agent.name)}*: {', '.join(notes)}"]
        if granted:
            lines.append(f"Granted in {_channels(granted)}")
        lines.append(f"<{link}|Open in the admin page>")
        blocks.append(_text("\n".join(lines)))
    if dm_agent is None and agents:
        blocks.append(
            _text("No agent answers DMs: set REVERIE_SLACK_AGENT to the one that should.")
        )
    return {"type": "home", "blocks": blocks}


def _channels(channels: list[str]) -> str:
    """``<#C1>, <#C2>``: Slack shows each as the channel's name (a private channel's only to
    its members); past :data:`SHOWN_CHANNELS`, how many more."""
    named = [
        f"<#{slack_channel(c)}>"
        if is_slack_channel(c) and is_channel_id(slack_channel(c))
        else f"`{to_slack(c)}`"
        for c in channels[:SHOWN_CHANNELS]
    ]
    more = len(channels) - len(named)
    return ", ".join(named) + (f" and {more:,} more" if more else "")


def _text(mrkdwn: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}
