"""``reverie init``, ``agent ...``, ``memory ...`` and ``reindex``: the store's commands."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from reverie.errors import RefusedInput, StorageFault
from reverie.llm.factory import parse_model

from ._contract import (
    NATURAL,
    FilePath,
    Options,
    app,
    as_member_option,
    emit,
    limit_range,
    open_home,
    out,
    pass_opts,
    read_input,
    stamp,
)


@app.group("agent")
def agent_group() -> None:
    """Create and list agents."""


@app.group("memory")
def memory_group() -> None:
    """Read, write, search and audit an agent's memory."""


# init and agents


@app.command()
@pass_opts
def init(opts: Options) -> None:
    """Create the data directory (safe to run again)."""
    with open_home(opts, create=True) as r:
        home, url = str(r.home), r.settings.database_url
    if url:  # everything lives in the database; the directory is not made
        from reverie.store.postgres import redact

        where = redact(url)
        emit(
            opts, {"home": home, "database": where}, lambda: out.print(f"Reverie ready in {where}")
        )
        return
    emit(opts, {"home": home}, lambda: out.print(f"Reverie home ready at {home}"))


_FRAMING = click.Choice(["guide", "advisory"])
_FRAMING_HELP = (
    "How memory enters the prompt: guide (a plain section) or advisory (an <agent_memory> "
    "block framed as granting no authority)."
)


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
@click.option(
    "--memory-framing", type=_FRAMING, default="guide", show_default=True, help=_FRAMING_HELP
)
@click.option(
    "--soul",
    "soul_file",
    type=FilePath(exists=True, dir_okay=False, path_type=Path),
    help="A Markdown file: the soul's version 1 (role, personality, tone, working rules).",
)
@pass_opts
def agent_create(
    opts: Options,
    name: str,
    creator: str | None,
    edit_policy: str,
    memory_writers: str,
    memory_framing: str,
    soul_file: Path | None,
) -> None:
    """Create an agent; its memory starts at revision 0."""
    soul = _read_text(soul_file) if soul_file else None
    with open_home(opts) as r:
        a = r.create_agent(
            name,
            creator=creator,
            edit_policy=edit_policy,
            memory_writers=memory_writers,
            memory_framing=memory_framing,
            soul=soul,
        )
    emit(opts, {"agent": _agent(a)}, lambda: out.print(f"Created agent {a.name} ({a.id})"))


@agent_group.command("set")
@click.argument("name")
@click.option("--edit-policy", type=click.Choice(["editors", "all_workspace_members"]))
@click.option("--memory-writers", type=click.Choice(["review_only", "conversations"]))
@click.option("--memory-framing", type=_FRAMING, help=_FRAMING_HELP)
@click.option("--model", help='The agent\'s own model (openai:NAME, anthropic:NAME; "" clears).')
@pass_opts
def agent_set(
    opts: Options,
    name: str,
    edit_policy: str | None,
    memory_writers: str | None,
    memory_framing: str | None,
    model: str | None,
) -> None:
    """Change an agent's settings; the options left out keep their value."""
    if model:
        parse_model(model)  # refuse a malformed model before storing it
    with open_home(opts) as r:
        a = r.configure_agent(
            name,
            edit_policy=edit_policy,
            memory_writers=memory_writers,
            memory_framing=memory_framing,
            default_model=model,
        )
    emit(opts, {"agent": _agent(a)}, lambda: out.print(f"Updated agent {a.name}"))


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise click.UsageError(f"Cannot read {path}: {exc.strerror}.") from None
    except UnicodeDecodeError:
        raise RefusedInput(f"{path} is not UTF-8 text.", code="invalid_unicode") from None


def _agent(a: Any) -> dict[str, Any]:
    return {
        "id": a.id,
        "name": a.name,
        "creator": a.creator,
        "edit_policy": a.edit_policy,
        "memory_writers": a.memory_writers,
        "memory_framing": a.memory_framing,
        "model": a.default_model,
        "archived": a.archived,
    }


