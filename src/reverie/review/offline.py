"""The offline reviewer: keeps memory current by rules, with no network and no model (R6, R8).

It reads each user and assistant message sentence by sentence and clause by clause
(:mod:`.sentences`), decides what each clause says (:mod:`.statements`) and how it is written as
an entry (:mod:`.wording`), then works on a model of the memory it was given, one statement at a
time, so that the batch behaves as if its statements had been reviewed one after the other:

* a statement whose meaning is already there (up to case, punctuation, stop words, speaker and
  source), or that says less than an entry in other words, is a duplicate and changes nothing;
* a statement that outdates entries (:func:`.changes.supersedes`: the same person or thing,
  and the old value named, another version, another value of a one-at-a-time attribute, or an
  update of the same words) replaces the first in place, with its new source, and removes the
  others; of an entry that says several things, only the sentence or the part of a sentence
  it outdates is replaced ("Mia has a peanut allergy, rob does the school run on fridays
  now"), and a new value said with nothing else of its own is written into what it outdates
  ("Jen does the school run on mondays now", not "Jen's doing mondays now"); one person of a
  list replaced by another leaves the others ("jake and ruby do the saturday shifts");
* news of a person ("Helen got me an extension") leaves the entry that says who they are
  ("Helen is my supervisor"), unless it says that changed (they left, were replaced, are
  someone else's now);
* "we switched from X to Y" rewrites the entries that say X is used; "we no longer use X"
  removes the entries that name X, or takes X out of a list;
* a verbless answer is kept with the question it answers, citing both (the last question of
  the assistant's message, or of several the last that asks for a value, whatever follows it);
* anything else is a new entry under its standard section.

Then the model is compared with what was given and turned into store operations: ``replace``
and ``remove`` for changed index entries, ``add`` for new ones, and ``write_topic`` for topic
files. When ``MEMORY.md`` would exceed the prompt cap, the oldest entries of the largest
sections move into one topic file per section (``memory/decisions.md``, ...), and each such
section keeps its newest entries and a ``More: [[memory/<section>.md]]`` link, in that section:
the index stays an index. The operations are dry-run with the store's own pure
:func:`apply_batch`, and held to the runner's source rule (:mod:`.sources`) and to its rule
that an update is one unit (:mod:`.replacements`: an entry removed as outdated goes only with
the entry holding the new value), so what this reviewer proposes is what the store and the
runner will accept.

Deterministic: the same input gives the same operations and message. Never writes anything.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import permutations
from typing import Any

from reverie.core.markdown import STANDARD_SECTIONS, apply_batch, canonical_text, sections
from reverie.core.operations import parse_batch
from reverie.core.paths import INDEX, topic_path
from reverie.core.secrets import find_credentials
from reverie.errors import ReverieError

from . import learned
from . import lexicon as lx
from .changes import keys, mentions, names_what_it_replaced, resets, restates, supersedes, uses
from .discourse import about_speaker, full_name, units
from .frames import (
    AUX,
    CALENDAR,
    SPEAKER_NAMED,
    WORD,
    Frame,
    entry_frame,
    has_verb,
    is_verb,
    meaning,
    past,
    says_update,
    strip_source,
    without_work_done,
)
from .likeness import Likeness, SharedWords, said_of_both
from .replacements import unreplaced
from .sentences import clauses, sentences
from .slots import (
    Measure,
    Slot,
    measures,
    read_slot,
    refills,
    root,
    said_of_others,
    says_no_more,
    value_kind,
)
from .sources import BatchSources, beyond_output, is_link_line, said_words
from .spelling import recase, spellings
from .statements import (
    ASKS_VALUE,
    CORRECTING,
    DECISIONS,
    PEOPLE,
    Statement,
    asks_secret,
    because,
    beside_secret,
    pieces,
    read,
    second_reading,
    secret_values,
    withholds,
)
from .types import SOURCE_PATTERN, ReviewInput, ReviewOutput, Turn, format_source, parse_sources
from .wording import render

__all__ = ["OfflineReviewer", "topic_slug"]

_ENTRY = re.compile(r"^([-*+]|\d{1,3}[.)])[ \t]+(.*)$")
# An index shrunk by moving detail out keeps this share of the cap free, so that the next few
# batches add entries without moving something again every time.
_HEADROOM = 0.75
_MESSAGE_LINE = 160
# A statement that says something ended, was given up, or is no longer so.
_ENDS = lx.phrases([*lx.RETIRE_VERBS, *lx.ENDED_STATES, "no longer", "didn't renew"])
#: How a reply says that something ended, beside :data:`_ENDS`.
_ENDED_REPLY = re.compile(r"\b(?:has|have)\s+(?:now\s+)?(?:ended|finished)\b|\bis\s+over\b", re.I)
#: What may follow an ending that closes a clause: "... has stopped for good now."
_CLOSES = re.compile(r"^(?:\W|for good|now|as of today|from now on)*$", re.I)

# A statement that says it updates or corrects something.
_UPDATE = lx.phrases(
    [
        *lx.UPDATE_MARKERS,
        *("sorry", "oops", "my mistake", "i meant", "got it wrong", "up to", "down to"),
        *("dropped to", "dropped it to", "cut to", "reduced to", "up it to", "it up to"),
    ]
)
#: A value said to change by the verb before it: "corn snakes going to £70", "going up to
#: 11 till 4" ("going to" alone is more often a plan: "we're going to Tesco").
_GOING_TO = re.compile(r"\bgoing\s+(?:up\s+|down\s+)?to\s+[£$€]?\d", re.I)


def topic_slug(section: str) -> str:
    """The topic that holds a section's moved entries: "Project state" -> "project-state"."""
    return re.sub(r"[^a-z0-9]+", "-", section.lower()).strip("-") or "notes"


@dataclass
class _Entry:
    """One list item of a memory file, as given and as the review leaves it."""

    path: str
    section: str | None
    text: str  # current text, source included
    original: str | None = None  # the text as stored; None for a new entry
    marker: str = "-"
    line: int = -1  # line number in the given file; -1 for a new entry
    removed: bool = False
    movable: bool = False  # a single-line index entry in a standard section
    #: How ``remove``/``replace`` can name it: "unique" (its text is in the file once),
    #: "copies" (every occurrence is an identical entry: ``remove`` drops them all), or
    #: "shared" (its text is also inside other lines: it cannot be named, so it stays).
    naming: str = "unique"
    moved_to: str | None = None  # topic path it moves to
    order: int = 0  # creation order of new entries (after every existing one)
    #: The entry holding the value that outdated this one (an update, a merge): its removal
    #: and that entry are one unit (:mod:`.replacements`). None for a removal that replaces
    #: nothing (a retirement).
    replaced_by: _Entry | None = None
    #: The messages being read when a given entry was removed, as (conversation, position).
    removed_reading: frozenset[tuple[str, int]] | None = None

    @property
    def live(self) -> bool:
        return not self.removed and self.moved_to is None


