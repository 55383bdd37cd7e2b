"""PostgreSQL connections the server dropped, and database URLs that cannot work (SPEC D2).

After PostgreSQL restarts (or an operator ends the backends), the pool's connections are dead
though nothing has touched them yet. The next call of each thread succeeds all the same: a
connection the server has closed is found before it is used and replaced, and nothing is
sent twice (a write's revisions are counted exactly). A URL with a bad parameter fails at
once with ``storage_unavailable``, naming the database without its password.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.errors import StorageFault
from reverie.store import postgres
from reverie.store.postgres import PostgresState
from tests.conftest import SERVER, PostgresServer

PASSWORD = "pgc-S3cret-word"


@pytest.fixture
def url(postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh schema's URL, in this process's environment (the home's store uses it)."""
    schema, url = postgres_server.schema_url()
    monkeypatch.setenv("REVERIE_DATABASE_URL", url)
    yield url
    postgres_server.drop_schema(schema)


def backends(url: str, admin: Any) -> list[int]:
    """The server processes of the schema's connections (their application name), but
    ``admin``'s own."""
    name = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["application_name"][0]
    rows = admin.execute(
        "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND pid <> pg_backend_pid()",
        (name,),
    ).fetchall()
    return [int(r[0]) for r in rows]


def terminate(url: str) -> int:
    """End every backend of the schema from a second connection, as a restart of PostgreSQL
    does, and wait until they are gone: by then each has sent its FATAL message and closed
    its socket, as they all have when a restarted server takes connections again. Returns
    how many were ended."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as admin:
        pids = backends(url, admin)
        assert pids, "the store holds no connection to drop"
        admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS t(pid)", (pids,))
        deadline = time.monotonic() + 10
        while set(pids) & set(backends(url, admin)):
            assert time.monotonic() < deadline, "the terminated backends did not end"
            time.sleep(0.01)
    return len(pids)


def add(rv: Reverie, text: str) -> int:
    return rv.memory_apply("ada", {"operations": [{"action": "add", "text": text}]}).revision


def assert_written_once(rv: Reverie, texts: list[str]) -> None:
    """Every acknowledged write is there once, and no other: as many revisions as writes."""
    memory = rv.memory_read("ada")
    assert memory.revision == len(texts)
    for text in texts:
        assert memory.text.count(f"- {text}\n") == 1, text
    (count,) = rv.state.conn.execute(
        "SELECT COUNT(*) FROM revisions r JOIN memories m ON m.id = r.memory_id "
        "JOIN agents a ON a.id = m.agent_id WHERE a.name = 'ada' AND r.revision > 0"
    ).fetchone()
    assert count == len(texts)
    rv.state.release()  # as a facade call gives its connection back when it ends


def test_d2_the_first_read_and_write_after_a_drop_succeed(url: str, tmp_path: Path) -> None:
    with Reverie(tmp_path / "home", create=True) as rv:
        rv.create_agent("ada")
        written = ["before the drop"]
        assert add(rv, written[0]) == 1

        assert terminate(url) >= 1
        assert rv.memory_read("ada").revision == 1  # the first call after the drop: a read

        terminate(url)
        written.append("first after a drop")
        assert add(rv, written[-1]) == 2  # the first call after the drop: a write
        assert rv.memory_read("ada").revision == 2

        terminate(url)
        assert [h.excerpt for h in rv.memory_search("ada", "drop")]  # a search, one statement
        written.append("after a search")
        assert add(rv, written[-1]) == 3
        assert_written_once(rv, written)


def test_d2_each_pooled_connection_dropped_is_replaced_before_use(url: str, tmp_path: Path) -> None:
    """Several threads each hold a connection at once, so the pool keeps several; all are
    dropped; then every thread reads and writes at once, each on one of the dead ones first,
    and none fails."""
    threads = 6
    with Reverie(tmp_path / "home", create=True) as rv, ThreadPoolExecutor(threads) as pool:
        rv.create_agent("ada")
        held = threading.Barrier(threads)

        def hold(i: int) -> int:
            pid = int(rv.state.conn.execute("SELECT pg_backend_pid()").fetchone()[0])
            held.wait(timeout=30)  # every thread holds its own connection here
            rv.state.release()
            return pid

        assert len(set(pool.map(hold, range(threads)))) == threads
        assert terminate(url) >= threads

        start = threading.Barrier(threads)

        def work(i: int) -> tuple[int, int]:
            start.wait(timeout=30)
            before = rv.memory_read("ada").revision
            return before, add(rv, f"thread {i}")

        results = list(pool.map(work, range(threads)))
        assert sorted(r for _, r in results) == list(range(1, threads + 1))
        assert_written_once(rv, [f"thread {i}" for i in range(threads)])

        # And again with the threads' connections now in the pool: each call after a drop.
        terminate(url)
        results = list(pool.map(work, range(threads, 2 * threads)))
        assert sorted(r for _, r in results) == list(range(threads + 1, 2 * threads + 1))
        assert_written_once(rv, [f"thread {i}" for i in range(2 * threads)])


def test_d2_locks_are_taken_after_a_drop(url: str, tmp_path: Path) -> None:
    """A review's leadership and a chat turn's lock take their connections as the calls do:
    the first of each after a drop is had, not refused."""
    with Reverie(tmp_path / "home", create=True) as rv:
        agent = rv.create_agent("ada")
        with rv.state.try_review_lock(agent.id) as held:
            assert held
        with rv.state.try_turn_lock("slack:Ev1") as held:
            assert held
        terminate(url)
        with rv.state.try_review_lock(agent.id) as held:
            assert held
        with rv.state.try_turn_lock("slack:Ev2") as held:
            assert held
        assert add(rv, "after the locks") == 1


def test_d2_a_transaction_begun_on_a_connection_lost_unseen_is_begun_again(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A drop the look before use cannot see yet (the backend ends between the look and the
    ``BEGIN``): the ``BEGIN`` fails, before anything of the transaction was sent, and the
    transaction begins on a fresh connection; it commits once."""
    with Reverie(tmp_path / "home", create=True) as rv:
        rv.create_agent("ada")
        state = rv.state
        assert isinstance(state, PostgresState)
        conn = state.conn  # this thread keeps it, as a caller outside the facade may
        looked = getattr(postgres, "_closed_by_server", None)
        monkeypatch.setattr(
            postgres,
            "_closed_by_server",
            lambda raw: False if raw is conn.raw else looked(raw),
            raising=False,
        )
        terminate(url)
        with state.transaction() as tx:
            tx.execute("INSERT INTO meta (key, value) VALUES ('pgc', 'once')")
        assert state.conn is not conn
        rows = state.conn.execute("SELECT value FROM meta WHERE key = 'pgc'").fetchall()
        assert rows == [("once",)]


