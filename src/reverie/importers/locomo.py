"""LoCoMo to Reverie conversations (SPEC 15 JSON Lines), and LoCoMo evidence as positions.

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
ACL 2024) is a list of *samples*: two people chatting over up to 35 sessions that lie days or
weeks apart, plus questions whose ``evidence`` names the turns that support the answer. It is
licensed CC BY-NC 4.0: read it at run time (``../shared/bench/locomo10.json``), never copy it
into this repository. Everything here is pure: parsed JSON in, records and mappings out.

How a sample becomes Reverie data:

* **One conversation per session**, id ``locomo-<sample_id>-s<N>`` (``locomo-conv-26-s3``).
  A LoCoMo session is one sitting with its own date, and sessions lie days apart, which is what
  a Reverie conversation is; the history search is then asked to find the right conversation
  among 19 to 32 of the agent's, and the right turns inside it, as in real use. A single
  conversation of 400-700 messages per sample would test a shape Reverie never sees and lose
  the session dates.
* **One agent per sample**, ``locomo-<sample_id>``, so that each question searches only its own
  sample's history. The channel is a DM, ``{"kind": "dm", "id": "locomo-<sample_id>"}``: memory
  is on in DMs (SPEC O1); a group would make every session memory-off and unsearchable.
* **Author** is the speaker's name; **role** is ``user`` for both speakers. It is a conversation
  between two people; neither speaks for the agent. Calling one of them ``assistant`` would
  present a person's statements as the agent's own replies, which review and the agent treat
  differently from what people say about themselves.
* **Time**: the session's ``session_N_date_time`` (``"1:56 pm on 8 May, 2023"``, no time zone
  given, read as UTC), plus 30 seconds per turn so the messages keep their order.
* **Text**: the turn's ``text``; a shared photo's ``blip_caption`` is appended as
  ``" [shared a photo: CAPTION]"``. ``img_url`` and ``query`` (the search query that picked the
  photo, never said by anyone) are left out.
* Every session is followed by ``{"conversation": ID, "closed": true}``: the data is complete.
* Only ``session_N`` keys that hold a list of turns are sessions; a sample may carry date
  keys for sessions that do not exist (``conv-26`` has 35 dates and 19 sessions).

Evidence: ``D3:7`` is session 3, turn 7, both 1-based; it maps to
``("locomo-<sample_id>-s3", 6)``, a 0-based message position (SPEC 15). ``normalize_evidence``
repairs the quirks of the published file, in this order:

1. An entry may pack several ids: it is split on ``;``, ``,`` and whitespace
   (``'D8:6; D9:17'`` and ``'D9:1 D4:4 D4:6'`` are two and three ids).
2. Each piece must read ``D<session>:<turn>`` with an optional stray colon after ``D`` and
   leading zeros, which are removed: ``'D30:05'`` is ``D30:5``, ``'D:11:26'`` is ``D11:26``.
   Anything else (``'D'``, an empty string) names no turn and is dropped.
3. Duplicates are dropped, keeping the first (one question lists the same id twice).

``questions`` then drops ids that name no turn of the sample (two in the published file:
``conv-42 D10:19`` and ``conv-47 D4:36``; both questions keep other evidence). A question with no
evidence left (four in the published file, all open-domain) has nothing to find: benchmarks
leave it out. On the published file (sha256 ``79fa87e9...``): 10 samples, 272 sessions,
5,882 turns, 1,986 questions, 1,540 in categories 1-4 of which 1,536 have evidence.

From the command line (the one place here that reads and writes files)::

    python -m reverie.importers.locomo ../shared/bench/locomo10.json -o locomo.jsonl
    reverie conversations import locomo.jsonl
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reverie.errors import RefusedInput

__all__ = [
    "ANSWERABLE",
    "CATEGORIES",
    "TURN_SECONDS",
    "Question",
    "Session",
    "Summary",
    "agent_name",
    "channel_id",
    "conversation_id",
    "convert",
    "evidence_map",
    "main",
    "normalize_evidence",
    "parse_session_time",
    "questions",
    "sessions",
    "summarize",
    "to_jsonl",
    "to_records",
    "turn_text",
]

Record = dict[str, Any]

CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
ANSWERABLE: tuple[int, ...] = (1, 2, 3, 4)
"""Categories whose answer is in the conversation (5 is adversarial: no answer there)."""

TURN_SECONDS = 30
"""The time between two turns of one session: enough to keep order, small beside a session."""

_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE_ID = re.compile(r"D:?0*(\d+):0*(\d+)")
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_TIME_FORMAT = "%I:%M %p on %d %B, %Y"


def _refuse(message: str, **details: Any) -> RefusedInput:
    return RefusedInput(message, code="invalid_locomo", **details)


def _sample_id(sample: Mapping[str, Any]) -> str:
    sid = sample.get("sample_id")
    if not isinstance(sid, str) or not sid.strip():
        raise _refuse("A LoCoMo sample needs a non-empty string `sample_id`.")
    return sid.strip()


def _conversation(sample: Mapping[str, Any]) -> Mapping[str, Any]:
    conv = sample.get("conversation")
    if not isinstance(conv, Mapping):
        raise _refuse(
            "A LoCoMo sample needs a `conversation` object.", sample_id=sample.get("sample_id")
        )
    return conv


def agent_name(sample: Mapping[str, Any]) -> str:
    """The agent that holds one sample's conversations: ``locomo-<sample_id>``.

    Raises:
        RefusedInput: ``invalid_locomo``, the sample has no ``sample_id``.
    """
    return f"locomo-{_sample_id(sample)}"


def channel_id(sample: Mapping[str, Any]) -> str:
    """The id of the DM channel of one sample's two speakers (the same as its agent's name).

    Raises:
        RefusedInput: ``invalid_locomo``, the sample has no ``sample_id``.
    """
    return agent_name(sample)


def conversation_id(sample_id: str, session: int) -> str:
    """The conversation of one session: ``locomo-<sample_id>-s<session>``."""
    return f"locomo-{sample_id}-s{session}"


def parse_session_time(text: str) -> dt.datetime:
    """A session's date-time (``"1:56 pm on 8 May, 2023"``) as an aware UTC datetime.

    Raises:
        ValueError: the text is not in that form.
    """
    parsed = dt.datetime.strptime(" ".join(text.split()), _TIME_FORMAT)
    return parsed.replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class Session:
    """One LoCoMo session: its number (1-based), conversation id, start time and turns."""

    number: int
    conversation: str
    started: dt.datetime
    turns: Sequence[Mapping[str, Any]]


def sessions(sample: Mapping[str, Any]) -> list[Session]:
    """The sessions of one sample that hold turns, in session order.

    Raises:
        RefusedInput: ``invalid_locomo``, a session is not a list of turns, or has no readable
            ``session_N_date_time``.
    """
    sid = _sample_id(sample)
    conv = _conversation(sample)
    found: list[Session] = []
    for key, turns in conv.items():
        m = _SESSION_KEY.fullmatch(key)
        if m is None:
            continue
        if not isinstance(turns, list) or not all(isinstance(t, Mapping) for t in turns):
            raise _refuse(f"{sid} {key} is not a list of turns.", sample_id=sid, session=key)
        number = int(m.group(1))
        stamp = conv.get(f"{key}_date_time")
        try:
            started = parse_session_time(stamp) if isinstance(stamp, str) else None
        except ValueError:
            started = None
        if started is None:
            raise _refuse(
                f"{sid} {key}_date_time is missing or not like '1:56 pm on 8 May, 2023'.",
                sample_id=sid,
                session=key,
            )
        found.append(Session(number, conversation_id(sid, number), started, turns))
    found.sort(key=lambda s: s.number)
    return found


def turn_text(turn: Mapping[str, Any]) -> str:
    """What a turn says: its text, and a shared photo's caption as ``[shared a photo: ...]``."""
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    if caption:
        photo = f"[shared a photo: {caption}]"
        text = f"{text} {photo}" if text else photo
    return text


