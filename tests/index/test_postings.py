"""Memory search on PostgreSQL ranks from postings (``index/postings.py``, migrations 103 and
104): the same scores as ranking the lines themselves, postings kept in step with the lines by
every change, filled on a database made before them, moved in place from 103's text keys to
104's numbers, and checked and rebuilt by ``reverie doctor``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.config import Settings
from reverie.index import fts, postings
from reverie.store.postgres import _split
from tests.conftest import PostgresServer

LINES = [
    "The staging database listens on port 5433",
    "Deploys go out on Tuesdays after the standup",
    "Ada prefers green tea, never coffee; tea tea tea",
    "The database backup runs nightly at 02:00 UTC from the staging host to the archive",
    "Bob owns the deploy pipeline and the staging database",
    "Port 8080 is the admin console",
]
TOPIC = "# Databases\n\n- Postgres 15 on the database host\n- Replica lag alarms at 30 s\n"
QUERIES = [
    "staging database port",
    "tea",
    "who owns deploys?",
    "database databases",
    "databases",
    "nightly backup archive host",
    "snake_case words",
    "nothing matches zzzz",
]


@pytest.fixture
def url(postgres_server: PostgresServer) -> Iterator[str]:
    schema, url = postgres_server.schema_url()
    yield url
    postgres_server.drop_schema(schema)


@pytest.fixture
def rv(url: str, tmp_path: Path) -> Iterator[Reverie]:
    r = Reverie(settings=Settings.load(tmp_path / "home", database_url=url), create=True)
    r.create_agent("ada")
    r.create_agent("bob")
    for text in LINES:
        r.memory_apply("ada", {"action": "add", "text": text})
    r.memory_apply("ada", {"action": "write_topic", "topic": "databases", "content": TOPIC})
    r.memory_apply("bob", {"action": "add", "text": "Bob's staging database is elsewhere"})
    yield r
    r.close()


def memory(rv: Reverie, agent: str = "ada") -> str:
    return rv.state.memory_of(rv.agent(agent).id)


def ranked_from_lines(rv: Reverie, memory_id: str, query: str) -> list[tuple[str, float]]:
    """The ranking before postings: ``pg_ranked`` over the lines, every line of the memory."""
    terms = fts.pg_terms(query)
    if not terms:
        return []
    rows = rv.state.conn.execute(
        f"SELECT l.text, h.r FROM ({fts.pg_ranked('memory_lines x', 'x.memory_id = ?')}) h "
        "JOIN memory_lines l ON l.id = h.id ORDER BY h.r DESC, h.id",
        (terms, memory_id, memory_id, memory_id, 100),
    ).fetchall()
    return [(str(t), float(r)) for t, r in rows]


def ranked_from_postings(rv: Reverie, memory_id: str, query: str) -> list[tuple[str, float]]:
    rows = postings.search(rv.state.conn, memory_id, fts.content_terms(query), 100)
    return [(str(t), float(r)) for _, t, r in rows]


def alike(new: list[tuple[str, float]], old: list[tuple[str, float]]) -> bool:
    """The same lines with the same scores, up to the last bits of a sum (its terms may be
    added in another order) and so the order of lines whose scores are equal."""
    scores = dict(old)
    return sorted(t for t, _ in new) == sorted(scores) and all(
        s == pytest.approx(scores[t], rel=1e-12) for t, s in new
    )


def all_in_step(rv: Reverie) -> bool:
    ids = [str(r[0]) for r in rv.state.conn.execute("SELECT id FROM memories").fetchall()]
    return all(postings.check(rv.state.conn, m) for m in ids)


def postings_of(rv: Reverie, memory_id: str) -> int:
    row = rv.state.conn.execute(
        f"SELECT count(*) FROM ({postings.kept_sql()}) k", (memory_id,)
    ).fetchone()
    return int(row[0]) if row else 0


def strays(rv: Reverie) -> int:
    """Postings whose key no counts row holds, or one whose word no line holds any more."""
    row = rv.state.conn.execute(
        "SELECT count(*) FROM memory_postings p WHERE NOT EXISTS (SELECT 1 FROM "
        "memory_word_counts c WHERE c.key = p.key AND c.n > 0)"
    ).fetchone()
    return int(row[0]) if row else -1


def key_of(conn: Any, memory_id: str, word: str) -> Any:
    row = conn.execute(
        "SELECT key FROM memory_word_counts WHERE memory_id = ? AND word = ?", (memory_id, word)
    ).fetchone()
    assert row is not None, word
    return row[0]


def line_count(rv: Reverie, memory_id: str) -> Any:
    row = rv.state.conn.execute(
        "SELECT n FROM memory_word_counts WHERE memory_id = ? AND word = ''", (memory_id,)
    ).fetchone()
    return None if row is None else row[0]


def test_postings_rank_every_line_as_ranking_the_lines_did(rv: Reverie) -> None:
    memory_id = memory(rv)
    for query in QUERIES:
        old = ranked_from_lines(rv, memory_id, query)
        new = ranked_from_postings(rv, memory_id, query)
        assert sorted(t for t, _ in new) == sorted(t for t, _ in old), query
        scores = dict(old)
        for text, score in new:
            assert score == pytest.approx(scores[text], rel=1e-12), (query, text)
        assert [s for _, s in new] == sorted((s for _, s in new), reverse=True)
    assert ranked_from_postings(rv, memory_id, "nothing matches zzzz") == []
    # a topic's words count: the replica line says nothing of databases, its topic does
    hits = rv.memory_search("ada", "databases", 20)
    assert {h.excerpt for h in hits} >= {
        "- Postgres 15 on the database host",
        "- Replica lag alarms at 30 s",
    }
    # only the memory asked: bob's line is not among ada's hits, and bob finds his own
    assert all("elsewhere" not in h.excerpt for h in rv.memory_search("ada", "staging", 20))
    assert [h.excerpt for h in rv.memory_search("bob", "staging")] == [
        "- Bob's staging database is elsewhere"
    ]


def test_a_facade_search_is_one_statement_with_the_hits_of_the_lookup_then_the_search(
    rv: Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reverie.store import postgres

    statements: list[str] = []
    execute = postgres.Connection.execute

    def counted(self: Any, sql: str, params: Any = None) -> Any:
        statements.append(sql)
        return execute(self, sql, params)

    memory_id, agent_id = memory(rv), rv.agent("ada").id
    separate = {
        (q, n): [(h.source, h.excerpt, h.score) for h in rv.memories.search(memory_id, q, n)]
        for q in QUERIES
        for n in (1, 3, 8, 20)
    }
    monkeypatch.setattr(postgres.Connection, "execute", counted)
    for (query, limit), expected in separate.items():
        for agent in ("ada", agent_id):
            statements.clear()
            hits = rv.memory_search(agent, query, limit)
            assert [(h.source, h.excerpt, h.score) for h in hits] == expected, (query, limit)
            assert len(statements) == 1, statements
    assert separate["nothing matches zzzz", 8] == []
    assert len(separate["databases", 20]) > 3  # the comparison compares something
    assert [h.source for h in rv.memory_search("ada", "replica lag", 1)] == ["memory/databases.md"]
    # another memory's lines stay out, as in the lookup-then-search path
    assert [h.excerpt for h in rv.memory_search("bob", "staging database", 20)] == [
        "- Bob's staging database is elsewhere"
    ]


def test_postings_follow_every_change_of_the_lines(rv: Reverie) -> None:
    memory_id = memory(rv)
    assert all_in_step(rv)
    lines = line_count(rv, memory_id)
    assert lines == len(fts.index_lines(rv.memory_read("ada").text)) + 2  # and the topic's two
    rv.memory_apply(
        "ada",
        {
            "operations": [
                {"action": "remove", "old": "Port 8080 is the admin console"},
                {"action": "write_topic", "topic": "databases", "content": "- Only one line\n"},
            ],
        },
    )
    assert all_in_step(rv)
    assert line_count(rv, memory_id) == lines - 2
    assert rv.memory_search("ada", "console") == []
    assert [h.excerpt for h in rv.memory_search("ada", "only line")] == ["- Only one line"]
    latest = rv.memories.current(memory_id).revision
    rv.memories.rewind(memory_id, latest - 1)  # before the change above
    assert all_in_step(rv)
    assert rv.memory_search("ada", "console")[0].excerpt == "- Port 8080 is the admin console"
    rv.memories.reindex(memory_id)
    assert all_in_step(rv)
    assert line_count(rv, memory_id) == lines
    bob = memory(rv, "bob")
    rv.delete_agent("bob")
    assert all_in_step(rv)
    assert postings_of(rv, bob) == 0
    assert postings_of(rv, memory_id) > 0
    assert strays(rv) == 0
    # remade whole, every memory at once: the same postings and ranking
    want = ranked_from_postings(rv, memory_id, "staging database port")
    with rv.state.transaction() as conn:
        postings.repair(conn)
    assert all_in_step(rv)
    assert strays(rv) == 0
    assert alike(ranked_from_postings(rv, memory_id, "staging database port"), want)


def test_a_database_made_before_the_postings_gets_them_when_opened(
    rv: Reverie, url: str, tmp_path: Path
) -> None:
    memory_id = memory(rv)
    want = ranked_from_postings(rv, memory_id, "staging database port")
    with rv.state.transaction() as conn:  # back to migration 102
        conn.execute("DROP TABLE memory_postings, memory_word_counts")
        conn.execute("CREATE INDEX memory_lines_tsv ON memory_lines USING GIN (tsv)")
        conn.execute("DROP TRIGGER memory_lines_postings_added ON memory_lines")
        conn.execute("DROP TRIGGER memory_lines_postings_removed ON memory_lines")
        for name in (
            "postings_added",
            "postings_removed",
            "postings_refill",
            "postings_of",
            "word_counts_of",
        ):
            conn.execute(f"DROP FUNCTION reverie_{name}")
        conn.execute("DROP FUNCTION reverie_word_query")
        conn.execute("DELETE FROM reverie_migrations WHERE version IN (103, 104)")
    rv.close()
    with Reverie(settings=Settings.load(tmp_path / "home", database_url=url)) as again:
        assert all_in_step(again)
        assert alike(ranked_from_postings(again, memory_id, "staging database port"), want)
        assert again.memory_search("ada", "tea")[0].excerpt.startswith("- Ada prefers green tea")


def test_doctor_rebuilds_postings_that_disagree_with_the_lines(rv: Reverie) -> None:
    memory_id = memory(rv)
    assert rv.doctor("ada").findings == []
    with rv.state.transaction() as conn:
        conn.execute("DELETE FROM memory_postings WHERE key = ?", (key_of(conn, memory_id, "tea"),))
        conn.execute(
            "UPDATE memory_postings SET w = w * 2 WHERE key = ?",
            (key_of(conn, memory_id, "port"),),
        )
        conn.execute(
            "INSERT INTO memory_postings (key, line_id, w) VALUES (?, 0, 1)",
            (key_of(conn, memory_id, "green"),),
        )
        conn.execute(
            "UPDATE memory_word_counts SET n = n + 1 WHERE memory_id = ? AND word = 'green'",
            (memory_id,),
        )
    assert rv.memory_search("ada", "tea") == []
    report = rv.doctor("ada")
    assert [(f.check, f.repaired) for f in report.findings] == [
        ("index", "rebuilt from the index rows")
    ]
    assert all_in_step(rv)
    assert rv.memory_search("ada", "tea")[0].excerpt.startswith("- Ada prefers green tea")
    assert rv.doctor("ada").findings == []
    # a wrong line count alone is found too
    with rv.state.transaction() as conn:
        conn.execute(
            "UPDATE memory_word_counts SET n = 1000 WHERE memory_id = ? AND word = ''",
            (memory_id,),
        )
    assert len(rv.doctor("ada").findings) == 1
    assert all_in_step(rv)


def back_to_103(conn: Any) -> None:
    """Undo migration 104 and remake 103's tables, triggers and postings from the lines: a
    database as the code before 104 left it (the lines, their GIN index, text-keyed
    postings)."""
    conn.execute("DROP TRIGGER memory_lines_postings_added ON memory_lines")
    conn.execute("DROP TRIGGER memory_lines_postings_removed ON memory_lines")
    conn.execute("DROP TABLE memory_postings, memory_word_counts")
    for name in ("postings_added()", "postings_removed()", "postings_refill(TEXT)"):
        conn.execute(f"DROP FUNCTION reverie_{name}")
    for name in ("postings_of", "word_counts_of", "word_query"):
        conn.execute(f"DROP FUNCTION reverie_{name}")
    conn.execute("CREATE INDEX memory_lines_tsv ON memory_lines USING GIN (tsv)")
    for statement in _split(postings.MIGRATION):
        conn.execute(statement)
    conn.execute("DELETE FROM reverie_migrations WHERE version = 104")


def test_a_database_with_103s_postings_moves_to_104_in_place(
    rv: Reverie, url: str, tmp_path: Path
) -> None:
    memory_id = memory(rv)
    want = {q: ranked_from_postings(rv, memory_id, q) for q in QUERIES}
    with rv.state.transaction() as conn:
        back_to_103(conn)
        old = conn.execute(
            "SELECT word, line_id, w FROM memory_postings WHERE memory_id = ? "
            "ORDER BY word, line_id",
            (memory_id,),
        ).fetchall()
    rv.close()
    assert len(old) > 20  # 103's postings, keyed by the memory's and the word's text
    with Reverie(settings=Settings.load(tmp_path / "home", database_url=url)) as again:
        conn = again.state.conn
        assert all_in_step(again)
        assert sorted(conn.execute(postings.kept_sql(), (memory_id,)).fetchall()) == sorted(old)
        for query in QUERIES:
            assert alike(ranked_from_postings(again, memory_id, query), want[query]), query
        # a posting is three numbers now, and the lines' GIN index is gone
        columns = conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'memory_postings' AND table_schema = current_schema() "
            "ORDER BY ordinal_position"
        ).fetchall()
        assert [tuple(c) for c in columns] == [
            ("key", "bigint"),
            ("line_id", "bigint"),
            ("w", "double precision"),
        ]
        assert conn.execute("SELECT to_regclass('memory_lines_tsv')").fetchone() == (None,)
        # and the triggers of 104 keep them: a write after the move
        again.memory_apply("ada", {"action": "add", "text": "Tea again, green tea"})
        assert all_in_step(again)
        assert strays(again) == 0
        assert again.memory_search("ada", "green tea")[0].excerpt == "- Tea again, green tea"
