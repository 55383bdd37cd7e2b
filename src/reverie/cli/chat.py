"""``reverie chat AGENT``: talk to an agent from the terminal (SPEC 15, P1-P4, T1).

The conversation is a DM between the member at the terminal and the agent, recorded like any
other: memory is on, review reads it once it is closed or idle. In a terminal the answer streams
as it is written and each tool call shows as a dim line; from a pipe each line of stdin is one
turn and each answer is printed whole (tool lines go to stderr), so it can be scripted, and the
exit code is 1 when a turn got no answer. Every message the agent sends (the answer, a
``notify``, a notice) comes out of the outbox and is marked delivered once shown: a ``notify``
as soon as the tool call that sent it ends (before the answer it comes before), the rest when
the turn ends. With ``--json`` each turn is one line, its ``deliveries`` in the order sent.

Commands: ``/exit`` (or end of input), ``/new`` (a new conversation), ``/memory`` (the memory
index and its revision), ``/help``.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from typing import Any

import click
from rich.text import Text

from reverie.api import Reverie
from reverie.core.secrets import redact
from reverie.errors import ReverieError
from reverie.llm.chat import ChatProvider
from reverie.runtime.run import TurnEvent, TurnResult
from reverie.store.conversations import Conversation

from ._contract import Options, app, as_member_option, console, open_home, pass_opts

HELP = "/exit ends the conversation, /new starts another, /memory shows the memory index."


@app.command("chat")
@click.argument("agent")
@click.option("--conversation", "conversation_id", help="Continue (or start) this conversation.")
@as_member_option("Write as this member (default: the workspace's owner).")
@pass_opts
def chat(opts: Options, agent: str, conversation_id: str | None, member: str | None) -> None:
    """Talk to AGENT in the terminal, or one turn per line from a pipe.

    Needs a model: REVERIE_MODEL=openai:NAME (OPENAI_BASE_URL for a local server) or
    anthropic:NAME.
    """
    with open_home(opts) as rv:
        name = rv.agent(agent).name
        provider = rv.chat_provider(name)
        # A member named with --as speaks with their rights: not at all when inactive.
        who = rv.as_member(member).member.name if member else rv.ensure_owner().name
        channel = "terminal:" + (re.sub(r"[^A-Za-z0-9._@+-]+", "-", who).strip("-") or "owner")
        rv.ensure_channel(channel, "dm", name=f"terminal of {who}")
        session = _Session(rv, provider, name, who, channel, opts.json)
        session.start(conversation_id)
        session.loop()
    if session.failed and not session.tty:
        # From a pipe a script reads the exit code: a turn without an answer is a failure.
        failed = ", ".join(f"{n} {why}" for why, n in session.failed.items())
        session._say(f"{session.failed.total()} of {session.turns} turns got no answer ({failed}).")
        raise click.exceptions.Exit(1)


class _Session:
    def __init__(
        self,
        rv: Reverie,
        provider: ChatProvider,
        agent: str,
        author: str,
        channel: str,
        as_json: bool,
    ) -> None:
        self.rv = rv
        self.provider = provider
        self.agent = agent
        self.author = author
        self.channel = channel
        self.as_json = as_json
        self.tty = sys.stdin.isatty() and not as_json
        self.out = console()
        # Tool lines and notices go where they do not mix with scripted answers.
        self.side = self.out if self.tty else console(stderr=True)
        self.conv: Conversation | None = None
        self.streamed = False
        self.mid_line = False
        self.turns = 0
        #: what the current turn has shown, in the order it was sent (``--json``'s deliveries)
        self.sent: list[dict[str, Any]] = []
        #: turns that ended without an answer, by why (an outcome or an error code)
        self.failed: Counter[str] = Counter()

    def start(self, conversation_id: str | None) -> None:
        if conversation_id is not None:
            try:
                conv = self.rv.conversation(conversation_id)
            except ReverieError:
                conv = None
            if conv is not None:
                if conv.agent_id != self.rv.agent(self.agent).id or conv.deleted:
                    raise click.UsageError(
                        f"Conversation {conversation_id} is not a conversation of {self.agent}."
                    )
                self.conv = conv
                self._say(f"Continuing conversation {conv.id}.")
                return
        self.conv = self.rv.create_conversation(
            self.agent, self.channel, conversation_id=conversation_id
        )
        self._say(f"Conversation {self.conv.id} with {self.agent}. {HELP}")

    def loop(self) -> None:
        try:
            while True:
                line = self._read()
                if line is None or line.strip() == "/exit":
                    break
                text = line.strip()
                if not text:
                    continue
                if text == "/new":
                    self._close()
                    self.start(None)
                elif text == "/memory":
                    self._memory()
                elif text in ("/help", "/?"):
                    self._say(HELP)
                elif text.startswith("/") and " " not in text:
                    self._say(f"Unknown command {text}. {HELP}")
                else:
                    self._turn(text)
        finally:
            self._close()

    def _read(self) -> str | None:
        try:
            if self.tty:
                return self.out.input(Text("you> ", style="bold"))
            line = sys.stdin.readline()
            return line if line else None
        except EOFError:
            return None

    def _turn(self, text: str) -> None:
        assert self.conv is not None
        self.streamed = False
        self.turns += 1
        self.sent = []
        try:
            result = self.rv.turn(
                self.conv.id,
                text,
                author=self.author,
                provider=self.provider,
                on_event=self._event,
                stream=self.tty,
            )
        except ReverieError as exc:
            self._end_line()
            self.failed[exc.code] += 1
            if self.as_json:  # one object per line said, a refused one too
                said: dict[str, Any] = {"error": exc.to_dict()}
                if self.sent:  # notifies sent before the turn failed
                    said["deliveries"] = self.sent
                sys.stdout.write(json.dumps(said, ensure_ascii=False) + "\n")
                sys.stdout.flush()
            else:
                self.side.print(f"error ({exc.code}): {exc.message}", style="red")
            return
        self._end_line()
        self._deliver(result)
        if result.outcome != "delivered":
            self.failed[result.outcome] += 1

    def _event(self, event: TurnEvent) -> None:
        if event.kind == "text":
            sys.stdout.write(event.text)
            sys.stdout.flush()
            self.streamed = True
            self.mid_line = not event.text.endswith("\n")
        elif event.kind == "tool_call" and not self.as_json:
            self._end_line()
            # The model's arguments as the tool log keeps them: a credential it passed (and
            # the tool refused) is blanked before the line is cut, never shown in part.
            args = redact(json.dumps(event.data.get("arguments") or {}, ensure_ascii=False))
            if len(args) > 120:
                args = args[:117] + "..."
            self.side.print(f"  · {event.tool} {args}", style="dim")
        elif event.kind == "tool_result":
            if not self.as_json and not event.data.get("ok"):
                self.side.print(f"    refused: {event.data.get('code')}", style="dim")
            elif event.tool == "notify" and event.data.get("ok"):
                # Sent now, so shown now: before the answer, which the model writes after.
                self._show(kinds=("notify",))

    def _show(self, kinds: tuple[str, ...] | None = None) -> None:
        """Show what waits in the outbox for this chat (only ``kinds``, when given), oldest
        first, and mark each delivered."""
        assert self.conv is not None
        for d in self.rv.pending_deliveries(conversation_id=self.conv.id):
            if d.channel_id != self.channel or (kinds is not None and d.kind not in kinds):
                continue
            if self.rv.claim_delivery(d.id) is None:
                continue
            if self.as_json:
                pass
            elif d.kind == "answer":
                if not (self.tty and self.streamed):
                    self.out.print(d.text)
            elif d.kind == "notify":
                self._end_line()
                self.side.print(f"[notify] {d.text}", style="cyan")
            else:
                if self.tty and self.streamed:
                    self.side.print("(that answer was withdrawn)", style="yellow")
                self.side.print(d.text, style="yellow")
            self.rv.mark_delivered(d.id, receipt="terminal")
            self.sent.append({"id": d.id, "kind": d.kind, "text": d.text})

    def _deliver(self, result: TurnResult) -> None:
        """Show the rest of what the turn put in the outbox for this chat (its answer or
        notice), and mark it delivered."""
        assert self.conv is not None
        self._show()
        if self.as_json:
            payload = {
                "conversation": self.conv.id,
                "turn": result.turn.id,
                "outcome": result.outcome,
                "answer": result.answer,
                "notice": result.notice,
                "memory_revision": result.turn.memory_revision,
                "soul_version": result.turn.soul_version,
                "tools": result.turn.tools,
                "deliveries": self.sent,
            }
            sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
            sys.stdout.flush()
        elif self.tty:
            self.out.print()

    def _memory(self) -> None:
        assert self.conv is not None
        try:
            f = self.rv.memory_read(self.agent, from_conversation=self.conv.id)
        except ReverieError as exc:
            self._say(exc.message)
            return
        if self.as_json:
            sys.stdout.write(json.dumps({"revision": f.revision, "text": f.text}) + "\n")
            return
        self.out.print(f"MEMORY.md at revision {f.revision}:", style="bold")
        self.out.print(f.text)

    def _close(self) -> None:
        if self.conv is not None:
            # A closed conversation is complete: review reads it on its next run.
            self.rv.close_conversation(self.conv.id)
            self.conv = None

    def _say(self, text: str) -> None:
        if not self.as_json:
            self.side.print(text, style="dim")

    def _end_line(self) -> None:
        if self.mid_line:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.mid_line = False
