"""Memory search on PostgreSQL from a postings table: ranking reads one btree, not the lines.

``memory_word_counts`` holds, per memory and word (a lexeme of a line's ``tsv``), the word's
number of lines (its document frequency) and a number of its own, ``key``; under the empty
word (no lexeme is empty), the memory's number of lines. Each word of each indexed line is one
row of ``memory_postings``: ``(key, line_id, w)``, the key of its memory and word, and ``w``
the line's weight for that word in the ranking of :func:`reverie.index.fts.pg_ranked`
(``ts_rank`` of the word with the field weights, over one plus the logarithm of the line's
length in words). Both are kept by statement triggers on ``memory_lines`` in the writing
transaction, so every path that changes the index rows (a write, reindex, rewind, ``reverie
migrate``, a deleted agent) keeps them in step, and :func:`repair` remakes them from the lines.

A search then sums ``idf x w`` over the postings of its words: a word's key and idf from one
row of the counts, then an index-only scan of the postings' primary key ``(key, line_id)
INCLUDE (w)`` per word, with no visit of the lines (their ``tsv`` is neither read nor tested)
until the best few are joined for their text. The scores are those of
:func:`~reverie.index.fts.pg_ranked` over the same rows (up to the order in which
floating-point terms are added: equal scores may differ in their last bit).

Migration 103 keyed each posting by its memory's and word's text, ``(memory_id, word,
line_id)``: 17 and about 6 bytes, in the table and again in its index. Migration 104 keys it
by the counts row's number: a posting is three 8-byte columns, and the memory and the word
are written once per memory and word, in the counts, rather than once per line.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "MIGRATION",
    "MIGRATION_104",
    "check",
    "kept_sql",
    "repair",
    "search",
    "search_sql",
    "search_with_sql",
]

#: The field weights (D, C, B, A) of a memory line: its own words A, its topic's C; the
#: default of :func:`reverie.index.fts.pg_ranked`, and what migration 103 wrote into the
#: postings (a change here needs a migration that refills them).
WEIGHTS = "{0.1, 0.2, 0.4, 1.0}"

#: Migration 103 (in :data:`reverie.store.postgres.EXTRA_MIGRATIONS`): the tables, the
#: functions that fill them, the triggers, and the postings of the lines already there.
#: Kept as it ran: migration 104 replaces its tables, triggers and functions but
#: ``reverie_word_query``, ``reverie_postings_of`` and ``reverie_word_counts_of``.
#: Index-only scans need pages marked all-visible, so the postings are vacuumed after every
#: 10,000 new rows rather than a fifth of the table.
MIGRATION = f"""
CREATE TABLE memory_postings (
    memory_id TEXT NOT NULL,
    word TEXT NOT NULL,
    line_id BIGINT NOT NULL,
    w DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (memory_id, word, line_id) INCLUDE (w)
) WITH (
    autovacuum_vacuum_insert_threshold = 10000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_scale_factor = 0.02
);
CREATE TABLE memory_word_counts (
    memory_id TEXT NOT NULL,
    word TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (memory_id, word)
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
    INSERT INTO memory_word_counts AS c (memory_id, word, n)
    SELECT memory_id, word, count(*) FROM (
        SELECT n.memory_id, u.lexeme AS word FROM added n, unnest(n.tsv) u
        UNION ALL SELECT memory_id, '' FROM added
    ) x GROUP BY memory_id, word
    ON CONFLICT (memory_id, word) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END $$;
CREATE FUNCTION reverie_postings_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_postings p USING removed o, unnest(o.tsv) u
    WHERE p.memory_id = o.memory_id AND p.word = u.lexeme AND p.line_id = o.id;
    UPDATE memory_word_counts c SET n = c.n - r.n
    FROM (
        SELECT memory_id, word, count(*) AS n FROM (
            SELECT o.memory_id, u.lexeme AS word FROM removed o, unnest(o.tsv) u
            UNION ALL SELECT memory_id, '' FROM removed
        ) x GROUP BY memory_id, word
    ) r
    WHERE c.memory_id = r.memory_id AND c.word = r.word;
    RETURN NULL;
END $$;
CREATE FUNCTION reverie_word_counts_of(memory TEXT)
    RETURNS TABLE (memory_id TEXT, word TEXT, n BIGINT) STABLE LANGUAGE sql AS $$
    SELECT x.memory_id, u.lexeme, count(*) FROM memory_lines x, unnest(x.tsv) u
    WHERE memory IS NULL OR x.memory_id = memory GROUP BY x.memory_id, u.lexeme
    UNION ALL
    SELECT x.memory_id, '', count(*) FROM memory_lines x
    WHERE memory IS NULL OR x.memory_id = memory GROUP BY x.memory_id
$$;
CREATE FUNCTION reverie_postings_refill(memory TEXT) RETURNS void LANGUAGE sql AS $$
    DELETE FROM memory_postings WHERE memory IS NULL OR memory_id = memory;
    DELETE FROM memory_word_counts WHERE memory IS NULL OR memory_id = memory;
    INSERT INTO memory_postings (memory_id, word, line_id, w)
    SELECT p.* FROM memory_lines x, reverie_postings_of(x.memory_id, x.id, x.tsv, x.words) p
    WHERE memory IS NULL OR x.memory_id = memory;
    INSERT INTO memory_word_counts (memory_id, word, n)
    SELECT * FROM reverie_word_counts_of(memory);
$$;
CREATE TRIGGER memory_lines_postings_added AFTER INSERT ON memory_lines
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION reverie_postings_added();
CREATE TRIGGER memory_lines_postings_removed AFTER DELETE ON memory_lines
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION reverie_postings_removed();
SELECT reverie_postings_refill(NULL);
"""


#: Migration 104: the postings keyed by their memory and word's number in the counts
#: (``memory_word_counts.key``) instead of the two texts. The tables are made again and
#: filled from the lines in key order before their primary keys are built, so that the
#: indexes start packed; the triggers and the refill take the key from the counts, and add
#: postings in key order (a new memory's keys are the newest: its postings then go to the
#: end of the index in order and fill its pages, where line order would split them half
#: full). The GIN index of ``memory_lines.tsv`` goes: since 103 no search reads it, and every
#: write paid for it (history search keeps its own, ``history_docs_tsv``).
MIGRATION_104 = """
DROP TRIGGER memory_lines_postings_added ON memory_lines;
DROP TRIGGER memory_lines_postings_removed ON memory_lines;
DROP FUNCTION reverie_postings_added();
DROP FUNCTION reverie_postings_removed();
DROP FUNCTION reverie_postings_refill(TEXT);
DROP TABLE memory_postings, memory_word_counts;
DROP INDEX memory_lines_tsv;
CREATE TABLE memory_word_counts (
    key BIGINT GENERATED BY DEFAULT AS IDENTITY,
    n BIGINT NOT NULL,
    memory_id TEXT NOT NULL,
    word TEXT NOT NULL
);
CREATE TABLE memory_postings (
    key BIGINT NOT NULL,
    line_id BIGINT NOT NULL,
    w DOUBLE PRECISION NOT NULL
) WITH (
    autovacuum_vacuum_insert_threshold = 10000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_scale_factor = 0.02
);
INSERT INTO memory_word_counts (memory_id, word, n)
SELECT * FROM reverie_word_counts_of(NULL) ORDER BY 1, 2;
ANALYZE memory_word_counts;
INSERT INTO memory_postings (key, line_id, w)
WITH p AS MATERIALIZED (
    SELECT p.* FROM memory_lines x, reverie_postings_of(x.memory_id, x.id, x.tsv, x.words) p
)
SELECT c.key, p.line_id, p.w FROM p JOIN memory_word_counts c
    ON c.memory_id = p.memory_id AND c.word = p.word
ORDER BY 1, 2;
ALTER TABLE memory_word_counts ADD PRIMARY KEY (memory_id, word);
ALTER TABLE memory_postings ADD PRIMARY KEY (key, line_id) INCLUDE (w);
CREATE FUNCTION reverie_postings_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH p AS MATERIALIZED (
        SELECT p.* FROM added n, reverie_postings_of(n.memory_id, n.id, n.tsv, n.words) p
    ), c AS (
        INSERT INTO memory_word_counts AS c (memory_id, word, n)
        SELECT memory_id, word, count(*) FROM (
            SELECT memory_id, word FROM p UNION ALL SELECT memory_id, '' FROM added
        ) x GROUP BY memory_id, word
        ON CONFLICT (memory_id, word) DO UPDATE SET n = c.n + excluded.n
        RETURNING c.memory_id, c.word, c.key
    )
    INSERT INTO memory_postings (key, line_id, w)
    SELECT c.key, p.line_id, p.w FROM p JOIN c ON c.memory_id = p.memory_id AND c.word = p.word
    ORDER BY 1, 2;
    RETURN NULL;
END $$;
CREATE FUNCTION reverie_postings_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH r AS MATERIALIZED (
        SELECT o.memory_id, u.lexeme AS word, o.id FROM removed o, unnest(o.tsv) u
    ), c AS (
        UPDATE memory_word_counts c SET n = c.n - x.n
        FROM (
            SELECT memory_id, word, count(*) AS n FROM (
                SELECT memory_id, word FROM r UNION ALL SELECT memory_id, '' FROM removed
            ) y GROUP BY memory_id, word
        ) x
        WHERE c.memory_id = x.memory_id AND c.word = x.word
        RETURNING c.memory_id, c.word, c.key
    ), gone AS MATERIALIZED (
        SELECT c.key, r.id FROM r JOIN c ON c.memory_id = r.memory_id AND c.word = r.word
    )
    DELETE FROM memory_postings p USING gone WHERE p.key = gone.key AND p.line_id = gone.id;
    RETURN NULL;
END $$;
CREATE FUNCTION reverie_postings_refill(memory TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF memory IS NULL THEN
        DELETE FROM memory_postings;
        DELETE FROM memory_word_counts;
    ELSE
        DELETE FROM memory_postings p USING memory_word_counts c
        WHERE c.memory_id = memory AND p.key = c.key;
        DELETE FROM memory_word_counts WHERE memory_id = memory;
    END IF;
    INSERT INTO memory_word_counts (memory_id, word, n)
    SELECT * FROM reverie_word_counts_of(memory);
    WITH x AS MATERIALIZED (
        SELECT x.memory_id, x.id, x.tsv, x.words FROM memory_lines x WHERE memory IS NULL
        UNION ALL
        SELECT x.memory_id, x.id, x.tsv, x.words FROM memory_lines x WHERE x.memory_id = memory
    ), p AS MATERIALIZED (
        SELECT p.* FROM x, reverie_postings_of(x.memory_id, x.id, x.tsv, x.words) p
    ), c AS MATERIALIZED (
        SELECT c.memory_id, c.word, c.key FROM memory_word_counts c
        WHERE memory IS NULL
        UNION ALL
        SELECT c.memory_id, c.word, c.key FROM memory_word_counts c WHERE c.memory_id = memory
    )
    INSERT INTO memory_postings (key, line_id, w)
    SELECT c.key, p.line_id, p.w FROM p JOIN c ON c.memory_id = p.memory_id AND c.word = p.word
    ORDER BY 1, 2;
END $$;
CREATE TRIGGER memory_lines_postings_added AFTER INSERT ON memory_lines
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION reverie_postings_added();
CREATE TRIGGER memory_lines_postings_removed AFTER DELETE ON memory_lines
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION reverie_postings_removed();
ANALYZE memory_word_counts;
ANALYZE memory_postings;
"""


def _ranking(memory: str, limit: int) -> str:
    """The common table expressions of a search, up to ``best``: the ids and scores of the
    best ``limit`` lines (parameter: the words) of the memory whose id ``memory`` (an SQL
    expression) gives.

    Psycopg prepares a statement after its fifth run, and PostgreSQL then plans it anew at
    every run (a custom plan, about 0.3 ms here) for as long as that looks cheaper than one
    plan for all runs (the generic plan). The plan is the same either way (index lookups
    only), but a custom plan sees the number of words and the limit and so estimates less:
    on a 10k-line memory PostgreSQL planned every search again. The words are therefore read
    through a sub-select, which no plan sees into, and ``limit`` (a whole number from 1 to
    20) is written into the statement, so that the estimates agree and the plan is made once
    per connection and statement."""
    return (
        "q AS MATERIALIZED (SELECT (SELECT u.lexeme "
        "FROM unnest(to_tsvector('reverie_english', t)) u WHERE 1 = ANY (u.positions)) AS word "
        "FROM unnest((SELECT CAST(? AS text[]))) AS t), "
        "idf AS MATERIALIZED (SELECT c.key, ln(1 + n.n::float8 / NULLIF(c.n, 0)) AS idf "
        f"FROM q JOIN memory_word_counts c ON c.memory_id = {memory} AND c.word = q.word "
        "JOIN memory_word_counts n ON n.memory_id = c.memory_id AND n.word = ''), "
        "best AS (SELECT p.line_id AS id, sum(idf.idf * p.w) AS r FROM idf "
        "JOIN memory_postings p ON p.key = idf.key "
        f"GROUP BY p.line_id ORDER BY r DESC, p.line_id LIMIT {int(limit)}) "
    )


def search_sql(limit: int) -> str:
    """The best ``limit`` lines of one memory for some words, best first: ``(path, text,
    score)``. Parameters: the query's words (a text array), the memory id.

    A word's lexeme is the first of ``to_tsvector`` over it (a word of letters and digits
    gives one; ``a_b`` gives two, and ``a`` stands for it); its idf is ``ln(1 + n / df)``
    with ``n`` the memory's lines and ``df`` the lines that hold it. A word that matches
    nothing adds nothing (it has no postings)."""
    return (
        f"WITH {_ranking('?', limit)}"
        "SELECT l.path, l.text, b.r FROM best b JOIN memory_lines l ON l.id = b.id "
        "ORDER BY b.r DESC, b.id"
    )


def search_with_sql(lookup: str, limit: int) -> str:
    """:func:`search_sql` in the statement that finds the memory, so that a search is one
    round trip to the server. ``lookup`` is a query of at most one row whose column
    ``memory`` is the memory's id (the agent's row and its memory, say). Each row is ``(path,
    text, score)`` followed by the lookup's row: no row when the lookup finds none, one row
    with ``NULL`` path, text and score when the memory has no hit (or ``memory`` is ``NULL``).
    Parameters: the lookup's, then the words."""
    return (
        f"WITH m AS MATERIALIZED ({lookup}), {_ranking('(SELECT m.memory FROM m)', limit)}"
        "SELECT l.path, l.text, b.r, m.* FROM m LEFT JOIN "
        "(best b JOIN memory_lines l ON l.id = b.id) ON true ORDER BY b.r DESC, b.id"
    )


