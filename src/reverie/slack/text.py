"""Text between Slack's message format and plain Markdown.

Slack escapes ``&``, ``<`` and ``>`` in message text and marks up mentions, channels and links
in angle brackets. What a person wrote is read back as plain text (a leading mention of the
bot removed, links as Markdown, the escapes undone) before it becomes a command, a turn or a
memory; what the agent sends is escaped, so that no answer can ping ``@channel`` or forge a
mention.
"""

from __future__ import annotations

import re

__all__ = ["chunks", "from_slack", "mentions", "to_slack"]

_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")
_CHANNEL = re.compile(r"<#([A-Z0-9]+)(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<!([a-z]+)(?:\|([^>]*))?>")


def mentions(text: str, user: str | None) -> bool:
    """Whether ``text`` mentions ``user`` (the bot)."""
    return bool(user) and f"<@{user}>" in text


def from_slack(text: str, bot_user: str | None = None) -> str:
    """A Slack message's text as plain text: a leading ``<@bot>`` dropped, ``<url|label>`` as
    ``[label](url)``, ``<#C1|name>`` as ``#name``, ``&amp;``/``&lt;``/``&gt;`` undone."""
    text = text.strip()
    if bot_user:
        text = re.sub(rf"^<@{re.escape(bot_user)}>[\s:,]*", "", text)
    text = _LINK.sub(lambda m: f"[{m.group(2)}]({m.group(1)})" if m.group(2) else m.group(1), text)
    text = _CHANNEL.sub(lambda m: f"#{m.group(2) or m.group(1)}", text)
    text = _SPECIAL.sub(lambda m: f"@{m.group(2) or m.group(1)}", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def to_slack(text: str) -> str:
    """Plain text escaped for a Slack message (nothing in it is markup)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def chunks(text: str, limit: int) -> list[str]:
    """``text`` cut at line breaks into pieces of at most ``limit`` characters (a longer line
    is cut where it must)."""
    out: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > limit:
            if current:
                out.append(current)
                current = ""
            out.append(line[:limit])
            line = line[limit:]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            out.append(current)
            current = line
        else:
            current = candidate
    if current or not out:
        out.append(current)
    return out
