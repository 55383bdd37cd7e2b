"""What a statement is about, for the offline reviewer (SPEC R6, R8): pure functions, no I/O.

A :class:`Frame` is what a clause or an entry is *about*, read the same way from a new clause
(:func:`frame`) and from an entry already in memory (:func:`entry_frame`), so that the two can
be compared (:mod:`.changes`):

* ``owner``: whose fact it is: the speaker for "I" and "my", ``we`` for "we" and "our", a
  named person, or nobody for a thing ("the billing service");
* ``subject``: the words of its subject, up to the verb ("the SDK beta" -> {sdk, beta});
* ``skeleton``: its content words, crudely stemmed, without the values;
* ``values``: what may change while the statement stays about the same thing: names, numbers,
  times, dates, weekdays, versions, and the words of a closed class (vegetarian, vegan);
* ``kinds``: the kinds of those values (weekday, date, time, number, version, name, class);
* ``cls``: the single-valued attribute it states, when one of :data:`.lexicon.SINGLE_VALUED`
  fits (a person lives in one place, a deadline has one date);
* ``old``: values the statement says are replaced ("instead of Fridays", "not 8:30").

Every list is data in :mod:`.lexicon`; each rule reads a feature of the sentence (its subject,
its verbs, its tokens) that any wording of the same fact shares.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from . import lexicon as lx
from .types import SOURCE_PATTERN

__all__ = [
    "CALENDAR",
    "NAME_WORD",
    "Frame",
    "entry_frame",
    "frame",
    "has_verb",
    "is_verb",
    "meaning",
    "past",
    "says_update",
    "strip_source",
    "subject_name",
    "without_work_done",
]

_UPDATE = lx.phrases(lx.UPDATE_MARKERS)
_REVERSAL = lx.phrases(lx.REVERSAL_CUES)
#: The day a value starts from ("from 1 April", "from the 3rd of May"): not a period's start
#: ("from 1 May to 30 June").
_STARTS_ON = re.compile(
    rf"\bfrom\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{'|'.join(lx.MONTHS)})\b"
    r"(?!\s*(?:\d{4}\s*)?(?:to|till|until|through|-|–)\s)",
    re.I,
)
_DECISION = lx.phrases(lx.DECISION_CUES)
MONTH = lx.phrases(lx.MONTHS)
_WEEKDAY = lx.phrases(lx.WEEKDAYS)
#: A month or a day of the week: a time, never a name ("May", "Tuesdays").
CALENDAR = lx.phrases([*lx.MONTHS, *lx.WEEKDAYS])
_OLD_VALUE = re.compile(
    r"(?:" + lx.phrases(lx.OLD_VALUE_LEADS).pattern + r")\s+(?P<v>[^,;:.!?]+)", re.I
)
_CLASS_PATTERNS = {
    name: lx.phrases(verbs) for name, verbs in lx.SINGLE_VALUED.items() if name != "amount"
}
WORD = re.compile(r"[A-Za-z0-9][\w.+#'/&-]*[\w+#]|[A-Za-z0-9]")
_VERSIONED = re.compile(r"\b([A-Z][\w.+#-]*?|[a-z][\w+#-]*)\s+v?(\d+(?:\.\d+)*)\b")
# "upgraded Airflow to 2.9": the tool and its new version apart, a dotted version only.
_UPGRADED = re.compile(
    r"\b(?:upgraded|updated|bumped|moved|migrated)\s+([A-Z][\w.+#-]*)\s+to\s+v?(\d+(?:\.\d+)+)\b"
)
TITLE = r"(?:Dr\.?|Mr\.?|Mrs\.?|Ms\.?|Prof\.?|Professor|Inspector|Sergeant|Grandma|Grandpa)"
#: One word of a name, a capital first, accented letters too: "Ava", "O'Brien", "Tomás",
#: "Łukasz"; not "Ava's".
NAME_WORD = r"(?-i:[A-ZÀ-ÖØ-ÞĀ-Ž](?:[^\W\d_]|-)*(?:'[A-ZÀ-ÖØ-Þ](?:[^\W\d_]|-)*)?)"
_NAME = re.compile(rf"^(?P<n>(?:{TITLE}\s+)?{NAME_WORD}(?:\s+{NAME_WORD}){{0,2}})(?:'s)?\b")
TIME_WORDS = lx.words(
    "today tonight tomorrow yesterday week weeks month months year years quarter weekend "
    "morning afternoon evening night last next this ago recently lately soon later earlier "
    "currently now sprint time"
)
AUX = lx.words("is are was were has have had will would can could should must may might 's")


#: The speaker's name before a statement, as a conversation writes it ("Sam: ").
SPEAKER_NAMED = re.compile(r"^[^:]{1,40}:\s")


@functools.lru_cache(maxsize=65536)
def strip_source(text: str) -> str:
    """An entry's text without its ``(source: ...)`` citations."""
    return re.sub(r"\s+", " ", SOURCE_PATTERN.sub("", text)).strip()


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    w = word.lower().strip("'")
    w = re.sub(r"'s$", "", w)
    if len(w) > 6 and w.endswith("ings"):
        w = w[:-4]  # "mornings" meets "morning", "bookings" meets "booking"
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ied"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2] if not w.endswith("eed") else w[:-1]
    elif len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("ses", "xes", "ches", "shes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    return w.rstrip("e") if len(w) > 4 else w


@functools.lru_cache(maxsize=65536)
def meaning(text: str) -> str:
    """What an entry or clause says, for duplicate detection: no case, punctuation, stop
    words, attribution prefix or source; words stemmed."""
    body = _ATTRIBUTION.sub("", strip_source(text))
    words = WORD.findall(body.replace("’", "'"))
    kept = [stem(w) for w in words if w.lower() not in lx.STOP_WORDS]
    return " ".join(w for w in kept if w)


@dataclass(frozen=True)
class Frame:
    """What a statement is about (see the module docstring)."""

    owner: tuple[str, ...]
    subject: frozenset[str]
    skeleton: frozenset[str]
    values: frozenset[str]
    kinds: frozenset[str]
    cls: str | None = None
    old: frozenset[str] = frozenset()
    update: bool = False
    versions: tuple[tuple[str, str], ...] = ()
    #: What a thing is used or done for ("... for builds"): another purpose, another fact.
    purpose: frozenset[str] = frozenset()
    #: It states a decision ("we decided to split the frontend").
    decided: bool = False
    #: It takes an earlier decision back ("we reversed the repo decision").
    reverses: bool = False
    #: The text it was read from (its slot is read from it: :mod:`.slots`).
    text: str = field(default="", compare=False)

    def same_owner(self, other: Frame) -> bool:
        """Whether both are facts of the same person or group (or both of no one)."""
        if not self.owner or not other.owner:
            return not self.owner and not other.owner
        a, b = set(self.owner), set(other.owner)
        return a <= b or b <= a


# --- reading the subject --------------------------------------------------------------------

# "Now I use ...", "now we open at 8": "now" before the subject leaves it the subject.
_NOW = r"^(?:now,?\s+)?"
_I = re.compile(rf"{_NOW}(?:i|i'm|i've|i'd|i'll|i am|i have|i was)\b", re.I)
_MY = re.compile(rf"{_NOW}my\b", re.I)
# (and the speaker with others: "tom and I do the bins", "me and rob swapped school runs")
_WE = re.compile(
    rf"{_NOW}(?:we|we're|we've|we'd|we'll|we are|we have|us"
    r"|(?-i:[A-Z])[\w-]*(?:\s+(?-i:[A-Z])[\w-]*)?\s+and\s+(?:I|me)(?!\w)"
    r"|me\s+and\s+(?:my\s+[\w-]+|(?-i:[A-Z])[\w-]*))\s",
    re.I,
)
_OUR = re.compile(rf"{_NOW}our\b", re.I)
_THERE = re.compile(r"^there(?:'s| is| are| was| were)\b", re.I)
# The speaker's "I'm" or "we're" left out before a verb in -ing, with "now": "buying from
# Blaen Onneu now", "using Salto now".
_GERUND_NOW = re.compile(r"^[a-z]+ing\b(?=[^.;!?]*\bnow\b)", re.I)


def past(word: str) -> bool:
    """Whether ``word`` is a past tense ("moved", "rewrote"), by ending or by the list."""
    w = word.lower()
    for prefix in ("", "re", "over", "under", "out", "mis"):
        if w.startswith(prefix) and w[len(prefix) :] in lx.IRREGULAR_PAST:
            return True
    return len(w) > 4 and w.endswith("ed") and not w.endswith("eed")


def subject_kind(text: str, role: str) -> tuple[str, tuple[str, ...]]:
    """Who the clause is about: ``(kind, owner words)``."""
    if _I.match(text) or _MY.match(text):
        return "i", ()
    if _WE.match(text):
        return "we", ("we",)
    if _OUR.match(text):
        return "our", ("we",)
    if _THERE.match(text):
        return "there", ()
    first = text.split(" ", 1)[0]
    low = first.lower().strip(",")
    if role == "user" and (past(low) or (_GERUND_NOW.match(text) and low not in lx.NOT_GERUNDS)):
        return "implicit", ()
    name = subject_name(text)
    if name:
        name = re.sub(rf"^{TITLE}\s+", "", name)
        return "name", tuple(w.lower() for w in name.split())
    return "thing", ()


def _subject_words(text: str, kind: str) -> frozenset[str]:
    """The words of a thing's subject, up to its verb: "The SDK beta is due" -> {sdk, beta}."""
    if kind not in ("thing", "our", "name", "i"):
        return frozenset()
    if kind == "i" and not _MY.match(text):
        return frozenset()
    words = re.sub(r"^(?:the|our|a|an|my|their|they)\s+", "", text, flags=re.I).split(" ")
    subject: list[str] = []
    for w in words[:7]:
        if is_verb(w) and subject:
            return frozenset(
                stem(x) for x in WORD.findall(" ".join(subject)) if x.lower() not in lx.STOP_WORDS
            )
        subject.append(w)
    return frozenset()


def _noun_phrase(words: list[str]) -> frozenset[str]:
    """The first few content words, up to a verb, a stop word or a value."""
    out: list[str] = []
    for w in words[:4]:
        low = w.lower().strip(",.;:!?")
        if not low or low in lx.STOP_WORDS or is_verb(low) or lx.VALUE_TOKEN.fullmatch(low):
            break
        out.append(stem(low))
    return frozenset(out)


def subject_name(text: str) -> str:
    """The name a clause starts with ("Dr. Patel works ..." -> "Dr. Patel"), or "".

    A single capitalised first word is a name only when a verb or "'s" follows it and it does
    not end like a common noun: "Dana is our DBA", not "Book three is" or "Leadership raised".
    """
    m = _NAME.match(text)
    if not m or m["n"].split()[0].rstrip(".") in lx.NAME_STOP:
        return ""
    name = m["n"]
    if " " not in name and not re.match(rf"^{TITLE}", name):
        rest = text[m.end() :].split()
        if name.lower().endswith(lx.NOUN_ENDINGS) and not text[m.end() :].startswith("'s"):
            return ""
        if not text[len(name) :].startswith("'s") and not (rest and is_verb(rest[0])):
            return ""
        if rest and _plural_subject(name, rest[0]):
            return ""  # "Prescriptions come from Boots": things, not a person
    return name


def _plural_subject(word: str, verb: str) -> bool:
    """Whether ``word`` is a plural noun by the verb after it: it ends in "s" and the verb is
    a present-tense plural ("are", "have", "come", "run"), which a name never takes ("James
    runs", not "James run")."""
    w, v = word.lower(), verb.lower().strip(",.;:")
    if not w.endswith("s") or w.endswith("ss"):
        return False
    if v in ("are", "were", "have", "do", "don't", "aren't", "weren't", "haven't"):
        return True
    return is_verb(v) and not v.endswith("s") and not past(v) and v not in lx.MODALS


# --- values ---------------------------------------------------------------------------------


def _values(text: str, owner: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """The values of a clause and their kinds."""
    values: set[str] = set()
    kinds: set[str] = set()
    for m in lx.VALUE_TOKEN.finditer(text):
        token = m.group(0).lower().strip("`")
        values.add(token)
        if re.search(r"[/@`_]|\.\w+\.", m.group(0)):
            kinds.add("path")
        elif ":" in token or token.endswith(("am", "pm")):
            kinds.add("time")
        else:
            kinds.add("number")
    for m in MONTH.finditer(text):
        values.add(m.group(0).lower()[:3])
        kinds.add("date")
    for w in re.findall(r"[a-z]+", text.lower()):
        if w in lx.NUMBER_WORDS:
            values.add(w)
            kinds.add("number")
    for m in _WEEKDAY.finditer(text):
        values.add(m.group(0).lower().rstrip("s")[:3])
        kinds.add("weekday")
    for tool, version in _versions(text):
        values.add(f"{tool} {version}")
        kinds.add("version")
    words = WORD.findall(text)
    for i, w in enumerate(words):
        low = w.lower()
        for cls in lx.EXCLUSIVE_CLASSES:
            if low in cls:
                values.add(low)
                kinds.add("class")
        low = re.sub(r"'s$", "", low)
        # A capital, or one inside the word ("iManage", "eBay"): a name.
        capital = i > 0 and (w[:1].isupper() or bool(re.search(r"[a-z][A-Z]", w)))
        capital = capital and w not in lx.NAME_STOP
        dated = MONTH.fullmatch(w) or _WEEKDAY.fullmatch(w)
        if capital and low not in owner and low not in lx.STOP_WORDS and not dated:
            values.add(low)
            kinds.add("name")
    return frozenset(values), frozenset(kinds)


def _versions(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    for m in _VERSIONED.finditer(text):
        tool, version = m.group(1), m.group(2)
        low = tool.lower()
        if low in lx.STOP_WORDS or MONTH.fullmatch(tool) or low in TIME_WORDS:
            continue
        days = re.split("[-/]", low)
        if all(_WEEKDAY.fullmatch(d) or d in lx.WEEKDAYS_SHORT for d in days):
            continue  # "Thursday 21 May", "open Tue-Sun 12-10": days, not a tool's version
        if low in lx.UNTIL:
            continue  # "Tues to Sat 10 till 5.30": a time
        if not (tool[:1].isupper() or "." in version):
            continue
        after = text[m.end() :].split(" ", 2)
        following = after[1].lower().strip(",.;:!?") if len(after) > 1 else ""
        plain = "." not in version and following and following not in lx.STOP_WORDS
        if plain and not is_verb(following):
            continue  # "SOC 2 audit", "Pixel 8 case": a name with a number, not a version
        out.append((low, version))
    for m in _UPGRADED.finditer(text):
        if m.group(1) not in lx.NAME_STOP:
            out.append((m.group(1).lower(), m.group(2)))
    return tuple(out)


def _old_values(text: str) -> frozenset[str]:
    """Words of what the clause says is replaced: "instead of Fridays" -> {"fri"}."""
    out: set[str] = set()
    phrases = [m["v"] for m in _OLD_VALUE.finditer(_unchanging(text))]
    switched = re.search(r"\bfrom (?P<v>[\w.+# -]+?) to\b", text, re.I)
    if switched:
        phrases.append(switched["v"])
    for phrase in phrases:
        phrase = " ".join(phrase.split()[:4])
        values, _ = _values(f"x {phrase}", ())
        out |= values
        out |= {stem(w) for w in WORD.findall(phrase) if w.lower() not in lx.STOP_WORDS}
    return frozenset(out)


def _class(text: str) -> str | None:
    """The single-valued attribute a clause states, read from its verb and the value after
    it: "moved to Berlin" is a place, "moved to May 2" a date."""
    for name, pattern in _CLASS_PATTERNS.items():
        for m in pattern.finditer(text):
            after = text[m.end() :].strip()
            dated = bool(
                re.match(r"^(?:on |to |for |by |the )?(?:\d|" + MONTH.pattern + ")", after, re.I)
            )
            named = bool(re.match(r"^(?:the |a |an )?(?-i:[A-Z])", after))
            if name == "date" and not dated:
                continue
            if name in ("location", "employer") and (dated or not named):
                continue
            return name
    return None


_ATTRIBUTION = re.compile(r"^(?P<who>[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}): (?=\S)")


def frame(text: str, speaker: str = "", role: str = "user") -> Frame:
    """The frame of a clause said by ``speaker`` (see the module docstring)."""
    kind, owner = subject_kind(text, role)
    subject = _subject_words(text, kind)
    mine = re.search(r"\b(?:my|me|I|I'm|I've)\b", text)
    if kind in ("i", "implicit") or (kind in ("thing", "name") and mine and speaker):
        # "Leadership raised my quota": a fact about the speaker's quota.
        owner = tuple(w.lower() for w in speaker.split()) if speaker else ("i",)
        if kind not in ("i", "implicit") and mine:
            subject = _noun_phrase(text[mine.end() :].split(" "))
    subject -= {stem(w) for w in owner}
    values, kinds = _values(text, owner)
    skeleton = frozenset(
        lx.SAME_VERB.get(stem(w), stem(w))
        for w in WORD.findall(text.replace("-", " "))
        if w.lower() not in lx.STOP_WORDS
        and w.lower() not in owner
        and w.lower() not in TIME_WORDS
        and w.lower() not in values
        and not _UPDATE.fullmatch(w)
        and not lx.VALUE_TOKEN.fullmatch(w)
        and not MONTH.fullmatch(w)
        and not _WEEKDAY.fullmatch(w)
    ) - {stem(v) for v in values}
    return Frame(
        owner=owner,
        subject=subject,
        skeleton=skeleton,
        values=values,
        kinds=kinds,
        cls=_class(text),
        old=_old_values(text),
        update=says_update(text),
        versions=_versions(text),
        purpose=_purpose(text),
        decided=bool(_DECISION.search(text)),
        reverses=bool(_REVERSAL.search(text)),
        text=f"{speaker}: {text}" if speaker else text,
    )


def _purpose(text: str) -> frozenset[str]:
    m = re.search(r"\bfor\s+([^,;.()]+)", text, re.I)
    if not m:
        return frozenset()
    return frozenset(
        stem(w) for w in WORD.findall(m.group(1)) if w.lower() not in lx.STOP_WORDS | TIME_WORDS
    )


# Words of change that casual talk is full of ("a new chapter", "ever since").
_WEAK_UPDATE = lx.phrases(lx.WEAK_UPDATE_MARKERS)


def says_update(text: str, *, weak: bool = True) -> bool:
    """Whether ``text`` says that it replaces something said before: a word of update
    (``lexicon.UPDATE_MARKERS``), of reversal, or the day it holds from ("from 1 April")
    (:attr:`Frame.update`). Without ``weak``, a word casual talk is full of
    (``lexicon.WEAK_UPDATE_MARKERS``: "a new chapter", "ever since") does not count."""
    text = _unchanging(text if weak else _WEAK_UPDATE.sub(" ", text))
    return bool(_UPDATE.search(text) or _REVERSAL.search(text) or _STARTS_ON.search(text))


#: "would not start", "could not connect": a verb negated after "would" or "could" says what
#: failed, not which value something no longer has ("not Fridays"); "did not renew" may end
#: something, and stays a word of change.
_NEGATED_VERB = re.compile(r"\b(?:would|could)\s+(not)\s+(?=[a-z])", re.I)


#: "anything with the council goes to her": where things are sent, not a value that moved.
_TO_SOMEONE = re.compile(r"\b(?:go|goes|gone|went)\s+to\s+(?=(?:her|him|them|me|us)\b)", re.I)


#: "a fixed booking", "our fixed price": fixed as a kind of thing, not as a repair.
_FIXED_KIND = re.compile(r"\b(?:a|an|the|our|my|their|its|on a)\s+(fixed)\b", re.I)


#: "we fixed it by adding REDIS_URL", "it was fixed with a retry": how a repair was made, the
#: fix of a lesson, not a value that changed. ("... and that fixed it" stays a word of change:
#: said after a lesson already kept, it is that lesson again.)
_FIXED_REPAIR = re.compile(
    r"\b(fixed)\s+(?:(?:it|that|this|them)\s+)?(?:by|with)\b"
    r"|\b(?:was|were|got|been)\s+(fixed)\s+(?:by|with)\b",
    re.I,
)


#: "all new volunteers must do the induction", "New members pay £20": whoever is new, a kind
#: of people or things, not something that changed.
_NEW_KIND = re.compile(r"(?:\b(?:all|any|every|each)\s+|^)(new)\s+[a-z]+s\b", re.I)


#: "mum's having her knee replaced", "getting the boiler moved": work someone has done on a
#: thing, not a value that changed.
_HAVING_DONE = re.compile(
    r"\b(?:having|getting|get|got|had|have|has)\s+(?:her|his|my|our|their|the|a|an|its)\s+"
    r"(?:[\w-]+\s+){1,2}?(replaced|moved|upgraded|changed|switched|fixed)\b",
    re.I,
)


def without_work_done(text: str) -> str:
    """``text`` with the verb of work someone has done on a thing (:data:`_HAVING_DONE`:
    "having her knee replaced") blanked out: it looks like a word of update, and is none."""
    for m in reversed(list(_HAVING_DONE.finditer(text))):
        text = text[: m.start(1)] + " " * len(m.group(1)) + text[m.end(1) :]
    return text


def _unchanging(text: str) -> str:
    """``text`` with the words that only look like a word of update blanked out: the "not" of
    a negated verb (:data:`_NEGATED_VERB`), "goes to her" (:data:`_TO_SOMEONE`), "fixed"
    before a noun (:data:`_FIXED_KIND`) or as a repair (:data:`_FIXED_REPAIR`), "new" of a
    kind (:data:`_NEW_KIND`), work someone has done on a thing (:func:`without_work_done`)."""
    text = without_work_done(text)
    for m in reversed(list(_NEGATED_VERB.finditer(text))):
        text = text[: m.start(1)] + "   " + text[m.end(1) :]
    for m in reversed(list(_NEW_KIND.finditer(text))):
        text = text[: m.start(1)] + "   " + text[m.end(1) :]
    text = _TO_SOMEONE.sub(lambda m: " " * len(m.group(0)), text)
    for m in reversed(list(_FIXED_REPAIR.finditer(text))):
        at = 1 if m.group(1) else 2
        text = text[: m.start(at)] + " " * 5 + text[m.end(at) :]
    return _FIXED_KIND.sub(lambda m: m.group(0)[: -len(m.group(1))] + " " * 5, text)


@functools.lru_cache(maxsize=65536)
def entry_frame(entry: str) -> Frame:
    """The frame of an entry already in memory, written by review or by a person.

    ``Sam: we deploy on Fridays`` is read as Sam saying it; ``Sam prefers tea`` as a
    statement about Sam.
    """
    body = strip_source(entry)
    m = _ATTRIBUTION.match(body)
    if m and m["who"].lower() not in ("note", "update", "lesson", "decision", "more", "see"):
        return frame(body[m.end() :], m["who"])
    return frame(body)


def has_verb(words: list[str]) -> bool:
    return any(is_verb(w) for w in words)


def is_verb(word: str) -> bool:
    """Whether ``word`` reads as a verb form: an auxiliary, a listed verb or an inflection of
    one, a past tense."""
    low = word.lower().strip(",.;:!?")
    if low in AUX or low in lx.VERBS or low in lx.IRREGULAR_PAST or past(low):
        return True
    if low.endswith("n't") or low in ("does", "do", "did", "goes"):
        return True
    for end in ("ies", "es", "s"):
        stem = low[: -len(end)] if low.endswith(end) else ""
        if stem and (stem in lx.VERBS or stem + "e" in lx.VERBS or stem + "y" in lx.VERBS):
            return True
    return False
