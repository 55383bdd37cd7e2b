"""``reverie review run``: review now, as the scheduler would."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from ._contract import Options, app, emit, open_home, out, pass_opts


@app.group("review")
def review_group() -> None:
    """Run review ("dreaming"): consolidate finished conversations into memory."""


@review_group.command("run")
@click.argument("agent", required=False)
@click.option("--now", "force", is_flag=True, help="Run even if the hourly slot is not due.")
@pass_opts
def review_run(opts: Options, agent: str | None, force: bool) -> None:
    """Review AGENT (or every due agent) the way the scheduler does, with progress."""
    with open_home(opts) as r:
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

    emit(opts, {"agents": [rep.to_dict() for rep in reports]}, human)
