"""PostgreSQL beside SQLite: the same calls of the ``Reverie`` facade on both backends, one run.

Every figure is taken through the facade (``Reverie(home, settings=...)``), the embedded default
(SQLite and a git repository per memory) in one arm, ``Settings(database_url=...)`` on a fresh
PostgreSQL database in the other, with the same seeded data. Sections:

* **write, one process**: ``memory_apply`` of one ``add`` (an entry under a section of
  ``MEMORY.md``) on one memory, one writer; the two backends alternate write by write, in a
  rotating order, so drift of the shared machine hits both alike.
* **write, 8 processes**: 8 worker processes, each with its own ``Reverie``, write at once:
  each to its own memories, spread over 100 (process ``i`` writes to memories ``i``, ``i + 8``,
  ...), and, for contrast, all 8 to one memory. Each worker times its own calls; writes per
  second are all the writes over the wall time from the common start to the last one's end.
  The backends take turns (SQLite then PostgreSQL, then the other way round).
* **write, 8 processes at a given rate**: the same 8 processes over 100 memories, each
  writing when its writes are due (random arrivals, ``--rates`` writes/s in all), not as fast
  as it can: the latency a caller sees at that load, timed from when a write was due.
* **search**: ``memory_search(agent, query, limit=8)`` on one memory of 1k and 10k entries
  (``MEMORY.md`` plus topic files, as ``search_bench.py`` builds them), 200 seeded queries,
  the arms in a shuffled order per query.
* **scale**: 1,000 and 10,000 agents of 100 entries each (100k and 1M entries in one
  database), searched and written through the facade (a random agent per call). PostgreSQL's
  rows are loaded with the store's own recording function (``DatabaseMemoryStore.record``:
  revisions, files, batches, index rows) in large transactions, not write by write through
  the pipeline, which would take hours; the embedded arm is loaded through the facade (one
  ``create_agent`` and one ``set_body`` per agent), since its truth is a git repository per
  memory. ``--sqlite-scale-max`` leaves the embedded arm out of larger points.
* **LoCoMo**: history search Recall@5 of ``locomo_bench.py``'s ``reverie`` arm (its code: the
  importer's records in through ``import_conversations``, ``context_search`` out) on both.

Each PostgreSQL arm gets a database of its own (``reverie_bench_<pid>_<section>``) on the
machine's server (``$REVERIE_BENCH_PG``, default ``postgresql://postgres@127.0.0.1:5432``),
dropped at the end with the scratch directory.

Run: ``PYTHONPATH=src python bench/pg_bench.py [--quick] [--json] [--scale-agents 1000,10000]
[--sqlite-scale-max 10000] [--rates 100,200,400,600]
[--skip write_single,write_concurrent,write_paced,search,scale,locomo]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
from _common import Stats, TextGen, fmt_ratio, markdown_table, ms, progress
from reverie.api import Reverie
from reverie.config import Settings

SQLITE, PG = "SQLite", "PostgreSQL"
BACKENDS = (SQLITE, PG)
#: The embedded default with ``Settings(durable=True)``: fsync at every commit, as PostgreSQL
#: does by default (``synchronous_commit = on``); SQLite's default does not.
SQLITE_DURABLE = "SQLite durable"
SECTIONS = ("People & preferences", "Decisions", "Environment & gotchas", "Project state")
ENTRIES_PER_AGENT = 100
LOAD_CHUNK = 200
HOT_WRITES = 40
WARMUP = 10


# the two backends


@dataclass
class Run:
    """Where this run keeps its data: a scratch directory and a database per PostgreSQL arm."""

    root: Path
    stack: contextlib.ExitStack
    databases: list[str] = field(default_factory=list)

    def settings(self, backend: str, section: str) -> Settings:
        """Fresh settings of ``backend`` for ``section``: a new home (and a new database)."""
        home = self.root / f"{section}-{backend.lower().replace(' ', '-')}"
        if backend in (SQLITE, SQLITE_DURABLE):
            return Settings.load(home, database_url=None, durable=backend == SQLITE_DURABLE)
        name = f"reverie_bench_{os.getpid()}_{section.replace('-', '_')}"
        url = self.stack.enter_context(_common.pg_scratch_database(name))
        self.databases.append(name)
        return Settings.load(home, database_url=url)

    def open(self, backend: str, section: str) -> Reverie:
        """A new ``Reverie`` of ``backend`` for ``section``, closed with the run."""
        settings = self.settings(backend, section)
        rv = Reverie(settings.home, create=True, settings=settings)
        self.stack.callback(rv.close)
        return rv


def add_request(text: str, k: int) -> dict[str, Any]:
    """One ``add`` of ``text`` under a standard section of ``MEMORY.md`` (the commonest write)."""
    return {"action": "add", "section": SECTIONS[k % len(SECTIONS)], "text": text}


def timed_write(rv: Reverie, agent: str, request: dict[str, Any]) -> int:
    """One accepted write through the facade; its wall time in ns."""
    t0 = time.perf_counter_ns()
    outcome = rv.memory_apply(agent, request)
    took = time.perf_counter_ns() - t0
    if not outcome.changed:
        raise RuntimeError(f"a bench write changed nothing: {request}")
    return took


def interleaved(arms: dict[str, Callable[[int], int]], n: int, warmup: int) -> dict[str, list[int]]:
    """Call every arm ``warmup`` times untimed, then ``n`` times each, the arms' order
    rotating call by call; each call returns its own wall time in ns."""
    names = list(arms)
    for i in range(warmup):
        for name in names:
            arms[name](-1 - i)
    out: dict[str, list[int]] = {name: [] for name in names}
    for i in range(n):
        for j in range(len(names)):
            name = names[(i + j) % len(names)]
            out[name].append(arms[name](i))
    return out


# 1a. writes, one process


def bench_write_single(run: Run, n: int, seed: int) -> dict[str, Any]:
    """``add`` on one memory, one writer, the backends (and durable SQLite) alternating."""
    arms: dict[str, Callable[[int], int]] = {}
    texts = TextGen(seed).entries(n + WARMUP)
    for backend in (*BACKENDS, SQLITE_DURABLE):
        rv = run.open(backend, "write")
        rv.create_agent("solo")

        def write(i: int, rv: Reverie = rv) -> int:
            return timed_write(rv, "solo", add_request(f"{texts[i]} [{i}]", i))

        arms[backend] = write
    samples = interleaved(arms, n, WARMUP)
    return {b: Stats.of_ns(s) for b, s in samples.items()}


# 1b. writes, 8 processes


@dataclass(frozen=True)
class WriterJob:
    """What one writer process does: ``writes`` writes one after another, or, with
    ``arrivals``, one write due at each of these offsets (seconds) from the common start."""

    home: str
    url: str | None
    agents: tuple[str, ...]
    writes: int
    seed: int
    arrivals: tuple[float, ...] | None = None


def _writer(job: WriterJob, barrier: Any, results: Any) -> None:
    """A worker process: open its own ``Reverie``, wait for the others, write, report.

    Paced (``job.arrivals``), a write's latency runs from the moment it was due, not from the
    moment it started: a write that waits for the one before it counts that wait, as the
    caller who sent it would (no coordinated omission).
    """
    settings = Settings.load(job.home, database_url=job.url)
    rv = Reverie(settings.home, settings=settings)
    texts = TextGen(job.seed).entries(job.writes + 2)
    for i in range(2):  # untimed: connections, caches, the first file reads
        rv.memory_apply(job.agents[i % len(job.agents)], add_request(f"warm {texts[i]}", i))
    samples: list[int] = []
    barrier.wait()
    start = time.time()
    origin = time.perf_counter_ns()
    try:
        for i in range(job.writes):
            agent = job.agents[i % len(job.agents)]
            request = add_request(f"{texts[i + 2]} [{i}]", i)
            if job.arrivals is None:
                samples.append(timed_write(rv, agent, request))
                continue
            due = origin + int(job.arrivals[i] * 1e9)
            wait = due - time.perf_counter_ns()
            if wait > 0:
                time.sleep(wait / 1e9)
            timed_write(rv, agent, request)
            samples.append(time.perf_counter_ns() - due)
    except Exception as exc:  # the parent waits for every worker's answer: give it this one
        results.put(f"{type(exc).__name__}: {exc}")
        raise
    end = time.time()
    rv.close()
    results.put((samples, start, end))


def concurrent_writes(
    run: Run,
    backend: str,
    section: str,
    procs: int,
    memories: int,
    writes: int,
    seed: int,
    arrivals: Sequence[tuple[float, ...]] | None = None,
) -> dict[str, Any]:
    """``procs`` processes writing ``writes`` each at once, over ``memories`` memories; with
    ``arrivals`` (one schedule per process), each write when it is due instead."""
    rv = run.open(backend, section)
    names = [f"m{k:03d}" for k in range(memories)]
    for name in names:
        rv.create_agent(name)
    ctx = mp.get_context("spawn")  # no pooled connection or libgit2 state crosses a fork
    barrier = ctx.Barrier(procs)
    results = ctx.Queue()
    jobs = [
        WriterJob(
            str(rv.settings.home),
            rv.settings.database_url,
            tuple(names[p::procs]) if memories >= procs else tuple(names),
            writes if arrivals is None else len(arrivals[p]),
            seed * 1000 + p,
            None if arrivals is None else arrivals[p],
        )
        for p in range(procs)
    ]
    workers = [ctx.Process(target=_writer, args=(job, barrier, results)) for job in jobs]
    for w in workers:
        w.start()
    got = [results.get(timeout=1800) for _ in workers]
    for w in workers:
        w.join()
    failed = [g for g in got if isinstance(g, str)]
    if failed or any(w.exitcode != 0 for w in workers):
        raise RuntimeError(f"a writer process failed ({backend}, {section}): {failed[:1]}")
    samples = [s for g in got for s in g[0]]
    wall = max(g[2] for g in got) - min(g[1] for g in got)
    revisions = sum(rv.memory_history(n, limit=1)[0].revision for n in names)
    expected = sum(job.writes + 2 for job in jobs)
    if revisions != expected:  # every acknowledged write is one revision, none lost
        raise RuntimeError(f"{backend}: {revisions} revisions after {expected} writes")
    return {"stats": Stats.of_ns(samples), "per_second": len(samples) / wall, "wall_s": wall}


def bench_write_concurrent(run: Run, procs: int, writes: int, seed: int) -> dict[str, Any]:
    """Spread (100 memories) and hot (one memory), each backend in turn, order swapped."""
    out: dict[str, dict[str, Any]] = {}
    for case, memories in (("100 memories", 100), ("one memory", 1)):
        order = BACKENDS if case == "100 memories" else BACKENDS[::-1]
        # One memory takes every write into its MEMORY.md, which may hold 64 KiB: about 330
        # of these entries in all, so at most 40 writes a process there.
        n = writes if memories >= procs else min(writes, HOT_WRITES)
        for backend in order:
            progress(f"  {procs} processes, {case}, {backend}")
            section = f"conc-{memories}"
            out.setdefault(case, {})[backend] = concurrent_writes(
                run, backend, section, procs, memories, n, seed
            )
    return out


# 1c. writes, 8 processes at a given rate


def poisson_arrivals(rate: float, seconds: float, seed: int) -> tuple[float, ...]:
    """Due times (seconds from the start) of writes arriving at random at ``rate`` a second
    on average, each independent of the others (exponential gaps), over ``seconds``."""
    rng = random.Random(seed)
    out: list[float] = []
    t = rng.expovariate(rate)
    while t < seconds:
        out.append(t)
        t += rng.expovariate(rate)
    return tuple(out)


def bench_write_paced(
    run: Run, procs: int, rates: Sequence[float], seconds: float, seed: int
) -> dict[str, Any]:
    """8 processes over 100 memories at each total rate (writes/s, split evenly and arriving
    at random): the latency a caller sees at that load, from due time to answer. The backends
    take turns, the order swapped from one rate to the next; both get the same schedules."""
    out: dict[str, dict[str, Any]] = {}
    for k, rate in enumerate(rates):
        schedules = [
            poisson_arrivals(rate / procs, seconds, seed * 7919 + 97 * k + p) for p in range(procs)
        ]
        for backend in BACKENDS if k % 2 == 0 else BACKENDS[::-1]:
            progress(f"  {procs} processes at {rate:g} writes/s, {backend}")
            got = concurrent_writes(
                run, backend, f"paced-{k}", procs, 100, 0, seed, arrivals=schedules
            )
            got["offered"] = sum(map(len, schedules)) / seconds
            out.setdefault(f"{rate:g}", {})[backend] = got
    return out


# 2. search at 1k and 10k entries in one memory


def fill_memory(rv: Reverie, agent: str, entries: Sequence[str], seed: int) -> None:
    """``entries`` into ``agent``'s memory as ``search_bench.py`` lays them out: 60 in
    ``MEMORY.md``, the rest in topic files of 100-200, written in batches of 40 files."""
    rng = random.Random(seed)
    names = TextGen(seed)
    ops: list[dict[str, Any]] = [
        {"action": "set_body", "text": _common.index_text(list(entries[:60]))}
    ]
    rest, pos, k = list(entries[60:]), 0, 0
    while pos < len(rest):
        take = rng.randint(100, 200)
        slug = names.topic_slug(k)
        title = slug.rsplit("-", 1)[0].replace("-", " ").capitalize()
        text = _common.topic_text(title, rest[pos : pos + take], rng)
        ops.append({"action": "write_topic", "topic": slug, "content": text})
        pos, k = pos + take, k + 1
        if len(ops) >= 40:
            rv.memory_apply(agent, {"operations": ops, "message": "bench fill"})
            ops = []
    if ops:
        rv.memory_apply(agent, {"operations": ops, "message": "bench fill"})


def search_arms(
    arms: dict[str, Callable[[str], list[Any]]], queries: Sequence[str], seed: int
) -> dict[str, Any]:
    """Time every query on every arm (shuffled order per query, after warm-up); how often
    the backends' first hits and top-8 lines agree."""
    for q in queries[:WARMUP]:
        for fn in arms.values():
            fn(q)
    rng = random.Random(seed)
    names = list(arms)
    samples: dict[str, list[int]] = {n: [] for n in names}
    same_top, overlap, empty, pg_same = 0, 0.0, dict.fromkeys(names, 0), 0
    for q in queries:
        rng.shuffle(names)
        hits: dict[str, list[Any]] = {}
        for name in names:
            t0 = time.perf_counter_ns()
            hits[name] = arms[name](q)
            samples[name].append(time.perf_counter_ns() - t0)
            empty[name] += not hits[name]
        if PG_BEFORE in hits:
            pg_same += [(h.source, h.excerpt, h.score) for h in hits[PG]] == [
                (h.source, h.excerpt, h.score) for h in hits[PG_BEFORE]
            ]
        a, b = ([(h.source, h.excerpt) for h in hits[n]] for n in BACKENDS if n in hits)
        same_top += bool(a and b and a[0] == b[0]) or (not a and not b)
        overlap += len(set(a) & set(b)) / max(1, len(set(a) | set(b)))
    return {
        "stats": {n: Stats.of_ns(s) for n, s in samples.items()},
        "top1_agree": same_top / len(queries),
        "top8_jaccard": overlap / len(queries),
        "empty": empty,
        "pg_same_before": pg_same / len(queries),
    }


