"""``make tour``: a guided first session with the store, through the real ``reverie`` CLI.

It creates (or reuses) a data directory, an agent, writes a batch, searches, shows history,
and shows a refused secret, printing each command before its output so that it can be
repeated by hand.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from .cli import main as cli

# soft_wrap: lines are never cut at the terminal width (80 columns when output is not a
# terminal), so the JSON shown can be copied and parsed.
console = Console(highlight=False, soft_wrap=True)


def _run(*args: str, stdin: str | None = None) -> int:
    shown = "reverie " + " ".join(shlex.quote(a) for a in args)
    console.print(f"\n[bold cyan]$ {shown}[/bold cyan]" + (" < (the text below)" if stdin else ""))
    if stdin is None:
        code = cli(list(args))
    else:
        console.print(stdin.strip(), style="dim", markup=False)
        # The text goes through a file of its own, removed after: one of them holds the
        # sample token of the refused write.
        with tempfile.TemporaryDirectory(prefix="reverie-tour-") as folder:
            path = Path(folder) / "batch.json"
            path.write_text(stdin, encoding="utf-8")
            code = cli([str(path) if a == "-" else a for a in args])
    if code:
        console.print(f"[yellow](exit code {code})[/yellow]")
    return code


def main(argv: list[str] | None = None) -> int:
    """Walk through init, agent create, apply, search, history and a refused secret."""
    parser = argparse.ArgumentParser(prog="python -m reverie.tour")
    parser.add_argument("--home", default="reverie-data")
    parser.add_argument("--agent", default="tour-agent")
    ns = parser.parse_args(argv)
    h = ("--home", ns.home)
    console.print("[bold]Reverie tour[/bold]: the memory store, step by step.")
    _run(*h, "init")
    _run(*h, "agent", "list")
    if _quiet(*h, "memory", "show", ns.agent) != 0:
        _run(*h, "agent", "create", ns.agent)
    batch = {
        "operations": [
            {
                "action": "add",
                "text": "Prefers answers in British English",
                "section": "People & preferences",
            },
            {
                "action": "add",
                "text": "The API runs on Python 3.11 behind nginx",
                "section": "Environment & gotchas",
            },
            {
                "action": "write_topic",
                "topic": "deploys",
                "content": "# Deploys\n- Build with `make release`, then tag vX.Y.Z\n",
            },
        ],
        "message": "Tour: first facts",
    }
    _run(*h, "memory", "apply", ns.agent, "-", "--key", "tour-1", stdin=json.dumps(batch))
    _run(*h, "memory", "show", ns.agent)
    _run(*h, "memory", "search", ns.agent, "how do we deploy a release")
    _run(*h, "memory", "history", ns.agent, "--limit", "5")
    # Built from pieces so that this file itself holds no credential-shaped string.
    token = "gh" + "p_" + "R8fQ2mZk7LwX4pVn9TbY3cHs6JdG1aEuKo5i"
    bad = {"operations": [{"action": "add", "text": f"The deploy token is {token}"}]}
    console.print("\n[bold]A secret is refused, and nothing is written:[/bold]")
    _run(*h, "--json", "memory", "apply", ns.agent, "-", stdin=json.dumps(bad))
    _run(*h, "memory", "history", ns.agent, "--limit", "1")
    console.print("\n[bold]Review (dreaming): a finished conversation becomes memory:[/bold]")
    conv = f"tour-{ns.agent}-1"
    chat = [
        ("user", "sam", "Hi! Quick note: I prefer tea over coffee."),
        ("assistant", None, "Noted, tea it is."),
        ("user", "sam", "We decided to deploy with Kamal from now on."),
        ("user", "sam", "Can you check the logs?"),
        ("assistant", None, "The cause was a missing DATABASE_URL in the staging env."),
    ]
    lines = [
        json.dumps(
            {
                "conversation": conv,
                "agent": ns.agent,
                "channel": {"kind": "dm", "id": "tour-dm"},
                "author": author,
                "role": role,
                "text": text,
                "time": f"2026-01-05T10:0{i}:00Z",
            }
        )
        for i, (role, author, text) in enumerate(chat)
    ]
    lines.append(json.dumps({"conversation": conv, "closed": True}))
    _run(*h, "conversations", "import", "-", stdin="\n".join(lines) + "\n")
    _run(*h, "review", "run", ns.agent, "--now")
    _run(*h, "memory", "show", ns.agent)
    _run(*h, "context", "search", ns.agent, "deploy Kamal")
    console.print(
        f"\nThe memory is a git repository under {ns.home}/memories/: "
        "try `git log` there. `reverie --help` lists every command."
    )
    return 0


def _quiet(*args: str) -> int:
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return cli(list(args))


if __name__ == "__main__":
    sys.exit(main())
