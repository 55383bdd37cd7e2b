"""Cutting chat messages into the sentences review reads (SPEC R5, R6): pure, no I/O.

A message is prose, code, logs and pasted output mixed; only prose is read. :func:`sentences`
returns each prose sentence with its offsets in the message (so that a credential found in the
whole message can taint the sentences it overlaps); an emoji typed between two thoughts ends
the first, as a full stop would ("great news 🎉 we signed the lease"). :func:`clauses` cuts a
sentence where a second statement starts, except in a lesson, which is kept whole so that its
cause and its fix stay together. :func:`clean` takes away what a sentence opens or closes with
and says nothing (greetings, "heads up", "lol"), using the lists of :mod:`.lexicon`.
"""

from __future__ import annotations

import re

from reverie.core import chars

from . import lexicon as lx
from .frames import AUX, has_verb
from .types import SOURCE_PATTERN

__all__ = [
    "ONE_EMOJI",
    "ROLE",
    "TO_THE_LISTENER",
    "clauses",
    "clean",
    "listed_note",
    "other_subjects",
    "sentences",
]

_FENCE = re.compile(r"^\s*(```|~~~)")
# Lines that are program output, not conversation: log lines, tracebacks, shell prompts,
# Markdown headings and tables. Review never reads tool output (R5); a pasted log is the same.
_NOT_PROSE = re.compile(
    r"^\s*(?:\$ |> |>>> |#|\||Traceback|File \"|at [\w.$]+\(|\[?\d{4}-\d{2}-\d{2}[ T]\d"
    r"|\[?\d{2}:\d{2}:\d{2}|(?:ERROR|WARN(?:ING)?|INFO|DEBUG|FATAL)\b)"
)
# A line pasted from a program's output into a message, by its shape rather than its start:
# columns ("walk-in     3.1C   07:02"), settings (a line that opens with one, or two of them:
# "queue=41 sent=0"; but "we set retries=3 on the job" is a statement), a clock time before a
# word in capitals ("03:12 ALERT: chamber delta > 40C"), a comma-separated row (single words,
# or a last field that is a number: "LIN-18-BLK,waxed linen 18/3 black,0"; not "we moved to
# Leeds,the office is on Park Row,opens Monday", typed without spaces), an error code
# ("ERROR 0x1A", "last_error: 402"), or words in capitals only ("SAMPLE  VARIETY  DRY
# MATTER", "F-7781 PANTOGRAPH PRESSURE LOW").
# (a gap of two spaces after a full stop before a capital is how some people type)
_GAP = r"(?:(?<![.!?:,;])\s{2,}|\s{2,}(?-i:(?=[a-z0-9])))"
_OUTPUT_LINE = re.compile(
    rf"\S{_GAP}\S.*\S{_GAP}\S"
    r"|^\S.{0,40}(?<![.!?:,;])\s{3,}\S"
    r"|^[\w.\[\]-]+=[^\s=]|(?<![\w.-])[\w.-]+=[^\s=]+\s+(?:\S+\s+)?[\w.-]+=[^\s=]"
    r"|^\s*\d{1,2}:\d{2}\s+(?-i:[A-Z]{2,})"
    # a code then a time, and no word in lower case: "HW 06:12 1.6m", "DEP 14:30 Gate 4"
    r"|^(?!.*\b(?-i:[a-z]{3,})\b)\s*(?-i:[A-Z]{1,4})\s+\d{1,2}:\d{2}\b(?!/)"
    r"|^[^\s,]+(?:,[^\s,]+){2,}$|^[^\s,]+,[^,]*\S,[\d.]+(?:,|$)"
    r"|\b0x[0-9a-f]+\b|^\s*[a-z]+_[a-z_]+\s*[:=]"
    r"|^(?!.*[,.!?]\s)(?-i:[^a-z]*[A-Z]{3,}[^a-z]*[A-Z]{3,}[^a-z]*)$",
    re.I,
)
#: How much of a line is read for its shape.
_OUTPUT_WIDTH = 240
#: A short line with a number right after a pasted line, in the same message: more of it
#: ("total 2,417", "cycle complete 05:58").
_OUTPUT_TAIL = re.compile(r"^(?=.*\d)(?:\S+\s+){0,4}\S+$")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9a-z])")
_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|p\.p|etc|vs|approx|cf|incl|Dr|Mr|Mrs|Ms|St|No|Inc|Ltd|Jr|Sr|Prof)\.|(?<!°)\b[A-Z]\.)$"
)  # (an initial, "J. Smith"; but "14°C." ends a sentence)


