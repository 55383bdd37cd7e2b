"""The full-text index of memory files: derived from git, rebuilt by ``reverie reindex`` (M2).

Each non-blank, non-heading line of a memory file is one row (an entry or a line of detail),
so a hit points at the line that matched. Rows are kept in ``memory_lines``; an FTS5 table with
external content indexes them (Porter stemming over unicode61), kept in step by triggers.
Updates are line diffs, so a write costs what it changes, not the size of the memory. Where
FTS5 is missing the same rows are searched by a bounded scan.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from reverie.core.markdown import common_ends, lines_of

from . import postings

__all__ = [
    "FTS_SCHEMA",
    "LINES_SCHEMA",
    "SCOPE_MIGRATION",
    "SearchHit",
    "content_terms",
    "create_tables",
    "excerpt",
    "fts5_available",
    "fts_query",
    "index_lines",
    "line_changes",
    "pg_hits",
    "pg_search",
    "query_terms",
    "remove_lines",
    "replace_file",
    "round_score",
    "scan_rank",
    "scope_word",
    "search",
    "statements",
    "topic_of",
]

LINES_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_lines (
    id INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL,
    path TEXT NOT NULL,
    topic TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_lines_by_file ON memory_lines (memory_id, path);
"""

FTS_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5 (
    text, topic, scope, content='memory_lines', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS memory_lines_ai AFTER INSERT ON memory_lines BEGIN
    INSERT INTO memory_fts (rowid, text, topic, scope)
    VALUES (new.id, new.text, new.topic, new.scope);
END;
CREATE TRIGGER IF NOT EXISTS memory_lines_ad AFTER DELETE ON memory_lines BEGIN
    INSERT INTO memory_fts (memory_fts, rowid, text, topic, scope)
    VALUES ('delete', old.id, old.text, old.topic, old.scope);
END;
"""

#: The tables of the index, for :func:`create_tables` to drop and remake when they are damaged.
TABLES = ("memory_fts", "memory_lines")
_SCOPE_COLUMN = "ALTER TABLE memory_lines ADD COLUMN scope TEXT NOT NULL DEFAULT ''"

#: Migration 4: every row carries its memory as one indexed word, so that a search matches and
#: ranks only the rows of its own memory (not every memory of the home, then filters). The SQL
#: spells :func:`scope_word` for the ids this store makes ("mem_" and lower-case hex).
SCOPE_MIGRATION = f"""
{_SCOPE_COLUMN};
UPDATE memory_lines SET scope = 'm' || replace(memory_id, '_', '');
DROP TRIGGER IF EXISTS memory_lines_ai;
DROP TRIGGER IF EXISTS memory_lines_ad;
DROP TABLE IF EXISTS memory_fts;
"""

_HEADING = re.compile(r"^#{1,6}\s")
_WORD = re.compile(r"\w+")
MAX_TERMS = 32
EXCERPT_CHARS = 300


@dataclass(frozen=True)
class SearchHit:
    """One search result: the file, the matching line (cut to an excerpt) and its score."""

    source: str
    excerpt: str
    score: float


def fts5_available(conn: sqlite3.Connection) -> bool:
    """Whether this SQLite build has FTS5."""
    try:
        conn.execute("CREATE VIRTUAL TABLE temp._reverie_probe USING fts5(x)")
        conn.execute("DROP TABLE temp._reverie_probe")
    except sqlite3.OperationalError:
        return False
    return True


def statements(script: str) -> list[str]:
    """The statements of an SQL script. Triggers hold ';' inside BEGIN ... END, so it is split
    where SQLite says a statement is complete, not at every ';'."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    out.append(buf.strip())
    return [s for s in out if s]


def create_tables(conn: sqlite3.Connection, *, has_fts5: bool) -> None:
    """Create the index's tables as this version has them (the schema of migration 1, the
    scope column of migration 4, the FTS5 table and its triggers), empty. For a rebuild after
    damage; call inside the caller's transaction, with the old tables dropped."""
    for statement in statements(LINES_SCHEMA):
        conn.execute(statement)
    if "scope" not in {row[1] for row in conn.execute("PRAGMA table_info(memory_lines)")}:
        conn.execute(_SCOPE_COLUMN)
    if has_fts5:
        for statement in statements(FTS_SCHEMA):
            conn.execute(statement)


def index_lines(text: str | None) -> list[str]:
    """The lines of a file that the index holds: non-blank and not headings."""
    if not text:
        return []
    return [s for line in text.split("\n") if (s := line.strip()) and not _HEADING.match(s)]


def _topic(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md").replace("-", " ").replace("_", " ")


def line_changes(old: str | None, new: str | None) -> tuple[Counter[str], list[str]]:
    """The index rows a file's change from ``old`` to ``new`` removes (each line with how many
    of its copies) and adds (in the new text's order): a line diff.

    The rows are a multiset of lines, so the lines both texts share at their start and end
    cancel out and are not looked at (a section appended to a long file costs its own lines).
    """
    old_lines = lines_of(old) if old else ()
    new_lines = lines_of(new) if new else ()
    head, tail = common_ends(old_lines, new_lines)
    before = Counter(index_lines("\n".join(old_lines[head : len(old_lines) - tail])))
    after = Counter(index_lines("\n".join(new_lines[head : len(new_lines) - tail])))
    return before - after, [line for line, n in (after - before).items() for _ in range(n)]


def remove_lines(conn: Any, memory_id: str, path: str, removed: Counter[str]) -> None:
    """Delete the rows :func:`line_changes` says a file's change removes."""
    for line, n in removed.items():
        conn.execute(
            "DELETE FROM memory_lines WHERE id IN (SELECT id FROM memory_lines "
            "WHERE memory_id = ? AND path = ? AND text = ? LIMIT ?)",
            (memory_id, path, line, n),
        )


def topic_of(path: str) -> str:
    """The topic words of a memory file's rows (none for ``MEMORY.md``)."""
    return _topic(path) if path != "MEMORY.md" else ""


def replace_file(
    conn: sqlite3.Connection, memory_id: str, path: str, old: str | None, new: str | None
) -> None:
    """Bring the rows of one file from its ``old`` text to its ``new`` text (a line diff,
    :func:`line_changes`)."""
    removed, added = line_changes(old, new)
    remove_lines(conn, memory_id, path, removed)
    topic = topic_of(path)
    scope = scope_word(memory_id)
    if is_postgres(conn):
        # One statement per file: the triggers that keep the search postings and their
        # counts run once for all its lines, so a count is updated once per file, not once
        # per line (in one transaction, each update of a row lengthens the chain of its
        # versions that the next one walks: a 10k-line fill took 30 times as long).
        if added:
            conn.execute(
                "INSERT INTO memory_lines (memory_id, path, topic, scope, text) "
                "SELECT ?, ?, ?, ?, t FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS u (t, k) "
                "ORDER BY k",
                (memory_id, path, topic, scope, added),
            )
        return
    conn.executemany(
        "INSERT INTO memory_lines (memory_id, path, topic, scope, text) VALUES (?, ?, ?, ?, ?)",
        [(memory_id, path, topic, scope, line) for line in added],
    )


def scope_word(owner_id: str, prefix: str = "m") -> str:
    """The one indexed word that marks an owner's rows (a memory's lines, an agent's history),
    ANDed into every match so that FTS5 ranks only those rows. Ids hold '_', which the
    tokenizer splits on, so only letters and digits are kept.
    """
    return prefix + re.sub(r"[^0-9A-Za-z]", "", owner_id).lower()


def query_terms(text: str) -> list[str]:
    """The distinct words of a query, lower-cased, at most 32 (the rest adds little)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


#: Query words that match most lines and weigh almost nothing in BM25.
# fmt: off
STOPWORDS = frozenset(
    {
        "a", "about", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been",
        "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have",
        "he", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "my", "no", "not",
        "of", "on", "or", "our", "she", "so", "than", "that", "the", "their", "them", "then",
        "there", "these", "they", "this", "those", "to", "too", "us", "very", "was", "we", "were",
        "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would", "yes",
        "you", "your",
    }
)
# fmt: on


def content_terms(text: str) -> list[str]:
    """:func:`query_terms` without function words ("what", "the", "do"), unless nothing else
    remains: they match most lines, cost ranking time in proportion, and add almost nothing
    to a ranking."""
    terms = query_terms(text)
    return [t for t in terms if t not in STOPWORDS] or terms


def fts_query(text: str, *, drop_stopwords: bool = False) -> str | None:
    """A MATCH expression for any user text: each word a quoted phrase, joined by OR.

    Quoting makes FTS5 syntax (``NOT``, ``*``, ``:``, quotes, parentheses) plain text, so no
    input can break the query. ``None`` when the text has no words. With ``drop_stopwords``,
    the words are :func:`content_terms`.
    """
    terms = content_terms(text) if drop_stopwords else query_terms(text)
    if not terms:
        return None
    return " OR ".join(_quote(t) for t in terms)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def search(
    conn: sqlite3.Connection,
    memory_id: str,
    query: str,
    limit: int,
    *,
    use_fts: bool = True,
    scan_max_lines: int = 50_000,
) -> list[SearchHit]:
    """Rank the lines of one memory against ``query``, best first."""
    if use_fts and is_postgres(conn):
        return pg_search(conn, memory_id, query, limit)
    if use_fts:
        expr = fts_query(query, drop_stopwords=True)
        if expr is None:
            return []
        # Match and rank inside the FTS table, restricted to this memory's rows by its scope
        # word; only the top rows are then joined to their lines.
        rows = conn.execute(
            "SELECT l.path, l.text, h.r FROM (SELECT rowid, bm25(memory_fts, 1.0, 0.5, 0.0) AS r"
            " FROM memory_fts WHERE memory_fts MATCH ? ORDER BY r LIMIT ?) AS h"
            " CROSS JOIN memory_lines AS l ON l.id = h.rowid WHERE l.memory_id = ? ORDER BY h.r",
            (f"scope : {_quote(scope_word(memory_id))} AND ({expr})", limit, memory_id),
        ).fetchall()
        return [SearchHit(p, excerpt(t, query_terms(query)), round_score(-r)) for p, t, r in rows]
    return _scan(conn, memory_id, query, limit, scan_max_lines)


def is_postgres(conn: object) -> bool:
    """Whether ``conn`` is a PostgreSQL connection of ``reverie.store.postgres``."""
    return getattr(conn, "dialect", "sqlite") == "postgres"


def pg_terms(text: str) -> list[str]:
    """The content words of any user text as ``to_tsquery`` lexemes, each quoted, so that
    no input is read as query syntax."""
    return ["'" + t.replace("'", "''").replace("\\", "") + "'" for t in content_terms(text)]


def pg_ranked(rows: str, scope: str, weights: str = postings.WEIGHTS) -> str:
    """PostgreSQL's ranking, shaped like BM25: for each query word, its inverse document
    frequency among ``rows`` (a table and its alias ``x``) that ``scope`` admits, times
    ``ts_rank`` of the word with the field ``weights`` (D, C, B, A), divided by one plus the
    logarithm of the main field's length in words (``words``: the line, the message, not its
    context, as BM25 normalizes each field by its own length); summed over the words a row
    matches. Parameters: the words (a text array), then the scope's three times (the
    document count, each way of matching), then the limit.

    A word's matches are found one of two ways, chosen as the query runs from the number of
    rows in scope: a large scope (over 1,000 rows, and over a twentieth of the table) asks the
    GIN index of ``tsv``; any other reads its own rows and tests each (100 rows cost well
    under a millisecond, where the index would read a common word's matches in every other
    scope too: 15 ms a word with 1M lines in the table). The planner cannot make this choice:
    it cannot estimate a word that arrives as a parameter.
    The words' queries are materialized (inlined, ``to_tsquery`` ran again for every matching
    row), and a word's document frequency is a window count over its matches (a join of the
    matches with their counts ran as a nested loop on a table not yet analyzed: seconds)."""
    table = rows.split()[0]
    rank = f"ts_rank(CAST('{weights}' AS real[]), x.tsv, q.tq, 0) / (1 + ln(1 + x.words)) AS w"
    return (
        "WITH q AS MATERIALIZED (SELECT t, to_tsquery('reverie_english', t) AS tq "
        "FROM unnest(CAST(? AS text[])) AS t), "
        f"n AS (SELECT count(*) AS n FROM {rows} WHERE {scope}), "
        "via AS (SELECT (SELECT n FROM n) > 1000 AND (SELECT n FROM n) * 20 > "
        f"(SELECT reltuples FROM pg_class WHERE oid = '{table}'::regclass) AS gin), "
        f"hit AS (SELECT x.id, q.t, {rank} FROM q JOIN {rows} ON x.tsv @@ q.tq "
        f"WHERE {scope} AND (SELECT gin FROM via) "
        f"UNION ALL SELECT x.id, q.t, {rank} FROM q "
        f"JOIN (SELECT * FROM {rows} WHERE {scope} OFFSET 0) x ON x.tsv @@ q.tq "
        "WHERE NOT (SELECT gin FROM via)), "
        "df AS (SELECT id, w, count(*) OVER (PARTITION BY t) AS df FROM hit) "
        "SELECT id, sum(ln(1 + (SELECT n FROM n) / df::float8) * w) AS r FROM df "
        "GROUP BY id ORDER BY r DESC, id LIMIT ?"
    )


def pg_search(conn: Any, memory_id: str, query: str, limit: int) -> list[SearchHit]:
    """PostgreSQL's ranking of one memory's lines: :func:`pg_ranked`'s (a line's own words
    weigh A, its topic's C), read from the postings that :mod:`reverie.index.postings` keeps."""
    terms = content_terms(query)
    if not terms:
        return []
    return pg_hits(postings.search(conn, memory_id, terms, limit), query)


