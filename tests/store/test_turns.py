"""The turns table across versions (SPEC P3, X2): a database made before the outcome
``interrupted`` existed takes it when opened (SQLite's migration 8 makes the table again,
PostgreSQL's 105 changes its constraint), keeping every turn and the index."""

from __future__ import annotations

import dataclasses
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from reverie import Reverie
from reverie.index import fts
from reverie.llm import ScriptedProvider
from reverie.store import turns
from reverie.store.turns import OUTCOMES, TurnRecord

#: The outcomes a turn could have before migration 8 (105 on PostgreSQL).
OLD_OUTCOMES = "'running', 'delivered', 'dropped_stale', 'model_error'"


def some_turns(rv: Reverie) -> tuple[str, list[TurnRecord]]:
    """A conversation with a delivered turn and a turn left running after it."""
    rv.add_member("sam", "member")
    rv.ensure_channel("D-sam", "dm")
    conv = rv.create_conversation("ada", "D-sam").id
    done = rv.turn(conv, "Hi", author="sam", provider=ScriptedProvider.replies("Hello.")).turn
    asked = rv.append_message(conv, "user", "When?", author="sam", message_id="slack:E1")
    cut = dataclasses.replace(
        done,
        id="turn_cut",
        request_position=asked.position,
        answer_position=None,
        started_at=time.time(),
        finished_at=None,
        outcome="running",
        tools=[{"id": "c1", "name": "memory_search", "ok": True, "code": None}],
    )
    with rv.state.transaction() as conn:
        rv.turns.start(conn, cut)
    return conv, rv.turn_log(conv)


def mark(rv: Reverie, outcome: str) -> None:
    with rv.state.transaction() as conn:
        conn.execute("UPDATE turns SET outcome = ? WHERE id = 'turn_cut'", (outcome,))


def back_to_the_old_turns_table(rv: Reverie, backend: str) -> None:
    """Make the turns table what version 7 (SQLite) or 104 (PostgreSQL) left, rows kept."""
    with rv.state.transaction() as conn:
        if backend == "postgres":
            conn.execute(
                "ALTER TABLE turns DROP CONSTRAINT turns_outcome_check, ADD CONSTRAINT "
                f"turns_outcome_check CHECK (outcome IN ({OLD_OUTCOMES}))"
            )
            conn.execute("DROP INDEX turns_running")
            conn.execute("DELETE FROM reverie_migrations WHERE version IN (8, 105)")
            return
        old_table = turns.SCHEMA[turns.SCHEMA.index("CREATE TABLE turns (") :]
        assert OLD_OUTCOMES in old_table
        conn.execute("ALTER TABLE turns RENAME TO turns_8")
        conn.execute("DROP INDEX turns_by_conversation")
        for statement in fts.statements(old_table):
            conn.execute(statement)
        conn.execute("INSERT INTO turns SELECT * FROM turns_8")
        conn.execute("DROP TABLE turns_8")
        for column in ("applying_by", "applying_at"):  # migration 9's, run again after 8
            conn.execute(f"ALTER TABLE approvals DROP COLUMN {column}")
        conn.execute("ALTER TABLE idempotency_keys DROP COLUMN legacy")  # 10's, run again
        conn.execute("PRAGMA user_version = 7")


def has_index(rv: Reverie, backend: str, name: str) -> bool:
    sql = (
        "SELECT 1 FROM pg_indexes WHERE indexname = ? AND schemaname = current_schema()"
        if backend == "postgres"
        else "SELECT 1 FROM sqlite_master WHERE name = ?"
    )
    return rv.state.conn.execute(sql, (name,)).fetchone() is not None


def test_P3_a_database_from_before_interrupted_takes_it_keeping_every_turn(
    rv: Reverie, backend: str
) -> None:
    conv, before = some_turns(rv)
    assert [t.outcome for t in before] == ["delivered", "running"]
    back_to_the_old_turns_table(rv, backend)
    with pytest.raises(sqlite3.IntegrityError):  # the old table has no such outcome
        mark(rv, "interrupted")
    assert rv.turn_log(conv) == before
    assert not has_index(rv, backend, "turns_running")
    rv.close()
    with Reverie(rv.home) as again:
        assert again.turn_log(conv) == before
        assert has_index(again, backend, "turns_by_conversation")
        assert has_index(again, backend, "turns_running")
        mark(again, "interrupted")
        assert [t.outcome for t in again.turn_log(conv)] == ["delivered", "interrupted"]
        with pytest.raises(sqlite3.IntegrityError):
            mark(again, "lost")
        for outcome in OUTCOMES:  # every outcome the code knows, the table takes
            mark(again, outcome)


def test_W7_a_turn_lock_is_held_once_in_a_process_until_released(rv: Reverie) -> None:
    """One holder per message, also among the threads of one process (a PostgreSQL session
    would take its own advisory lock again), freed when the holder's block ends."""
    with rv.state.try_turn_lock("slack:Ev1") as held:
        assert held
        with rv.state.try_turn_lock("slack:Ev1") as again:
            assert not again
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(taken, rv, "slack:Ev1").result() is False
        with rv.state.try_turn_lock("slack:Ev2") as other:
            assert other
    assert taken(rv, "slack:Ev1") and taken(rv, "slack:Ev2")


def taken(rv: Reverie, key: str) -> bool:
    with rv.state.try_turn_lock(key) as held:
        return held
