"""W2: the operations on Markdown, as pure functions (no I/O)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.core.markdown import (
    STANDARD_SECTIONS,
    apply_batch,
    canonical_text,
    entry_lines,
    new_index,
    sections,
)
from reverie.core.operations import Add, Batch, parse_batch
from reverie.errors import NotFound, RefusedInput


def run(files: dict[str, str], request: object) -> dict[str, str | None]:
    return apply_batch(parse_batch(request), files.get).files


def test_new_memory_has_the_four_standard_sections() -> None:
    names = [name for name, _, _ in sections(new_index())]
    assert names == list(STANDARD_SECTIONS)


def test_w2_add_files_entry_under_its_section() -> None:
    out = run(
        {"MEMORY.md": new_index()},
        {"action": "add", "text": "Uses Python 3.11", "section": "environment & gotchas"},
    )
    text = out["MEMORY.md"]
    assert text is not None
    lines = text.split("\n")
    assert lines[lines.index("## Environment & gotchas") + 1] == "- Uses Python 3.11"
    # the next heading stays separated by a blank line
    assert lines[lines.index("## Project state") - 1] == ""


def test_w2_add_without_section_appends_at_end() -> None:
    out = run({"MEMORY.md": new_index()}, {"action": "add", "text": "x y"})
    text = out["MEMORY.md"]
    assert text is not None and text.endswith("## Project state\n- x y\n")


def test_w2_add_to_an_unknown_section_creates_it_at_the_end_and_says_so() -> None:
    """Issue 10: an unknown section was silently ignored, the entry put in the last section."""
    applied = apply_batch(
        parse_batch({"action": "add", "text": "x y", "section": " Vocabulary "}),
        {"MEMORY.md": new_index()}.get,
    )
    assert applied.files["MEMORY.md"] == new_index() + "\n## Vocabulary\n- x y\n"
    assert [code for code, _ in applied.notes] == ["section_created"]
    assert "'Vocabulary'" in applied.notes[0][1]
    # the next add finds it, and creates nothing
    again = apply_batch(
        parse_batch({"action": "add", "text": "z", "section": "vocabulary"}),
        {"MEMORY.md": applied.files["MEMORY.md"]}.get,
    )
    assert again.notes == [] and again.files["MEMORY.md"].endswith("- x y\n- z\n")


@pytest.mark.parametrize("section", ["## Decisions", "a\nb", "x" * 81])
def test_w2_a_section_is_one_line_of_heading_text(section: str) -> None:
    with pytest.raises(RefusedInput) as err:
        parse_batch({"action": "add", "text": "x", "section": section})
    assert err.value.code == "invalid_operation" and "operations[0].section" in err.value.message


def test_w2_add_to_free_section_that_exists() -> None:
    body = new_index() + "\n## Vocabulary\n- OKR: objectives\n"
    out = run(
        {"MEMORY.md": body}, {"action": "add", "text": "KPI: indicator", "section": "Vocabulary"}
    )
    text = out["MEMORY.md"]
    assert text is not None and text.endswith("- OKR: objectives\n- KPI: indicator\n")


def test_w2_add_restores_a_removed_standard_section() -> None:
    out = run(
        {"MEMORY.md": "# Memory\n"},
        {"action": "add", "text": "chose SQLite", "section": "Decisions"},
    )
    assert out["MEMORY.md"] == "# Memory\n\n## Decisions\n- chose SQLite\n"


def test_w1_add_of_existing_entry_changes_nothing() -> None:
    body = new_index().replace("## Decisions\n", "## Decisions\n- chose SQLite\n")
    applied = apply_batch(
        parse_batch({"action": "add", "text": "chose SQLite"}), {"MEMORY.md": body}.get
    )
    assert applied.files == {}
    assert applied.notes


def test_entry_lines_bullets_and_indents_continuations() -> None:
    assert entry_lines("fact\nmore") == ["- fact", "  more"]
    assert entry_lines("* already") == ["* already"]
    with pytest.raises(RefusedInput) as e:
        entry_lines("  \n ")
    assert e.value.code == "invalid_operation"


def test_w2_replace_replaces_the_whole_line_and_keeps_its_bullet() -> None:
    body = "# Memory\n- deploy on Fridays\n- tea\n"
    out = run(
        {"MEMORY.md": body}, {"action": "replace", "old": "Fridays", "text": "deploy on Tuesdays"}
    )
    assert out["MEMORY.md"] == "# Memory\n- deploy on Tuesdays\n- tea\n"


@pytest.mark.parametrize(("old", "code"), [("coffee", "no_match"), ("deploy", "ambiguous_match")])
def test_w2_replace_needs_exactly_one_match(old: str, code: str) -> None:
    body = "- deploy a\n- deploy b\n"
    with pytest.raises(RefusedInput) as e:
        run({"MEMORY.md": body}, {"action": "replace", "old": old, "text": "x"})
    assert e.value.code == code
    assert "MEMORY.md" in e.value.message


def test_w2_remove_removes_every_matching_line_and_refuses_no_match() -> None:
    body = "# M\n- a staging\n- b\n- c staging\n"
    assert run({"MEMORY.md": body}, {"action": "remove", "old": "staging"}) == {
        "MEMORY.md": "# M\n- b\n"
    }
    with pytest.raises(RefusedInput) as e:
        run({"MEMORY.md": body}, {"action": "remove", "old": "prod"})
    assert e.value.code == "no_match"


def test_w2_replace_in_topic_file_and_missing_topic() -> None:
    files = {"MEMORY.md": new_index(), "memory/ops.md": "# Ops\n- port 80\n"}
    out = run(
        files,
        {"action": "replace", "old": "port 80", "text": "port 8080", "source": "memory/ops.md"},
    )
    assert out == {"memory/ops.md": "# Ops\n- port 8080\n"}
    with pytest.raises(NotFound):
        run(files, {"action": "remove", "old": "x", "source": "memory/none.md"})


def test_w2_write_topic_links_it_from_the_index_once() -> None:
    files = {"MEMORY.md": new_index()}
    out = run(
        files,
        {"action": "write_topic", "topic": "deploys", "content": "# Deploy steps\n1. build\n"},
    )
    index = out["MEMORY.md"]
    assert index is not None and "- [[memory/deploys.md]] Deploy steps" in index
    assert out["memory/deploys.md"] == "# Deploy steps\n1. build\n"
    again = run(
        {"MEMORY.md": index, "memory/deploys.md": "old"},
        {"action": "write_topic", "topic": "memory/deploys.md", "content": "new"},
    )
    assert again == {"memory/deploys.md": "new\n"}


def test_w2_write_topic_with_empty_content_deletes_it_and_its_link() -> None:
    index = new_index() + "- [[memory/old.md]] Old\n"
    out = run(
        {"MEMORY.md": index, "memory/old.md": "x\n"},
        {"action": "write_topic", "topic": "old", "content": ""},
    )
    assert out["memory/old.md"] is None
    assert "[[memory/old.md]]" not in (out["MEMORY.md"] or "")


def test_w2_set_body_replaces_everything_and_empty_clears() -> None:
    assert run({"MEMORY.md": new_index()}, {"action": "set_body", "text": "hello\r\n"}) == {
        "MEMORY.md": "hello\n"
    }
    assert run({"MEMORY.md": new_index()}, {"action": "set_body", "text": ""}) == {"MEMORY.md": ""}


def test_w1_batch_applies_in_order_in_memory() -> None:
    out = run(
        {"MEMORY.md": "# M\n"},
        {
            "operations": [
                {"action": "add", "text": "one"},
                {"action": "replace", "old": "one", "text": "two"},
                {"action": "add", "text": "three"},
                {"action": "remove", "old": "three"},
            ]
        },
    )
    assert out == {"MEMORY.md": "# M\n- two\n"}


def test_canonical_text() -> None:
    assert canonical_text("a\r\nb\n\n\n") == "a\nb\n"
    assert canonical_text("  \n") == ""


# A run of adds edits MEMORY.md in parts (markdown._Index); the rule it must equal, written out
# plainly: each add splits the whole text, searches it and joins it again (what it did before).


def plain_add(text: str, op: Add) -> tuple[str, str | None]:
    block = entry_lines(op.text)
    lines = text.split("\n") if text else []
    if lines and lines[-1] == "":
        lines.pop()
    n = len(block)
    if any(lines[i : i + n] == block for i in range(len(lines) - n + 1)):
        return text, None
    section = op.section.strip() if op.section else ""
    key = section.casefold()
    target = next((s for s in sections("\n".join(lines)) if s[0].casefold() == key), None)
    created = None
    if section and target is None:
        standard = next((s for s in STANDARD_SECTIONS if s.casefold() == key), None)
        created = standard or section
        lines += ["", f"## {created}"] if lines else [f"## {created}"]
    if target is None:
        lines += block
    else:
        _, start, end = target
        pos = end
        while pos - 1 > start and not lines[pos - 1].strip():
            pos -= 1
        lines[pos:pos] = block
        after = pos + n
        if after < len(lines) and lines[after].strip() and lines[after].startswith("#"):
            lines.insert(after, "")
    return canonical_text("\n".join(lines)), created


LINES = st.sampled_from(
    ["- a", "- b", "text", "", "  more", "### deep", "# Title", "## Decisions", "## Notes",
     "## notes", "## C#", "- a\n  b", "1. first"]
)  # fmt: skip
SECTION_NAMES = st.sampled_from(
    [None, "Decisions", "decisions ", "Notes", "People & preferences", "New one", "C#", "  "]
)
ENTRIES = st.sampled_from(["a", "- a", "b", "a\nb", "a\n\nb", "x y", "- a\n  b", "1. first"])


@settings(max_examples=400, deadline=None)
@given(
    st.tuples(st.sampled_from(["", new_index()]), st.lists(LINES, max_size=14)).map(
        lambda base: canonical_text(base[0] + "\n".join(base[1]))
    ),
    st.lists(st.tuples(ENTRIES, SECTION_NAMES), min_size=1, max_size=10),
)
def test_a_run_of_adds_equals_adding_one_by_one(
    base: str, adds: list[tuple[str, str | None]]
) -> None:
    ops = [Add(text=text, section=section) for text, section in adds]
    applied = apply_batch(Batch(operations=tuple(ops)), {"MEMORY.md": base or None}.get)
    text, notes = base, []
    for op in ops:
        new, created = plain_add(text, op)
        if new == text:
            notes.append("unchanged_entry")
        if created is not None:
            notes.append("section_created")
        text = new
    assert applied.files.get("MEMORY.md", base) == text
    assert [code for code, _ in applied.notes] == notes


def test_a_batch_of_adds_costs_what_it_adds() -> None:
    """Issue 10: 2,000 adds took 1.1 s, 8,000 9.6 s, 16,000 39 s (each add split, searched and
    joined the whole text). Counted in lines touched, not timed: a plain scan per add would
    visit about n * n / 2 lines."""
    import reverie.core.markdown as markdown

    visited = 0
    plain = markdown._contains_block

    def counting(lines: list[str], block: list[str]) -> bool:
        nonlocal visited
        visited += len(lines)
        return plain(lines, block)

    ops = tuple(Add(text=f"fact {i}", section="Decisions") for i in range(16_000))
    markdown._contains_block = counting  # type: ignore[assignment]
    try:
        applied = apply_batch(Batch(operations=ops), {"MEMORY.md": new_index()}.get)
    finally:
        markdown._contains_block = plain  # type: ignore[assignment]
    assert visited == 0  # single-line entries are found in the line counts
    assert applied.files["MEMORY.md"].count("\n- fact ") == 16_000
