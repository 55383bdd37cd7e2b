"""``reverie conversations import`` and ``context ...``: conversations and their history."""

from __future__ import annotations

import re
import shlex
from typing import Any

import click
from rich.progress import Progress
from rich.table import Table

from reverie.api import Reverie
from reverie.store.conversations import ImportSummary
from reverie.store.turns import TurnRecord

from ._contract import (
    NATURAL,
    Interrupted,
    Options,
    app,
    console,
    emit,
    limit_range,
    open_home,
    out,
    pass_opts,
    plural,
    read_input,
    stamp,
)


@app.group("conversations")
def conversations_group() -> None:
    """Import conversations."""


@app.group("context")
def context_group() -> None:
    """List, read and search an agent's memory-on conversations."""


#: Files with more lines than this show a progress bar (on stderr, never with --json).
_PROGRESS_LINES = 2000


@conversations_group.command("import")
@click.argument("file")
@pass_opts
def conversations_import(opts: Options, file: str) -> None:
    """Import FILE (JSON Lines, or - for stdin), all or nothing; again adds nothing.

    One message per line: {"conversation": ID, "agent": NAME, "channel": {"kind":
    "dm|channel|group|web|automation", "id": ...}, "author": MEMBER, "role":
    "user|assistant|tool", "text": ..., "time": ISO-8601}; optional "id" (a stable message
    id) and "title". {"conversation": ID, "closed": true} closes a conversation. Agents,
    channels and conversations are created as needed.
    """
    seen = _Seen()
    summary: ImportSummary | None = None
    try:
        lines = _read_lines(file)
        with open_home(opts) as r:
            summary = _import(r, lines, seen, bar=not opts.json and len(lines) > _PROGRESS_LINES)
        finished = summary
        # ``skipped`` as text mode reports it (the summary's own dict, which HTTP answers with,
        # leaves it out).
        emit(
            opts,
            {**finished.to_dict(), "skipped": finished.skipped},
            lambda: out.print(
                f"Imported {plural(finished.messages, 'message')} into "
                f"{plural(finished.conversations, 'conversation')}; {finished.closed} closed."
                + (f" {finished.skipped} already imported, skipped." if finished.skipped else "")
            ),
        )
    except KeyboardInterrupt:
        raise Interrupted(_kept(summary, seen)) from None


def _import(r: Reverie, lines: list[str], seen: _Seen, *, bar: bool) -> ImportSummary:
    """Import, following how far it went in ``seen`` (with a progress bar on stderr)."""
    if not bar:
        return r.import_conversations(lines, progress=seen.step)
    with Progress(console=console(stderr=True), transient=True) as shown:
        task = shown.add_task("Importing", total=None)

        def step(done: int, total: int) -> None:
            seen.step(done, total)
            if done % 250 == 0 or done == total:
                shown.update(task, completed=done, total=total)

        return r.import_conversations(lines, progress=step)


class _Seen:
    """How far an import went: the lines written inside its transaction, of how many."""

    def __init__(self) -> None:
        self.done = 0
        self.total: int | None = None

    def step(self, done: int, total: int) -> None:
        self.done, self.total = done, total


#: Why running an interrupted import again is safe (SPEC 15: a message already there is
#: skipped, by its ``id`` or its time, role, author and text; closing twice closes once).
_AGAIN = "Running it again is safe: it adds what is missing and skips what is already there."


def _kept(summary: ImportSummary | None, seen: _Seen) -> str:
    """What an import interrupted by Ctrl-C kept. Its lines go in one transaction, with the
    agents, channels and conversations they create, so it kept all of them or none; the
    memory repositories of new agents, made after the commit, are otherwise made on first
    use."""
    if summary is not None:
        return (
            f"the import had finished: {plural(summary.messages, 'message')} added to "
            f"{plural(summary.conversations, 'conversation')}, {summary.closed} closed. "
            "Nothing is left to do."
        )
    if seen.total is None or seen.done < seen.total:
        where = (
            f", after {seen.done:,} of its {seen.total:,} lines" if seen.total is not None else ""
        )
        return (
            "nothing was imported: an import is all or nothing, and this one stopped before "
            f"its end{where}. {_AGAIN}"
        )
    # Every line was written: the interrupt came as the transaction committed, or after.
    return (
        f"every line had been written and the import was ending, so either all "
        f"{seen.total:,} lines were imported or none was (an import is all or nothing). "
        f"{_AGAIN}"
    )


def _read_lines(file: str) -> list[str]:
    raw, _name = read_input(file)
    # Only "\n" ends a JSON line: str.splitlines would also split at U+2028 inside a string.
    return [line.removesuffix("\r") for line in raw.split("\n")]


@context_group.command("sessions")
@click.argument("agent")
@click.option(
    "--from",
    "from_conversation",
    help="The conversation asking: left out, and refused if memory is off there.",
)
@click.option(
    "--limit", type=limit_range(200), default=50, show_default=True, help="At most, 1 to 200."
)
@pass_opts
def context_sessions(opts: Options, agent: str, from_conversation: str | None, limit: int) -> None:
    """The agent's earlier memory-on conversations, newest first."""
    with open_home(opts) as r:
        sessions = r.context_sessions(agent, from_conversation, limit)

    def human() -> None:
        table = Table("id", "title", "updated", "messages", "chars")
        for s in sessions:
            table.add_row(s.id, s.title, stamp(s.updated_at), str(s.messages), str(s.chars))
        out.print(table if sessions else "No memory-on conversations.")

    emit(
        opts,
        {
            "sessions": [
                {
                    "id": s.id,
                    "title": s.title,
                    "created": stamp(s.created_at),
                    "updated": stamp(s.updated_at),
                    "messages": s.messages,
                    "chars": s.chars,
                }
                for s in sessions
            ]
        },
        human,
    )