def bench_search(
    run: Run,
    sizes: Sequence[int],
    n_queries: int,
    seed: int,
    vacuum: bool = True,
    before: bool = True,
) -> dict[str, Any]:
    """One memory per size and backend, the same entries and queries. On the PostgreSQL
    database a third arm, :data:`PG_BEFORE`, asks the same memory through the same facade with
    the ranking query from before migration 103 (:func:`_search_before_103`): old and new
    side by side on the same rows. With ``vacuum``, the database is vacuumed and analyzed
    after the fill, as autovacuum does within a minute or so of a load; the postings' index-only
    scans need the visibility map that a vacuum sets. Without ``before``, no third arm: its
    query (some 30 ms of the server's CPU at 10k entries) runs between the other arms'
    searches and slows them (caches), and its times have meant nothing since migration 104."""
    entries = TextGen(seed).entries(max(sizes))
    queries = TextGen(seed + 1).queries(n_queries, entries[:1000])
    out: dict[str, Any] = {}
    for size in sizes:
        arms: dict[str, Callable[[str], list[Any]]] = {}
        build_s: dict[str, float] = {}
        for backend in BACKENDS:
            progress(f"  building {size:,} entries on {backend}")
            rv = run.open(backend, f"search-{size}")
            rv.create_agent("big")
            t0 = time.perf_counter()
            fill_memory(rv, "big", entries[:size], seed)
            build_s[backend] = time.perf_counter() - t0
            arms[backend] = lambda q, rv=rv: rv.memory_search("big", q, limit=8)
            if backend == PG:
                if vacuum:
                    _vacuum(rv)
                if before:
                    arms[PG_BEFORE] = lambda q, rv=rv: _before_103(rv, q)
        result = search_arms(arms, queries, seed)
        result["build_s"] = build_s
        result["vacuumed"] = vacuum
        out[f"{size:,}"] = result
    return out


