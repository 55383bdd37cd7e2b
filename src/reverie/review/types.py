"""The contract between review's runner and its reviewers (SPEC R5-R8).

The runner gathers a batch (new conversation text and the relevant current memory) into a
:class:`ReviewInput`; a :class:`Reviewer` answers with store operations; the runner applies
them through the one write pipeline. Reviewers are pure with respect to storage: they never
write, so a retry can never duplicate a write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "SOURCE_PATTERN",
    "ReviewInput",
    "ReviewOutput",
    "Reviewer",
    "Turn",
    "format_source",
    "parse_sources",
]

#: How an entry names where it came from (SPEC 1): ``(source: conv-7#12-14)``, the
#: conversation id, then the 0-based message range, start included, end excluded.
SOURCE_PATTERN = re.compile(r"\(source: ([^\s#()]+)#(\d+)-(\d+)\)")


def format_source(conversation_id: str, start: int, end: int) -> str:
    """The source suffix of an entry written by review."""
    return f"(source: {conversation_id}#{start}-{end})"


def parse_sources(text: str) -> list[tuple[str, int, int]]:
    """Every ``(conversation, start, end)`` cited in ``text``."""
    return [(m.group(1), int(m.group(2)), int(m.group(3))) for m in SOURCE_PATTERN.finditer(text)]


@dataclass(frozen=True)
class Turn:
    """One user or assistant message of a memory-on conversation (never a tool log, R5)."""

    conversation_id: str
    position: int  # 0-based, in order of arrival
    role: str  # "user" or "assistant"
    author: str | None
    text: str
    time: float  # seconds since the epoch


@dataclass(frozen=True)
class ReviewInput:
    """One batch of work for a reviewer."""

    agent: str
    #: The new text, grouped by conversation and in order of position.
    turns: list[Turn]
    #: ``MEMORY.md`` as it is now.
    index: str
    #: Topic files relevant to the new text (path to full text), found by searching memory.
    topics: dict[str, str] = field(default_factory=dict)
    #: Settings a reviewer needs: the prompt cap of ``MEMORY.md`` in characters.
    index_cap_chars: int = 2000


@dataclass
class ReviewOutput:
    """A reviewer's answer: operations for the store pipeline, and what it cost."""

    operations: list[dict[str, Any]] = field(default_factory=list)
    #: A commit message: what changed and from which conversation ranges (R7).
    message: str = ""
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    notes: list[str] = field(default_factory=list)
    #: The removals that an update makes, as one unit with the entry holding the new value:
    #: the index of a ``remove`` in :attr:`operations`, and that entry's text (source
    #: included). The runner cancels such a removal when that entry is not in memory after the
    #: batch (:mod:`.replacements`). A removal not named here replaces nothing (a retirement).
    replaced_by: dict[int, str] = field(default_factory=dict)
    #: Ranges of the batch the reviewer did not read (over its prompt budget): they stay
    #: pending and are reviewed in a later batch.
    left_out: list[tuple[str, int, int]] = field(default_factory=list)


class Reviewer(Protocol):
    """Anything that turns a batch of new conversation text into memory operations."""

    def review(self, batch: ReviewInput) -> ReviewOutput:
        """Propose operations for ``batch``; never writes anything itself."""
        ...
