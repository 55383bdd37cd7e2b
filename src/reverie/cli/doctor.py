"""``reverie doctor [AGENT]``: check the home, repair what can be rebuilt, say what was done."""

from __future__ import annotations

import click

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
    """Check git objects, the state database, the index against the files and leftover
    markers (of AGENT's memory, or every one); repair what can be rebuilt from the truth.

    Exits 0 when nothing is left to do, 1 when something could not be repaired.
    """
    with open_home(opts) as r:
        report = r.doctor(agent, rewind=rewind)

    def human() -> None:
        out.print(f"Checked: {', '.join(report.checked)}.")
        if not report.findings:
            out.print("All is well.")
        for f in report.findings:
            done = f"repaired: {f.repaired}" if f.repaired else f"not repaired. {f.advice or ''}"
            out.print(f"- {f.where} ({f.check}): {f.problem}; {done}")

    emit(opts, report.to_dict(), human)
    if not report.ok:
        raise click.exceptions.Exit(1)