#: The PostgreSQL arm of :func:`bench_search` that ranks as before migration 103.
PG_BEFORE = "PostgreSQL before 103"


def _vacuum(rv: Reverie) -> None:
    """``VACUUM (ANALYZE)`` the database of a PostgreSQL ``Reverie``."""
    import psycopg

    url = rv.settings.database_url
    assert url is not None
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")


def _before_103(rv: Reverie, query: str) -> list[Any]:
    """``rv.memory_search`` with the ranking query of memory search before migration 103: the
    agent's memory looked up, then ranked by :func:`_search_before_103` (no longer through
    the facade, whose search is now one statement that this arm cannot swap a part of)."""
    _, memory_id = rv.state.agent_and_memory("big")
    try:
        return _search_before_103(rv.state.conn, memory_id, query, 8)
    finally:
        rv.state.release()


def _search_before_103(conn: Any, memory_id: str, query: str, limit: int) -> list[Any]:
    """Memory search on PostgreSQL as it was before migration 103: ``pg_ranked`` over the
    memory's lines (a GIN match and ``ts_rank`` of each matching line's ``tsv``). Since
    migration 104 dropped the GIN index of ``memory_lines``, its matches come from the
    memory's rows instead: the same rows and scores, not the old query's time."""
    from reverie.index import fts

    terms = fts.pg_terms(query)
    if not terms:
        return []
    rows = conn.execute(
        f"SELECT l.path, l.text, h.r FROM ({fts.pg_ranked('memory_lines x', 'x.memory_id = ?')})"
        " h JOIN memory_lines l ON l.id = h.id ORDER BY h.r DESC, h.id",
        (terms, memory_id, memory_id, memory_id, limit),
    ).fetchall()
    words = fts.query_terms(query)
    return [fts.SearchHit(p, fts.excerpt(t, words), fts.round_score(r)) for p, t, r in rows]


