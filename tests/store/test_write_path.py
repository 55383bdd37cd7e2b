"""The write path's shortcuts keep its guarantees: one query for an agent and its memory, a
pipelined transaction on PostgreSQL (all or nothing, errors as the stores expect), revision 0
recorded inside the first write that needs it, several reads as one read transaction on
SQLite, a loose object read whole in a few system calls. (The index rows changed by the changed part
of a file: ``tests/core/test_line_diffs.py``.)"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.errors import NotFound, RefusedInput, RevisionConflict
from reverie.store import gitrepo

ADD = {"action": "add", "section": "Decisions", "text": "We deploy on Fridays."}


def test_agent_and_memory_by_name_and_id(rv: Reverie) -> None:
    agent, memory_id = rv.state.agent_and_memory("ada")
    assert agent.name == "ada"
    assert memory_id == rv.state.memory_of(agent.id)
    assert rv.state.agent_and_memory(agent.id) == (agent, memory_id)


def test_agent_and_memory_refuses_an_unknown_agent(rv: Reverie) -> None:
    with pytest.raises(NotFound) as caught:
        rv.state.agent_and_memory("nobody")
    assert caught.value.details["agent"] == "nobody"
    with pytest.raises(NotFound):
        rv.memory_apply("nobody", ADD)


def test_agent_and_memory_refuses_an_agent_without_memory(rv: Reverie) -> None:
    agent = rv.state.get_agent("ada")
    with rv.state.transaction() as conn:
        conn.execute("DELETE FROM memories WHERE agent_id = ?", (agent.id,))
    with pytest.raises(NotFound, match="has no memory"):
        rv.state.agent_and_memory("ada")


def test_search_finds_and_refuses_as_the_lookup_then_the_search(rv: Reverie) -> None:
    rv.memory_apply("ada", ADD)
    rv.memory_apply("ada", {**ADD, "text": "Deploy freezes start in December."})
    agent, memory_id = rv.state.agent_and_memory("ada")
    hits = rv.memory_search("ada", "deploy Fridays")
    assert [h.excerpt for h in hits][:1] == ["- We deploy on Fridays."]
    assert rv.memory_search(agent.id, "deploy Fridays") == hits
    assert rv.memories.search(memory_id, "deploy Fridays", 8) == hits
    assert rv.memory_search("ada", "nothing here zzzz") == []
    assert rv.memory_search("ada", "") == []
    for limit in (0, 21):  # an unknown agent is named before a bad limit, as before
        with pytest.raises(NotFound) as caught:
            rv.memory_search("nobody", "deploy", limit)
        assert caught.value.details["agent"] == "nobody"
        with pytest.raises(RefusedInput) as refused:
            rv.memory_search("ada", "deploy", limit)
        assert refused.value.code == "invalid_limit"
    for query in ("deploy", ""):
        with pytest.raises(NotFound):
            rv.memory_search("nobody", query)
    with rv.state.transaction() as conn:
        conn.execute("DELETE FROM memories WHERE agent_id = ?", (agent.id,))
    for query in ("deploy", ""):
        with pytest.raises(NotFound, match="has no memory"):
            rv.memory_search("ada", query)


@pytest.fixture
def pg(rv: Reverie, backend: str) -> Reverie:
    if backend != "postgres":
        pytest.skip("PostgreSQL's pipelined transactions")
    return rv


def revisions(rv: Reverie, memory_id: str) -> list[int]:
    rows = rv.state.conn.execute(
        "SELECT revision FROM revisions WHERE memory_id = ? ORDER BY revision", (memory_id,)
    ).fetchall()
    return [int(r[0]) for r in rows]


def test_pipelined_reads_see_the_statements_queued_before_them(pg: Reverie) -> None:
    _, memory_id = pg.state.agent_and_memory("ada")
    with pg.state.transaction(pipelined=True) as conn:
        conn.execute(
            "INSERT INTO revision_batches (memory_id, revision, batch) VALUES (?, ?, ?)",
            (memory_id, 90, "{}"),
        )
        deleted = conn.execute(
            "DELETE FROM revision_batches WHERE memory_id = ? AND revision = ?", (memory_id, 90)
        )
        count = conn.execute("SELECT count(*) FROM revision_batches WHERE revision = 90")
        assert count.fetchone() == (0,)
        assert deleted.rowcount == 1
        assert deleted.fetchone() is None  # a statement without rows reads as none


def test_pipelined_transaction_is_all_or_nothing(pg: Reverie) -> None:
    _, memory_id = pg.state.agent_and_memory("ada")
    pg.memory_apply("ada", ADD)
    before = revisions(pg, memory_id)
    with pytest.raises(sqlite3.IntegrityError), pg.state.transaction(pipelined=True) as conn:
        conn.execute(
            "INSERT INTO revision_batches (memory_id, revision, batch) VALUES (?, ?, ?)",
            (memory_id, 77, "{}"),
        )
        conn.execute(  # revision 1 exists: the primary key refuses it at the commit's sync
            "INSERT INTO revision_batches (memory_id, revision, batch) VALUES (?, ?, ?)",
            (memory_id, 1, "{}"),
        )
    assert pg.memory_apply("ada", {**ADD, "text": "Ada leads billing."}).revision == 2
    assert revisions(pg, memory_id) == [*before, 2]
    row = pg.state.conn.execute(
        "SELECT count(*) FROM revision_batches WHERE revision = 77"
    ).fetchone()
    assert row == (0,)


def test_a_refused_write_leaves_the_connection_usable(pg: Reverie) -> None:
    pg.memory_apply("ada", ADD)
    with pytest.raises(RevisionConflict):
        pg.memory_apply("ada", {**ADD, "text": "Stale."}, expected_revision=0)
    assert not pg.state.conn.in_transaction
    assert pg.memory_apply("ada", {**ADD, "text": "Fresh."}, expected_revision=1).revision == 2


def test_the_first_write_records_a_missing_revision_0(pg: Reverie) -> None:
    _, memory_id = pg.state.agent_and_memory("ada")
    with pg.state.transaction() as conn:
        for table in ("memory_lines", "memory_files", "revisions"):
            conn.execute(f"DELETE FROM {table} WHERE memory_id = ?", (memory_id,))
    out = pg.memory_apply("ada", ADD)
    assert out.revision == 1
    assert revisions(pg, memory_id) == [0, 1]
    assert "We deploy on Fridays." in pg.memory_read("ada").text
    assert pg.memory_read("ada", revision=0).text.count("- ") == 0
    assert [h.excerpt for h in pg.memory_search("ada", "deploy Fridays")] == [
        "- We deploy on Fridays."
    ]


def test_a_replayed_key_answers_from_the_pipelined_read(pg: Reverie) -> None:
    first = pg.memory_apply("ada", ADD, key="k1")
    again = pg.memory_apply("ada", ADD, key="k1")
    assert (again.revision, again.replayed) == (first.revision, True)
    assert pg.memory_read("ada").revision == first.revision


def test_without_pipeline_mode_a_write_waits_statement_by_statement(
    pg: Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    monkeypatch.setattr(psycopg.Pipeline, "is_supported", classmethod(lambda cls: False))
    entered: list[object] = []
    pipeline = psycopg.Connection.pipeline
    monkeypatch.setattr(
        psycopg.Connection, "pipeline", lambda self: entered.append(self) or pipeline(self)
    )
    first = pg.memory_apply("ada", ADD, key="k2")
    assert pg.memory_apply("ada", ADD, key="k2").replayed
    with pytest.raises(RevisionConflict):
        pg.memory_apply("ada", {**ADD, "text": "Stale."}, expected_revision=0)
    assert pg.memory_apply("ada", {**ADD, "text": "Next."}).revision == first.revision + 1
    assert entered == []


def _agent_names(rv: Reverie) -> list[str]:
    return [a.name for a in rv.state.list_agents()]


@pytest.mark.sqlite_only
def test_reads_in_one_read_transaction_see_one_snapshot(rv: Reverie, backend: str) -> None:
    other = threading.Thread(target=lambda: (rv.create_agent("bo"), rv.state.close()))
    with rv.state.reading():
        assert _agent_names(rv) == ["ada"]
        other.start()
        other.join()  # committed by another thread's connection meanwhile
        assert _agent_names(rv) == ["ada"]
        assert rv.state.conn.in_transaction
    assert not rv.state.conn.in_transaction
    assert _agent_names(rv) == ["ada", "bo"]
    rv.create_agent("cy")  # a write transaction starts after it as before
    assert _agent_names(rv) == ["ada", "bo", "cy"]


@pytest.mark.sqlite_only
def test_a_read_transaction_ends_when_its_reads_fail(rv: Reverie, backend: str) -> None:
    with pytest.raises(NotFound), rv.state.reading():
        rv.state.get_agent("nobody")
    assert not rv.state.conn.in_transaction
    rv.create_agent("bo")
    assert _agent_names(rv) == ["ada", "bo"]


def test_reads_inside_a_transaction_stay_in_it(rv: Reverie) -> None:
    agent = rv.state.get_agent("ada")
    with rv.state.transaction() as conn:
        conn.execute("UPDATE agents SET archived = 1 WHERE id = ?", (agent.id,))
        with rv.state.reading():
            assert rv.state.get_agent("ada").archived  # its own uncommitted write
        assert conn.in_transaction
    assert rv.state.get_agent("ada").archived


@pytest.mark.parametrize("size", [0, 1, 4096, 200_000])
def test_a_file_is_read_whole(tmp_path: Path, size: int) -> None:
    path = tmp_path / "object"
    data = bytes(i % 251 for i in range(size))
    path.write_bytes(data)
    assert gitrepo._read_whole(str(path)) == data
    with pytest.raises(FileNotFoundError):
        gitrepo._read_whole(str(tmp_path / "missing"))


@pytest.mark.sqlite_only
def test_the_write_marker_file_is_reused_not_created_per_write(rv: Reverie, backend: str) -> None:
    rv.memory_apply("ada", ADD)
    memory_id = rv.state.memory_of(rv.state.get_agent("ada").id)
    marker = rv.memories._marker(memory_id)
    parked = marker.with_name("reverie-written")
    assert not marker.exists() and rv.memories.marked(memory_id) is None
    inode = parked.stat().st_ino
    seen: list[tuple[bytes, str | None] | None] = []
    begin = rv.memories._begin

    def watched(memory: str, parent: str | None) -> None:
        begin(memory, parent)
        seen.append(rv.memories.marked(memory))

    rv.memories._begin = watched  # type: ignore[method-assign]
    for i in range(3):
        latest = rv.state.latest(memory_id)
        assert latest is not None
        rv.memory_apply("ada", {**ADD, "text": f"Fact {i}."})
        # while the write was under way its marker named the revision it started from
        assert seen[-1] == (b"writing", latest.oid)
        assert not marker.exists() and parked.stat().st_ino == inode
    assert rv.memory_read("ada").revision == 4


def test_a_revision_of_many_files_is_recorded_whole(pg: Reverie) -> None:
    # The statement that records a revision holds the first few files; an import's revision
    # of more files records the rest after it, in the same transaction.
    from reverie.index import postings
    from reverie.store.dbmemories import DatabaseMemoryStore, revision_oid
    from reverie.store.state import RevisionRecord

    store = pg.memories
    assert isinstance(store, DatabaseMemoryStore)
    _, memory_id = pg.state.agent_and_memory("ada")
    latest = store.current(memory_id)
    files: dict[str, str | None] = {
        f"memory/topic-{i}.md": f"# Topic {i}\n\n- Fact {i}: the runner is zebra{i}.\n"
        for i in range(7)
    }
    rec = RevisionRecord(
        latest.revision + 1,
        revision_oid(latest.oid, latest.revision + 1, files),
        latest.created_at + 1,
        "system",
        "import",
        sorted(files),
    )
    with pg.state.transaction() as conn:
        store.record(conn, memory_id, rec, files, {}, None)
    assert pg.memory_read("ada").revision == rec.revision
    kept = store.files(memory_id, rec)
    assert {p: kept[p] for p in files} == files
    for i in (0, 6):
        hits = pg.memory_search("ada", f"zebra{i}")
        assert [(h.source, h.excerpt) for h in hits] == [
            (f"memory/topic-{i}.md", f"- Fact {i}: the runner is zebra{i}.")
        ]
    assert postings.check(pg.state.conn, memory_id)


def test_a_write_that_moves_lines_between_files_keeps_the_postings(pg: Reverie) -> None:
    # Rows a file loses are deleted before the statement that adds the others: the search
    # postings and counts stay those the lines make.
    from reverie.index import postings

    _, memory_id = pg.state.agent_and_memory("ada")
    pg.memory_apply("ada", ADD, key="k3")
    pg.memory_apply("ada", {**ADD, "text": "Billing runs on zebra hosts."})
    out = pg.memory_apply(
        "ada",
        {
            "operations": [
                {"action": "remove", "old": "zebra hosts"},
                {"action": "write_topic", "topic": "billing", "content": "- Zebra hosts retired."},
            ]
        },
        key="k4",
    )
    assert out.changed
    assert postings.check(pg.state.conn, memory_id)
    assert out.paths == ["MEMORY.md", "memory/billing.md"]
    hits = pg.memory_search("ada", "zebra")
    assert [(h.source, h.excerpt) for h in hits] == [
        ("memory/billing.md", "- Zebra hosts retired.")
    ]
    assert pg.memory_apply("ada", ADD, key="k3").replayed


@pytest.mark.parametrize("name", ["mem_0123456789ab", "ada", "", "ü✓ 名前", "x" * 300])
def test_the_server_computes_the_lock_key_python_does(pg: Reverie, name: str) -> None:
    # A write takes its memory's lock with a key the server computes from the memory's id;
    # creating, reindexing and rewinding take the same lock with the key computed here.
    from reverie.store.postgres import _lock_key, lock_key_sql

    row = pg.state.conn.execute(f"SELECT {lock_key_sql('CAST(? AS text)')}", (name,)).fetchone()
    assert row == (_lock_key(name),)


def test_a_write_waits_for_the_lock_the_memory_lock_holds(pg: Reverie) -> None:
    # The lock that memory_apply takes with its lookup is the one memory_lock takes.
    import threading

    from reverie.store.postgres import PostgresState

    _, memory_id = pg.state.agent_and_memory("ada")
    assert isinstance(pg.state, PostgresState)
    other = PostgresState(pg.state.url)
    done = threading.Event()
    try:
        with other.memory_lock(memory_id):
            writer = threading.Thread(target=lambda: (pg.memory_apply("ada", ADD), done.set()))
            writer.start()
            waiting = other.conn.raw.execute  # poll until the writer waits for the lock
            for _ in range(600):
                row = waiting(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                    "AND database = (SELECT oid FROM pg_database WHERE datname = "
                    "current_database())"
                ).fetchone()
                if row and row[0]:
                    break
                done.wait(0.05)
            assert row == (1,)
            assert not done.is_set()
        writer.join(30)
        assert done.is_set()
    finally:
        other.shutdown()
    assert pg.memory_read("ada").revision == 1


def test_a_write_through_the_lookup_refuses_in_the_same_order(rv: Reverie) -> None:
    # On PostgreSQL the lookup runs inside the write's transaction (apply_agent).
    from reverie.errors import PermissionDenied

    bad = {"action": "add", "section": "Decisions", "text": ""}
    with pytest.raises(NotFound):
        rv.memory_apply("nobody", bad, expected_revision=-1)
    with pytest.raises(RefusedInput) as refused:
        rv.memory_apply("ada", bad, expected_revision=-1)
    assert refused.value.code == "invalid_revision"
    with pytest.raises(PermissionDenied):
        rv.memory_apply("ada", bad, writer="agent")
    for n in (1, 2, 3):
        with pytest.raises(RefusedInput) as refused:
            rv.memory_apply("ada", bad, conversation_id="c1")
        assert refused.value.details["failures_in_a_row"] == n
    assert refused.value.details["stop_retrying"] is True
    assert rv.memory_apply("ada", ADD, conversation_id="c1").revision == 1
    with pytest.raises(RefusedInput) as refused:
        rv.memory_apply("ada", bad, conversation_id="c1")
    assert refused.value.details["failures_in_a_row"] == 1


def test_a_read_led_to_another_memory_writes_after_a_lookup_of_its_own(
    pg: Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The write's read finds the memory by the agent's name, after the statement that took
    # the lock; were the name another agent's by then (a rename in between), the read would
    # name another memory than the one locked: nothing is written, and the write runs again
    # as the lookup, then the write under that memory's lock.
    from reverie.store import dbmemories

    pg.create_agent("bob")
    pg.memory_apply("bob", {**ADD, "text": "Bob keeps his own notes."})
    moved = (
        "(SELECT memories.id AS id, CAST(? AS text) AS path FROM memories "
        "WHERE memories.agent_id <> (SELECT id FROM agents WHERE name = ?))"
    )
    monkeypatch.setattr(dbmemories, "_by_agent", lambda name: moved)
    out = pg.memory_apply("ada", ADD, key="k5")
    assert (out.changed, out.revision) == (True, 1)
    text = pg.memory_read("ada").text
    assert "We deploy on Fridays." in text and "Bob keeps" not in text
    assert pg.memory_read("bob").revision == 1
    assert pg.memory_apply("ada", ADD, key="k5").replayed