def test_d2_a_connection_lost_while_it_holds_a_lock_is_not_replaced_unseen(
    url: str, tmp_path: Path
) -> None:
    """A memory's lock lives on its connection: a drop frees it. What the holder does next
    in the lock's block fails, every time, rather than go on without the lock on a fresh
    connection."""
    with Reverie(tmp_path / "home", create=True) as rv:
        rv.create_agent("ada")
        state = rv.state
        with state.memory_lock("m-1"):
            terminate(url)
            for _ in range(2):
                with pytest.raises(StorageFault) as caught, state.transaction() as tx:
                    tx.execute("INSERT INTO meta (key, value) VALUES ('pgc', 'unlocked')")
                assert caught.value.code == "storage_unavailable"
        state.release()
        assert state.conn.execute("SELECT value FROM meta WHERE key = 'pgc'").fetchall() == []


BASE = urllib.parse.urlsplit(SERVER)
HOST = f"postgres:{PASSWORD}@{BASE.hostname}:{BASE.port or 5432}"

BAD_URLS = {
    "bad sslmode": f"postgresql://{HOST}/postgres?sslmode=bogus",
    "connect_timeout not a number": f"postgresql://{HOST}/postgres?connect_timeout=abc",
    "connect_timeout empty": f"postgresql://{HOST}/postgres?connect_timeout=",
    "unknown parameter": f"postgresql://{HOST}/postgres?foo=bar",
    "options with a raw '='": f"postgresql://{HOST}/postgres?options=-c%20bogus=1",
    "unknown server setting": f"postgresql://{HOST}/postgres?options=-c%20bogus%3D1",
    "bad value of a setting": f"postgresql://{HOST}/postgres?options=-c%20lock_timeout%3Dx",
    "no such database": f"postgresql://{HOST}/no_such_database_pgc",
    "no such role": f"postgresql://nobody_pgc:{PASSWORD}@{BASE.hostname}:{BASE.port or 5432}/x",
    "wrong port": f"postgresql://postgres:{PASSWORD}@{BASE.hostname}:1/postgres",
    "host that does not resolve": f"postgresql://postgres:{PASSWORD}@no-such-host.invalid/x",
    "password as a parameter": f"postgresql://postgres@{BASE.hostname}/x?password={PASSWORD}",
}


@pytest.mark.parametrize("case", sorted(BAD_URLS))
def test_d2_a_bad_database_url_fails_at_once(case: str, url: str) -> None:
    """Each fails within moments (it waited 30 s for the pool when psycopg could not read the
    URL's connect_timeout), as ``storage_unavailable``, without the password. ``url``: the
    test skips when PostgreSQL is not reachable."""
    started = time.monotonic()
    with pytest.raises(StorageFault) as caught:
        PostgresState(BAD_URLS[case])
    took = time.monotonic() - started
    assert caught.value.code == "storage_unavailable"
    message = str(caught.value)
    assert PASSWORD not in message
    assert "Check that the server runs and the URL is right" in message
    assert took < 15, f"{case}: {took:.1f} s before failing"