@dataclass
class _Memory:
    index: str
    topics: dict[str, str]
    entries: list[_Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Entries naming a thing retired in the message being read, and that thing; and the
    #: source of the message that retired it.
    retiring: list[tuple[_Entry, str]] = field(default_factory=list)
    retired_by: str = ""
    #: Statements of this batch that a later message, read before them, had outdated (a batch
    #: read again), as entries never written: a read-back of one is outdated too.
    outdated: list[_Entry] = field(default_factory=list)
    #: Names of entries that the message being read also names ("Ruairi is on parental
    #: leave"): the message is about a change in their slot, cue or not.
    context: frozenset[str] = frozenset()
    #: The messages being read, as (conversation, position).
    reading: frozenset[tuple[str, int]] = frozenset()
    #: When each message of the batch was said, by (conversation, position).
    said_at: dict[tuple[str, int], float] = field(default_factory=dict)
    #: Of each user message of the batch, the assistant's reply right after it that says it
    #: has taken note (:data:`_CONFIRMS`): the reply reads it back.
    read_back_in: dict[tuple[str, int], tuple[str, int]] = field(default_factory=dict)
    #: What finds the entry an update no rule connected replaces (:mod:`.likeness`).
    likeness: Likeness = field(default_factory=SharedWords)
    #: Entries the message being read updated, with the names they lost; and entries it added.
    updated: list[tuple[_Entry, frozenset[str]]] = field(default_factory=list)
    added: list[_Entry] = field(default_factory=list)
    #: The text of the message being read.
    message: str = ""
    #: The turns of the batch, for the runner's source rule (:mod:`.sources`); None: any.
    sources: BatchSources | None = None
    #: When the message being read is the assistant's reply, the user's messages it answers,
    #: as (conversation, position): it may read back what they said (:meth:`_read_back`).
    replying_to: frozenset[tuple[str, int]] = frozenset()
    #: And their text: a read-back that gives again what the entries left out keeps it.
    replied: str = ""
    #: For an assistant's message: the user's messages of this batch said before it, in its
    #: conversation.
    heard: frozenset[tuple[str, int]] = frozenset()
    #: The people talking, as lower-case words of their names.
    people: frozenset[str] = frozenset()
    #: When the message being read is the user's, the assistant's message right before it: a
    #: reply that denies it ("No, it's 3pm now") corrects a value it said.
    answering: str = ""

    @classmethod
    def parse(cls, index: str, topics: dict[str, str]) -> _Memory:
        memory = cls(index=canonical_text(index), topics=dict(sorted(topics.items())))
        memory._read(INDEX, memory.index)
        for path, text in memory.topics.items():
            memory._read(path, text)
        return memory

    def _read(self, path: str, text: str) -> None:
        lines = text.split("\n")
        names: dict[int, str] = {}
        for name, start, end in sections(text):
            for i in range(start, end):
                names[i] = name
        bodies = Counter(m.group(2).rstrip() for line in lines if (m := _ENTRY.match(line)))
        for i, line in enumerate(lines):
            m = _ENTRY.match(line)
            if not m or not m.group(2).strip():
                continue
            body = m.group(2).rstrip()
            found = text.count(body)
            naming = "unique" if found == 1 else "copies" if found == bodies[body] else "shared"
            continued = i + 1 < len(lines) and lines[i + 1][:1] in {" ", "\t"}
            section = names.get(i)
            self.entries.append(
                _Entry(
                    path=path,
                    section=section,
                    text=body,
                    original=body,
                    marker=m.group(1),
                    line=i,
                    naming=naming,
                    movable=(
                        path == INDEX
                        and section in STANDARD_SECTIONS
                        and not continued
                        and "[[" not in body
                        and naming == "unique"
                    ),
                )
            )

    def present(self) -> list[_Entry]:
        """Entries still in memory after this review (moved ones included)."""
        return [e for e in self.entries if not e.removed]

    # statements

    def live(self) -> list[_Entry]:
        """Entries that state something (link lines are index structure, not statements)."""
        return [e for e in self.present() if not is_link_line(e.text)]

    def older(self) -> list[_Entry]:
        """The entries a statement of the message being read may update or end: those not
        said after it (:meth:`_said_after`)."""
        return [e for e in self.live() if not self._said_after(e)]

    def _reading_time(self) -> float:
        """When the message being read was said (its last part, for a run of messages)."""
        return max((self.said_at.get(m, 0.0) for m in self.reading), default=0.0)

    def _said_after(self, e: _Entry) -> bool:
        """Whether ``e`` cites a message said after the one being read. That happens only
        when a batch gives older messages again (an idle re-run, a range read twice): an
        older statement never outdates a newer entry; the newer entry outdates it."""
        now = self._reading_time()
        return any(
            self.said_at.get((conv, p), 0.0) > now
            for conv, a, b in parse_sources(e.text)
            for p in range(a, b)
        )

    def _meanwhile(self, e: _Entry, source: str) -> bool:
        """Whether what ``e`` cites of messages said after the one being read (``source``)
        comes only from other conversations, and this batch read it: two conversations held
        at the same time and read one after the other ("I prefer tea" in one DM thread, "we
        decided on Postgres 16" a moment later in another, read first). That is no later
        reading of the statement, as a batch read again is."""
        conv = parse_sources(source)[0][0]
        now = self._reading_time()
        given = _positions(e.original) if e.original is not None else set()
        later = {m for m in _positions(e.text) if self.said_at.get(m, 0.0) > now}
        return bool(later) and all(m[0] != conv and m not in given for m in later)

    def _later_in_message(self, e: _Entry, source: str) -> bool:
        """Whether ``e`` was made from the messages being read (consecutive messages of one
        author, read as one text) only, from those after ``source``: read again, a statement
        held already does not outdate what followed it, as it could not when first read."""
        conv, _, end = parse_sources(source)[0]
        cited = parse_sources(e.text)
        return bool(cited) and all(
            c == conv and a >= end and (c, a) in self.reading for c, a, _ in cited
        )

    def fact(self, text: str, section: str, source: str) -> str:
        """Keep ``text`` (an entry without its source): a duplicate changes nothing; a
        statement that updates entries replaces the first in place and removes the others;
        anything else is a new entry under ``section``."""
        live = self.live()
        said = meaning(text)
        new = entry_frame(text)
        if not said:
            return "duplicate"
        # Only entries that share a word, a value or an owner with it can be about the same
        # thing: the others are not compared (review stays cheap as memory grows).
        mine = keys(text)
        near = [e for e in live if keys(e.text) & mine]
        # An entry whose thing this message retired goes at its end unless something takes
        # its place: a statement it seems to say already is that something, not a repeat
        # ("we killed Recharge, using Shopify's own subscriptions now" after "web shop is on
        # Shopify, subscriptions through Recharge").
        waiting = {id(e) for e, _ in self.retiring if not self._from_this_message(e)}
        staying = [e for e in live if id(e) not in waiting]
        holders = [e for e in staying if meaning(e.text) == said or _holds(e.text, text)]
        holders = holders or self._read_back(text, staying) or self._made_from(text, source)
        if not holders and self._read_back(text, self.outdated):
            return "outdated"  # "Okay, Monday opening from May." of a decision taken back since
        if not holders and self._reads_back_an_ending(text):
            return "outdated"  # "Noted: Friday open gym has ended." after "no more open gym"
        newer = [e for e in near if self._said_after(e)]
        if holders:
            # Said again, it is still true: entries it outdates go (a batch that repeats an
            # older value and then the newer one ends as the newer one alone). An entry that
            # says it among more (an update with its reason) holds it too.
            # (Not an entry the same message made: said again, a message does not outdate
            # what another of its clauses said, "Owen does weekdays and I do weekends"; nor
            # one a message read with it made after it, which it could not outdate when first
            # read.)
            outdated = [
                e
                for e in near
                if e not in holders
                and e not in newer
                and not _cites(e.text, source)
                and not self._later_in_message(e, source)
                and self._outdates(new, text, e, source)
            ]
            taken = {id(e) for e in (*near, *holders, *newer)}
            # (an assistant's read-back of the user's message just before takes no entry the
            # first reading left standing for saying more than the update changes: "home small
            # groups meet on the first and third Sunday evenings instead" of "Sunday School is
            # at 9:45, morning worship at 11", which "small groups ... on Sunday evenings
            # instead" left as it was)
            echo = bool(self.replying_to) and all(
                _positions(h.text) & self.replying_to for h in holders
            )
            for e in outdated or self._named_elsewhere(text, live, taken):
                if not self._would_lose(e, text, switched=not echo):
                    _supersede(e, holders[0])
            # (never an entry a later message made, near or not: a batch read again; nor one
            # of the message an assistant's "Noted: ..." reads back)
            back = self.replied_positions()
            linked = self._value_link(
                text,
                [
                    e
                    for e in live
                    if e not in holders
                    and not self._said_after(e)
                    and not _positions(e.text) & back
                ],
            )
            if linked is not None and not (echo and self._would_lose(linked[0], text)):
                # Said again: the older value it replaced goes too.
                _supersede(linked[0], holders[0])
            if not outdated and linked is None and _cued(text, new):
                # An older value this batch wrote again (a batch read again) goes, as when the
                # statement was first read; an entry the batch was given was compared with it
                # then, where no rule had found the entry.
                # (Not one of the message it reads back, "choreo fee stays $150" beside
                # "tuition is $199 a month", nor one of its own: those are not older.)
                added = [
                    e
                    for e in live
                    if e not in holders
                    and e.original is None
                    and not _cites(e.text, source)
                    and not _positions(e.text) & back
                ]
                close = self._closest(text, added)
                if close is not None and not self._would_lose(close, text, switched=True):
                    _supersede(close, holders[0])
            return "duplicate"
        latest: _Entry | None = None
        if newer:
            # A later message, read before in this batch (a batch read again), changed what
            # this says: the entry it made outdates this statement, and what this statement
            # would have updated, as it did the first time.
            latest = next(
                (
                    e
                    for e in newer
                    if self._outdates(new, text, e, source) or supersedes(entry_frame(e.text), new)
                ),
                None,
            )
            if latest is None:
                # the older value, read again: no word of change is needed to see it is older
                link = self._value_link(text, newer, older=True)
                latest = link[0] if link is not None else None
            if latest is None:
                # nor to see that a later entry put someone in the place of one of its list
                # ("jake and ruby do the saturday shifts" after "jake and chloe do ...")
                latest = next((e for e in newer if _list_swapped(text, e.text)), None)
            if latest is None:
                # nor that a later list of people outdates a swap in it, read again ("ruby's
                # replaced chloe on saturdays" before "tom and ruby do the saturday shifts")
                latest = next((e for e in newer if _swap_outdated(text, e.text)), None)
            if latest is None:
                # nor that a later swap between the speaker and someone it names outdates it
                latest = next((e for e in newer if _traded(e.text, text)), None)
            if latest is None:
                # nor that a later update kept a part of it beside its own words ("Mateo moved
                # the merch off Printful. We sell aprons with Nonna's face on" of "we sell
                # aprons with Nonna's face on, through Printful, £28 each")
                latest = next((e for e in newer if _took_part(text, e.text)), None)
            if latest is None:
                # nor to see that a later entry switched away from the name it gives ("Bricks
                # come from Ibstock" after "we're switching to Northcot for the bricks")
                probe = [_Entry(path=INDEX, section=section, text=f"{text} {source}")]
                latest = next((e for e in newer if self._attribute_switch(e.text, probe)), None)
            if latest is None and not all(self._meanwhile(e, source) for e in newer):
                # Not held, though an entry near it was said after it: what the first reading
                # made of it was changed since in a way no rule above sees again (a learned
                # update, or an update of an update); it is not written back.
                self.outdated.append(_Entry(path=INDEX, section=section, text=f"{text} {source}"))
                return "outdated"
        if latest is not None:
            # (not what another clause of this very message said: said again, a message
            # does not outdate itself; nor what the user's message an assistant's "Noted:
            # ..." reads back said: "Mabel matched with Dennis Hale, visit 9 April" read
            # again after the visit moved does not take Mabel's placement with it)
            reads_back = self.replied_positions()
            before = [
                e
                for e in live
                if e not in newer
                and not _cites(e.text, source)
                and not _positions(e.text) & reads_back
            ]
            gone = [e for e in near if e in before and self._outdates(new, text, e, source)]
            if not gone and _cued(text, new):
                # as when it was first read, an update no rule connects goes to the
                # likeness ("alec dodds has sold up so we've gone with Jim Paterson")
                close = self._closest(text, before)
                gone = [close] if close is not None else []
            for e in gone:
                # (as when first read, not an entry about more than what changed)
                if not self._would_lose(e, text, switched=True):
                    _supersede(e, latest)
            self.outdated.append(_Entry(path=INDEX, section=section, text=f"{text} {source}"))
            return "outdated"
        if newer:
            # Said after it only in another conversation held at the same time, and no rule
            # links them: it stands beside them, and it updates none of them.
            near = [e for e in near if e not in newer]
            live = [e for e in live if e not in newer]
        if any(
            learned.update_chance(e.text, text) >= learned.OUTDATED_THRESHOLD
            for e in live
            if self._said_after(e) and not self._meanwhile(e, source)
        ):
            # A later message, read before in this batch (a batch read again), changed what
            # this says by the learned reading, itself or through a later update of what it
            # changed ("Mei's graduated early, so Daniel Osei is doing international students
            # stuff", then "Daniel Osei is interim International Students' Officer"): what it
            # replaced went when it was read.
            self.outdated.append(_Entry(path=INDEX, section=section, text=f"{text} {source}"))
            return "outdated"
        # What it may update: entries said before it (none near it was said after it: those
        # outdated it above). What it may repeat: any entry.
        older = live
        same = [e for e in near if self._outdates(new, text, e, source)]
        same = same or self._named_elsewhere(text, older, {id(e) for e in near})
        traded = [] if same else [e for e in older if _traded(text, e.text)]
        traded = [e for e in traded if not self._from_this_message(e)]
        if traded:
            # "me and rob swapped school runs, he does tuesdays now": what each of them did
            # before goes, what the entry says of others stays
            body = _untraded(traded[0].text, text)
            cited = self._citation(body, traded[0], source) if body != text else None
            traded[0].text = f"{body} {cited or source}"
            self.updated.append((traded[0], frozenset()))
            for other in traded[1:]:
                _supersede(other, traded[0])
            return "updated"
        switched = self._attribute_switch(text, same or older)
        if switched is not None and _SWITCHING_FOR.search(strip_source(text)):
            # "we're switching to Northcot for the bricks, their Staffordshire Blue" of "Bricks
            # come from Ibstock, their blue engineering brick": what the entry says of the old
            # name is not true of the new one; the statement takes its place.
            same = same or [switched[0]]
        elif switched is not None:
            # "we've switched feed to Baileys" of a list of suppliers: the one name changes.
            done = self._substitute(*switched, source, text)
            if done == "updated":
                self._add_the_rest(switched[0], text, switched[1].said, switched[2].said)
            if done != "nothing to change":
                return done
        listed = self._one_of_a_list(text, older)
        if listed is not None:
            # "chloe quit, ruby's doing her saturdays now" of "jake and chloe do the saturday
            # shifts": the one name changes, Jake's Saturdays stay.
            done = self._substitute(*listed, source, text)
            if done != "nothing to change":
                return done
        near_staying = [e for e in near if id(e) not in waiting]
        if not same and any(
            restates(new, f) and new.values <= f.values
            for f in (entry_frame(e.text) for e in near_staying)
        ):
            return "duplicate"  # said before in other words, with more detail
        if not same and any(says_no_more(text, e.text) for e in near_staying):
            return "duplicate"  # "weekday opening is still 7:30" after "we open at 7:30 ..."
        if not same:
            days_added = _added_days(text)
            linked = self._value_link(text, [e for e in older if not _adds_to(days_added, e.text)])
            if linked is not None and (
                self._thin(text, linked[0])
                or self._one_of_several(*linked[:2])
                or _SAME_REST.search(text)  # "only Wednesdays now. Same hours."
            ):
                done = self._substitute(*linked, source, text)
                if done != "nothing to change":
                    return done
                # The entry cannot cite this message: the statement replaces it whole, but
                # not an entry whose other values it would lose ("£18 for groups and £35 for
                # 1:1" - "£35 was wrong, the 1:1 rate is £38"): it is kept beside it.
                if self._one_of_several(*linked[:2]):
                    linked = None
            same = [linked[0]] if linked is not None else []
            if linked is not None:
                self.updated.append((linked[0], frozenset({linked[1].said.lower()})))
        if not same and _cued(text, new):
            days_added = _added_days(text)
            close = self._closest(text, [e for e in older if not _adds_to(days_added, e.text)])
            same = [close] if close is not None else []
        if not same:
            # what no rule connected, read by the learned model: the entry it most likely
            # changes, of those said before it that share a word with it
            same = self._learned_update(text, near)
        if (
            same
            and self.heard
            and _CONFIRMS.search(self.message)
            and all(
                _positions(e.text) & self.heard and _no_more(text, e.text, self._written(e))
                for e in same
            )
        ):
            # The assistant reads back what the user just said or changed, with no name or
            # value of its own and in fewer words ("Updated: late opening is now Thursday until
            # 9pm" after "we've moved the late night to Thursdays, ... same deal, adults only
            # till 9"): what the user said stands as they said it. (One that says more, "home
            # visits removed, housebound patients referred to ..." of "We'll refer those to
            # ...", or "Bongani Dube is the Eyewear Direct rep" of "our new rep is Bongani
            # Dube", takes its place.)
            return "duplicate"
        if same:
            # An entry that already says this, and more, stays as it is; the others go.
            holder = next((e for e in same if _holds(e.text, text)), None)
            if holder is not None:
                for other in same:
                    if other is not holder:
                        _supersede(other, holder)
                return "duplicate"
            if len(same) == 1 and self._written_in(text, same[0]):
                return "duplicate"
            if (
                self.heard
                and len(same) == 1
                and _positions(same[0].text) & self.heard
                and _values_held(text, same[0].text)
            ):
                # The assistant's "Signing moved to 15 March." of "signing with Priya Desai on
                # Saturday 15 March, 12 till 3", just written: the entry says it, and more
                return "duplicate"
            one = self._value_link(text, same[:1]) if len(same) == 1 else None
            if one is not None and (self._one_of_several(*one[:2]) or _SAME_REST.search(text)):
                # "the initial assessment goes to £60" of "initial assessment £55, follow-up
                # £48": the one price is written in, the other stays.
                done = self._substitute(*one, source, text)
                if done != "nothing to change":
                    return done
            swapped = _swap_in(same[0].text, text) if len(same) == 1 else None
            if swapped is not None:
                cited = self._citation(swapped, same[0], source)
                same[0].text = f"{swapped} {cited or source}"
                self.updated.append((same[0], frozenset()))
                return "updated"
            lost = read_slot(same[0].text).names - read_slot(text).names
            body = self._keep_rest(same[0], new, text)
            # An update that does not put one thing in the place of another ("Megan's C permit
            # came through" of "Megan Shaw (T permit), Ravi Mistry (T permit), ...") keeps what
            # the entry says of others; where it would lose names or values it does not touch,
            # it writes its one value in, or stands beside the entry.
            message = self.message or text
            # (not of an entry the message ends: "scrapped SUP yoga, only ever got 2 people")
            ends = len(same) > 1 or self._ending(same[0])
            unsaid = set() if ends else _unsaid(same[0].text, body, message)
            if unsaid:
                rest = _untouched_parts(same[0].text, new, text, message, unsaid)
                if rest:
                    body = f"{_closed(body)} {rest}"
                    unsaid = _unsaid(same[0].text, body, message)
            if len(unsaid) > 1:
                link = self._value_link(text, same[:1]) or _one_for_one(text, same[0])
                done = self._substitute(*link, source, text) if link else "nothing to change"
                if done != "nothing to change":
                    return done
            if len(unsaid) < 2 or _PUT_IN_PLACE.search(message) or _switches(text, same[0].text):
                # (a switch: what it replaces goes, what it leaves stays)
                # (what it keeps of the entry was said where the entry was: cited too)
                cited = self._citation(body, same[0], source) if body != text else None
                same[0].text = f"{_said_by(body, same[0].text)} {cited or source}"
                self.updated.append((same[0], lost))
                for other in same[1:]:
                    if not self._would_lose(other, body):
                        _supersede(other, same[0])
                fuller = self._read_back_fuller(text, [e for e in live if e is not same[0]])
                if fuller is not None:  # "kit is now ordered from Owayo at £29" of "Owayo's £29"
                    _supersede(fuller, same[0])
                return "updated"
        entry = _Entry(
            path=INDEX, section=section, text=f"{text} {source}", order=len(self.entries)
        )
        self.entries.append(entry)
        self.added.append(entry)
        fuller = self._read_back_fuller(text, live)
        if fuller is not None:
            # "Noted: membership is $90 a year, visitors $5 a session with loan boules." of
            # "membership is $90 a year, visitors pay $5 a session": one fact, not two
            _supersede(fuller, entry)
        return "added"

    def _learned_update(self, text: str, near: list[_Entry]) -> list[_Entry]:
        """The one entry of ``near`` (not of this message) that ``text`` most likely changes,
        by :func:`.learned.update_chance`, at :data:`.learned.UPDATE_THRESHOLD` or above
        ("Chloe's placement extended to 29 May" of "... Chloe, 3rd year from UWE, with them
        till 15 May"); else none, and none where the rules say otherwise."""
        scored = [
            (learned.update_chance(text, e.text), e) for e in near if not self._from_this_message(e)
        ]
        best = max(scored, key=lambda pair: pair[0], default=None)
        if best is None or best[0] < learned.UPDATE_THRESHOLD:
            return []
        # The rules have the last word: what takes the place of something this message ended
        # is theirs to place ("Ruth Obi's gone, the new estates manager is Tom Hale"), and an
        # entry that never said what the statement says it replaced is not what it replaced
        # ("Porto Tonic, with white port instead of gin" of "Ines makes the cocktails").
        if self.retiring or not names_what_it_replaced(text, best[1].text):
            return []
        return [best[1]]

    def _read_back_fuller(self, text: str, live: list[_Entry]) -> _Entry | None:
        """The one entry of the users' messages that ``text``, of an assistant's reply that
        says it has taken note, reads back in other words (:attr:`read_back_in`): the two give
        the same names and values, and the reply adds at most two words of its own ("with loan
        boules", "ship by"). None otherwise."""
        back = self.replied_positions()
        mine = read_slot(text)
        if not back or not mine.names | mine.values:
            return None
        words = _telling_stems(text)
        found = [
            e
            for e in live
            if _positions(e.text)
            and _positions(e.text) <= back
            and _gives_all(e.text, set(mine.names), mine.values)
            and _gives_all(text, set((theirs := read_slot(e.text)).names), theirs.values)
            and len(words - _stems(e.text)) <= 2
        ]
        return found[0] if len(found) == 1 else None

    def _written(self, e: _Entry) -> str:
        """The user's message the assistant answers, when it wrote into ``e`` (an older entry
        that now says its value and cites it) rather than being ``e`` in its own words; else
        ""."""
        if not _positions(e.text) & self.replying_to:
            return ""
        said = set(meaning(self.replied).split())
        return self.replied if not set(meaning(e.text).split()) <= said else ""

    def _made_from(self, text: str, source: str) -> list[_Entry]:
        """The entries memory held before this batch, as it held them, that cite ``source``,
        the message being read, first and nothing outside it, and give a value ``text`` gives
        (or, with none, every name it gives): a run before read this message and wrote them (an
        update written into an older entry's words, "commission pricing is $110 per square
        foot" of "bumping commissions to $110 a square foot from the 1st"; a switch of
        supplier, "moved the bottles over to Ambrose Packaging in Norwich"), so it is said
        already; read again, it changes nothing."""
        mine = read_slot(text)
        if not mine.names | mine.values:
            return []
        (sid, start, end), *_ = parse_sources(source)

        def within(cited: tuple[str, int, int]) -> bool:  # (a part of the message read)
            return cited[0] == sid and start <= cited[1] and cited[2] <= end

        # (or only the reply that read it back, which took its place: "Noted: no more
        # Hereford days; those clients are passed to Tom Faulkner" of "passed them on to Tom
        # Faulkner, EDT in Leominster")
        replies = {self.read_back_in.get((sid, p)) for p in range(start, end)} - {None}
        held = [e for e in self.live() if e.text == e.original]  # not changed by this batch
        read_back = [
            e
            for e in held
            if (cites := parse_sources(e.text))
            and all((c, a) in replies and b == a + 1 for c, a, b in cites)
            and ((slot := read_slot(e.text)).names | slot.values) & (mine.names | mine.values)
        ]
        if read_back:
            return read_back
        # (or a range that ends with it: an entry this message changed, "Shop is open Tuesday,
        # Thursday, Friday, 7.30 to 5" of "Only Tuesday, Thursday, Friday until 5" after "Shop
        # is open Tuesday until Saturday, 7.30 to 5")
        made = [
            e
            for e in held
            if (cites := parse_sources(e.text))
            and cites[0][0] == sid
            and cites[0][1] <= start
            and cites[0][2] == end
            and all(within(c) or c == cites[0] for c in cites)
        ]
        if mine.values:
            return [e for e in made if read_slot(e.text).values & mine.values]
        return [e for e in made if _gives_all(e.text, set(mine.names), mine.values)]

    def replied_positions(self) -> frozenset[tuple[str, int]]:
        """The users' messages the message being read reads back, when it is an assistant's
        reply that says it has taken note (:attr:`read_back_in`); empty otherwise."""
        return frozenset(m for m, reply in self.read_back_in.items() if reply in self.reading)

    def _reads_back_an_ending(self, text: str) -> bool:
        """Whether ``text``, in an assistant's reply that says it has taken note, only says
        that something ended (the ending closes it: not "waiting list closed, reopening on 1
        January"), which the user's message just before said ended ("Noted: the Sunday class
        has stopped." after "no more Sunday classes"): the user's ending, and the entry it
        removed, are what it reads back, not a fact of its own. Read from the two messages
        alone, not from what memory held, so that reading them again changes nothing."""
        if not (self.replying_to and _CONFIRMS.search(self.message)):
            return False
        ends = [m.end() for m in (*_ENDS.finditer(text), *_ENDED_REPLY.finditer(text))]
        if not ends or not _CLOSES.match(text[max(ends) :]):
            return False
        if not (_ENDS.search(self.replied) or _ENDED_REPLY.search(self.replied)):
            return False
        return bool(keys(text) & keys(self.replied))

    def _read_back(self, text: str, live: list[_Entry]) -> list[_Entry]:
        """The entries of the user's message just before that an assistant's ``text`` reads
        back in other words ("Yaw helps on Saturdays, noted." after "my brother Yaw helps on
        saturdays now"): each gives every name, value and capitalised word it gives, and all
        but one of its other words ("the webhook needs the raw body" after "we chose Stripe"
        says more). They hold what it says; none when it gives no name or value. A reply
        that joins what two entries say ("Joe covers from 1 September" after "Priya's leave
        starts 1 September. Joe is covering."), in one part, says something of its own."""
        if not self.replying_to:
            return []
        before = self.replying_to
        said = [e for e in live if _positions(e.text) & before and _positions(e.text) <= before]
        # "Noted: Callum on a two-on, two-off rota": a reply that says it is reading back gives
        # the user's facts in its own words; each name and value it gives is theirs.
        replied = _stems(self.replied) if _CONFIRMS.search(self.message) else None

        def reads_back(part: str) -> list[_Entry]:
            found = _reads_back(part, said)
            if found or replied is None:
                return found
            return _given_back(part, said, replied, self.people)

        whole = reads_back(text)
        if whole or not said:
            return whole
        # A list of such read-backs ("Sale 6 May, viewing 3 to 5 May"): each part its own.
        parts = [p for p in re.split(r"[,;]\s+", _body(text)) if p.strip()]
        held = [reads_back(p) for p in parts]
        return (
            []
            if len(parts) < 2 or not all(held)
            else list({id(e): e for h in held for e in h}.values())
        )

    def _keep_rest(self, e: _Entry, new: Frame, text: str) -> str:
        """What an entry that ``text`` updates says after the update: ``text``, and the
        entry's other sentences when only some of them are outdated ("Celeste's editor is
        Philippa Grange. The manuscript is due to her on 1 November." keeps the editor)."""
        said = [s for _, _, s in sentences(_body(e.text))]
        # (a part naming someone the message says went goes too: "My staff is Callum" of
        # "Callum Fraser left to go to university")
        went = [p for _, _, p in sentences(self.message) if _changes_who(p)]
        gone = {
            n
            for n in self._named_as_gone(e) - read_slot(text).names
            if any(_names_any(p, frozenset({n})) for p in went)
        }
        if len(said) < 2:
            # one sentence: only the part of it the update outdates ("Mia has a peanut
            # allergy, rob does the school run on tuesdays" keeps the allergy)
            return _in_place(_named_by(e.text), said, new, text, gone, self._ending(e))
        outdated = [
            s
            for s in said
            if (supersedes(new, entry_frame(s)) or refills(text, s, told=True))
            and not (s is not said[0] and _why_then(s, text))
        ]
        if len(outdated) == len(said):
            # every sentence, but only some by what they are about: those ("Every Friday at 4pm
            # we have the deploy review meeting ... Also prod deploys go through Argo CD" of "We
            # scrapped the Friday deploy review" keeps Argo CD)
            outdated = [s for s in said if supersedes(new, entry_frame(s))] or outdated
        if not outdated:
            # no rule says which: the sentences naming what the message named and the update
            # does not ("Metallum have gone into administration. We're buying from Brock Metal
            # now" of "bell metal is 77/23. ingot comes from Metallum")
            gone = self._named_as_gone(e) - read_slot(text).names
            outdated = [
                s
                for s in said
                if read_slot(s).names & gone and not (s is not said[0] and _why_then(s, text))
            ]
        if not outdated:
            # nor that: the one sentence holding another value of a kind the update gives
            # ("lead time is 3 weeks" of "... lead time is 3 weeks. lesson: caps are a separate
            # order with them", updated to 5 weeks)
            given = {(m.kind, m.value) for m in measures(text)}
            kinds = {k for k, _ in given}
            valued = [
                s
                for s in said
                if any(m.kind in kinds and (m.kind, m.value) not in given for m in measures(s))
            ]
            outdated = valued if len(valued) == 1 else []
        if not outdated:
            # nor that: the sentences that share a word with the update, where others share
            # none ("Target race is Tata Mumbai Marathon on 18th January. I run at 5:30 am at
            # Marine Drive." of "I am running at Priyadarshini Park instead, Marine Drive is too
            # crowded now" keeps the race); a speaker's name, which the entry's third person
            # gives, is no such word ("Sam is entering onions. They water from the butt" of
            # "Sam waters from the standpipe")
            words = _telling_stems(text) - {root(p) for p in self.people}
            shared = [len(_stems(s) & words) for s in said]
            outdated = [s for s, n in zip(said, shared, strict=True) if n]
            if len(outdated) == len(said):
                # all of them: the one sharing twice as many as any other, if one does
                most = max(shared)
                alone = most >= 2 and sorted(shared)[-2] * 2 <= most
                outdated = [said[shared.index(most)]] if alone else []
        if not outdated:
            # the whole entry is replaced, but for why its value changed ("Northern Sawmill put
            # their prices up 40%"): read again, that would stand alone
            why = [s.rstrip() for s in said[1:] if _why_then(s, text)]
            return " ".join([_closed(text), *why]) if why else text
        if len(outdated) == len(said):
            return text
        kept = [s.rstrip() for s in said if s not in outdated and not _holds(text, s)]
        at = said.index(outdated[0])
        # (the one sentence outdated, only the part of it the update outdates)
        body = text if at == 0 else _body(text)
        named = _named_by(e.text) if at == 0 else ""
        put = _in_place(named, outdated[:1], new, body, gone, self._ending(e))
        kept.insert(min(at, len(kept)), (put if len(outdated) == 1 else text).rstrip())
        return " ".join(k if k.endswith((".", "!", "?")) else f"{k}." for k in kept)

    def _would_lose(self, e: _Entry, said: str, switched: bool = False) -> bool:
        """Whether entry ``e``, outdated by a statement that says ``said``, would take with it
        two or more names or values that neither ``said`` nor its message touch (:func:`_unsaid`:
        "Sunday School is at 9:45, morning worship at 11" of "small groups in homes on Sunday
        evenings instead"): it is about more than what changed, and stays. Not what a
        retirement took, nor, with ``switched`` (a statement said again), what a switch the
        message says replaces or what this batch wrote again: it outdates what it replaced whole
        when first read."""
        if any(x is e for x, _ in self.retiring):
            return False
        if switched and (e.original is None or _PUT_IN_PLACE.search(self.message or said)):
            return False  # (an older statement this batch gave again went when first read)
        return len(_unsaid(e.text, _body(said), self.message or said)) > 1

    def _ending(self, e: _Entry) -> bool:
        """Whether this message ended what entry ``e`` is about: a retirement took it ("quiz
        league folded"), or the message says that something ended and names it with words of
        the entry ("I'm done with the broadcast masts"; not "cut the programme to 32 shorts"
        of "40 short films": what is cut is the programme)."""
        if any(x is e for x, _ in self.retiring):
            return True
        held = _stems(e.text) - _STOP_STEMS
        for m in _ENDS.finditer(self.message):
            after = re.split(
                r"[,.;:!?]|\b(?:to|for|from|at|in|on|by|because|so)\b",
                self.message[m.end() :],
                maxsplit=1,
            )[0]
            if {root(w.lower()) for w in _content(after)} & held:
                return True
        return False

    def _named_as_gone(self, e: _Entry) -> set[str]:
        """The names of entry ``e`` that the message names (:attr:`context`), or, in a reply
        that reads back, the user's message it replies to names; but for those it says stay
        ("Pete still signs off")."""
        said, names = self.message, set(self.context)
        if self.replied and self.replied_positions():
            said = self.replied
            names = {n for n in read_slot(e.text).names if _names_any(said, frozenset({n}))}
        return {n for n in names if not _said_to_stay_by_name(said, n)}

    def _value_link(
        self, text: str, live: list[_Entry], older: bool = False
    ) -> tuple[_Entry, Measure, Measure] | None:
        """The one entry whose value ``text``, said as an update or a correction, replaces:
        ``(entry, old value, new value)``, or None. The entry holds one value of a kind
        (:func:`.slots.measures`: money, a percentage, a date, a time, a length of time, a
        weekday) that the statement does not, and the statement one of that kind that the entry
        does not; what the entry is about is what the two share: a word that is not generic
        (the statement's or its message's: "deadline", "deposit"), or the message names the old
        value ("£58 was last year", "6 was killing me"), or the statement leans on the message
        just before it ("it's $4,200 now"). Owners that are other people do not meet; an entry
        this message made is not replaced by it. More than one such entry: none (ambiguous).
        With ``older``, ``live`` holds entries said after ``text`` (a batch read again), and
        ``text`` needs no word of update."""
        given = tuple(m for m in measures(text) if not _denied(text, m))
        # "battery now 65": a number alone may be the new price of an entry that has one.
        bare = tuple(m for m in _bare_numbers(text) if not _denied(text, m))
        # "the 6th" is the day of "October 6": one date, not another.
        message = self.message or text
        said, whole = without_work_done(text), without_work_done(message)
        updating = older or bool(_UPDATE.search(said) or resets(text) or _GOING_TO.search(text))
        if not (given or bare) or not (updating or _UPDATE.search(whole)):
            return None
        mine = read_slot(text)
        words = (mine.words | read_slot(message).words) - _LOOSE
        leaning = bool(_LEANS.match(_body(text)) or _PRONOUN_VALUE.search(text))
        # The old value is named by the message, or by the assistant's message it denies
        # ("... your £60 callout" - "its 75 now not 60"; "... check-in is from 4pm" - "No,
        # it's 3pm now").
        denied = self.answering if leaning or _DENIAL.match(message) else ""
        named = {m.value for m in measures(f"{message}\n{denied}")}
        named |= set(re.findall(r"\b\d+\b", f"{message}\n{denied}"))
        named |= set(_VALUE.findall(f"{message}\n{denied}"))
        found: list[tuple[_Entry, Measure, Measure]] = []
        shares: list[int] = []  # per entry found: how many words it shares with the statement
        for e in live:
            if self._from_this_message(e) and not _CORRECTS.search(text):
                continue  # (unless the clause corrects it: "hang on ..., it's Thursdays")
            if _other_group(text, e.text):
                continue  # "gents cuts r £25 now" of "£48 ladies cut"
            held = measures(e.text)
            slot = read_slot(e.text)
            about = _names_owner(text, slot) or _priced_of(mine, slot)
            if (
                mine.owner
                and slot.owner
                and mine.owner != slot.owner
                and not about
                and "i"
                not in (
                    mine.owner,
                    slot.owner,
                )
            ):
                continue
            # In the order the statement says them, so that the first kind that links is the
            # same in every process (a set's order changes with the hash seed).
            if any(m.kind == "time" for m in given) and not any(m.kind == "hours" for m in given):
                # "lanes now start at 6:30" of "lane swimming is 6 to 8 am": a time of the hours
                held = tuple(replace(m, kind="time") if m.kind == "hours" else m for m in held)
            kinds = {m.kind for m in held}
            priced = "money" in kinds and not any(m.kind == "money" for m in given)
            offered = (*given, *bare) if priced else given
            for kind in dict.fromkeys(m.kind for m in offered if m.kind in kinds):
                theirs = {m.value for m in held if m.kind == kind}
                # "26 mar" holds "26"; "first sun" holds "sun"
                theirs |= {v.split(" ")[0] for v in theirs} | {v.split(" ")[-1] for v in theirs}
                ours = {m.value for m in offered if m.kind == kind}
                news = [m for m in offered if m.kind == kind and m.value not in theirs]
                olds = [
                    m for m in held if m.kind == kind and m.value not in {n.value for n in news}
                ]
                if any(m.value in ours for m in olds) and not updating:
                    continue  # the old value said again beside another: no update
                if len({m.value for m in news}) > 1:
                    # "50 balls £5, 100 balls £8.50" of "50 balls £4, 100 balls £7": each new
                    # value in place of the old one said with the same words, or none
                    paired = _paired(text, news, e.text, olds)
                    if paired:
                        found.append((e, *paired[0]))
                        shares.append(len(_shared(words, mine, slot)))
                        break
                if len({m.value for m in news}) != 1:
                    continue
                common = _shared(words, mine, slot)
                if len({m.value for m in olds}) > 1:
                    # (not one the update or its message says stays: "the 3-game deal stays
                    # at £20"; "... £50 from July. Weekly stays £250")
                    staying = {m.value for m in offered if _said_to_stay(text, m.said)}
                    staying |= {m.value for m in olds if _said_to_stay(message, m.said)}
                    olds = [m for m in olds if m.value not in staying] or olds
                if len({m.value for m in olds}) > 1:
                    # "bars £5.50, guest soaps £2, shampoo bars £7" - "Bars are £6 each": the
                    # value said after the words the new one is said after; else, "call out is
                    # £65 first hour then £45 an hour after": the value next to the words the
                    # update shares with the entry ("put the call out up to £75"), those of
                    # the statement itself first.
                    near = _labelled_alike(text, news[0], e.text, olds)
                    near = near or _nearest(e.text, olds, frozenset(mine.words & slot.words))
                    near = near or _nearest(e.text, olds, common)
                    olds = [near] if near is not None else olds
                if len({m.value for m in olds}) != 1:
                    continue
                old = olds[0]
                told = old.value in named or old.value.split(" ")[0] in named
                shared = bool(common)
                if told or shared or about or (leaning and self._just_before(e)):
                    found.append((e, old, news[0]))
                    shares.append(len(common))
                    break
        if len(found) > 1 and shares.count(max(shares)) == 1:
            # "From May carpet fitting £7 per metre. Stairs same." of "Fitting price is £6 per
            # square metre, carpet" and "Stairs £10 per step": the entry sharing the most words
            return found[shares.index(max(shares))]
        if len({id(e) for e, _, _ in found}) > 1:
            # "Grade 1 goes to £375" of "Grade 1+ (8+ straight grains) - £420", "Grade 1 -
            # £350" and "Grade 2 - £280": the entry whose old value is said with the words and
            # numbers the new one is said with. (Not of two entries that hold the same old
            # value, a statement and its read-back: which one goes is no clearer.)
            one_new = len({n.said for _, _, n in found}) == 1
            distinct = len({old.value for _, old, _ in found}) == len(found)
            at = _most_alike(
                _around(text, found[0][2].said) if one_new and distinct else set(),
                [_around(strip_source(e.text), old.said) for e, old, _ in found],
            )
            return None if at is None else found[at]
        return found[0] if found else None

    def _attribute_switch(
        self, text: str, older: list[_Entry]
    ) -> tuple[_Entry, Measure, Measure] | None:
        """ "we've switched feed to Baileys" of "feed from Dodson & Horrell, hay from the Pearce
        farm": the one older entry that names a value after the same word, and the two names;
        or None. The entry keeps what else it says."""
        body = strip_source(text)
        m = (
            _SWITCHED_TO.search(body)
            or _NO_LONGER_FROM.search(body)
            or _FROM_NOW.search(body)
            or _SWITCHING_FOR.search(body)
        )
        if m is None or m["attr"].lower() in lx.STOP_WORDS:
            return None
        # ("Bricks for the chamber come from Ibstock": what the thing is for may follow it)
        after = re.compile(
            rf"\b{re.escape(m['attr'])}\b(?:\s+for\s+(?:the\s+|our\s+)?[a-z]+)?"
            r"(?:\s+(?:is|are|was|come|comes|from|with|through|via|by|at|"
            rf"goes to)){{0,2}}[:\s]+(?P<old>{_CAPITALISED})",
            re.I,
        )
        said_old = m.groupdict().get("old")
        found = [
            (e, h["old"])
            for e in older
            if (h := after.search(strip_source(e.text)))
            and h["old"] != m["new"]
            and (said_old is None or h["old"].startswith(said_old))
        ]
        if len(found) != 1 or m["new"].casefold() in strip_source(found[0][0].text).casefold():
            return None
        e, was = found[0]
        # (and where it is, said with it: "over to Ambrose Packaging in Norwich")
        where = re.match(rf"\s+in\s+{_CAPITALISED}", body[m.end("new") :])
        now = m["new"] + (where.group(0) if where else "")
        return e, Measure("name", was, was), Measure("name", now, now)

    def _one_of_a_list(
        self, text: str, older: list[_Entry]
    ) -> tuple[_Entry, Measure, Measure] | None:
        """The one older entry in which ``text`` puts someone in the place of one person of a
        list ("chloe quit, ruby's doing her saturdays now" of "jake and chloe do the saturday
        shifts"; "Aisha left, Priya's taken over her weekends" of "Tom, Aisha and Ben are on
        the weekend rota"), with the two names; or None. The statement says that the one
        named went or was replaced (:func:`_changes_who`, "covering", "doing her ..."), and
        names the one who does it now as the subject of a clause (it or its message names
        the one who went); the others of the list stay."""
        body = _body(text)
        # (who went may be said in a clause before: "lee moved teams, so Omar is covering")
        said = f"{body}\n{self.message}"
        if not _says_swap(said):
            return None
        subjects = [m["new"] or m["it"] for m in _NEW_SUBJECT.finditer(body)]
        fresh = {
            w
            for w in subjects
            if w.lower() not in lx.STOP_WORDS | lx.PRONOUN_SUBJECTS and not is_verb(w)
        }
        found: list[tuple[_Entry, Measure, Measure]] = []
        for e in older:
            if self._from_this_message(e) or self._said_after(e):
                continue
            entry = strip_source(e.text)
            members = _listed(e.text)
            gone = [w for w in members if _names_any(said, frozenset({w.lower()}))]
            new = [w for w in fresh if not _names_any(entry, frozenset({w.lower()}))]
            if len(members) >= 2 and len(gone) == 1 and len(new) == 1:
                now = new[0][:1].upper() + new[0][1:] if gone[0][:1].isupper() else new[0]
                found.append((e, Measure("name", gone[0], gone[0]), Measure("name", now, now)))
        return found[0] if len(found) == 1 else None

    def _one_of_several(self, e: _Entry, old: Measure) -> bool:
        """Whether entry ``e`` holds other values of ``old``'s kind beside it ("initial
        assessment £55, follow-up £48") and the message gives one value of that kind: the
        update of one is written into the entry, which keeps the others, and so are several
        prices each said with the words of the one it replaces (a message that gives several
        otherwise, "moved the fair to 9 May ... Setup 7 to 8 May", replaces the entry)."""
        others = any(m.kind == old.kind and m.value != old.value for m in measures(e.text))
        # (the old value named as wrong is not given: "£35 was wrong, the 1:1 rate is £38";
        # nor one said to stay: "... £50 from July. Weekly stays £250")
        said = self.message
        given = {
            m.value
            for m in measures(said)
            if m.kind == old.kind and not _said_to_stay(said, m.said)
        } - {old.value}
        # (several prices, each said with the words of its own old price, are written in
        # alike, :func:`_also_changed`: "sourdough £4.80, baguette £2.40 now" of "sourdough
        # £4.50, rye £4, baguette £2.20"; dates are not: a plan moved, its setup with it, is
        # said anew)
        news = [m for m in measures(said) if m.kind == old.kind]
        pairs = _paired(said, news, e.text, measures(e.text)) if old.kind == "money" else []
        paired = len(pairs) == len({m.value for m in news}) > 1
        return others and (len(given) == 1 or paired)

    def _written_in(self, text: str, e: _Entry) -> bool:
        """Whether this message already wrote ``text``'s value into entry ``e`` beside others
        of its kind (:meth:`_one_of_several`; a batch read again): ``e`` cites this message
        and holds a value ``text`` gives with another of that kind."""
        if not self._from_this_message(e):
            return False
        held = measures(e.text)
        return any(
            m.kind == g.kind
            and m.value == g.value
            and any(o.kind == g.kind and o.value != g.value for o in held)
            for g in measures(text)
            for m in held
        )

    def _just_before(self, e: _Entry) -> bool:
        """Whether ``e`` came from one of the two messages before the one being read."""
        start = min((p for _, p in self.reading), default=-1)
        return any(
            (conv, p) in {(c, start - 1) for c, _ in self.reading}
            or (conv, p) in {(c, start - 2) for c, _ in self.reading}
            for conv, a, b in parse_sources(e.text)
            for p in range(a, b)
        )

    def _thin(self, text: str, e: _Entry) -> bool:
        """Whether ``text`` says nothing of its own beside the new value: it leans on what came
        before ("it's $4,200 now") or its words are the entry's."""
        mine, theirs = read_slot(text), read_slot(e.text)
        leans = _LEANS.match(_body(text)) or _PRONOUN_VALUE.search(text)
        # "Greta's class moved to Thursday" of "the pottery class is on Wednesday with Greta":
        # said of the person the entry names, whose value alone changed.
        # (a word of a name the entry gives is the entry's: "albert's down to 3 calls now" of
        # "Albert Fenn, 88, dementia, 4 calls a day")
        named = {root(w) for n in theirs.names for w in n.split()}
        own = mine.words - theirs.words - named - _LOOSE
        return bool(leans) or _names_owner(text, theirs) or _priced_of(mine, theirs) or not own

    def _substitute(
        self, e: _Entry, old: Measure, new: Measure, source: str, text: str = ""
    ) -> str:
        """Write ``new`` where ``e`` says ``old`` ("labour rate is £58 an hour" -> "... £64 an
        hour"), and each other value ``text`` changes in it (:func:`_also_changed`: "now at
        3pm, 8 people" of "at 2pm, 6 people maximum"), citing the messages of both; an entry
        that then says what another says goes."""
        body = strip_source(e.text)
        if _find(body, old.said) < 0:
            return "nothing to change"
        if new.said.isdigit():  # "its 75 now" of "£60", "65" of "59 pound": the old unit
            new = replace(new, said=re.sub(r"\d+(?:[.,]\d+)*", new.said, old.said, count=1))
        # "£9.50 from 1 April": the day the new value holds from goes with it, at the end of
        # the words said with it ("£9.50 a head from 1 April, 3 games for £20")
        said_at = _find(text, new.said) if text else -1
        since = _HOLDS_FROM.match(text[said_at + len(new.said) :]) if said_at >= 0 else None
        dated = any(m.kind == "date" for m in measures(body))
        for was, now in [(old, new), *_also_changed(text, body, old.kind)]:
            at = _find(body, was.said)
            if at >= 0:
                body = body[:at] + now.said + body[at + len(was.said) :]
        at = _find(body, new.said)
        if since and new.kind != "date" and not dated and at >= 0:
            end = at + len(new.said)
            rest = _PART.search(body, end)
            cut = rest.start() if rest else len(body.rstrip(" .!"))
            body = f"{body[:cut]} {since.group(1)}{body[cut:]}"
        cited = self._citation(body, e, source)
        if cited is None:
            return "nothing to change"
        e.text = f"{body} {cited}"
        said = meaning(e.text)
        twin = next((o for o in self.live() if o is not e and meaning(o.text) == said), None)
        if twin is not None:
            _supersede(e, twin)
            return "duplicate"
        self.updated.append((e, frozenset({old.said.lower()})))
        return "updated"

    def _add_the_rest(self, e: _Entry, text: str, was: str, said: str) -> None:
        """Add to ``e``, into which :meth:`_substitute` wrote name ``said`` in place of ``was``,
        the sentences of statement ``text`` that name neither: a lesson joined to the switch
        ("moved the bottles over to Ambrose Packaging ... lesson learned - ... only order
        bottles that ship in honeycomb dividers") is not lost with the words the switch
        replaced. (One that names the old name says why it went: "fell out with ECP".)"""
        initials = "".join(w[0] for w in was.split()).casefold()  # "ECP"
        rest = [
            _closed(p[:1].upper() + p[1:])
            for _, _, p in sentences(strip_source(text))
            if said.casefold() not in p.casefold()
            and not (len(initials) > 1 and initials in re.findall(r"[\w'-]+", p.casefold()))
            and not _names_any(p, frozenset({was.casefold()}))
            and len(_content(p)) >= 3
        ]
        if rest:
            cited = " ".join(m.group(0) for m in SOURCE_PATTERN.finditer(e.text))
            e.text = f"{strip_source(e.text)} {' '.join(rest)} {cited}"

    def _citation(self, body: str, e: _Entry, source: str) -> str | None:
        """The source of ``body``, ``e`` rewritten by the message ``source`` cites: what this
        batch read (the runner's rule), the new message widened to the old one when both are
        of one conversation ("...#0-3"); else the new message alone, which must then say what
        the entry is about. None when no message of the batch says it."""
        conv, start, end = parse_sources(source)[0]
        same = [(a, b) for c, a, b in parse_sources(e.text) if c == conv]
        if same:
            start, end = min([start, *(a for a, _ in same)]), max([end, *(b for _, b in same)])
        elif not said_words(body) & said_words(f"{self.message}\n{self.answering}"):
            return None  # the messages must say what the entry is about
        if not self._says(body, format_source(conv, start, end)):
            # "Sorry, it's £64 now" leans on the message before it, by the same speaker.
            start = min([start, *(p for c, p in self.reading if c == conv)])
            if self.answering and not self._says(body, format_source(conv, start, end)):
                start -= 1  # "no its 3.20 now" leans on the assistant's message before it
            if not self._says(body, format_source(conv, start, end)):
                return None
        return format_source(conv, start, end)

    def value_fix(self, clause: str, source: str) -> str | None:
        """A clause not kept on its own ("sorry thats wrong, £58 was last year, its £64 now")
        that corrects one value of an entry: the entry now says the new value."""
        if _SHARE_OF.search(clause):
            return None  # "3 tabs done out of 11": how far a piece of work got, no value
        linked = self._value_link(clause, self.older())
        if linked is not None:
            if self._fixed_already(clause, linked[0], linked[2]):
                return "duplicate"
            return self._substitute(*linked, source, clause)
        return self._name_fix(clause, source) or self._own_name_fix(clause, source)

    def _fixed_already(self, clause: str, e: _Entry, new: Measure) -> bool:
        """Whether another entry than ``e`` gives value ``new`` of ``clause`` beside a word of
        what the clause is about: the correction, read again, was written already ("the
        diabetes recall to every 4 months" of "diabetes clients every 4 months", not of "SMS
        from Cliniko 2 days before")."""
        words = {w.lower() for w in _content(clause)} - {w.lower() for w in new.said.split()}
        return any(
            o is not e
            and any(m.kind == new.kind and m.value == new.value for m in measures(o.text))
            and words & {w.lower() for w in _content(_body(o.text))}
            for o in self.live()
        )

    def _name_fix(self, clause: str, source: str) -> str | None:
        """A correction of a name, in a clause not kept on its own ("sorry, my mistake, the
        Okafors are in Didsbury, not Chorlton", "I correct myself, not Wix, it is Webflow"):
        the one entry that names the old name, and not the new one, now says the new one. The
        clause must say it corrects something (:data:`_CORRECTING`); a preference said the
        same way ("I like Rioja, not Merlot") corrects nothing."""
        m = _NAME_CORRECTED.search(clause)
        if m is None or not _CORRECTING.search(clause):
            return None
        old, new = m["old"] or m["old2"], m["new"] or m["new2"]
        word = re.compile(rf"(?<![\w-]){re.escape(old)}(?![\w-])")
        holders = [
            e
            for e in self.older()
            if word.search(strip_source(e.text)) and not self._from_this_message(e)
        ]
        if len(holders) != 1 or new.casefold() in strip_source(holders[0].text).casefold():
            return None
        body = strip_source(holders[0].text)
        at = word.search(body)
        if at is None or body.find(old) != at.start():
            return None  # a longer word holds it first ("Hovenden" before "Hove")
        named = (Measure("name", old, old), Measure("name", new, new))
        return self._substitute(holders[0], *named, source)

    def _own_name_fix(self, clause: str, source: str) -> str | None:
        """A correction of the statement just before by the name alone, in a message that says
        it corrects something ("och sorry, wrong, we moved to Dengie last year" after "hard
        feed is Spillers"): the one entry of that statement with a name the clause does not
        say, while the clause says one it does not, now says the clause's name."""
        if not _CORRECTING.search(self.message):
            return None
        mine = read_slot(clause).names
        found: list[tuple[_Entry, str, str]] = []
        for e in self.older():
            if self._from_this_message(e) or not self._just_before(e):
                continue
            theirs = read_slot(e.text).names
            olds, news = theirs - mine, mine - theirs
            if len(olds) == 1 and len(news) == 1:
                found.append((e, min(olds), min(news)))
        if len(found) != 1:
            return None
        e, old, new = found[0]
        body = strip_source(e.text)
        at, to = body.lower().find(old), clause.lower().find(new)
        if at < 0 or to < 0:
            return None
        was, now = body[at : at + len(old)], clause[to : to + len(new)]
        return self._substitute(e, Measure("name", was, was), Measure("name", now, now), source)

    def _closest(self, text: str, live: list[_Entry], thing: str = "") -> _Entry | None:
        """The entry an update that no rule connected to one most likely replaces, by the
        :attr:`likeness` (:mod:`.likeness`): the closest, at least its ``bars.value``, of a
        compatible owner, holding a value the update does not and lacking one it holds, of a
        kind they share (a name, a time, an amount: :func:`_another_value`), not about another
        person or thing (:func:`.slots.said_of_others`, :func:`_other_subjects`), and not said
        in this message. A statement that says something ended ("we no longer do house
        calls") needs no value of its own, but a closer entry: ``bars.ended``. An entry that
        names what the statement names, and at most one other thing, needs neither:
        ``bars.named`` ("Giulia went back to Italy" after "Marco's assistant is Giulia"), and
        so does an entry that names the ``thing`` a retirement ends, or a word of it ("we
        stopped doing deliveries" and "we deliver through Deliveroo"). An entry that says who
        a person the update names is ("Helen is my supervisor") is not outdated by news of them
        ("Helen got me an extension ..., it's now the 30th") unless it says that changed
        (:func:`_changes_who`). Of the entries that clear their bar, the closest."""
        bars = self.likeness.bars
        new = read_slot(text)
        ends = bool(_ENDS.search(text))
        retiring = {id(e) for e, _ in self.retiring}
        candidates: list[tuple[_Entry, float]] = []
        for e in live:
            if self._from_this_message(e) or id(e) in retiring:
                continue  # a retired entry goes at the end of the message, whatever says it
            if self._said_after(e):
                continue  # said after this message (a batch read again): not outdated by it
            if not names_what_it_replaced(text, e.text):
                continue
            old = read_slot(e.text)
            people = {new.owner, old.owner}
            if new.owner and old.owner and len(people) > 1 and "i" not in people:
                continue  # two people's facts
            # The person both are said of is not a thing they share ("Audrey has never been
            # fishing", "Audrey loves cooking").
            shared = new.names & old.names - {said_of_both(new, old)}
            named = bool(shared) or _shares_a_word(thing, old)
            if named and _someone_else(new, old, shared):
                continue  # "Sam uses Evri now, no longer DPD" is not of "Dana's courier is DPD"
            if new.owner in shared and new.owner not in (old.owner, old.who):
                continue  # "Greta's day off is Friday now": hers, not the class Greta teaches
            both = new.names & old.names
            if both and _who_they_are(e.text, both) and not _changes_who(text):
                continue  # "Helen got me an extension" is news of her, not who she is now
            if named and len(old.names - new.names) <= 1:
                # Said of the thing the entry names: what changed may be its state, not its
                # value ("Giulia went back to Italy", "Yusuf moved CI off Travis"). An entry
                # naming several other things says more than that one ("2A is the Mensah
                # family, 2B is a student called Lukas" is not outdated by "Lukas moved out").
                candidates.append((e, bars.named))
            elif said_of_others(text, e.text):
                continue  # "Tom now has 3 kids" is not of "Lena looks after 12 hives"
            elif _other_subjects(new, old):
                continue  # "gents cuts £25 now" is not the price of "ladies cut n blow dry £48"
            elif ends or _another_value(new, old):
                candidates.append((e, bars.ended if ends else bars.value))
        if not candidates:
            return None
        scores = self.likeness.similarities(text, [e.text for e, _ in candidates])
        # The closest that clears its bar (the first of equals).
        cleared = [
            (s, -i)
            for i, (s, (_, bar)) in enumerate(zip(scores, candidates, strict=True))
            if s >= bar
        ]
        if not cleared:
            return None
        _, at = max(cleared)
        return candidates[-at][0]

    def _outdates(self, new: Frame, text: str, e: _Entry, source: str) -> bool:
        """Whether the statement ``text`` (frame ``new``) makes entry ``e`` outdated: by
        :func:`.changes.supersedes`, or, when the message names ``e``'s value, by giving its
        slot another value (:attr:`context`). An entry this very message made names its
        value because the message said it, not because it changed (an idle re-run). A day
        said to be added ("From May we open also Monday, 8 to 4") outdates no other day."""
        if _adds_to(_added_days(text), e.text):
            return False
        if (
            self._from_this_message(e)
            and _values_held(text, e.text)
            and not re.search(r"\binstead\b", text, re.I)
        ):
            # a clause after it that gives only values it holds, with more besides ("Harriers
            # moved track to Thursday 7pm. So Thursday is my speed day now"): what follows
            # from the change, not a change of it (but "..., so every other Friday off instead"
            # puts its value in the place of one the message said first)
            return False
        if supersedes(new, entry_frame(e.text)):
            return True
        if self._from_this_message(e) or not names_what_it_replaced(text, e.text):
            return False
        if _STANDING_IN.search(self.message):
            return False  # "Olu's off til june, Sam from Cambridge is covering e-bikes"
        if _later_conversation(source, e.text) and refills(text, e.text, later=True):
            return True  # "match fees £12" a week after "match fee is £10": no word of change
        if not self.context & read_slot(e.text).names:
            return False
        return refills(text, e.text, told=True) or self._named_instead(text, e)

    def _named_elsewhere(self, text: str, entries: list[_Entry], taken: set[int]) -> list[_Entry]:
        """The one entry of ``entries`` not in ``taken`` (the entries that share a word with
        ``text``, compared already) whose name the message says and that ``text`` replaces by
        :meth:`_named_instead` ("Mindbody got too dear, we're on Momoyoga now" of "our bookings
        go through Mindbody"), or none. Without a word of replacement, no entry is looked at."""
        if not _INSTEAD.search(text):
            return []
        named = [
            e
            for e in entries
            if id(e) not in taken
            and not self._from_this_message(e)
            and self.context & read_slot(e.text).names
            and self._named_instead(text, e)
        ]
        return named if len(named) == 1 else []

    def _named_instead(self, text: str, e: _Entry) -> bool:
        """Whether ``text`` puts a new name in the place of the one name entry ``e`` gives,
        which its message names ("Red Sea is too expensive now, I buy Tropic Marin instead"
        after "for marine tanks I use Red Sea Coral Pro salt"): a word of replacement, a name
        the entry lacks, and an owner the two share or that the message names."""
        if not _INSTEAD.search(text):
            return False
        mine, theirs = read_slot(text), read_slot(e.text)
        new, old = entry_frame(text), entry_frame(e.text)
        owners = set(new.owner) | set(old.owner)  # who the facts are of, not what they name
        fresh = mine.names - theirs.names
        # "Oli has taken over weekends": the one who took over is the new name, though the
        # statement is of them
        took_over = re.search(r"\b(?:took|taken|takes|taking) over\b", text, re.I)
        if len(theirs.names) != 1 or not (fresh - owners or (took_over and fresh)):
            return False
        # Whoever the entry is of, the message names them ("Pia took over billing from Ben"
        # of "Ben does the billing"), or the two are of one owner; else it is someone else's
        # fact ("Dana's courier is DPD" is not outdated by "I use Evri now, no longer DPD").
        said = self.message.lower()
        return _owners_meet(new, old) or all(w in said for w in old.owner)

    def _from_this_message(self, e: _Entry) -> bool:
        return any(
            (conv, p) in self.reading
            for conv, start, end in parse_sources(e.text)
            for p in range(start, end)
        )

    def _says(self, body: str, source: str) -> bool:
        """Whether the messages ``source`` cites say something of ``body`` (the runner's
        source rule, :meth:`.sources.BatchSources.says`). An entry rewritten from an older
        one cites only the message that changed it, which may share no word with what is
        left ("We stream on Disney+" once Netflix was cancelled)."""
        if self.sources is None:
            return True
        return all(self.sources.says(body, *cited) for cited in parse_sources(source))

    def begin_message(
        self,
        text: str,
        people: frozenset[str] = frozenset(),
        reading: frozenset[tuple[str, int]] = frozenset(),
        replying_to: frozenset[tuple[str, int]] = frozenset(),
        answering: str = "",
        replied: str = "",
        heard: frozenset[tuple[str, int]] = frozenset(),
    ) -> None:
        """Before a message is read: the names of entries it names (:attr:`context`). The
        people talking, and a name most entries hold, are who the talk is between, not the
        value of a slot: they make no context."""
        self.message = text
        self.replying_to = replying_to
        self.heard = heard
        self.replied = replied
        self.people = people
        self.answering = answering
        said = set(re.findall(r"[\w'+&.-]+", text.lower()))
        said |= {re.sub(r"'s$", "", w.strip(".'")) for w in said}  # "Nadia's moved" says Nadia
        # a later word of a longer name, said as a common word ("the hall was freezing" of
        # "Elm Street Community Hall"), does not name it; its first word does ("wella's gone")
        capital = {w.lower() for w in re.findall(r"(?<![\w'])(?-i:[A-Z0-9])[\w'+&.-]*", text)}
        capital |= {re.sub(r"'s$", "", w.strip(".'")) for w in capital}
        # A name said in part counts ("Philippa" for "Philippa Grange"). A set lookup per
        # entry: the cost grows with the memory only as a scan of cached readings does.
        self.reading = reading
        held = Counter(n for e in self.live() for n in read_slot(e.text).names)
        self.context = frozenset(
            n
            for n, count in held.items()
            if count <= 2
            and not set(n.split()) & people
            and any(
                len(w) > 2 and (w in capital or (w in said and w == n.split()[0]))
                for w in n.split()
            )
        )
        self.updated.clear()
        self.added.clear()

    def settle_message(self) -> None:
        """After a message: a statement of it that names the value an update of it replaced
        ("Sunniva moved to the biochem stream" beside "Callum is my partner now") says why the
        slot changed, and joins that update instead of standing alone beside it."""
        for target, lost in self.updated:
            if target.removed or not lost:
                continue
            for e in self.added:
                if e is target or e.removed or e.original is not None:
                    continue
                said = strip_source(e.text)
                if _names_any(said, lost) or _says_value(said, lost):
                    cited = [format_source(*s) for s in parse_sources(e.text)]
                    own = [format_source(*s) for s in parse_sources(target.text)]
                    sources = " ".join(dict.fromkeys([*own, *cited]))
                    body = SPEAKER_NAMED.sub("", said)  # the speaker is named once
                    target.text = f"{strip_source(target.text)} {body} {sources}"
                    _supersede(e, target)  # merged: what it said is in the target now
        for e in self.entries:
            if e.removed and e.original is not None and e.removed_reading is None:
                e.removed_reading = self.reading
        self.context = frozenset()
        self.updated.clear()
        self.added.clear()

    def switch(self, st: Statement, text: str, source: str) -> str:
        """``st`` says the speaker switched from one thing to another: entries saying the old
        one is used now say the new one; entries that only name it are replaced by ``text``."""
        live = self.live()
        said = next((e for e in live if _cites(e.text, source)), None)
        if said is not None:
            # This very message was reviewed before: what this batch said of the old thing
            # before it is outdated again.
            for e in live:
                if e.original is None and mentions(e.text, st.old):
                    _supersede(e, said if said is not e else None)
            return "duplicate"
        purpose = _purpose(st.text)
        live = [e for e in live if not self._said_after(e)]
        targets = [
            e for e in live if uses(e.text, st.old) and (not purpose or _purpose(e.text) <= purpose)
        ]
        if targets:
            # The old value and a version glued to it: "MySQL 5.7" becomes "PostgreSQL 16".
            value = re.compile(rf"\b{re.escape(st.old)}(?:\s+v?\d+(?:\.\d+)*)?(?!\w|\.\w)", re.I)
            for e in targets:
                body = value.sub(lambda _: st.new, strip_source(e.text))
                if not self._says(body, source):
                    # "We use Go for billing" shares no word with "we switched from MySQL to
                    # Go": the entry says where it came from.
                    body = f"{_closed(body)} Switched from {st.old}."
                e.text = f"{body} {source}"
                self.updated.append((e, frozenset({st.old.lower()})))
            return "updated"
        new = entry_frame(text)
        # A thing's entry ("meds come from Lloyds") is the team's as much as the speaker's
        # ("we switched from Lloyds to Wellspring"); another person's fact is theirs.
        named = [
            e for e in live if mentions(e.text, st.old) and _owners_meet(new, entry_frame(e.text))
        ]
        if not named and _THE_THING.search(st.text[: st.text.find(st.old)]):
            # "we've replaced the Bose with a pair of Yamahas" of "PA is Ewan's Bose L1 rig":
            # "the" points at the one thing memory holds, whoever the entry is about
            named = [e for e in live if mentions(e.text, st.old)]
            named = named if len(named) == 1 and st.subject_kind in ("i", "we", "our") else []
        if named:
            # "stack: RMM Atera, PSA HaloPSA, backups Veeam to Wasabi" of "moved rmm from
            # atera to ninjaone": the entry says more than what changed, and only the old
            # thing in it changes.
            swapped = _written_in(strip_source(named[0].text), st.old, st.new)
            keep = swapped is not None and self._would_lose(named[0], text)
            named[0].text = f"{swapped if keep else text} {source}"
            self.updated.append((named[0], frozenset({st.old.lower()})))
            for other in named[1:]:
                _supersede(other, named[0])
            return "updated"
        others = self.live()
        if (
            st.new
            and not any(mentions(e.text, st.old) for e in others)
            and any(mentions(e.text, st.new) for e in others)
        ):
            # No entry names the old thing and one names the new: the switch is written
            # already (read again, after a later message rewrote the entry it went into).
            return "duplicate"
        return self.fact(text, st.section, source)

    def retire(self, st: Statement, source: str) -> str:
        """``st`` says something is no longer used or true: entries naming it go, or lose it
        from a list ("Netflix and Disney+" -> "Disney+")."""
        speaker = entry_frame(f"{st.speaker}: I x") if st.subject_kind == "i" else None
        self.retired_by = source
        gone = 0
        theirs: set[int] = set()  # entries that name the thing but are someone else's
        for e in self.older():
            if not mentions(e.text, st.old) or _cites(e.text, source):
                continue  # an entry this very message made already says it (idle re-run)

            if speaker is not None:
                owner = entry_frame(e.text)
                if owner.owner and owner.owner != ("we",) and not speaker.same_owner(owner):
                    theirs.add(id(e))
                    continue  # someone else's fact that names the same thing
            if _gives_up(st) and not st.frame.same_owner(entry_frame(e.text)):
                theirs.add(id(e))
                continue  # "Mila quit swimming" retires Mila's swimming, no one else's
            listed = {w.lower() for w in _listed(e.text)}
            if st.old.lower() in listed and (
                _STANDS_IN.search(self.message) or _TOOK_OVER.search(self.message)
            ):
                # "chloe quit, ruby's doing her saturdays now": one of a list went and the
                # message names who does it now; the list waits for them (:meth:`replace_retired`)
                self.retiring.append((e, st.old))
                gone += 1
                continue
            shorter = _without(strip_source(e.text), st.old)
            if shorter is not None and not self._says(shorter, source):
                # What is left shares no word with the message that ended the thing ("We
                # stream on Disney+" after "we cancelled Netflix"): it says what ended.
                shorter = f"{_closed(shorter)} No longer {st.old}."
            if shorter is not None:
                e.text = f"{shorter} {source}"
            elif len(_content(_drop(strip_source(e.text), st.old))) >= 3:
                # The entry says more than that ("We use Zendesk for tickets and Statuspage
                # for incidents"): what replaces the thing may follow in this message.
                self.retiring.append((e, st.old))
            else:
                e.removed = True
            gone += 1
        # (when memory holds an entry this message made, it was read before and what it ended
        # went then: only an entry this batch wrote again may be it, not one that stayed)
        read_before = any(e.text == e.original and _cites(e.text, source) for e in self.live())
        if not gone:
            # Named in other words ("we stopped doing deliveries" after "we deliver through
            # Deliveroo"): the entry closest in meaning, if close enough, goes.
            live = [
                e
                for e in self.older()
                if not _cites(e.text, source)
                and id(e) not in theirs
                and not (read_before and e.original is not None)
            ]
            said = f"{st.speaker}: {st.text}" if st.subject_kind == "i" else st.text
            close = self._closest(said, live, st.old)
            named = sorted(read_slot(st.text).names & read_slot(close.text).names) if close else []
            if close is not None and named:
                # It names the thing: what replaces it may follow in this message ("Hollins
                # Barn cancelled on us. The wedding is now at Oakhurst House.").
                self.retiring.append((close, named[0]))
                gone += 1
            elif close is not None:
                # its parts that share no word with the thing stay ("the photo package at 30"
                # of "champagne toast at 25, and the photo package at 30")
                self._end(close, st.old, source)
                gone += 1
        return "removed" if gone else "nothing to remove"

    def replace_retired(self, text: str, source: str) -> bool:
        """A statement after a retirement in the same message that names what took the
        retired thing's place, in the same words as an entry that named it ("tickets live in
        Front" after "we're not on Zendesk any more"): that entry now names the new thing.
        When the entry named nothing but the retired thing, the statement replaces it whole
        (a name put in a sentence written around another thing reads badly: "through a
        Booqable")."""
        new = entry_frame(text)
        retiring = {id(e) for e, _ in self.retiring}
        if any(_holds(e.text, text) for e in self.live() if id(e) not in retiring):
            return False  # memory says it already: a duplicate, and the retired entry goes
        for e, thing in self.retiring:
            if e.removed:
                continue
            old = entry_frame(e.text)
            shared = {w for w in new.skeleton & old.skeleton if w not in lx.GENERIC_WORDS}
            name = _new_name(text, e.text, thing)
            # ("his nephew Ryan took over the business" after "Stan's retired": in his place)
            if (shared or _TOOK_OVER.search(text)) and name:
                slot = read_slot(e.text)
                named = {n for n in slot.names if root(n.split()[0]) != slot.first}
                others = named - read_slot(thing).names - {thing.lower()}
                body = text
                held = measures(e.text)
                # "she comes on Fridays" of "the Thursday boat": more than the name changed
                # ("a 25 tonne Wise hoist" of "lifted out by Campbell Cranes": an amount the
                # entry has no place for; a day, a time or a span says when, or for how long)
                kinds = {h.kind for h in held}
                more = any(
                    (m.kind not in kinds and m.kind.startswith(("count", "money", "percent")))
                    or any(m.kind == h.kind and m.value != h.value for h in held)
                    for m in measures(text)
                )
                # (one of a list: "Marta and Lee run the night builds", the others stay)
                listed = {w.lower() for w in _listed(strip_source(e.text))}
                # (a name for a name: not "the AGM" written over "dinner")
                named_thing = thing[:1].isupper() or thing.lower() in listed
                if (
                    (others or (thing.lower() in listed and len(listed) > 1))
                    and not more
                    and named_thing
                ):
                    # the whole name the entry gives: "Jimmy" is "Jimmy Robson" there
                    whole = rf"\b{re.escape(thing)}\b(?:\s+(?-i:[A-Z][\w'-]*))*"
                    named_in = re.sub(whole, name, strip_source(e.text), flags=re.I)
                    changed = named_in != strip_source(e.text)
                    body = named_in if changed and self._says(named_in, source) else text
                said = [t for _, _, t in sentences(_body(e.text))]
                naming = [t for t in said if mentions(t, thing)]
                cited = None
                if body == text and len(said) > 1 and len(naming) == 1:
                    # "catering | Smaakmakers, €65 p.p. transport | Connexxion. furniture |
                    # Furnify." of "New standard caterer is Gastrobar Noord": the one sentence
                    # naming the retired thing is replaced, the others stay
                    parts = [text if t is naming[0] else t for t in said]
                    alone = all(
                        (WORD.findall(t) or [""])[0].lower() not in lx.STOP_WORDS
                        for t in said
                        if t is not naming[0]
                    )
                    body = " ".join(_closed(t.strip()) for t in parts)
                    cited = self._citation(body, e, source) if alone else None
                    body = body if cited is not None else text
                e.text = f"{body} {cited or source}"
                self.retiring.remove((e, thing))
                return True
        return False

    def retired_replaced_by(self, sentence: str, speaker: str, source: str) -> str | None:
        """A clause after a retirement in the same message that names one new thing but that
        the rules did not read as a fact ("Dave retired. Any leaks or boilers, it's AquaFix
        now."): the retired entry waiting for its replacement (:meth:`retire`) is replaced by
        the ``sentence`` holding that clause, kept whole as the speaker said it, instead of
        going with nothing in its place. "updated", or None when no retired entry waits or
        the sentence names nothing new."""
        whole = f"{speaker}: {sentence.strip()}"
        retiring = {id(e) for e, _ in self.retiring}
        if any(_holds(e.text, whole) for e in self.live() if id(e) not in retiring):
            return None  # memory says it already; the retired entry goes
        for e, thing in self.retiring:
            name = None if e.removed else _new_name(sentence, e.text, thing)
            if name is None:
                continue
            e.text = f"{whole} {source}"
            for o in self.live():
                if (
                    o is not e
                    and id(o) not in retiring
                    and _cites(o.text, source)
                    and name.lower() in strip_source(o.text).lower()
                ):
                    _supersede(o, e)  # a clause of it, kept alone: the sentence says it all
            self.retiring.remove((e, thing))
            return "updated"
        return None

    def settle_retired(self) -> None:
        """At the end of a message: an entry whose retired thing nothing replaced goes, but
        for its sentences that do not name the thing, when they say something on their own
        ("Kofi Mensah, I run the lens clinic" of "... We've got 60 patients on the monthly
        lens subscription", after "no more monthly lens subscription")."""
        for e, thing in self.retiring:
            # An entry this message rewrote since ("Opsgenie handles alerts now" took the
            # place of "Paging goes through PagerDuty") says the new thing: it stays.
            if not e.removed and not self._from_this_message(e):
                self._end(e, thing, self.retired_by)
        self.retiring.clear()

    def _end(self, e: _Entry, thing: str, source: str) -> None:
        """``e`` no longer holds ``thing``, which the message ``source`` cites ended: it keeps
        its other parts (:func:`_other_sentences`), citing that message, or goes."""
        rest = _other_sentences(e.text, thing)
        if rest is None and _unsaid(e.text, thing, self.message or thing):
            # one sentence of several parts, about more than what ended ("Wednesday is Skint
            # club night, Tuesday is the pub quiz, quizmaster is Big Dave" of "Skint's been
            # axed"): the parts that name it go, the others stay
            rest = _other_parts(e.text, thing)
        cited = self._citation(rest, e, source) if rest else None
        leans = rest is not None and re.match(r"(?:[^:]{1,40}:\s)?(?:she|he|they|it)\b", rest, re.I)
        if rest is not None and cited is None and not leans and self._says(thing, source):
            # What stays shares no word with the message that ended the thing ("glaze is 60
            # silica ..." after "Ashworth Minerals have gone into administration"): it says
            # what ended, as :meth:`retire` does of a list. (Not "She wants receipts by the
            # 10th" once she has gone: it spoke of her.)
            rest, cited = f"{_closed(rest)} No longer {thing}.", source
        if rest is None or cited is None:
            e.removed = True
        else:
            e.text = f"{rest} {cited}"

    # the outcome

    def changes(self) -> tuple[list[str], Counter[str]]:
        """One line per changed entry (moves grouped per topic), and how many of each kind."""
        lines: list[str] = []
        counts: Counter[str] = Counter()
        moved: Counter[tuple[str, str]] = Counter()
        for e in self.entries:
            where = e.section or e.path
            if e.original is None:
                if not e.removed:
                    lines.append(f"+ [{e.moved_to or where}] {e.text}")
                    counts["added"] += 1
                continue
            if e.removed:
                lines.append(f"- [{where}] {e.text}")
                counts["removed"] += 1
                continue
            if e.text != e.original:
                lines.append(f"~ [{where}] {_short(e.original)} -> {e.text}")
                counts["updated"] += 1
            if e.moved_to is not None:
                moved[(where, e.moved_to)] += 1
                counts["moved to topics"] += 1
        lines += [
            f"> [{where}] {n} older entries moved to {path}"
            for (where, path), n in sorted(moved.items())
        ]
        return [_short(line, _MESSAGE_LINE) for line in lines], counts

    # operations

    def operations(self, cap: int, sources: BatchSources) -> list[dict[str, Any]]:
        """The store operations that turn the given memory into this one.

        Here the changes are finally assembled, after every rule that shaped them: what the
        store would refuse and what breaks the runner's source rule (:mod:`.sources`) are left
        out, and then a removal that an update made stands only with the entry holding the
        new value (:mod:`.replacements`): when that entry was merged away into nothing, left
        out or never made, the old entry stays as it was, and the operations are made again.
        """
        self._settle()
        if self._index_length() > cap:
            self._make_room(cap)
        while True:
            ops, notes = _accepted(self._index_ops() + self._topic_ops(), self.index, self.topics)
            for op in [o for o in ops if o["action"] in ("add", "replace")]:
                problem = sources.problem(op["text"])
                if problem is not None:
                    ops.remove(op)
                    notes.append(f"left out an entry: {problem.message}")
            units = {id(e): k.text for e in self.entries if (k := self._keeper(e)) is not None}
            after = _files_after(ops, self.index, self.topics) if units else {}
            broken = set(unreplaced(units, after))
            if not broken:
                self.notes += notes
                given = {
                    e.original: e.section for e in self.entries if e.path == INDEX and e.original
                }
                return _without_round_trips(ops, given)
            for e in self.entries:
                if id(e) in broken:
                    self._restore(e)

    def _restore(self, e: _Entry) -> None:
        """Take back ``e``'s removal or move: the entry stays as it was given."""
        e.removed, e.replaced_by, e.moved_to = False, None, None
        e.text = e.original if e.original is not None else e.text
        self.notes.append(f"kept {_short(e.text)!r}: what replaces it would not be in memory")

    def _keeper(self, e: _Entry) -> _Entry | None:
        """The entry that must be in memory for ``e``'s change to stand, or None: for an
        entry removed as outdated, the one holding what outdated it (through entries that were
        themselves outdated or merged since; None when the value ended, by a retirement, or
        when ``e`` was new in this batch, so nothing of memory is lost with it); for an entry
        moved to a topic file, or rewritten as a removal and an add (identical copies), its
        own new line."""
        if e.original is None:
            return None
        if not e.removed:
            rewritten = e.naming == "copies" and e.text != e.original
            return e if e.moved_to is not None or rewritten else None
        seen = {id(e)}
        k = e.replaced_by
        while k is not None and k.removed and k.replaced_by is not None and id(k) not in seen:
            seen.add(id(k))
            k = k.replaced_by
        return None if k is None or k.removed else k

    def replaced_by(self, ops: list[dict[str, Any]]) -> dict[int, str]:
        """For each ``remove`` of ``ops`` that is part of a unit (:meth:`_keeper`), the text
        of the entry that must be in memory for it to stand: what the runner checks again."""
        keepers: dict[str, str] = {}
        for e in self.entries:
            k = self._keeper(e)
            if k is not None and e.path == INDEX and e.original is not None:
                keepers[e.original] = k.text
        return {
            i: keepers[op["old"]]
            for i, op in enumerate(ops)
            if op["action"] == "remove" and op["old"] in keepers
        }

    def _index_length(self) -> int:
        ops, _ = _accepted(self._index_ops(), self.index, self.topics)
        return len(_simulate(ops, self.index, self.topics))

    def _settle(self) -> None:
        self._read_before()
        unwritten: set[int] = set()
        for e in self.entries:
            if e.path == INDEX and e.naming == "shared" and e.original is not None:
                if e.removed or e.text != e.original:
                    self.notes.append(
                        f"left {e.original!r} as it is: its text is also part of other lines, "
                        "so no operation can name it alone"
                    )
                if e.text != e.original:
                    unwritten.add(id(e))
                e.removed, e.text = False, e.original
        # An update that cannot be written takes back the removals it made (one unit).
        for e in self.entries:
            k = self._keeper(e)
            if k is not None and id(k) in unwritten:
                self._restore(e)
        # An entry rewritten to the same meaning (only its source differs, say after a
        # value went back and forth in one batch) keeps its stored text: no churn.
        for e in self.entries:
            same = e.original is not None and meaning(e.text) == meaning(e.original)
            if same and not e.removed and e.original is not None:
                e.text = e.original

    def _read_before(self) -> None:
        """What memory already took from a message is not taken again when that message is
        given again (an idle re-run, a range read twice): a rewrite of a given entry that
        cites only messages the entry cited already keeps the stored text, and a new entry
        that cites only messages a given entry cites is not added."""
        cited: set[tuple[str, int]] = set()
        for e in self.entries:
            if e.original is not None and not e.removed:
                cited |= _positions(e.original)
        dropped: set[int] = set()  # new entries not added, rewrites taken back
        for e in self.entries:
            if e.removed or e.moved_to is not None:
                continue
            now = _positions(e.text)
            if not now:
                continue
            if e.original is None:
                if now <= cited:
                    e.removed = True
                    dropped.add(id(e))
            elif e.text != e.original and now <= _positions(e.original):
                e.text = e.original
                dropped.add(id(e))
        # A given entry removed while reading a message memory already took from, or
        # outdated by an entry dropped or kept as stored above, stays as it was.
        for e in self.entries:
            if e.original is None or not e.removed:
                continue
            k, seen = e.replaced_by, {id(e)}
            while k is not None and id(k) not in dropped and id(k) not in seen:
                seen.add(id(k))
                k = k.replaced_by
            reading = e.removed_reading or frozenset()
            again = bool(reading) and reading <= cited
            if again or (k is not None and id(k) in dropped):
                e.removed, e.replaced_by, e.text = False, None, e.original

    def _index_ops(self) -> list[dict[str, Any]]:
        edits: list[dict[str, Any]] = []
        adds: list[dict[str, Any]] = []
        links: list[dict[str, Any]] = []
        gone: set[str] = set()  # texts already removed: every copy goes with the first remove
        for e in self.entries:
            if e.path != INDEX:
                continue
            if e.original is None:
                if e.live:
                    adds.append({"action": "add", "section": e.section, "text": e.text})
                continue
            changed = e.removed or e.moved_to is not None or e.text != e.original
            if not changed or e.original in gone:
                continue
            if e.removed or e.moved_to is not None:
                edits.append({"action": "remove", "old": e.original})
                gone.add(e.original)
            elif e.naming == "unique":
                edits.append({"action": "replace", "old": e.original, "text": e.text})
            else:
                # Identical copies: a replace would match them all, which the store refuses.
                # Remove every copy and add the new text once, in the same section.
                edits.append({"action": "remove", "old": e.original})
                gone.add(e.original)
                adds.append({"action": "add", "section": e.section, "text": e.text})
        for section, path in self._moved_sections():
            if f"[[{path}]]" not in self.index:
                links.append({"action": "add", "section": section, "text": f"More: [[{path}]]"})
        return edits + adds + links

    def _moved_sections(self) -> list[tuple[str, str]]:
        seen: dict[str, str] = {}
        for e in self.entries:
            if e.moved_to is not None and e.section is not None:
                seen.setdefault(e.section, e.moved_to)
        return sorted(seen.items())

    def _make_room(self, cap: int) -> None:
        target = int(cap * _HEADROOM)
        candidates = [e for e in self.entries if e.live and (e.movable or (e.original is None))]
        # Oldest first: existing entries in file order, then new ones in the order said.
        candidates.sort(key=lambda e: (e.original is None, e.line, e.order))
        while candidates:
            if self._index_length() <= target:
                return
            sizes: Counter[str] = Counter()
            for e in candidates:
                sizes[e.section or ""] += len(e.text)
            # The largest section gives first; ties go to the standard order of sections.
            section = max(sizes, key=lambda s: (sizes[s], -_section_rank(s)))
            victim = next(e for e in candidates if (e.section or "") == section)
            victim.moved_to = self._topic_for(section)
            candidates.remove(victim)
        self.notes.append(
            f"{INDEX} is still over its {cap}-character cap: nothing more can move "
            "(free sections and multi-line entries stay where people put them)."
        )

    def _topic_for(self, section: str) -> str:
        base = topic_slug(section)
        for n in range(1, 100):
            slug = base if n == 1 else f"{base}-{n}"
            path = topic_path(slug)
            # A linked topic that was not given to us may hold text we cannot see: writing it
            # whole would erase that text, so use the next free name instead.
            if path in self.topics or f"[[{path}]]" not in self.index:
                return path
        raise ReverieError(f"No free topic name for section {section!r}.")  # pragma: no cover

    def _topic_ops(self) -> list[dict[str, Any]]:
        ops: list[dict[str, Any]] = []
        targets = sorted(
            {e.path for e in self.entries if e.path != INDEX}
            | {e.moved_to for e in self.entries if e.moved_to is not None}
        )
        for path in targets:
            before = self.topics.get(path)
            after = self._topic_text(path, before)
            if after != (canonical_text(before) if before is not None else None):
                slug = path.removeprefix("memory/").removesuffix(".md")
                ops.append({"action": "write_topic", "topic": slug, "content": after})
        return ops

    def _topic_text(self, path: str, before: str | None) -> str:
        if before is None:
            section = next(e.section for e in self.entries if e.moved_to == path)
            lines = [f"# {section}", ""]
        else:
            lines = canonical_text(before).rstrip("\n").split("\n")
            mine = {e.line: e for e in self.entries if e.path == path}
            kept: list[str] = []
            for i, line in enumerate(lines):
                e = mine.get(i)
                if e is None:
                    kept.append(line)
                elif e.live:
                    kept.append(f"{e.marker} {e.text}")
            lines = kept
        lines += [f"- {e.text}" for e in self.entries if e.moved_to == path and not e.removed]
        return canonical_text("\n".join(lines))


#: A name of capitalised words, "&" allowed between them ("Dodson & Horrell").
_CAPITALISED = r"(?-i:[A-Z])[\w'-]*(?:\s+(?:&\s+)?(?-i:[A-Z])[\w'-]*)*"
#: "we've switched feed to Baileys": a named value of one attribute, changed.
_SWITCHED_TO = re.compile(
    r"\b(?:switched|changed|moved)\s+(?:our\s+|the\s+|my\s+)?(?P<attr>[a-z]+)\s+(?:over\s+)?to\s+"
    rf"(?P<new>{_CAPITALISED})",
    re.I,
)
#: "we're switching to Northcot for the bricks": the new value first, then what it is for.
_SWITCHING_FOR = re.compile(
    r"\b(?:switch|switching|switched|moving|moved|changing|changed)\s+(?:over\s+)?to\s+"
    rf"(?P<new>{_CAPITALISED})\s+for\s+(?:our\s+|the\s+|my\s+)?(?P<attr>[a-z]+)\b",
    re.I,
)
#: "the eggs are no longer from Lane End, it's Hollybrook Farm": the old value named too.
_NO_LONGER_FROM = re.compile(
    r"\b(?P<attr>[a-z]+)\s+(?:is|are)\s+no\s+longer\s+(?:from|with|at|through|by)\s+"
    rf"(?P<old>{_CAPITALISED})\s*[,;]?\s*"
    r"(?:it's|it is|they're|they are|now|instead|but)\s+(?:from\s+|with\s+|at\s+)?"
    rf"(?P<new>{_CAPITALISED})",
    re.I,
)
#: "parts all come from GSF now": where one thing comes from, with a word of change after it.
_FROM_NOW = re.compile(
    r"\b(?P<attr>[a-z]+)\s+(?:all\s+|now\s+)?(?:come|comes|is|are|go|goes)\s+(?:now\s+)?"
    rf"(?:from|through|via|with)\s+(?P<new>{_CAPITALISED})"
    r"\s+(?:now|instead|these days|from now on)\b",
    re.I,
)


def _section_rank(section: str) -> int:
    return (
        STANDARD_SECTIONS.index(section) if section in STANDARD_SECTIONS else len(STANDARD_SECTIONS)
    )


def _supersede(e: _Entry, by: _Entry | None) -> None:
    """``e`` is outdated by what ``by`` holds (None: by nothing memory keeps): it goes, and
    its removal stands only with ``by`` (:meth:`_Memory.operations`)."""
    e.removed = True
    e.replaced_by = by


def _cued(text: str, new: Frame) -> bool:
    """Whether ``text`` says that something ended, or that something changed in words other
    than :data:`.lexicon.WEAK_UPDATE_MARKERS` alone: the cue that sends a statement no rule
    connected to the :attr:`_Memory.likeness`."""
    if _ENDS.search(text):
        return True
    return new.update and says_update(text, weak=False)


def _someone_else(new: Slot, old: Slot, shared: frozenset[str]) -> bool:
    """Whether ``old`` is a named person's fact and ``new`` is said of another person, not of
    the name the two share ("Sam uses Evri now" and "Dana's courier is DPD"; but "Giulia went
    back to Italy" is said of the Giulia that "Marco's assistant is Giulia" names)."""
    if old.owner in ("", "i", "we"):
        return False
    person = new.owner if new.owner not in ("", "we") else new.who
    return bool(person) and person != old.owner and person not in shared


def _another_value(new: Slot, old: Slot) -> bool:
    """Whether ``new`` holds a value ``old`` does not and lacks one it holds, of a kind they
    share: a name for a name, a time for a time, an amount for an amount ("The boiler replaced
    the old one in 2019" puts no year where "The boiler is a Worcester Bosch" has a name)."""
    added = {value_kind(v) for v in new.values - old.values}
    lost = {value_kind(v) for v in old.values - new.values}
    return bool(added & lost) or bool(new.names - old.names and old.names - new.names)


def _other_subjects(new: Slot, old: Slot) -> bool:
    """Whether each statement's subject (its content words before the verb) is a word the
    other does not say at all: two things, each with its own value."""
    return bool(
        new.head
        and old.head
        and not new.head & (old.words | old.head)
        and not old.head & (new.words | new.head)
    )


def _shares_a_word(thing: str, entry: Slot) -> bool:
    """Whether ``entry`` names ``thing`` or says a word of it: a name, a content stem, either
    the start of the other ("deliveries" and "we deliver"), or a firm's first word ("Ardagh"
    and "Ardagh Glass")."""
    if not thing:
        return False
    mine = read_slot(thing)
    ours = mine.words | mine.names | {n.split()[0] for n in mine.names}
    theirs = entry.words | entry.names | {n.split()[0] for n in entry.names}
    return any(
        a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))
        for a in ours
        for b in theirs
    )


