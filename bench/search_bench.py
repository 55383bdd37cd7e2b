"""Search latency of one memory: ``Reverie.memory_search`` against ripgrep over the same files.

What is measured: the wall time of one query, from the call to its return, warm (after a few
untimed queries), one after another. Arms, queried in a rotating order per query:

* ``reverie fts5``: ``Reverie.memory_search(agent, query, limit=8)`` through the facade
  (agent lookup, revision check, SQLite FTS5 with BM25, excerpts);
* ``reverie scan``: the same call with ``Settings(search_backend="scan")``, the bounded
  fallback for SQLite builds without FTS5 (only at 10k entries and below);
* ``ripgrep``: what an agent does by hand: ``rg -i -n -e word1 -e word2 ... <working tree>``
  as a subprocess (every matching line, unranked). The cost of starting ``rg`` at all is
  measured too (``rg`` on an empty directory), so the reader can see how much of its time is
  process start rather than search.

Memories of 1k, 10k and 100k entries are generated from a seeded vocabulary (see
``_common.TextGen``): about 60 entries in ``MEMORY.md``, the rest in topic files of 100-200
entries, built with large ``set_body``/``write_topic`` batches. Queries are 200 seeded 2-5 word
queries (about 60% taken from words of real entries, the rest topical mixes of the
vocabulary), the same for every size. When LoCoMo (``../shared/bench/locomo10.json`` beside
the repository, or ``$REVERIE_LOCOMO``; CC BY-NC 4.0, read at run time, never copied) is
present, its 5,882 conversation turns are also indexed as entries and 200 of its questions, cut
to 2-5 content words, are the queries.

Run: ``PYTHONPATH=src python bench/search_bench.py [--quick] [--json] [--sizes 1000,10000]``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _common
from _common import (
    Stats,
    TextGen,
    fmt_ratio,
    markdown_table,
    ms,
    percentile,
    progress,
    words,
)
from reverie.api import Reverie
from reverie.config import Settings
from reverie.index import fts

AGENT = "bench"
INDEX_ENTRIES = 60
TOPICS_PER_BATCH = 40
SCAN_MAX_ENTRIES = 10_000
_WORDS = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
_QUESTION_STOP = frozenset(
    words(
        "a an the and or to of in on for by with is was were are did does do what when where who "
        "whom which why how has have had be been being it its this that these those at from as "
        "about into after before would could should might may can will his her their them they he "
        "she you your i me my we our us any some kind likely"
    )
)


@dataclass
class Corpus:
    """Entries and queries of one data set."""

    name: str
    entries: list[str]
    queries: list[str]


@dataclass
class Built:
    """A memory built for the benchmark and what it cost to build."""

    label: str
    entries: int
    topics: int
    index_bytes: int
    total_bytes: int
    build_seconds: float
    reverie: Reverie
    agent: str
    tree: Path


def synthetic(seed: int, n_max: int, n_queries: int) -> Corpus:
    """``n_max`` generated entries and ``n_queries`` queries drawn from the first 1,000."""
    entries = TextGen(seed).entries(n_max)
    queries = TextGen(seed + 1).queries(n_queries, entries[:1000])
    return Corpus("synthetic", entries, queries)


def locomo(path: Path, seed: int, n_queries: int) -> Corpus | None:
    """LoCoMo turns as entries, its questions cut to 2-5 content words as queries."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entries: list[str] = []
    questions: list[str] = []
    for sample in data:
        conv = sample["conversation"]
        for key, turns in conv.items():
            if not key.startswith("session_") or not isinstance(turns, list):
                continue
            when = conv.get(f"{key}_date_time", "")
            for turn in turns:
                text = " ".join(str(turn.get("text", "")).split())
                if text:
                    entries.append(f"{turn['speaker']} ({when}): {text}")
        questions += [str(q["question"]) for q in sample["qa"]]
    rng = random.Random(seed)
    queries: list[str] = []
    for question in rng.sample(questions, len(questions)):
        kept = [w for w in _WORDS.findall(question) if w.lower() not in _QUESTION_STOP]
        if len(kept) >= 2:
            queries.append(" ".join(kept[: rng.randint(2, 5)]))
        if len(queries) == n_queries:
            break
    return Corpus("locomo", entries, queries)


