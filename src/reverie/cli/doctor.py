"""``reverie doctor [AGENT]``: check the home, repair what can be rebuilt, say what was done."""

from __future__ import annotations

import click

from reverie.config import Settings
from reverie.doctor import DoctorReport, examine_unopened
from reverie.errors import NotFound, StorageFault

from ._contract import Options, app, emit, open_home, out, pass_opts


@app.command()
@click.argument("agent", required=False)
@click.option(
    "--rewind",
    is_flag=True,
    help="Restore a memory whose newest revisions are damaged beyond repair to its last "
    "intact revision (the later ones are forgotten).",
)
@pass_opts
def doctor(opts: Options, agent: str | None, rewind: bool) -> None:
    """Check git objects, the state database, the index against the files, the working tree
    against the newest revision, leftover markers (of AGENT's memory, or every one) and
    repositories no agent owns; repair what can be rebuilt from the truth.

    Exits 0 when nothing is left to do, 1 when something could not be repaired.
    """
    report: DoctorReport | None
    try:
        home = open_home(opts)
    except (NotFound, StorageFault) as exc:
        # A reverie.db that is damaged past opening, or gone while the memories remain: what
        # doctor can say without opening the home (and writing to it) is the answer then.
        settings = Settings.load(opts.home)
        report = None if settings.database_url else examine_unopened(settings.home, exc)
        if report is None:
            raise
    else:
        with home as r:
            report = r.doctor(agent, rewind=rewind)
    shown = report

    def human() -> None:
        out.print(f"Checked: {', '.join(shown.checked)}.")
        if not shown.findings:
            out.print("All is well.")
        for f in shown.findings:
            code = f" [{f.code}]" if f.code else ""
            if f.repaired:
                done = f"repaired: {f.repaired}" + (f". {f.advice}" if f.advice else "")
            else:
                done = f"not repaired. {f.advice or ''}"
            out.print(f"- {f.where} ({f.check}){code}: {f.problem}; {done}")

    emit(opts, report.to_dict(), human)
    if not report.ok:
        raise click.exceptions.Exit(1)