def pg_hits(rows: Sequence[Sequence[Any]], query: str) -> list[SearchHit]:
    """The hits of PostgreSQL's memory search from its ``(path, text, score)`` rows, in their
    order: each line cut to an excerpt around the first query word it holds."""
    words = query_terms(query)
    return [SearchHit(r[0], excerpt(r[1], words), round_score(r[2])) for r in rows]


def _scan(
    conn: sqlite3.Connection, memory_id: str, query: str, limit: int, max_lines: int
) -> list[SearchHit]:
    """The bounded fallback: rank at most ``max_lines`` rows with :func:`scan_rank`."""
    rows = conn.execute(
        "SELECT path, text FROM memory_lines WHERE memory_id = ? ORDER BY id LIMIT ?",
        (memory_id, max_lines),
    ).fetchall()
    ranked = scan_rank([t for _, t in rows], query, limit)
    terms = query_terms(query)
    return [SearchHit(rows[i][0], excerpt(rows[i][1], terms), round_score(s)) for i, s in ranked]


def scan_rank(texts: Sequence[str], query: str, limit: int) -> list[tuple[int, float]]:
    """Rank texts without FTS5: ``(index, score)`` of the best ``limit``, best first, equal
    scores in the order of ``texts``. The scan fallback of memory and history search.

    A text scores log(1 + n / df) for each query word that one of its words matches: the word
    itself, or, both longer than three letters, one that starts with the other (a crude
    stand-in for stemming: "deploy" and "deploys"). Function words are left out as in the FTS5
    path. One regular expression per query word runs once over all the texts, in C.
    """
    terms = content_terms(query)
    if not terms or not texts:
        return []
    # One lower-cased text, a line per input: a match's offset tells its input. lower() may
    # change a length ("İ"), so the offsets are measured on the lowered texts.
    lowered = [t.lower().replace("\n", " ") for t in texts]
    text = "\n".join(lowered)
    starts = list(itertools.accumulate((len(t) + 1 for t in lowered[:-1]), initial=0))
    scores: dict[int, float] = {}
    for term in terms:
        matched = {bisect.bisect_right(starts, at) - 1 for at in _scan_hits(text, term)}
        for i in matched:
            scores[i] = scores.get(i, 0.0) + math.log(1 + len(texts) / len(matched))
    best = sorted(scores, key=lambda i: (-scores[i], i))[:limit]
    return [(i, scores[i]) for i in best]