def build(
    label: str,
    home: Path,
    entries: Sequence[str],
    seed: int,
    agent: str = AGENT,
    reverie: Reverie | None = None,
) -> Built:
    """Write ``entries`` into a new memory with a few large batches; time the whole build."""
    rv = reverie or Reverie(home, create=True, settings=Settings.load(home))
    rv.create_agent(agent)
    rng = random.Random(seed)
    names = TextGen(seed)
    index = list(entries[:INDEX_ENTRIES])
    rest = list(entries[INDEX_ENTRIES:])
    topics: list[tuple[str, str]] = []
    pos = 0
    while pos < len(rest):
        take = rng.randint(100, 200)
        slug = names.topic_slug(len(topics))
        title = slug.rsplit("-", 1)[0].replace("-", " ").capitalize()
        topics.append((slug, _common.topic_text(title, rest[pos : pos + take], rng)))
        pos += take
    t0 = time.perf_counter()
    ops: list[dict[str, Any]] = [{"action": "set_body", "text": _common.index_text(index)}]
    for i, (slug, text) in enumerate(topics):
        ops.append({"action": "write_topic", "topic": slug, "content": text})
        if len(ops) >= TOPICS_PER_BATCH or i == len(topics) - 1:
            rv.memory_apply(agent, {"operations": ops, "message": f"bench build {label}"})
            ops = []
    if ops:
        rv.memory_apply(agent, {"operations": ops, "message": f"bench build {label}"})
    seconds = time.perf_counter() - t0
    memory_id = rv.state.memory_of(rv.agent(agent).id)
    tree = rv.memories.repo(memory_id).path
    files = [tree / "MEMORY.md", *sorted((tree / "memory").glob("*.md"))]
    return Built(
        label=label,
        entries=len(entries),
        topics=len(topics),
        index_bytes=files[0].stat().st_size,
        total_bytes=sum(f.stat().st_size for f in files),
        build_seconds=seconds,
        reverie=rv,
        agent=agent,
        tree=tree,
    )


def rg_command(query: str, tree: Path) -> list[str]:
    """The command an agent would type: every word of the query as one ``-e`` pattern."""
    patterns = [a for w in query.split() for a in ("-e", re.escape(w))]
    return ["rg", "-i", "-n", *patterns, str(tree)]


def run_rg(query: str, tree: Path) -> str:
    """Run ripgrep; its output (every matching line, as ``path:line:text``)."""
    out = subprocess.run(rg_command(query, tree), capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):  # 1: no match
        raise RuntimeError(f"rg failed ({out.returncode}): {out.stderr.strip()}")
    return out.stdout


Timed = Callable[[str], Any]


def measure(
    arms: dict[str, Timed],
    queries: Sequence[str],
    warmup: int,
    seed: int,
    digest: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, list[tuple[int, Any]]]:
    """Time each query on every arm, the arms in a shuffled order per query.

    ``digest`` turns one query's results (by arm) into small summaries, untimed, so that
    ripgrep's megabytes of output per query are not all kept until the end.
    """
    for q in queries[:warmup]:
        for fn in arms.values():
            fn(q)
    names = list(arms)
    rng = random.Random(seed)
    out: dict[str, list[tuple[int, Any]]] = {name: [] for name in names}
    for i, q in enumerate(queries):
        rng.shuffle(names)
        times: dict[str, int] = {}
        results: dict[str, Any] = {}
        for name in names:
            t0 = time.perf_counter_ns()
            results[name] = arms[name](q)
            times[name] = time.perf_counter_ns() - t0
        for name, summary in digest(results).items():
            out[name].append((times[name], summary))
        if (i + 1) % 50 == 0:
            progress(f"    {i + 1}/{len(queries)} queries")
    return out


