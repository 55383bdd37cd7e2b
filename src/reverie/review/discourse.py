"""Which sentences of one message are read together, for the offline reviewer (SPEC R6): pure.

A chat message often says one thing over several sentences, and an entry cut at the first full
stop loses part of it: "Kofi joined as our SRE. He reports to Marek." keeps "He reports to
Marek", about no one; a lesson's symptom, cause and fix ("The card reader kept dropping out.
The microwave was knocking out the wifi; moving the reader fixed it.") end up in two entries, or
one. :func:`units` joins a sentence to the one before it when it leans on it:

* it opens with a word whose referent is in the sentence before (:data:`.lexicon.LEANING_OPENERS`:
  "he", "their", "mostly", ...);
* it has no verb but content of its own ("Mostly Terraform and Go these days.", "Landlord:
  Mr. Petrakis."): a fragment that continues the sentence before, or the introduction before
  it ("Dario Bellini here. Enterprise AE at Fernhill.");
* it belongs to a lesson: it carries a cue of cause or remedy (:data:`.lexicon.LESSON_CUES`), or
  sits between two sentences that do; the sentence before the first cue is its symptom.

A price table pasted a row a line ("Prices:", "flat white 3.20", "latte 3.40", ...) is one unit,
written as a list on one line ("Prices: flat white 3.20, latte 3.40, ...").

A sentence that says something apart from the one before is not joined by a lesson's cue or by
"also": the two share no word of content, neither goes on with "it" or "that", and one says who
someone is or what they are like while the other does not ("mia has a peanut allergy. the
dishwasher floods if you overload it, the fix is to run it half full": two entries, each under
its section). A fix said after such an aside goes on the lesson before it.

Only statements are joined: never a question, a request, a secret or small talk, and never past
:data:`.statements.MAX_JOINED`. The joined text keeps each sentence as said.
"""

from __future__ import annotations

import re

from . import lexicon as lx
from .frames import AUX, CALENDAR, WORD, has_verb, is_verb, past, says_update, stem
from .sentences import ONE_EMOJI, TO_THE_LISTENER, clean, sentences
from .slots import read_slot, value_kind
from .statements import MAX_JOINED, Statement, priced, read, skip_reason

__all__ = ["about_speaker", "full_name", "units"]

_LESSON = lx.phrases(lx.LESSON_CUES)
_DECIDED = lx.phrases(lx.DECISION_CUES)
_SMALL_TALK = lx.phrases(lx.SMALL_TALK)
_NOW = re.compile(r"\bnow\b", re.I)
_DOING = re.compile(r"^(?:i|we|i'm|we're|i've|we've|i'll|we'll)\b", re.I)


_LEANING_PHRASE = re.compile(r"^(?:" + lx.phrases(lx.LEANING_PHRASES).pattern + r")", re.I)


def _opens_leaning(text: str) -> bool:
    first = text.split(" ", 1)[0].lower().strip(",.;:!?")
    return (
        first in lx.LEANING_OPENERS
        or bool(_LEANING_PHRASE.match(text))
        or bool(_NAMED_OF_IT.match(text))
    )


#: Someone named, then what they are to the thing the sentence before names, said as "it":
#: "Dev Malhotra owns it and I answer to him", "Sharon runs the place".
_NAMED_OF_IT = re.compile(
    r"^(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+))?\s+(?:owns|runs|manages|started|founded|"
    r"set up|bought)\s+(?:it|the place|the business)\b"
)


def _fragment(text: str) -> bool:
    """A verbless piece with content of its own: "Mostly Terraform and Go these days"."""
    words = WORD.findall(text)
    content = [w for w in words if w.lower() not in lx.STOP_WORDS]
    contracted = any(re.search(r"'(?:m|s|re|ve|ll|d)$", w, re.I) for w in words)
    if not content or contracted or any(is_verb(w) for w in _without_describing(words)):
        return False
    return bool(_SMALL_TALK.sub(" ", text.lower()).strip(" .,!?;:-"))


