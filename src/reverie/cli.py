"""The ``reverie`` command line (SPEC 15): parse, call the facade, format the answer.

``--home`` and ``--json`` are accepted before and after the command name; they are moved to
the front before parsing. With ``--json`` every answer, refusals included, is one JSON object
on stdout. Exit codes: 0 done, 2 usage, 3 refused input or permission, 4 revision conflict,
5 not found, 1 storage fault.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from .api import Reverie
from .errors import RefusedInput, ReverieError

__all__ = ["app", "main"]


@dataclass
class Options:
    """The global options, as the root group parsed them."""

    home: Path | None = None
    json: bool = False


pass_opts = click.make_pass_decorator(Options)
out = Console(soft_wrap=True, highlight=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=click.Path(path_type=Path),
    help="Data directory (default: $REVERIE_HOME, else ./reverie-data).",
)
@click.option("--json", "json_out", is_flag=True, help="Machine-readable output on stdout.")
@click.pass_context
def app(ctx: click.Context, home: Path | None, json_out: bool) -> None:
    """Reverie: durable, revisioned memory for chat agents.

    --home and --json may stand before or after the command name.
    """
    ctx.obj = Options(home=home, json=json_out)


@app.group("agent")
def agent_group() -> None:
    """Create and list agents."""


@app.group("memory")
def memory_group() -> None:
    """Read, write, search and audit an agent's memory."""


def _open(opts: Options, create: bool = False) -> Reverie:
    return Reverie(opts.home, create=create)


def _emit(opts: Options, payload: dict[str, Any], human: Callable[[], object]) -> None:
    if opts.json:
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    else:
        human()


