"""Several servers on one PostgreSQL database (SPEC D2, W6-W8, R10).

Separate processes, each with its own ``Reverie`` and connection pool, share one database: no
lost update, gap-free revisions, each conversation range reviewed once, and a process killed
with SIGKILL mid-write or while it leads a review stops nothing else and loses nothing that
was acknowledged.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reverie import Reverie
from tests.conftest import PostgresServer

SRC = Path(__file__).resolve().parents[2] / "src"
HERE = Path(__file__).resolve().parent

WORKER = textwrap.dedent(
    """
    import json, os, random, sys, time
    sys.path[:0] = [sys.argv[1], sys.argv[2]]
    from reverie import Reverie
    from reverie.errors import RevisionConflict
    mode, home = sys.argv[3], sys.argv[4]
    rv = Reverie(home)
    print("ready", flush=True)
    sys.stdin.readline()
    if mode == "rmw":
        from _writer import rmw_cycles
        res = rmw_cycles(rv, "ada", sys.argv[5], int(sys.argv[6]), random.Random(sys.argv[5]))
        print(json.dumps({"successes": res.successes, "conflicts": res.conflicts}))
    elif mode == "review":
        reports = []
        for _ in range(int(sys.argv[5])):
            reports.append([r.to_dict() for r in rv.review_run("bob", force=True)])
        print(json.dumps(reports))
    elif mode == "append":  # writes until killed; one fsynced line per acknowledged write
        acks = open(sys.argv[5], "a")
        n = 0
        while True:
            out = rv.memory_apply("ada", {"operations": [{"action": "add", "text": f"acked {n}"}]})
            acks.write(f"{n} {out.revision}\\n"); acks.flush(); os.fsync(acks.fileno())
            n += 1
    elif mode == "lead":  # holds bob's review leadership until killed
        with rv.state.try_review_lock(rv.agent("bob").id) as held:
            print("held" if held else "not held", flush=True)
            time.sleep(600)
    elif mode == "turn":  # holds the turn of the event argv[5] until killed
        with rv.state.try_turn_lock(sys.argv[5]) as held:
            print("held" if held else "not held", flush=True)
            time.sleep(600)
    """
)


@pytest.fixture
def shared(
    postgres_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A home on a fresh PostgreSQL schema, with agents ada and bob and two closed
    conversations of bob's to review; the URL is in this process's environment."""
    schema, url = postgres_server.schema_url()
    monkeypatch.setenv("REVERIE_DATABASE_URL", url)
    home = tmp_path / "home"
    with Reverie(home, create=True) as rv:
        rv.create_agent("ada")
        rv.create_agent("bob")
        lines = []
        for c in range(6):
            for i, text in enumerate(
                [f"My name is Sam {c} and I lead the platform team.", f"We deploy on day {c}."]
            ):
                lines.append(
                    json.dumps(
                        {
                            "conversation": f"b{c}",
                            "agent": "bob",
                            "channel": {"kind": "dm", "id": "D1"},
                            "author": "sam",
                            "role": "user",
                            "text": text,
                            "time": f"2024-05-0{c + 1}T10:0{i}:00Z",
                        }
                    )
                )
            lines.append(json.dumps({"conversation": f"b{c}", "closed": True}))
        rv.import_conversations(lines)
    yield home
    postgres_server.drop_schema(schema)