# 3. scale: many agents in one database


def pg_bulk_load(rv: Reverie, agents: int, seed: int) -> tuple[float, list[str]]:
    """``agents`` agents of ``ENTRIES_PER_AGENT`` entries each, recorded as the pipeline
    records them: ``insert_agent`` (agent and memory rows), revision 0 as
    ``DatabaseMemoryStore.create`` makes it, revision 1 the ``set_body`` that the facade's
    write would make, both through ``DatabaseMemoryStore.record`` (revision, files, batch,
    index rows). Only the facade's per-write lock and checks are skipped: loading a million
    entries write by write would take hours. Returns the seconds taken and sample entries."""
    from reverie.core.markdown import apply_batch, new_index
    from reverie.core.operations import parse_batch
    from reverie.core.paths import INDEX
    from reverie.store.dbmemories import DatabaseMemoryStore, revision_oid
    from reverie.store.memories import _message, _summary
    from reverie.store.state import RevisionRecord

    store = rv.memories
    assert isinstance(store, DatabaseMemoryStore)
    gen = TextGen(seed)
    sample: list[str] = []
    t0 = time.perf_counter()
    for first in range(0, agents, LOAD_CHUNK):
        with rv.state.transaction() as conn:
            for a in range(first, min(agents, first + LOAD_CHUNK)):
                _, memory_id = rv.state.insert_agent(conn, f"agent-{a:05d}")
                files0: dict[str, str | None] = {INDEX: new_index()}
                rec0 = RevisionRecord(
                    0,
                    revision_oid(None, 0, files0),
                    time.time(),
                    "system",
                    _message("Create memory", "system", 0, None, None),
                    [INDEX],
                )
                store.record(conn, memory_id, rec0, files0, {}, None)
                entries = gen.entries(ENTRIES_PER_AGENT)
                if len(sample) < 1000:
                    sample += entries[:10]
                request = {
                    "operations": [{"action": "set_body", "text": _common.index_text(entries)}],
                    "message": "bench load",
                }
                batch = parse_batch(request)
                applied = apply_batch(batch, lambda p, f=files0: f.get(p))
                paths = sorted(applied.files)
                rec1 = RevisionRecord(
                    1,
                    revision_oid(rec0.oid, 1, applied.files),
                    time.time(),
                    "api",
                    _message(_summary(batch, "api", paths), "api", 1, None, None),
                    paths,
                )
                store.record(
                    conn, memory_id, rec1, applied.files, applied.before, batch.model_dump_json()
                )
        progress(f"    {min(agents, first + LOAD_CHUNK):,}/{agents:,} agents")
    rv.state.conn.execute("ANALYZE")
    return time.perf_counter() - t0, sample


