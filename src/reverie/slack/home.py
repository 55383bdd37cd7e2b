"""The App Home tab: per agent, whether it has a memory and its revision, and a link to its
admin page. Published with ``views.publish`` when a person opens the tab."""

from __future__ import annotations

from typing import Any

from reverie.api import Reverie

from .commands import admin_link
from .text import to_slack

__all__ = ["home_view"]


def home_view(rv: Reverie, dm_agent: str | None) -> dict[str, Any]:
    """The Home tab's view: one section per agent (archived ones last)."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Reverie: agents and memory"}},
    ]
    agents = sorted(rv.agents(), key=lambda a: (a.archived, a.name))
    if not agents:
        blocks.append(_text("No agents yet: create one with `reverie agent create NAME`."))
    for agent in agents:
        current = rv.memory_read(agent.name)
        has = (
            f"memory at revision {current.revision}"
            if current.revision > 0
            else "no memory yet (revision 0)"
        )
        granted = sum(1 for g in rv.grants(agent.name) if g.status == "active")
        notes = [has, f"{granted} granted channel{'s' * (granted != 1)}"]
        if agent.name == dm_agent:
            notes.append("answers DMs")
        if agent.archived:
            notes.append("archived")
        link = admin_link(rv.settings, agent.name)
        blocks.append(
            _text(f"*{to_slack(agent.name)}*: {', '.join(notes)}\n<{link}|Open in the admin page>")
        )
    if dm_agent is None and agents:
        blocks.append(
            _text("No agent answers DMs: set REVERIE_SLACK_AGENT to the one that should.")
        )
    return {"type": "home", "blocks": blocks}


def _text(mrkdwn: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}
