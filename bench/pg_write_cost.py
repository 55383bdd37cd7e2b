"""What one accepted write costs on PostgreSQL: wall time, the writer's CPU, the server's CPU.

``pg_bench.py`` times writes beside SQLite; this bench takes one write on PostgreSQL apart, and
compares two checkouts of the code in one run (``--against DIR``: an older worktree, e.g.
``git worktree add /tmp/pgw-old ddf4f8b``), so the drift of a shared machine hits both alike:

* **1 process**: a writer process per checkout (``PYTHONPATH=<checkout>/src``), each with a
  fresh database (``reverie_cost_<pid>``) on ``$REVERIE_BENCH_PG`` and a home on it, does
  ``memory_apply(agent, add)`` on one memory, the checkouts taking turns write by write in a
  rotating order: ``--writes`` each after 20 untimed (the memory grows from 20 to 20 + writes
  entries, as in ``pg_bench.py``);
* **N processes** (``--procs``, 8), ``--rounds`` times, the checkouts' order alternating: a
  child process per checkout starts N worker processes (spawn) that write at once to their own
  memories, spread over 100 (``--proc-writes`` each after 2 untimed);
* for each: wall p50/p95 per write, the writing processes' CPU per write
  (``time.process_time``), the server's CPU per write (user + system time of the database's
  backend processes from ``/proc``: the server must run on this machine), and the SQL
  statements one write sends (counted at the store's connection wrapper).

The CPU figures say what N writers on this machine's cores can reach at best: with ``c`` ms of
CPU per write (writer + server) and ``k`` cores, at most ``k / c`` writes per ms, so N writers
that all keep writing wait at least ``N * c / k`` ms per write, however few round trips it takes.

Run: ``PYTHONPATH=src python bench/pg_write_cost.py [--against DIR] [--rounds 3]
[--writes 300] [--procs 8] [--proc-writes 60] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
from _common import Stats, fmt_ratio, markdown_table, progress

SECTIONS = ("People & preferences", "Decisions", "Environment & gotchas", "Project state")


def add(i: int, tag: str) -> dict[str, Any]:
    text = f"{tag} entry {i}: the build moved to runner {i * 7 % 101} after the {i % 13} outage"
    return {"action": "add", "section": SECTIONS[i % len(SECTIONS)], "text": text}


def count_statements() -> list[int]:
    """Count the statements the store sends (``executemany`` counts once)."""
    from reverie.store import postgres

    counter = [0]
    for name in ("execute", "executemany"):
        inner = getattr(postgres.Connection, name)

        def counted(self: Any, *args: Any, _inner: Any = inner) -> Any:
            counter[0] += 1
            return _inner(self, *args)

        setattr(postgres.Connection, name, counted)
    return counter


def server_cpu(db: str) -> float:
    """Seconds of CPU the backends of ``db`` have used (those alive now)."""
    import psycopg

    with psycopg.connect(f"{_common.PG_SERVER}/postgres", autocommit=True) as conn:
        pids = [
            r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (db,))
        ]
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def open_home(home: str, url: str) -> Any:
    from reverie.api import Reverie
    from reverie.config import Settings

    settings = Settings.load(home, database_url=url)
    return Reverie(settings.home, create=True, settings=settings)


def _worker(home: str, url: str, agents: list[str], n: int, barrier: Any, out: Any) -> None:
    counter = count_statements()
    rv = open_home(home, url)
    for i in range(2):
        rv.memory_apply(agents[i % len(agents)], add(i, "warm"))
    samples = []
    barrier.wait()
    sent, cpu = counter[0], time.process_time()
    for i in range(n):
        t0 = time.perf_counter_ns()
        rv.memory_apply(agents[i % len(agents)], add(i, f"w{os.getpid()}"))
        samples.append(time.perf_counter_ns() - t0)
    out.put((samples, time.process_time() - cpu, counter[0] - sent))
    barrier.wait()  # the parent reads the server's CPU while this connection's backend lives
    rv.close()


def serve() -> None:
    """The 1-process section's writer: a write of the checkout under test per line read
    (its wall ns printed back), then its CPU figures at ``end``."""
    counter = count_statements()
    db = f"reverie_cost_{os.getpid()}"
    with _common.pg_scratch_database(db) as url, tempfile.TemporaryDirectory() as tmp:
        rv = open_home(tmp, url)
        rv.create_agent("solo")
        for i in range(20):
            rv.memory_apply("solo", add(i, "warm"))
        print("ready", flush=True)
        n, sent, cpu, srv = 0, counter[0], time.process_time(), server_cpu(db)
        for line in sys.stdin:
            if line.strip() == "end":
                break
            t0 = time.perf_counter_ns()
            rv.memory_apply("solo", add(int(line), "solo"))
            print(time.perf_counter_ns() - t0, flush=True)
            n += 1
        figures = {
            "client_cpu_ms": (time.process_time() - cpu) / n * 1e3,
            "server_cpu_ms": (server_cpu(db) - srv) / n * 1e3,
            "statements": (counter[0] - sent) / n,
        }
        print(json.dumps(figures), flush=True)
        rv.close()


def interleaved(checkouts: dict[str, Path], writes: int) -> dict[str, dict[str, Any]]:
    """Every checkout's writer process at once, one write each in turn (the order rotating)."""
    procs = {}
    for name, src in checkouts.items():
        env = {**os.environ, "PYTHONPATH": str(src)}
        cmd = [sys.executable, __file__, "--serve"]
        procs[name] = subprocess.Popen(
            cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
    for proc in procs.values():
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    samples: dict[str, list[int]] = {name: [] for name in procs}
    names = list(procs)
    for i in range(writes):
        for j in range(len(names)):
            proc = procs[names[(i + j) % len(names)]]
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(f"{i}\n")
            proc.stdin.flush()
            samples[names[(i + j) % len(names)]].append(int(proc.stdout.readline()))
    out = {}
    for name, proc in procs.items():
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("end\n")
        proc.stdin.flush()
        figures = json.loads(proc.stdout.readline())
        proc.wait()
        out[name] = {"stats": Stats.of_ns(samples[name]).to_dict(), **figures}
    return out


def child(args: argparse.Namespace) -> dict[str, Any]:
    """The N-process section for one checkout (this process imports it)."""
    db = f"reverie_cost_{os.getpid()}"
    res: dict[str, Any] = {}
    with _common.pg_scratch_database(db) as url, tempfile.TemporaryDirectory() as tmp:
        rv = open_home(tmp, url)
        if args.procs:
            names = [f"m{k:03d}" for k in range(100)]
            for name in names:
                rv.create_agent(name)
            ctx = mp.get_context("spawn")
            barrier, out = ctx.Barrier(args.procs + 1), ctx.Queue()
            workers = [
                ctx.Process(
                    target=_worker,
                    args=(tmp, url, names[p :: args.procs], args.proc_writes, barrier, out),
                )
                for p in range(args.procs)
            ]
            for w in workers:
                w.start()
            barrier.wait()
            srv, start = server_cpu(db), time.perf_counter()
            got = [out.get(timeout=1800) for _ in workers]
            wall, srv = time.perf_counter() - start, server_cpu(db) - srv
            barrier.wait()
            for w in workers:
                w.join()
            n = args.procs * args.proc_writes
            res[f"{args.procs} processes, 100 memories"] = {
                "stats": Stats.of_ns([s for g in got for s in g[0]]).to_dict(),
                "client_cpu_ms": sum(g[1] for g in got) / n * 1e3,
                "server_cpu_ms": srv / n * 1e3,
                "statements": sum(g[2] for g in got) / n,
                "per_second": n / wall,
            }
        rv.close()
    res["load"] = os.getloadavg()[0]
    return res


def run_checkout(src: Path, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", "--writes", str(args.writes)]
    cmd += ["--procs", str(args.procs), "--proc-writes", str(args.proc_writes)]
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--against", type=Path, help="another checkout to compare (its src/)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--writes", type=int, default=300)
    p.add_argument("--procs", type=int, default=8)
    p.add_argument("--proc-writes", type=int, default=60)
    p.add_argument("--json", action="store_true")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve:
        serve()
        return 0
    if args.child:
        print(json.dumps(child(args)))
        return 0
    checkouts = {"this": _common.ROOT / "src"}
    if args.against:
        checkouts = {"against": args.against.resolve() / "src", **checkouts}
    progress(f"1 process, {args.writes} writes per checkout, interleaved")
    single = interleaved(checkouts, args.writes)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    for r in range(args.rounds if args.procs else 0):
        order = list(checkouts) if r % 2 == 0 else list(checkouts)[::-1]
        for name in order:
            progress(f"round {r + 1}/{args.rounds}: {name} ({checkouts[name]})")
            runs[name].append(run_checkout(checkouts[name], args))
    if args.json:
        print(json.dumps({"1 process": single, "rounds": runs}, indent=1))
        return 0
    runs = {
        name: [{"1 process": single[name], "load": os.getloadavg()[0]}, *runs[name]]
        for name in runs
    }
    rows = []
    for i in range(len(runs["this"])):
        for name in checkouts:
            one = runs[name][i]
            for case, c in one.items():
                if case == "load":
                    continue
                st = c["stats"]
                base = runs["against"][i][case]["stats"]["p50"] if "against" in runs else None
                rows.append(
                    [
                        case,
                        name,
                        "interleaved" if i == 0 else i,
                        f"{st['p50']:.2f}",
                        f"{st['p95']:.2f}",
                        fmt_ratio(st["p50"], base) if base else "",
                        f"{c['client_cpu_ms']:.2f}",
                        f"{c['server_cpu_ms']:.2f}",
                        f"{c['statements']:.1f}",
                        f"{c['per_second']:.0f}" if "per_second" in c else "",
                        f"{one['load']:.2f}",
                    ]
                )
    head = ["case", "code", "round", "p50 ms", "p95 ms", "p50 vs against"]
    head += ["writer CPU ms", "server CPU ms", "statements", "writes/s", "load"]
    print(markdown_table(head, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