def _without_describing(words: list[str]) -> list[str]:
    """``words`` without a past participle that opens them and describes the noun after it
    ("Self employed telecoms rigger", "Retired teacher", "Qualified electrician"): a role,
    not something done ("Moved to Leeds" goes on with a preposition, "Closed Mondays" with a
    day)."""
    at = 1 if words and words[0].lower() == "self" else 0
    if len(words) > at + 1 and past(words[at].lower()):
        after = words[at + 1].lower()
        if after not in lx.STOP_WORDS and not is_verb(after) and not CALENDAR.fullmatch(after):
            return words[at + 1 :]
    return words


def _join(before: str, sentence: str) -> str:
    """Two sentences as one unit; the first closed with a full stop when it was not ("... to
    save time because of the market" on one line, "fix: three cycles" on the next)."""
    stop = "" if before.rstrip().endswith((".", "!", "?", ":", ";", ",")) else "."
    return f"{before.rstrip()}{stop} {sentence}"


def _statement(text: str, role: str) -> bool:
    said = clean(text)
    return bool(said) and not text.rstrip().endswith("?") and skip_reason(said, role) is None


def _stands(text: str, role: str, speaker: str, lesson: bool) -> bool:
    """Whether a sentence can take another after it: a statement, or the speaker naming
    themselves ("Dario Bellini here."); before a lesson also the symptom it explains ("The
    card reader kept dropping out"), not progress ("it's green now"); never a sentence that
    ends by asking ("my son is 12, could he try goalball?")."""
    if text.rstrip().endswith("?"):
        return False
    found = read(clean(text), role=role, speaker=speaker or "Someone")
    if isinstance(found, Statement) or found == "introduction":
        return True
    doing = _DOING.match(text)  # "I looked at the logs": what someone did, not the symptom
    return lesson and found == "no durable fact" and not _NOW.search(text) and not doing