@agent_group.command("list")
@pass_opts
def agent_list(opts: Options) -> None:
    """List the agents."""
    with open_home(opts) as r:
        agents = r.agents()

    def human() -> None:
        table = Table("name", "id", "edit policy", "memory writers")
        for a in agents:
            table.add_row(a.name, a.id, a.edit_policy, a.memory_writers)
        out.print(table if agents else "No agents yet: `reverie agent create NAME`.")

    emit(opts, {"agents": [_agent(a) for a in agents]}, human)


# memory


@memory_group.command("show")
@click.argument("agent")
@click.option("--source", help="MEMORY.md (default) or memory/<slug>.md.")
@click.option("--revision", type=NATURAL, help="A past revision.")
@pass_opts
def memory_show(opts: Options, agent: str, source: str | None, revision: int | None) -> None:
    """Print a memory file, at the current or a past revision."""
    with open_home(opts) as r:
        f = r.memory_read(agent, source, revision)
    emit(
        opts,
        {"revision": f.revision, "source": f.source, "text": f.text},
        lambda: sys.stdout.write(f.text),
    )


@memory_group.command("apply")
@click.argument("agent")
@click.argument("file")
@click.option(
    "--expected-revision",
    type=NATURAL,
    help="Refuse unless the memory is still at this revision.",
)
@click.option("--key", help="Idempotency key: the same key again applies nothing twice.")
@as_member_option("Write as this member, with their rights (default: the home's owner, who may).")
@pass_opts
def memory_apply(
    opts: Options,
    agent: str,
    file: str,
    expected_revision: int | None,
    key: str | None,
    member: str | None,
) -> None:
    """Apply the batch in FILE (JSON, or - for stdin) as one revision."""
    request = _read_batch(file)
    with open_home(opts) as r:
        writer = r.as_member(member) if member else r
        o = writer.memory_apply(
            agent, request, writer="cli", expected_revision=expected_revision, key=key
        )

    def human() -> None:
        if o.replayed:
            out.print(f"Revision {o.revision}: {o.to_dict()['message']}")
            return
        state = "changed" if o.changed else "unchanged"
        touched = f" ({', '.join(o.paths)})" if o.paths else ""
        out.print(f"Revision {o.revision}: {state}{touched}")
        for d in o.diagnostics:
            out.print(f"note: {d['message']}")

    emit(opts, o.to_dict(), human)


def _read_batch(file: str) -> Any:
    raw, name = read_input(file)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise RefusedInput(
            f"{name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}).",
            code="invalid_operation",
        ) from None
    except RecursionError:
        raise RefusedInput(
            f"{name} nests JSON too deeply; a batch is a list of flat operations.",
            code="invalid_operation",
        ) from None


@memory_group.command("search")
@click.argument("agent")
@click.argument("query")
@click.option(
    "--limit", type=limit_range(20), default=8, show_default=True, help="Results, 1 to 20."
)
@pass_opts
def memory_search(opts: Options, agent: str, query: str, limit: int) -> None:
    """Full-text search of the memory, best first."""
    with open_home(opts) as r:
        hits = r.memory_search(agent, query, limit)

    def human() -> None:
        if not hits:
            out.print("No match.")
        # The rank, not the BM25 score: in a small memory every score is near zero.
        for rank, h in enumerate(hits, start=1):
            out.print(f"{rank}. {h.source}  {h.excerpt}")

    emit(
        opts,
        {"results": [{"source": h.source, "excerpt": h.excerpt, "score": h.score} for h in hits]},
        human,
    )


@memory_group.command("history")
@click.argument("agent")
@click.option(
    "--limit",
    type=limit_range(2**62),
    default=50,
    show_default=True,
    help="How many revisions, newest first.",
)
@click.option("--revision", type=NATURAL, help="Show this one revision with its diff.")
@pass_opts
def memory_history(opts: Options, agent: str, limit: int, revision: int | None) -> None:
    """List accepted writes (revision, time, writer, message, files), or show one."""
    with open_home(opts) as r:
        if revision is not None:
            rec, diff = r.memory_revision(agent, revision)
            emit(
                opts,
                {**_rev(rec), "diff": diff},
                lambda: out.print(
                    f"revision {rec.revision}  {stamp(rec.created_at)}  "
                    f"{rec.writer}\n{rec.message}\n{diff}"
                ),
            )
            return
        recs = r.memory_history(agent, limit)

    def human() -> None:
        table = Table("rev", "time", "writer", "message", "files")
        for rec in recs:
            table.add_row(
                str(rec.revision),
                stamp(rec.created_at),
                rec.writer,
                rec.message.split("\n")[0],
                ", ".join(rec.paths),
            )
        out.print(table)

    emit(opts, {"revisions": [_rev(x) for x in recs]}, human)


