"""Crash safety on PostgreSQL (SPEC D2, W8): acknowledged writes survive a SIGKILL of the
writer and a restart of the PostgreSQL server.

One run, on a fresh database of the machine's server (dropped after):

1. ``--writers`` processes write to one memory as fast as they can, each write with its own
   idempotency key, retrying a write whose answer was lost (the key makes the retry apply at
   most once). Each appends ``key revision`` to its ack file, fsynced, after the answer.
2. While they write, the server is restarted ``--restarts`` times (``pg_ctlcluster VERSION
   CLUSTER restart``, the fast shutdown mode: open transactions are rolled back).
3. Then every writer is killed with SIGKILL in the middle of its writing.
4. Checks: every acknowledged key is in the memory, at the revision its answer named, exactly
   once; the revisions are gap-free; a new write lands (no lock left behind).

It restarts the machine's PostgreSQL, so every other connection to it drops: run it alone.
Needs root (or the postgres user) for ``pg_ctlcluster``; the server is ``$REVERIE_BENCH_PG``
(default ``postgresql://postgres@127.0.0.1:5432``, as every bench here).

    python bench/pg_crash.py [--writers 3] [--restarts 3] [--seconds 12] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import _common

ROOT = Path(__file__).resolve().parents[1]

WRITER = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, sys.argv[1])
    from reverie import Reverie
    from reverie.errors import StorageFault
    home, name, acks_path = sys.argv[2], sys.argv[3], sys.argv[4]
    rv = Reverie(home)
    acks = open(acks_path, "a")
    print("ready", flush=True)
    n = 0
    while True:
        key = f"{name}-{n}"
        batch = {"operations": [{"action": "add", "text": f"entry {key}"}]}
        try:
            out = rv.memory_apply("ada", batch, key=key)
        except StorageFault:
            time.sleep(0.05)  # the server is away: the same key again, until it answers
            continue
        acks.write(f"{key} {out.revision}\\n"); acks.flush(); os.fsync(acks.fileno())
        n += 1
    """
)


def cluster() -> tuple[str, str]:
    out = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True, check=True)
    version, name = out.stdout.split()[:2]
    return version, name


def restart(version: str, name: str) -> float:
    start = time.monotonic()
    subprocess.run(["pg_ctlcluster", version, name, "restart", "-m", "fast"], check=True)
    return time.monotonic() - start


def campaign(url: str, args: argparse.Namespace) -> dict[str, Any]:
    """Write, restart the server, kill the writers, then check the memory against the acks."""
    from reverie import Reverie, Settings

    scratch = Path(tempfile.mkdtemp(prefix="reverie-pg-crash-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    env["REVERIE_DATABASE_URL"] = url
    procs: list[subprocess.Popen[str]] = []
    try:
        home = scratch / "home"
        with Reverie(settings=Settings.load(home, database_url=url), create=True) as rv:
            rv.create_agent("ada")
        for i in range(args.writers):
            proc = subprocess.Popen(
                [sys.executable, "-c", WRITER, str(ROOT / "src"), str(home), f"w{i}",
                 str(scratch / f"acks-{i}")],
                stdout=subprocess.PIPE, text=True, env=env,
            )  # fmt: skip
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            procs.append(proc)
        version, name = cluster()
        pause = args.seconds / (args.restarts + 1)
        downtimes = []
        for _ in range(args.restarts):
            time.sleep(pause)
            downtimes.append(restart(version, name))
        time.sleep(pause)
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        acked = [
            line.split()
            for i in range(args.writers)
            for line in (scratch / f"acks-{i}").read_text().splitlines()
        ]
        with Reverie(settings=Settings.load(home, database_url=url)) as rv:
            after = rv.memory_apply("ada", {"operations": [{"action": "add", "text": "after"}]})
            history = [h.revision for h in rv.memory_history("ada", limit=1_000_000)]
            text = rv.memory_read("ada").text
            lost = [key for key, _ in acked if text.count(f"- entry {key}\n") != 1]
            misplaced = [
                key
                for key, rev in acked
                if f"- entry {key}\n" not in rv.memory_read("ada", revision=int(rev)).text
            ]
        result = {
            "writers": args.writers,
            "restarts": args.restarts,
            "restart_seconds": [round(d, 2) for d in downtimes],
            "acknowledged": len(acked),
            "lost_or_duplicated": len(lost),
            "not_at_their_revision": len(misplaced),
            "revisions_gap_free": history == list(range(after.revision, -1, -1)),
            "write_after_kill_revision": after.revision,
        }
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--writers", type=int, default=3)
    p.add_argument("--restarts", type=int, default=3)
    p.add_argument("--seconds", type=float, default=12.0, help="writing time in all")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    with _common.pg_scratch_database(f"reverie_crash_{os.getpid()}") as url:
        result = campaign(url, args)
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k}: {v}")
    ok = not result["lost_or_duplicated"] and not result["not_at_their_revision"]
    return 0 if ok and result["revisions_gap_free"] else 1


if __name__ == "__main__":
    sys.exit(main())
