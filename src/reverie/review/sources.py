"""The one rule for the sources review writes (SPEC 1, R6, H2), for every reviewer and the runner.

An entry that review adds or rewrites ends with the range of the conversation it came from,
``(source: conv-7#12-14)``, and that range must be text the reviewer was given in this batch:

* the entry *ends* with one or more ``(source: ...)`` suffixes (SPEC 1: "ends with the
  conversation range it came from"), and names at least one;
* every range is non-empty (``start < end``), lies within the span of the positions of that
  conversation's turns the reviewer was given, and holds at least one of those turns, so that
  it resolves through ``context_read`` to text that was reviewed (a tool log inside the span
  may be part of it; review never read it, SPEC R5).

A line that only links topic files (``More: [[memory/decisions.md]]``) is index structure, not
an entry taken from a conversation: it needs no source.

The offline reviewer writes only what passes; the model reviewer drops what fails, with a note;
the runner applies the same rule once more to whatever a reviewer answers (``missing_source``,
``source_out_of_batch``), so that a reviewer and the runner can never disagree about it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .types import SOURCE_PATTERN, Turn, parse_sources

__all__ = ["MISSING_SOURCE", "SOURCE_OUT_OF_BATCH", "BatchSources", "SourceProblem", "is_link_line"]

MISSING_SOURCE = "missing_source"
SOURCE_OUT_OF_BATCH = "source_out_of_batch"

_LINK = re.compile(r"\[\[[^\]]+\]\]")
#: What may stand beside the links of a link line: a short label ("More:", "See also").
_LABEL = re.compile(r"^[\w&' -]{0,40}:?$")


@dataclass(frozen=True)
class SourceProblem:
    """Why an entry's sources are not admissible: a stable code and a sentence."""

    code: str
    message: str


@functools.lru_cache(maxsize=65536)
def is_link_line(text: str) -> bool:
    """Whether ``text`` only links topic files (with at most a short label)."""
    if not _LINK.search(text):
        return False
    rest = " ".join(_LINK.sub(" ", SOURCE_PATTERN.sub(" ", text)).split()).strip(" -*.,;")
    return bool(_LABEL.match(rest))


def _content(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9][a-z0-9+#.-]*[a-z0-9+#]", text.casefold())
    return [w[:-1] if w.endswith("s") and len(w) > 4 else w for w in words if len(w) >= 4]


def _ends_with_source(text: str) -> bool:
    found = list(SOURCE_PATTERN.finditer(text))
    return bool(found) and found[-1].end() == len(text)


class BatchSources:
    """The ranges an entry written in one batch may cite: those of the turns reviewed."""

    def __init__(self, turns: Iterable[Turn]) -> None:
        self.positions: dict[str, set[int]] = {}
        self.texts: dict[tuple[str, int], str] = {}
        for turn in turns:
            self.positions.setdefault(turn.conversation_id, set()).add(turn.position)
            self.texts[(turn.conversation_id, turn.position)] = turn.text

    def grounded(self, text: str) -> bool:
        """Whether the turns an entry cites say what it says: at least a third of its content
        words (four letters or more) are in their text. A reviewer that rewords keeps the
        names and the values; one that invents (tool output it never saw, a group chat) does
        not."""
        said = " ".join(
            self.texts.get((c, p), "") for c, s, e in parse_sources(text) for p in range(s, e)
        )
        have = set(_content(said))
        # "Sam said: ..." and "Sam: ...": who said it is not what the messages must say.
        body = re.sub(r"^[A-Z][\w.' -]{0,40}?(?: said)?:\s+", "", SOURCE_PATTERN.sub(" ", text))
        want = _content(body)
        return not want or (bool(have & set(want)) and 3 * len(have & set(want)) >= len(set(want)))

    def problem(self, text: str) -> SourceProblem | None:
        """Why ``text`` (an entry review adds or rewrites) may not be written, or None."""
        body = text.rstrip()
        if is_link_line(body):
            return None
        if not _ends_with_source(body):
            return SourceProblem(
                MISSING_SOURCE, "it does not end with (source: conversation#start-end)"
            )
        for conversation, start, end in parse_sources(body):
            seen = self.positions.get(conversation)
            if not seen:
                return SourceProblem(
                    SOURCE_OUT_OF_BATCH,
                    f"it cites {conversation}, which is not among the messages reviewed",
                )
            if start >= end or start < min(seen) or end > max(seen) + 1:
                return SourceProblem(
                    SOURCE_OUT_OF_BATCH,
                    f"it cites {conversation}#{start}-{end}, outside the messages reviewed",
                )
            if not any(start <= p < end for p in seen):
                return SourceProblem(
                    SOURCE_OUT_OF_BATCH,
                    f"it cites {conversation}#{start}-{end}, which holds no reviewed message",
                )
        return None
