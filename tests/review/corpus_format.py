"""The review corpus: conversations written for issue 11, their expected outcome, and the split.

The corpus lives in ``tests/review/corpus/<half>/<setting>.txt``, one file per setting and half.
It was written by hand for the offline reviewer's evaluation, by someone who did not look at
the rules while writing, and it is read by :func:`load`. A file holds conversations:

.. code-block:: text

    == clinic-hours-1 | clinic front desk
    -- dm
    rosa: Hi, I'm Rosa, I run the front desk at Harbor Family Clinic.
    assistant: Nice to meet you, Rosa.
    tool: $ calendar list
      | 09:00 Dr. Park
    -- dm
    rosa: We now open at 8 instead of 9 on Mondays.
    keep People: Rosa & front desk & Harbor Family Clinic
    was: open at 9 => open at 8
    keep Project: open at 8
    gone: Meridian
    never secret: hunter2

* ``== ID | SETTING`` starts a conversation. IDs are unique over the whole corpus.
* ``-- KIND`` starts a *session*: one Reverie conversation (id ``ID-sN``, N from 1) in a
  channel of that kind (``dm``, ``channel``, ``web`` or ``group``; a group is memory-off,
  SPEC O1). Sessions are imported and reviewed one after the other, each in its own review
  run, a week apart (``-- dm +2d`` puts it two days after the previous one instead).
* ``NAME: text`` is a message: ``assistant`` and ``tool`` are those roles, any other name is a
  user with that author. A line that starts with blanks and ``|`` continues the message above
  on a new line (code, logs, lists).
* What review should make of it, after every session was reviewed:

  - ``keep SECTION: FACT``: a durable fact that memory holds in exactly one entry, under
    ``SECTION`` (``People``, ``Decisions``, ``Environment`` or ``Project``; a topic file of
    that section counts).
  - ``was: OLD => NEW``: ``OLD`` was true and stopped being so; ``NEW`` replaces it. At the
    end no entry may hold ``OLD`` unless it also holds ``NEW`` (an entry that says "Tuesdays
    instead of Fridays" is the new value, not the old) or says that something ended (see
    :data:`ENDED`), and some entry must hold ``NEW`` (usually also listed with ``keep``).
  - ``gone: OLD``: retracted with nothing in its place (``we no longer use X``): at the end no
    entry holds ``OLD`` unless it says that it ended.
  - ``never KIND: PHRASE``: a phrase that must appear in no memory file and in no commit of
    the memory's history. KIND says why: ``secret``, ``tool`` (tool output), ``question``,
    ``group`` (said in a group chat), ``rule`` (a rule aimed at the agent), ``progress``,
    ``smalltalk`` or ``other``.

  A FACT is phrases joined by ``&``, all of which one entry must hold (case-blind); a phrase
  may offer alternatives joined by ``|`` (``lives in Berlin|moved to Berlin``). Facts name the
  values, not one wording of them, so that a reviewer that rewrites in the third person and one
  that keeps sentences whole are judged alike.

* ``{+}`` inside a message or a phrase is removed when read: credential-shaped test strings
  are written in pieces (``ghp_{+}8f3K...``), so that no file of the repository holds one whole.

**The split** (:func:`half`) is fixed: the first byte of the SHA-256 of a conversation's id,
even for ``test`` and odd for ``dev``. It was committed with the test half, before the
reviewer was changed. The first round tuned on ``dev`` and reported ``test``; the misses found
on ``test`` were then studied, so from the second round on **both halves are development data**.

``test2`` was written fresh for the second round, by someone who had not read the reviewer's
code or the first corpus's conversations, and committed with its "before" figures before the
reviewer was changed again. Its ids start with ``t2-`` (that, not the hash, puts a conversation
there). It was measured and reported once, held out; from the third round on it is development
data too (:data:`DEVELOPMENT`).

``test3`` was written fresh for the third round (ids ``t3-``), in settings the others lack (a
veterinary clinic, a construction site, a podcast, a landlord, a band, a farm, an IT helpdesk, a
wedding planner, a bakery, a data team, ...), with most weight on updates, and committed with
its "before" figures before the reviewer was changed. It was measured twice, before and after
the third round, in aggregate only; from the fourth round on it is development data
(:data:`THIRD`).

``test4`` was written fresh for the fourth round (ids ``t4-``) and committed with its "before"
figures before the reviewer was changed again. It was measured twice, before and after the
fourth round, in aggregate only; from the fifth round on it is development data
(:data:`FOURTH`).

``test5`` was written fresh for the fifth round (ids ``t5-``), by someone who had not read the
reviewer or the other sets, and committed with its "before" figures before the reviewer was
changed again. It was measured twice, before and after the fifth round, in aggregate only; from
the sixth round on it is development data (:data:`FIFTH`).

``test6`` was written fresh for the sixth round (ids ``t6-``), by someone who had read only
this format, the scorer and the corpus checks (not the reviewer, not the other sets), and
committed before its "before" figures were taken and before the reviewer was changed again. It
was measured twice, before and after the sixth round, in aggregate only; from the seventh round
on it is development data (:data:`SIXTH`).

``test7`` was written fresh for the seventh round (ids ``t7-``) the same way, and committed
with its "before" figures, taken on the reviewer as the sixth round left it, before the
reviewer was changed again. It was measured twice, before and after the seventh round, in
aggregate only; from the eighth round on it is development data (:data:`SEVENTH`).

``test8`` was written fresh for the eighth round the same way (by someone who had read only
this format, the scorer and the corpus checks), and committed before the reviewer as the
seventh round left it was measured on it. It was measured twice, before and after the eighth
round, in aggregate only; from the ninth round on it is development data (:data:`EIGHTH`).

``test9`` was written fresh for the ninth round the same way, and committed before the reviewer
as the eighth round left it was measured on it. It was measured twice, before and after the
ninth round, in aggregate only; from the tenth round on it is development data (:data:`NINTH`).

``test10`` was written fresh for the tenth round the same way, and committed before the reviewer
as the ninth round left it was measured on it. It was measured twice, before and after the
tenth round, in aggregate only; from the eleventh round on it is development data
(:data:`TENTH`).

``test11`` was written fresh for the eleventh round the same way, and committed before the
reviewer as the tenth round left it was measured on it. It was measured twice, before and after
the eleventh round, in aggregate only; from the twelfth round on it is development data
(:data:`ELEVENTH`).

``test12`` was written fresh for the twelfth round the same way, and committed before the
reviewer as the eleventh round left it was measured on it. It was measured twice, before and
after the twelfth round, in aggregate only; from the thirteenth round on it is development data
(:data:`TWELFTH`).

``test13`` was written fresh for the thirteenth round the same way, and committed before the
reviewer as the twelfth round left it was measured on it. It was measured twice, before and
after the thirteenth round, in aggregate only; from the fourteenth round on it is development
data (:data:`THIRTEENTH`).

``test14`` was written fresh for the fourteenth round the same way (by two writers, ten
settings each), and committed before the reviewer as the thirteenth round left it was measured
on it. It was measured twice, before and after the fourteenth round, in aggregate only; from
the fifteenth round on it is development data (:data:`FOURTEENTH`).

``test15`` was written fresh for the fifteenth round the same way (by two writers, ten
settings each), and committed before the reviewer as the fourteenth round left it was measured
on it. It was measured in aggregate only, before and after the fifteenth round and during the
sixteenth (docs/benchmarks.md says how often); from the seventeenth round on it is development
data (:data:`FIFTEENTH`).

``test16`` was written fresh at the end of the sixteenth round the same way (by two writers,
ten settings each), and committed before the reviewer as the sixteenth round left it was
measured on it. It was measured in aggregate only, before and after the seventeenth round
(docs/benchmarks.md says how often); from the eighteenth round on it is development data
(:data:`SIXTEENTH`).

``test17`` was written fresh during the seventeenth round the same way (by two writers, ten
settings each, who read only this format, the scoring and the checks), and committed with the
figures of the reviewer as the sixteenth round left it. It was measured in aggregate only,
before and after the seventeenth round and after the eighteenth; from the nineteenth round on
it is development data (:data:`SEVENTEENTH`).

``test18`` was written fresh at the end of the eighteenth round the same way (by two writers,
ten settings each, who read only this format, the scoring and the checks), and committed with
the figures of the reviewer as the eighteenth round left it. It was measured in aggregate
only, before the nineteenth round and after it; from the twentieth round on it is development
data (:data:`EIGHTEENTH`).

``test19`` was written fresh during the nineteenth round the same way (by two writers, ten
settings each, who read only this format, the scoring and the checks), and committed with the
figures of the reviewer as the nineteenth round left it. It was measured in aggregate only,
before the twentieth round and after it; from the twenty-first round on it is development data
(:data:`NINETEENTH`).

``test20`` was written fresh during the twentieth round the same way (by two writers, ten
settings each, who read only this format, the scoring and the checks), and committed with the
figures of the reviewer as it stood then (5af4803). It was measured in aggregate only,
before the twenty-first round and after it; from the twenty-second round on it is development
data (:data:`TWENTIETH`).

``test21`` was written fresh during the twenty-first round the same way (by two writers, ten
settings each, who read only this format, the scoring and the checks), and committed with the
figures of the reviewer as it stood then (24e665e). It was measured in aggregate only, before
the twenty-second round and after it; from the twenty-third round on it is development data
(:data:`TWENTY_FIRST`).

``test22`` was written fresh at the end of the twenty-second round the same way (by two
writers, ten settings each, who read only this format, the scoring and the checks), and
committed with the figures of the reviewer as it stood then (5e7d21d). It was measured in
aggregate only, once, held out; from the twenty-third round on it is development data
(:data:`TWENTY_SECOND`).

``test23`` was written fresh at the start of the twenty-third round the same way (by two
writers, ten settings each, who read only this format, the scoring and the checks), and
committed with the figures of the reviewer as the twenty-second round left it. It was measured
in aggregate only, held out, through the twenty-sixth round and the audits after it; from the
twenty-seventh round on it is development data (:data:`TWENTY_THIRD`).

``test24`` was written fresh at the start of the twenty-seventh round the same way (by two
writers, ten settings each, who read only this format, the scoring and the checks), and
committed with the figures of the reviewer as the twenty-sixth round and its audits left it
(f3708c4). It was measured in aggregate only, held out, twice in the twenty-seventh round;
from the twenty-eighth round on it is development data (:data:`TWENTY_FOURTH`).

``test25`` was written fresh at the start of the twenty-eighth round the same way (by two
writers, ten settings each, who read only this format, the scoring and the checks, and were
asked for more American English, terse and non-native writing than the sets before), and
committed with the figures of the reviewer as the twenty-seventh round left it (f89db88). It
was measured in aggregate only, held out, through the twenty-eighth round; from the
twenty-ninth round on it is development data (:data:`TWENTY_FIFTH`).

``test26`` was written fresh at the start of the twenty-ninth round the same way (by two
writers, ten settings each, who read only this format, the scoring and the checks), and
committed before the reviewer as the twenty-eighth round left it (4acb986) was measured on it.
It was measured in aggregate only, held out, through the twenty-ninth round; from the thirtieth
round on it is development data (:data:`TWENTY_SIXTH`).

``test27`` was written fresh at the start of the thirtieth round the same way (by two writers,
ten settings each, who read only this format, the scoring and the checks, and were asked for
long rambling, dictated, terse and non-native writing, and for changes told in many ways), and
committed before the reviewer as the twenty-ninth round left it (2d61df1) was measured on it.
It was measured in aggregate only, held out, through the thirtieth round; from the thirty-first
round on it is development data (:data:`TWENTY_SEVENTH`).

**The held-out set** ``test28`` (:data:`HELD_OUT`, ids ``t28-``) was written fresh at the start
of the thirty-first round the same way (by two writers, ten settings each, who read only this
format, the scoring and the checks, and were asked for changes of one part of a sentence that
says several things, changes told by someone else or with the new value first, and secrets in
varied shapes), and committed with the figures of the reviewer as the thirtieth round left it
(8fd3515). It is never tuned on: it is measured with ``bench/review_corpus.py --half test28``
in aggregate only.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "CORPUS",
    "DEVELOPMENT",
    "EIGHTEENTH",
    "EIGHTH",
    "ELEVENTH",
    "ENDED",
    "FIFTEENTH",
    "FIFTH",
    "FOURTEENTH",
    "FOURTH",
    "HALVES",
    "HELD_OUT",
    "NEVER_KINDS",
    "NINETEENTH",
    "NINTH",
    "SECOND",
    "SECTIONS",
    "SEVENTEENTH",
    "SEVENTH",
    "SIXTEENTH",
    "SIXTH",
    "TENTH",
    "THIRD",
    "THIRTEENTH",
    "TWELFTH",
    "TWENTIETH",
    "TWENTY_FIFTH",
    "TWENTY_FIRST",
    "TWENTY_FOURTH",
    "TWENTY_SECOND",
    "TWENTY_SEVENTH",
    "TWENTY_SIXTH",
    "TWENTY_THIRD",
    "Conversation",
    "Fact",
    "Message",
    "Session",
    "half",
    "load",
    "parse",
]

CORPUS = Path(__file__).parent / "corpus"
#: The two halves of the first corpus, split by :func:`half`; both are development data now.
HALVES = ("dev", "test")
#: Written for the second round; held out then, development data since the third.
SECOND = "test2"
#: Written for the third round; held out then, development data since the fourth.
THIRD = "test3"
#: Written for the fourth round; held out then, development data since the fifth.
FOURTH = "test4"
#: Written for the fifth round; held out then, development data since the sixth.
FIFTH = "test5"
#: Written for the sixth round; held out then, development data since the seventh.
SIXTH = "test6"
#: Written for the seventh round; held out then, development data since the eighth.
SEVENTH = "test7"
#: Written for the eighth round; held out then, development data since the ninth.
EIGHTH = "test8"
#: Written for the ninth round; held out then, development data since the tenth.
NINTH = "test9"
#: Written for the tenth round; held out then, development data since the eleventh.
TENTH = "test10"
#: Written for the eleventh round; held out then, development data since the twelfth.
ELEVENTH = "test11"
#: Written for the twelfth round; held out then, development data since the thirteenth.
TWELFTH = "test12"
#: Written for the thirteenth round; held out then, development data since the fourteenth.
THIRTEENTH = "test13"
#: Written for the fourteenth round; held out then, development data since the fifteenth.
FOURTEENTH = "test14"
#: Written for the fifteenth round; held out then, development data since the seventeenth.
FIFTEENTH = "test15"
#: Written at the end of the sixteenth round; held out then, development data since the
#: eighteenth.
SIXTEENTH = "test16"
#: Written during the seventeenth round; held out then and in the eighteenth, development data
#: since the nineteenth.
SEVENTEENTH = "test17"
#: Written at the end of the eighteenth round; held out then and in the nineteenth,
#: development data since the twentieth.
EIGHTEENTH = "test18"
#: Written during the nineteenth round; held out then and in the twentieth, development data
#: since the twenty-first.
NINETEENTH = "test19"
#: Written during the twentieth round; held out then and in the twenty-first, development data
#: since the twenty-second.
TWENTIETH = "test20"
#: Written during the twenty-first round; held out then and in the twenty-second, development
#: data since the twenty-third.
TWENTY_FIRST = "test21"
#: Written at the end of the twenty-second round; held out then, development data since the
#: twenty-third.
TWENTY_SECOND = "test22"
#: Written at the start of the twenty-third round; held out through the twenty-sixth,
#: development data since the twenty-seventh.
TWENTY_THIRD = "test23"
#: Written at the start of the twenty-seventh round; held out then, development data since the
#: twenty-eighth.
TWENTY_FOURTH = "test24"
#: Written at the start of the twenty-eighth round; held out then, development data since the
#: twenty-ninth.
TWENTY_FIFTH = "test25"
#: Written at the start of the twenty-ninth round; held out then, development data since the
#: thirtieth.
TWENTY_SIXTH = "test26"
#: Written at the start of the thirtieth round; held out then, development data since the
#: thirty-first.
TWENTY_SEVENTH = "test27"
#: Everything the reviewer may be tuned on.
DEVELOPMENT = (
    *HALVES, SECOND, THIRD, FOURTH, FIFTH, SIXTH, SEVENTH, EIGHTH, NINTH, TENTH, ELEVENTH,
    TWELFTH, THIRTEENTH, FOURTEENTH, FIFTEENTH, SIXTEENTH, SEVENTEENTH, EIGHTEENTH, NINETEENTH,
    TWENTIETH, TWENTY_FIRST, TWENTY_SECOND, TWENTY_THIRD, TWENTY_FOURTH, TWENTY_FIFTH,
    TWENTY_SIXTH, TWENTY_SEVENTH,
)  # fmt: skip
#: Written at the start of the thirty-first round and never tuned on.
HELD_OUT = "test28"
SECTIONS = {
    "People": "People & preferences",
    "Decisions": "Decisions",
    "Environment": "Environment & gotchas",
    "Project": "Project state",
}
NEVER_KINDS = ("secret", "tool", "question", "group", "rule", "progress", "smalltalk", "other")
CHANNEL_KINDS = ("dm", "channel", "web", "group")
#: Words by which an entry says that something ended: "No longer uses Jenkins", "We cancelled
#: Netflix". An entry that holds an outdated value beside one of these is not stale.
ENDED = (
    "no longer",
    "not on",
    "any more",
    "anymore",
    "stopped",
    "cancelled",
    "canceled",
    "dropped",
    "retired",
    "moved off",
    "switched from",
    "moved from",
    "instead of",
    "replaced",
    "quit",
    "sold",
    "gave up",
    "given up",
    "closed",
    "cut",
    "removed",
    # Added with test2, before it was measured: more ways an entry says that something ended.
    "lapse",
    "lapsed",
    "reversing",
    "reversed",
    "handed",
    "gone",
    "done with",
    "left",
    "discontinued",
    "no more",
    "killed",
    "off the road",
    # Added with test7, before it was measured: its retractions say so in these words.
    "scrapped",
    "withdrew",
    "withdrawn",
    "not doing",
    "stop doing",
)


def half(conversation_id: str) -> str:
    """The set a conversation belongs to: ``test2`` to ``test28`` when its id starts with
    ``t2-`` to ``t28-``; else ``test`` when the first byte of the SHA-256 of its id
    is even, and ``dev`` when odd. Fixed before any tuning; never change it."""
    if conversation_id.startswith("t2-"):
        return SECOND
    if conversation_id.startswith("t3-"):
        return THIRD
    if conversation_id.startswith("t4-"):
        return FOURTH
    if conversation_id.startswith("t5-"):
        return FIFTH
    if conversation_id.startswith("t6-"):
        return SIXTH
    if conversation_id.startswith("t7-"):
        return SEVENTH
    if conversation_id.startswith("t8-"):
        return EIGHTH
    if conversation_id.startswith("t9-"):
        return NINTH
    if conversation_id.startswith("t10-"):
        return TENTH
    if conversation_id.startswith("t11-"):
        return ELEVENTH
    if conversation_id.startswith("t12-"):
        return TWELFTH
    if conversation_id.startswith("t13-"):
        return THIRTEENTH
    if conversation_id.startswith("t14-"):
        return FOURTEENTH
    if conversation_id.startswith("t15-"):
        return FIFTEENTH
    if conversation_id.startswith("t16-"):
        return SIXTEENTH
    if conversation_id.startswith("t17-"):
        return SEVENTEENTH
    if conversation_id.startswith("t18-"):
        return EIGHTEENTH
    if conversation_id.startswith("t19-"):
        return NINETEENTH
    if conversation_id.startswith("t20-"):
        return TWENTIETH
    if conversation_id.startswith("t21-"):
        return TWENTY_FIRST
    if conversation_id.startswith("t22-"):
        return TWENTY_SECOND
    if conversation_id.startswith("t23-"):
        return TWENTY_THIRD
    if conversation_id.startswith("t24-"):
        return TWENTY_FOURTH
    if conversation_id.startswith("t25-"):
        return TWENTY_FIFTH
    if conversation_id.startswith("t26-"):
        return TWENTY_SIXTH
    if conversation_id.startswith("t27-"):
        return TWENTY_SEVENTH
    if conversation_id.startswith("t28-"):
        return HELD_OUT
    return "test" if hashlib.sha256(conversation_id.encode()).digest()[0] % 2 == 0 else "dev"


@dataclass(frozen=True)
class Message:
    """One message: ``role`` is user, assistant or tool; ``author`` names a user."""

    role: str
    author: str | None
    text: str


@dataclass(frozen=True)
class Session:
    """One Reverie conversation of a corpus conversation, reviewed in a run of its own."""

    kind: str
    messages: tuple[Message, ...]
    days_after: int = 7


@dataclass(frozen=True)
class Fact:
    """Phrases one entry must all hold; each phrase is a tuple of alternatives (case-blind)."""

    phrases: tuple[tuple[str, ...], ...]
    text: str  # as written in the corpus, for reports

    def held_by(self, entry: str) -> bool:
        """Whether ``entry`` holds every phrase (one of its alternatives), case-blind."""
        low = _fold(entry)
        return all(any(_fold(alt) in low for alt in alts) for alts in self.phrases)


@dataclass
class Conversation:
    """A corpus conversation and what review should make of it."""

    id: str
    setting: str
    path: str
    line: int
    sessions: list[Session] = field(default_factory=list)
    keep: list[tuple[str, Fact]] = field(default_factory=list)  # (section, fact)
    was: list[tuple[Fact, Fact]] = field(default_factory=list)  # (old, new)
    gone: list[Fact] = field(default_factory=list)
    never: list[tuple[str, str]] = field(default_factory=list)  # (kind, phrase)

    @property
    def half(self) -> str:
        """``dev``, ``test``, ``test2``, ``test3`` or ``test4`` (:func:`half`)."""
        return half(self.id)


def _fold(text: str) -> str:
    return " ".join(text.replace("’", "'").replace("‘", "'").casefold().split())


def _join(text: str) -> str:
    return text.replace("{+}", "")


def fact(text: str) -> Fact:
    """Parse ``a & b|c`` into a :class:`Fact`."""
    phrases = tuple(
        tuple(_join(alt.strip()) for alt in part.split("|") if alt.strip())
        for part in text.split("&")
    )
    if not phrases or any(not alts for alts in phrases):
        raise ValueError(f"empty phrase in fact {text!r}")
    return Fact(phrases, text.strip())


_HEADER = re.compile(r"^==\s*(?P<id>[a-z0-9][a-z0-9-]*)\s*\|\s*(?P<setting>.+?)\s*$")
_SESSION = re.compile(r"^--\s*(?P<kind>[a-z]+)(?:\s+\+(?P<days>\d+)d)?\s*$")
_MESSAGE = re.compile(r"^(?P<who>[A-Za-z][\w.-]*):\s?(?P<text>.*)$")
_CONTINUED = re.compile(r"^\s+\|\s?(?P<text>.*)$")
_KEEP = re.compile(r"^keep\s+(?P<section>\w+):\s*(?P<fact>.+)$")
_WAS = re.compile(r"^was:\s*(?P<old>.+?)\s*=>\s*(?P<new>.+)$")
_GONE = re.compile(r"^gone:\s*(?P<fact>.+)$")
_NEVER = re.compile(r"^never\s+(?P<kind>\w+):\s*(?P<phrase>.+)$")


def parse(text: str, path: str = "<text>") -> list[Conversation]:
    """The conversations of one corpus file.

    Raises:
        ValueError: a line that fits no form, naming the file and line.
    """
    out: list[Conversation] = []
    current: Conversation | None = None
    messages: list[Message] = []
    kind, days = "", 7

    def close_session() -> None:
        nonlocal messages
        if current is not None and kind:
            if not messages:
                raise ValueError(f"{path}: empty session in {current.id}")
            current.sessions.append(Session(kind, tuple(messages), days))
        messages = []

    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()
        where = f"{path}:{number}"
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if m := _HEADER.match(line):
            close_session()
            kind = ""
            current = Conversation(m["id"], m["setting"], path, number)
            out.append(current)
            continue
        if current is None:
            raise ValueError(f"{where}: text before the first '== id | setting' line")
        if m := _SESSION.match(line):
            close_session()
            kind = m["kind"]
            days = int(m["days"]) if m["days"] else 7
            if kind not in CHANNEL_KINDS:
                raise ValueError(f"{where}: unknown channel kind {kind!r}")
            continue
        if m := _CONTINUED.match(raw):
            if not messages:
                raise ValueError(f"{where}: a continuation line with no message above it")
            last = messages[-1]
            messages[-1] = Message(last.role, last.author, f"{last.text}\n{_join(m['text'])}")
            continue
        if m := _KEEP.match(line):
            if m["section"] not in SECTIONS:
                raise ValueError(f"{where}: unknown section {m['section']!r}")
            current.keep.append((SECTIONS[m["section"]], fact(m["fact"])))
            continue
        if m := _WAS.match(line):
            current.was.append((fact(m["old"]), fact(m["new"])))
            continue
        if m := _GONE.match(line):
            current.gone.append(fact(m["fact"]))
            continue
        if m := _NEVER.match(line):
            if m["kind"] not in NEVER_KINDS:
                raise ValueError(f"{where}: unknown kind {m['kind']!r} of 'never'")
            current.never.append((m["kind"], _join(m["phrase"].strip())))
            continue
        if m := _MESSAGE.match(line):
            if not kind:
                raise ValueError(f"{where}: a message before the first '-- kind' line")
            who = m["who"]
            role = who if who in ("assistant", "tool") else "user"
            messages.append(Message(role, None if role != "user" else who, _join(m["text"])))
            continue
        raise ValueError(f"{where}: cannot read {line!r}")
    close_session()
    for conv in out:
        if not conv.sessions:
            raise ValueError(f"{conv.path}:{conv.line}: {conv.id} has no session")
    return out


def load(which: str | None = None, root: Path = CORPUS) -> list[Conversation]:
    """Every conversation of one set (``dev``, ``test``, ``test2``, ``test3``, ``test4``) or of both
    halves of the first corpus (``None``), in file order.

    Raises:
        ValueError: a file that does not parse, a duplicate id, or a conversation filed in
            the wrong half.
    """
    halves = HALVES if which is None else (which,)
    out: list[Conversation] = []
    seen: set[str] = set()
    for name in halves:
        for path in sorted((root / name).glob("*.txt")):
            rel = path.relative_to(root).as_posix()
            for conv in parse(path.read_text(encoding="utf-8"), rel):
                if conv.id in seen:
                    raise ValueError(f"{rel}:{conv.line}: duplicate id {conv.id}")
                if conv.half != name:
                    raise ValueError(f"{rel}:{conv.line}: {conv.id} belongs to {conv.half}")
                seen.add(conv.id)
                out.append(conv)
    return out
