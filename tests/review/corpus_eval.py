"""Reviewing the corpus end to end, and scoring what memory holds afterwards (issue 11).

:func:`review_conversation` imports one corpus conversation into a real Reverie home (SQLite
and git), session by session, and runs review after each session as the scheduler would
(``reverie.review.runner.review_agent``: completed ranges, batches, the reviewer, the store's
checks, one commit per batch). Group sessions are imported like the others: they are
memory-off (SPEC O1), so review never sees them. Then it scores the memory against the
conversation's expectations (``tests/review/corpus_format.py``):

* **kept**: each ``keep`` fact is held by exactly one entry (a list item of ``MEMORY.md`` or a
  topic file, read without its source suffix); more than one is a duplicate, none a miss; and
  whether that entry is under the expected section (or in that section's topic file);
* **superseded**: for each ``was``, no entry still holds the old value (unless it also holds
  the new one, or says that something ended: ``ENDED``), and some entry holds the new value;
  whether the old value was ever written (in the history) says whether the update was tested;
* **retracted**: for each ``gone``, no entry holds it (unless it says that it ended);
* **never**: each ``never`` phrase is in no memory file and in no commit (``git log -p``);
* **sources**: every source an entry names resolves through ``Reverie.context_read`` to
  messages whose text shares a content word with the entry;
* **idle**: review run again with nothing pending changes nothing, and the reviewer given
  every turn again, against the memory it made, proposes nothing that changes it;
* **precision**: entries that hold an expected fact (a ``keep`` or a ``was`` new value), over
  all entries; what the runner dropped (``missing_source``, a refused credential, ...).

:func:`totals` sums a list of results into the figures ``bench/review_corpus.py`` prints and
``tests/review/test_corpus_review.py`` asserts.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reverie import Reverie
from reverie.core.markdown import apply_batch, sections
from reverie.core.operations import parse_batch
from reverie.errors import ReverieError
from reverie.review.offline import OfflineReviewer, topic_slug
from reverie.review.runner import review_agent
from reverie.review.types import Reviewer, ReviewInput, ReviewOutput, Turn, parse_sources
from tests.review.corpus_format import ENDED, Conversation, Fact

__all__ = ["Result", "review_conversation", "totals"]

#: Monday 2 March 2026, 09:00 UTC: the first session of every conversation.
START = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC).timestamp()
DAY = 86400.0
_SOURCE = re.compile(r"\s*\(source: [^()]*\)")
_ENDED = re.compile("|".join(rf"\b{re.escape(w)}\b" for w in ENDED), re.I)


@dataclass
class Entry:
    """One list item of a memory file."""

    path: str
    section: str | None
    text: str  # with its source suffix

    @property
    def plain(self) -> str:
        """The entry without its ``(source: ...)`` suffixes."""
        return _SOURCE.sub("", self.text).strip()


@dataclass
class Result:
    """What review made of one corpus conversation, scored."""

    conv: Conversation
    entries: list[Entry] = field(default_factory=list)
    #: Per ``keep`` fact: (section, fact, entries holding it, whether the holder is in section).
    kept: list[tuple[str, Fact, int, bool]] = field(default_factory=list)
    #: Per ``was``: (old, new, stale entries holding old, entries holding new, old ever written).
    superseded: list[tuple[Fact, Fact, int, int, bool]] = field(default_factory=list)
    #: Per ``gone``: (fact, stale entries holding it, ever written).
    retracted: list[tuple[Fact, int, bool]] = field(default_factory=list)
    #: Per ``never``: (kind, phrase, where it was found: "files", "history" or None).
    never: list[tuple[str, str, str | None]] = field(default_factory=list)
    sources: int = 0
    bad_sources: list[str] = field(default_factory=list)
    idle_changes: list[str] = field(default_factory=list)
    #: What :func:`session_idle` found after each session (only with ``every_session``).
    session_idle: list[str] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    over_cap: bool = False
    unlinked_topics: list[str] = field(default_factory=list)
    commits: int = 0
    model_calls: int = 0

    @property
    def expected_entries(self) -> int:
        """Entries that hold a fact the conversation expects (kept, or a new value)."""
        wanted = [f for _, f in self.conv.keep] + [new for _, new in self.conv.was]
        return sum(1 for e in self.entries if any(f.held_by(e.plain) for f in wanted))


def _records(conv: Conversation) -> list[list[dict[str, Any]]]:
    """Import records per session, with its close line."""
    out = []
    at = START
    for n, session in enumerate(conv.sessions, start=1):
        if n > 1:
            at += session.days_after * DAY
        sid = f"{conv.id}-s{n}"
        records: list[dict[str, Any]] = []
        for i, m in enumerate(session.messages):
            record: dict[str, Any] = {
                "conversation": sid,
                "agent": conv.id,
                "channel": {"kind": session.kind, "id": f"{conv.id}-{session.kind}"},
                "role": m.role,
                "text": m.text,
                "time": dt.datetime.fromtimestamp(at + 60 * i, dt.UTC).isoformat(),
            }
            if m.author:
                record["author"] = m.author
            records.append(record)
        records.append({"conversation": sid, "closed": True})
        out.append(records)
    return out


def _repo(rv: Reverie, agent: str) -> Path:
    return rv.home / "memories" / rv.state.memory_of(rv.agent(agent).id)


def memory_files(rv: Reverie, agent: str) -> dict[str, str]:
    """``MEMORY.md`` and every topic file, as the store reads them."""
    out = {"MEMORY.md": rv.memory_read(agent).text}
    for p in sorted((_repo(rv, agent) / "memory").glob("*.md")):
        out[f"memory/{p.name}"] = rv.memory_read(agent, f"memory/{p.name}").text
    return out


def history_text(rv: Reverie, agent: str) -> str:
    """Every commit of the memory's repository, messages and patches, without the object ids
    git prints: a commit's hash is new on every run and may hold a short phrase by chance
    ("0629"), which is no leak."""
    log = subprocess.run(
        ["git", "-C", str(_repo(rv, agent)), "log", "-p", "--all", "--format=%B"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return "\n".join(line for line in log.split("\n") if not _OBJECT_IDS.match(line))


#: The line of a patch that names the blobs it goes between: "index 3f2a9c1..8be0d47 100644".
_OBJECT_IDS = re.compile(r"^index [0-9a-f]+\.\.[0-9a-f]+")


def entries_of(files: dict[str, str]) -> list[Entry]:
    """The list items of every file, with the section each sits under (links left out)."""
    out = []
    for path, text in files.items():
        names: dict[int, str] = {}
        for name, start, end in sections(text):
            for i in range(start, end):
                names[i] = name
        for i, line in enumerate(text.split("\n")):
            m = re.match(r"^\s*(?:[-*+]|\d{1,3}[.)]) (.*)$", line)
            if m and "[[" not in m.group(1):
                out.append(Entry(path, names.get(i), m.group(1)))
    return out


def _in_section(entry: Entry, section: str) -> bool:
    if entry.path == "MEMORY.md":
        return entry.section == section
    return entry.path.startswith(f"memory/{topic_slug(section)}")


def _stale(entries: list[Entry], old: Fact, new: Fact | None = None) -> int:
    return sum(
        1
        for e in entries
        if old.held_by(e.plain)
        and not (new is not None and new.held_by(e.plain))
        and not _ENDED.search(e.plain)
    )


_FUNCTION_WORDS = frozenset(
    [
        "the",
        "and",
        "that",
        "this",
        "with",
        "from",
        "have",
        "has",
        "had",
        "their",
        "they",
        "them",
        "there",
        "then",
        "than",
        "also",
        "just",
        "very",
        "really",
        "will",
        "would",
        "could",
        "should",
        "what",
        "when",
        "where",
        "which",
        "while",
        "about",
        "into",
        "over",
        "your",
        "yours",
        "source",
    ]
)


def _normalize(text: str) -> str:
    # The judge's own reading of words (not the reviewer's): lower case, no function words,
    # a plural "s" cut.
    words = re.findall(r"[a-z0-9]+", text.casefold().replace("’", "'"))
    kept = [w for w in words if w not in _FUNCTION_WORDS]
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in kept)


def _content_words(text: str) -> set[str]:
    return {w for w in _normalize(text).split(" ") if len(w) >= 3}


def _history_lines(history: str) -> list[str]:
    return [_SOURCE.sub("", line) for line in history.split("\n")]


def review_conversation(
    conv: Conversation,
    home: Path,
    reviewer: Callable[[], Reviewer] = OfflineReviewer,
    every_session: bool = False,
) -> Result:
    """Import and review ``conv`` session by session in a new home at ``home``; score it.

    With ``every_session``, the idle check also runs after each session's review (see
    :func:`session_idle`), into ``Result.session_idle``.
    """
    result = Result(conv)
    agent = conv.id
    with Reverie(home, create=True) as rv:
        rv.create_agent(agent)
        clock = START
        for n, records in enumerate(_records(conv), start=1):
            rv.import_records(records)
            clock = max(clock, dt.datetime.fromisoformat(records[-2]["time"]).timestamp())
            for _ in range(20):  # until nothing is pending (a run does at most 10 batches)
                report = review_agent(rv, agent, reviewer(), now=clock + 3600)
                result.commits += report.commits
                result.model_calls += report.model_calls
                result.dropped += report.dropped
                if not report.pending:
                    break
            if every_session:
                result.session_idle += session_idle(rv, agent, conv, reviewer, n)
        files = memory_files(rv, agent)
        history = history_text(rv, agent)
        result.entries = entries_of(files)
        _score(rv, agent, result, files, history)
        _idle(rv, agent, conv, reviewer, result, clock)
    return result


def _score(rv: Reverie, agent: str, result: Result, files: dict[str, str], history: str) -> None:
    conv, entries = result.conv, result.entries
    written = _history_lines(history)
    for section, f in conv.keep:
        holders = [e for e in entries if f.held_by(e.plain)]
        result.kept.append(
            (section, f, len(holders), len(holders) == 1 and _in_section(holders[0], section))
        )
    for old, new in conv.was:
        holders = sum(1 for e in entries if new.held_by(e.plain))
        ever = any(old.held_by(line) for line in written)
        result.superseded.append((old, new, _stale(entries, old, new), holders, ever))
    for f in conv.gone:
        ever = any(f.held_by(line) for line in written)
        result.retracted.append((f, _stale(entries, f), ever))
    everything = "\n".join(files.values()).casefold()
    past = history.casefold()
    for kind, phrase in conv.never:
        low = phrase.casefold()
        where = "files" if low in everything else "history" if low in past else None
        result.never.append((kind, phrase, where))
    for e in entries:
        for sid, start, end in parse_sources(e.text):
            result.sources += 1
            try:
                page = rv.context_read(agent, sid, start, end)
            except ReverieError as exc:
                result.bad_sources.append(f"{sid}#{start}-{end}: {exc.code} ({e.plain!r})")
                continue
            said = " ".join(m.text for m in page.messages)
            if not page.messages or not _content_words(e.plain) & _content_words(said):
                result.bad_sources.append(f"{sid}#{start}-{end} does not say {e.plain!r}")
    cap = rv.settings.prompt_index_chars
    result.over_cap = len(files["MEMORY.md"]) > cap
    result.unlinked_topics = [
        p for p in files if p != "MEMORY.md" and f"[[{p}]]" not in files["MEMORY.md"]
    ]


def _idle(
    rv: Reverie,
    agent: str,
    conv: Conversation,
    reviewer: Callable[[], Reviewer],
    result: Result,
    clock: float,
) -> None:
    """Nothing new must change nothing: a run with nothing pending, then every turn again."""
    before = rv.memory_read(agent).revision
    report = review_agent(rv, agent, reviewer(), now=clock + 7200)
    if report.commits or rv.memory_read(agent).revision != before:
        result.idle_changes.append("a run with nothing pending committed")
    turns = _given_turns(rv, conv, range(1, len(conv.sessions) + 1))
    if not turns:
        return
    answer = _review_again(rv, agent, turns, memory_files(rv, agent), reviewer)
    result.model_calls += answer.model_calls
    if answer.operations:
        try:
            outcome = rv.memory_apply(agent, {"operations": answer.operations}, writer="review")
        except ReverieError as exc:
            result.idle_changes.append(f"every turn again: refused ({exc.code})")
            return
        if outcome.changed:
            result.idle_changes.append(
                f"every turn again: {len(answer.operations)} operations changed memory"
            )


def _given_turns(rv: Reverie, conv: Conversation, sessions: range) -> list[Turn]:
    """The user and assistant turns of ``sessions`` (numbered from 1; group chats left out,
    as review never sees them), as the runner gives them to a reviewer."""
    turns: list[Turn] = []
    for n in sessions:
        session = conv.sessions[n - 1]
        if session.kind == "group":
            continue
        sid = f"{conv.id}-s{n}"
        for m in rv.conversations.messages(sid, 0, len(session.messages)):
            if m.role in ("user", "assistant"):
                turns.append(Turn(sid, m.position, m.role, m.author, m.text, m.time))
    return turns


def _review_again(
    rv: Reverie,
    agent: str,
    turns: list[Turn],
    files: dict[str, str],
    reviewer: Callable[[], Reviewer],
) -> ReviewOutput:
    """What a fresh reviewer proposes when given ``turns`` again, against memory ``files``."""
    return reviewer().review(
        ReviewInput(
            agent=agent,
            turns=turns,
            index=files["MEMORY.md"],
            topics={p: t for p, t in files.items() if p != "MEMORY.md"},
            index_cap_chars=rv.settings.prompt_index_chars,
        )
    )


def session_idle(
    rv: Reverie, agent: str, conv: Conversation, reviewer: Callable[[], Reviewer], done: int
) -> list[str]:
    """After the review of session ``done``: what the reviewer proposes that would change
    memory, given again every turn so far, and given again only that session's turns.

    Nothing is written: the operations go through the store's own pure apply
    (``apply_batch``), so the memory the next session meets is the one review made.
    """
    files = memory_files(rv, agent)
    found: list[str] = []
    shapes = (("every turn so far", range(1, done + 1)), ("this session", range(done, done + 1)))
    for name, sessions in shapes:
        turns = _given_turns(rv, conv, sessions)
        if not turns:
            continue
        answer = _review_again(rv, agent, turns, files, reviewer)
        if not answer.operations:
            continue
        try:
            applied = apply_batch(parse_batch({"operations": answer.operations}), files.get)
        except ReverieError as exc:
            found.append(f"s{done}, {name}: refused ({exc.code}) {answer.operations!r}")
            continue
        if applied.files:
            found.append(f"s{done}, {name}: {answer.operations!r}")
    return found


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def totals(results: list[Result]) -> dict[str, Any]:
    """The figures over ``results`` (see the module docstring); shares are None when empty."""
    kept = [k for r in results for k in r.kept]
    sup = [s for r in results for s in r.superseded]
    gone = [g for r in results for g in r.retracted]
    never = [n for r in results for n in r.never]
    removed = [s for s in sup if s[2] == 0]
    entries = sum(len(r.entries) for r in results)
    by_kind: dict[str, list[int]] = {}
    for kind, _, where in never:
        counts = by_kind.setdefault(kind, [0, 0])
        counts[0] += 1
        counts[1] += where is not None
    return {
        "conversations": len(results),
        "facts": len(kept),
        "kept_once": _share(sum(1 for k in kept if k[2] == 1), len(kept)),
        "kept_at_all": _share(sum(1 for k in kept if k[2] >= 1), len(kept)),
        "duplicated": sum(1 for k in kept if k[2] > 1),
        "in_section": _share(sum(1 for k in kept if k[3]), len(kept)),
        "updates": len(sup),
        "superseded_removed": _share(len(removed), len(sup)),
        "new_kept_when_removed": _share(sum(1 for s in removed if s[3] >= 1), len(removed)),
        # The same over the updates whose old value was written to memory and is gone now:
        # an old value that was never kept was not removed by anything.
        "new_kept_when_written_and_removed": _share(
            sum(1 for s in removed if s[4] and s[3] >= 1), sum(1 for s in removed if s[4])
        ),
        "updated_fully": _share(sum(1 for s in sup if s[2] == 0 and s[3] >= 1), len(sup)),
        "old_ever_written": _share(sum(1 for s in sup if s[4]), len(sup)),
        "retractions": len(gone),
        "retracted": _share(sum(1 for g in gone if g[1] == 0), len(gone)),
        "never": {k: {"phrases": v[0], "leaked": v[1]} for k, v in sorted(by_kind.items())},
        "leaks": sum(1 for n in never if n[2] is not None),
        "entries": entries,
        "precision": _share(sum(r.expected_entries for r in results), entries),
        "sources": sum(r.sources for r in results),
        "bad_sources": sum(len(r.bad_sources) for r in results),
        "idle_changes": sum(1 for r in results if r.idle_changes),
        "dropped_by_runner": sum(len(r.dropped) for r in results),
        "over_cap": sum(1 for r in results if r.over_cap),
        "unlinked_topics": sum(len(r.unlinked_topics) for r in results),
        "commits": sum(r.commits for r in results),
        "model_calls": sum(r.model_calls for r in results),
    }
