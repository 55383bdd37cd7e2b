"""Write latency with and without packing git objects: does ``pack_every`` cost writes?

Three homes, one per ``Settings.pack_every`` value (default 0, 500 and 50: never, the
default, and ten times as often), each with one memory, get the same stream of ``add`` writes
(``MEMORY.md`` reset every 100 adds, as in ``write_bench.py --soak``). The writes are
interleaved (write i goes to every home before write i+1), so that the machine's load falls on
every arm alike. Reported per arm: p50 and p95 per block of writes, the slowest write (the one
that packs), the packs made, loose objects left, and what ``.git`` takes on disk.

Run: ``PYTHONPATH=src python bench/pack_bench.py [--writes 3000] [--every 0,500,50] [--json]``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
from _common import Stats, TextGen, markdown_table, ms, progress
from reverie.api import Reverie
from reverie.config import Settings

AGENT = "bench"
RESET_EVERY = 100
EMPTY = "# Memory\n\n## Decisions\n"


def git_dir_report(repo: Path) -> dict[str, Any]:
    """Loose objects and packs (``git count-objects``), and the bytes of ``.git`` on disk."""
    out = subprocess.run(
        ["git", "count-objects", "-v"], cwd=repo, capture_output=True, text=True, check=False
    ).stdout
    counts = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    files = [f.stat() for f in (repo / ".git").rglob("*") if f.is_file()]
    return {
        "loose_objects": int(counts.get("count", 0)),
        "packs": int(counts.get("packs", 0)),
        "disk_mib": sum(f.st_blocks * 512 for f in files) / 2**20,
    }


def run(writes: int, every: list[int], block: int, seed: int, root: Path) -> list[dict[str, Any]]:
    """The interleaved writes; one result per ``pack_every`` value."""
    homes = []
    for pe in every:
        home = root / f"pack-every-{pe}"
        rv = Reverie(settings=Settings.load(home, pack_every=pe), create=True)
        rv.create_agent(AGENT)
        homes.append((pe, rv, []))
    gen = TextGen(seed)
    reset = {"operations": [{"action": "set_body", "text": EMPTY}]}
    for i in range(writes):
        request = {"operations": [{"action": "add", "text": gen.entry(), "section": "Decisions"}]}
        for _, rv, samples in homes:
            if i % RESET_EVERY == 0:
                rv.memory_apply(AGENT, reset)
            t0 = time.perf_counter_ns()
            rv.memory_apply(AGENT, request)
            samples.append(time.perf_counter_ns() - t0)
        if (i + 1) % 1000 == 0:
            progress(f"  {i + 1}/{writes} writes")
    results = []
    for pe, rv, samples in homes:
        repo = rv.home / "memories" / rv.state.memory_of(rv.agent(AGENT).id)
        blocks = [Stats.of_ns(samples[k : k + block]) for k in range(0, writes, block)]
        results.append(
            {
                "pack_every": pe,
                "all": Stats.of_ns(samples).__dict__,
                "blocks": [
                    {"first": k * block, "p50": b.p50, "p95": b.p95} for k, b in enumerate(blocks)
                ],
                **git_dir_report(repo),
            }
        )
        rv.close()
    return results


def report(results: list[dict[str, Any]], writes: int, block: int, info: dict[str, str]) -> str:
    """Markdown: one row per arm, then p50 per block side by side."""
    base = results[0]["all"]
    rows = [
        [
            str(r["pack_every"]),
            ms(r["all"]["p50"]),
            ms(r["all"]["p95"]),
            f"{r['all']['p50'] / base['p50']:.2f}x",
            ms(r["all"]["max"]),
            str(r["packs"]),
            f"{r['loose_objects']:,}",
            f"{r['disk_mib']:.1f}",
        ]
        for r in results
    ]
    lines = [
        f"{writes:,} interleaved `add` writes per arm (times in ms; ratios against pack_every="
        f"{results[0]['pack_every']}).",
        "",
        markdown_table(
            ["pack_every", "p50", "p95", "p50 ratio", "max", "packs", "loose", ".git MiB on disk"],
            rows,
        ),
        "",
        f"p50 per block of {block} writes:",
        "",
        markdown_table(
            ["writes", *[f"pack_every={r['pack_every']}" for r in results]],
            [
                [
                    f"{k * block + 1}-{(k + 1) * block}",
                    *[ms(r["blocks"][k]["p50"]) for r in results],
                ]
                for k in range(len(results[0]["blocks"]))
            ],
        ),
        "",
        _common.machine_markdown(info),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run, print the report."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--writes", type=int, default=3000, help="writes per arm (3000)")
    p.add_argument("--every", default="0,500,50", help="pack_every values, the first the base")
    p.add_argument("--block", type=int, default=500, help="writes per reported block (500)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    p.add_argument("--dir", type=Path, help="where to create the scratch data (system temp)")
    args = p.parse_args(argv)
    every = [int(x) for x in args.every.split(",") if x.strip()]
    if not every or any(e < 0 for e in every) or args.writes < 1 or args.block < 1:
        p.error("--every needs values >= 0, --writes and --block at least 1")
    root = Path(tempfile.mkdtemp(prefix="reverie-pack-bench-", dir=args.dir))
    try:
        results = run(args.writes, every, args.block, args.seed, root)
        info = _common.machine(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    payload = {"machine": info, "writes": args.writes, "arms": results}
    _common.emit(args.json, payload, report(results, args.writes, args.block, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