def _digest(results: dict[str, Any]) -> dict[str, Any]:
    """Per arm: hits (result lines), output bytes, and whether fts5's top hit is in rg's output."""
    out: dict[str, Any] = {}
    rg: str | None = results.get("ripgrep")
    for name, r in results.items():
        if name == "ripgrep":
            out[name] = {"hits": r.count("\n"), "bytes": len(r.encode())}
        else:
            out[name] = {"hits": len(r)}
            if rg is not None and r:
                # A long line comes back cut, with an ellipsis at either end.
                out[name]["top_in_rg"] = r[0].excerpt.strip("…") in rg
    return out


def bench_memory(
    built: Built, queries: Sequence[str], warmup: int, seed: int, with_rg: bool
) -> dict[str, Any]:
    """All arms on one built memory; statistics, hit counts and a sanity check of agreement."""
    home = built.reverie.home
    arms: dict[str, Timed] = {
        "reverie fts5": lambda q: built.reverie.memory_search(built.agent, q, limit=8),
    }
    scan: Reverie | None = None
    if built.entries <= SCAN_MAX_ENTRIES:
        scan = Reverie(home, settings=Settings.load(home, search_backend="scan"))
        arms["reverie scan"] = lambda q: scan.memory_search(built.agent, q, limit=8)
    if with_rg:
        arms["ripgrep"] = lambda q: run_rg(q, built.tree)
    raw = measure(arms, queries, warmup, seed, _digest)
    if scan is not None:
        scan.close()
    result: dict[str, Any] = {"arms": {}}
    for name, samples in raw.items():
        stats = Stats.of_ns([t for t, _ in samples])
        hits = [d["hits"] for _, d in samples]
        extra = {"mean_hits": sum(hits) / len(hits), "empty": sum(1 for n in hits if n == 0)}
        if name == "ripgrep":
            extra["mean_output_kib"] = sum(d["bytes"] for _, d in samples) / len(samples) / 1024
        result["arms"][name] = {**stats.to_dict(), **extra, "_stats": stats}
    if with_rg:
        tops = [d["top_in_rg"] for _, d in raw["reverie fts5"] if "top_in_rg" in d]
        result["top_hit_in_rg"] = sum(tops) / len(tops) if tops else 0.0
    result["matched"] = matched_rows(built, queries)
    return result


def matched_rows(built: Built, queries: Sequence[str]) -> dict[str, float]:
    """How many indexed lines each query matches (all of them are BM25-scored), untimed."""
    conn = built.reverie.state.conn
    memory_id = built.reverie.state.memory_of(built.reverie.agent(built.agent).id)
    total = conn.execute(
        "SELECT count(*) FROM memory_lines WHERE memory_id = ?", (memory_id,)
    ).fetchone()[0]
    counts = []
    for q in queries:
        expr = fts.fts_query(q)
        counts.append(
            0
            if expr is None
            else conn.execute(
                # CROSS JOIN keeps FTS5 as the outer loop; with a plain JOIN the planner may
                # walk the memory's rows and run the MATCH once per row (minutes at 100k).
                "SELECT count(*) FROM memory_fts CROSS JOIN memory_lines l "
                "ON l.id = memory_fts.rowid WHERE memory_fts MATCH ? AND l.memory_id = ?",
                (expr, memory_id),
            ).fetchone()[0]
        )
    return {
        "lines": total,
        "p50": percentile(counts, 50),
        "p95": percentile(counts, 95),
        "p50_share": percentile(counts, 50) / total,
        "p95_share": percentile(counts, 95) / total,
    }