def facade_load(rv: Reverie, agents: int, seed: int) -> tuple[float, list[str]]:
    """The embedded arm: each agent created and written (one ``set_body``) by the facade."""
    gen = TextGen(seed)
    sample: list[str] = []
    t0 = time.perf_counter()
    for a in range(agents):
        name = f"agent-{a:05d}"
        rv.create_agent(name)
        entries = gen.entries(ENTRIES_PER_AGENT)
        if len(sample) < 1000:
            sample += entries[:10]
        body = {"action": "set_body", "text": _common.index_text(entries)}
        rv.memory_apply(name, {"operations": [body], "message": "bench load"})
        if (a + 1) % 200 == 0:
            progress(f"    {a + 1:,}/{agents:,} agents")
    return time.perf_counter() - t0, sample


def pg_sizes(rv: Reverie) -> dict[str, Any]:
    """Rows and bytes of the PostgreSQL database (index rows, whole database)."""
    conn = rv.state.conn
    lines = conn.execute("SELECT count(*) FROM memory_lines").fetchone()
    size = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return {"entries": int(lines[0]) if lines else 0, "bytes": int(size[0]) if size else 0}


def scale_point(
    run: Run, backends: Sequence[str], agents: int, n_queries: int, n_writes: int, seed: int
) -> dict[str, Any]:
    """Load ``agents`` agents on each of ``backends``; search and write on random agents."""
    rvs: dict[str, Reverie] = {}
    out: dict[str, Any] = {"agents": agents, "load_s": {}, "size": {}}
    sample: list[str] = []
    for backend in backends:
        progress(f"  loading {agents:,} agents on {backend}")
        rv = run.open(backend, f"scale-{agents}")
        load = pg_bulk_load if backend == PG else facade_load
        out["load_s"][backend], sample = load(rv, agents, seed)
        if backend == PG:
            out["size"][backend] = pg_sizes(rv)
        else:
            home = rv.settings.home
            out["size"][backend] = {
                "entries": agents * ENTRIES_PER_AGENT,
                "bytes": sum(p.stat().st_size for p in home.rglob("*") if p.is_file()),
            }
        rvs[backend] = rv
    rng = random.Random(seed)
    queries = TextGen(seed + 1).queries(n_queries + WARMUP, sample)
    targets = [f"agent-{rng.randrange(agents):05d}" for _ in queries]
    search = {
        b: (lambda q, rv=rv: rv.memory_search(targets[queries.index(q)], q, limit=8))
        for b, rv in rvs.items()
    }
    progress(f"  searching {agents:,} agents")
    found = search_arms(search, queries, seed) if len(rvs) == 2 else None
    if found is None:
        found = _search_one(search, queries)
    texts = TextGen(seed + 2).entries(n_writes + WARMUP)
    writers = [f"agent-{rng.randrange(agents):05d}" for _ in texts]
    progress(f"  writing to {agents:,} agents")
    writes = interleaved(
        {
            b: (
                lambda i, rv=rv: timed_write(
                    rv, writers[i], add_request(f"{texts[i]} [scale {i}]", i)
                )
            )
            for b, rv in rvs.items()
        },
        n_writes,
        WARMUP,
    )
    out["search"] = found
    out["write"] = {b: Stats.of_ns(s) for b, s in writes.items()}
    return out


def _search_one(
    arms: dict[str, Callable[[str], list[Any]]], queries: Sequence[str]
) -> dict[str, Any]:
    """:func:`search_arms` for a single arm (no agreement to measure)."""
    ((name, fn),) = arms.items()
    for q in queries[:WARMUP]:
        fn(q)
    samples, empty = [], 0
    for q in queries[WARMUP:]:
        t0 = time.perf_counter_ns()
        empty += not fn(q)
        samples.append(time.perf_counter_ns() - t0)
    return {"stats": {name: Stats.of_ns(samples)}, "empty": {name: empty}}


def bench_scale(
    run: Run, points: Sequence[int], sqlite_max: int, n_queries: int, n_writes: int, seed: int
) -> list[dict[str, Any]]:
    """Each size (agents) on both backends; on PostgreSQL alone above ``sqlite_max``."""
    return [
        scale_point(
            run, BACKENDS if agents <= sqlite_max else (PG,), agents, n_queries, n_writes, seed
        )
        for agents in points
    ]


# 4. LoCoMo history search


def bench_locomo(run: Run, quick: bool) -> dict[str, Any] | None:
    """``locomo_bench``'s ``reverie`` arm on both backends, asked the same questions."""
    import locomo_bench

    path = _common.locomo_path(None)
    if not path.is_file():
        progress(f"SKIP LoCoMo: {path} is absent")
        return None
    data = locomo_bench.load(path, quick)

    class Arm(locomo_bench.ReverieArm):
        """The facade arm on the settings of one backend."""

        def __init__(self, backend: str) -> None:
            settings = run.settings(backend, "locomo")
            super().__init__(data.records, settings.home)
            self.name = backend
            self.settings = settings

        def build(self, turns_by_agent: dict[str, list[Any]]) -> None:
            self.rv = Reverie(self.home, create=True, settings=self.settings)
            run.stack.callback(self.rv.close)
            summary = self.rv.import_conversations(
                locomo_bench.locomo.to_jsonl(self.records).splitlines()
            )
            want = sum(len(t) for t in turns_by_agent.values())
            if summary.messages != want:
                raise RuntimeError(f"{self.name}: imported {summary.messages} of {want}")

        def index_bytes(self) -> int | None:
            return None

    results = locomo_bench.run([Arm(b) for b in BACKENDS], data, repeat=1 if quick else 3)
    return {
        "questions": len(data.questions),
        "turns": data.n_turns,
        "arms": {r.name: r for r in results},
    }


