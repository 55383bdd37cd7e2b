"""The long crash campaign: SIGKILL a real writer hundreds or thousands of times (SPEC W7, W8).

The same campaign and checks as ``tests/store/test_crash.py`` (they live in
``tests/store/_writer.py``), at a length that the test suite cannot afford. A writer process
writes checkable batches to one memory (real git, real SQLite) and is killed with SIGKILL after
a random delay (0 to ``--max-delay-ms`` after it is ready), then restarted, ``--kills`` times.
Then every check runs on the home:

* every acknowledged revision reads back, through ``Reverie.memory_read``, as acknowledged;
  revisions are gap-free 0..N and N >= the last ack;
* every revision 0..N holds exactly what the batches before it must produce (the oracle): no
  revision holds part of a batch;
* ``git fsck --full`` passes, no lock file or marker is left; the files on disk and git's index
  equal HEAD after each recovery this script made (every ``--check-every`` kills) and at the end;
* the search index equals the rows computed from the files, before and after ``reindex``, and
  FTS5's integrity check passes;
* idempotency keys replay across crashes (the writer checks every batch it resends after a
  restart; at the end the last acked batch and the one after it are sent again).

Run: ``python bench/crash_campaign.py --kills 2000`` (about 12 minutes on 2 cores, the checks
included). Exit status 0 when every check passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import _common
from _common import emit, machine, machine_markdown, markdown_table, progress
from reverie import Reverie

sys.path.insert(0, str(_common.ROOT / "tests" / "store"))
kit: Any = importlib.import_module("_writer")

AGENT = "ada"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kills", type=int, default=500, help="writers to kill (default 500)")
    p.add_argument("--seed", type=int, default=1, help="seed of the kill delays")
    p.add_argument(
        "--max-delay-ms",
        type=float,
        default=300.0,
        help="kill each writer 0 to this many ms after it is ready (default 300)",
    )
    p.add_argument(
        "--exec-every",
        type=int,
        default=15,
        help="start every Nth writer with exec instead of a fork (0: never)",
    )
    p.add_argument(
        "--check-every",
        type=int,
        default=2,
        help="recover and check the working tree here after every Nth kill (0: never)",
    )
    p.add_argument("--keep", type=Path, help="run in this (new) directory and keep it")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    return p.parse_args(argv)


def run(args: argparse.Namespace, root: Path) -> tuple[dict[str, Any], dict[str, list[str]]]:
    home = root / "home"
    with Reverie(home, create=True) as r:
        r.create_agent(AGENT)
    started = time.monotonic()

    def tick(i: int, c: Any) -> None:
        if (i + 1) % 100 == 0 or i + 1 == args.kills:
            rate = (i + 1) / (time.monotonic() - started)
            left = (args.kills - i - 1) / rate
            progress(f"  {i + 1}/{args.kills} kills, {rate:.1f}/s, about {left:.0f} s left")

    progress(f"campaign: {args.kills} kills in {root}")
    c = kit.run_campaign(
        home,
        AGENT,
        root / "acks.jsonl",
        root / "writer.log",
        kills=args.kills,
        seed=args.seed,
        max_delay=args.max_delay_ms / 1000,
        exec_every=args.exec_every,
        check_every=args.check_every,
        progress=tick,
    )
    progress("checks")
    checked_at = time.monotonic()
    acks = kit.read_acks(c.acks)
    repo = kit.memory_repo(home, AGENT)
    problems: dict[str, list[str]] = {}
    with Reverie(home) as r:
        head = r.memory_read(AGENT).revision  # recovers from the last kill
        problems["worktree after the last recovery"] = kit.worktree_problems(repo)
        status = kit.git_status(repo)
        problems["git status after the last recovery"] = [status] if status else []
        problems["keys replay after the campaign (W7)"] = kit.check_resend(r, AGENT, acks, repo)
        oids = kit.history_oids(r, AGENT)
        problems["acknowledged revisions intact"] = kit.check_acks(r, AGENT, acks, repo, oids)
        problems["every revision = oracle (no partial batch)"] = kit.check_revisions(repo, oids)
        problems["git fsck, locks, marker"] = kit.check_fsck(repo)
        problems["worktree at the end"] = kit.worktree_problems(repo)
        status = kit.git_status(repo)
        problems["git status at the end"] = [status] if status else []
        problems["index rows = files"] = kit.check_index(r, AGENT, repo)
        problems["FTS5 integrity-check"] = kit.fts_integrity(home)
        memory_id = r.state.memory_of(r.agent(AGENT).id)
        before = r.memories.index_rows(memory_id)
        r.reindex(AGENT)
        same = before == r.memories.index_rows(memory_id)
        problems["reindex changes nothing"] = [] if same else ["reindex changed the rows"]
    problems["worktree after each recovery here"] = c.worktree_bad
    problems["git status after each recovery here"] = c.status_dirty
    resent = [a for a in acks if "head_before" in a]
    leftovers = len(list((repo / ".git" / "objects").glob("tmp_object*")))
    summary = {
        "kills": c.kills,
        "forked writers": c.kills - c.exec_runs,
        "exec'd writers": c.exec_runs,
        "campaign seconds": round(c.seconds, 1),
        "kills per second": round(c.kills / c.seconds, 2),
        "check seconds": round(time.monotonic() - checked_at, 1),
        "revisions": len(oids) - 1,
        "acknowledged writes": len(acks),
        "head after the last kill": head,
        "last ack": acks[-1]["revision"] if acks else 0,
        "batches resent after a restart": len(resent),
        "of which committed before the kill (replayed)": sum(a["replayed"] for a in resent),
        "recoveries checked here": c.checked,
        "temporary object files left by kills": leftovers,
    }
    landed = dict(Counter(c.landed).most_common())
    return {"summary": summary, "landed": landed}, problems


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True)
        root = args.keep
    else:
        root = Path(tempfile.mkdtemp(prefix="reverie-crash-"))
    try:
        report, problems = run(args, root)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    failed = {name: found for name, found in problems.items() if found}
    payload = {
        "machine": machine(root if args.keep else None),
        **report,
        "checks": {name: len(found) for name, found in problems.items()},
        "problems": {name: found[:5] for name, found in failed.items()},
        "passed": not failed,
    }
    lines = [
        "# Crash campaign (SPEC W7, W8)",
        "",
        machine_markdown(payload["machine"]),
        "",
        markdown_table(["campaign", ""], [[k, v] for k, v in report["summary"].items()]),
        "",
        "Where the kills left the memory before recovery (a kill can be in several rows):",
        "",
        markdown_table(["state", "kills"], [[k, v] for k, v in report["landed"].items()]),
        "",
        markdown_table(
            ["check", "result"],
            [
                [name, "ok" if not found else f"FAILED ({len(found)})"]
                for name, found in problems.items()
            ],
        ),
    ]
    for name, found in failed.items():
        lines += ["", f"## {name}", "", *[f"- {p[:400]}" for p in found[:5]]]
    emit(args.json, payload, "\n".join(lines))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