def sentences(text: str) -> list[tuple[int, int, str]]:
    """The prose sentences of a message as ``(start, end, text)`` offsets into ``text``.

    Fenced and indented code, log lines and headings are left out: they are output, not
    statements. A line break always ends a sentence (chat messages use them as full stops).
    """
    out: list[tuple[int, int, str]] = []
    offset = 0
    in_fence = False
    pasted = False  # the line before was output pasted into the message
    for line in text.split("\n"):
        start_of_line = offset
        offset += len(line) + 1
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or line.startswith(("    ", "\t")) or _NOT_PROSE.match(line):
            continue
        shape = line.strip()[:_OUTPUT_WIDTH]  # output lines are short: the cost stays bounded
        pasted = bool(_OUTPUT_LINE.search(shape) or (pasted and _OUTPUT_TAIL.match(shape)))
        if pasted:
            continue
        pieces: list[tuple[int, int]] = []
        pos = 0
        for m in _SENTENCE_END.finditer(line):
            pieces.append((pos, m.start()))
            pos = m.end()
        pieces.append((pos, len(line)))
        pieces = [cut for a, b in pieces for cut in _emoji_breaks(line, a, b)]
        merged: list[tuple[int, int]] = []
        for a, b in pieces:
            # "Dr. Patel" and "e.g. Postgres" do not end a sentence.
            if merged and _ABBREVIATION.search(line[merged[-1][0] : merged[-1][1]]):
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        for a, b in merged:
            piece = line[a:b]
            # "[shared a photo: ...]" and other bracketed notes are annotations, not speech.
            if piece.strip() and not re.fullmatch(r"\s*\[[^\]]*\]\s*", piece):
                lead = len(piece) - len(piece.lstrip())
                out.append((start_of_line + a + lead, start_of_line + b, piece.strip()))
    return out


#: One emoji with what joins or dresses it (a joiner, a variation selector, a skin tone, a
#: flag's tags, a keycap), so that none of those is left behind alone: "🏄\u200d♀\ufe0f". The
#: one pattern of an emoji for the reviewer (:func:`clean`, :func:`sentences`, and
#: :mod:`.discourse`).
ONE_EMOJI = (
    "[\U0001f1e6-\U0001f1ff\U0001f300-\U0001faff\u2600-\u27bf]"
    "[\u200d\ufe0e\ufe0f\u20e3\U000e0020-\U000e007f\U0001f3fb-\U0001f3ff]*"
)
#: An emoji between two runs of words, with a space after it: "great news 🎉 we signed the
#: lease", "done ✅ moved the server to hetzner". Typed where a full stop would be, it ends the
#: thought before it.
_EMOJI_GAP = re.compile(rf"(?<=\S)\s*(?:{ONE_EMOJI})+\s+(?=\S)")
#: An emoji that stands for a word, not a stop: after a word that needs one after it ("the 🍕
#: place", "I love ☕"), or before a word that goes on with the thought ("☕ and cake").
_EMOJI_AS_WORD_BEFORE = re.compile(
    r"(?:^|\s)(?:the|a|an|my|our|your|his|her|their|its|this|that|some|no|of|for|to|in|on|at|"
    r"with|and|or|love|loves|like|likes|need|needs|want|wants|more|less|is|are|was|were)\s*$",
    re.I,
)
_EMOJI_AS_WORD_AFTER = re.compile(
    r"^(?:and|or|but|with|in|on|at|for|to|of|from|is|are|was|were|'s|s)\b|^[,.;:!?)]", re.I
)