def units(text: str, role: str = "user", speaker: str = "") -> list[tuple[int, int, str]]:
    """The sentences of a message (:func:`.sentences.sentences`), each joined to the one before
    when it leans on it (see the module docstring), as ``(start, end, text)``: ``start`` and
    ``end`` span every sentence joined, so a credential anywhere in them taints the unit."""
    said = _tables(text, sentences(text)) if role == "user" else sentences(text)
    cue = [bool(_LESSON.search(s)) for _, _, s in said]
    out: list[tuple[int, int, str]] = []
    joined_lesson = False  # the last unit holds a lesson's cause
    introducing = False  # the last unit is the speaker introducing themselves
    for i, (start, end, sentence) in enumerate(said):
        # "Stan Whitlock. Fishmonger.": a role said alone goes on with the introduction
        going_on = _statement(sentence, role) or _fragment(sentence)
        # (not what they hope the agent will do: "I'm hoping you can help me with schedules")
        going_on = going_on and not TO_THE_LISTENER.search(sentence)
        if out and introducing and _about_speaker(sentence) and going_on:
            before = out[-1]
            joined = _join(before[2], sentence)
            # "I'm Gwen Pritchard, bereavement services manager. I'll be using you to help
            # with the office side": what the joined text cannot keep is not joined to it.
            reads = isinstance(
                read(clean(joined), role=role, speaker=speaker or "Someone"), Statement
            )
            # "I'm Priya, I lead payments. We decided to move to Fly.io": a decision or a
            # lesson of theirs is an entry of its own, not part of who they are ("We make
            # invoicing software" still is).
            alone = read(clean(sentence), role=role, speaker=speaker or "Someone")
            own = isinstance(alone, Statement) and (alone.lesson or bool(_DECIDED.search(sentence)))
            if len(joined) <= MAX_JOINED and reads and not own:
                out[-1] = (before[0], end, joined)  # "I live in Kraków": still who they are
                continue
        # "Fiona here." alone is read as naming the speaker, and what follows ("I'm a nurse
        # ...") names them when written: only a fuller introduction takes what follows.
        # "Hi there. Denise Kowalski, I manage Buckeye Self Storage.": the introduction opens
        # the message after a greeting, too.
        introducing = (
            i < 2
            and _names_speaker(sentence, speaker)
            and (
                i == 0
                or read(clean(said[0][2]), role=role, speaker=speaker or "Someone") == "small talk"
            )
            and read(clean(sentence), role=role, speaker=speaker or "Someone") != "introduction"
        )
        # How it has gone since the fix ("haven't had one warp since"): the lesson's outcome,
        # not a statement of its own (alone, "since" reads as a change).
        if out and i > 0 and _SINCE.search(sentence) and _LESSON.search(out[-1][2]):
            before = out[-1]
            joined = _join(before[2], sentence)
            if len(joined) <= MAX_JOINED:
                out[-1] = (before[0], end, joined)
                continue
        # A lesson's label alone, then what happened ("lesson from today. tightened a carbon
        # seatpost without the torque wrench and cracked it"): the story goes on the label.
        label = out and i > 0 and cue[i - 1] and _LABEL_ONLY.match(out[-1][2].strip())
        if label and not cue[i] and _statement(sentence, role):
            before = out[-1]
            out[-1] = (before[0], end, _join(before[2], sentence))
            joined_lesson = True
            continue
        # A lesson's cause, then the rule it taught, said as an order ("lesson learned: the
        # picker got stuck in the wet ground. don't send it out after heavy rain"): one lesson.
        if out and i > 0 and (cue[i - 1] or joined_lesson) and _RULE_TAUGHT.search(sentence):
            before = out[-1]
            joined = _join(before[2], sentence)
            if len(joined) <= MAX_JOINED and not TO_THE_LISTENER.search(sentence):
                out[-1] = (before[0], end, joined)
                joined_lesson = True
                continue
        # What went wrong, told in the past, then what is done now ("Clive tapped a firkin
        # before it settled and it poured cloudy. Now every cask sits 48 hours"): one lesson.
        if out and i > 0 and _remedy(sentence, role):
            before = out[-1]
            joined = _join(before[2], sentence)
            # told without a lesson's cue, the joined text must still read as a statement
            told = not _LESSON.search(before[2]) and _told(before[2], sentence)
            kept = joined_lesson or (
                told
                and isinstance(
                    read(clean(joined), role=role, speaker=speaker or "Someone"), Statement
                )
            )
            if len(joined) <= MAX_JOINED and kept:
                out[-1] = (before[0], end, joined)  # the fix, kept with what it fixes
                continue
        if out and i > 0 and _why_changed(out[-1][2], sentence, role):
            before = out[-1]
            joined = _join(before[2], sentence)
            if len(joined) <= MAX_JOINED and _keeps(before[2], joined, role, speaker):
                out[-1] = (before[0], end, joined)  # the change, kept with why it was made
                continue
        if "\n" in text[start:end]:
            out.append((start, end, sentence))  # a pasted table, one unit (:func:`_tables`)
            joined_lesson = False
            continue
        # Two statements an emoji parted ("marcus is off to open his own barbers 😭 last day
        # is the 27th"): the emoji parts an exclamation or a question from what it follows,
        # not a statement from the one it goes on with.
        emoji = i > 0 and "\n" not in text[said[i - 1][1] : start]
        # ("merged the big refactor 🚀 we use pnpm": a doing of the speaker's own, sharing no
        # word with what the emoji ended, goes on with nothing)
        doing = bool(_DOING.match(sentence)) and not _words(sentence) & _words(said[i - 1][2])
        if out and emoji and not doing and _ENDS_WITH_EMOJI.search(said[i - 1][2]):
            before = out[-1]
            joined = _join(before[2], sentence)
            if (
                len(joined) <= MAX_JOINED
                and _statement(sentence, role)
                and _stands(before[2], role, speaker, False)
                and _keeps(before[2], joined, role, speaker)
            ):
                out[-1] = (before[0], end, joined)
                continue
        if out and i > 0:
            lesson = cue[i] or (cue[i - 1] and i + 1 < len(said) and cue[i + 1])
            before = out[-1]
            # A line of a price list ("part hire £95 a week" after "full hire £160 a week", or
            # after "Rates:") is an entry of its own; a price after a plan ("we're doing the
            # fair. 2 days, pitch £300") still continues it.
            listed = before[2].rstrip().endswith(":") or priced(clean(before[2]), role)
            own = listed and priced(clean(sentence), role)
            # A lesson's cue, or "also", before a fact of its own about something else ("the
            # fix was pinning node to 18. mia has a peanut allergy because of her dad's side"):
            # two entries, each under its section.
            # (a cause said without a verb the lexicon knows, "the microwave trips the fuse
            # because of the old wiring", is no fragment of the fact before it either)
            also = _ALSO.match(sentence) is not None
            apart = (lesson or also) and _apart(before[2], sentence, role, speaker)
            if apart:
                lesson = also = False
                # "the deploy failed because the cert expired. marek is our team lead. the fix
                # was renewing it": the fix goes on the lesson said before the aside
                # (not one said of the person of the aside: "turns out the gloves caused her
                # rash" after "chloe is allergic to latex")
                theirs = re.search(r"\b(?:he|she|her|his|him)\b", sentence, re.I)
                if len(out) > 1 and cue[i] and not theirs and _LESSON.search(out[-2][2]):
                    lesson_before = out[-2]
                    joined = _join(lesson_before[2], sentence)
                    if (
                        len(joined) <= MAX_JOINED
                        and not _apart(lesson_before[2], sentence, role, speaker)
                        and _statement(sentence, role)
                    ):
                        out[-2] = (lesson_before[0], end, joined)
                        continue
            opens = _opens_leaning(sentence) and (also or not _ALSO.match(sentence))
            leans = lesson or opens or (_fragment(sentence) and not own and not apart)
            joined = _join(before[2], sentence)
            if (
                leans
                and len(joined) <= MAX_JOINED
                and _statement(sentence, role)
                and _stands(before[2], role, speaker, lesson)
                and _keeps(before[2], joined, role, speaker)
            ):
                out[-1] = (before[0], end, joined)
                joined_lesson = joined_lesson or lesson
                continue
        out.append((start, end, sentence))
        joined_lesson = cue[i] and _stands(sentence, role, speaker, True)
    return out