_USED_TO = re.compile(
    r"\b(?:used to\s+\w+|used|had|ran|offered)\s+(?:the\s+|our\s+|a\s+|an\s+)?(?P<thing>\S.*)$",
    re.I,
)
#: The clause after it that ends the habit: with nothing after the verb, or a pronoun ("we've
#: stopped", "we stopped using it"), or a negation that says it is over ("I don't do that
#: any more").
_HABIT_ENDED = re.compile(
    r"^(?:but\s+|and\s+)?(?:we|i|they|he|she)(?:'ve| have| has)?\s+(?:"
    r"(?:stopped|dropped|quit|ended|scrapped|cancell?ed|gave up|given up)"
    r"(?:\s+(?:using|doing|offering|running|selling))?(?:\s+(?:it|that|them|those|this))?"
    r"(?=\s*(?:[,;.!?]|$))"
    r"|(?:don't|do not|doesn't|does not)\s+(?P<rest>.*?)\b(?:any ?more|any longer)\b)",
    re.I,
)


def _ended_habit(clause: str, after: str) -> bool:
    """Whether ``clause`` says what someone used to do or had ("we used to do home visits",
    "we used the old van") and ``after``, the next clause of the sentence, says it ended:
    "we've stopped", "we stopped using it", or "I don't do visits any more" (a negation must
    name a word of the habit)."""
    habit = _USED_TO.search(clause)
    ended = _HABIT_ENDED.match(after.strip())
    if habit is None or ended is None:
        return False
    if ended["rest"] is None:
        return True
    said = {w.lower().rstrip("s") for w in _content(ended["rest"])}
    return bool(said & {w.lower().rstrip("s") for w in _content(habit["thing"])})