def _emoji_breaks(line: str, a: int, b: int) -> list[tuple[int, int]]:
    """The piece ``line[a:b]`` cut after each emoji that ends a thought (:data:`_EMOJI_GAP`),
    when a few words come before it and words after it; the emoji stays with the words before,
    as a full stop would."""
    out: list[tuple[int, int]] = []
    pos = a
    for m in _EMOJI_GAP.finditer(line, a, b):
        before, after = line[pos : m.start()], line[m.end() : b]
        if (
            (len(before.split()) < 2 and not re.search(r"[a-z]{3,}", before, re.I))
            or len(after.split()) < 2
            or _EMOJI_AS_WORD_BEFORE.search(before)
            or _EMOJI_AS_WORD_AFTER.match(after)
        ):
            continue
        out.append((pos, m.end() - (len(m.group(0)) - len(m.group(0).rstrip()))))
        pos = m.end()
    out.append((pos, b))
    return out


_LESSON = lx.phrases(lx.LESSON_CUES)
# Where a second statement starts: after ";" or ", but"/", so", and before "and I"/"and we".
_CLAUSE_SPLIT = re.compile(
    r"\s*;\s+|,?\s+(?:and|but|so)\s+(?=(?:I|I'm|I've|I'd|we|we're|we've)\b)|,\s+(?:but|so)\s+"
    r"|,\s+(?=(?:I'm|I am|I've|we're|we are|we've)\s)",
    re.I,
)
# A part that starts like this leans on the part before it ("she's free on Tuesdays",
# "no fee after all"): it stays with it.
_DEPENDENT = re.compile(
    r"^(?:he|she|it|they|his|her|its|their|them|him|this|that|these|those|no|not|just|only|"
    r"which|who|then|too|also|plus)\b|^[a-z]+ing\b",
    re.I,
)


# "we're a little kite school ...", "we're based in Leeds": says what "we" is, or where, of the
# group or firm just named.
_WE_ARE_A = re.compile(
    r"^(?:we're|we are)\s+(?:just\s+|only\s+)?(?:a|an|the|on|in|at|near|based|located)\s", re.I
)
_ENDS_WITH_NAME = re.compile(r"(?-i:[A-Z][\w&'-]*)\W*$")
# Where a statement about another thing starts: "and" or "also" before a subject of its own
# ("Mrs Ahmed is allergic to penicillin and the waiting room printer is broken again", "the
# wifi password is on the fridge, also the bins go out thursdays"); each part has its verb.
_OTHER_SUBJECT = re.compile(
    r"(?:,\s+|\s+(?=and\s+(?:the|our|my)\s))(?:and|also|and also)\s+"
    r"(?=(?:(?:the|our|my)\s+)?[\w'-]+(?:\s+[\w'-]+){0,2}?"
    r"\s+(?:is|are|was|were|has|have|goes|go|runs|run|lives|live|needs|need|got|gets|moved|"
    r"opens|open|closes|close|starts|start|comes|come)\b)"
    r"|,\s+also\s+(?=(?-i:[A-Z])[\w'-]+\s+(?:is|are|has|was)\b)",
    re.I,
)


def other_subjects(clause: str) -> list[str]:
    """``clause`` cut where "and" or "also" starts a statement about another thing
    (:data:`_OTHER_SUBJECT`), after a part with a verb of its own ("the freezer and the
    centrifuge are in room 118" is one subject). Which cuts stand is
    :func:`.statements.pieces`'s to say."""
    out: list[str] = []
    pos = 0
    for m in _OTHER_SUBJECT.finditer(clause):
        nxt = clause[m.end() :]
        if has_verb(clause[pos : m.start()].split()[1:]) and not re.match(
            r"(?:he|she|it|they|this|that|these|those|which|who)\b", nxt, re.I
        ):
            out.append(clause[pos : m.start()])
            pos = m.end()
    out.append(clause[pos:])
    return [c.strip() for c in out if c.strip()]


#: "also" before a to-do of the speaker's, in a sentence that runs on with no stop.
_ASIDE_TODO = re.compile(
    rf"\s+(?:and\s+)?also\s+(?=(?:i|we)\s+(?:{lx.phrases(lx.TODO).pattern})\b)", re.I
)