# the report


def machine(root: Path) -> dict[str, str]:
    """The machine, with PostgreSQL's version."""
    info = _common.machine(root)
    info.pop("ripgrep", None)
    info["postgresql"] = _common.pg_version()
    return info


def _stat_row(label: str, by: dict[str, Stats], rate: dict[str, float] | None = None) -> list[str]:
    s, p = by[SQLITE], by[PG]
    rs = rate or {SQLITE: s.per_second, PG: p.per_second}
    return [
        label,
        ms(s.p50),
        ms(p.p50),
        fmt_ratio(p.p50, s.p50),
        ms(s.p95),
        ms(p.p95),
        fmt_ratio(p.p95, s.p95),
        f"{rs[SQLITE]:,.0f}",
        f"{rs[PG]:,.0f}",
        fmt_ratio(rs[PG], rs[SQLITE]),
    ]


_HEAD = [
    "case",
    "SQLite p50",
    "PG p50",
    "PG/SQLite",
    "SQLite p95",
    "PG p95",
    "PG/SQLite",
    "SQLite /s",
    "PG /s",
    "PG/SQLite",
]


_PACED_HEAD = [
    "offered /s",
    "SQLite done /s",
    "PG done /s",
    "SQLite p50",
    "PG p50",
    "PG/SQLite",
    "SQLite p95",
    "PG p95",
    "PG/SQLite",
    "SQLite p99",
    "PG p99",
]


def _paced_row(by: dict[str, Any]) -> list[str]:
    s, p = by[SQLITE]["stats"], by[PG]["stats"]
    return [
        f"{by[PG]['offered']:,.0f}",
        f"{by[SQLITE]['per_second']:,.0f}",
        f"{by[PG]['per_second']:,.0f}",
        ms(s.p50),
        ms(p.p50),
        fmt_ratio(p.p50, s.p50),
        ms(s.p95),
        ms(p.p95),
        fmt_ratio(p.p95, s.p95),
        ms(s.p99),
        ms(p.p99),
    ]