#: What a clause is said of, before its verb "to be": "the second Sunday work parties are off".
_SAID_OF = re.compile(
    r"^(?:the\s+|our\s+|my\s+)?(?P<w>[^,;:]{3,60}?)(?:\s+(?:is|are|was|were)\b|'(?:s|re)\b)", re.I
)


def _ended_by_it(clause: str, after: str) -> str | None:
    """What ``clause`` is said of, when ``after``, the next clause of the sentence, says the
    speaker ended it by a pronoun ("..., we've dropped them", "..., I've scrapped it"); else
    None."""
    ended = _HABIT_ENDED.match(after.strip())
    said = _SAID_OF.match(clause.strip())
    if ended is None or ended["rest"] is not None or said is None:
        return None
    if not re.search(r"\b(?:it|that|them|those|this)\s*[,;.!?]*$", ended.group(0), re.I):
        return None
    thing = said["w"].strip()
    return None if thing.split(" ")[0].lower() in lx.PRONOUN_SUBJECTS else thing


def _priced_of(new: Slot, old: Slot) -> bool:
    """Whether ``new`` is said of a person (or a named thing) that ``old`` names beside its
    own speaker, and shares a word with it besides that name: "marek's gone up to £20 a logo"
    of "Nadia: our digitiser is Marek, he charges £18 per logo"."""
    if not new.owner or new.owner in ("i", "we"):
        return False
    if new.owner not in old.names | {n.split()[0] for n in old.names}:
        return False
    return bool((new.words & old.words) - {root(w) for w in new.owner.split()} - _LOOSE)