def clauses(sentence: str) -> list[str]:
    """A sentence cut where a second statement starts ("I'm vegetarian, but Dev eats
    everything"), unless it states a lesson (a cause and its fix are one entry) or the next
    part cannot stand alone, or says what "we" is, or where, right after a name ("I own Brisk
    Kiteboarding, we're a little IKO school at Marazion")."""
    if _LESSON.search(sentence):
        # (but a to-do said after it with "also", as dictation runs on with no stop: "... because
        # after that everybody goes to the fields also I need to buy more batteries remind me")
        aside = _ASIDE_TODO.search(sentence)
        if aside and _LESSON.search(sentence[: aside.start()]):
            return [sentence[: aside.start()].strip(), sentence[aside.end() :].strip()]
        return [sentence]
    out: list[str] = []
    pos = 0
    for m in _CLAUSE_SPLIT.finditer(sentence):
        nxt = sentence[m.end() :]
        if _DEPENDENT.match(nxt) or len(nxt.split()) < 3:
            continue
        if _WE_ARE_A.match(nxt) and _ENDS_WITH_NAME.search(sentence[pos : m.start()]):
            continue
        head = sentence[pos : m.start()].split()
        named = all(re.fullmatch(r"[A-Z][a-z-]+", w) for w in head) and head[0] not in lx.NAME_STOP
        if re.fullmatch(r"\s+and\s+", m.group(0)) and 1 <= len(head) <= 2 and named:
            continue  # "Tom and I do the bins", "Anita and I have agreed": one subject
        out.append(sentence[pos : m.start()])
        pos = m.end()
    out.append(sentence[pos:])
    return [c.strip() for c in out if c.strip()]


_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Emoji, a keycap or a text smiley, so that nothing of one is left behind alone.
_EMOJI = re.compile(f"(?:{ONE_EMOJI})+" "|[0-9#*]\ufe0f?\u20e3" r"|:\)|:D|;\)|:\(")
_LEAD = re.compile(
    # (not the "no" of "no Bandcamp merch any more": what ended, named after it)
    r"^(?!no\s+[^,;:.!?]+?\s+(?:any\s?more|any longer)\b)(?:"
    + lx.phrases(lx.LEADS).pattern
    # (before a capital, a quote, or the speaker's own "we" or "my": "hi there we run a cafe")
    # (a dash parts the lead only with a space before it: "no-show fine" opens with no lead)
    + r")(?:\s*[,:;.!]+\s*|\s+[-–—]+\s*|[–—]\s*"
    + r"|\s+(?=(?-i:[A-Z])|[\"']|(?:we|we're|my|our)\b)|\s*$)",
    re.I,
)
# A lead of praise written as the first word of a name, with no stop after it ("Great Taste
# Awards entries close 3 March", "Perfect Pitch Studios does our mastering"): part of the name.
_NAMED_BY_A_LEAD = re.compile(rf"^(?:{'|'.join(sorted(lx.PRAISE_LEADS))})\s+[A-Z][a-z]")
# A short heading before a colon ("Big change: I moved ..."): at most five words, no digit.
_HEADER = re.compile(r"^(?:[A-Za-z'-]+ ){0,4}[A-Za-z'-]+:\s+(?=\S)")
# A heading does not open like a clause ("I've renamed the detective:", "The technician
# confirmed:"): no subject pronoun first, no verb second.
# (nor a name and its verb: "Isle of Wight is booked:")
_CLAUSE_WORDS = re.compile(
    r"^(?:i|i'm|i've|we|we're|we've|you|he|she|it|they)\b|^\S+\s+(?:is|are|was|were|has|"
    r"have|had|\w+ed)\b|^\S+(?:\s+\S+){1,3}\s+(?:is|are|was|were|has|have|had)\s",
    re.I,
)
# ... nor does a heading that says what the speaker does with what follows: "what we accept:"
# names the list, and without it the list says nothing.
_WE_DO = re.compile(r"\b(?:we|i|they)\s+[a-z]+:", re.I)
# "what we accept: sealed food, bread" says "we accept sealed food, bread".
_WHAT_WE_DO = re.compile(r"^what\s+(?P<who>we|I|they)\s+(?P<do>[a-z]+):\s+(?=\S)", re.I)
_OLD_VALUE = lx.phrases(lx.OLD_VALUE_LEADS)
_NAME_FIRST = re.compile(
    r"^(?-i:[A-Z][\w&'.+-]*)(?:\s+(?-i:[A-Z][\w&'.+-]*)){0,3}(?=$|[,;(]|\s[-–—])"
)