def start(mode: str, home: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    env["REVERIE_DATABASE_URL"] = os.environ["REVERIE_DATABASE_URL"]
    p = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(SRC), str(HERE), mode, str(home), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "ready", p.communicate(timeout=30)[1]
    return p


def go(*procs: subprocess.Popen[str]) -> None:
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()


def test_d2_three_servers_write_and_review_at_once(shared: Path) -> None:
    """Three writers racing with expected revisions on ada, three reviewers of bob at once."""
    cycles = 12
    writers = [start("rmw", shared, f"w{i}", str(cycles)) for i in range(3)]
    reviewers = [start("review", shared, "2") for _ in range(3)]
    go(*writers, *reviewers)
    outs = []
    for p in writers + reviewers:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
        outs.append(json.loads(out))
    successes = [tuple(s) for res in outs[:3] for s in res["successes"]]
    total = 3 * cycles
    assert sorted(rev for rev, _, _ in successes) == list(range(1, total + 1))
    assert all(count == rev for rev, _, count in successes)  # no write merged or lost
    assert sum(res["conflicts"] for res in outs[:3]) > 0  # they really raced
    with Reverie(shared) as rv:
        ada = rv.memory_history("ada", limit=1000)
        assert [h.revision for h in ada] == list(range(total, -1, -1))  # gap-free
        text = rv.memory_read("ada").text
        assert all(text.count(f"- {entry}\n") == 1 for _, entry, _ in successes)
        # bob's ranges: each reviewed by exactly one batch, whoever led
        ranges = [r for b in rv.review_log("bob", limit=100) for r in b.ranges]
        assert sorted(conversation for conversation, _, _ in ranges) == [f"b{c}" for c in range(6)]
        bob = rv.memory_history("bob", limit=100)
        assert [h.revision for h in bob] == list(range(len(bob) - 1, -1, -1))
        assert "platform team" in rv.memory_read("bob").text  # review wrote what it read


def test_d2_a_writer_killed_mid_write_loses_nothing_acknowledged(
    shared: Path, tmp_path: Path
) -> None:
    acks = tmp_path / "acks"
    killed = start("append", shared, str(acks))
    other = start("rmw", shared, "steady", "15")
    go(killed, other)
    time.sleep(1.5)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    out, err = other.communicate(timeout=120)
    assert other.returncode == 0, err  # the other server went on
    acked = [tuple(map(int, line.split())) for line in acks.read_text().splitlines()]
    assert len(acked) > 5
    with Reverie(shared) as rv:
        # the lock went with the killed connection: a new write lands at once
        after = rv.memory_apply("ada", {"operations": [{"action": "add", "text": "after"}]})
        history = rv.memory_history("ada", limit=10_000)
        assert [h.revision for h in history] == list(range(after.revision, -1, -1))
        for n, revision in acked:
            assert f"- acked {n}\n" in rv.memory_read("ada", revision=revision).text
            assert f"- acked {n}\n" in rv.memory_read("ada").text
        assert len(json.loads(out)["successes"]) == 15


def test_r10_a_killed_review_leader_frees_the_leadership(shared: Path) -> None:
    leader = start("lead", shared)
    go(leader)
    assert leader.stdout is not None
    assert leader.stdout.readline().strip() == "held"
    with Reverie(shared) as rv:
        (report,) = rv.review_run("bob", force=True)
        assert report.skipped is not None and "another process" in report.skipped
        leader.send_signal(signal.SIGKILL)
        leader.wait(timeout=30)
        deadline = time.monotonic() + 30
        while True:  # the server notices the dropped connection within moments
            (report,) = rv.review_run("bob", force=True)
            if report.skipped is None or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert report.skipped is None
        assert len(rv.review_log("bob")) >= 1


def test_W7_a_turn_is_held_by_one_server_and_freed_when_it_is_killed(shared: Path) -> None:
    """A chat event's turn lock holds across servers on one database (an advisory lock): a
    second server cannot take it while the first lives, and can once it is killed. The holder
    has a home folder of its own, as a server on another machine would."""
    elsewhere = shared.parent / "elsewhere"
    elsewhere.mkdir()
    holder = start("turn", elsewhere, "slack:Ev1")
    go(holder)
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    other = start("turn", shared, "slack:Ev1")  # another server, same event
    go(other)
    assert other.stdout is not None
    assert other.stdout.readline().strip() == "not held"
    other.kill()
    other.wait(timeout=30)
    with Reverie(shared) as rv:
        with rv.state.try_turn_lock("slack:Ev1") as held:
            assert not held
        with rv.state.try_turn_lock("slack:Ev2") as held:
            assert held  # another event's turn is free
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        deadline = time.monotonic() + 30
        while True:  # the server notices the dropped connection within moments
            with rv.state.try_turn_lock("slack:Ev1") as held:
                if held or time.monotonic() > deadline:
                    break
            time.sleep(0.1)
        assert held


def test_W7_a_turn_lock_is_taken_again_when_its_connection_is_lost(shared: Path) -> None:
    """The connection holding a process's turn locks is dropped (a PostgreSQL restart, a
    terminated backend): the locks went with it, while the turn goes on. Within moments the
    holder takes them again on a new connection, so that another server's look for cut-short
    turns (every minute) does not run the turn a second time."""
    with Reverie(shared) as holder, Reverie(shared) as other:
        with holder.state.try_turn_lock("slack:Ev1") as held:
            assert held
            lost = holder.state._turn_conn.info.backend_pid
            other.state.conn.execute("SELECT pg_terminate_backend(?)", (lost,))
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # the holder looks every second
                conn = holder.state._turn_conn
                if conn is not None and not conn.broken and conn.info.backend_pid != lost:
                    break
                time.sleep(0.05)
            assert holder.state._turn_conn.info.backend_pid != lost
            with other.state.try_turn_lock("slack:Ev1") as again:
                assert not again
        with other.state.try_turn_lock("slack:Ev1") as again:
            assert again  # released by the holder at the end of its block, as before


def test_doctor_on_postgres_checks_and_repairs_the_index(shared: Path) -> None:
    with Reverie(shared) as rv:
        rv.memory_apply("ada", {"operations": [{"action": "add", "text": "Kept in the index."}]})
        assert rv.doctor().findings == []
        rv.state.conn.execute("DELETE FROM memory_lines WHERE text = '- Kept in the index.'")
        assert rv.memory_search("ada", "index kept") == []
        (finding,) = rv.doctor().findings
        assert finding.repaired == "rebuilt from the files"
        assert rv.memory_search("ada", "index kept")[0].excerpt == "- Kept in the index."
        assert rv.doctor().findings == []


def test_r10_a_reviewer_killed_mid_review_leaves_each_range_reviewed_once(
    shared: Path,
) -> None:
    """Forty conversations in several batches; the reviewing process is SIGKILLed once its
    first batch is in, and the next run (another process) finishes: every range is reviewed
    exactly once."""
    with Reverie(shared) as rv:
        lines = []
        for c in range(40):
            for i, text in enumerate(
                [
                    f"Our supplier for part {c} is Vendor{c} Ltd.",
                    f"Part {c} ships on day {c}.",
                    "Thanks. " + "The call ran long and we went over the schedule again. " * 50,
                ]
            ):
                lines.append(
                    json.dumps(
                        {
                            "conversation": f"m{c}",
                            "agent": "bob",
                            "channel": {"kind": "dm", "id": "D1"},
                            "author": "sam",
                            "role": "user",
                            "text": text,
                            "time": f"2024-06-01T10:{c:02d}:0{i}Z",
                        }
                    )
                )
            lines.append(json.dumps({"conversation": f"m{c}", "closed": True}))
        rv.import_conversations(lines)
    first = start("review", shared, "50")
    go(first)
    deadline = time.monotonic() + 60
    with Reverie(shared) as rv:
        while not rv.review_log("bob", limit=1) and time.monotonic() < deadline:
            time.sleep(0.02)  # killed once its first batch is in: mid-review
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        done_before = len(rv.review_log("bob", limit=1000))
        second = start("review", shared, "50")
        go(second)
        _, err = second.communicate(timeout=300)
        assert second.returncode == 0, err
        batches = rv.review_log("bob", limit=1000)
        assert 0 < done_before < len(batches)  # the kill landed between batches of one run
        # each conversation's messages covered by the batches' ranges once, without overlap
        covered: dict[str, list[int]] = {}
        for b in batches:
            for conversation, start_at, end in b.ranges:
                covered.setdefault(conversation, []).extend(range(start_at, end))
        expected = {f"b{c}": 2 for c in range(6)} | {f"m{c}": 3 for c in range(40)}
        assert {c: sorted(p) for c, p in covered.items()} == {
            c: list(range(n)) for c, n in expected.items()
        }
        assert rv.conversations.pending_ranges(rv.agent("bob").id, time.time()) == []


def test_many_threads_share_the_pools_few_connections(shared: Path) -> None:
    """A server's threads hold a connection for one facade call at a time: forty threads
    reading and writing at once get by with the pool's sixteen."""
    with Reverie(shared) as rv, ThreadPoolExecutor(40) as pool:

        def work(i: int) -> int:
            if i % 10 == 0:
                rv.memory_apply("ada", {"operations": [{"action": "add", "text": f"from {i}"}]})
            return rv.memory_read("ada").revision

        revisions = list(pool.map(work, range(400)))
        assert max(revisions) == 40 and rv.memory_read("ada").revision == 40
        name = os.environ["REVERIE_DATABASE_URL"].split("application_name=")[1].split("&")[0]
        (count,) = rv.state.conn.execute(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = ?", (name,)
        ).fetchone()
        assert 1 <= count <= 16
