"""Apply time and lock hold of large batches, and what a concurrent one-line write waits.

For each batch size, a fresh home gets one batch of ``add`` operations (distinct entries, all
under one section) through ``Reverie.memory_apply``, in two arms:

* ``accepted``: ``MEMORY.md``'s cap raised to 64 MiB, so the batch is applied and committed;
* ``refused``: the default 64 KiB cap, so the batch is applied in memory and refused by its
  size (under the lock, as every check of what a batch would write is).

Measured: the call's time, how long the memory's lock was held (``MemoryStore.lock`` wrapped),
and, in the accepted arm, a one-line write to the same memory started from a second handle
once the batch holds the lock: its latency, and whether it failed (the lock's timeout is 30 s).
Issue 10's figures before the fix: 2,000 adds 1.1 s, 8,000 9.6 s, 16,000 39 s, and a 24,000
batch held the lock past 30 s, so a concurrent one-line write failed.

Run: ``PYTHONPATH=src python bench/apply_bench.py [--sizes 2000,8000,16000,24000] [--json]``.
To measure another version of the code, point ``PYTHONPATH`` at its ``src``.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _common
from _common import markdown_table, progress
from reverie.api import Reverie
from reverie.config import Settings
from reverie.errors import ReverieError
from reverie.store.memories import MemoryStore

AGENT = "bench"


def _batch(n: int) -> dict[str, Any]:
    return {
        "operations": [
            {
                "action": "add",
                "text": f"fact {i}: the deploy pipeline step {i}",
                "section": "Decisions",
            }
            for i in range(n)
        ]
    }


class LockClock:
    """Wraps ``MemoryStore.lock`` to time each hold and signal the first acquisition."""

    def __init__(self) -> None:
        self.holds: list[float] = []
        self.acquired = threading.Event()
        self._original = MemoryStore.lock

    def __enter__(self) -> LockClock:
        original = self._original
        clock = self

        @contextlib.contextmanager
        def timed(store: MemoryStore, memory_id: str) -> Iterator[None]:
            with original(store, memory_id):
                started = time.perf_counter()
                clock.acquired.set()
                try:
                    yield
                finally:
                    clock.holds.append(time.perf_counter() - started)

        MemoryStore.lock = timed  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        MemoryStore.lock = self._original  # type: ignore[method-assign]


def measure(n: int, root: Path, *, accepted: bool) -> dict[str, Any]:
    home = root / f"{'accepted' if accepted else 'refused'}-{n}"
    overrides = {"max_index_bytes": 64 * 2**20} if accepted else {}
    with Reverie(settings=Settings.load(home, **overrides), create=True) as rv:
        rv.create_agent(AGENT)
    batch = _batch(n)
    row: dict[str, Any] = {"ops": n, "arm": "accepted" if accepted else "refused"}
    concurrent: dict[str, Any] = {}

    def one_line(clock: LockClock) -> None:
        with Reverie(settings=Settings.load(home, **overrides)) as other:
            clock.acquired.wait()  # the batch holds the lock now
            started = time.perf_counter()
            try:
                other.memory_apply(AGENT, {"action": "add", "text": "a one-line write"})
                concurrent["outcome"] = "written"
            except ReverieError as exc:
                concurrent["outcome"] = exc.code
            concurrent["seconds"] = time.perf_counter() - started

    with Reverie(settings=Settings.load(home, **overrides)) as rv, LockClock() as clock:
        thread = threading.Thread(target=one_line, args=(clock,)) if accepted else None
        if thread is not None:
            thread.start()
        started = time.perf_counter()
        try:
            out = rv.memory_apply(AGENT, batch, writer="admin")
            row["outcome"] = f"revision {out.revision}"
        except ReverieError as exc:
            row["outcome"] = exc.code
        row["seconds"] = time.perf_counter() - started
        row["lock_hold_seconds"] = clock.holds[0] if clock.holds else None
        if thread is not None:
            thread.join()
    row["concurrent_one_line"] = concurrent or None
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,8000,16000,24000")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="apply-bench-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            for accepted in (True, False):
                progress(f"{n} adds, {'accepted' if accepted else 'refused'}")
                rows.append(measure(n, Path(tmp), accepted=accepted))
        info = _common.machine(Path(tmp))
    table = markdown_table(
        ["ops", "arm", "outcome", "call", "lock held", "concurrent one-line write"],
        [
            [
                r["ops"],
                r["arm"],
                r["outcome"],
                f"{r['seconds']:.2f} s",
                f"{r['lock_hold_seconds']:.2f} s" if r["lock_hold_seconds"] is not None else "-",
                f"{r['concurrent_one_line']['outcome']} after "
                f"{r['concurrent_one_line']['seconds']:.2f} s"
                if r["concurrent_one_line"]
                else "-",
            ]
            for r in rows
        ],
    )
    _common.emit(
        args.json, {"machine": info, "rows": rows}, _common.machine_markdown(info) + "\n\n" + table
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
