"""Chat commands (SPEC C1, W3): their grammar, their limits, and what a saved one does to
``MEMORY.md``. Pure functions; the facade applies them (:meth:`reverie.Reverie.chat_write`,
with the write checks of C2) and a chat surface (Slack) parses messages and answers with them.

::

    !memory                                 whether the agent has a memory, and its revision
    !memory help                            the commands
    !memory show memory                     the whole body of MEMORY.md
    !remember <name> - <description>        appends a "## <name>" section: the description,
    <body: the lines after the first>       then the body
    !memory update memory - <description>   replaces the whole body: the description, then
    <body: the lines after the first>       the body
    !forget memory                          answers that clearing is done in the admin page

Command words are matched without regard to case; the text a person gives is kept as written.
A message that does not start with ``!memory``, ``!remember`` or ``!forget`` is no command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reverie.config import Settings
from reverie.errors import RefusedInput

from .markdown import canonical_text, sections

__all__ = [
    "ACTIONS",
    "HELP",
    "ChatCommand",
    "check_limits",
    "parse_command",
    "remember_body",
    "update_body",
]

#: What a command does; ``invalid`` is a malformed command (its ``problem`` says how).
ACTIONS = ("status", "help", "show", "remember", "update", "forget", "invalid")

HELP = """\
Memory commands:
• `!memory`: whether I have a memory, and its revision
• `!memory help`: this help
• `!memory show memory`: the whole of MEMORY.md
• `!remember <name> - <description>`: add a `## <name>` section; lines after the first are its body
• `!memory update memory - <first line>`: replace the whole of MEMORY.md with that line and the \
lines after it
• `!forget memory`: clearing memory is done in the admin page
Writing needs an active grant for me in the channel and your membership of it (in a DM: an \
active workspace member). Memory is off in group chats."""

_COMMAND = re.compile(r"^!(memory|remember|forget)(?=\s|$)", re.IGNORECASE)
_REMEMBER = re.compile(r"^!remember\s+(?P<name>.*?)\s+-(?:\s+(?P<description>.*))?$", re.I)
_UPDATE = re.compile(r"^!memory\s+update\s+memory\s+-(?:\s+(?P<description>.*))?$", re.I)


@dataclass(frozen=True)
class ChatCommand:
    """One parsed command."""

    action: str
    #: ``!remember``: the section's name.
    name: str = ""
    #: The text after `` - `` on the first line.
    description: str = ""
    #: The lines after the first.
    body: str = ""
    #: For ``invalid``: what is wrong and the form that works.
    problem: str = ""

    @property
    def writes(self) -> bool:
        """Whether the command changes memory (C2's checks apply)."""
        return self.action in ("remember", "update")


def parse_command(text: str) -> ChatCommand | None:
    """The command ``text`` holds, or None when it is no command (an ordinary message)."""
    stripped = text.strip()
    found = _COMMAND.match(stripped)
    if found is None:
        return None
    first, _, rest = stripped.partition("\n")
    first = first.strip()
    body = rest.strip("\n").rstrip()
    words = first.lower().split()
    word = found.group(1).lower()
    if word == "forget":
        if words == ["!forget", "memory"]:
            return ChatCommand("forget")
        return _invalid("To clear memory, the command is `!forget memory`.")
    if word == "remember":
        m = _REMEMBER.match(first)
        name = (m.group("name") or "").strip() if m else ""
        description = ((m.group("description") or "") if m else "").strip()
        if not name or not description or "#" in name[:1]:
            return _invalid(
                "To remember something, write `!remember <name> - <description>`, with the "
                "body (if any) on the lines after it."
            )
        return ChatCommand("remember", name=name, description=description, body=body)
    if words == ["!memory"] and not body:
        return ChatCommand("status")
    if words == ["!memory", "help"]:
        return ChatCommand("help")
    if words == ["!memory", "show", "memory"]:
        return ChatCommand("show")
    if words[:3] == ["!memory", "update", "memory"]:
        m = _UPDATE.match(first)
        description = ((m.group("description") or "") if m else "").strip()
        if not description:
            return _invalid(
                "To replace the whole memory, write `!memory update memory - <first line>` "
                "with the rest of the new MEMORY.md on the lines after it."
            )
        return ChatCommand("update", description=description, body=body)
    return _invalid(f"I don't know the command `{_named(first)}`.")


#: A word of an unknown command that its answer may repeat: a short plain word ("stash").
_PLAIN_WORD = re.compile(r"[A-Za-z]{1,20}")


def _named(first: str) -> str:
    """An unknown command as its answer names it: the command word and the plain words after
    it, ``...`` for the rest. The answer is posted back to the chat and kept in the outbox, so
    it never repeats what a person typed beyond that: a token pasted after ``!memory`` is not
    echoed (nor stored again) to say that the command is unknown."""
    words = first.split()
    shown = words[:1]
    for word in words[1:4]:
        if not _PLAIN_WORD.fullmatch(word):
            break
        shown.append(word)
    return " ".join(shown) + (" ..." if len(shown) < len(words) else "")


def _invalid(problem: str) -> ChatCommand:
    return ChatCommand("invalid", problem=problem)


def check_limits(command: ChatCommand, settings: Settings) -> None:
    """W3: a chat command's description (and a section's name) at most
    ``max_chat_description_bytes``, its body at most ``max_chat_body_bytes``.

    Raises:
        RefusedInput: ``chat_command_too_large``.
    """
    for what, text, limit in (
        ("name", command.name, settings.max_chat_description_bytes),
        ("description", command.description, settings.max_chat_description_bytes),
        ("body", command.body, settings.max_chat_body_bytes),
    ):
        size = len(text.encode())
        if size > limit:
            raise RefusedInput(
                f"The command's {what} holds {size:,} bytes; a chat command's {what} may hold "
                f"at most {limit:,}. Shorten it, or use the admin page for longer text. "
                "Nothing changed.",
                code="chat_command_too_large",
                field=what,
                limit=limit,
                size=size,
            )


def _block(command: ChatCommand) -> str:
    return command.description + (f"\n\n{command.body}" if command.body else "")


def remember_body(current: str, command: ChatCommand) -> str:
    """``MEMORY.md`` after ``!remember``: the description and body appended as a
    ``## <name>`` section, or at the end of the section of that name when there is one."""
    if command.name not in current:
        # No heading can name it: the section goes at the end, without reading the others.
        kept = current.rstrip("\n") if current.strip() else ""
        return canonical_text(
            (kept + "\n\n" if kept else "") + f"## {command.name}\n\n" + _block(command)
        )
    lines = current.rstrip("\n").split("\n") if current.strip() else []
    block = _block(command).split("\n")
    existing = [s for s in sections("\n".join(lines)) if s[0] == command.name]
    if existing:
        _, _, end = existing[0]
        while end > 0 and not lines[end - 1].strip():
            end -= 1
        lines[end:end] = ["", *block]
    else:
        lines += ([""] if lines else []) + [f"## {command.name}", "", *block]
    return canonical_text("\n".join(lines))


def update_body(command: ChatCommand) -> str:
    """``MEMORY.md`` after ``!memory update memory``: the description, then the body."""
    return canonical_text(_block(command))