def _rev(rec: Any) -> dict[str, Any]:
    return {
        "revision": rec.revision,
        "time": stamp(rec.created_at),
        "writer": rec.writer,
        "message": rec.message,
        "paths": rec.paths,
        "commit": rec.oid,
    }


@memory_group.command("diff")
@click.argument("agent")
@click.argument("rev_a", type=NATURAL)
@click.argument("rev_b", type=NATURAL)
@pass_opts
def memory_diff(opts: Options, agent: str, rev_a: int, rev_b: int) -> None:
    """Unified diff between two revisions."""
    with open_home(opts) as r:
        diff = r.memory_diff(agent, rev_a, rev_b)
    emit(opts, {"from": rev_a, "to": rev_b, "diff": diff}, lambda: sys.stdout.write(diff))


@app.command()
@click.option("--to", "url", required=True, help="The empty PostgreSQL database: postgresql://...")
@pass_opts
def migrate(opts: Options, url: str) -> None:
    """Copy this embedded home into PostgreSQL, with every revision of every memory."""
    with open_home(opts) as r:
        counts = r.migrate_to(url)

    def human() -> None:
        out.print(
            f"Copied {counts.get('agents', 0)} agents, {counts['revisions_with_files']} "
            f"revisions and {counts.get('messages', 0)} messages. Point REVERIE_DATABASE_URL "
            "at the database to use it."
        )

    emit(opts, {"copied": counts}, human)


@app.command("export")
@click.argument("agent")
@click.option("--git", "folder", required=True, type=FilePath(names="folder"), help="A new folder.")
@pass_opts
def export(opts: Options, agent: str, folder: str) -> None:
    """Write an agent's memory out as a git repository, one commit per revision."""
    with open_home(opts) as r:
        try:
            commits = r.export_git(agent, folder)
        except StorageFault as exc:
            refusal = _destination_refusal(exc, Path(folder))
            if refusal is None:
                raise
            raise refusal from None
    emit(
        opts,
        {"agent": agent, "folder": folder, "commits": commits},
        lambda: out.print(f"Wrote {commits} commits to {folder}"),
    )


def _destination_refusal(exc: StorageFault, folder: Path) -> RefusedInput | None:
    """The fault of an export as a refusal of its destination, when that is where the
    operating system failed (a parent that does not exist or is a file, a folder that cannot
    be written): the data directory is fine then, and `reverie doctor` would find nothing.
    None when the fault is elsewhere."""
    cause = exc.__cause__
    if not isinstance(cause, OSError) or cause.filename is None:
        return None
    failed = Path(os.fsdecode(cause.filename)).absolute()
    dest = folder.absolute()
    if failed != dest and failed not in dest.parents and dest not in failed.parents:
        return None
    try:
        written = folder.is_dir() and any(folder.iterdir())
    except OSError:
        written = False
    if written:
        left = f"what was written to {folder} is incomplete: remove it"
    else:
        left = "nothing was written"
    return RefusedInput(
        f"Cannot write the export to {folder}: {cause.strerror} ({failed}). The destination "
        f"is the problem, not the data directory; {left}. Pass --git a new folder in a "
        "directory that exists and can be written.",
        code="invalid_path",
        folder=str(folder),
    )


@app.command()
@click.argument("agent", required=False)
@pass_opts
def reindex(opts: Options, agent: str | None) -> None:
    """Rebuild the search index from the memory files (one agent, or all); without an agent,
    the history search index too."""
    with open_home(opts) as r:
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
    emit(opts, payload, human)
