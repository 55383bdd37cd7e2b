"""Memory search on PostgreSQL from a postings table: ranking reads one btree, not the lines.

Each word of each indexed line (a lexeme of its ``tsv``) is one row of ``memory_postings``:
``(memory_id, word, line_id, w)``, where ``w`` is the line's weight for that word in the
ranking of :func:`reverie.index.fts.pg_ranked` (``ts_rank`` of the word with the field
weights, over one plus the logarithm of the line's length in words). ``memory_line_counts``
holds each memory's number of lines. Both are kept by statement triggers on ``memory_lines``
in the writing transaction, so every path that changes the index rows (a write, reindex,
rewind, ``reverie migrate``, a deleted agent) keeps them in step, and :func:`repair` remakes
them from the lines.

A search then sums ``idf x w`` over the postings of its words: an index-only scan of the
primary key ``(memory_id, word, line_id) INCLUDE (w)`` per word, with no visit of the lines
(their ``tsv`` is neither read nor tested) until the best few are joined for their text. The
scores are those of :func:`~reverie.index.fts.pg_ranked` over the same rows (up to the order
in which floating-point terms are added: equal scores may differ in their last bit).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MIGRATION", "check", "repair", "search_sql"]

#: The field weights (D, C, B, A) of a memory line: its own words A, its topic's C. The
#: weights of :func:`reverie.index.fts.pg_ranked`'s default, written into migration 103.
WEIGHTS = "{0.1, 0.2, 0.4, 1.0}"

#: Migration 103 (in :data:`reverie.store.postgres.EXTRA_MIGRATIONS`): the tables, the
#: functions that fill them, the triggers, and the postings of the lines already there.
MIGRATION = f"""
CREATE TABLE memory_postings (
    memory_id TEXT NOT NULL,
    word TEXT NOT NULL,
    line_id BIGINT NOT NULL,
    w DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (memory_id, word, line_id) INCLUDE (w)
);
CREATE TABLE memory_line_counts (
    memory_id TEXT PRIMARY KEY,
    lines BIGINT NOT NULL
);
CREATE FUNCTION reverie_word_query(word TEXT) RETURNS tsquery
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE sql
    AS $$ SELECT ('''' || replace(replace(word, '\\', '\\\\'), '''', '''''') || '''')::tsquery $$;
CREATE FUNCTION reverie_postings_of(memory TEXT, line BIGINT, tsv tsvector, words BIGINT)
    RETURNS TABLE (memory_id TEXT, word TEXT, line_id BIGINT, w DOUBLE PRECISION)
    IMMUTABLE PARALLEL SAFE LANGUAGE sql AS $$
    SELECT memory, u.lexeme, line,
           ts_rank(CAST('{WEIGHTS}' AS real[]), tsv, reverie_word_query(u.lexeme), 0)
           / (1 + ln(1 + words))
    FROM unnest(tsv) u
$$;
CREATE FUNCTION reverie_postings_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_postings (memory_id, word, line_id, w)
    SELECT p.* FROM added n, reverie_postings_of(n.memory_id, n.id, n.tsv, n.words) p;
    INSERT INTO memory_line_counts AS c (memory_id, lines)
    SELECT memory_id, count(*) FROM added GROUP BY memory_id
    ON CONFLICT (memory_id) DO UPDATE SET lines = c.lines + excluded.lines;
    RETURN NULL;
END $$;
CREATE FUNCTION reverie_postings_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_postings p USING removed o, unnest(o.tsv) u
    WHERE p.memory_id = o.memory_id AND p.word = u.lexeme AND p.line_id = o.id;
    UPDATE memory_line_counts c SET lines = c.lines - r.n
    FROM (SELECT memory_id, count(*) AS n FROM removed GROUP BY memory_id) r
    WHERE c.memory_id = r.memory_id;
    RETURN NULL;
END $$;
CREATE FUNCTION reverie_postings_refill(memory TEXT) RETURNS void LANGUAGE sql AS $$
    DELETE FROM memory_postings WHERE memory IS NULL OR memory_id = memory;
    DELETE FROM memory_line_counts WHERE memory IS NULL OR memory_id = memory;
    INSERT INTO memory_postings (memory_id, word, line_id, w)
    SELECT p.* FROM memory_lines x, reverie_postings_of(x.memory_id, x.id, x.tsv, x.words) p
    WHERE memory IS NULL OR x.memory_id = memory;
    INSERT INTO memory_line_counts (memory_id, lines)
    SELECT memory_id, count(*) FROM memory_lines
    WHERE memory IS NULL OR memory_id = memory GROUP BY memory_id;
$$;
CREATE TRIGGER memory_lines_postings_added AFTER INSERT ON memory_lines
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION reverie_postings_added();
CREATE TRIGGER memory_lines_postings_removed AFTER DELETE ON memory_lines
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION reverie_postings_removed();
SELECT reverie_postings_refill(NULL);
"""


def search_sql() -> str:
    """The best lines of one memory for some words, best first: ``(path, text, score)``.
    Parameters: the query's words (a text array), the memory id three times, the limit.

    A word's lexeme is the first of ``to_tsvector`` over it (a word of letters and digits
    gives one; ``a_b`` gives two, and ``a`` stands for it); its idf is ``ln(1 + n / df)``
    with ``n`` the memory's lines and ``df`` its postings. A word that matches nothing
    adds nothing (its idf is NULL and it has no postings)."""
    return (
        "WITH q AS MATERIALIZED (SELECT (SELECT u.lexeme "
        "FROM unnest(to_tsvector('reverie_english', t)) u WHERE 1 = ANY (u.positions)) AS word "
        "FROM unnest(CAST(? AS text[])) AS t), "
        "idf AS MATERIALIZED (SELECT q.word, ln(1 + "
        "(SELECT lines FROM memory_line_counts WHERE memory_id = ?)::float8 / NULLIF("
        "(SELECT count(*) FROM memory_postings p WHERE p.memory_id = ? AND p.word = q.word), "
        "0)) AS idf FROM q), "
        "best AS (SELECT p.line_id AS id, sum(idf.idf * p.w) AS r FROM idf "
        "JOIN memory_postings p ON p.memory_id = ? AND p.word = idf.word "
        "GROUP BY p.line_id ORDER BY r DESC, p.line_id LIMIT ?) "
        "SELECT l.path, l.text, b.r FROM best b JOIN memory_lines l ON l.id = b.id "
        "ORDER BY b.r DESC, b.id"
    )


def check(conn: Any, memory_id: str) -> bool:
    """Whether the postings and the line count of one memory are those its lines make."""
    derived = (
        "SELECT p.word, p.line_id, p.w FROM memory_lines x, "
        "reverie_postings_of(x.memory_id, x.id, x.tsv, x.words) p WHERE x.memory_id = ?"
    )
    kept = "SELECT word, line_id, w FROM memory_postings WHERE memory_id = ?"
    row = conn.execute(
        "SELECT (SELECT count(*) FROM memory_lines WHERE memory_id = ?) = COALESCE("
        "(SELECT lines FROM memory_line_counts WHERE memory_id = ?), 0) AND NOT EXISTS "
        f"(({derived} EXCEPT ALL {kept}) UNION ALL ({kept} EXCEPT ALL {derived}))",
        (memory_id,) * 6,
    ).fetchone()
    return bool(row and row[0])


def repair(conn: Any, memory_id: str | None = None) -> None:
    """Remake the postings and line counts of one memory (every memory: ``None``) from its
    lines, inside ``conn``'s transaction."""
    conn.execute("SELECT reverie_postings_refill(?)", (memory_id,))