def targets(res: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    """Each target of issue 12: what was measured, and whether it is met (None: not run)."""
    out: list[tuple[str, str, bool | None]] = []
    if "write_single" in res:
        p50 = res["write_single"][PG].p50
        out.append(("write p50 < 5 ms (one process, one memory)", f"{ms(p50)} ms", p50 < 5))
    spread = res.get("write_concurrent", {}).get("100 memories")
    if spread:
        p50 = spread[PG]["stats"].p50
        out.append(
            (
                "write p50 < 5 ms (8 processes, 100 memories, as fast as they can)",
                f"{ms(p50)} ms",
                p50 < 5,
            )
        )
    for rate, by in res.get("write_paced", {}).items():
        p50 = by[PG]["stats"].p50
        out.append(
            (
                f"write p50 < 5 ms (8 processes, 100 memories, {rate} writes/s offered)",
                f"{ms(p50)} ms",
                p50 < 5,
            )
        )
    big = res.get("search", {}).get("10,000")
    if big:
        p95 = big["stats"][PG].p95
        out.append(("search p95 < 10 ms (10k entries, one memory)", f"{ms(p95)} ms", p95 < 10))
    for point in res.get("scale", []):
        if PG in point["search"]["stats"]:
            n = point["size"][PG]["entries"]
            p95 = point["search"]["stats"][PG].p95
            out.append(
                (f"search p95 < 20 ms ({n:,} entries in the database)", f"{ms(p95)} ms", p95 < 20)
            )
    lc = res.get("locomo")
    if lc:
        s, p = lc["arms"][SQLITE].mean(5), lc["arms"][PG].mean(5)
        out.append(
            ("Recall@5 within 5% of SQLite's", f"{p:.3f} vs {s:.3f} ({p / s:.3f}x)", p >= 0.95 * s)
        )
    return out


def report(res: dict[str, Any], info: dict[str, str], cmd: str) -> str:
    """The Markdown report."""
    parts = [f"Command: `{cmd}`", "", _common.machine_markdown(info), ""]
    parts += ["Targets (issue 12):", ""]
    parts.append(
        markdown_table(
            ["target", "PostgreSQL", "met"],
            [[t, v, "n/a" if ok is None else "yes" if ok else "NO"] for t, v, ok in targets(res)],
        )
    )
    rows: list[list[str]] = []
    if "write_single" in res:
        by = res["write_single"]
        rows.append(_stat_row("write, 1 process, 1 memory", by))
        if SQLITE_DURABLE in by:
            rows.append(
                _stat_row(
                    "the same, PG against SQLite durable (both fsync)",
                    {SQLITE: by[SQLITE_DURABLE], PG: by[PG]},
                )
            )
    for case, by in res.get("write_concurrent", {}).items():
        rows.append(
            _stat_row(
                f"write, 8 processes, {case}",
                {b: v["stats"] for b, v in by.items()},
                {b: v["per_second"] for b, v in by.items()},
            )
        )
    for size, r in res.get("search", {}).items():
        rows.append(_stat_row(f"search, {size} entries, one memory", r["stats"]))
    for point in res.get("scale", []):
        if len(point["search"]["stats"]) == 2:
            n = point["agents"] * ENTRIES_PER_AGENT
            rows.append(
                _stat_row(
                    f"search, {n:,} entries, {point['agents']:,} agents", point["search"]["stats"]
                )
            )
            rows.append(
                _stat_row(f"write, {n:,} entries, {point['agents']:,} agents", point["write"])
            )
    if rows:
        parts += [
            "",
            "Latency in ms; /s is writes or searches per second (8 processes: all "
            "writes over the wall time; otherwise 1 / mean).",
            "",
            markdown_table(_HEAD, rows),
        ]
    paced = res.get("write_paced", {})
    if paced:
        parts += [
            "",
            "8 processes over 100 memories at a given load: writes arrive at random (a Poisson "
            "process per writer, the same schedule on both backends), and a write's latency "
            "runs from when it was due to its answer, waits behind the writer's earlier writes "
            "included. Offered: the writes scheduled per second; done: all the writes over the "
            "wall time.",
            "",
            markdown_table(_PACED_HEAD, [_paced_row(by) for by in paced.values()]),
        ]
    before = [(size, r) for size, r in res.get("search", {}).items() if PG_BEFORE in r["stats"]]
    if before:
        parts += [
            "",
            "PostgreSQL memory search before and after migration 103 (postings), the same "
            "database and queries, arms alternating"
            + (", after VACUUM (ANALYZE)" if before[0][1].get("vacuumed") else "")
            + ":",
            "",
            markdown_table(
                ["memory", "before p50", "after p50", "after/before", "before p95",
                 "after p95", "after/before", "same top 8"],
                [
                    [
                        f"{size} entries",
                        ms(r["stats"][PG_BEFORE].p50),
                        ms(r["stats"][PG].p50),
                        fmt_ratio(r["stats"][PG].p50, r["stats"][PG_BEFORE].p50),
                        ms(r["stats"][PG_BEFORE].p95),
                        ms(r["stats"][PG].p95),
                        fmt_ratio(r["stats"][PG].p95, r["stats"][PG_BEFORE].p95),
                        f"{r['pg_same_before']:.0%}",
                    ]
                    for size, r in before
                ],
            ),
        ]  # fmt: skip
    pg_only = [p for p in res.get("scale", []) if len(p["search"]["stats"]) == 1]
    for point in pg_only:
        s, w = point["search"]["stats"][PG], point["write"][PG]
        size = point["size"][PG]
        parts += [
            "",
            f"PostgreSQL alone at {point['agents']:,} agents, "
            f"{size['entries']:,} index rows, database {size['bytes'] / 2**30:.2f} GiB, "
            f"loaded in {point['load_s'][PG]:.0f} s:",
            "",
        ]
        parts.append(
            markdown_table(
                ["call", "n", "p50", "p95", "p99", "mean"],
                [
                    [name, str(x.n), ms(x.p50), ms(x.p95), ms(x.p99), ms(x.mean)]
                    for name, x in (("search", s), ("write (add)", w))
                ],
            )
        )
    if res.get("search") or res.get("scale"):
        detail = []
        for size, r in res.get("search", {}).items():
            detail.append(
                [
                    f"{size} entries",
                    f"{r['top1_agree']:.0%}",
                    f"{r['top8_jaccard']:.2f}",
                    f"{r['build_s'][SQLITE]:.1f}",
                    f"{r['build_s'][PG]:.1f}",
                    "",
                    "",
                ]
            )
        for point in res.get("scale", []):
            r = point["search"]
            if "top1_agree" in r:
                detail.append(
                    [
                        f"{point['agents']:,} agents",
                        f"{r['top1_agree']:.0%}",
                        f"{r['top8_jaccard']:.2f}",
                        f"{point['load_s'][SQLITE]:.1f}",
                        f"{point['load_s'][PG]:.1f}",
                        f"{point['size'][SQLITE]['bytes'] / 2**20:,.0f}",
                        f"{point['size'][PG]['bytes'] / 2**20:,.0f}",
                    ]
                )
        parts += [
            "",
            "How alike the rankings are (same first hit; Jaccard of the top-8 "
            "lines), the build or load time in seconds and the data's size on disk (the "
            "SQLite home with its git repositories; the PostgreSQL database):",
            "",
        ]
        parts.append(
            markdown_table(
                [
                    "memory",
                    "same first hit",
                    "top-8 Jaccard",
                    "SQLite build s",
                    "PG build s",
                    "SQLite MiB",
                    "PG MiB",
                ],
                detail,
            )
        )
    lc = res.get("locomo")
    if lc:
        s, p = lc["arms"][SQLITE], lc["arms"][PG]
        parts += [
            "",
            f"LoCoMo history search ({lc['questions']:,} questions, "
            f"{lc['turns']:,} turns), `locomo_bench.py`'s reverie arm:",
            "",
        ]
        parts.append(
            markdown_table(
                ["backend", "Recall@1", "Recall@5", "Recall@10", "p50 ms", "p95 ms", "import s"],
                [
                    [
                        r.name,
                        f"{r.mean(1):.3f}",
                        f"{r.mean(5):.3f}",
                        f"{r.mean(10):.3f}",
                        ms(r.stats.p50),
                        ms(r.stats.p95),
                        f"{r.build_seconds:.1f}",
                    ]
                    for r in (s, p)
                ]
                + [
                    [
                        "PG/SQLite",
                        fmt_ratio(p.mean(1), s.mean(1)),
                        fmt_ratio(p.mean(5), s.mean(5)),
                        fmt_ratio(p.mean(10), s.mean(10)),
                        fmt_ratio(p.stats.p50, s.stats.p50),
                        fmt_ratio(p.stats.p95, s.stats.p95),
                        fmt_ratio(p.build_seconds, s.build_seconds),
                    ]
                ],
            )
        )
    return "\n".join(parts)  # fmt: skip


def payload(res: dict[str, Any], info: dict[str, str], cmd: str, params: dict[str, Any]) -> Any:
    """The results as plain JSON values."""

    def plain(x: Any) -> Any:
        if isinstance(x, Stats):
            return x.to_dict()
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, list | tuple):
            return [plain(v) for v in x]
        if hasattr(x, "to_dict"):
            d = x.to_dict()
            return {k: d[k] for k in ("name", "recall@1", "recall@5", "recall@10", "latency_ms")}
        return x

    met = [{"target": t, "value": v, "met": ok} for t, v, ok in targets(res)]
    return {"command": cmd, "machine": info, "params": params, "targets": met, **plain(res)}