def _labels_a_value(rest: str) -> bool:
    """Whether what follows a heading is only a value: a few words, a digit among them, no
    verb ("Knight full app: May 30", a line of a pasted list): the heading says what the value
    is of, and stays. (Only the first sentence counts: lines of a list read as one go on.)"""
    first = re.split(r"[.;]\s", rest, maxsplit=1)[0]
    words = re.findall(r"[\w'/:.-]+", first)
    return (
        0 < len(words) <= 4
        and any(c.isdigit() for c in first)
        and not has_verb([w for w in words if w.lower() not in _MONTHS_LIKE_VERBS])
        and not _CODE_LIKE.search(first)  # "members one: HiveMind$44" is no value to keep
    )


#: Months whose names are verbs too ("May 30" is a date).
_MONTHS_LIKE_VERBS = frozenset({"may", "march"})
#: A word a password or a code could be: letters run into digits ("HiveMind$44", "abc123";
#: not a unit after a number, "4:58/km", "10pm"), or a symbol inside a word.
_CODE_LIKE = re.compile(r"[A-Za-z]{3,}\S*\d|\d[^\s/]*[A-Za-z]{3,}|\w[$!#@%^&*]\w")


def _labels_a_name(rest: str) -> bool:
    """Whether what follows a heading is only a name ("New parts supplier: Brandtmann Cycle
    Supply, ..."): then the heading is the slot the name fills, and stays ("X: Y" reads as
    "X is Y")."""
    return bool(_NAME_FIRST.match(rest.strip()))


#: A role or job someone holds ("head bartender", "office mgr", "site foreman"): said after a
#: name, a line of a roster (here, and :func:`.statements._roster_line`).
ROLE = re.compile(
    r"\b(?:head\s+\w+|(?:(?:senior|junior|lead|assistant|deputy|part-time|full-time|site)\s+)?(?:"
    + "|".join(sorted(map(re.escape, {*lx.KIN_ROLES, *lx.JOB_WORDS}), key=len, reverse=True))
    + r"))\b",
    re.I,
)


def _names_a_role(header: str, rest: str) -> bool:
    """Whether the heading is a person's name and what follows the role they have ("Tomasz:
    head bartender, Wed to Sat"): a line of a roster, whose name stays."""
    name = header.rstrip(": ").split()
    return (
        0 < len(name) <= 2
        and all(w[:1].isupper() for w in name)
        and name[0] not in lx.NAME_STOP
        and bool(ROLE.match(rest.strip()))
    )


def _labels_a_list(rest: str) -> bool:
    """Whether what follows a heading is a list of three or more short items (or two rows of a
    table) without a verb of their own ("Kit list for new dancers: white shirt, green baldrick,
    bell pads"; "jump heights: 8 inch, 12, 16, 20 and 24"): then the heading says what the
    items are, and stays (a note, kept whole)."""
    first_sentence = re.split(r"(?<=[.!?])\s", rest.strip(), maxsplit=1)[0]
    items = [i.split() for i in re.split(r",\s+(?:and\s+)?", first_sentence)]
    items = [i for i in items if i]
    # (a noun may read as a verb, "routine care", "bell pads": most items have none; none has
    # a subject pronoun or an auxiliary, "it's the white Transit")
    clause = [w for i in items for w in i if re.sub(r"^\w+(?='s$)", "", w.lower()) in _VERBAL]
    verbless = sum(1 for i in items if not has_verb(i))
    # (two, each ending in a number, are the rows of a table: "membership: adult 120, child 60")
    rows = len(items) == 2 and all(len(i) > 1 and re.search(r"\d", i[-1]) for i in items)
    return (
        (len(items) >= 3 or rows)
        and all(len(i) <= 5 for i in items)
        and not clause
        and verbless * 2 > len(items)
    )


