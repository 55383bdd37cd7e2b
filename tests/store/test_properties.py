"""Property tests: arbitrary operations and text never escape validation (W1-W5, M2)."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reverie import Reverie, ReverieError, Settings
from reverie.core import secrets
from reverie.index import fts
from tests.conftest import fake

KNOWN_CODES = {
    "invalid_operation",
    "invalid_path",
    "memory_too_large",
    "memory_credential_rejected",
    "memory_invalid_control_character",
    "memory_invisible_character",
    "invalid_unicode",
    "no_match",
    "ambiguous_match",
    "not_found",
    "idempotency_key_reused",
    "revision_conflict",
}
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\r]")

pieces = st.sampled_from(
    [
        "tea",
        "deploy",
        "- ",
        "## Decisions",
        "\n",
        "\t",
        "\x00",
        "\x1b",
        "\r",
        "\r\n",
        "[[",
        "]]",
        "../",
        "memory/",
        "é",
        "🙂",
        '"',
        "NOT",
        "*",
        "(",
        fake("AK", "IA", "QX4T7ZP2LM9RWK3B"),
        fake("-----BEGIN ", "RSA PRIVATE KEY-----\nMIIEow\n-----END ", "RSA PRIVATE KEY-----"),
        fake("https://bob:", "hunter2hunter2", "@db.internal/x"),
    ]
)
text = st.one_of(st.text(max_size=40), st.lists(pieces, max_size=6).map("".join))
section = st.one_of(st.none(), st.sampled_from(["Decisions", "people & preferences", "Nope"]))
operation = st.one_of(
    st.fixed_dictionaries({"action": st.just("add"), "text": text, "section": section}),
    st.fixed_dictionaries({"action": st.just("replace"), "old": text, "text": text}),
    st.fixed_dictionaries({"action": st.just("remove"), "old": text}),
    st.fixed_dictionaries(
        {
            "action": st.just("write_topic"),
            "topic": st.one_of(text, st.sampled_from(["notes", "a-b"])),
            "content": text,
        }
    ),
    st.fixed_dictionaries({"action": st.just("set_body"), "text": text}),
    st.dictionaries(st.sampled_from(["action", "text", "old", "bogus"]), text, max_size=3),
)
request = st.one_of(
    st.fixed_dictionaries({"operations": st.lists(operation, min_size=0, max_size=4)}),
    operation,
)


def _check_invariants(rv: Reverie) -> None:
    memory_id = rv.state.memory_of(rv.agent("ada").id)
    head = rv.memories.current(memory_id)
    files = rv.memories.repo(memory_id).files(head.oid)
    for path, body in files.items():
        assert not CONTROL.search(body), path
        assert secrets.find_credentials(body) == [], path
        limit = rv.settings.max_index_bytes if path == "MEMORY.md" else rv.settings.max_file_bytes
        assert len(body.encode()) <= limit
    expected = {(p, line) for p, t in files.items() for line in fts.index_lines(t)}
    assert set(rv.memories.index_rows(memory_id)) == expected
    status = subprocess.run(
        ["git", "-C", str(rv.memories.repo(memory_id).path), "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == ""


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(request, min_size=1, max_size=6))
def test_w1_w5_arbitrary_batches_are_applied_or_refused_with_a_known_code(
    batches: list[Any],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rv = Reverie(settings=Settings.load(Path(tmp), max_index_bytes=600), create=True)
        rv.create_agent("ada")
        for batch in batches:
            before = rv.memory_read("ada").revision
            try:
                out = rv.memory_apply("ada", batch, writer="admin")
            except ReverieError as exc:
                assert exc.code in KNOWN_CODES, exc
                assert rv.memory_read("ada").revision == before
            else:
                assert out.revision == before + (1 if out.changed else 0)
            _check_invariants(rv)
        rv.close()


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_m2_any_text_is_a_valid_fts_query(query: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t VALUES ('hello world of tea')")
    expr = fts.fts_query(query)
    if expr is None:
        assert fts.query_terms(query) == []
    else:
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (expr,)).fetchall()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(), min_size=1, max_size=20))
def test_m2_search_never_fails_on_user_text(queries: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rv = Reverie(tmp, create=True)
        rv.create_agent("ada")
        rv.memory_apply("ada", {"action": "add", "text": "hello world of tea"})
        for q in queries:
            hits = rv.memory_search("ada", q)
            assert all(h.source == "MEMORY.md" for h in hits)
        rv.close()