def _scan_hits(text: str, term: str) -> Iterator[int]:
    """Where in ``text`` a word starts that matches ``term`` by the rule of :func:`scan_rank`.

    Every such word starts with the term's first four letters (or the whole term, if shorter),
    a literal that the regular expression engine finds fast; each candidate word is then
    checked whole.
    """
    long = len(term) > 3
    for m in re.finditer(re.escape(term[:4] if long else term) + r"\w*", text):
        at, word = m.start(), m.group()
        if at and _WORD.match(text, at - 1):
            continue  # inside a word, not at its start
        if word == term or (long and (word.startswith(term) or term.startswith(word))):
            yield at


def round_score(value: float) -> float:
    """A score with six significant digits. BM25 scores on a small memory are tiny (FTS5
    floors the idf at 1e-6): a fixed number of decimals would show them all as zero."""
    return float(f"{value:.6g}")


def excerpt(text: str, terms: list[str], width: int = EXCERPT_CHARS) -> str:
    """At most ``width`` characters of ``text``, around the first of ``terms`` it holds."""
    if len(text) <= width:
        return text
    lower = text.lower()
    first = min((i for t in terms if (i := lower.find(t)) >= 0), default=0)
    start = max(0, first - width // 3)
    cut = text[start : start + width]
    return ("…" if start else "") + cut + ("…" if start + width < len(text) else "")