def _names_owner(text: str, old: Slot) -> bool:
    """Whether ``text`` moves something of a person (or a named thing) that ``old`` names
    beside other things, not as its owner: "Greta's class moved to Thursday" and "the pottery
    class is on Wednesday with Greta". A verb of switching says the value moved; without one
    the person may have a value of their own ("Greta's day off is Friday now")."""
    new = read_slot(text)
    return (
        bool(new.owner)
        and new.owner not in ("i", "we")
        and new.owner in old.names | {n.split()[0] for n in old.names}  # "Greta" of "Greta Lund"
        and bool(_SWITCHED.search(text))
    )


#: The day a value holds from, right after it: " from 1 April", " from July".
_HOLDS_FROM = re.compile(
    r"^(?:\s+(?:a|an|per)\s+[a-z]+)?"  # (what the value is of: "$199 a month starting January")
    rf"\s+((?:from|as of|starting)\s+(?:the\s+)?(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?)?"
    rf"(?:{CALENDAR.pattern})(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?)\b",
    re.I,
)


def _holds(entry: str, text: str) -> bool:
    """Whether ``entry`` states ``text`` word for word, among more (a merged update)."""
    said = meaning(text)
    return bool(said) and f" {said} " in f" {meaning(entry)} "


def _names_any(text: str, names: frozenset[str]) -> bool:
    """Whether ``text`` names one of ``names``, whole or by its first word ("Shipton's
    delivery charge" names "Shipton Mill": a firm is called by the first word of its name)."""
    low = text.lower()
    for name in names:
        parts = name.split()
        if re.search(rf"\b{re.escape(name)}\b", low):
            return True
        lead = parts[0]
        firm = len(parts) > 1 and len(lead) > 2 and lead not in lx.STOP_WORDS
        if firm and re.search(rf"\b{re.escape(lead)}\b", low):
            return True
    return False


def _nearest(entry: str, values: list[Measure], words: frozenset[str]) -> Measure | None:
    """Of ``values`` said in ``entry``, the one that the most of ``words`` (stems) stand
    near, and then the closest to one of them ("half day" picks £140 in "half-day rate is £140
    and a full day is £260"), when one wins; else None."""
    body = strip_source(entry)
    spots = [(m.start(), root(m.group(0).lower())) for m in re.finditer(r"[\w']+", body)]
    spots = [(at, w) for at, w in spots if w in words]
    if not spots:
        return None
    scored = []
    for i, v in enumerate(values):
        at = _find(body, v.said)
        if at >= 0:
            near = {w for spot, w in spots if abs(spot - at) <= _NEAR}
            scored.append((-len(near), min(abs(spot - at) for spot, _ in spots), i))
    scored.sort()
    if not scored or (len(scored) > 1 and scored[0][:2] == scored[1][:2]):
        return None
    return values[scored[0][2]]


#: How far from a value, in characters, a word stands near it.
_NEAR = 30


def _also_changed(text: str, entry: str, kind: str) -> list[tuple[Measure, Measure]]:
    """The values of kinds other than ``kind`` that ``text``, an update of ``entry``, gives
    in place of the entry's: ``(old, new)`` for each kind of which each says exactly one, and
    another, said of what the entry says it of: a count of the same unit, or a value whose
    part of the sentence names nothing the entry does not ("now at 3pm, 8 people" of "at
    2pm, 6 people maximum": the time and the count; not "doors at 10am" of "setup at 8am")."""
    given = [m for m in measures(text) if not _denied(text, m)]
    held = measures(entry)
    pairs = _paired(text, [m for m in given if m.kind == kind], entry, held)[1:]
    for k in dict.fromkeys(m.kind for m in given if m.kind != kind):
        olds = {m.value: m for m in held if m.kind == k}
        news = {m.value: m for m in given if m.kind == k}
        if len(olds) != 1 or len(news) != 1 or olds.keys() == news.keys():
            continue
        (was,), (now,) = olds.values(), news.values()
        if ":" in k or _said_of(text, now.said) <= _stems(entry):
            pairs.append((was, now))
    return pairs


def _paired(
    text: str, news: list[Measure], entry: str, olds: Sequence[Measure]
) -> list[tuple[Measure, Measure]]:
    """Each of several new values of one kind (:func:`_labelled_alike`) with the old value of
    ``entry`` it takes the place of, ``(old, new)`` in the order ``text`` says them; [] unless
    there are two or more and each finds its own old value, which no new value repeats."""
    news = list({m.value: m for m in news}.values())
    if len(news) < 2:
        return []
    kinds = {m.kind for m in news}
    alike = [m for m in olds if m.kind in kinds]
    pairs = [(_labelled_alike(text, n, entry, alike), n) for n in news]
    taken = [o.value for o, _ in pairs if o is not None]
    if len(taken) != len(news) or len(set(taken)) != len(taken):
        return []
    if set(taken) & {n.value for n in news}:
        return []  # "£5 -> £6, £4 -> £5": a chain, not one change each
    return [(o, n) for o, n in pairs if o is not None]


def _name_words(slot: Slot) -> frozenset[str]:
    """The stems of the words of a slot's names."""
    return frozenset(root(w) for n in slot.names for w in n.split() if w not in lx.STOP_WORDS)


def _shared(words: frozenset[str], mine: Slot, slot: Slot) -> frozenset[str]:
    """The content words a statement shares with ``slot``: ``words`` (the statement's and its
    message's), and where a word is capitalised on one side and reads as a name, and not on
    the other, the statement's own ("tom says Grade 1 goes to £375" and "Grade 1 - £350").
    Not a name both give: that two statements name one business does not make them about one
    value of it; nor a word of another clause of the message met as a name ("Not enough
    visitors midweek" and "Visitors may climb the tower ... 11 to 3"); nor a person one of
    them is said of and the other not ("Greta's day off is Friday now" is no day of "the
    pottery class ... with Greta": :func:`_names_owner` decides that)."""
    crossed = ((mine.words - _LOOSE) & _name_words(slot)) | (
        (_name_words(mine) - _LOOSE) & slot.words
    )
    ours = {root(p) for p in (mine.who, mine.owner) if p}
    theirs = {root(p) for p in (slot.who, slot.owner) if p}
    return (words & slot.words) | (crossed - (ours ^ theirs))


def _labelled_alike(text: str, new: Measure, entry: str, olds: list[Measure]) -> Measure | None:
    """Of ``olds`` said in ``entry``, the one said with the words ``new`` is said with in
    ``text`` (:func:`_around`): the most of them, then the fewest others ("Bars are £6" picks
    "bars £5.50" over "shampoo bars £7"; "fair moved to 26 September" picks "Makers Fair ... on
    19 September" over "stand fee's due 1 August"; "but juniors go up to £75" picks "£60 for
    juniors"); None when none shares one or two tie."""
    body = strip_source(entry)
    at = _most_alike(_around(text, new.said), [_around(body, m.said) for m in olds])
    return None if at is None else olds[at]


def _most_alike(label: set[str], others: list[set[str]]) -> int | None:
    """Which of ``others`` (the words said with each of several values, :func:`_around`)
    shares the most of ``label``, then has the fewest besides; None when none shares one or
    two tie."""
    if not label:
        return None
    scored = sorted(
        ((-len(label & theirs), len(theirs - label)), i) for i, theirs in enumerate(others)
    )
    best = scored[0][0]
    if best[0] == 0 or (len(scored) > 1 and scored[1][0] == best):
        return None
    return scored[0][1]


#: Where the words said of one value end: a stop, or a word that joins another clause.
_PART = re.compile(r"[,;:.!?]|\s(?:but|and|while|whereas|though)\s", re.I)


def _part(text: str, said: str) -> str | None:
    """The words said with value ``said`` in ``text``, before and after it: its part, up to a
    stop or a word that joins another clause (:data:`_PART`); None if ``said`` is not there."""
    at = _find(text, said)
    if at < 0:
        return None
    return f"{_PART.split(text[:at])[-1]} {_PART.split(text[at + len(said) :])[0]}"


def _said_to_stay(text: str, said: str) -> bool:
    """Whether value ``said`` is said in ``text`` to stay as it is ("the 3-game deal stays at
    £20", "week still £60")."""
    part = _part(text, said)
    return part is not None and bool(_STAYING.search(part))


def _said_to_stay_by_name(text: str, name: str) -> bool:
    """Whether ``text`` says that ``name`` (or its first word) stays as it is: a part of it
    (:data:`_PART`) that names it says "still", "stays", ... ("Pete still signs off")."""
    first = re.escape(name.split()[0])
    return any(
        re.search(rf"(?<!\w){first}(?!\w)", part, re.I) and _STAYING.search(part)
        for part in _PART.split(text)
    )


_STAYING = re.compile(r"\b(?:stays?|staying|remains?|still|unchanged|same)\b", re.I)


def _around(text: str, said: str) -> set[str]:
    """The stems of the content words said with value ``said`` in ``text`` (:func:`_part`:
    "£60 for juniors"; "but juniors go up to £75"), values and words of updating left out;
    and the numbers of its part ("#50" of "50 balls £4")."""
    part = _part(text, said)
    if part is None:
        return set()
    words = {  # ("half-day" is "half" and "day": "the half day becomes £155")
        root(w.lower())
        for w in re.findall(r"[A-Za-z][\w']*", part)
        if w.lower() not in lx.STOP_WORDS and root(w.lower()) not in _LOOSE and not measures(w)
    }
    # and the numbers said with it: "50 balls £5, 100 balls £8.50"
    return words | {f"#{n}" for n in re.findall(r"\d+(?:[.,]\d+)?", part)}


def _find(text: str, said: str) -> int:
    """Where value ``said`` stands in ``text`` as a value of its own, not inside a longer one
    ("4th" in "the 14th, not the 4th" is the second; "£5" is not in "£50"); where it stands
    inside one when it stands nowhere alone (as ``str.find``); -1 if nowhere."""
    m = re.search(rf"(?<!\w)(?<!\d[.,:]){re.escape(said)}(?!\w)(?![.,:]\d)", text)
    return m.start() if m else text.find(said)


def _said_of(text: str, said: str) -> set[str]:
    """The stems of the content words before ``said`` in its part of ``text`` (back to a
    stop or a word that joins another clause, :data:`_PART`: "... in 2 weeks and it's $380"
    says nothing of what $380 is but "it"), values and words of updating left out."""
    at = _find(text, said)
    part = _PART.split(text[: max(at, 0)])[-1]
    return {
        root(w.lower())
        for w in re.findall(r"[A-Za-z][\w'-]*", part)
        if w.lower() not in lx.STOP_WORDS and root(w.lower()) not in _LOOSE and not measures(w)
    }


def _denied(text: str, m: Measure) -> bool:
    """Whether ``text`` says value ``m`` is not so ("thursday mate not tuesday", "instead of
    Fridays"): then it is the old value, never the new one."""
    at = _find(text, m.said)
    return at >= 0 and bool(_DENIED.search(text[max(0, at - 16) : at]))


_DENIED = re.compile(
    r"(?:\bnot|n't|\binstead of|\brather than|\bno longer)\s+(?:the\s+|on\s+)?$", re.I
)


def _other_group(text: str, entry: str) -> bool:
    """Whether ``text`` names one of :data:`.lexicon.PAIRED_GROUPS` and ``entry`` another one
    and not that one: their values are of different things."""
    mine, theirs = _said(text), _said(strip_source(entry))
    groups = [g for g in lx.PAIRED_GROUPS if g & mine]
    return (
        bool(groups)
        and not any(g & theirs for g in groups)
        and any(g & theirs for g in lx.PAIRED_GROUPS)
    )


def _said(text: str) -> set[str]:
    return set(re.findall(r"[a-z][a-z'-]*", text.lower()))


def _bare_numbers(text: str) -> tuple[Measure, ...]:
    """The whole numbers ``text`` gives outside any measure, as amounts of money ("its 75
    now not 60"); a year is none, and so is a count of something ("29 degrees", "3 kids")."""
    body = strip_source(text)
    for m in measures(body):
        body = body.replace(m.said, " ")
    return tuple(
        Measure("money", m[1], m[1])
        for m in re.finditer(r"(?<![\w.,:/£$€-])(\d{1,5})(?![\w.,:/%-])(?:\s+([a-z]+))?", body)
        if not re.fullmatch(r"(?:19|20)\d\d", m[1])
        and not (m[2] and len(m[2]) > 2 and m[2] not in _AFTER_A_PRICE)
    )


#: Words that may follow a bare price ("its 75 now not 60", "45 quid", "30 per hour"); any
#: other word after a number says what it counts.
_AFTER_A_PRICE = lx.words(
    "now not instead from and then per each for quid tops max min off plus inc incl but this "
    "next last"
)


def _stems(text: str) -> set[str]:
    """The stems of the words of ``text`` (its source left out)."""
    return {root(w.lower()) for w in re.findall(r"[\w-]+", strip_source(text))}


def _telling_stems(text: str) -> set[str]:
    """The stems of ``text`` that say what it is about: not stop words, generic words or words
    of change (:data:`_LOOSE`)."""
    return _stems(text) - _LOOSE - _STOP_STEMS


def _capitals(text: str) -> set[str]:
    """The stems of the capitalised words of ``text`` that are not stop words, a sentence's
    first word included ("Richardson's and Leleiwi" -> {richardson, leleiwi})."""
    said = re.findall(r"(?<![\w'-])(?-i:[A-Z])[\w-]*", _body(text))
    return {
        root(w.lower()) for w in said if w.lower() not in lx.STOP_WORDS and w not in lx.NAME_STOP
    }


def _reads_back(text: str, said: list[_Entry]) -> list[_Entry]:
    """The entries of ``said`` that give every name, value and capitalised word ``text``
    gives, and all but one of its other words; none when it gives no name or value."""
    mine = read_slot(text)
    if not mine.names | mine.values:
        return []
    capitals = _capitals(text)
    return [
        e
        for e in said
        if _gives_all(e.text, set(mine.names), mine.values)
        and capitals <= _stems(e.text)
        and len(mine.words - read_slot(e.text).words - _LOOSE) <= 1
    ]


#: A reply that opens by saying it has taken note: what follows reads the user's message back.
_CONFIRMS = re.compile(
    # (after a sentence that welcomes or thanks: "Welcome, Hannah. Noted: junior coach, ...")
    r"^\W*(?:(?:welcome|thanks|thank you|cheers|hi|hello|hey)\b[^.!?\n]{0,40}[.!?]+\s+)?"
    r"(?:(?:ok(?:ay)?|right|great|thanks|lovely|good|perfect|sure)\W+)*"
    r"(?:noted|got it|understood|will do|logged|saved|recorded|done|updated|changed|"
    r"i'll remember|i've noted|i'll note)\b|[,;]\s*noted\W*$",
    re.I,
)


def _given_back(
    text: str, said: list[_Entry], replied: set[str], people: frozenset[str]
) -> list[_Entry]:
    """The entries of ``said`` that give every name, value and capitalised word of ``text``,
    in whatever other words, but for words of the user's message (``replied``, stems) that
    the entry left out; none when it gives no name or value. A reply that joins what two
    entries say ("quarterly printed newsletter, Ely Print Shop"), or gives back what the
    entry lost ("clean it every service"), says something of its own. A word joined by a
    hyphen is read as its parts ("ABV-tested" gives "ABV" and "tested")."""
    text = re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])", " ", text)
    mine = read_slot(text)
    # "Ollie Brennan does your website" is written "... does Raj's website": the user named
    # in place of "your" is who the talk is between, not a name the reply gives.
    names = {g for g in mine.names if not set(g.split()) & people}
    if not names | mine.values:
        return []
    capitals = _capitals(text) - {root(p) for p in people}
    words = _telling_stems(text)
    return [
        e
        for e in said
        if _gives_all(e.text, names, mine.values)
        and capitals <= (held := _stems(e.text))
        and not (words - held) & replied
    ]


def _gives_all(entry: str, names: set[str], values: frozenset[str]) -> bool:
    """Whether ``entry`` gives every one of ``names`` and ``values``: as a name or a value,
    or a name in its words ("Sue's gone on leave" names Sue, though a sentence opens with
    her)."""
    slot = read_slot(entry)
    if not values <= slot.names | slot.values:
        return False
    rest = names - slot.names - slot.values
    return not rest or all(_stems(n) <= _stems(entry) for n in rest)


def _says_value(text: str, values: frozenset[str]) -> bool:
    """Whether ``text`` says one of ``values`` as written ("1:50 was too weak", "£58"), a
    word in the singular or the plural ("Thursdays were dead" of "Thursday")."""
    low = text.lower()
    for value in values:
        said = re.escape(value)
        if value.isalpha():
            said = f"{re.escape(value.removesuffix('s'))}s?"
        if re.search(rf"(?<![\w.,:]){said}(?![\w:])", low):
            return True
    return False


#: A message that puts one thing in the place of another ("switched the bulbs to the Feit from
#: Costco", "change of plan, Queen's instead"): the entry it updates is replaced whole.
_PUT_IN_PLACE = re.compile(
    r"\b(?:instead|switch(?:ed|ing)?|swapp?(?:ed|ing)?|replac(?:e|ed|ing)|change of plans?"
    r"|(?:signed|went|gone|going)\s+with|now\s+(?:with|using|through)"
    r"|(?:moved?|moving|went|gone|going|changed?|changing)\s+(?:\w+\s+){0,4}?(?:over\s+)?to)\b",
    re.I,
)


#: A part of a whole counted: "3 tabs done out of 11", "40 of 63 endpoints".
_SHARE_OF = re.compile(r"\b\d+\s+(?:\w+\s+){0,2}(?:out\s+)?of\s+\d+\b", re.I)
#: A first-person opening, which says nothing without who said it.
_FIRST_PERSON = re.compile(r"^(?:I|I'm|I've|I'd|I'll|My|We|We're|We've|Our)\b")


def _said_by(body: str, entry: str) -> str:
    """``body``, an update written into ``entry``, with the name of who said ``entry`` before
    it when it opens with their words in the first person ("I'm the (only) grant writer at
    Riverbend ..." of "Renee: I'm the (only) grant writer ..."): cut from the entry's first
    sentence, they said whose they were."""
    who = _named_by(entry)
    if not who or _named_by(body) or not _FIRST_PERSON.match(body):
        return body
    return f"{who}{body}" if " ".join(body.split()[:4]) in _body(entry) else body


#: One thing put in the place of another, both named: "switched Bill from warfarin to
#: apixaban", "moved the books from Xero to QuickBooks".
_FROM_TO = re.compile(
    r"\b(?:switch(?:ed|ing)?|swapp?(?:ed|ing)?|mov(?:e|ed|ing)|chang(?:e|ed|ing))\b[^.;]{0,40}?"
    r"\bfrom\s+(?P<old>[\w+.-]+)\s+(?:to|for)\s+(?P<new>[\w+.-]+(?:\s+(?-i:[A-Z0-9])[\w+.-]*)?)",
    re.I,
)