_ENDS_WITH_EMOJI = re.compile(f"(?:{ONE_EMOJI})$")
#: A row of a pasted price table, a line of its own: an item in a few words, maybe a separator
#: ("-", ":", "|", a tab), then a price or a number, maybe with what it is per ("flat white
#: 3.20", "- follow up £45", "nail surgery | 350", "day hire - £35 a day").
_ROW = re.compile(
    r"^(?:[-*+•]\s+)?(?P<item>[^\W\d_][\w'&/+().-]*"
    # (a size is part of the item: "ethanol 1L 12.99", "acetone 500ml 8.50")
    r"(?:[ \t]+(?![£$€]?\d[\d.,]*(?:[ \t]|$)|[£$€])[\w'&/+().][\w'&/+().-]*){0,5})"
    r"[ \t]*(?:[-–—:|=][ \t]*|\t+|[ ])[ \t]*"
    r"(?P<price>[£$€]?\d[\d,]*(?:\.\d{1,2})?(?:[ ]?(?:p|k|euros?|dollars?|pounds?|quid))?)"
    r"(?P<per>[ ]+(?:(?:a|an|per|each|pp|/)(?:[ ]+\w+)?|each|pp))?[ \t]*$",
    re.I,
)
#: A line before a table that says what it lists: "Prices:", "here's our price list".
#: (a few words, no comma: not "prices for the website pls, keep these:", a request)
_TABLE_HEADING = re.compile(
    r"^(?!.*,)(?:(?:\S+\s+){0,5}\S+:|(?:\S+\s+){0,7}?\S*(?:prices?|pricing|rates?|fees?|"
    r"costs?|charges?|tariffs?|menu|price list)\b[^.!?:]{0,30})$",
    re.I,
)
#: A heading line of a few words and no verb: "membership", "Room hire".
_SHORT_HEADING = re.compile(r"^[^\W\d_][\w'&-]*(?:[ ][\w'&-]+){0,2}:?$")
#: Rows a table has at least; two under a heading (:data:`_TABLE_HEADING`,
#: :data:`_SHORT_HEADING`): "membership / adult 120 / child 60".
_TABLE_ROWS = 3