def _time(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


# init and agents


@app.command()
@pass_opts
def init(opts: Options) -> None:
    """Create the data directory (safe to run again)."""
    with _open(opts, create=True) as r:
        home = str(r.home)
    _emit(opts, {"home": home}, lambda: out.print(f"Reverie home ready at {home}"))


@agent_group.command("create")
@click.argument("name")
@click.option("--creator", help="Member who created the agent.")
@click.option(
    "--edit-policy",
    type=click.Choice(["editors", "all_workspace_members"]),
    default="editors",
    show_default=True,
    help="Who may edit it: owners, admins and the creator; or every member.",
)
@click.option(
    "--memory-writers",
    type=click.Choice(["review_only", "conversations"]),
    default="review_only",
    show_default=True,
    help="review_only: conversations only read memory and review writes it.",
)
@pass_opts
def agent_create(
    opts: Options, name: str, creator: str | None, edit_policy: str, memory_writers: str
) -> None:
    """Create an agent; its memory starts at revision 0."""
    with _open(opts) as r:
        a = r.create_agent(
            name, creator=creator, edit_policy=edit_policy, memory_writers=memory_writers
        )
    _emit(opts, {"agent": _agent(a)}, lambda: out.print(f"Created agent {a.name} ({a.id})"))


def _agent(a: Any) -> dict[str, Any]:
    return {
        "id": a.id,
        "name": a.name,
        "creator": a.creator,
        "edit_policy": a.edit_policy,
        "memory_writers": a.memory_writers,
        "archived": a.archived,
    }


@agent_group.command("list")
@pass_opts
def agent_list(opts: Options) -> None:
    """List the agents."""
    with _open(opts) as r:
        agents = r.agents()

    def human() -> None:
        table = Table("name", "id", "edit policy", "memory writers")
        for a in agents:
            table.add_row(a.name, a.id, a.edit_policy, a.memory_writers)
        out.print(table if agents else "No agents yet: `reverie agent create NAME`.")

    _emit(opts, {"agents": [_agent(a) for a in agents]}, human)


# memory


@memory_group.command("show")
@click.argument("agent")
@click.option("--source", help="MEMORY.md (default) or memory/<slug>.md.")
@click.option("--revision", type=int, help="A past revision.")
@pass_opts
def memory_show(opts: Options, agent: str, source: str | None, revision: int | None) -> None:
    """Print a memory file, at the current or a past revision."""
    with _open(opts) as r:
        f = r.memory_read(agent, source, revision)
    _emit(
        opts,
        {"revision": f.revision, "source": f.source, "text": f.text},
        lambda: sys.stdout.write(f.text),
    )


@memory_group.command("apply")
@click.argument("agent")
@click.argument("file")
@click.option(
    "--expected-revision", type=int, help="Refuse unless the memory is still at this revision."
)
@click.option("--key", help="Idempotency key: the same key again applies nothing twice.")
@pass_opts
def memory_apply(
    opts: Options, agent: str, file: str, expected_revision: int | None, key: str | None
) -> None:
    """Apply the batch in FILE (JSON, or - for stdin) as one revision."""
    request = _read_batch(file)
    with _open(opts) as r:
        o = r.memory_apply(
            agent, request, writer="cli", expected_revision=expected_revision, key=key
        )

    def human() -> None:
        state = "changed" if o.changed else "unchanged"
        if o.replayed:
            state = "already applied (same key)"
        touched = f" ({', '.join(o.paths)})" if o.paths else ""
        out.print(f"Revision {o.revision}: {state}{touched}", markup=False)
        for d in o.diagnostics:
            out.print(f"note: {d['message']}", markup=False)

    _emit(opts, o.to_dict(), human)


def _read_batch(file: str) -> Any:
    try:
        raw = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise click.UsageError(f"Cannot read {file}: {exc.strerror}.") from None
    except UnicodeDecodeError:
        raise RefusedInput(f"{file} is not UTF-8 text.", code="invalid_operation") from None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise RefusedInput(
            f"{file} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}).",
            code="invalid_operation",
        ) from None


@memory_group.command("search")
@click.argument("agent")
@click.argument("query")
@click.option("--limit", type=int, default=8, show_default=True, help="Results, 1 to 20.")
@pass_opts
def memory_search(opts: Options, agent: str, query: str, limit: int) -> None:
    """Full-text search of the memory, best first."""
    with _open(opts) as r:
        hits = r.memory_search(agent, query, limit)

    def human() -> None:
        if not hits:
            out.print("No match.")
        # The rank, not the BM25 score: in a small memory every score is near zero.
        for rank, h in enumerate(hits, start=1):
            out.print(f"{rank}. {h.source}  {h.excerpt}", markup=False)

    _emit(
        opts,
        {"results": [{"source": h.source, "excerpt": h.excerpt, "score": h.score} for h in hits]},
        human,
    )


@memory_group.command("history")
@click.argument("agent")
@click.option(
    "--limit", type=int, default=50, show_default=True, help="How many revisions, newest first."
)
@click.option("--revision", type=int, help="Show this one revision with its diff.")
@pass_opts
def memory_history(opts: Options, agent: str, limit: int, revision: int | None) -> None:
    """List accepted writes (revision, time, writer, message, files), or show one."""
    with _open(opts) as r:
        if revision is not None:
            rec, diff = r.memory_revision(agent, revision)
            _emit(
                opts,
                {**_rev(rec), "diff": diff},
                lambda: out.print(
                    f"revision {rec.revision}  {_time(rec.created_at)}  "
                    f"{rec.writer}\n{rec.message}\n{diff}",
                    markup=False,
                ),
            )
            return
        recs = r.memory_history(agent, limit)

    def human() -> None:
        table = Table("rev", "time", "writer", "message", "files")
        for rec in recs:
            table.add_row(
                str(rec.revision),
                _time(rec.created_at),
                rec.writer,
                rec.message.split("\n")[0],
                ", ".join(rec.paths),
            )
        out.print(table)

    _emit(opts, {"revisions": [_rev(x) for x in recs]}, human)


def _rev(rec: Any) -> dict[str, Any]:
    return {
        "revision": rec.revision,
        "time": _time(rec.created_at),
        "writer": rec.writer,
        "message": rec.message,
        "paths": rec.paths,
        "commit": rec.oid,
    }


@memory_group.command("diff")
@click.argument("agent")
@click.argument("rev_a", type=int)
@click.argument("rev_b", type=int)
@pass_opts
def memory_diff(opts: Options, agent: str, rev_a: int, rev_b: int) -> None:
    """Unified diff between two revisions."""
    with _open(opts) as r:
        diff = r.memory_diff(agent, rev_a, rev_b)
    _emit(opts, {"from": rev_a, "to": rev_b, "diff": diff}, lambda: sys.stdout.write(diff))


@app.command()
@click.argument("agent", required=False)
@pass_opts
def reindex(opts: Options, agent: str | None) -> None:
    """Rebuild the search index from the memory files (one agent, or all); without an agent,
    the history search index too."""
    with _open(opts) as r:
        counts = r.reindex(agent)
        messages = None if agent else r.history_reindex()

    def human() -> None:
        for name, n in counts.items():
            out.print(f"{name}: {n} lines indexed")
        if messages is not None:
            out.print(f"history search: {messages} messages indexed")

    payload: dict[str, Any] = {"reindexed": counts}
    if messages is not None:
        payload["history_messages"] = messages
    _emit(opts, payload, human)


# conversations and the session-history tools


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
    lines = _read_lines(file)
    with _open(opts) as r:
        if opts.json or len(lines) <= _PROGRESS_LINES:
            summary = r.import_conversations(lines)
        else:
            with Progress(console=Console(stderr=True), transient=True) as bar:
                task = bar.add_task("Importing", total=None)

                def step(done: int, total: int) -> None:
                    if done % 250 == 0 or done == total:
                        bar.update(task, completed=done, total=total)

                summary = r.import_conversations(lines, progress=step)

    def human() -> None:
        out.print(
            f"Imported {summary.messages} messages into {summary.conversations} conversations; "
            f"{summary.closed} closed."
            + (f" {summary.skipped} already imported, skipped." if summary.skipped else "")
        )

    _emit(opts, summary.to_dict(), human)


def _read_lines(file: str) -> list[str]:
    try:
        raw = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise click.UsageError(f"Cannot read {file}: {exc.strerror}.") from None
    except UnicodeDecodeError:
        raise RefusedInput(f"{file} is not UTF-8 text.", code="invalid_import") from None
    # Only "\n" ends a JSON line: str.splitlines would also split at U+2028 inside a string.
    return [line.removesuffix("\r") for line in raw.split("\n")]


@context_group.command("sessions")
@click.argument("agent")
@click.option(
    "--from",
    "from_conversation",
    help="The conversation asking: left out, and refused if memory is off there.",
)
@click.option("--limit", type=int, default=50, show_default=True, help="At most, 1 to 200.")
@pass_opts
def context_sessions(opts: Options, agent: str, from_conversation: str | None, limit: int) -> None:
    """The agent's earlier memory-on conversations, newest first."""
    with _open(opts) as r:
        sessions = r.context_sessions(agent, from_conversation, limit)

    def human() -> None:
        table = Table("id", "title", "updated", "messages", "chars")
        for s in sessions:
            table.add_row(s.id, s.title, _time(s.updated_at), str(s.messages), str(s.chars))
        out.print(table if sessions else "No memory-on conversations.")

    _emit(
        opts,
        {
            "sessions": [
                {
                    "id": s.id,
                    "title": s.title,
                    "created": _time(s.created_at),
                    "updated": _time(s.updated_at),
                    "messages": s.messages,
                    "chars": s.chars,
                }
                for s in sessions
            ]
        },
        human,
    )


@context_group.command("read")
@click.argument("session")
@click.option("--start", type=int, help="First position (0-based, included; default 0).")
@click.option("--end", type=int, help="Position to stop before (excluded; default: the end).")
@click.option("--include-tools", is_flag=True, help="Show tool logs too.")
@click.option("--cursor", help="Continue where the previous page stopped (its next_cursor).")
@click.option("--agent", help="Read as this agent (default: the conversation's own).")
@click.option("--max-chars", type=int, default=8000, show_default=True, help="Characters per page.")
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
    """Messages START <= p < END of a memory-on conversation, a page at a time."""
    with _open(opts) as r:
        page = r.context_read(
            agent,
            session,
            start,
            end,
            include_tools=include_tools,
            cursor=cursor,
            max_chars=max_chars,
        )

    def human() -> None:
        for m in page.messages:
            who = f" {m.author}" if m.author else ""
            cont = f" (from character {m.offset})" if m.offset else ""
            out.print(f"[{m.position}] {m.role}{who}, {_time(m.time)}{cont}", markup=False)
            out.print(m.text + (" …" if m.continues else ""), markup=False)
        if page.tools_omitted:
            out.print(f"({page.tools_omitted} tool messages left out: --include-tools)")
        if page.next_cursor:
            out.print(
                f"More: reverie context read {session} --cursor {page.next_cursor}", markup=False
            )

    _emit(
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
                    "time": _time(m.time),
                    "channel": m.channel,
                    "offset": m.offset,
                    "continues": m.continues,
                }
                for m in page.messages
            ],
            "next_cursor": page.next_cursor,
            "tools_omitted": page.tools_omitted,
        },
        human,
    )