def _speaker(turn: Mapping[str, Any], sid: str, number: int) -> str:
    speaker = turn.get("speaker")
    if not isinstance(speaker, str) or not speaker.strip():
        raise _refuse(f"{sid} session_{number} has a turn without a speaker.", sample_id=sid)
    return speaker.strip()


def to_records(sample: Mapping[str, Any]) -> list[Record]:
    """One sample as SPEC 15 import records: each session's messages, then its ``closed`` line.

    Raises:
        RefusedInput: ``invalid_locomo``, the sample is not shaped like LoCoMo.
    """
    sid = _sample_id(sample)
    agent = agent_name(sample)
    channel = {"kind": "dm", "id": channel_id(sample)}
    records: list[Record] = []
    for session in sessions(sample):
        for position, turn in enumerate(session.turns):
            at = session.started + dt.timedelta(seconds=TURN_SECONDS * position)
            records.append(
                {
                    "conversation": session.conversation,
                    "agent": agent,
                    "channel": dict(channel),
                    "author": _speaker(turn, sid, session.number),
                    "role": "user",
                    "text": turn_text(turn),
                    "time": at.isoformat(),
                }
            )
        records.append({"conversation": session.conversation, "closed": True})
    return records


def convert(samples: Iterable[Mapping[str, Any]]) -> Iterator[Record]:
    """Every sample's records, in file order (see ``to_records``).

    Raises:
        RefusedInput: ``invalid_locomo``, a sample is not shaped like LoCoMo, or two samples
            share a ``sample_id``.
    """
    seen: set[str] = set()
    for sample in samples:
        sid = _sample_id(sample)
        if sid in seen:
            raise _refuse(f"Two LoCoMo samples are both named {sid}.", sample_id=sid)
        seen.add(sid)
        yield from to_records(sample)