# main


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sections, print the report."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a small, fast smoke run")
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    p.add_argument("--save", type=Path, help="also write the JSON report to this file")
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--writes", type=int, help="timed writes per backend, one process (300)")
    p.add_argument("--procs", type=int, default=8, help="writer processes at once (8)")
    p.add_argument("--proc-writes", type=int, help="timed writes per writer process (40)")
    p.add_argument(
        "--rates",
        help="total writes/s offered by the 8 paced processes, comma separated (100,200,400,600)",
    )
    p.add_argument("--paced-seconds", type=float, help="how long each paced rate runs, seconds (5)")
    p.add_argument("--queries", type=int, help="timed queries per memory (200)")
    p.add_argument("--scale-agents", help="agents per scale point, comma separated (1000,10000)")
    p.add_argument("--sqlite-scale-max", type=int, help="largest point run on SQLite (10000)")
    p.add_argument(
        "--skip",
        default="",
        help="sections to leave out: write_single,write_concurrent,write_paced,search,scale,locomo",
    )
    p.add_argument(
        "--no-vacuum",
        action="store_true",
        help="search the PostgreSQL memories right after the fill, not vacuumed",
    )
    p.add_argument(
        "--no-before-arm",
        action="store_true",
        help="search without the third arm, the ranking from before migration 103",
    )
    p.add_argument("--dir", type=Path, help="where to create the scratch data (system temp)")
    args = p.parse_args(argv)
    q = args.quick
    writes = args.writes or (40 if q else 300)
    proc_writes = args.proc_writes or (8 if q else 40)
    n_queries = args.queries or (40 if q else 200)
    rates = [float(x) for x in (args.rates or ("100" if q else "100,200,400,600")).split(",")]
    paced_seconds = args.paced_seconds or (1.0 if q else 5.0)
    points = [int(x) for x in (args.scale_agents or ("100,300" if q else "1000,10000")).split(",")]
    sqlite_max = args.sqlite_scale_max or (100 if q else 10_000)
    sizes = (1_000, 10_000) if not q else (1_000, 3_000)
    skip = set(filter(None, args.skip.split(",")))
    cmd = "python bench/pg_bench.py " + " ".join(sys.argv[1:] if argv is None else argv)
    params = {
        "seed": args.seed,
        "writes": writes,
        "procs": args.procs,
        "proc_writes": proc_writes,
        "paced_rates": rates,
        "paced_seconds": paced_seconds,
        "queries": n_queries,
        "search_sizes": list(sizes),
        "search_vacuum": not args.no_vacuum,
        "search_before_arm": not args.no_before_arm,
        "scale_agents": points,
        "sqlite_scale_max": sqlite_max,
        "entries_per_agent": ENTRIES_PER_AGENT,
    }
    root = Path(tempfile.mkdtemp(prefix="reverie-pg-bench-", dir=args.dir))
    info = machine(root)
    load_start = info.get("load avg", "?")
    res: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, root, ignore_errors=True)
        for name, section in _sections(args, writes, proc_writes, n_queries, sizes,
                                       points, sqlite_max, rates, paced_seconds):  # fmt: skip
            if name in skip:
                continue
            progress(f"{name} ...")
            t0 = time.perf_counter()
            with contextlib.ExitStack() as inner:  # each section's homes go when it ends
                res[name] = section(Run(root, inner))
            progress(f"{name} done in {time.perf_counter() - t0:.0f} s")
        res = {k: v for k, v in res.items() if v is not None}
    info = machine(Path(tempfile.gettempdir()))
    info.pop("data dir", None)
    info["load avg"] = f"{load_start} at start, {info.get('load avg', '?')} at end"
    out = payload(res, info, cmd.strip(), params)
    if args.save is not None:
        args.save.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    _common.emit(args.json, out, report(res, info, cmd.strip()))
    return 0


def _sections(
    args: argparse.Namespace,
    writes: int,
    proc_writes: int,
    n_queries: int,
    sizes: Sequence[int],
    points: Sequence[int],
    sqlite_max: int,
    rates: Sequence[float],
    paced_seconds: float,
) -> Iterator[tuple[str, Callable[[Run], Any]]]:
    """The sections in the order they run, each a function of a fresh :class:`Run`."""
    seed = args.seed
    yield "write_single", lambda run: bench_write_single(run, writes, seed)
    yield "write_concurrent", lambda run: bench_write_concurrent(run, args.procs, proc_writes, seed)
    yield (
        "write_paced",
        lambda run: bench_write_paced(run, args.procs, rates, paced_seconds, seed),
    )
    yield (
        "search",
        lambda run: bench_search(
            run, sizes, n_queries, seed, not args.no_vacuum, not args.no_before_arm
        ),
    )
    yield (
        "scale",
        lambda run: bench_scale(run, points, sqlite_max, n_queries, max(50, writes // 3), seed),
    )
    yield "locomo", lambda run: bench_locomo(run, args.quick)


if __name__ == "__main__":
    raise SystemExit(main())