_VERBAL = AUX | lx.PRONOUN_SUBJECTS - {"all", "both", "one", "each", "every"}


#: Words that speak to the listener, the agent: "you", "your".
TO_THE_LISTENER = re.compile(r"\b(?:you|your)\b", re.I)

# A note's heading: a few words that are not a clause, then a colon.
_NOTE_HEADER = re.compile(r"^(?:[A-Za-z'-]+ ){0,7}[A-Za-z'-]+:\s+(?=\S)")


_OF_THE_DAY = re.compile(
    r"\b(?:" + "|".join(lx.EPISODE) + r"|to-?do|todo|agenda|shopping|this week)\b", re.I
)


def listed_note(text: str) -> bool:
    """Whether ``text`` is a note: a heading that is not a clause, then a list
    (:func:`_labels_a_list`): "Kit list for the new dancers' info sheet: white shirt, green
    baldrick, bell pads, black trousers"."""
    header = _NOTE_HEADER.match(text)
    return (
        header is not None
        and not _CLAUSE_WORDS.search(header.group(0))
        and not _OF_THE_DAY.search(header.group(0))  # "today's plan: ...", "to-do list: ..."
        and not TO_THE_LISTENER.search(header.group(0))  # "Rule for what you draft:"
        and _labels_a_list(text[header.end() :])
    )


# Whom a message is to, before a comma: "Hi Kerry-Ann, Maya's got a new inhaler", "Mam, the new
# website is live" (a name alone is kept: "Dennis, our treasurer, retired").
_VOCATIVE = re.compile(
    r"^(?:(?:" + lx.phrases([*lx.GREETINGS, "thanks", "cheers"]).pattern + r")\s+(?-i:[A-Z][\w'-]*)"
    r"(?:\s+(?-i:[A-Z][\w'-]*))?|mam|mum|mom|dad|love|mate|guys|team|all|folks|everyone)"
    r"\s*,\s+(?=\S)",
    re.I,
)
# Whom a chat message is addressed to, as typed: "@assistant", "@jade:".
_MENTION = re.compile(r"^(?:@[\w.-]+[,:]?\s+)+(?=\S)")
# The speaker's "I" typed in lower case, alone or run together with its verb.
_CAPITAL_I = {"i": "I", "im": "I'm", "i'm": "I'm", "ive": "I've", "i've": "I've", "i'll": "I'll"}
_LOWER_I = re.compile(r"(?<![\w'.-])(?-i:i|im|i'm|ive|i've|i'll)(?![\w'.-])")
_PLACE = r"(?:my|the|our)\s+(?:" + "|".join(sorted(lx.KEEP_PLACES)) + r")"
_KEEP_ASKED = re.compile(
    r"^(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|please\s+)"
    r"(?:(?:" + lx.phrases(lx.KEEP_VERBS).pattern + r")(?:\s+(?:in|on|to|into)\s+" + _PLACE + r")?"
    r"|(?:"
    + "|".join(sorted(lx.PUT_VERBS))
    + r")(?:\s+(?:this|that|it))?\s+(?:in|on|to|into)\s+"
    + _PLACE
    + r")"
    r"(?:\s+that\s+|(?:\s+[\w'-]+){0,4}\s*:\s+)(?=\S)",
    re.I,
)
# (asked politely, maybe with "also": "kindly also note our trustee ...")
_CUE = re.compile(
    r"^(?:(?:please|pls|plz|kindly)\s+(?:also\s+)?(?:note|remember|keep in mind|bear in mind)"
    r"(?:\s+that)?|(?:" + lx.phrases(lx.CUES).pattern + r"))[\s,:]+(?!to\b)",
    re.I,
)
# not "so far", "so much": the word is part of what follows
_FILLER = re.compile(
    r"^(?:" + "|".join(sorted(lx.FILLERS)) + r")\b[\s,]+(?!far\b|much\b|many\b)", re.I
)
_TRAILER = re.compile(r"[\s,;:-]+(?:" + lx.phrases(lx.TRAILERS).pattern + r")\s*$", re.I)


