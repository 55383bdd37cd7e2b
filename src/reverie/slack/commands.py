"""The ``!memory`` commands in Slack (SPEC C1-C3): run one, and say what happened.

The grammar and the limits are the core's (:mod:`reverie.core.chat`), and so are the write
checks (:meth:`reverie.Reverie.chat_write`, C2); this module adds what only Slack can tell:
whether the author is in the channel now (``conversations.members``, via the directory), and
whether an inactive author is a guest, who may write in a channel, or deactivated, who may
not. Every refusal says why and that
nothing changed, about the person's message rather than the file the core checked
(:func:`about_message`); a saved write says the new revision (C3). A retried event is
answered from its first answer and runs nothing (:class:`reverie.slack.app.SlackSurface`), and
its write, if one got as far, is answered from its idempotency key (W7).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from urllib.parse import quote

from reverie.api import Reverie
from reverie.config import Settings
from reverie.core.chat import HELP, ChatCommand
from reverie.core.secrets import describe, find_credentials
from reverie.core.validation import check_control, check_invisible
from reverie.errors import RefusedInput, ReverieError
from reverie.store.tokens import links_base

from .client import SlackError
from .directory import Directory, SlackUser
from .mapping import Chat
from .text import chunks

__all__ = ["MAX_MESSAGE_CHARS", "about_message", "admin_link", "ending", "run_command"]

#: Slack cuts a message's text past 40,000 characters; longer answers go as several messages.
MAX_MESSAGE_CHARS = 12_000

_NOTHING = "Nothing changed."
#: A refusal that already says that nothing happened (the core's say it in their own words).
_SAYS_NOTHING = re.compile(r"\bnothing (?:was )?(?:changed|written|kept|read)\b", re.IGNORECASE)


def admin_link(settings: Settings, agent: str, base: str | None = None) -> str:
    """The admin page of an agent (its name one path segment, whatever it holds), at
    ``base``, else where every link to the admin page points (``store.tokens.links_base``:
    ``REVERIE_PUBLIC_URL``, else the running ``reverie serve`` of the home, as ``reverie token
    link`` says; ``reverie slack --socket`` serves no page of its own)."""
    base = links_base(settings) if base is None else base
    return f"{base.rstrip('/')}/admin/agents/{quote(agent, safe='')}"


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
    try:
        if chat.kind != "dm":
            try:
                in_chat = directory.in_channel(chat.channel, user.id)
            except SlackError as exc:
                return (
                    f"I could not confirm with Slack that you are in this channel (Slack "
                    f"answered {exc.code}), and a write needs that. {_NOTHING} Try again in a "
                    "moment."
                )
        outcome = rv.chat_write(
            chat.conversation,
            command,
            author=user.member,
            channel_id=chat.source,
            in_chat=in_chat,
            guest=user.guest,
            key=key,
        )
    except ReverieError as exc:
        return ending(about_message(exc, _said(command)) or exc.message, _NOTHING)
    if not outcome.changed:
        return f"{_NOTHING} {chat.agent}'s memory already says that (revision {outcome.revision})."
    said = f"Saved to {chat.agent}'s memory: revision {outcome.revision}."
    if any(d.get("code") == "index_over_prompt_cap" for d in outcome.diagnostics):
        said += " MEMORY.md is now longer than the part of it I read on every run."
    return said


def _said(command: ChatCommand) -> str:
    """The command's text as the person wrote it, near enough for saying where in it a
    refused character or credential is: the first line, then the body."""
    if command.action == "remember":
        first = f"!remember {command.name} - {command.description}"
    else:
        first = f"!memory update memory - {command.description}"
    return first + (f"\n{command.body}" if command.body else "")


def ending(text: str, nothing: str) -> str:
    """``text`` ending with ``nothing`` ("Nothing changed."), unless it says so already."""
    return text if _SAYS_NOTHING.search(text) else f"{text} {nothing}"


def about_message(exc: ReverieError, said: str) -> str | None:
    """A refusal of what a person sent (``said``) in words about their message, where the
    core's words are about the text it was checking: a position in the whole of MEMORY.md,
    a line of it, the field of a batch. None for any other refusal, whose own words serve.
    The stable code stays the core's; this only rewords it for the person in Slack, and never
    quotes what they sent (a credential is named by its kind, a character by its code)."""
    if exc.code == "memory_invalid_control_character":
        char = _first_refused(check_control, said)
        named = f" {_char(char)}" if char else ""
        return (
            f"Your message holds the control character{named}, which is never kept (newline "
            "and tab are fine): remove it and send the message again."
        )
    if exc.code == "memory_invisible_character":
        char = _first_refused(check_invisible, said)
        named = f" {_char(char)}" if char else ""
        return (
            f"Your message holds the invisible character{named}, which can hide or reorder "
            "text for a person while a model still reads it: remove it and send the message "
            "again."
        )
    if exc.code == "invalid_unicode":
        return (
            "Your message is not valid Unicode text (it holds half of a UTF-16 pair on its "
            "own): send it again as plain text."
        )
    if exc.code == "memory_credential_rejected":
        found = find_credentials(said)
        what = f" ({describe(found)} of your message)" if found else ""
        return (
            f"Your message looks like it holds a credential{what}. Memory is read into "
            "prompts and kept in git history: keep secrets in typed settings or a secret "
            "manager, and remember only where they live."
        )
    if exc.code == "message_too_large":
        size, limit = len(said.encode()), exc.details.get("limit")
        at_most = f"; a message may hold at most {limit:,}" if isinstance(limit, int) else ""
        return f"Your message holds {size:,} bytes{at_most}: send a shorter one."
    return None


def _first_refused(check: Callable[[str, str], None], text: str) -> str | None:
    """The character of ``text`` that the core's ``check`` (``check_control``,
    ``check_invisible``) refuses first, if it refuses one."""
    try:
        check(text, "message")
    except RefusedInput as exc:
        position = exc.details.get("position")
        if isinstance(position, int) and 0 <= position < len(text):
            return text[position]
    return None


def _char(char: str) -> str:
    """``U+0007``, or ``U+202E (RIGHT-TO-LEFT OVERRIDE)`` where Unicode names it."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")
