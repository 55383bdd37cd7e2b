"""The bounded scan fallback of memory search (M2) ranks exactly as its word-by-word rule says.

The rule, written out plainly below as the oracle: a line's score is the sum, over the query's
terms (function words left out unless nothing else remains), of log(1 + n / df) for each term
one of its words matches, where a word matches a term when it is the term or, both longer
than three letters, one starts with the other. Best first, equal scores in line order.
"""

from __future__ import annotations

import math
import re
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.index import fts

WORDS = [
    "deploy", "deploys", "deployment", "dep", "depl", "cat", "cats", "catalog", "über", "Über",
    "the", "and", "billing", "bill", "bills", "vpn", "wireguard", "wire", "x", "ab", "İstanbul",
    "istanbul",
]  # fmt: skip


def oracle(lines: list[str], query: str, limit: int) -> list[tuple[str, float]]:
    terms = fts.query_terms(query)
    terms = [t for t in terms if t not in fts.STOPWORDS] or terms
    words = [set(re.findall(r"\w+", line.lower())) for line in lines]

    def has(ws: set[str], term: str) -> bool:
        return term in ws or any(
            (w.startswith(term) or term.startswith(w)) for w in ws if len(w) > 3 and len(term) > 3
        )

    df = {t: sum(1 for ws in words if has(ws, t)) for t in terms}
    scored = []
    for i, ws in enumerate(words):
        score = sum(math.log(1 + len(lines) / df[t]) for t in terms if df[t] and has(ws, t))
        if score > 0:
            scored.append((i, score))
    scored.sort(key=lambda p: (-p[1], p[0]))
    return [(lines[i], float(f"{s:.6g}")) for i, s in scored[:limit]]


def scan(lines: list[str], query: str, limit: int) -> list[tuple[str, float]]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE memory_lines (id INTEGER PRIMARY KEY, memory_id, path, text)")
    conn.executemany(
        "INSERT INTO memory_lines (memory_id, path, text) VALUES ('m', ?, ?)",
        [(f"p{i}", line) for i, line in enumerate(lines)],
    )
    hits = fts.search(conn, "m", query, limit, use_fts=False)
    return [(lines[int(h.source[1:])], h.score) for h in hits]


line = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(line, min_size=1, max_size=25),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
    limit=st.integers(1, 8),
)
def test_m2_scan_ranks_as_its_rule_says(lines: list[str], query: str, limit: int) -> None:
    assert scan(lines, query, limit) == oracle(lines, query, limit)


def test_m2_scan_matches_word_forms_not_fragments() -> None:
    lines = ["we deploy on tuesdays", "deployment notes", "a dep of it", "redeploy later"]
    # "deployment" starts with "deploy"; "dep" is too short; "redeploy" starts otherwise
    assert [text for text, _ in scan(lines, "deploy", 8)] == lines[:2]
    # "deploys" starts with "deploy"; "deployment" and "deploys" are only related by a stem
    assert [text for text, _ in scan(lines, "deploys", 8)] == lines[:1]
    assert scan(lines, "the", 8) == []  # only a function word, and no line has it