def rg_floor(root: Path, runs: int = 50) -> Stats | None:
    """The time to start ``rg`` and search nothing: the process-start floor of the baseline."""
    if shutil.which("rg") is None:
        return None
    empty = root / "empty"
    empty.mkdir(exist_ok=True)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        run_rg("nothing here", empty)
        samples.append(time.perf_counter_ns() - t0)
    return Stats.of_ns(samples)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the report; returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", help="entries per memory, comma separated (1000,10000,100000)")
    p.add_argument("--queries", type=int, help="queries per memory (200; quick 60)")
    p.add_argument("--warmup", type=int, default=10, help="untimed queries first (10)")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--quick", action="store_true", help="a small, fast run (1k and 10k)")
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    p.add_argument("--locomo", type=Path, default=None, help="LoCoMo file (read, not copied)")
    p.add_argument("--no-locomo", action="store_true", help="skip the LoCoMo memory")
    p.add_argument("--dir", type=Path, help="where to create the scratch data (system temp)")
    p.add_argument("--keep", action="store_true", help="keep the scratch data")
    args = p.parse_args(argv)
    default_sizes = "1000,10000" if args.quick else "1000,10000,100000"
    sizes = [int(s) for s in (args.sizes or default_sizes).split(",")]
    n_queries = args.queries or (60 if args.quick else 200)
    with_rg = shutil.which("rg") is not None
    notes: list[str] = []
    if not with_rg:
        notes.append("SKIP ripgrep baseline: `rg` is not on PATH (apt-get install ripgrep).")
        progress(notes[-1])

    root = Path(tempfile.mkdtemp(prefix="reverie-search-bench-", dir=args.dir))
    info = _common.machine(root)
    corpus = synthetic(args.seed, max(sizes), n_queries)
    rows: list[dict[str, Any]] = []
    floor = rg_floor(root) if with_rg else None
    opened: list[Reverie] = []
    try:
        for size in sizes:
            progress(f"building {size:,} entries")
            built = build(f"{size:,}", root / f"m{size}", corpus.entries[:size], args.seed)
            opened.append(built.reverie)
            progress(f"  built in {built.build_seconds:.1f} s; searching")
            rows.append(
                _row(built, bench_memory(built, corpus.queries, args.warmup, args.seed, with_rg))
            )
        if len(sizes) > 1:
            # The 1k memory again, in the home of the biggest one: the index is one table per
            # home, so other memories' rows may cost a small memory something.
            small, big = min(sizes), max(sizes)
            host = opened[sizes.index(big)]
            label = f"{small:,} beside {big:,}"
            progress(f"building {label} (one home)")
            built = build(
                label, host.home, corpus.entries[:small], args.seed, agent="small", reverie=host
            )
            rows.append(
                _row(built, bench_memory(built, corpus.queries, args.warmup, args.seed, with_rg))
            )
        if not args.no_locomo:
            locomo_file = _common.locomo_path(args.locomo)
            lc = locomo(locomo_file, args.seed, n_queries)
            if lc is None:
                notes.append(f"SKIP LoCoMo memory: {locomo_file} is absent or unreadable.")
                progress(notes[-1])
            else:
                progress(f"building LoCoMo ({len(lc.entries):,} turns)")
                built = build("locomo", root / "locomo", lc.entries, args.seed)
                opened.append(built.reverie)
                rows.append(
                    _row(built, bench_memory(built, lc.queries, args.warmup, args.seed, with_rg))
                )
    finally:
        for rv in opened:
            rv.close()
        if args.keep:
            progress(f"scratch data kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)

    command = "python bench/search_bench.py " + " ".join(sys.argv[1:] if argv is None else argv)
    payload = {
        "benchmark": "search",
        "command": command.strip(),
        "machine": info,
        "params": {
            "sizes": sizes,
            "queries": n_queries,
            "warmup": args.warmup,
            "seed": args.seed,
            "limit": 8,
        },
        "rg_start_floor_ms": floor.to_dict() if floor else None,
        "notes": notes,
        "memories": [
            {k: v for k, v in r.items() if k != "arms"}
            | {
                "arms": {
                    a: {k: v for k, v in s.items() if k != "_stats"} for a, s in r["arms"].items()
                }
            }
            for r in rows
        ],
    }
    _common.emit(args.json, payload, _markdown(payload, rows, floor))
    return 0


def _row(built: Built, result: dict[str, Any]) -> dict[str, Any]:
    return {
        "memory": built.label,
        "entries": built.entries,
        "topics": built.topics,
        "index_kib": round(built.index_bytes / 1024, 1),
        "total_mib": round(built.total_bytes / 2**20, 2),
        "build_seconds": round(built.build_seconds, 2),
        **result,
    }


def _markdown(payload: dict[str, Any], rows: list[dict[str, Any]], floor: Stats | None) -> str:
    parts = ["## Search latency", "", _common.machine_markdown(payload["machine"]), ""]
    parts.append(f"Command: `{payload['command']}`")
    parts += [f"\n{n}" for n in payload["notes"]]

    def stat(r: dict[str, Any], arm: str) -> Stats | None:
        a = r["arms"].get(arm)
        return a["_stats"] if a else None

    ratio_rows = []
    for r in rows:
        f5, scan, rg = stat(r, "reverie fts5"), stat(r, "reverie scan"), stat(r, "ripgrep")
        assert f5 is not None
        ratio_rows.append(
            [
                r["memory"],
                f"{rg.p50 / f5.p50:.1f}x" if rg else "n/a",
                f"{rg.p95 / f5.p95:.1f}x" if rg else "n/a",
                fmt_ratio(scan.p50, f5.p50) if scan else "-",
                fmt_ratio(scan.p50, rg.p50) if rg and scan else "-",
            ]
        )
    parts += [
        "",
        "### Ratios",
        "",
        markdown_table(
            [
                "memory",
                "ripgrep / fts5 p50 (speed-up)",
                "ripgrep / fts5 p95",
                "scan / fts5 p50",
                "scan / ripgrep p50",
            ],
            ratio_rows,
        ),
    ]
    lat_rows = []
    for r in rows:
        for arm, a in r["arms"].items():
            s: Stats = a["_stats"]
            lat_rows.append(
                [
                    r["memory"],
                    arm,
                    s.n,
                    ms(s.p50),
                    ms(s.p95),
                    ms(s.p99),
                    ms(s.mean),
                    f"{a['mean_hits']:.1f}",
                    a["empty"],
                ]
            )
    parts += [
        "",
        "### Latency (ms) and results per query",
        "",
        markdown_table(
            ["memory", "arm", "n", "p50", "p95", "p99", "mean", "mean hits", "no hit"], lat_rows
        ),
    ]
    mem_rows = [
        [
            r["memory"],
            f"{r['entries']:,}",
            r["topics"],
            r["index_kib"],
            r["total_mib"],
            r["build_seconds"],
            f"{r['matched']['lines']:,}",
            f"{r['matched']['p50']:,.0f} ({100 * r['matched']['p50_share']:.0f}%)",
            f"{r['matched']['p95']:,.0f} ({100 * r['matched']['p95_share']:.0f}%)",
            f"{r['arms']['ripgrep']['mean_output_kib']:.1f}" if "ripgrep" in r["arms"] else "n/a",
            f"{100 * r['top_hit_in_rg']:.0f}%" if "top_hit_in_rg" in r else "n/a",
        ]
        for r in rows
    ]
    parts += [
        "",
        "### Memories",
        "",
        markdown_table(
            [
                "memory",
                "entries",
                "topics",
                "MEMORY.md KiB",
                "files MiB",
                "build s",
                "indexed lines",
                "lines matched p50",
                "lines matched p95",
                "rg output KiB/query",
                "fts5 top hit also in rg",
            ],
            mem_rows,
        ),
    ]
    if floor is not None:
        parts += [
            "",
            f"Starting `rg` on an empty directory (process-start floor): "
            f"p50 {ms(floor.p50)} ms, p95 {ms(floor.p95)} ms.",
        ]
    ten = next((r for r in rows if r["entries"] == 10_000 and r["memory"] == "10,000"), None)
    if ten is not None:
        f5, rg = stat(ten, "reverie fts5"), stat(ten, "ripgrep")
        assert f5 is not None
        ok = f5.p95 < 5 and (rg is None or rg.p95 / f5.p95 >= 10)
        speed = f", {rg.p95 / f5.p95:.1f}x faster than ripgrep at p95" if rg else ""
        parts += [
            "",
            f"Target at 10k (p95 < 5 ms and >= 10x ripgrep): "
            f"{'met' if ok else 'NOT met'} (p95 {ms(f5.p95)} ms{speed}).",
        ]
    return "\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
