"""The ``!memory`` commands in Slack (SPEC C1-C3): run one, and say what happened.

The grammar and the limits are the core's (:mod:`reverie.core.chat`), and so are the write
checks (:meth:`reverie.Reverie.chat_write`, C2); this module adds what only Slack can tell:
whether the author is in the channel now (``conversations.members``, via the directory). Every
refusal says why and that nothing changed; a saved write says the new revision (C3); a
retried event is answered from its idempotency key and writes nothing (W7).
"""

from __future__ import annotations

from reverie.api import Reverie
from reverie.config import Settings
from reverie.core.chat import HELP, ChatCommand
from reverie.errors import ReverieError

from .client import SlackError
from .directory import Directory, SlackUser
from .mapping import Chat
from .text import chunks

__all__ = ["MAX_MESSAGE_CHARS", "admin_link", "run_command"]

#: Slack cuts a message's text past 40,000 characters; longer answers go as several messages.
MAX_MESSAGE_CHARS = 12_000

_NOTHING = "Nothing changed."


def admin_link(settings: Settings, agent: str) -> str:
    """The admin page of an agent."""
    return f"{settings.public_url.rstrip('/')}/admin/agents/{agent}"


def run_command(
    rv: Reverie,
    directory: Directory,
    chat: Chat,
    command: ChatCommand,
    user: SlackUser,
    *,
    key: str,
) -> list[str]:
    """Run ``command``, said by ``user`` in ``chat``; the answer, as one or more messages."""
    agent = chat.agent
    if command.action == "help":
        return [HELP]
    if command.action == "invalid":
        return [f"{command.problem} {_NOTHING} `!memory help` lists the commands."]
    if command.action == "forget":
        return [
            f"Clearing {agent}'s memory is done in the admin page: "
            f"{admin_link(rv.settings, agent)} . {_NOTHING}"
        ]
    # (a write checks the conversation's memory mode itself, on the state it writes from)
    if command.action == "status":
        return [_status(rv, agent, rv.conversation(chat.conversation).memory_on)]
    if command.action == "show":
        if not rv.conversation(chat.conversation).memory_on:
            return [
                "Memory is off in this conversation (it is, or once was, a group chat), so I "
                "don't show it here. Ask me in a DM. Nothing was shown."
            ]
        current = rv.memory_read(agent)
        head = f"{agent}'s MEMORY.md at revision {current.revision}:"
        pieces = chunks(current.text.rstrip("\n") or "(empty)", MAX_MESSAGE_CHARS)
        return [head] + [f"```\n{p}\n```" for p in pieces]
    return [_write(rv, directory, chat, command, user, key=key)]


def _status(rv: Reverie, agent: str, memory_on: bool) -> str:
    current = rv.memory_read(agent)
    topics = [f for f in rv.memory_files(agent) if f != "MEMORY.md"]
    if current.revision == 0:
        said = f"{agent} has no memory yet (revision 0: the empty sections it starts with)."
    else:
        said = (
            f"{agent} has a memory at revision {current.revision}: MEMORY.md holds "
            f"{len(current.text):,} characters"
            + (f", with {len(topics)} topic file{'s' * (len(topics) != 1)}." if topics else ".")
        )
    if not memory_on:
        said += " Memory is off in this conversation (a group chat): I don't read or use it here."
    return said


def _write(
    rv: Reverie,
    directory: Directory,
    chat: Chat,
    command: ChatCommand,
    user: SlackUser,
    *,
    key: str,
) -> str:
    in_chat = True
    if chat.kind != "dm":
        try:
            in_chat = directory.in_channel(chat.channel, user.id)
        except SlackError as exc:
            return (
                f"I could not confirm with Slack that you are in this channel (Slack answered "
                f"{exc.code}), and a write needs that. {_NOTHING} Try again in a moment."
            )
    try:
        outcome = rv.chat_write(
            chat.conversation,
            command,
            author=user.member,
            channel_id=chat.source,
            in_chat=in_chat,
            key=key,
        )
    except ReverieError as exc:
        return exc.message if _NOTHING in exc.message else f"{exc.message} {_NOTHING}"
    if not outcome.changed:
        return f"{_NOTHING} {chat.agent}'s memory already says that (revision {outcome.revision})."
    said = f"Saved to {chat.agent}'s memory: revision {outcome.revision}."
    if any(d.get("code") == "index_over_prompt_cap" for d in outcome.diagnostics):
        said += " MEMORY.md is now longer than the part of it I read on every run."
    return said
