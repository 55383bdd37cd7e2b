"""Group commit: the writes of one process queued on a memory's lock are written as one group
(SPEC W1, W6-W8), and a batch built under the lock (a chat ``!remember``, C3).

Each write of a group keeps its own checks, revision, commit and answer; the group writes the
marker once, moves the branch once and records everything in one state transaction. A group is
formed on purpose here: the test holds the memory's lock while its writers queue behind it,
then lets go. The crash test runs this file as a script: a writer process that writes one group,
acknowledges it, then is killed (SIGKILL) at a chosen point of a second group.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _writer import MARKER, check_git, check_index, git_status, history_oids, writer_env

from reverie import Reverie, RevisionConflict
from reverie.core.chat import parse_command
from reverie.errors import RefusedInput, StorageFault
from reverie.store.dbmemories import DatabaseMemoryStore
from reverie.store.gitrepo import GitRepo
from reverie.store.memories import GROUP_MAX, MemoryStore, WriteOutcome

AGENT = "ada"
THIS = Path(__file__).resolve()


def add(text: str) -> dict[str, Any]:
    return {"operations": [{"action": "add", "text": text, "section": "Notes"}]}


def memory_of(r: Reverie) -> str:
    return r.state.memory_of(r.agent(AGENT).id)


def write_as_group(
    r: Reverie, calls: list[Callable[[], WriteOutcome]]
) -> list[WriteOutcome | Exception]:
    """Run ``calls`` (writes to ada's memory) on threads that queue, in this order, behind the
    lock this thread holds, then release it: the first to get it writes them all as a group."""
    store, memory_id = r.memories, memory_of(r)
    assert isinstance(store, MemoryStore)
    results: list[WriteOutcome | Exception | None] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    with store.lock(memory_id):
        for n, thread in enumerate(threads, 1):
            thread.start()
            deadline = time.monotonic() + 10
            while len(store._waiting.get(memory_id, [])) < n:  # queued, in order
                assert time.monotonic() < deadline, "a writer never queued"
                time.sleep(0.001)
    for thread in threads:
        thread.join(30)
    assert all(res is not None for res in results)
    return [res for res in results if res is not None]


def apply(r: Reverie, request: Any, **kwargs: Any) -> Callable[[], WriteOutcome]:
    return lambda: r.memory_apply(AGENT, request, **kwargs)


@pytest.fixture
def counted(rv: Reverie, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times the marker was written and the branch moved (a lone commit or a
    group's advance)."""
    calls = {"marker": 0, "moves": 0}
    begin, advance = MemoryStore._begin, GitRepo.advance

    def counting_begin(self: MemoryStore, *args: Any) -> None:
        calls["marker"] += 1
        begin(self, *args)

    def counting_advance(self: GitRepo, *args: Any) -> None:  # a lone commit calls it too
        calls["moves"] += 1
        advance(self, *args)

    monkeypatch.setattr(MemoryStore, "_begin", counting_begin)
    monkeypatch.setattr(GitRepo, "advance", counting_advance)
    return calls


def test_w8_concurrent_writers_make_gap_free_revisions_and_keep_every_write(rv: Reverie) -> None:
    """W8: 6 threads x 4 writes at once: revisions 1..24 without a gap, every line kept."""
    lines = [f"fact {t}-{i}" for t in range(6) for i in range(4)]

    def writer(t: int) -> list[int]:
        return [rv.memory_apply(AGENT, add(f"fact {t}-{i}")).revision for i in range(4)]

    results: dict[int, list[int]] = {}
    threads = [
        threading.Thread(target=lambda t=t: results.__setitem__(t, writer(t))) for t in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    acknowledged = sorted(rev for revs in results.values() for rev in revs)
    assert acknowledged == list(range(1, 25))
    assert len(history_oids(rv, AGENT)) == 25
    text = rv.memory_read(AGENT).text
    assert all(f"- {line}" in text for line in lines)
    if not isinstance(rv.memories, DatabaseMemoryStore):
        assert check_git(rv.memories.repo(memory_of(rv)).path) == []


@pytest.mark.sqlite_only
def test_w1_w8_a_group_is_one_marker_one_branch_move_and_a_chain_of_commits(
    rv: Reverie, counted: dict[str, int]
) -> None:
    before = rv.memory_read(AGENT).revision
    outcomes = write_as_group(rv, [apply(rv, add(f"grouped {i}")) for i in range(4)])
    assert [o.revision for o in outcomes if isinstance(o, WriteOutcome)] == [
        before + 1 + i for i in range(4)
    ]
    assert counted == {"marker": 1, "moves": 1}
    repo = rv.memories.repo(memory_of(rv))
    oids = history_oids(rv, AGENT)
    for parent, child in itertools.pairwise(oids):  # each commit's parent: the one before
        assert repo.commit_info(child).parent == parent
    for i, oid in enumerate(oids[before + 1 :]):  # each write its own commit, with its own line
        assert f"- grouped {i}" in (repo.read("MEMORY.md", oid) or "")
        assert f"- grouped {i + 1}" not in (repo.read("MEMORY.md", oid) or "")
    assert not (repo.path / ".git" / MARKER).exists()
    assert check_git(repo.path) == [] and git_status(repo.path) == ""
    assert check_index(rv, AGENT, repo.path) == []


@pytest.mark.sqlite_only
def test_w8_a_lone_write_moves_the_branch_with_its_commit(
    rv: Reverie, counted: dict[str, int]
) -> None:
    rv.memory_apply(AGENT, add("alone"))
    assert counted == {"marker": 1, "moves": 1}


@pytest.mark.sqlite_only
def test_w8_a_group_holds_at_most_group_max_writes(rv: Reverie, counted: dict[str, int]) -> None:
    outcomes = write_as_group(rv, [apply(rv, add(f"many {i}")) for i in range(GROUP_MAX + 2)])
    assert [o.revision for o in outcomes if isinstance(o, WriteOutcome)] == list(
        range(1, GROUP_MAX + 3)
    )
    assert counted["marker"] == 2


@pytest.mark.sqlite_only
def test_w2_one_refused_write_in_a_group_does_not_refuse_the_others(rv: Reverie) -> None:
    bad = {"operations": [{"action": "replace", "old": "not in memory", "text": "x"}]}
    outcomes = write_as_group(
        rv, [apply(rv, add("first")), apply(rv, bad), apply(rv, add("third"))]
    )
    first, refused, third = outcomes
    assert isinstance(refused, RefusedInput)
    assert isinstance(first, WriteOutcome) and isinstance(third, WriteOutcome)
    assert (first.revision, third.revision) == (1, 2)  # built on the last good state
    assert len(history_oids(rv, AGENT)) == 3
    text = rv.memory_read(AGENT).text
    assert "- first" in text and "- third" in text


@pytest.mark.sqlite_only
def test_w6_a_stale_expected_revision_in_a_group_is_refused_with_the_conflict(
    rv: Reverie,
) -> None:
    start = rv.memory_read(AGENT).revision
    outcomes = write_as_group(
        rv,
        [
            apply(rv, add("lands"), expected_revision=start),
            apply(rv, add("stale"), expected_revision=start),
            apply(rv, add("current"), expected_revision=start + 1),
        ],
    )
    lands, stale, current = outcomes
    assert isinstance(stale, RevisionConflict)
    assert stale.details["current_revision"] == start + 1
    assert isinstance(lands, WriteOutcome) and lands.revision == start + 1
    assert isinstance(current, WriteOutcome) and current.revision == start + 2
    assert "- stale" not in rv.memory_read(AGENT).text


@pytest.mark.sqlite_only
def test_w7_a_key_replayed_inside_a_group(rv: Reverie) -> None:
    outcomes = write_as_group(
        rv,
        [
            apply(rv, add("keyed"), key="k1"),
            apply(rv, add("keyed"), key="k1"),  # the same write again: its answer
            apply(rv, add("other"), key="k1"),  # the key reused for another write
            apply(rv, add("after"), key="k2"),
        ],
    )
    first, again, reused, after = outcomes
    assert isinstance(first, WriteOutcome) and isinstance(again, WriteOutcome)
    assert (again.revision, again.replayed, first.replayed) == (first.revision, True, False)
    assert isinstance(reused, RefusedInput) and reused.code == "idempotency_key_reused"
    assert isinstance(after, WriteOutcome) and after.revision == first.revision + 1
    assert rv.memory_read(AGENT).text.count("- keyed") == 1
    assert rv.memory_apply(AGENT, add("keyed"), key="k1").replayed  # and after the group


@pytest.mark.sqlite_only
def test_w1_w8_a_failed_state_transaction_refuses_the_whole_group(
    rv: Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reverie.store.state import SQLiteState

    before = rv.memory_read(AGENT).revision
    repo = rv.memories.repo(memory_of(rv))
    head = repo.head()
    record = SQLiteState.record_revision
    seen = []

    def failing(self: SQLiteState, *args: Any) -> None:
        seen.append(1)
        if len(seen) == 2:
            raise StorageFault("the state database failed", code="storage_fault")
        record(self, *args)

    monkeypatch.setattr(SQLiteState, "record_revision", failing)
    outcomes = write_as_group(rv, [apply(rv, add(f"lost {i}")) for i in range(3)])
    assert all(isinstance(o, StorageFault) for o in outcomes)
    monkeypatch.setattr(SQLiteState, "record_revision", record)
    assert repo.head() == head  # the branch went back to the group's parent
    assert not (repo.path / ".git" / MARKER).exists()
    assert rv.memory_apply(AGENT, add("next")).revision == before + 1
    assert "lost" not in rv.memory_read(AGENT).text
    assert check_git(repo.path) == [] and check_index(rv, AGENT, repo.path) == []


def remember(rv: Reverie, text: str, key: str) -> Callable[[], WriteOutcome]:
    command = parse_command(text)
    assert command is not None
    memory_id = memory_of(rv)

    def build(current: str | None) -> dict[str, str]:
        return {"action": "set_body", "text": (current or "") + f"\n## {command.name}\n\nyes\n"}

    return lambda: rv.memories.apply(memory_id, writer="chat", key=key, build=build)


def test_c3_w7_a_batch_built_under_the_lock_needs_no_expected_revision(rv: Reverie) -> None:
    """Builders read the text as the write before left it: 8 at once all land, none redone,
    and the same event twice at once writes once."""
    calls = [remember(rv, f"!remember topic{i} - yes", f"ev{i}") for i in range(8)]
    calls += [remember(rv, "!remember topic0 - yes", "ev0")]  # a retried delivery
    results: list[Any] = [None] * len(calls)
    threads = [
        threading.Thread(target=lambda i=i: results.__setitem__(i, calls[i]()))
        for i in range(len(calls))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    fresh = sorted(o.revision for o in results if not o.replayed)
    assert fresh == list(range(1, 9))
    assert sum(o.replayed for o in results) == 1
    text = rv.memory_read(AGENT).text
    assert all(text.count(f"## topic{i}\n") == 1 for i in range(8))
    assert remember(rv, "!remember topic3 - yes", "ev3")().replayed


@pytest.mark.sqlite_only
def test_c3_w7_the_same_event_twice_in_one_group_writes_once(rv: Reverie) -> None:
    outcomes = write_as_group(rv, [remember(rv, "!remember tea - yes", "ev") for _ in range(3)])
    assert [(o.revision, o.replayed) for o in outcomes if isinstance(o, WriteOutcome)] == [
        (1, False),
        (1, True),
        (1, True),
    ]
    assert rv.memory_read(AGENT).text.count("## tea") == 1


# a writer killed inside a group (W8)

#: Where the second group's writer is killed, in pipeline order.
GROUP_STEPS = (
    "chain_written",  # every commit of the chain written, the branch not moved
    "branch_moved",
    "inside_sqlite",  # after the second revision's row, inside the transaction
    "after_sqlite",
    "inside_checkout",
)


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _child(home: Path, step: str) -> None:
    """Write group 1 (4 keyed writes) and print its answers, then die at ``step`` of group 2."""
    from pygit2.enums import CheckoutStrategy

    from reverie.store.state import SQLiteState

    with Reverie(home) as r:
        first = write_as_group(r, [apply(r, add(f"one {i}"), key=f"one{i}") for i in range(4)])
        print(json.dumps([o.revision for o in first if isinstance(o, WriteOutcome)]), flush=True)
        advance, record = GitRepo.advance, SQLiteState.record_revision
        rows = []

        def record_then_die(self: SQLiteState, *args: Any) -> None:
            record(self, *args)
            rows.append(1)
            if len(rows) == 2:
                _die()

        def files_then_die(self: GitRepo, paths: list[str] | None = None) -> None:
            # the files written, git's index not yet
            strategy = CheckoutStrategy.FORCE | CheckoutStrategy.DONT_WRITE_INDEX
            self._repo.checkout_head(strategy=strategy, paths=paths)  # type: ignore[no-untyped-call]
            _die()

        fakes: dict[str, tuple[type, str, Callable[..., Any]]] = {
            "chain_written": (GitRepo, "advance", lambda *a: _die()),
            "branch_moved": (GitRepo, "advance", lambda *a: (advance(*a), _die())),
            "inside_sqlite": (SQLiteState, "record_revision", record_then_die),
            "after_sqlite": (GitRepo, "checkout", lambda *a: _die()),
            "inside_checkout": (GitRepo, "checkout", files_then_die),
        }
        cls, name, fake = fakes[step]
        setattr(cls, name, fake)
        write_as_group(r, [apply(r, add(f"two {i}"), key=f"two{i}") for i in range(4)])
    raise AssertionError(f"the group survived {step}")


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, list[int]]]]:
    """Per step: a home whose writer was killed there, and the revisions it acknowledged."""
    out = {}
    env = {k: v for k, v in writer_env().items() if k != "REVERIE_DATABASE_URL"}
    env["REVERIE_PACK_EVERY"] = "0"
    for step in GROUP_STEPS:
        home = tmp_path_factory.mktemp("group") / "home"
        with Reverie(home, create=True) as r:
            r.create_agent(AGENT)
        proc = subprocess.run(
            [sys.executable, str(THIS), str(home), step],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        out[step] = (home, json.loads(proc.stdout.splitlines()[0]))
    yield out


@pytest.mark.sqlite_only
@pytest.mark.parametrize("step", GROUP_STEPS)
def test_w8_a_kill_inside_a_group_leaves_the_old_revision_or_the_whole_chain(
    killed: dict[str, tuple[Path, list[int]]], step: str, backend: str
) -> None:
    home, acknowledged = killed[step]
    assert acknowledged == [1, 2, 3, 4]
    with Reverie(home) as r:
        revision = r.memory_read(AGENT).revision  # recovers
        # before the branch moved: the old revision; after it: all of the chain
        assert revision == (4 if step == "chain_written" else 8)
        oids = history_oids(r, AGENT)  # gap-free
        assert len(oids) == revision + 1
        text = r.memory_read(AGENT).text
        assert all(f"- one {i}" in text for i in range(4))  # nothing acknowledged lost
        assert sum(f"- two {i}" in text for i in range(4)) == (0 if revision == 4 else 4)
        repo = r.memories.repo(memory_of(r)).path
        assert not (repo / ".git" / MARKER).exists()
        assert check_git(repo) == [] and git_status(repo) == ""
        assert check_index(r, AGENT, repo) == []
        # the keys of the chain were rolled forward with it, or were never used
        again = r.memory_apply(AGENT, add("two 0"), key="two0")
        assert again.replayed == (revision == 8)
        assert r.memory_apply(AGENT, add("one 1"), key="one1").replayed


if __name__ == "__main__":
    _child(Path(sys.argv[1]), sys.argv[2])
