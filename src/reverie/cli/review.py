"""``reverie review run``: review now, as the scheduler would."""

from __future__ import annotations

from typing import Any

import click
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from ._contract import Interrupted, Options, app, console, emit, open_home, out, pass_opts


@app.group("review")
def review_group() -> None:
    """Run review ("dreaming"): consolidate finished conversations into memory."""


@review_group.command("run")
@click.argument("agent", required=False)
@click.option("--now", "force", is_flag=True, help="Run even if the hourly slot is not due.")
@pass_opts
def review_run(opts: Options, agent: str | None, force: bool) -> None:
    """Review AGENT (or every due agent) the way the scheduler does, with progress.

    Exits 1 when an agent's review failed (the model was unavailable, say); its
    conversations stay pending for the next run.
    """
    try:
        with open_home(opts) as r:
            if opts.json:
                reports = r.review_run(agent, force=force)
            else:
                with Progress(console=console(stderr=True), transient=True) as bar:
                    tasks: dict[str, Any] = {}

                    def step(event: str, data: dict[str, Any]) -> None:
                        name = data["agent"]
                        if event == "start":
                            # The description is read as markup: an agent's name is not.
                            label = f"review {escape(name)}"
                            tasks[name] = bar.add_task(label, total=data["batches"])
                        else:
                            bar.advance(tasks[name])

                    reports = r.review_run(agent, force=force, progress=step)
    except KeyboardInterrupt:
        # Each batch's write and its ranges' marking are its own (review/runner.py): a batch
        # cut short leaves its ranges pending, and its write, if made, is replayed by its key.
        raise Interrupted(
            "review keeps whole batches: the batches it had finished stay in memory, and the "
            "conversations of the one under way stay pending for the next run."
        ) from None
    failed = [rep for rep in reports if rep.error]

    def human() -> None:
        if not reports:
            out.print("No agent is due for review (use --now to run anyway).")
        table = Table("agent", "batches", "commits", "model calls", "tokens in/out", "revision")
        for rep in reports:
            note = f" ({rep.skipped})" if rep.skipped else ""
            if rep.error:
                note = " (failed, see below)"
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
                out.print(f"{rep.agent}: dropped a proposed {d['action']} ({d['code']})")
        for rep in failed:
            # Whole, not in a table cell that a narrow terminal cuts.
            assert rep.error is not None
            out.print(
                f"{rep.agent}: review failed ({rep.error['code']}): {rep.error['message']} "
                "Its conversations stay pending for the next run.",
                style="red",
            )

    emit(opts, {"agents": [rep.to_dict() for rep in reports]}, human)
    if failed:
        raise click.exceptions.Exit(1)