def to_jsonl(records: Iterable[Record]) -> str:
    """Records as JSON Lines, one per line, ready for ``reverie conversations import``."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def evidence_map(sample: Mapping[str, Any]) -> dict[str, tuple[str, int]]:
    """Each turn's ``dia_id`` (``D3:7``) to its conversation id and 0-based position.

    The position is the turn's place in its session, which is its place in the imported
    conversation; ``dia_id`` values are read from the turns, not assumed from their order.

    Raises:
        RefusedInput: ``invalid_locomo``, the sample is not shaped like LoCoMo.
    """
    found: dict[str, tuple[str, int]] = {}
    for session in sessions(sample):
        for position, turn in enumerate(session.turns):
            for dia_id in normalize_evidence(turn.get("dia_id")):
                found.setdefault(dia_id, (session.conversation, position))
    return found


def normalize_evidence(raw: object) -> list[str]:
    """LoCoMo evidence (a list of strings, or one string) as clean ``D<s>:<t>`` ids.

    Splits packed entries on ``;``, ``,`` and whitespace; accepts ``D:11:26`` and leading
    zeros (``D30:05`` is ``D30:5``); drops pieces that name no turn (``D``) and duplicates.
    Whether a turn exists is not checked here (see ``questions``).
    """
    entries: Iterable[object]
    if raw is None:
        return []
    entries = [raw] if isinstance(raw, str) else raw if isinstance(raw, list | tuple) else []
    out: dict[str, None] = {}
    for entry in entries:
        if not isinstance(entry, str):
            continue
        for piece in _EVIDENCE_SPLIT.split(entry.strip()):
            m = _EVIDENCE_ID.fullmatch(piece)
            if m is not None:
                out.setdefault(f"D{int(m.group(1))}:{int(m.group(2))}", None)
    return list(out)


@dataclass(frozen=True)
class Question:
    """One LoCoMo question with its evidence resolved to message positions.

    ``evidence`` holds the normalised ids that name a turn, ``targets`` their
    ``(conversation, position)`` pairs in the same order, ``unknown`` the normalised ids that
    name no turn of the sample, and ``repaired`` whether normalising changed the raw entries.
    """

    sample_id: str
    agent: str
    index: int
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]
    targets: tuple[tuple[str, int], ...]
    unknown: tuple[str, ...] = ()
    repaired: bool = False

    @property
    def category_name(self) -> str:
        """``multi-hop``, ``temporal``, ``open-domain``, ``single-hop`` or ``adversarial``."""
        return CATEGORIES.get(self.category, f"category {self.category}")


def questions(
    sample: Mapping[str, Any],
    categories: Iterable[int] | None = ANSWERABLE,
    *,
    with_evidence: bool = False,
) -> list[Question]:
    """The sample's questions in ``categories`` (``None``: all), in file order.

    ``with_evidence=True`` keeps only the questions with at least one evidence turn that
    exists: the ones a retrieval benchmark can score.

    Raises:
        RefusedInput: ``invalid_locomo``, the sample is not shaped like LoCoMo.
    """
    sid = _sample_id(sample)
    agent = agent_name(sample)
    turns = evidence_map(sample)
    wanted = None if categories is None else set(categories)
    qa = sample.get("qa") or []
    if not isinstance(qa, list):
        raise _refuse(f"{sid} `qa` is not a list.", sample_id=sid)
    out: list[Question] = []
    for index, item in enumerate(qa):
        if not isinstance(item, Mapping):
            raise _refuse(f"{sid} qa[{index}] is not an object.", sample_id=sid)
        category = item.get("category")
        if not isinstance(category, int) or (wanted is not None and category not in wanted):
            continue
        raw = item.get("evidence")
        ids = normalize_evidence(raw)
        known = tuple(i for i in ids if i in turns)
        if with_evidence and not known:
            continue
        raw_list = [raw] if isinstance(raw, str) else list(raw or [])
        answer = item.get("answer", item.get("adversarial_answer"))
        out.append(
            Question(
                sample_id=sid,
                agent=agent,
                index=index,
                question=str(item.get("question") or ""),
                answer="" if answer is None else str(answer),
                category=category,
                evidence=known,
                targets=tuple(turns[i] for i in known),
                unknown=tuple(i for i in ids if i not in turns),
                repaired=ids != raw_list,
            )
        )
    return out


@dataclass(frozen=True)
class Summary:
    """Counts over a LoCoMo file, to check it against the published figures."""

    samples: int
    sessions: int
    turns: int
    photos: int
    questions: int
    by_category: dict[int, int] = field(default_factory=dict)
    answerable: int = 0
    answerable_with_evidence: int = 0
    repaired_questions: int = 0
    unknown_ids: tuple[str, ...] = ()


def summarize(samples: Sequence[Mapping[str, Any]]) -> Summary:
    """Samples, sessions, turns, questions per category, and how much evidence was repaired.

    ``unknown_ids`` lists ``<sample_id> <id>`` for evidence that names no turn.

    Raises:
        RefusedInput: ``invalid_locomo``, a sample is not shaped like LoCoMo.
    """
    n_sessions = n_turns = n_photos = 0
    cats: Counter[int] = Counter()
    answerable = with_evidence = repaired = 0
    unknown: list[str] = []
    for sample in samples:
        for session in sessions(sample):
            n_sessions += 1
            n_turns += len(session.turns)
            n_photos += sum(1 for t in session.turns if t.get("blip_caption"))
        for q in questions(sample, None):
            cats[q.category] += 1
            repaired += q.repaired
            unknown += [f"{q.sample_id} {i}" for i in q.unknown]
            if q.category in ANSWERABLE:
                answerable += 1
                with_evidence += bool(q.targets)
    return Summary(
        samples=len(samples),
        sessions=n_sessions,
        turns=n_turns,
        photos=n_photos,
        questions=sum(cats.values()),
        by_category=dict(sorted(cats.items())),
        answerable=answerable,
        answerable_with_evidence=with_evidence,
        repaired_questions=repaired,
        unknown_ids=tuple(unknown),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Convert a LoCoMo file to JSON Lines (stdout or ``-o FILE``); counts go to stderr.

    Returns the exit status: 0, or 3 when the file is not LoCoMo-shaped (as the CLI does for
    refused input).
    """
    parser = argparse.ArgumentParser(
        prog="python -m reverie.importers.locomo",
        description="LoCoMo JSON to the JSON Lines of `reverie conversations import`.",
    )
    parser.add_argument("locomo", type=Path, help="locomo10.json (a list of samples)")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    args = parser.parse_args(argv)
    try:
        samples = json.loads(args.locomo.read_text(encoding="utf-8"))
        if not isinstance(samples, list):
            raise _refuse("A LoCoMo file is a JSON list of samples.")
        text = to_jsonl(convert(samples))
        summary = summarize(samples)
    except (OSError, ValueError, RefusedInput) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    print(
        f"{summary.samples} samples, {summary.sessions} conversations, {summary.turns} "
        f"messages; {summary.answerable_with_evidence} questions in categories 1-4 with "
        "evidence",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