def _tables(text: str, said: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``said`` with each pasted price table (at least :data:`_TABLE_ROWS` lines of
    :data:`_ROW` in a row, each a line of its own, and the heading line before them, if any)
    made one sentence: "Prices: flat white 3.20, latte 3.40, cappuccino 3.40". A table is one
    thing the user gave, and a row alone ("latte 3.40") says too little to be kept, or floods
    memory with one entry a row; written like a list typed on one line, it is kept and
    updated the same way."""

    def whole_line(start: int, end: int) -> bool:
        return (start == 0 or text[start - 1] == "\n") and (end == len(text) or text[end] == "\n")

    rows = [bool(whole_line(a, b) and _ROW.match(s)) for a, b, s in said]
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(said):
        j = i
        while j < len(said) and rows[j]:
            j += 1
        heading = out[-1] if out and whole_line(out[-1][0], out[-1][1]) else None
        if heading is not None and not (
            _TABLE_HEADING.match(heading[2])
            or (
                _SHORT_HEADING.match(heading[2])
                and not {w.lower() for w in heading[2].split()} & (AUX | lx.PRONOUN_SUBJECTS)
            )
        ):
            heading = None
        if j - i < (_TABLE_ROWS if heading is None or j - i < 2 else 2):
            if j == i:
                out.append(said[i])
                i += 1
            else:
                out.extend(said[i:j])
                i = j
            continue
        items = []
        for _, _, row in said[i:j]:
            m = _ROW.match(row)
            assert m is not None
            items.append(f"{m['item'].strip()} {m['price']}{m['per'] or ''}")
        start, end = said[i][0], said[j - 1][1]
        body = ", ".join(re.sub(r"\s+", " ", item) for item in items)
        if heading is not None and heading[0] < start:
            out.pop()
            start = heading[0]
            body = f"{heading[2].rstrip(' :')}: {body}"
        out.append((start, end, body))
        i = j
    return out


_ALSO = re.compile(r"^\W*also\b\W*", re.I)


def _apart(before: str, sentence: str, role: str, speaker: str) -> bool:
    """Whether ``sentence`` says something of its own, apart from ``before``: the two share no
    word of content, neither goes on with a word for what came before ("it", "that"), and one
    of them says who someone is or what they are like (:data:`_PERSONAL`) while the other does
    not ("the fix was pinning node to 18. mia has a peanut allergy because of her dad's side")
    or, after "also", each read alone is a statement of another section. A symptom and its
    cause share no word either ("The glaze kept crawling. Turns out the bisque was dusty"):
    they stay one lesson."""
    said = _ALSO.sub("", sentence)
    if _BACK.match(said) or _words(said) & _words(before):
        return False
    if bool(_PERSONAL.search(said)) != bool(_PERSONAL.search(before)):
        return True
    if not _ALSO.match(sentence):
        return False
    alone = read(clean(said), role=role, speaker=speaker or "Someone")
    first = read(clean(before), role=role, speaker=speaker or "Someone")
    if not isinstance(alone, Statement) or not isinstance(first, Statement):
        return False
    return alone.section != first.section


#: What says who someone is or what they are like: "is my supervisor", "has a peanut
#: allergy", "is vegetarian", "prefers email", "her birthday", "she carries an epipen".
_PERSONAL = re.compile(
    r"^\W*(?:he|she)\b|\b(?:(?:is|'s|are|'re)\s+(?:my|our|his|her|their)\s+\w+|allerg(?:y|ies|ic)|intoleran(?:t|ce)|"
    r"vegetarian|vegan|coeliac|celiac|diabetic|pregnant|birthday|prefers?|likes|loves|hates|"
    r"husband|wife|partner|son|daughter|mum|mom|dad|brother|sister|supervisor|boss|"
    r"(?:new|our|my)\s+(?:" + "|".join(sorted({w for r in lx.ROLES for w in r.split()})) + r"))\b",
    re.I,
)


#: A word for what or whom was said before: "it", "that", "this", "them", "there", "she".
_BACK = re.compile(
    r"^(?:it|it's|its|that|that's|this|these|those|they|they're|them|there|he|he's|she|she's)\b",
    re.I,
)


_CUE_WORDS = frozenset(w for cue in lx.LESSON_CUES for w in cue.split())


def _words(text: str) -> set[str]:
    """The stems of the words of ``text`` that carry content."""
    return {
        stem(w)
        for w in WORD.findall(text)
        if w.lower() not in lx.STOP_WORDS and w.lower() not in _CUE_WORDS and len(w) > 2
    }


#: A lesson's label said as a sentence of its own: "Lesson from today.", "lesson learned!".
_LABEL_ONLY = re.compile(
    r"^\W*(?:a\s+|another\s+|hard\s+)?lessons?\s+(?:learn(?:ed|t)(?:\s+the\s+hard\s+way"
    r"|\s+(?:today|yesterday|this\s+week))?|from\s+(?:today|this\s+week|"
    r"yesterday|last\s+\w+))?\s*[.!:]*$",
    re.I,
)
#: The rule a lesson taught, said as an order to anyone: "don't send the picker out after rain".
_RULE_TAUGHT = re.compile(
    r"^\W*(?:so\s+)?(?:don't|do not|never|always|make sure)\s+[a-z]|\bonly from now on\b", re.I
)
_SINCE = re.compile(r"^[^.!?]{0,60}\b(?:ever since|since then|since)\s*[.!]*\s*$", re.I)
_STAYS = re.compile(r"\b(?:stays?|staying|stayed|unchanged|still|same|as before)\b", re.I)


def _why_changed(before: str, sentence: str, role: str) -> bool:
    """Whether ``sentence`` says why the change ``before`` states was made, told in the past
    and naming the value it replaced ("teen night's moved to saturdays. fridays clashed with
    the youth club"): a value of a kind ``before`` holds, none of ``before``'s, and no change
    of its own. Alone it would keep the old value as if it still held."""
    if not says_update(before, weak=False) or says_update(sentence):
        return False
    if not has_verb(WORD.findall(before)):
        return False  # "half 8 now": the update leans on what it answers, read with it
    if _STAYS.search(sentence) or not _told(sentence) or not _statement(sentence, role):
        return False  # "group stays at £11": another value; "fish is in by half six": news
    mine, theirs = read_slot(sentence), read_slot(before)
    kinds = {value_kind(v) for v in theirs.values}
    return not mine.values & theirs.values and any(value_kind(v) in kinds for v in mine.values)


def _keeps(before: str, joined: str, role: str, speaker: str) -> bool:
    """Whether joining a sentence to ``before`` keeps what ``before`` says: "I'm Luca Ferri,
    Morag's apprentice. she said I can ask you things" no longer reads as a statement."""
    alone = read(clean(before), role=role, speaker=speaker or "Someone")
    together = read(clean(joined), role=role, speaker=speaker or "Someone")
    return not isinstance(alone, Statement) or isinstance(together, Statement)


def _told(text: str, after: str = "") -> bool:
    """Whether a sentence tells what went wrong: a verb in the past, not a question, and no
    word of change ("I let the Trados licence expire", "Dr Lindqvist has left Velacor": what
    follows is the new value, not a fix), unless what follows opens with "so" ("half of them
    dropped needles ... so now pre-cut trees are never felled before 1 December")."""
    if text.rstrip().endswith("?"):
        return False
    if _CHANGE.search(text) and not re.match(r"\W*so\b", after, re.I):
        return False
    return any(past(w) for w in WORD.findall(text))


_CHANGE = lx.phrases([*lx.SWITCH_VERBS, *lx.RETIRE_VERBS, "left", "expire", "expired"])


def _names_speaker(text: str, speaker: str) -> bool:
    """Whether a message's first sentence is the speaker saying who they are ("Steve Mackie.",
    "Hello, I am Katarzyna Wiśniewska, freelance translator ..."): it holds their name."""
    first = speaker.split(" ")[0] if speaker else ""
    if len(first) < 2 or first.lower() in ("user", "the"):
        return False
    opener = re.search(
        rf"(?<![\w'])(?:i am|i'm|this is|my name is|it's)?\s*{re.escape(first)}\b", text, re.I
    )
    return opener is not None and opener.start() <= 12


def _about_speaker(text: str) -> bool:
    """Whether a sentence goes on about the speaker or their firm ("I live in Kraków", "we
    cover Swindon") or is a verbless piece of the introduction ("Mackie Motors, independent
    garage in Paisley"), maybe with a clause after it ("Equipment officer for the Dales
    Underground Club, we're based in Ingleton")."""
    opens = re.match(r"^(?:i|i'm|i've|my|we|we're|our)\b", text, re.I)
    return bool(opens) or _fragment(text) or _fragment(text.split(",", 1)[0])


about_speaker = _about_speaker

# A clause that only names its speaker: "I am Ines Duarte", "my name is ines duarte", "this is
# Ines Duarte", "Ines Duarte here", after a greeting or a lead-in that ends in a colon ("Let
# me introduce myself: I'm Ines Duarte").
_SELF_NAMING = re.compile(
    r"^(?:[^:]{0,120}:\s*)?(?:(?:" + lx.phrases(lx.GREETINGS).pattern + r")\W+)?"
    r"(?:(?:i'm|i am|my name is|my name's|name's|this is|it's|it is)\s+)?"
    r"(?P<name>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*){1,2}?)(?:\s+here)?\W*$",
    re.I,
)


_BRACKETED_NAME = re.compile(
    r"^(?:(?:" + lx.phrases(lx.GREETINGS).pattern + r")\W+)?(?:i'm|i am|my name is|this is)\s+"
    r"(?P<short>[^\W\d_][\w'-]*)\s*\((?P<full>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*){1,2})\)\W*$",
    re.I,
)


def full_name(clause: str, speaker: str) -> str | None:
    """The full name a clause gives its speaker when it says no more than that ("I'm Ines
    Duarte", said by Ines), written as a name ("ines duarte" -> "Ines Duarte"), or None. It
    starts with the speaker's first name and goes on with a surname, and is not a sentence
    ("Ines is here")."""
    first = speaker.split(" ")[0] if speaker else ""
    if len(first) < 2 or first.lower() in ("user", "the"):
        return None
    bracketed = _BRACKETED_NAME.match(clause.strip())
    if bracketed and bracketed["short"].casefold() == first.casefold():
        # "I am Kris (Krzysztof Nowak)": the name they go by, then their full name
        full = bracketed["full"].split()
        if all(w[:1].isupper() for w in full) and not {w.lower() for w in full} & lx.STOP_WORDS:
            return f"{bracketed['short']} ({bracketed['full']})"
    m = _SELF_NAMING.match(clause.strip())
    if m is None:
        return None
    words = m["name"].split()
    if words[0].casefold() != first.casefold():
        return None
    if any(w.lower() in lx.STOP_WORDS or is_verb(w) for w in words[1:]):
        return None
    if m["name"].islower():
        return " ".join(w[:1].upper() + w[1:] for w in words)
    return m["name"] if all(w[:1].isupper() for w in words) else None


_REMEDY = re.compile(
    r"^\W*(?:(?:so|and)\s+)?(?:now\b|fix\b|fixed\b|the fix\b|solution\b|since then\b|"
    r"from now on\b|these days\b|going forward\b|(?:i|we)\s+(?:now|always|never)\b)",
    re.I,
)


def _remedy(text: str, role: str) -> bool:
    """Whether a sentence after a lesson's cause says what is done about it now ("Now it sits
    in a bain-marie", "fix: we stream them per biome now", "now i always do a pressure drop
    test"): it opens with a word of remedy and is no question, request, secret or small talk."""
    if not _REMEDY.match(text) or text.rstrip().endswith("?"):
        return False
    reason = skip_reason(clean(text), role)
    return reason is None or reason in ("transient", "reaction")