@context_group.command("search")
@click.argument("agent")
@click.argument("query")
@click.option("--limit", type=int, default=8, show_default=True, help="Results, 1 to 20.")
@pass_opts
def context_search(opts: Options, agent: str, query: str, limit: int) -> None:
    """Full-text search of the agent's memory-on conversations, best first."""
    with _open(opts) as r:
        hits = r.context_search(agent, query, limit)

    def human() -> None:
        if not hits:
            out.print("No match.")
        for rank, h in enumerate(hits, start=1):  # the rank, as memory search shows it
            out.print(f"{rank}. {h.conversation}#{h.start}-{h.end}  {h.excerpt}", markup=False)

    _emit(
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


# review (SPEC R1-R10)


@app.group("review")
def review_group() -> None:
    """Run review ("dreaming"): consolidate finished conversations into memory."""


@review_group.command("run")
@click.argument("agent", required=False)
@click.option("--now", "force", is_flag=True, help="Run even if the hourly slot is not due.")
@pass_opts
def review_run(opts: Options, agent: str | None, force: bool) -> None:
    """Review AGENT (or every due agent) the way the scheduler does, with progress."""
    with _open(opts) as r:
        if opts.json:
            reports = r.review_run(agent, force=force)
        else:
            with Progress(console=Console(stderr=True), transient=True) as bar:
                tasks: dict[str, Any] = {}

                def step(event: str, data: dict[str, Any]) -> None:
                    name = data["agent"]
                    if event == "start":
                        tasks[name] = bar.add_task(f"review {name}", total=data["batches"])
                    else:
                        bar.advance(tasks[name])

                reports = r.review_run(agent, force=force, progress=step)

    def human() -> None:
        if not reports:
            out.print("No agent is due for review (use --now to run anyway).")
        table = Table("agent", "batches", "commits", "model calls", "tokens in/out", "revision")
        for rep in reports:
            note = f" ({rep.skipped})" if rep.skipped else ""
            if rep.error:
                note = f" (stopped: {rep.error['message']})"
            table.add_row(
                rep.agent + note,
                str(rep.batches),
                str(rep.commits),
                str(rep.model_calls),
                f"{rep.tokens_in}/{rep.tokens_out}",
                str(rep.revision),
            )
        if reports:
            out.print(table)
        for rep in reports:
            for d in rep.dropped:
                out.print(
                    f"{rep.agent}: dropped a proposed {d['action']} ({d['code']})", markup=False
                )

    _emit(opts, {"agents": [rep.to_dict() for rep in reports]}, human)


@app.command()
@click.option(
    "--tick",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds between checks for due reviews.",
)
@pass_opts
def serve(opts: Options, tick: float) -> None:
    """Run the review scheduler until interrupted (each agent hourly, at its own minute).

    The HTTP API, admin page and MCP endpoint will be served here too; for now this runs the
    background review only.
    """
    import threading

    from .review.schedule import serve_forever

    stop = threading.Event()
    with _open(opts) as r:
        out.print(f"Reviewing due agents every {tick:g} s; Ctrl-C stops.")
        try:
            serve_forever(r, stop, tick)
        except KeyboardInterrupt:
            stop.set()


# entry point

_GLOBAL_FLAGS = {"--json"}
_GLOBAL_VALUES = {"--home"}


def hoist_global_options(argv: Sequence[str]) -> list[str]:
    """Move ``--home X``/``--home=X``/``--json`` to the front, wherever they stand (SPEC 15)."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    args = list(argv)
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        if arg in _GLOBAL_FLAGS:
            front.append(arg)
        elif arg in _GLOBAL_VALUES and i + 1 < len(args):
            front += [arg, args[i + 1]]
            i += 1
        elif any(arg.startswith(f"{v}=") for v in _GLOBAL_VALUES):
            front.append(arg)
        else:
            rest.append(arg)
        i += 1
    return front + rest


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (SPEC 15)."""
    args = hoist_global_options(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(args)
    try:
        app.main(args=args, prog_name="reverie", standalone_mode=False)
    except ReverieError as exc:
        return _fail(as_json, exc.code, exc.message, exc.details, exc.exit_code)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        return 130
    except click.UsageError as exc:
        if as_json:
            return _fail(True, "usage_error", exc.format_message(), {}, 2)
        exc.show()
        return 2
    return 0


def _wants_json(args: list[str]) -> bool:
    for arg in args:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


def _fail(as_json: bool, code: str, message: str, details: dict[str, Any], exit_code: int) -> int:
    if as_json:
        sys.stdout.write(
            json.dumps({"error": {"code": code, "message": message, **details}}, ensure_ascii=False)
            + "\n"
        )
    else:
        Console(stderr=True, highlight=False, soft_wrap=True).print(
            f"error ({code}): {message}", markup=False
        )
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