def search(conn: Any, memory_id: str, words: list[str], limit: int) -> list[tuple[Any, ...]]:
    """:func:`search_sql` for ``words`` in one memory: ``(path, text, score)``, best first."""
    rows: list[tuple[Any, ...]] = conn.execute(search_sql(limit), (words, memory_id)).fetchall()
    return rows


def kept_sql() -> str:
    """The postings of one memory as ``(word, line_id, w)``; parameter: the memory id."""
    return (
        "SELECT c.word, p.line_id, p.w FROM memory_word_counts c "
        "JOIN memory_postings p ON p.key = c.key WHERE c.memory_id = ?"
    )


def check(conn: Any, memory_id: str) -> bool:
    """Whether the postings and the counts of one memory are those its lines make."""
    derived = (
        "SELECT p.word, p.line_id, p.w FROM memory_lines x, "
        "reverie_postings_of(x.memory_id, x.id, x.tsv, x.words) p WHERE x.memory_id = ?"
    )
    kept = kept_sql()
    counted = "SELECT word, n FROM reverie_word_counts_of(?)"
    counts = "SELECT word, n FROM memory_word_counts WHERE memory_id = ? AND n <> 0"
    row = conn.execute(
        f"SELECT NOT EXISTS (({derived} EXCEPT ALL {kept}) UNION ALL ({kept} EXCEPT ALL "
        f"{derived})) AND NOT EXISTS (({counted} EXCEPT ALL {counts}) UNION ALL ({counts} "
        f"EXCEPT ALL {counted}))",
        (memory_id,) * 8,
    ).fetchone()
    return bool(row and row[0])


def repair(conn: Any, memory_id: str | None = None) -> None:
    """Remake the postings and counts of one memory (every memory: ``None``) from its lines,
    inside ``conn``'s transaction."""
    conn.execute("SELECT reverie_postings_refill(?)", (memory_id,))