def _written_in(body: str, old: str, new: str) -> str | None:
    """``body`` with ``old``, which it names exactly once (as a word of its own), written as
    ``new``; None when it names ``old`` never or more than once."""
    named = re.compile(rf"(?<![\w-]){re.escape(old)}(?![\w-])", re.I)
    if len(named.findall(body)) != 1:
        return None
    return named.sub(lambda _: new, body)


def _swap_in(entry: str, text: str) -> str | None:
    """``entry`` with the one thing ``text`` switches from written as what it switches to,
    when the entry names it once and says more beside it (a part with a verb of its own that
    does not name it): "Bill is on warfarin, wears flight socks on long flights" of "switched
    Bill from warfarin to apixaban" keeps the socks. None otherwise."""
    m = _FROM_TO.search(text)
    if m is None:
        return None
    body = _body(entry)
    swapped = _written_in(body, m["old"], m["new"])
    if swapped is None or mentions(body, m["new"]):
        return None
    beside = [
        part
        for _, _, sentence in sentences(body)
        for part, _ in _parts(sentence)
        if _written_in(part, m["old"], "") is None
        and has_verb(WORD.findall(part)[1:] or WORD.findall(part))
    ]
    return swapped if beside else None


def _one_for_one(text: str, e: _Entry) -> tuple[_Entry, Measure, Measure] | None:
    """``(e, old, new)`` when a value ``text`` gives has one other value of its kind in entry
    ``e`` ("got him down to £2,700" of "60 houses in Rothwell, he wants £3,000"; "now
    Wednesday 7:30 to 9" of "every Wednesday 8 until 9:30", where the weekday is the same) and
    none it gives has several, else None."""
    held = measures(_body(e.text))
    pairs = []
    for m in measures(text):
        olds = [o for o in held if o.kind == m.kind]
        if len(olds) > 1:
            return None
        if olds and olds[0].value != m.value:
            pairs.append((e, olds[0], m))
    return pairs[0] if len(pairs) == 1 else None


def _took_part(text: str, entry: str) -> bool:
    """Whether ``entry`` holds, word for word, a part of ``text`` of four words or more that is
    not all of it (what an update kept of an entry it rewrote, :func:`_untouched_parts`)."""
    held = _body(entry).casefold()
    whole = _body(text).strip(" .").casefold()
    for _, _, sentence in sentences(_body(text)):
        for part, _ in _parts(sentence):
            said = part.strip(" .,;").casefold()
            if said != whole and len(said.split()) >= 4 and said in held:
                return True
    return False


def _switches(text: str, entry: str) -> bool:
    """Whether statement ``text`` puts something in the place of what ``entry`` says: it says
    so ("switched", "instead", "signed with", ...), or gives "now" a name the entry does not
    ("Matteo buys the spruce now from Tonewood Kreuzer" of "spruce comes from the sawmill
    Ciresa"; "Now I am in B2 class" of "level B1")."""
    if _PUT_IN_PLACE.search(text):
        return True
    if not _NOW_SAID.search(text):
        return False
    held = _body(entry).lower()
    return any(n not in held for n in read_slot(_body(text)).names if len(n) > 1)


def _names_a_value(part: str, unsaid: set[str]) -> bool:
    """Whether a name of ``unsaid`` comes after the first verb of ``part`` (what it is, gives
    or comes from: "Our drugs come from Centaur"), not before it as what it is said of."""
    low = part.lower()
    verb = next((m.start() for m in WORD.finditer(part) if is_verb(m.group(0))), -1)
    return verb >= 0 and any(low.find(u) > verb for u in unsaid if u in low)


def _touched(name: str, message: str) -> bool:
    """Whether ``message`` names ``name`` by one of its words ("Marco's left" names "Marco",
    "Faye stepped down" names "Sister Faye Hendrix", "no more DJ" names "DJ Mika"), but for a
    later word of it ending another name ("Hope Street" does not name "Seel Street")."""
    words = name.split()
    for i, w in enumerate(words):
        if len(w) < 2 or w in lx.STOP_WORDS:
            continue
        for m in re.finditer(rf"\b{re.escape(w)}\b", message, re.I):
            # (a later word of the name, ending another name the message gives, does not name
            # it: "Hope Street" does not name "Seel Street")
            # (nor is a capitalised word opening a sentence another name: "The library ...")
            before = re.search(r"([\w'-]+)\s+$", message[: m.start()])
            word = before.group(1) if before is not None else ""
            other = (
                i > 0
                and word[:1].isupper()
                and word.lower() != words[i - 1]
                and word.lower() not in lx.STOP_WORDS
            )
            if not other:
                return True
    return False


def _given_kinds(text: str) -> set[str]:
    """The kinds of value ``text`` gives (a weekday and days are one kind)."""
    kinds = {m.kind.split(":")[0] for m in measures(text)}
    return kinds | {"days", "weekday"} if kinds & {"days", "weekday"} else kinds


def _unsaid(entry: str, body: str, message: str) -> set[str]:
    """The names and values of ``entry`` that ``body`` (what an update leaves of it) no longer
    says and that ``message`` (the update's) does not touch: a name it does not give, a value
    of a kind it gives none of."""
    low = body.casefold()
    given = _given_kinds(message)
    names = {
        n
        for n in read_slot(_body(entry)).names
        if len(n) > 2 and n not in low and not _touched(n, message)
    }
    values = {
        m.said.casefold()
        for m in measures(_body(entry))
        if m.said.casefold() not in low and m.kind.split(":")[0] not in given
    }
    addresses = {a.casefold() for a in _ADDRESS.findall(_body(entry))} - {
        a.casefold() for a in _ADDRESS.findall(message)
    }
    return names | values | {a for a in addresses if a not in low}


#: A web or mail address, or a domain: "luanaferreira.art", "bookings@hanbit.la".
_ADDRESS = re.compile(
    r"(?<![\w@.-])(?:[\w-]+\.)*[a-z][\w-]*(?:@[\w-]+(?:\.[\w-]+)+|\.[a-z]{2,6})\b(?!\.\w)", re.I
)


def _untouched_parts(entry: str, new: Frame, text: str, message: str, unsaid: set[str]) -> str:
    """The parts of ``entry`` (sentences, or parts a comma puts apart) that stay beside the
    update ``text`` (frame ``new``) of ``message``, :func:`_stands`: what an update of the
    entry leaves standing. (Not a part without a verb after one that goes: "Italian, absolute
    legend" leans on "Head rigger is Marco".)"""
    given = _given_kinds(message)
    same = _kept_same(message)
    kept = []
    for _, _, sentence in sentences(_body(entry)):
        before = True  # whether the part before it in the sentence stays (none: it stands)
        for part, _ in _parts(sentence):
            stays = _stands(part, entry, new, text, given, message, unsaid, same)
            stays = stays and (before or has_verb(WORD.findall(part)) or bool(_stems(part) & same))
            if stays:
                kept.append(part.strip(" .,;"))
            before = stays
    return " ".join(_closed(p[:1].upper() + p[1:]) for p in kept)


def _stands(
    part: str,
    entry: str,
    new: Frame,
    text: str,
    given: set[str],
    message: str,
    unsaid: set[str],
    same: set[str],
) -> bool:
    """Whether ``part`` of ``entry`` stays beside the update ``text``: it holds a name or value
    in ``unsaid`` and shares a word with what ``message`` says stays the same (``same``,
    :func:`_kept_same`), or it names no one ``message`` names, holds no value of a kind the
    message gives unless it names someone or something of its own, is not about what a switch
    replaces, and ``text`` does not outdate it."""
    low = part.casefold()
    if not any(u in low for u in unsaid):
        return False
    if _stems(part) & same:
        return True  # "moved site to Squarespace. same domain" of "site on Cargo, domain ..."
    names = read_slot(part).names
    if any(_touched(n, message) for n in names):
        return False
    # (a value of a kind the message gives is outdated, but in a part about someone or
    # something of its own: "Bright Smile dental (monthly, £40)" of "Co-op want it weekly now,
    # £50 a go")
    if not names and any(m.kind.split(":")[0] in given for m in measures(part)):
        return False
    # (of a switch, a part about what it switches, "Timber for the decking comes from Jewson"
    # of "We're switching to Travis Perkins for the timber", or one giving a name as its value,
    # "Our drugs come from Centaur" of "We've signed with Covetrus now")
    if _switches(text, entry) and (
        (_stems(part) & _stems(text)) - _STOP_STEMS - _LOOSE
        or _names_a_value(part, set(names) & unsaid)
    ):
        return False
    return not (supersedes(new, entry_frame(part)) or refills(text, part, told=True))


#: What an update says it leaves as it was: "same domain", "same hours", "same room".
_SAME = re.compile(r"\bsame ([a-z]{3,})\b", re.I)


def _kept_same(message: str) -> set[str]:
    """The stems of what ``message`` says stays as it was ("same domain": "domain")."""
    return {root(m.lower()) for m in _SAME.findall(message)} - _LOOSE - _STOP_STEMS


def _in_place(
    prefix: str,
    said: list[str],
    new: Frame,
    text: str,
    gone: set[str] | None = None,
    ending: bool = True,
) -> str:
    """What the one sentence ``said`` of an entry (after ``prefix``, the speaker's name before
    it) says once ``text`` (frame ``new``) outdates it: only the parts of it the update outdates
    (:func:`_parts`: "Mia has a peanut allergy, rob does the school run on tuesdays" keeps the
    allergy) are replaced, each by :func:`_reworded`, and the parts that name someone the
    message says went (``gone``) go; where no rule says which, the parts sharing a word with the
    update (not its speaker's name) when every other part has a verb of its own; when no part
    alone is outdated, or one has no subject of its own, or a part after it leans on it, or the
    message ends what the entry is about (``ending``), the sentence reworded, or ``text``."""
    if len(said) != 1:
        return text
    parts = _parts(said[0])
    body = _body(text).rstrip(" .")
    outdated = [
        i
        for i, (part, _) in enumerate(parts)
        if supersedes(new, entry_frame(part))
        or refills(text, part, told=True)
        or read_slot(part).names & (gone or set())  # "My staff is Callum", who left
    ]
    if not outdated:
        # the one part holding another value of a kind the update gives ("40 short films"
        # of "cut the programme to 32 shorts")
        given = {(m.kind, m.value) for m in measures(text)}
        valued = [
            i
            for i, (part, _) in enumerate(parts)
            if any(
                m.kind in {k for k, _ in given} and (m.kind, m.value) not in given
                for m in measures(part)
            )
        ]
        outdated = valued if len(valued) == 1 else []
    if not outdated and len(parts) > 1:
        # nor that: the parts sharing a word with the update, where every other part says
        # something of its own, with a verb ("labels from Uline, 2x1 thermal" of "printer is a
        # Zebra ZD421 in the back office, labels from Uline, 2x1 thermal", updated by "We get
        # labels from Sticker Mule now, Uline's 2x1 was backordered")
        words = _telling_stems(body)  # (not the speaker's name before the update)
        sharing = [i for i, (part, _) in enumerate(parts) if _stems(part) & words]
        others = [part for i, (part, _) in enumerate(parts) if i not in sharing]
        if sharing and others and all(has_verb(WORD.findall(p)) for p in others):
            outdated = sharing
    kinds = {m.kind for m in measures(text)}

    def leans(part: str) -> bool:
        # "she does piano on thursdays"; "setup 29 to 30 April" after "the fair is on 2 May",
        # moved: a part without a verb, holding a value of a kind the update gives; "the hall
        # flooded": told in the past, why the part before it is so; a part with no subject
        words = WORD.findall(part)
        verbless = not has_verb(words)
        return (
            bool(_LEANING_PART.match(part))
            or any(past(w.lower()) for w in words)
            or (verbless and any(m.kind in kinds for m in measures(part)))
            # "comes every 6 weeks", "from the sawmill Ciresa": no subject of its own
            or bool(words and is_verb(words[0]))
            or (verbless and bool(words) and words[0].lower() in lx.STOP_WORDS)
            # "18+ with the bar open" after "fridays after 8pm are adults-only": a value of it
            or bool(words and words[0][:1].isdigit())
        )

    # (an entry this message ends, "the quiz league runs monday nights, 8 teams" of "quiz
    # league folded", goes as a retirement takes it; "is £150 plus mileage" of "My fee for a
    # private booking, ..., is £150": an outdated part with no subject of its own)
    # (nor one that a part after it goes on from: "Atkinson pays on the day now, haddock no
    # salt, pays on his tab at the end of the month")
    hangs = (
        ending
        or any(
            bool((first := WORD.findall(parts[i][0])[:1]) and is_verb(first[0])) for i in outdated
        )
        or any(
            leans(part)
            for j, (part, _) in enumerate(parts)
            if j > outdated[0] and j not in outdated
        )
        if outdated
        else False
    )
    if not outdated or len(outdated) == len(parts) or hangs:
        return _reworded(prefix + said[0], text) or text
    if outdated[0] == 0 and not prefix:
        prefix = _named_by(text)
    out = ""
    for i, (part, sep) in enumerate(parts):
        if i == outdated[0]:
            part = _reworded(part, text) or body
            first = WORD.findall(part)[:1]
            if out and first and first[0] in _OPENING_PRONOUNS:
                part = part[:1].lower() + part[1:]  # "..., we get glazes from Mayco now"
        elif i in outdated:
            continue
        out += (sep if out else "") + part.rstrip(" .")
    return _closed(prefix + out)


#: A pronoun opening a sentence, written in lower case when the sentence goes after a comma.
_OPENING_PRONOUNS = frozenset({"We", "They", "He", "She", "It", "Our", "Their", "His", "Her"})
#: A part of a sentence that leans on the one before it: "she does piano on thursdays".
_LEANING_PART = re.compile(r"^(?:" + "|".join(sorted(lx.LEANING_OPENERS)) + r")\b", re.I)
_PART_BREAK = re.compile(r"[,;]\s+")


def _parts(sentence: str) -> list[tuple[str, str]]:
    """The parts of ``sentence`` a comma or a semicolon puts apart, each with what put it apart
    from the one before ("", then ", "), where each part says something of its own: a part
    of one or two words is an item of a list with the next ("Jake, Chloe and Ruby do
    Saturdays"), and no value is cut ("Mondays, Tuesdays and Fridays")."""
    inside = [
        (at, at + len(m.said))
        for m in measures(sentence)
        if (at := sentence.find(m.said)) >= 0 and "," in m.said
    ]
    # (nor what brackets hold: "Danny Diamond (singer, the owners love him) on Saturdays")
    inside += [(m.start(), m.end()) for m in re.finditer(r"\([^()]*\)", sentence)]
    cuts = [
        m for m in _PART_BREAK.finditer(sentence) if not any(a <= m.start() < b for a, b in inside)
    ]
    out: list[tuple[str, str]] = []
    pos, sep = 0, ""
    for m in cuts:
        if len(sentence[pos : m.start()].split()) < 3:
            continue  # "Jake, Chloe and Ruby ...": with the next
        out.append((sentence[pos : m.start()], sep))
        pos, sep = m.end(), m.group(0)
    if out and len(sentence[pos:].split()) < 2:
        return [(sentence, "")]
    out.append((sentence[pos:], sep))
    return out


def _reworded(part: str, text: str) -> str | None:
    """``part`` (of an entry) with the one value ``text`` gives in place of its own, when
    ``text`` says nothing else of its own ("jen's doing mondays and wednesdays now" of "Jen
    does the school run on tuesdays and thursdays" -> "Jen does the school run on mondays and
    wednesdays now"): what the value is of stays said. None otherwise."""
    day = {"weekday": "days", "days": "days"}
    # (not a count: "25 white" is not all of "25 white rhino")
    news = [m for m in measures(text) if _find(part, m.said) < 0 and not m.kind.startswith("count")]
    kinds = {day.get(m.kind, m.kind) for m in news}
    olds = [
        m for m in measures(part) if day.get(m.kind, m.kind) in kinds and _find(text, m.said) < 0
    ]
    if len(news) != 1 or len(olds) != 1:
        return None
    mine, theirs = read_slot(text), read_slot(part)
    held = theirs.words | theirs.names | theirs.head
    if (mine.words | mine.names | mine.head) - held - _LOOSE - _STOP_STEMS:
        return None  # it says more than the new value, or of someone else
    at = _find(part, olds[0].said)
    out = part[:at] + news[0].said + part[at + len(olds[0].said) :]
    if _NOW_SAID.search(text) and not _NOW_SAID.search(part):
        end = len(out.rstrip(" .!"))
        out = f"{out[:end]} now{out[end:]}"  # "... on mondays and wednesdays now"
    return out


_NOW_SAID = re.compile(r"\bnow\b", re.I)


def _who_they_are(entry: str, names: frozenset[str]) -> bool:
    """Whether ``entry`` says who one of ``names`` is to someone ("Helen is my supervisor",
    "Marco's assistant is Giulia", "Kofi, our SRE, ..."): what they are, said with "my", "our",
    "the" or someone's, which news of them ("Helen got me an extension") leaves true."""
    body = strip_source(entry)
    for name in names:
        n = re.escape(name)
        if re.search(
            rf"(?<![\w'-]){n}\w*(?:'s|\s+is|\s+was|,)\s+(?:{_WHOSE})\s+\w", body, re.I
        ) or re.search(rf"\b(?:{_WHOSE})\s+(?:[\w-]+\s+){{0,3}}(?:is|was)\s+{n}", body, re.I):
            return True
    return False


_WHOSE = r"my|our|the|his|her|their|(?-i:[A-Z])\w+'s"
#: What says that who someone is has changed: they left, were replaced, or are said to be
#: something now ("Helen is no longer my supervisor", "Giulia went back to Italy").
_WHO_CHANGED = re.compile(
    r"\b(?:left|leaving|leaves|moved\s+(?:away|out|back|abroad|on|to|house|jobs?)|went back|"
    r"gone back|going back|resigned|resigning|handed in|passed away|died|let go|fired|sacked|"
    r"replaced|replacing|took over|taken over|taking over|new|instead)\b"
    # "Helen is now my co-supervisor", "Dev's our lead now" (not "it's the 20th now")
    r"|(?<!\bit)(?:\s+is|'s)\s+now\s+(?:my|our|the|a|an)\b"
    r"|(?<!\bit)(?:\s+is|'s)\s+(?:my|our|the)\s+(?:new\s+)?[\w-]+\s+now\b"
    r"|\bit's\s+(?-i:[A-Z])\w+\s+now\b|(?:\s+is|'s)\s+not\s+(?:my|our|the)\b",
    re.I,
)


def _changes_who(text: str) -> bool:
    """Whether ``text`` says that who someone is has changed (:data:`_WHO_CHANGED`), or ends
    something (:data:`_ENDS`)."""
    return bool(_WHO_CHANGED.search(text) or _ENDS.search(text))


def _listed(entry: str) -> set[str]:
    """The people ``entry`` says together in a list as the subject of a part, before its verb
    ("jake and chloe do ...", "Tom, Aisha and Ben are ..."; not "the site surveys and
    measures the trees")."""
    body = _body(entry)
    return {
        w
        for m in _LISTED.finditer(body)
        if (m.start() == 0 or body[: m.start()].rstrip().endswith((",", ";", ".")))
        and (after := WORD.findall(body[m.end() :])[:1])
        and is_verb(after[0])
        for w in re.split(r",\s+|\s+(?:and|&)\s+", m.group(0))
        # (not a thing: "fixtures and membership go through me")
        if w.lower() not in lx.STOP_WORDS | lx.PRONOUN_SUBJECTS
        and not w.lower().endswith(lx.NOUN_ENDINGS)
    }


def _list_swapped(text: str, entry: str) -> bool:
    """Whether ``entry`` says what ``text`` says with one person of its list in another's
    place ("jake and ruby do the saturday shifts" of "jake and chloe do the saturday shifts"),
    as :meth:`_Memory._one_of_a_list` writes it."""
    mine, theirs = _listed(text), _listed(entry)
    gone, came = sorted(mine - theirs), theirs - mine
    if len(mine) < 2 or not 1 <= len(gone) <= 3 or len(gone) != len(came):
        return False
    # (one swap after another: "tom and ruby do ..." of "jake and chloe do ...")
    for order in permutations(sorted(came)):
        swapped = _body(text)
        for old, new in zip(gone, order, strict=True):
            swapped = re.sub(rf"\b{re.escape(old)}\b", new, swapped)
        if swapped.rstrip(" .").casefold() == _body(entry).rstrip(" .").casefold():
            return True
    return False


def _swap_outdated(text: str, entry: str) -> bool:
    """Whether ``entry``, a later list of people, outdates ``text``, which puts someone in the
    place of one of such a list ("ruby's replaced chloe on saturdays" of "tom and ruby do the
    saturday shifts", after Tom replaced Jake too, or Chloe came back): ``text`` says a swap,
    names one of the list, and shares another word with it."""
    listed = {w.lower() for w in _listed(entry)}
    if len(listed) < 2 or not _says_swap(text):
        return False
    named = {w.lower() for w in re.findall(r"[A-Za-z][\w-]*", _body(text))} & listed
    shared = _stems(_body(text)) & _stems(_body(entry))
    return bool(named) and bool(shared - _STOP_STEMS - {root(n) for n in named})


def _says_swap(text: str) -> bool:
    """Whether ``text`` says that someone went or was replaced, or that another does what they
    did ("ruby's covering", "doing her saturdays"): a swap in a list of people."""
    return _changes_who(text) or bool(_STANDS_IN.search(text))


def _traded(text: str, entry: str) -> bool:
    """Whether ``text`` says the speaker and someone ``entry`` names swapped what they do ("me
    and rob swapped school runs, he does tuesdays now", "Ali and I swapped shifts" of "Ali does
    the early shift, I do lates"): it shares a word with ``entry`` besides that name, so the
    entry said who did what before the swap."""
    other = _traded_with(text)
    if not other or not re.search(rf"\b{re.escape(other)}\b", _body(entry), re.I):
        return False
    shared = _stems(_body(text)) & _stems(_body(entry)) - _STOP_STEMS
    return bool(shared - {root(other.lower()), "swap"})


def _traded_with(text: str) -> str | None:
    """Whom ``text`` says the speaker swapped what they do with (:data:`_TRADED`), or None."""
    m = _TRADED.search(strip_source(text))
    return (m["a"] or m["b"]) if m else None


def _untraded(entry: str, text: str) -> str:
    """``text``, after the parts of ``entry`` that the swap it tells leaves true: those that
    name neither the speaker nor the one they swapped with ("Mia has a peanut allergy" of "Mia
    has a peanut allergy, rob does the school run on tuesdays, I do mondays")."""
    other = _traded_with(text) or ""
    speaker = _named_by(text).rstrip(": ")
    who = "|".join(re.escape(w) for w in ("I", "I'm", "me", "my", other, speaker) if w)
    kept = [
        part.strip(" .")
        for _, _, said in sentences(_body(entry))
        for part, _ in _parts(said)
        if not re.search(rf"(?<![\w'-])(?:{who})(?![\w'-])", part, re.I)
    ]
    return f"{_named_by(entry)}{_closed(', '.join(kept))} {text}" if kept else text


#: The speaker and someone swapping what they do: "me and rob swapped", "Ali and I swapped".
_TRADED = re.compile(
    r"(?:^|[.!?]\s+|:\s+)(?:(?P<a>[A-Za-z][\w-]*)\s+and\s+(?:I|me)|me\s+and\s+"
    r"(?P<b>[A-Za-z][\w-]*))\s+(?:have\s+|'ve\s+)?(?:swapped|switched|traded)\b",
    re.I,
)
#: People said together: "jake and chloe", "Tom, Aisha and Ben".
_LISTED = re.compile(r"\b[A-Za-z][\w'-]*(?:,\s+[A-Za-z][\w'-]*)*\s+(?:and|&)\s+[A-Za-z][\w'-]*\b")
#: Whoever does something now, as the subject of a clause: "ruby's doing", "so Priya has taken
#: over", "it's ruby now".
_NEW_SUBJECT = re.compile(
    r"(?:^|[,;]\s*|\b(?:so|and|but|now)\s+)(?P<new>[A-Za-z][\w-]+)(?:'s|\s+(?:is|has|will|"
    r"does|takes|took|covers|replaced|replaces))\b|\bit's\s+(?P<it>[A-Za-z][\w-]+)\s+now\b"
)
#: Someone doing what another did: "ruby's covering", "doing her saturdays".
_STANDS_IN = re.compile(r"\b(?:covering|covers|doing\s+(?:her|his|their))\b", re.I)


