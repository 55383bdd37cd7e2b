"""Concurrent writes to one memory serialize (SPEC W8) and stale ones are refused (W6).

Processes (real ``_writer.py`` subprocesses) and threads (sharing one ``Reverie``) race through
read-modify-write cycles on one memory: read the text and its revision, then write at that
revision, retrying on ``RevisionConflict``. Each landed write adds a unique entry and moves a
counter line from the value it read to that value plus one, so a lost update shows twice: as
a missing entry, and as a counter behind the number of writes.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _writer import (
    HERE,
    RmwResult,
    check_git,
    check_index,
    git_status,
    history_oids,
    keyed_writes,
    memory_repo,
    rmw_cycles,
    writer_env,
)

from reverie import Reverie, RevisionConflict

AGENT = "ada"
WORKERS = 4
CYCLES = 25


@pytest.fixture
def new_home(home: Path) -> Path:
    """A home with agent ada, on the backend under test."""
    with Reverie(home, create=True) as r:
        r.create_agent(AGENT)
    return home


def race(home: Path, mode: str, count: int) -> list[Any]:
    """Run ``WORKERS`` subprocesses in ``mode``; start them together; return their output."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE), mode, str(home), AGENT, f"p{i}", str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=writer_env(),
        )
        for i in range(WORKERS)
    ]
    try:
        for p in procs:  # every worker has opened the home before any starts writing
            assert p.stdout is not None
            assert p.stdout.readline().strip() == "ready", p.communicate(timeout=60)[1]
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        results = []
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
            results.append(json.loads(out))
        return results
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def check_rmw(home: Path, results: list[RmwResult]) -> None:
    """No lost update, a gap-free history of exactly one revision per landed write."""
    successes = [s for res in results for s in res.successes]
    total = WORKERS * CYCLES
    assert len(successes) == total
    # every landed write got its own revision, and together they are 1..total
    assert sorted(rev for rev, _, _ in successes) == list(range(1, total + 1))
    # each write moved the counter from what it read: the count it wrote is its revision
    assert all(count == rev for rev, _, count in successes)
    # stale writes were refused (the workers really raced), each with the current revision
    assert sum(res.conflicts for res in results) > 0
    assert [bad for res in results for bad in res.bad_conflicts] == []
    with Reverie(home) as r:
        on_git = r.settings.database_url is None
        assert len(history_oids(r, AGENT)) == total + 1  # revision 0 is the new memory
        final = r.memory_read(AGENT)
        assert final.revision == total
        for _, entry, _ in successes:
            assert final.text.count(f"- {entry}\n") == 1, entry
        assert final.text.count("- counter [") == 1
        assert f"- counter [{total}]\n" in final.text
        # and at every revision in between: r entries and the counter at r
        for rev in range(total + 1):
            text = r.memory_read(AGENT, revision=rev).text
            assert text.count("- entry ") == rev
            assert rev == 0 or f"- counter [{rev}]\n" in text
        if on_git:
            repo = memory_repo(home, AGENT)
            assert check_index(r, AGENT, repo) == []
    if on_git:
        assert check_git(repo) == []
        assert git_status(repo) == ""


def test_w6_w8_processes_racing_read_modify_write_lose_no_update(new_home: Path) -> None:
    """Four processes, 25 cycles each, at the revision they read: none is lost or merged."""
    home = new_home
    results = [
        RmwResult(
            d["worker"], [tuple(s) for s in d["successes"]], d["conflicts"], d["bad_conflicts"]
        )
        for d in race(home, "rmw", CYCLES)
    ]
    check_rmw(home, results)


def test_w6_w8_threads_sharing_one_reverie_lose_no_update(new_home: Path) -> None:
    """Four threads on one ``Reverie`` instance, 25 cycles each: the same guarantees."""
    home = new_home
    start = threading.Barrier(WORKERS)
    with Reverie(home) as shared:
        shared.memory_read(AGENT)

        def work(i: int) -> RmwResult:
            shared.memory_read(AGENT)  # this thread's connection and repository handle
            start.wait(timeout=60)
            return rmw_cycles(shared, AGENT, f"t{i}", CYCLES, random.Random(i))

        with ThreadPoolExecutor(WORKERS) as pool:
            results = list(pool.map(work, range(WORKERS)))
    check_rmw(home, results)


def test_w6_stale_write_is_refused_with_the_current_revision(new_home: Path) -> None:
    """A write at an old revision is refused, not merged, and names the current revision."""
    home = new_home
    with Reverie(home) as r:
        r.memory_apply(AGENT, {"action": "add", "text": "first"}, expected_revision=0)
        with pytest.raises(RevisionConflict) as caught:
            r.memory_apply(AGENT, {"action": "add", "text": "second"}, expected_revision=0)
        assert caught.value.code == "revision_conflict"
        assert caught.value.details["current_revision"] == 1
        assert "second" not in r.memory_read(AGENT).text
        assert r.memory_read(AGENT).revision == 1


def test_w7_w8_one_key_sent_by_racing_processes_applies_once(new_home: Path) -> None:
    """Four processes send the same ten keyed writes in different orders: each applies once."""
    home = new_home
    keys = 10
    results = race(home, "keyed", keys)
    by_key: dict[int, list[dict[str, Any]]] = {}
    for answers in results:
        for a in answers:
            by_key.setdefault(a["key"], []).append(a)
    assert sorted(by_key) == list(range(keys))
    for answers in by_key.values():
        assert len({a["revision"] for a in answers}) == 1, answers  # one revision per key
        assert sum(not a["replayed"] for a in answers) == 1, answers  # applied by one sender
        assert all(a["changed"] for a in answers)
    assert sorted(a[0]["revision"] for a in by_key.values()) == list(range(1, keys + 1))
    with Reverie(home) as r:
        text = r.memory_read(AGENT).text
        assert r.memory_read(AGENT).revision == keys
        assert all(text.count(f"- keyed entry {k}\n") == 1 for k in range(keys))
        if r.settings.database_url is None:
            assert check_index(r, AGENT, memory_repo(home, AGENT)) == []
            assert check_git(memory_repo(home, AGENT)) == []


def test_w7_keyed_writes_from_threads_apply_once(new_home: Path) -> None:
    """The same, with four threads sharing one ``Reverie``."""
    home = new_home
    with Reverie(home) as shared, ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(lambda i: keyed_writes(shared, AGENT, f"t{i}", 10), range(4)))
    applied = [a for answers in results for a in answers if not a["replayed"]]
    assert sorted(a["key"] for a in applied) == list(range(10))
    assert sorted(a["revision"] for a in applied) == list(range(1, 11))