def visible(text: str) -> str:
    """``text`` without the invisible characters a memory write refuses
    (:func:`reverie.core.validation.check_invisible`): a zero-width space pasted into a word
    must not make review's entry refused, and so lost with the fact it holds."""
    if text.isascii() or not chars.INVISIBLE.search(text):
        return text
    return "".join(
        c
        for i, c in enumerate(text)
        if not chars.INVISIBLE.match(c) or chars.allowed_invisible(text, i)
    )


_LIKED = re.compile(r"\b(?:love|loves|like|likes|need|needs|want|wants)\s*$", re.I)


def _without_emoji(text: str) -> str:
    """``text`` without its emoji, but for one that stands for a word
    (:data:`_EMOJI_AS_WORD_BEFORE`: "we love 🍕 and at the shop we sell it fresh", which without
    it says "we love and ..."). An emoji before a stop goes with the space before it: "on friday
    🐶. she needs"."""

    def drop(m: re.Match[str]) -> str:
        before = text[: m.start()]
        word = _EMOJI_AS_WORD_BEFORE.search(before + " ") and m.group(0).strip()[:1] not in ":;"
        # (with a word after it, or an object of liking: "I love ☕"; not "as they type this 😂")
        goes_on = re.match(r"\s*[A-Za-z]", text[m.end() :]) or _LIKED.search(before)
        return m.group(0) if word and goes_on else ""

    text = re.sub(rf"\s*(?:{_EMOJI.pattern})(?=[.,;:!?])", drop, text)
    return _EMOJI.sub(drop, text)


def clean(text: str, *, heading: bool = False) -> str:
    """A clause without list markers, emphasis, emoji, quotes, greetings and fillers around it,
    and without a short heading before a colon unless ``heading``.

    A link or a source citation typed in chat is taken out: it must not become a link or a
    source in memory.
    """
    text = _CONTROL.sub(" ", text)
    text = _BULLET.sub("", text)
    text = _EMPHASIS.sub("", text)
    text = visible(_without_emoji(text))
    text = SOURCE_PATTERN.sub("", text).replace("[[", "").replace("]]", "")
    text = re.sub(r"\s+", " ", text).strip().strip("\"'“”‘’")
    text = _LOWER_I.sub(lambda m: _CAPITAL_I[m.group(0)], text)  # "hi im emre" -> "hi I'm emre"
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"[.!…]+$", "", text).strip()
        text = _WHAT_WE_DO.sub(lambda m: f"{m['who']} {m['do']} ", text)
        header = _HEADER.match(text)
        if (
            header
            and not heading
            and not _LESSON.search(header.group(0))
            and not _CLAUSE_WORDS.search(header.group(0))
            and not _WE_DO.search(header.group(0))  # "what we accept: ...", "events we run:"
            and not _OLD_VALUE.match(header.group(0))  # "scratch the bullet points: ..."
            and not _labels_a_name(text[header.end() :])
            and not _labels_a_value(text[header.end() :])
            and not _names_a_role(header.group(0), text[header.end() :])
        ):
            text = text[header.end() :]  # "Reorg news: ...", "Small update on me: ..."
        text = _VOCATIVE.sub("", text).strip()
        text = _MENTION.sub("", text).strip()  # "@assistant don't ping me before 10"
        if not _NAMED_BY_A_LEAD.match(text):
            text = _LEAD.sub("", text).strip()
        text = _CUE.sub("", text).strip()
        asked = _KEEP_ASKED.match(text)
        if asked:  # "can you remember that Dana books the toilets?": what to keep, asked
            text = re.sub(r"\?+(?=\s|$)", ".", text[asked.end() :], count=1).strip()
        text = _FILLER.sub("", text).strip()
        text = _TRAILER.sub("", text).strip()
    return text