def _body(text: str) -> str:
    """A statement without its source and the speaker's name before it."""
    return SPEAKER_NAMED.sub("", strip_source(text))


def _named_by(text: str) -> str:
    """The speaker's name before a statement, as written ("Sam: "), or ""."""
    m = SPEAKER_NAMED.match(strip_source(text))
    return m.group(0) if m else ""


# What a value update may share with an entry without being about the same thing.
_STOP_STEMS = frozenset(root(w) for w in lx.STOP_WORDS)
_LOOSE = (
    frozenset(lx.GENERIC_WORDS)
    | frozenset(root(w) for w in lx.UPDATE_MARKERS)
    | frozenset(("down", "up"))  # "down to 3 calls", "up to £40"
)
# A statement that leans on the one before: "it's $4,200 now", "so 26 March now".
_LEANS = re.compile(
    r"^\W*(?:(?:oh\s+)?(?:so|and|but|wait|sorry|no|actually|oops|ah)\b[\s,]*)*"
    r"(?:it|it's|its|that|that's|this|they|they're|which|now|make that|\d|[$£€]"
    r"|chang(?:e|ing) that|scratch that|correction)",
    re.I,
)


# "..., it's $4,200 now": the value is said of a pronoun, whose referent came before.
_PRONOUN_VALUE = re.compile(r"\b(?:it|that)(?:'s|\s+is|\s+was)\s+(?:now\s+)?[$£€\d]", re.I)


#: ("Danny's also switched to Thursdays": a change, told beside another; "closed also on
#: Tuesday, only Wednesday to Sunday": a day taken away)
_MOVED = re.compile(
    r"\b(?:switch|switched|switching|moved|moving|move|changed|changing|swapped|instead|close|"
    r"closed|closing|shut|only|off|no longer|not)\b",
    re.I,
)
#: "we open also Monday", "Kwame does Sundays too": said inside a clause, not opening it as a
#: turn of the talk ("Also, ...").
_ALSO_ON = re.compile(r"(?<=\w)\W+(?:also\b|as well\b|too(?=\s*(?:$|[,.;!)]|now\b|from\b)))", re.I)


@functools.lru_cache(maxsize=1024)
def _added_days(text: str) -> frozenset[str]:
    """The days ``text`` says are added, each with its own hours, not moved ("From May we
    open also Monday, 8 to 4", "Kwame does Sunday lunches too, 12 till 3"): such a statement
    outdates no entry that names other days only (:func:`_adds_to`). Empty for any other."""
    body = strip_source(text)
    # (with its own hours: "we open Tuesdays as well" alone widens the days an entry gives)
    if not _ALSO_ON.search(body) or _MOVED.search(body):
        return frozenset()
    if not re.search(r"\d", CALENDAR.sub(" ", body)):
        return frozenset()
    return frozenset(_day(m[0]) for m in _WEEKDAY.finditer(body))


def _adds_to(days: frozenset[str], entry: str) -> bool:
    """Whether a statement adding ``days`` (:func:`_added_days`) leaves ``entry`` as it is:
    the entry names none of them ("fridays she's home with the twins" is outdated by "I'm
    doing fridays too now, 9 till 1")."""
    return bool(days) and not days & {_day(m[0]) for m in _WEEKDAY.finditer(strip_source(entry))}


def _day(word: str) -> str:
    return word.lower()[:3]


_WEEKDAY = lx.phrases([*lx.WEEKDAYS, *lx.WEEKDAYS_SHORT])


def _gives_up(st: Statement) -> bool:
    """Whether a retirement says a named person gave something up ("Mila quit swimming"), as
    against a thing or person that ended ("Tobias retired", "Pipedrive is gone")."""
    owner = set(st.frame.owner)
    if re.search(
        r"\b(?:cancel+(?:ed|ing)|scrapp(?:ed|ing)|closed|cut|shut|axed|discontinued|deleted"
        r"|removed|killed|killing|disbanded|ditched|binned|got rid of|getting rid of)\b",
        st.text,
        re.I,
    ):
        # "Leadership cancelled the code freeze", "Hannah's deleted the Twitter account": ended
        # for everyone
        return False
    if re.search(r"\b(?:we|i)\s+(?:don't|dont|do not|no longer)\b", st.text, re.I):
        return False  # "Connexxion we don't use anymore": the speaker's, a name first
    return st.subject_kind == "name" and bool(owner) and not owner & set(st.old.lower().split())


#: The words just before a thing a switch names, that point at one already known: "replaced
#: the Bose", "swapped our Transit".
_THE_THING = re.compile(r"\b(?:the|our|my)\s+$", re.I)


def _owners_meet(new: Frame, old: Frame) -> bool:
    """Whether a statement's owner may outdate an entry's: the same person or group, or an
    entry of no one or of the team."""
    return new.same_owner(old) or not old.owner or old.owner == ("we",)


def _positions(text: str) -> set[tuple[str, int]]:
    """The messages the sources of ``text`` cite, as (conversation, position)."""
    return {(c, p) for c, start, end in parse_sources(text) for p in range(start, end)}


def _later_conversation(source: str, entry: str) -> bool:
    """Whether a statement cited by ``source`` comes from a conversation the ``entry`` does
    not cite: said another day, not beside it (two values said together are often both true:
    "senior fee £10, students £5")."""
    return not {c for c, _, _ in parse_sources(source)} & {c for c, _, _ in parse_sources(entry)}


def _cites(text: str, source: str) -> bool:
    return source in text


def _with_full_name(entry: str, speaker: str, name: str) -> tuple[str, bool]:
    """``entry`` naming the speaker by the full ``name`` they gave, where it opens with their
    first name ("Ines runs ...", "Ines's team ...", "Ines: We ..."), and whether it did."""
    if name.casefold() in entry.casefold():
        return entry, True
    for after in (" ", "'s ", ": ", ", "):
        if entry.startswith(speaker + after):
            return name + entry[len(speaker) :], True
    return entry, False