#: A range as an entry's source and a history hit name it: ``conv-7#3-5``.
_CITED = re.compile(r"(.+)#(\d{1,9})-(\d{1,9})")


@context_group.command("read")
@click.argument("session")
@click.option("--start", type=NATURAL, help="First position (0-based, included; default 0).")
@click.option("--end", type=NATURAL, help="Position to stop before (excluded; default: the end).")
@click.option("--include-tools", is_flag=True, help="Show tool logs too.")
@click.option("--cursor", help="Continue where the previous page stopped (its next_cursor).")
@click.option("--agent", help="Read as this agent (default: the conversation's own).")
@click.option(
    "--max-chars",
    type=click.IntRange(100, 100_000),
    default=8000,
    show_default=True,
    help="Characters per page, 100 to 100,000.",
)
@pass_opts
def context_read(
    opts: Options,
    session: str,
    start: int | None,
    end: int | None,
    include_tools: bool,
    cursor: str | None,
    agent: str | None,
    max_chars: int,
) -> None:
    """Messages START <= p < END of a memory-on conversation, a page at a time. SESSION may
    be a range as memory and search cite it (CONV#START-END)."""
    cited = _CITED.fullmatch(session)
    if cited and start is None and end is None:  # ids hold no '#': a citation is meant
        session, start, end = cited[1], int(cited[2]), int(cited[3])
    with open_home(opts) as r:
        page = r.context_read(
            agent,
            session,
            start,
            end,
            include_tools=include_tools,
            cursor=cursor,
            max_chars=max_chars,
        )
        # Why the agent said what it said: the audit of each turn answered in this range.
        turns = r.turn_log(page.conversation)
    answered = {t.answer_position: t for t in turns if t.answer_position is not None}
    asked = {t.request_position: t for t in turns if t.answer_position is None}

    def human() -> None:
        for m in page.messages:
            who = f" {m.author}" if m.author else ""
            cont = f" (from character {m.offset})" if m.offset else ""
            out.print(f"[{m.position}] {m.role}{who}, {stamp(m.time)}{cont}")
            out.print(m.text + (" …" if m.continues else ""))
            turn = answered.get(m.position) or asked.get(m.position)
            if turn is not None and not m.offset:
                out.print(f"  ({_audit_line(turn)})", style="dim")
        if page.tools_omitted:
            out.print(f"({page.tools_omitted} tool messages left out: --include-tools)")
        if page.next_cursor:
            again = ["reverie", "context", "read", session, "--cursor", page.next_cursor]
            if opts.home is not None:
                again += ["--home", str(opts.home)]
            if agent is not None:
                again += ["--agent", agent]
            if max_chars != 8000:
                again += ["--max-chars", str(max_chars)]
            out.print(f"More: {shlex.join(again)}")

    emit(
        opts,
        {
            "conversation": page.conversation,
            "start": page.start,
            "end": page.end,
            "messages": [
                {
                    "position": m.position,
                    "role": m.role,
                    "author": m.author,
                    "text": m.text,
                    "time": stamp(m.time),
                    "channel": m.channel,
                    "offset": m.offset,
                    "continues": m.continues,
                }
                for m in page.messages
            ],
            "next_cursor": page.next_cursor,
            "tools_omitted": page.tools_omitted,
            "turns": [
                _turn(t)
                for t in turns
                if page.start <= (t.answer_position or t.request_position) < page.end
            ],
        },
        human,
    )


def _audit_line(t: TurnRecord) -> str:
    memory = "no memory" if t.memory_revision is None else f"memory r{t.memory_revision}"
    intents = ", ".join(t.envelope.get("intents", [])) or "none"
    tools = ", ".join(c["name"] + ("" if c["ok"] else f" refused {c['code']}") for c in t.tools)
    return (
        f"turn {t.id}: {t.outcome}; {memory}, soul v{t.soul_version}, instructions "
        f"v{t.instructions_version}; intents: {intents}; tools: {tools or 'none'}"
    )


def _turn(t: TurnRecord) -> dict[str, Any]:
    return {
        "id": t.id,
        "outcome": t.outcome,
        "request_position": t.request_position,
        "answer_position": t.answer_position,
        "session": t.session_key,
        "memory_revision": t.memory_revision,
        "soul_version": t.soul_version,
        "instructions_version": t.instructions_version,
        "envelope": t.envelope,
        "tools": t.tools,
        "model": t.model,
        "model_calls": t.model_calls,
        "tokens_in": t.tokens_in,
        "tokens_out": t.tokens_out,
        "started": stamp(t.started_at),
        "finished": stamp(t.finished_at) if t.finished_at else None,
    }


@context_group.command("search")
@click.argument("agent")
@click.argument("query")
@click.option(
    "--limit", type=limit_range(20), default=8, show_default=True, help="Results, 1 to 20."
)
@pass_opts
def context_search(opts: Options, agent: str, query: str, limit: int) -> None:
    """Full-text search of the agent's memory-on conversations, best first."""
    with open_home(opts) as r:
        hits = r.context_search(agent, query, limit)

    def human() -> None:
        if not hits:
            out.print("No match.")
        for rank, h in enumerate(hits, start=1):  # the rank, as memory search shows it
            out.print(f"{rank}. {h.conversation}#{h.start}-{h.end}  {h.excerpt}")

    emit(
        opts,
        {
            "results": [
                {
                    "conversation": h.conversation,
                    "start": h.start,
                    "end": h.end,
                    "excerpt": h.excerpt,
                    "score": h.score,
                }
                for h in hits
            ]
        },
        human,
    )
