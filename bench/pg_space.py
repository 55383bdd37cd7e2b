"""Where a PostgreSQL database's space goes: rows, bytes and bytes per row of each table and
index, and the average width of the search postings' columns.

    PYTHONPATH=src python bench/pg_space.py --agents 1000            # load, measure, drop
    PYTHONPATH=src python bench/pg_space.py --agents 1000 --keep NAME  # keep it as NAME
    PYTHONPATH=src python bench/pg_space.py --measure NAME           # an existing database

The load is ``pg_bench.py``'s scale load (``pg_bulk_load``: ``agents`` agents of 100 entries,
the same seeded text for a given ``--seed``), then ``VACUUM ANALYZE``. ``--measure`` opens the
database through the code on ``PYTHONPATH`` first, so a database made by older code is
migrated in place before it is measured (``--vacuum-full`` then rewrites every table, to tell
what the migration left behind from what the new rows take).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
import pg_bench
from reverie.api import Reverie
from reverie.config import Settings

#: What the search postings' columns hold on average, by the names each version uses.
COLUMNS = {
    "memory_postings": ("memory_id", "word", "key", "line_id", "w"),
    "memory_word_counts": ("memory_id", "word", "key", "n"),
    "memory_lines": ("memory_id", "path", "text", "topic", "tsv", "words"),
}


def measure(url: str) -> dict[str, Any]:
    """Every table of the public schema over 1 MiB, with its indexes and TOAST."""
    import psycopg

    out: dict[str, Any] = {"relations": [], "columns": {}}
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        out["database"] = int(row[0]) if row else 0
        tables = conn.execute(
            "SELECT c.oid, c.relname, c.reltuples, pg_relation_size(c.oid), "
            "pg_table_size(c.oid) - pg_relation_size(c.oid) FROM pg_class c "
            "JOIN pg_namespace s ON s.oid = c.relnamespace "
            "WHERE s.nspname = 'public' AND c.relkind = 'r' "
            "AND pg_total_relation_size(c.oid) > 1048576 "
            "ORDER BY pg_total_relation_size(c.oid) DESC"
        ).fetchall()
        for oid, name, _, heap, toast in tables:
            count = conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()
            rows = int(count[0]) if count else 0
            out["relations"].append(
                {"table": name, "name": name, "kind": "heap", "rows": rows, "bytes": int(heap)}
            )
            if toast > 0:
                out["relations"].append(
                    {
                        "table": name,
                        "name": "(toast, fsm, vm)",
                        "kind": "toast",
                        "rows": None,
                        "bytes": int(toast),
                    }
                )
            for index, size in conn.execute(
                "SELECT i.indexrelid::regclass::text, pg_relation_size(i.indexrelid) "
                "FROM pg_index i WHERE i.indrelid = %s ORDER BY 2 DESC",
                (oid,),
            ).fetchall():
                out["relations"].append(
                    {
                        "table": name,
                        "name": index,
                        "kind": "index",
                        "rows": rows,
                        "bytes": int(size),
                    }
                )
        for table, names in COLUMNS.items():
            have = {
                r[0]
                for r in conn.execute(
                    "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) "
                    "AND attnum > 0 AND NOT attisdropped",
                    (table,),
                ).fetchall()
            }
            cols = [c for c in names if c in have]
            if not cols:
                continue
            widths = ", ".join(f"avg(pg_column_size({c}))" for c in cols)
            row = conn.execute(
                f"SELECT avg(pg_column_size(t.*)), {widths} FROM "
                f"(SELECT * FROM {table} LIMIT 200000) t"
            ).fetchone()
            if row and row[0] is not None:
                out["columns"][table] = {"(row)": float(row[0])} | {
                    c: float(v) for c, v in zip(cols, row[1:], strict=True)
                }
    return out


def markdown(res: dict[str, Any]) -> str:
    """The measurement as Markdown tables."""
    lines = [
        f"database: {res['database'] / 2**20:,.1f} MiB",
        "",
        "| table | relation | rows | MiB | bytes per row |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for r in res["relations"]:
        rows = r["rows"]
        per = f"{r['bytes'] / rows:,.1f}" if rows else ""
        count = f"{rows:,}" if rows is not None else ""
        lines.append(
            f"| {r['table']} | {r['name']} | {count} | {r['bytes'] / 2**20:,.1f} | {per} |"
        )
    for table, cols in res["columns"].items():
        lines += [
            "",
            f"{table}, average bytes (`pg_column_size`): "
            + ", ".join(f"{c} {v:.1f}" for c, v in cols.items()),
        ]
    return "\n".join(lines)


def open_and_close(url: str, home: Path) -> None:
    """Open the database through this code (its migrations run), then close it."""
    settings = Settings.load(home, database_url=url)
    Reverie(settings.home, create=True, settings=settings).close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", type=int, default=1000)
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--keep", help="load into this database and keep it (reverie_...)")
    p.add_argument("--measure", help="measure this existing database (reverie_...) only")
    p.add_argument("--vacuum-full", action="store_true", help="VACUUM FULL before measuring")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    started = time.time()
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        if args.measure:
            url = f"{_common.PG_SERVER}/{args.measure}"
            t0 = time.perf_counter()
            open_and_close(url, Path(tmp) / "home")
            opened = time.perf_counter() - t0
            loaded = None
        else:
            name = args.keep or f"reverie_space_{int(started)}"
            if args.keep:
                _common._pg_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
                _common._pg_admin(f"CREATE DATABASE {name}")
                url = f"{_common.PG_SERVER}/{name}"
            else:
                url = stack.enter_context(_common.pg_scratch_database(name))
            settings = Settings.load(Path(tmp) / "home", database_url=url)
            rv = Reverie(settings.home, create=True, settings=settings)
            try:
                loaded, _ = pg_bench.pg_bulk_load(rv, args.agents, args.seed)
            finally:
                rv.close()
            opened = None
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM FULL ANALYZE" if args.vacuum_full else "VACUUM ANALYZE")
        res = measure(url)
        res |= {"load_s": loaded, "open_s": opened, "agents": args.agents}
    if args.json:
        json.dump(res, sys.stdout, indent=1)
    else:
        if loaded is not None:
            print(f"loaded {args.agents:,} agents in {loaded:.1f} s")
        if opened is not None:
            print(f"opened (migrations run) in {opened:.1f} s")
        print(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