def _closed(text: str) -> str:
    """``text`` ending a sentence, so that another can follow it."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _purpose(text: str) -> frozenset[str]:
    """The words of what a thing is used for: "... for metrics and logs" -> {metrics, logs}."""
    m = re.search(r"\bfor\s+([^,;.()]+)", strip_source(text), re.I)
    return frozenset(m.group(1).lower().replace(" and ", " ").split()) if m else frozenset()


def _without(text: str, thing: str) -> str | None:
    """``text`` with ``thing`` taken out of a list it is part of ("We pay for Netflix and
    Disney+" -> "We pay for Disney+"), or None when it is not in a list."""
    # A first name takes its surname and what the entry says of them in brackets along:
    # "Tariq" out of "Ola Brandt (nights) and Tariq Aziz (days)".
    listed = _item_without(text, thing)
    if listed is not None:
        return listed
    t = re.escape(thing) + r"(?:\s+(?-i:[A-Z])[\w'-]+)?(?:\s*\([^)]*\))?"
    for pattern in (rf"\b{t}\s+(?:and|&)\s+(?P<next>[\w'-]+)", rf",?\s+(?:and|&)\s+{t}(?![\w+])"):
        m = re.search(pattern, text, flags=re.I)
        # Only where "and" joins two things: "in Scrivener and do edits in Google Docs" joins
        # two doings, and taking "Scrivener and" out would break the sentence.
        if m is None or ("next" in m.groupdict() and is_verb(m["next"])):
            continue
        shorter = re.sub(r"\s+", " ", text[: m.start()] + " " + text[m.end() :]).strip()
        if "next" in m.groupdict():
            shorter = re.sub(r"\s+", " ", text[: m.start()] + m["next"] + text[m.end() :])
        if not mentions(shorter, thing):
            return re.sub(r"\s+([.,;:!?])", r"\1", shorter).strip()
    return None


def _item_without(text: str, thing: str) -> str | None:
    """``text`` with the item that names ``thing`` taken out of a list of three or more
    ("We accept sealed food, bread, and home-cooked food" -> "We accept sealed food and
    bread"), or None. The items after the first are short and verbless, so that the commas
    join things, not clauses; the first item is taken out only where a heading ends before it
    ("Events we run: kitten yoga, quiz night, and brunch"), since nothing else says where it
    starts."""
    who = SPEAKER_NAMED.match(text)
    lead = who.group(0) if who else ""
    said = [s for _, _, s in sentences(text[len(lead) :])]
    for n, sentence in enumerate(said):
        body = sentence.rstrip().rstrip(".!")
        parts = re.split(r",\s+", body)
        if len(parts) < 3:
            continue
        items = [re.sub(r"^(?:and|or)\s+", "", p, flags=re.I) for p in parts]
        at = [i for i, p in enumerate(items) if mentions(p, thing)]
        if len(at) != 1 or any(mentions(p, thing) for p in said[:n] + said[n + 1 :]):
            continue
        rest = [p for i, p in enumerate(items[1:], start=1) if i != at[0]]
        named = _CONDITION.split(items[at[0]], maxsplit=1)[0]  # "... if it's labelled"
        if any(_clause(p) or len(p.split()) > 8 for p in rest) or (at[0] and _clause(named)):
            continue  # clauses, not things ("a RIB of 6 metres, the skipper is João Reis")
        head = parts[0]
        if at[0] == 0:
            colon = head.rfind(": ")
            if colon < 0:
                continue  # where the first thing starts is not known
            if mentions(head[:colon], thing):
                continue  # the heading names it: "Sunday roast cruise on Dabchick: two hours ..."
            head, rest = head[: colon + 2] + rest[0], rest[1:]
        kept = [head, *rest]
        # the last item keeps the "and" the list ended on
        ended = re.match(r"(?:and|or)\s", parts[-1], re.I)
        joint = (", and " if len(kept) > 2 else " and ") if ended else ", "
        listed = kept[0] if len(kept) == 1 else f"{', '.join(kept[:-1])}{joint}{kept[-1]}"
        said[n] = f"{listed}{sentence.rstrip()[len(body) :] or '.'}"
        return f"{lead}{' '.join(s.strip() for s in said)}"
    return None


def _why_then(sentence: str, text: str) -> bool:
    """Whether ``sentence``, after the first of an entry, says in the past why its value
    changed, naming what ``text`` does not ("Northern Sawmill put their prices up 40%" beside
    "boards now come from Hallam Timber"): the update keeps it."""
    words = [w.lower() for w in re.findall(r"[\w']+", sentence)]
    now = any(w in ("is", "are", "am") or w.endswith(("'s", "'re", "'m")) for w in words)
    told = not now and any(past(w) for w in words)  # (not "we're a mixed team, practice is")
    return told and bool(_capitals(sentence) - _stems(text))


def _no_more(text: str, entry: str, replied: str = "") -> bool:
    """Whether ``text`` gives no name or value ``entry`` does not ("Thursday", "9pm" of
    "Thursdays ... till 9"), in no more words than it; a name or value of ``replied``, the
    user's message it answers, is not its own ("from 1 May" of "cutting crown turnaround to 5
    working days from 1 May", written into "crowns 7 working days, dentures 10")."""
    theirs = read_slot(f"{entry} {replied}")
    held = _stems(entry) | _stems(replied) | set(re.findall(r"\d+", f"{entry} {replied}"))
    held |= theirs.values | theirs.names
    mine = read_slot(text)
    for given in (*mine.names, *mine.values):
        digits = set(re.findall(r"\d+", given))
        if not (_stems(given) <= held or (digits and digits <= held)):
            return False
    return len(_content(text)) <= len(_content(strip_source(entry)))


def _values_held(text: str, entry: str) -> bool:
    """Whether ``text`` gives values (:func:`.slots.measures`) and ``entry`` holds each, with
    more besides: another value, or a name ``text`` leaves out while giving none of its own
    ("Renewal is now 20 May" of "insurance is with Sportscover, ... brought the renewal
    forward to 20 May"). Said of it, ``text`` changes nothing."""
    given = {(m.kind, m.value) for m in measures(text)}
    held = {(m.kind, m.value) for m in measures(entry)}
    if not given or not given <= held:
        return False
    mine, theirs = read_slot(text).names, read_slot(entry).names
    words = _stems(entry)
    return given < held or (bool(theirs - mine) and all(_stems(n) <= words for n in mine))


def _clause(part: str) -> bool:
    """Whether a part of a list is a clause ("Lou does those", "we deliver"), not a thing
    ("re-charring and repairs", "planters"): a subject pronoun, an auxiliary, "do" or a
    contracted "is" or "are"."""
    words = {w.lower() for w in re.findall(r"[\w']+", part)}
    return bool(words & (AUX | _SUBJECTS) or any(w.endswith(("'s", "'re")) for w in words))


_SUBJECTS = lx.words("i we they he she it you does do did")
_CONDITION = re.compile(r"\s(?:if|when|unless|as long as|provided)\s", re.I)


def _other_parts(entry: str, thing: str) -> str | None:
    """``entry`` without the parts of its sentences (:func:`_parts`) that name ``thing``, nor
    those after one of them that lean on it (with no verb, "3:15 to 4:15", or pointing back,
    "Bea does those"), with its speaker, without its sources; None when none names it or
    none is left."""
    body = strip_source(entry)
    lead = _named_by(body)
    words = _stems(thing) - _STOP_STEMS
    kept, cut = [], False
    for _, _, sentence in sentences(body[len(lead) :]):
        gone = False  # whether the part before it in the sentence went
        for part, _ in _parts(sentence):
            named = mentions(part, thing) or bool(words and words <= _stems(part))
            leans = gone and (
                not has_verb(WORD.findall(part))
                or bool(_POINTS_BACK.search(part))
                or part.lstrip()[:1] in "£$€0123456789"  # "£9 a head": a value of it
            )
            if named or leans:
                cut, gone = True, True
            else:
                kept.append(part.strip(" .,;"))
                gone = False
    if not cut or not kept or len(_content(" ".join(kept))) < 3:
        return None
    return lead + " ".join(_closed(p[:1].upper() + p[1:]) for p in kept)


#: A word pointing back at what was said before it: "Bea does those".
_POINTS_BACK = re.compile(r"\b(?:it|its|them|those|these|that|they|their)\b", re.I)


def _other_sentences(entry: str, thing: str) -> str | None:
    """``entry`` without its sentences, or the clauses of a sentence joined by ", and", that
    name ``thing`` (in its words, in any order: "a beginners class saturday mornings" names
    "saturday beginners class"; where none names it, those that share a word with it), with
    its speaker, without its sources; None when every part goes, none does, or what is left
    says too little or is a verbless sentence."""
    body = strip_source(entry)
    who = SPEAKER_NAMED.match(body)
    lead = who.group(0) if who else ""
    pieces: list[tuple[str, bool]] = []  # (part, whether it is a whole sentence)
    for _, _, sentence in sentences(body[len(lead) :]):
        split = [p.strip() for p in re.split(r",\s+and\s+|;\s+", sentence) if p.strip()]
        pieces += [(p, len(split) == 1) for p in split]
    parts = [p for p, _ in pieces]
    # a whole sentence left must say something of its own: "2 days, pitch fee £350" leaned on
    # the sentence that goes (an item of a list joined by ", and" need not have a verb)
    verbless = {p for p, whole in pieces if whole and not any(is_verb(w) for w in p.split())}
    words = _stems(thing) - _STOP_STEMS
    kept = [p for p in parts if not (mentions(p, thing) or (words and words <= _stems(p)))]
    if len(kept) == len(parts):
        # found by likeness, not named: the parts that share a word with it ("champagne toast
        # at 25" of "the champagne add-on"), when others do not
        kept = [p for p in parts if not words & _stems(p)]
    if not kept or len(kept) == len(parts) or len(_content(" ".join(kept))) < 3:
        return None
    if verbless & set(kept):
        return None  # it leaned on what goes
    text = " ".join(_closed(p[:1].upper() + p[1:]) for p in kept)
    return f"{lead}{text}"


_LEANS_BACK = re.compile(r"(?:it|its|it's|they|they're|them|those)\b", re.I)
_GOES_NOW = re.compile(r"\b(?:now|just|these days|from now on)\b", re.I)
_COUNTS = lx.words("one two three four five six seven eight nine ten few several many")


def _why_it_ended(rest: str) -> bool:
    """Whether what follows a retirement says why it ended, in the past and naming no one
    ("we've folded the sunday side, couldn't raise eleven most weeks", "we've binned the
    tours, the insurance wanted £3k"): nothing to keep. What took its place is said in the
    present ("... Adaeze Obi does it now") or names someone, and is read."""
    words = re.findall(r"[\w']+", rest.lower())
    if read_slot(rest).names or {"i", "my", "we", "our", "i've", "we've"} & set(words):
        return False  # "bought my own digger, kubota u17": what the speaker did instead
    # (not a noun after a count: "two times late delivery this year")
    counted = {b for a, b in zip(["", *words], words, strict=False) if a.isdigit() or a in _COUNTS}
    verb = next((w for w in words if is_verb(w) and w not in counted), None)
    failed = {"couldn't", "wasn't", "weren't", "didn't", "wouldn't", "hadn't", "kept"}
    if {"now", "instead"} & set(words):
        return False  # "its bundled free with any gutter clear now": how it goes now
    if verb is None:
        # "we stop working with Smaakmakers, two times late delivery this year": a reason with
        # no verb; not what takes its place ("..., sandwiches only from now")
        return bool(words) and not {"only", "from", "going", "forward"} & set(words)
    return past(verb) or verb in failed


def _content(text: str) -> list[str]:
    return [w for w in re.findall(r"[\w'+-]+", text) if w.lower() not in lx.STOP_WORDS]


def _drop(text: str, thing: str) -> str:
    return re.sub(rf"\b{re.escape(thing)}\b", " ", SPEAKER_NAMED.sub("", text), flags=re.I)


def _new_name(text: str, entry: str, thing: str) -> str | None:
    """The one name ``text`` gives that ``entry`` does not hold (a run of capitalised words
    after the first word: "Front", "Help Scout"), or None."""
    body = strip_source(text)
    body = SPEAKER_NAMED.sub("", body)  # "Lin: ..." names the speaker
    found = re.findall(r"(?:(?<=\s)|^)(?-i:[A-Z][\w+.-]*(?:\s+[A-Z][\w+.-]*)*)", body)
    # the first word may be a capital only because it opens the sentence; two or more are a
    # name ("Maureen Dodds is treasurer now")
    # (a run does not go on past the end of a sentence: "Dunmore. They")
    pieces = [p for r in found for p in re.split(r"(?<=\.)\s+", r)]
    runs = [r.rstrip(".") for r in pieces if not (body.startswith(r) and " " not in r)]
    # ... and one word before a comma, said of whom it names ("Rhys, my son, is doing the
    # kilns"), is a name too
    named = re.match(r"(?-i:[A-Z][\w'-]+)(?=, (?:my|our|his|her|their|the)\b)", body)
    if named and named.group(0) not in lx.NAME_STOP:
        runs.insert(0, named.group(0))
    held = strip_source(entry).casefold()
    names = [
        r
        for r in runs
        if r.casefold() not in held
        and r.casefold() != thing.casefold()
        and not CALENDAR.fullmatch(r)
        and r.split()[0] not in lx.NAME_STOP
    ]
    return names[0] if len(names) == 1 else None


def _without_round_trips(
    ops: list[dict[str, Any]], holds: dict[str, str | None]
) -> list[dict[str, Any]]:
    """``ops`` without an entry of ``MEMORY.md`` removed and added again as it was, under the
    section that holds it (``holds``: each given entry's text, its section): the two change
    nothing but where it stands in its section, and a re-run that moved it would not be
    idle."""
    removed = {
        o["old"]: i for i, o in enumerate(ops) if o["action"] == "remove" and "path" not in o
    }
    dropped: set[int] = set()
    for i, o in enumerate(ops):
        if o["action"] != "add" or "path" in o or o["text"] not in removed:
            continue
        if holds.get(o["text"]) == o.get("section") and removed[o["text"]] not in dropped:
            dropped |= {i, removed[o["text"]]}
    return [o for i, o in enumerate(ops) if i not in dropped]


def _accepted(
    ops: list[dict[str, Any]], index: str, topics: dict[str, str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The operations the store will accept, in order, and a note for each one it would not.

    The reviewer plans its operations so that each names exactly one place; this is the guard
    for what the plan did not foresee, so that one bad operation never sinks the batch.
    """
    try:
        _simulate(ops, index, topics)
        return ops, []
    except ReverieError:
        pass
    kept: list[dict[str, Any]] = []
    notes: list[str] = []
    for op in ops:
        try:
            _simulate([*kept, op], index, topics)
        except ReverieError as exc:
            notes.append(f"dropped a {op['action']} the store would refuse: {exc}")
            continue
        kept.append(op)
    return kept, notes


def _files_after(
    ops: list[dict[str, Any]], index: str, topics: dict[str, str]
) -> dict[str, str | None]:
    """Every memory file given (``MEMORY.md`` and topics) after ``ops``, which the store's
    own pure apply accepts (see :func:`_accepted`)."""
    files: dict[str, str | None] = {INDEX: index, **topics}
    if ops:
        files.update(apply_batch(parse_batch({"operations": ops}), files.get).files)
    return files


def _simulate(ops: list[dict[str, Any]], index: str, topics: dict[str, str]) -> str:
    """``MEMORY.md`` after ``ops``, computed by the store's own pure apply (no I/O).

    Raises:
        ReverieError: the store would refuse ``ops`` (no match, ambiguous match, bad path).
    """
    if not ops:
        return index
    applied = apply_batch(
        parse_batch({"operations": ops}), lambda p: index if p == INDEX else topics.get(p)
    )
    new = applied.files.get(INDEX, index)
    return new or ""


class OfflineReviewer:
    """The built-in reviewer used when no model is configured (R8): rules, no network.

    ``review`` never raises on content: what it cannot read it skips, and says so in
    ``notes``. It makes no model call, so ``model_calls``, ``tokens_in`` and ``tokens_out``
    are 0.
    """

    def __init__(self, likeness: Likeness | None = None) -> None:
        self.likeness = likeness or SharedWords()

    def review(self, batch: ReviewInput) -> ReviewOutput:
        """Propose operations that bring the memory up to date with ``batch.turns``."""
        memory = _Memory.parse(batch.index, batch.topics)
        memory.likeness = self.likeness
        memory.sources = BatchSources(batch.turns)
        memory.said_at = {(t.conversation_id, t.position): t.time for t in batch.turns}
        memory.read_back_in = _read_backs(batch.turns)
        said_text = {(t.conversation_id, t.position): t.text for t in batch.turns}
        # of each such reply, the words (lower case) of the users' messages it reads back
        told_to: dict[tuple[str, int], set[str]] = {}
        for t in batch.turns:
            reply = memory.read_back_in.get((t.conversation_id, t.position))
            if reply is not None:
                told_to.setdefault(reply, set()).update(re.findall(r"[\w'-]+", t.text.lower()))
        skipped: Counter[str] = Counter()
        outcomes: Counter[str] = Counter()
        # per conversation: the last question, where, and who asked it
        asked: dict[str, tuple[int, str, str | None]] = {}
        people = frozenset(
            w for t in batch.turns if t.role == "user" for w in _display(t.author).lower().split()
        )
        blocks = _blocks(_turns(batch.turns))
        spelled = spellings(
            [*(t.text for t in batch.turns), batch.index, *batch.topics.values()], people
        )
        given = {(t.conversation_id, t.position) for t in batch.turns}
        opening: dict[str, int] = {}  # per conversation: the first position given
        heard: dict[str, set[tuple[str, int]]] = {}  # per conversation: user messages read
        introduced: dict[str, str | None] = {}  # per conversation: whom the last message named
        for t in batch.turns:
            c = t.conversation_id
            opening[c] = min(opening.get(c, t.position), t.position)
        for at, (block, listener) in enumerate(blocks):
            turn = block[-1]
            if turn.role not in {"user", "assistant"}:
                skipped["tool output"] += 1  # review never reads tool logs (R5)
                continue
            # A message not given sits right before this one: tool output (R5), which an
            # assistant message after it reports ("shader_cache.bin is missing").
            after_tool = turn.role == "assistant" and (
                turn.position > opening[turn.conversation_id]
                and (turn.conversation_id, turn.position - 1) not in given
            )
            if turn.role == "assistant" and _corrected(turn, blocks[at + 1 : at + 2]):
                skipped["corrected by the user"] += 1  # a wrong read-back ("no, the 28th!")
                continue
            if turn.role == "user" and _declined(turn, blocks[at + 1 : at + 2]):
                skipped["private, declined"] += 1  # "I shouldn't keep patient details"
                continue
            conv = turn.conversation_id
            # Consecutive messages of one author are read as one text (a sentence may lean on
            # the message before); each entry cites the messages its sentences came from.
            raw = "\n".join(t.text for t in block)
            # Names a lower-case message shares with the batch or memory, spelled as there.
            text = recase(raw, spelled) if turn.role == "user" else raw
            ends = [0]
            for t in block:
                ends.append(ends[-1] + len(t.text) + 1)
            question_at, question, asker = asked.pop(conv, (block[0].position, "", None))
            put = _question_put(turn.text)
            if put:
                asked[conv] = (turn.position, put, turn.author)
            secret_spans = [(f.start, f.end) for f in find_credentials(raw)]
            secret_spans += secret_values(raw)
            before = blocks[at - 1][0] if at else []
            answered = _answered(turn, before)
            memory.begin_message(
                text,
                people,
                frozenset((t.conversation_id, t.position) for t in block),
                replying_to=frozenset((t.conversation_id, t.position) for t in answered),
                answering=_reply_before(turn, before),
                replied="\n".join(t.text for t in answered),
                heard=frozenset(heard.get(conv, ())) if turn.role == "assistant" else frozenset(),
            )
            if turn.role == "user":
                heard.setdefault(conv, set()).update((conv, t.position) for t in block)
            speaker = _display(turn.author) if turn.role == "user" else _ASSISTANT
            said_units = units(text, turn.role, speaker)
            told = frozenset(told_to.get((conv, turn.position), ()))
            # The speaker's full name, said in a clause of its own ("My name is Ines Duarte
            # and I run ..."): the next entry about them carries it.
            named: str | None = None
            # "he is allergic to penicillin" after "Albert Fenn, 88, dementia": the one person
            # the user's message before named is who "he" or "she" opening this one is.
            referent = introduced.get(conv) if turn.role == "user" else None
            if turn.role == "user":
                introduced[conv] = _introduced(text, speaker)
            # "His NHS number is 485 777 3456. Actually don't save that.": the sentence a
            # withdrawal follows is not kept either.
            withdrawn = {
                at - 1 for at, (_, _, t) in enumerate(said_units) if withholds(t, alone=True)
            }
            # The learned second reading (statements.second_reading) is left out of a message
            # the assistant reads back in words of its own ("Noted: prints over 4 hours must
            # be booked", not a bare "Noted.") where the rules keep something of the read-back
            # (not of "35p/mile from April", which they keep nothing of); out of one that
            # opens by correcting what was said before ("no. 40 hogsheads. end of April"); and,
            # once the message ended something, out of what follows (why it ended, what
            # replaces it).
            second_read = turn.role == "user" and not CORRECTING.match(raw)
            replies = [r for t in block if (r := memory.read_back_in.get((conv, t.position)))]
            second_read = second_read and not any(
                _reads_back_words(said_text.get(r))
                and _keeps_some(said_text.get(r), told_to.get(r))
                for r in replies
            )
            for at_unit, (start, end, sentence) in enumerate(said_units):
                if at_unit in withdrawn:
                    skipped["secret"] += 1
                    continue
                held = [(a - start, b - start) for a, b in secret_spans if a < end and start < b]
                # What a sentence that holds a secret says beside it ("the portal's Brixham
                # Seafoods, login ... pw ..."), where the sentence is the message's own text
                # so that the secret's place in it is known; else nothing of it.
                beside = [sentence]
                if held and (after_tool or sentence != text[start:end]):
                    beside = []
                elif held:
                    beside = beside_secret(sentence, held)
                if not beside:
                    skipped["secret"] += 1
                    continue
                if referent and at_unit == 0 and not held:
                    sentence = _HE_OR_SHE.sub(referent, sentence, count=1)
                    beside = [sentence]
                if after_tool:
                    # What the tool printed, said again ("Total NIA is 903.4 m2", "Room 12
                    # has amlodipine daily"): a report of output review never reads (R5). What
                    # holds beyond this output ("a checksum mismatch usually means a proxy")
                    # is the assistant's own knowledge, read as any other sentence.
                    sentence = beyond_output(sentence)
                    beside = [sentence]
                    if not sentence:
                        skipped["tool output"] += 1
                        continue
                first = next(i for i in range(len(block)) if start < ends[i + 1])
                last = next(i for i in range(len(block)) if end <= ends[i + 1])
                source = format_source(conv, block[first].position, block[last].position + 1)
                pending = [
                    p
                    for part in beside
                    for c in clauses(part)
                    for p in pieces(c, role=turn.role, speaker=speaker)
                ]
                while pending:
                    clause = pending.pop(0)
                    nxt = pending[0] if pending else None
                    if nxt is None and at_unit + 1 < len(said_units):
                        nxt = said_units[at_unit + 1][2]
                    own = full_name(clause, speaker) if turn.role == "user" else None
                    if own is not None and nxt is not None and about_speaker(nxt):
                        named = own
                        skipped["introduction"] += 1
                        continue
                    found = read(
                        clause, role=turn.role, speaker=speaker, question=question, told=told
                    )
                    ended = pending[0] if pending and turn.role == "user" else None
                    so = rf"{re.escape(clause)},?\s+so\s+{re.escape(ended or '')}"
                    whole = re.search(so, sentence) if found == "no durable fact" else None
                    if ended and whole:
                        # "the back fridge runs warm, so we keep milk in the front one"
                        joined = because(whole[0], clause, ended, role=turn.role, speaker=speaker)
                        found = joined or found
                        if joined is not None:
                            pending.pop(0)
                            ended = pending[0] if pending else None
                    if ended and not isinstance(found, str) and _ended_habit(clause, ended):
                        # "we used to do home visits, we've stopped": the habit and its end
                        # are one fact, kept whole (alone, the first says it still holds).
                        found = replace(found, text=f"{found.text.rstrip(' .,;')}, but {ended}")
                        pending.pop(0)
                    gone = _ended_by_it(clause, ended) if ended else None
                    if gone and not isinstance(found, str) and found.kind == "fact":
                        # "The second Sunday work parties are off, we've dropped them": what
                        # the clause is about is what ended.
                        found = replace(found, kind="retire", old=gone, section=DECISIONS)
                        pending.pop(0)
                    self_asked = asker is not None and asker == turn.author
                    if self_asked and not isinstance(found, str) and found.kind == "answer":
                        # the speaker's own question, answered after a reply they corrected
                        found = replace(found, meta={**found.meta, "own": "yes"})
                    if isinstance(found, str):
                        fixed = None
                        # "£3.50! Since March.": an exclamation that gives a value
                        valued = found == "small talk" and _VALUE.search(clause)
                        if turn.role == "user" and (found in _CORRECTABLE or valued):
                            fixed = memory.value_fix(clause, source)
                        refused = turn.role == "user" and found == "no durable fact"
                        if fixed is None and refused:
                            fixed = memory.retired_replaced_by(sentence, speaker, source)
                        if fixed is not None:
                            outcomes[fixed] += 1
                            continue
                        # what the rules found nothing in, read by the learned model
                        second = (
                            second_reading(clause, speaker) if refused and second_read else None
                        )
                        if second is None:
                            skipped[found] += 1
                            continue
                        found = second
                    if found.kind == "retire":
                        second_read = False
                        retired = memory.retire(found, source)
                        outcomes[retired] += 1
                        # An end memory did not hold, with a name after it that no entry
                        # gives ("ive quit doing curtains, not worth it, sending ppl to Drape &
                        # Co"), is kept whole (read again, the entry gives the name, whole or
                        # by its first word: "Callum Reid. Same deadlines" reads as one name).
                        after = read_slot(found.rest).names
                        unheld = (
                            retired == "nothing to remove"
                            and found.text.rstrip(" .").endswith(found.rest)
                            and after
                            and not any(_names_any(e.text, after) for e in memory.live())
                        )
                        # ("Pete is scrapping the 1 hour minimum for pensioners, they just pay
                        # for the time": how it goes now, leaning on the thing, in its words)
                        leans = _LEANS_BACK.match(found.rest) and _GOES_NOW.search(found.rest)
                        if found.rest and (_gives_up(found) or unheld or leans):
                            # "Mila quit swimming. She does climbing now": what a person took
                            # up leans on the name; the whole is kept as said.
                            entry = render(found, listener=listener, when=block[last].time)
                            section = PEOPLE if _gives_up(found) else found.section
                            outcomes[memory.fact(entry, section, source)] += 1
                        elif found.rest:
                            # each sentence of it but the first when that says why it ended
                            # ("the kettle kept tripping the power. sandwiches only from now")
                            parts = [t for _, _, t in sentences(found.rest)]
                            why_now = re.match(
                                r"^(?P<why>.+?),?\s+so\s+(?P<now>\S.*)$", parts[0] if parts else ""
                            )
                            if why_now and _why_it_ended(why_now["why"]):
                                # "... the commission was daylight robbery so it's our own
                                # website and phone only now": why, then how it goes now
                                parts[0:1] = [why_now["why"], why_now["now"]]
                            pending[0:0] = parts[1:] if parts and _why_it_ended(parts[0]) else parts
                        continue
                    entry = render(found, listener=listener, when=block[last].time)
                    if named is not None:
                        entry, used = _with_full_name(entry, speaker, named)
                        named = None if used else named
                    cited = source
                    if found.kind == "answer":  # the entry quotes the question: cite it too
                        cited = format_source(conv, question_at, block[last].position + 1)
                    if find_credentials(entry):
                        skipped["secret"] += 1
                    elif memory.retiring and memory.replace_retired(entry, source):
                        outcomes["updated"] += 1
                    elif found.kind == "switch":
                        outcomes[memory.switch(found, entry, source)] += 1
                    else:
                        outcomes[memory.fact(entry, found.section, cited)] += 1
            memory.settle_retired()
            memory.settle_message()
        # The runner's rules (review/sources.py, review/replacements.py): propose nothing it
        # would drop.
        ops = memory.operations(batch.index_cap_chars, memory.sources)
        read_ranges = _ranges(batch.turns)
        notes = [
            f"read {len(batch.turns)} messages: {', '.join(read_ranges) or 'none'}",
            "statements: " + _counts(outcomes),
            "skipped: " + _counts(skipped),
            *memory.notes,
        ]
        return ReviewOutput(
            operations=ops,
            message=_message(*memory.changes(), read_ranges)
            if ops
            else _message([], Counter(), read_ranges),
            model_calls=0,
            tokens_in=0,
            tokens_out=0,
            notes=notes,
            replaced_by=memory.replaced_by(ops),
        )


def _keeps_some(reply: str | None, told: set[str] | None) -> bool:
    """Whether the rules read a durable statement in an assistant's ``reply`` (``told``: the
    words of the users' messages it reads back): where they read none ("35p/mile from April"),
    the read-back keeps nothing of what the user said."""
    if not reply:
        return False
    heard = frozenset(told or ())
    return any(
        not isinstance(read(p, role="assistant", speaker=_ASSISTANT, told=heard), str)
        for _, _, sentence in units(reply, "assistant", _ASSISTANT)
        for c in clauses(sentence)
        for p in pieces(c, role="assistant", speaker=_ASSISTANT)
    )


_ASSISTANT = "The assistant"


def _reads_back_words(reply: str | None) -> bool:
    """Whether a reply that says it took note (:data:`_CONFIRMS`) says what it noted, in two
    words or more of its own: "Noted: Ruth is chair", not "Noted." or "Will do, thanks"."""
    if not reply:
        return False
    rest = _CONFIRMS.sub(" ", reply, count=1)
    said = [w for w in WORD.findall(rest) if w.lower() not in lx.STOP_WORDS | _THANKS]
    return len(said) >= 2


_THANKS = frozenset({"thanks", "thank", "cheers", "ok", "okay", "great", "sure", "lovely"})


def _right_before(turn: Turn, before: list[Turn]) -> Turn | None:
    """The last of ``before`` when it is the message right before ``turn`` in its
    conversation, by the other side (a user's message before the assistant's, or the other
    way round); else None."""
    last = before[-1] if before else None
    if last is None or {last.role, turn.role} != {"user", "assistant"}:
        return None
    if last.conversation_id != turn.conversation_id:
        return None
    return last if last.position + 1 == turn.position else None


def _read_backs(turns: list[Turn]) -> dict[tuple[str, int], tuple[str, int]]:
    """Of each user message of ``turns``, the assistant's reply that reads it back: the next
    message of its conversation, an assistant's that says it has taken note, after the user's
    messages since the last assistant's (``_Memory._made_from``)."""
    out: dict[tuple[str, int], tuple[str, int]] = {}
    waiting: dict[str, list[int]] = {}  # per conversation: user messages since the last reply
    for t in sorted(turns, key=lambda t: (t.conversation_id, t.position)):
        c = t.conversation_id
        if t.role == "user":
            run = waiting.setdefault(c, [])
            if run and run[-1] != t.position - 1:
                run.clear()
            run.append(t.position)
            continue
        run = waiting.pop(c, [])
        if run and run[-1] == t.position - 1 and _CONFIRMS.search(t.text):
            out.update({(c, p): (c, t.position) for p in run})
    return out


def _question_put(text: str) -> str:
    """The question a message puts to the other, which a verbless reply answers: its last
    question, even with more said after it ("When does the club meet? I can add it to your
    notes."); of several, the last that asks for a value ("Who's your landlord? Do you have
    their number?"), or one that asks for a secret, so that the answer is not kept. "" when
    it asks nothing."""
    asked = [s for _, _, s in sentences(text) if s.endswith("?")]
    if any(find_credentials(s) for s in asked):
        return ""
    for question in asked:
        if asks_secret(question):
            return question
    values = [q for q in asked if ASKS_VALUE.match(q)]
    return (values or asked or [""])[-1]


def _answered(turn: Turn, before: list[Turn]) -> list[Turn]:
    """The user's messages ``before`` that the assistant's ``turn`` answers, right after
    them in its conversation; none for a user's turn."""
    if turn.role != "assistant" or _right_before(turn, before) is None:
        return []
    return before


def _reply_before(turn: Turn, before: list[Turn]) -> str:
    """The assistant's message right before the user's ``turn`` in its conversation, which
    the turn may correct; "" for an assistant's turn or none."""
    last = _right_before(turn, before) if turn.role == "user" else None
    return last.text if last is not None else ""


# A reply that opens by saying the message before was wrong ("no, 28th!", "That is
# incorrect.", "wrong day").
#: A reply that denies what the assistant said; "no worries", "no problem" thank it.
_DENIAL = re.compile(
    r"^\W*(?:(?:no|nah)\b(?!\s+(?:worries|problem|probs|bother|rush|matter|biggie|stress|"
    r"drama|harm|need|idea|clue|chance)\b)|nope\b|wrong\b|incorrect\b|not quite\b"
    r"|that'?s (?:not|wrong|incorrect)|that is (?:not|wrong|incorrect)|not right\b)",
    re.I,
)


def _corrected(turn: Turn, following: list[tuple[list[Turn], str]]) -> bool:
    """Whether the user's next message says this assistant message got something wrong: it
    opens by denying it (:data:`_DENIAL`), or says "not X" of a word X the assistant used
    ("thursday mate not tuesday" after "Callum handles Tuesdays")."""
    if not following:
        return False
    nxt = following[0][0][0]
    if nxt.role != "user" or nxt.conversation_id != turn.conversation_id:
        return False
    if _DENIAL.match(nxt.text):
        return True
    first = sentences(nxt.text)[0][2] if nxt.text.strip() else ""
    if _LEANS.match(first) or _PRONOUN_VALUE.search(first):
        # "8 to 7 now, we extended it" after "Reception is open 8 to 6": another value, said
        # as the one that holds now.
        theirs, mine = _VALUE.findall(turn.text), _VALUE.findall(first)
        if set(mine) - set(theirs) and set(theirs) - set(mine):
            return True
    said = {w.lower().rstrip("s") for w in re.findall(r"[\w']+", turn.text) if len(w) > 2}
    denied = re.findall(r"\bnot\s+(?:the\s+)?([\w']+)", nxt.text, re.I)
    return any(w.lower().rstrip("s") in said for w in denied if len(w) > 2)


#: Another standing in for a while ("Sam is covering e-bikes"): what the entry says of the one
#: away still holds.
_STANDING_IN = re.compile(
    r"\b(?:covering|covers for|cover for|standing in|stands in|filling in|fills in)\b", re.I
)
#: The rest of an entry said to stay as it was, beside a new value ("Same hours.").
_SAME_REST = re.compile(
    r"\b(?:same (?:hours|time|times|price|prices|place|room|days?)"
    r"|same (?:\w+ )?(?:deal|terms|arrangement|rules|setup|set-up)|(?:rest|everything else)"
    r" (?:is |stays )?(?:the )?same|stays? the same|unchanged)\b",
    re.I,
)
#: A value as said: "£3.20", "8", "10.45".
_VALUE = re.compile(r"\d+(?:[.:]\d+)?")
#: "in Didsbury, not Chorlton" or "not Wix, it is Webflow": a name put right (capitalised
#: words, at most three; not "I").
_NAME = r"(?-i:(?!I\b)[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*){0,2})"
_NAME_CORRECTED = re.compile(
    rf"(?:\b(?P<new>{_NAME}),?\s+not\s+(?P<old>{_NAME})(?=\s*(?:[.,;!?]|$))"
    rf"|\bnot\s+(?P<old2>{_NAME})\s*[,;:]\s*(?:it's|it is|its|that's|that is|it was|but)\s+"
    rf"(?P<new2>{_NAME}))",
)
#: Words by which a person takes another's place ("his nephew Ryan took over the business").
_TOOK_OVER = re.compile(r"\b(?:took|taken|takes|taking) (?:it )?over\b", re.I)
#: Words by which one thing takes another's place ("I buy Tropic Marin instead").
_INSTEAD = re.compile(
    r"\b(?:instead|switched|swapped|changed over|gone over|went over|moved over|now|took over"
    r"|taking over|takes over|taken over)\b",
    re.I,
)
#: Words by which a speaker says they are putting something right.
_CORRECTING = re.compile(
    r"\b(?:sorry|mistake|wrong|correct|correction|my bad|i meant|typo|misspoke|got it mixed)\b",
    re.I,
)
#: Words by which a clause corrects what was said a moment before ("hang on, Kat's just
#: corrected me, it's Thursdays"): those that name a correction (:data:`_CORRECTING`), and
#: those said as it happens.
_CORRECTS = re.compile(
    r"\b(?:actually|oops|i mean|got it wrong|corrected|scrap that|hang on|hold on|wait)\b"
    r"|^\W*no\b|" + _CORRECTING.pattern,
    re.I,
)
#: Verbs by which a value moved ("Greta's class moved to Thursday").
_SWITCHED = lx.phrases(lx.SWITCH_VERBS)

# The assistant declining to keep details of other people: "I'd rather not keep personal
# details about clients", "I shouldn't keep patient health details in memory".
_DECLINES_PRIVATE = re.compile(
    r"\bI(?:'d rather not|\s+would rather not|\s+won't|\s+will not|\s+shouldn't|\s+should not"
    r"|\s+can't|\s+cannot)\s+(?:keep|store|save|record|remember)\s+(?:any\s+)?(?:[\w'-]+\s+)?"
    r"(?:personal|private|patient|patients'?|client|clients'?|customer|customers'?|health|medical)"
    r"\b",
    re.I,
)


def _declined(turn: Turn, following: list[tuple[list[Turn], str]]) -> bool:
    """Whether the assistant's next message declines to keep this user message because it
    holds details of other people (:data:`_DECLINES_PRIVATE`): memory must not hold them
    either, whatever the user's message said of them."""
    if not following:
        return False
    nxt = following[0][0][0]
    if nxt.role != "assistant" or nxt.conversation_id != turn.conversation_id:
        return False
    return bool(_DECLINES_PRIVATE.search(nxt.text))


# Why a clause is not kept on its own, when it may still correct a value ("sorry thats wrong,
# its £64 now" is a reaction; "put the call out up to £75" a request; "26 March now." no fact).
_CORRECTABLE = frozenset({"reaction", "request", "no durable fact", "transient"})


def _turns(turns: list[Turn]) -> list[tuple[Turn, str]]:
    """Turns in conversation order, each with who "you" is in it (the last user who spoke)."""
    first_seen: dict[str, int] = {}
    for t in turns:
        first_seen.setdefault(t.conversation_id, len(first_seen))
    ordered = sorted(turns, key=lambda t: (first_seen[t.conversation_id], t.position))
    out: list[tuple[Turn, str]] = []
    listener: dict[str, str] = {}
    for t in ordered:
        if t.role == "user":
            listener[t.conversation_id] = _display(t.author)
        out.append((t, listener.get(t.conversation_id, "the user")))
    return out


# "he" or "she" opening a sentence, as its subject ("he is allergic to ...", "she's on nights").
_HE_OR_SHE = re.compile(
    r"^(?:he|she)(?=(?:'s|’s)\s|\s+(?:is|has|was|had|can|can't|cannot|does|doesn't|won't|will"
    r"|must|should|needs|takes|gets|likes|loves|hates|lives|goes|uses|prefers|works|drives)\b)",
    re.I,
)
# A person's first and last name opening a sentence, then what is said of them ("Albert Fenn,
# 88, dementia", "Albert Fenn has four calls a day").
_NAME_OPENS = re.compile(
    r"(?:^|[.!?\n]\s+)(?P<n>(?-i:[A-Z][a-z'-]+)\s(?-i:[A-Z][a-z'-]+))(?=,|\s+(?:is|has|was)\b)"
)


def _introduced(text: str, speaker: str) -> str | None:
    """The one person, not the speaker, whose full name opens a sentence of ``text``, or None
    (none, or more than one)."""
    names = {
        m["n"]
        for m in _NAME_OPENS.finditer(text)
        if m["n"].split(" ")[0] not in lx.NAME_STOP and speaker.lower() not in m["n"].lower()
    }
    return names.pop() if len(names) == 1 else None


def _blocks(turns: list[tuple[Turn, str]]) -> list[tuple[list[Turn], str]]:
    """Runs of consecutive messages (positions next to each other) by one user in one
    conversation, each with its listener; any other message is a run of its own."""
    out: list[tuple[list[Turn], str]] = []
    for t, listener in turns:
        if out and t.role == "user":
            run, _ = out[-1]
            prev = run[-1]
            same = prev.role == "user" and prev.author == t.author
            if (
                same
                and prev.conversation_id == t.conversation_id
                and prev.position + 1 == t.position
            ):
                run.append(t)
                continue
        out.append(([t], listener))
    return out


def _display(author: str | None) -> str:
    """How an entry names a person: the author's name ("ada" -> "Ada"), or "User"."""
    name = re.sub(r"[\x00-\x1f\x7f()\[\]#]", "", author or "").strip()
    if not name:
        return "User"
    return name[0].upper() + name[1:] if name.isalpha() and name.islower() else name


def _ranges(turns: list[Turn]) -> list[str]:
    """The conversation ranges a batch covers, as sources: ``conv-7#0-12``."""
    by_conv: dict[str, list[int]] = {}
    for t in turns:
        by_conv.setdefault(t.conversation_id, []).append(t.position)
    out: list[str] = []
    for conv, positions in by_conv.items():
        run: list[int] = []
        for p in sorted(set(positions)):
            if run and p != run[-1] + 1:
                out.append(_cite(conv, run))
                run = []
            run.append(p)
        if run:
            out.append(_cite(conv, run))
    return out


def _cite(conv: str, run: list[int]) -> str:
    return format_source(conv, run[0], run[-1] + 1)[len("(source: ") : -1]


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(counter.items())) or "none"


def _message(changes: list[str], counts: Counter[str], read: list[str]) -> str:
    """The commit message: a summary line, what was read, then one line per change (R7)."""
    where = ", ".join(read) or "no messages"
    if not changes:
        return f"Review: no changes (read {where})"
    order = ("added", "updated", "removed", "moved to topics")
    summary = ", ".join(f"{kind} {counts[kind]}" for kind in order if counts[kind])
    head = f"Review: {summary}; read {where}"
    if len(head) > 120:
        head = f"Review: {summary}; read {len(read)} conversation ranges"
    # No blank lines: the store makes the first line the subject and puts a blank after it.
    return "\n".join([head, f"Read: {where}", *changes])


def _short(text: str, limit: int = 70) -> str:
    if len(text) <= limit:
        return text
    # Keep the source citation readable at the end of a cut line.
    cited = parse_sources(text)
    tail = f" {format_source(*cited[-1])}" if cited else ""
    return text[: max(10, limit - len(tail) - 1)].rstrip() + "…" + tail
