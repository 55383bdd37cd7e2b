"""The one rule for the sources review writes (SPEC 1, R6, H2), for every reviewer and the runner.

An entry that review adds or rewrites ends with the range of the conversation it came from,
``(source: conv-7#12-14)``, and that range must be text the reviewer was given in this batch:

* the entry *ends* with one or more ``(source: ...)`` suffixes (SPEC 1: "ends with the
  conversation range it came from"), and names at least one;
* every range is non-empty (``start < end``), lies within the span of the positions of that
  conversation's turns the reviewer was given, and holds at least one of those turns, so that
  it resolves through ``context_read`` to text that was reviewed (a tool log inside the span
  may be part of it; review never read it, SPEC R5);
* the reviewed turns of every range say something of the entry: they share a content word
  with it (three letters or more, not a function word, a plural "s" aside). A range that
  shares none resolves to text, but not to where the entry came from: an entry rewritten
  from an older one ("We stream on Netflix and Disney+" once Netflix was cancelled) must
  carry a word of the message that changed it.

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

from . import lexicon as lx
from .sentences import sentences
from .types import SOURCE_PATTERN, Turn, parse_sources

__all__ = [
    "MISSING_SOURCE",
    "SOURCE_OUT_OF_BATCH",
    "SOURCE_UNRELATED",
    "BatchSources",
    "SourceProblem",
    "is_link_line",
    "said_words",
]

MISSING_SOURCE = "missing_source"
SOURCE_OUT_OF_BATCH = "source_out_of_batch"
SOURCE_UNRELATED = "source_unrelated"

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


#: Words that say nothing of what an entry is about, beyond the reviewer's stop words.
_FUNCTION = lx.STOP_WORDS | lx.words("should shall while yours source")


@functools.lru_cache(maxsize=65536)
def said_words(text: str) -> frozenset[str]:
    """The words by which a message and an entry meet (sources left out): lower case, letters
    and digits only (``Kuehne+Nagel`` is two words), three characters or more, no function
    words, a plural "s" cut ("deliveries" and "delivery" do not meet; "vans" and "van" do)."""
    found = re.findall(r"[a-z0-9]+", SOURCE_PATTERN.sub(" ", text).casefold())
    words = (w[:-1] if len(w) > 3 and w.endswith("s") else w for w in found if w not in _FUNCTION)
    return frozenset(w for w in words if len(w) >= 3)


_NUMBER_WORDS = {
    w: str(n)
    for n, w in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve")
    )
}  # fmt: skip


def _numbers(text: str) -> set[str]:
    """The numbers ``text`` states (digits, or a number word up to twelve), leading zeros
    cut; a date (``2026-03-02``) or a year is left out: a reviewer may date an entry from
    when its message was said. A value no cited message states was not said there (tool
    output, a group chat: "176 Hz", "at 5")."""
    plain = re.sub(r"\b\d{4}-\d{2}-\d{2}\b|\b(?:19|20)\d\d\b", " ", text)
    found = {n.lstrip("0") or "0" for n in re.findall(r"\d+", plain)}
    found |= {_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", plain.lower()) if w in _NUMBER_WORDS}
    return found


def _body(text: str) -> str:
    """An entry without its sources, nor "Sam said:" or "Sam:" before it: who said it is not
    what the messages must say."""
    return re.sub(r"^[A-Z][\w.' -]{0,40}?(?: said)?:\s+", "", SOURCE_PATTERN.sub(" ", text))


def _words(text: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"[^\W\d_]+", text)}


def _names(text: str) -> set[str]:
    """The names ``text`` gives, lower case: its capitalised words but for the first word of
    each sentence ("Bringing Marcus to the open day" gives "marcus")."""
    found: set[str] = set()
    for sentence in re.split(r"(?<=[.!?:;])\s+", text):
        words = re.findall(r"[^\W\d_]+", sentence)
        found |= {w.casefold() for w in words[1:] if w[:1].isupper() and w != "I"}
    return found


# An identifier as tool output prints it: a file name, a path, a snake_case or dotted name.
_IDENTIFIER = re.compile(
    r"(?<![\w/.-])(?=[\w./-]*[_/.][\w])[A-Za-z_][\w-]*(?:[./][\w-]+)+|\b\w+_\w+\b"
)
# A sentence that holds beyond one case: a habit or a cause, not a reading.
_GENERAL = lx.phrases((*lx.GENERAL_CUES, *lx.LESSON_CUES))
# A reading as tool output prints it: a decimal or a clock time ("54.4521N", "at 21:47").
_READING = re.compile(r"\d[.:]\d")


def _identifiers(text: str) -> set[str]:
    """The identifiers of ``text`` (see :data:`_IDENTIFIER`), at least five characters long."""
    return {m.group(0).lower() for m in _IDENTIFIER.finditer(text) if len(m.group(0)) >= 5}


def beyond_output(text: str) -> str:
    """The sentences of ``text`` (an assistant's message after tool output) that hold beyond
    that output: general (:data:`_GENERAL`), and naming no identifier or reading the tool
    printed ("The last fix was 54.4521N 2.8810W": "fix was" is no lesson there). The one rule
    for both reviewers: the offline reviewer reads only these sentences of such a message, and
    a model's entry that cites only such messages must hold one
    (:meth:`BatchSources.reports_output`)."""
    kept = [
        s
        for _, _, s in sentences(text)
        if _GENERAL.search(s) and not _identifiers(s) and not _READING.search(s)
    ]
    return " ".join(kept)


def _output_lines(text: str) -> tuple[str, ...]:
    """The lines of a message that hold no prose sentence (:meth:`BatchSources.quotes_output`)."""
    starts = iter(sorted(a for a, _, _ in sentences(text)))
    start = next(starts, None)
    out: list[str] = []
    offset = 0
    for line in text.split("\n"):
        end = offset + len(line)
        prose = False
        while start is not None and start <= end:  # the sentences that start on this line
            prose = True
            start = next(starts, None)
        if line.strip() and not prose:
            out.append(line.strip())
        offset = end + 1
    return tuple(out)


def _ends_with_source(text: str) -> bool:
    found = list(SOURCE_PATTERN.finditer(text))
    return bool(found) and found[-1].end() == len(text)


class BatchSources:
    """The ranges an entry written in one batch may cite: those of the turns reviewed."""

    def __init__(self, turns: Iterable[Turn]) -> None:
        self.positions: dict[str, set[int]] = {}
        self.texts: dict[tuple[str, int], str] = {}
        #: Per conversation, the lower-case words of its reviewed turns and their authors.
        self.heard: dict[str, set[str]] = {}
        #: Per turn, its lines that are output, not prose (found when first cited).
        self._output: dict[tuple[str, int], tuple[str, ...]] = {}
        assistant: list[tuple[str, int]] = []
        for turn in turns:
            self.positions.setdefault(turn.conversation_id, set()).add(turn.position)
            self.texts[(turn.conversation_id, turn.position)] = turn.text
            words = _words(f"{turn.text} {turn.author or ''}")
            self.heard.setdefault(turn.conversation_id, set()).update(words)
            if turn.role == "assistant":
                assistant.append((turn.conversation_id, turn.position))
        #: The assistant's turns right after a message not given (tool output, R5), which
        #: report that output.
        self.after_output = {
            (c, p)
            for c, p in assistant
            if p > min(self.positions[c]) and p - 1 not in self.positions[c]
        }

    def grounded(self, text: str) -> bool:
        """Whether the turns an entry cites say what it says: at least a third of its content
        words (four letters or more) are in their text, every number it states is stated
        there, and every name it gives (a capitalised word inside a sentence) was said in the
        reviewed turns of a conversation it cites, or is who said them. A reviewer that
        rewords keeps the names and the values; one that invents (tool output it never saw,
        a group chat) does not."""
        cited = parse_sources(text)
        said = " ".join(self.texts.get((c, p), "") for c, s, e in cited for p in range(s, e))
        have = set(_content(said))
        body = _body(text)
        if not _numbers(body) <= _numbers(said):
            return False
        heard = set().union(*(self.heard.get(c, set()) for c, _, _ in cited))
        # (a name cut short, "Gaffe" of "Gaffer", is the name: it starts a word said)
        if any(n not in heard and not any(w.startswith(n) for w in heard) for n in _names(body)):
            return False
        want = _content(body)
        return not want or (bool(have & set(want)) and 3 * len(have & set(want)) >= len(set(want)))

    def reports_output(self, text: str) -> bool:
        """Whether ``text`` cites only assistant turns that report tool output (right after a
        message not given) and holds nothing beyond that output (:func:`beyond_output`):
        "Saturday has a Hollis birthday for 12 at 2:30" read off a booking system."""
        cited = [(c, p) for c, s, e in parse_sources(text) for p in range(s, e)]
        if not cited or not all(at in self.after_output for at in cited):
            return False
        return not beyond_output(_body(text))

    def quotes_output(self, text: str) -> bool:
        """Whether ``text`` quotes output pasted into a message it cites: a line the offline
        reviewer does not read as prose (a log, a report's columns, settings, code: what
        :func:`.sentences.sentences` leaves out), three of its words in a row or the whole of
        a line of two."""
        body = " ".join(SOURCE_PATTERN.sub(" ", text).casefold().split())
        for c, s, e in parse_sources(text):
            for p in range(s, e):
                if (c, p) not in self._output:
                    self._output[(c, p)] = _output_lines(self.texts.get((c, p), ""))
                for line in self._output[(c, p)]:
                    words = line.casefold().split()
                    n = min(3, len(words))
                    if n >= 2 and any(
                        f" {' '.join(words[i : i + n])} " in f" {body} "
                        for i in range(len(words) - n + 1)
                    ):
                        return True
        return False

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
            if not self.says(text, conversation, start, end):
                return SourceProblem(
                    SOURCE_UNRELATED,
                    "the messages it cites do not say it "
                    f"({conversation}#{start}-{end} shares no word with it)",
                )
        return None

    def says(self, text: str, conversation: str, start: int, end: int) -> bool:
        """Whether the reviewed turns of ``conversation`` at ``start`` <= p < ``end`` share a
        word (:func:`said_words`) with ``text``."""
        want = said_words(text)
        return any(
            want & said_words(self.texts.get((conversation, p), "")) for p in range(start, end)
        )
