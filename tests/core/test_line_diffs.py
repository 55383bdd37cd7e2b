"""The diffs that skip what two versions of a file share (a ``!remember`` appends a section to
a long ``MEMORY.md``): each must answer exactly what the whole-file computation answers.

The oracles below are the whole-file versions, written out plainly."""

from __future__ import annotations

import sqlite3
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.core.chat import ChatCommand, remember_body
from reverie.core.markdown import canonical_text, common_ends, sections
from reverie.core.validation import added_lines
from reverie.index import fts

# Few distinct lines, so that texts repeat lines, share heads and tails, and hold headings.
line = st.sampled_from(["", "  ", "- tea", "- deploy", "## Deploys", "## Tea", "# Memory", "x"])
text = st.lists(line, max_size=12).map("\n".join)


def whole_added_lines(old: str | None, new: str | None) -> list[int]:
    if not new:
        return []
    remaining = Counter((old or "").split("\n"))
    added = []
    for number, ln in enumerate(new.split("\n")):
        if remaining[ln] > 0:
            remaining[ln] -= 1
        else:
            added.append(number)
    return added


def whole_remember_body(current: str, command: ChatCommand) -> str:
    lines = current.rstrip("\n").split("\n") if current.strip() else []
    block = (command.description + (f"\n\n{command.body}" if command.body else "")).split("\n")
    existing = [s for s in sections("\n".join(lines)) if s[0] == command.name]
    if existing:
        _, _, end = existing[0]
        while end > 0 and not lines[end - 1].strip():
            end -= 1
        lines[end:end] = ["", *block]
    else:
        lines += ([""] if lines else []) + [f"## {command.name}", "", *block]
    return canonical_text("\n".join(lines))


@settings(max_examples=300, deadline=None)
@given(st.lists(line, max_size=12), st.lists(line, max_size=12))
def test_common_ends_never_overlap_and_are_shared(old: list[str], new: list[str]) -> None:
    head, tail = common_ends(old, new)
    assert head + tail <= min(len(old), len(new))
    assert old[:head] == new[:head]
    assert old[len(old) - tail :] == new[len(new) - tail :]
    # Neither end can be grown.
    size = min(len(old), len(new))
    assert head == size or old[head] != new[head]
    assert tail == size - head or old[-1 - tail] != new[-1 - tail]


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.none(), text), st.one_of(st.none(), text))
def test_added_lines_are_those_of_the_whole_file_diff(old: str | None, new: str | None) -> None:
    assert added_lines(old, new) == whole_added_lines(old, new)


@settings(max_examples=300, deadline=None)
@given(text, st.sampled_from(["Deploys", "Tea", "Memory", "Coffee", "x"]), text)
def test_remember_body_is_the_whole_file_answer(current: str, name: str, body: str) -> None:
    command = ChatCommand("remember", name=name, description="fact", body=body.strip("\n"))
    assert remember_body(current, command) == whole_remember_body(current, command)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.none(), text), text, text)
def test_replace_file_leaves_the_rows_of_the_new_text(
    first: str | None, second: str, third: str
) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE TABLE memory_lines (id INTEGER PRIMARY KEY, memory_id TEXT, path TEXT, "
        "topic TEXT, scope TEXT, text TEXT)"
    )

    def rows() -> Counter[str]:
        return Counter(r[0] for r in conn.execute("SELECT text FROM memory_lines"))

    fts.replace_file(conn, "m1", "MEMORY.md", None, first)
    assert rows() == Counter(fts.index_lines(first))
    fts.replace_file(conn, "m1", "MEMORY.md", first, second)
    assert rows() == Counter(fts.index_lines(second))
    # Appending to a text keeps its rows and adds the new ones.
    fts.replace_file(conn, "m1", "MEMORY.md", second, second + "\n" + third)
    assert rows() == Counter(fts.index_lines(second + "\n" + third))
