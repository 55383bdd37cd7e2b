"""The shape of a memory's Markdown and the pure application of a batch to it (SPEC 1, W2).

``MEMORY.md`` is the index: a title, the four standard sections and any free sections, each
holding entries (list items). Topic files ``memory/<slug>.md`` hold detail and are linked from
the index with ``[[memory/<slug>.md]]``. Nothing here does I/O: :func:`apply_batch` takes a
loader for the files it needs and returns the new text of each file it changed.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain

from reverie.errors import NotFound, RefusedInput

from .operations import Add, Batch, Remove, Replace, SetBody, WriteTopic
from .paths import INDEX, normalize_source, topic_path

__all__ = [
    "STANDARD_SECTIONS",
    "Applied",
    "apply_batch",
    "canonical_text",
    "common_ends",
    "entry_lines",
    "lines_of",
    "new_index",
    "sections",
]

STANDARD_SECTIONS = ("People & preferences", "Decisions", "Environment & gotchas", "Project state")

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_BULLET = re.compile(r"^([ \t]*)([-*+]|\d{1,3}[.)])[ \t]+")

Loader = Callable[[str], str | None]


def new_index() -> str:
    """The body of a new memory (revision 0): a title and the four standard sections."""
    parts = ["# Memory", ""]
    for name in STANDARD_SECTIONS:
        parts += [f"## {name}", ""]
    return "\n".join(parts)


def canonical_text(text: str) -> str:
    """Newlines as ``\\n``, no trailing blanks at the end, one final newline (none if empty)."""
    text = text.replace("\r\n", "\n")
    stripped = text.rstrip()
    return stripped + "\n" if stripped else ""


@functools.lru_cache(maxsize=4)
def lines_of(text: str) -> tuple[str, ...]:
    """``text`` split at its newlines, kept for the few texts a write reads: its checks and
    its index rows each diff the same old and new file (a string caches its own hash, so a
    repeat costs a lookup, not a split)."""
    return tuple(text.split("\n"))


def common_ends(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """How many lines ``old`` and ``new`` share at their start, and then (of the lines after
    those) at their end: what a diff of two versions of a file can skip (an appended section
    leaves only the new lines)."""
    size = min(len(old), len(new))
    if old[:size] == new[:size]:  # one text continues the other (an append): one C pass
        return size, 0
    head = 0
    while old[head] == new[head]:
        head += 1
    tail = 0
    while tail < size - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


def sections(text: str) -> list[tuple[str, int, int]]:
    """The level-2 sections of ``text`` as ``(name, heading_line, end_line)`` (end exclusive)."""
    lines = text.split("\n")
    found: list[tuple[str, int]] = []
    for i, line in enumerate(lines):
        m = _HEADING.match(line)
        if m and len(m.group(1)) <= 2:
            found.append((m.group(2) if len(m.group(1)) == 2 else "", i))
    out = []
    for k, (name, start) in enumerate(found):
        end = found[k + 1][1] if k + 1 < len(found) else len(lines)
        if name:
            out.append((name, start, end))
    return out


def entry_lines(text: str) -> list[str]:
    """An entry as list-item lines: a bullet on the first line, continuation lines indented."""
    lines = [line.rstrip() for line in text.strip("\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    if not lines or not lines[0].strip():
        raise RefusedInput("add needs a non-empty 'text'.", code="invalid_operation")
    first = lines[0].strip()
    if not _BULLET.match(first):
        first = f"- {first}"
    rest = [line if (not line or line[0] in " \t") else f"  {line}" for line in lines[1:]]
    return [first, *rest]


@dataclass
class Applied:
    """What a batch does to the files: new text per changed path (``None`` = deleted)."""

    files: dict[str, str | None] = field(default_factory=dict)
    #: The text each changed file had before the batch (``None`` = it did not exist).
    before: dict[str, str | None] = field(default_factory=dict)
    #: ``(code, message)`` of what the caller should know: ``unchanged_entry`` (an ``add`` of
    #: an entry already there), ``section_created`` (an ``add`` to a section the index lacked).
    notes: list[tuple[str, str]] = field(default_factory=list)


def apply_batch(batch: Batch, load: Loader) -> Applied:
    """Apply every operation of ``batch`` in order, in memory, to the files ``load`` returns.

    Returns only the files whose text differs from what ``load`` gave.

    Raises:
        RefusedInput: ``no_match``, ``ambiguous_match`` or ``invalid_operation``.
        NotFound: a ``replace``/``remove`` names a topic file that does not exist.
    """
    before: dict[str, str | None] = {}
    work: dict[str, str | None] = {}
    # A run of adds edits MEMORY.md as lines grouped by section (_Index): each add costs what
    # it adds. Any other operation, and the end, turn it back into text.
    editing: _Index | None = None

    def get(path: str) -> str | None:
        nonlocal editing
        if path not in work:
            text = load(path)
            before[path] = text
            work[path] = text
        if path == INDEX and editing is not None:
            if editing.changed:
                work[INDEX] = editing.text()
            editing = None
        return work[path]

    applied = Applied()
    for i, op in enumerate(batch.operations):
        where = f"operations[{i}]"
        if isinstance(op, Add):
            if editing is None:
                editing = _Index(get(INDEX) or "")
            added, created = editing.add(op)
            if not added:
                applied.notes.append(
                    ("unchanged_entry", f"{where}: the entry is already in {INDEX}; nothing added.")
                )
            if created is not None:
                applied.notes.append(
                    (
                        "section_created",
                        f"{where}: {INDEX} had no section {created!r}; it was created at the "
                        "end, with this entry.",
                    )
                )
        elif isinstance(op, Replace | Remove):
            path = normalize_source(op.source)
            current = get(path)
            if current is None:
                raise NotFound(f"{path} does not exist in this memory.", path=path)
            if isinstance(op, Replace):
                work[path] = _replace(current, op, where, path)
            else:
                work[path] = _remove(current, op, where, path)
        elif isinstance(op, WriteTopic):
            path = topic_path(op.topic)
            content = canonical_text(op.content)
            get(path)
            index = get(INDEX) or ""
            if content:
                work[path] = content
                work[INDEX] = _ensure_link(index, path, content)
            else:
                work[path] = None
                work[INDEX] = _drop_bare_link(index, path)
        elif isinstance(op, SetBody):
            get(INDEX)
            work[INDEX] = canonical_text(op.text)
    if editing is not None:
        get(INDEX)
    applied.files = {p: t for p, t in work.items() if t != before[p]}
    applied.before = {p: before[p] for p in applied.files}
    return applied


class _Index:
    """``MEMORY.md`` while a batch adds to it: its lines in parts, one per section (a level 1
    or 2 heading and what follows it; the first part is what precedes every heading), and how
    often each line occurs. An add finds its section in a dict, looks for its entry in the
    counts, and appends to one part: it costs what it adds, not the size of the file (16,000
    adds took 39 s when each split, searched and joined the whole text).

    Equal to applying the adds one by one to the canonical text (``tests/core/test_markdown.py``
    checks it against that rule, written out plainly).
    """

    def __init__(self, text: str) -> None:
        self.original = text
        self.changed = False
        self.parts: list[list[str]] = [[]]
        #: casefolded section name -> the first part with that name
        self.names: dict[str, int] = {}
        lines = canonical_text(text).split("\n")[:-1]
        self.count = Counter(lines)
        part = self.parts[-1]
        for line in lines:
            if line.startswith("#") and self._open(line):
                part = self.parts[-1]
            else:
                part.append(line)

    def _open(self, line: str) -> bool:
        """Start a new part at ``line`` if it is a boundary heading; whether it was."""
        m = _HEADING.match(line)
        if m is None or len(m.group(1)) > 2:
            return False
        self.parts.append([line])
        if len(m.group(1)) == 2 and m.group(2):
            self.names.setdefault(m.group(2).casefold(), len(self.parts) - 1)
        return True

    def _contains(self, block: list[str]) -> bool:
        if any(self.count[line] == 0 for line in block):
            return False
        return len(block) == 1 or _contains_block([x for p in self.parts for x in p], block)

    def add(self, op: Add) -> tuple[bool, str | None]:
        """Apply one add; whether it changed the text, and the section it created, if any."""
        block = entry_lines(op.text)
        if self._contains(block):
            return False, None
        self.changed = True
        self.count.update(block)
        section = op.section.strip() if op.section else ""
        part = self.names.get(section.casefold()) if section else None
        created = None
        if part is None:
            if section:
                # A section the index lacks (a standard one a whole-body write removed, or a
                # new one) is created at the end, and the caller is told.
                created = _standard_name(section) or section
                heading = f"## {created}"
                if any(self.parts):
                    self.parts[-1].append("")
                    self.count[""] += 1
                self.count[heading] += 1
                if not self._open(heading):  # a name that does not read as a heading
                    self.parts[-1].append(heading)
            self.parts[-1].extend(block)
            return True, created
        body = self.parts[part]
        pos = len(body)
        while pos - 1 > 0 and not body[pos - 1].strip():
            pos -= 1
        body[pos:pos] = block
        if pos + len(block) == len(body) and part + 1 < len(self.parts):
            body.append("")  # the next heading stays separated by a blank line
            self.count[""] += 1
        return True, created

    def text(self) -> str:
        """The text now (the text given, untouched, when no add changed it)."""
        if not self.changed:
            return self.original
        return canonical_text("\n".join(chain.from_iterable(self.parts)))


def _contains_block(lines: list[str], block: list[str]) -> bool:
    n = len(block)
    return any(lines[i : i + n] == block for i in range(len(lines) - n + 1))


def _standard_name(name: str) -> str | None:
    key = name.strip().casefold()
    return next((s for s in STANDARD_SECTIONS if s.casefold() == key), None)


def _find_section(text: str, name: str) -> tuple[str, int, int] | None:
    key = name.strip().casefold()
    return next((s for s in sections(text) if s[0].casefold() == key), None)


def _spans(text: str, old: str) -> list[tuple[int, int]]:
    """Non-overlapping matches of ``old`` widened to whole lines, as ``(start, end)`` offsets."""
    spans: list[tuple[int, int]] = []
    pos = text.find(old)
    while pos != -1:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos + len(old))
        end = len(text) if end == -1 else end
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
        pos = text.find(old, pos + len(old))
    return spans


def _require_old(old: str, where: str) -> None:
    if not old.strip():
        raise RefusedInput(
            f"{where}.old is empty: give a piece of the line to change.", code="invalid_operation"
        )


def _replace(text: str, op: Replace, where: str, path: str) -> str:
    _require_old(op.old, where)
    if not op.text.strip():
        raise RefusedInput(
            f"{where}.text is empty: to delete the line use the remove action.",
            code="invalid_operation",
        )
    spans = _spans(text, op.old)
    count = text.count(op.old)
    if not spans:
        raise RefusedInput(
            f"{where}: the text in 'old' is not in {path}; read the file and copy the exact "
            "words of the line to change.",
            code="no_match",
            path=path,
        )
    if count > 1:
        raise RefusedInput(
            f"{where}: the text in 'old' is in {path} {count} times; include more of the "
            "line so that it names exactly one place.",
            code="ambiguous_match",
            path=path,
            matches=count,
        )
    start, end = spans[0]
    new_lines = op.text.strip("\n").split("\n")
    marker = _BULLET.match(text[start:end])
    if marker and not _BULLET.match(new_lines[0]):
        new_lines[0] = marker.group(0) + new_lines[0].lstrip()
    return canonical_text(text[:start] + "\n".join(new_lines) + text[end:])


def _remove(text: str, op: Remove, where: str, path: str) -> str:
    _require_old(op.old, where)
    spans = _spans(text, op.old)
    if not spans:
        raise RefusedInput(
            f"{where}: the text in 'old' is not in {path}; read the file and copy the exact "
            "words of the line to remove.",
            code="no_match",
            path=path,
        )
    out, pos = [], 0
    for start, end in spans:
        out.append(text[pos:start])
        pos = end + 1  # the line's newline goes with it
    out.append(text[pos:])
    return canonical_text("".join(out))


def _ensure_link(index: str, path: str, content: str) -> str:
    if f"[[{path}]]" in index:
        return index
    title = next((m.group(2) for line in content.split("\n") if (m := _HEADING.match(line))), "")
    line = f"- [[{path}]]" + (f" {title[:80]}" if title else "")
    return canonical_text(index.rstrip("\n") + ("\n" if index.strip() else "") + line)


def _drop_bare_link(index: str, path: str) -> str:
    bare = re.compile(rf"^[ \t]*[-*+][ \t]+\[\[{re.escape(path)}\]\][^\n]*$\n?", re.MULTILINE)
    return canonical_text(bare.sub("", index))
