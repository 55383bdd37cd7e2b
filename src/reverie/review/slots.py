"""Which slot a statement fills, and with what, for the offline reviewer (SPEC R6, R8).

Most updates name a new value in the slot an entry already fills, and share no word with it
but the slot: "Opsgenie handles alerts now" after "Paging goes through PagerDuty", "Callum is
my partner for distillation now" after "Sam's lab partner is Sunniva". A :class:`Slot` reads a
statement as *what kind of thing* it is about (its content words, and the categories of
:data:`.lexicon.SLOT_CATEGORIES` they belong to: paging and alerts are both alerting) and *what
fills it* (names, numbers, days, dates, times). :func:`refills` says whether a new statement
puts another value in an old statement's slot.

Pure functions, no I/O. Every word list is in :mod:`.lexicon`; the rules read grammar that any
wording shares: where the subject ends (the first verb), whether a capitalised first word is a
name (a plural noun agrees with a plural verb: "Jobs go", not "Evri collects"), and which
values differ.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from . import lexicon as lx
from .frames import AUX, MONTH, TIME_WORDS, WORD, is_verb, stem, strip_source

__all__ = [
    "Slot",
    "categories",
    "dated_alike",
    "read_slot",
    "refills",
    "root",
    "said_of_others",
    "says_no_more",
    "turns_around",
    "value_kind",
]

# "Sam: ..." and "Sam, asked "...": ..." or "Sam, asked when ...: ..." (an answer kept with
# its question) name the speaker.
_ATTRIBUTION = re.compile(
    r"^(?P<who>[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2})(?:, asked (?:\"[^\"]*\"|[^:\"]*))?: (?=\S)"
)
_WEEKDAY = lx.phrases(lx.WEEKDAYS)
_CAPITAL_RUN = re.compile(
    r"(?-i:[A-Z][\w&'.+-]*)(?:\s+(?:&\s+|of\s+|de\s+)?(?-i:[A-Z][\w&'.+-]*))*"
)


@functools.lru_cache(maxsize=65536)
def root(word: str) -> str:
    """A word's stem, with an agent noun brought to its verb: "interpreter" and
    "interpreting" meet, as do "supplier" and "supplies"."""
    w = stem(word)
    if len(w) > 6 and w.endswith("ier"):
        return w[:-3] + "y"
    if len(w) > 6 and w.endswith("er"):
        w = stem(w[:-2])
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # "swimming" -> "swimm" -> "swim", "shipping" -> "ship"
    return w


_CATEGORY: dict[str, frozenset[str]] = {}
for _name, _members in lx.SLOT_CATEGORIES.items():
    for _w in _members:
        _CATEGORY[root(_w)] = _CATEGORY.get(root(_w), frozenset()) | {_name}
_CONSTRUCTIONS = {c: re.compile(p, re.I) for c, p in lx.SLOT_CONSTRUCTIONS.items()}
_LIGHT = frozenset(root(w) for w in lx.LIGHT_VERBS) | lx.GENERIC_WORDS
_SLOT_HEADS = frozenset(root(w) for w in lx.SLOT_HEADS)
_BE = AUX | lx.words("am be been being")  # being, having and helping verbs
_PLURAL_VERBS = lx.words("are were go come have do run live sit get take handle")


@dataclass(frozen=True)
class Slot:
    """What a statement is about, and the values that fill it (see the module docstring)."""

    words: frozenset[str]  # content stems: not names, values, stop words or light verbs
    cats: frozenset[str]  # categories of those words
    names: frozenset[str]  # proper names, lower case ("royal mail", "opsgenie")
    values: frozenset[str]  # numbers, times, days, dates
    subject: frozenset[str]  # the names and numbers before the first verb
    who: str  # the person or thing it is said of: its owner, else a name its verb follows
    head: frozenset[str]  # the content words before the first verb
    first: str  # the stem of a capitalised first word that may be a name, or ""
    owner: str  # who says it of themselves ("i" for I/my), the attributed speaker, or ""


def categories(words: frozenset[str]) -> frozenset[str]:
    """The slot categories of stemmed words ("alert" -> alerting)."""
    return frozenset(c for w in words for c in _CATEGORY.get(w, ()))


@functools.lru_cache(maxsize=65536)
def read_slot(text: str) -> Slot:
    """The :class:`Slot` of a clause or an entry (its source and a "Sam: " attribution are
    not part of what it says)."""
    body = strip_source(text).replace("’", "'")
    owner = ""
    m = _ATTRIBUTION.match(body)
    if m:
        owner, body = m["who"].lower(), body[m.end() :]
    if re.search(r"\b(?:I|I'm|I've|my|me)\b", body):
        owner = owner or "i"
    possessive = re.match(r"^(?-i:[A-Z][\w-]+)(?=['’]s\s)", body)
    if possessive and not owner:
        owner = possessive.group(0).lower()  # "Sam's lab partner is Sunniva": Sam's fact
    tokens = WORD.findall(body)
    verb_at = next((i for i, w in enumerate(tokens) if i and is_verb(w)), len(tokens))
    names: set[str] = set()
    first = ""
    for run in _CAPITAL_RUN.finditer(body):
        parts = [p.strip(".,;:!?'\"") for p in run.group(0).split()]
        parts = [p for p in parts if p and p not in ("&", "of", "de")]
        while parts and (parts[0] in lx.NAME_STOP or _dated(parts[0])):
            parts.pop(0)
        while parts and (parts[-1] in lx.NAME_STOP or _dated(parts[-1])):
            parts.pop()
        if not parts:
            continue
        name = " ".join(parts).lower()
        name = re.sub(r"'s$", "", name)
        if run.start() == 0 and len(parts) == 1 and parts[0] == run.group(0):
            if not _may_be_name(parts[0], tokens):
                continue
            first = root(name)
        if name and name != owner:
            names.add(name)
    values: set[str] = set()
    for v in lx.VALUE_TOKEN.finditer(body):
        values.add(v.group(0).lower())
    for v in MONTH.finditer(body):
        values.add(v.group(0).lower()[:3])
    for v in _WEEKDAY.finditer(body):
        values.add(v.group(0).lower().rstrip("s")[:3])
    for v in _WEEK_PART.finditer(body):
        values.add(v.group(0).lower()[:3])  # "weekday" as "weekdays"
    for w in re.findall(r"[a-z]+", body.lower()):
        if w in lx.NUMBER_WORDS:
            values.add(w)
    name_words = {root(w) for n in names for w in n.split()}
    words = frozenset(
        root(w)
        for w in tokens
        if w.lower() not in lx.STOP_WORDS
        and not lx.VALUE_TOKEN.fullmatch(w)
        and not _dated(w)
        and root(w) not in name_words
        and root(w) not in _LIGHT
        and w.lower().rstrip("s") not in TIME_WORDS
        and len(w) > 2
    )
    head = " ".join(tokens[:verb_at]).lower()
    subject = {n for n in names if re.search(rf"\b{re.escape(n)}\b", head)}
    subject |= {v for v in values if re.search(rf"\b{re.escape(v)}\b", head)}
    head_words = frozenset(root(w) for w in tokens[:verb_at]) & words
    lead = next((n for n in names if first and root(n) == first), "")
    who = owner or lead
    cats = categories(words) | {c for c, p in _CONSTRUCTIONS.items() if p.search(body)}
    return Slot(
        head=head_words,
        words=words,
        cats=cats,
        names=frozenset(names),
        values=frozenset(values),
        subject=frozenset(subject),
        who=who,
        first=first,
        owner=owner,
    )


def _dated(word: str) -> bool:
    return bool(MONTH.fullmatch(word) or _WEEKDAY.fullmatch(word) or _WEEK_PART.fullmatch(word))


_WEEK_PART = re.compile(r"week(?:day|end)s?", re.I)


def _may_be_name(word: str, tokens: list[str]) -> bool:
    """Whether a capitalised first word may be a name: not a gerund ("Paging"), not a word of
    a slot category ("Phones"), not a plural that its verb agrees with ("Jobs go into ..."),
    not coordinated with a lowercase noun ("Tyres and tubes")."""
    low = word.lower()
    if low in lx.STOP_WORDS or (low.endswith("ing") and len(low) > 5):
        return False
    if root(low) in _CATEGORY:
        return False
    nxt = tokens[1].lower() if len(tokens) > 1 else ""
    if not (is_verb(nxt) or nxt.endswith("'s")):
        return False  # "Hot lunches are ...": a name is followed by its verb
    return not (low.endswith("s") and not low.endswith("ss") and nxt in _PLURAL_VERBS)


def value_kind(value: str) -> str:
    """The kind of a value: a date, a weekday, a time or an amount."""
    if value[:3] in _MONTHS or re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)", value):
        return "date"
    if value in _WEEKDAYS:
        return "weekday"
    if ":" in value or value.endswith(("am", "pm")) or value in ("noon", "midnight"):
        return "time"
    return "amount"


_MONTHS = frozenset(m[:3] for m in lx.MONTHS)
_WEEKDAYS = frozenset(d.rstrip("s")[:3] for d in lx.WEEKDAYS if not d.startswith("week"))


def dated_alike(new_text: str, old_text: str) -> bool:
    """Whether both give a date to the same thing, in at least two content words they share
    ("the thermodynamics coursework" due 14 March, until the 21st): a thing has one date at a
    time, so the newer replaces the older even without a word that says it changed."""
    new, old = read_slot(new_text), read_slot(old_text)
    kinds = {value_kind(v) for v in new.values} & {value_kind(v) for v in old.values}
    return "date" in kinds and len((new.words & old.words) - _LIGHT) >= 2


def says_no_more(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` says nothing ``old_text`` does not: its names, values and content
    words are all there ("weekday opening is still 7:30" after "We open at 7:30 on weekdays",
    "Netflix stays" after "We pay for Netflix"), with something of its own to compare (a name,
    a value, or two words), the same polarity and compatible owners."""
    new, old = read_slot(new_text), read_slot(old_text)
    if not (new.names or new.values or len(new.words) >= 2):
        return False
    if bool(_NEGATION.search(strip_source(new_text))) != bool(
        _NEGATION.search(strip_source(old_text))
    ):
        return False
    if new.owner and old.owner and new.owner != old.owner and "i" not in (new.owner, old.owner):
        return False
    old_parts = {w for n in old.names for w in n.split()} | old.words
    names_in = all(set(n.split()) <= old_parts for n in new.names)
    return names_in and new.values <= old.values and new.words <= old.words | old_parts


_NEGATION = re.compile(r"\b(?:not|no|never|none|nobody|nothing)\b|n't\b", re.I)


def turns_around(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` says the opposite state of what ``old_text`` is about ("large
    Safari uploads work now" after "uploads over 5 GB fail on Safari"): one side of a pair of
    :data:`.lexicon.OPPOSITE_STATES` in each, the other side in neither, and two content words
    or a name and a word in common besides."""
    new_low = set(re.findall(r"[a-z]+", strip_source(new_text).lower()))
    old_low = set(re.findall(r"[a-z]+", strip_source(old_text).lower()))
    for one, other in lx.OPPOSITE_STATES:
        for a, b in ((one, other), (other, one)):
            if old_low & a and new_low & b and not old_low & b and not new_low & a:
                new, old = read_slot(new_text), read_slot(old_text)
                states = {root(w) for w in one | other}
                common = (new.words & old.words) - _LIGHT - states
                names = {w for n in new.names for w in n.split()} & {
                    w for n in old.names for w in n.split()
                }
                return len(common) >= 2 or bool(names and common)
    return False


def _other_people(new: Slot, old: Slot, new_names: set[str], old_names: set[str]) -> bool:
    """Whether the two are said of different people or things ("Gina: I lost my job at Door
    Dash" is not an update of "Jon lost his job as a banker"). A name that leads one of them
    may be the value of a role ("Luis does dispatch now" after "Dispatch is Corinne"): that
    is so only when the other names no one of its own as the one it is said of, or when the
    new statement says nothing but the role and its holder."""
    a = new.who if new.who in new_names or new.who == new.owner else ""
    b = old.who if old.who in old_names or old.who == old.owner else ""
    if not a or not b or a == b or "i" in (a, b):
        return False
    return bool(new.words - old.words - _LIGHT)


def said_of_others(new_text: str, old_text: str) -> bool:
    """Whether two statements are said of different people or things (see
    :func:`_other_people`), each as it names them."""
    new, old = read_slot(new_text), read_slot(old_text)
    return _other_people(new, old, set(new.names), set(old.names))


def _doing(text: str) -> frozenset[str]:
    """The verbs of a statement's first clause that say more than being or having ("come",
    "use" and the like say little): "delivered" in "our drugs are delivered by Covetrus"."""
    first = re.split(r"[,;.!?]", strip_source(text), maxsplit=1)[0]
    verbs = [w for w in WORD.findall(first)[1:] if w.islower() and is_verb(w)]
    return frozenset(root(w) for w in verbs if w not in _BE) - _LIGHT


def _for_what(text: str) -> str | None:
    """What a statement says it is for ("for a car", "for job number 40"), or None; a price
    or a length after "for" ("for £78 a day", "for 3 weeks") is not what it is for."""
    m = re.search(r"\bfor\s+([^,;.!?()]+)", strip_source(text), re.I)
    if m is None or re.match(r"[£$€\d]", m.group(1)):
        return None
    return " ".join(m.group(1).lower().split())


def refills(new_text: str, old_text: str, *, told: bool = False, later: bool = False) -> bool:
    """Whether ``new_text``, said as an update, puts another value in the slot that
    ``old_text`` fills. ``told``: the message also names the old value ("LanguageLink was too
    slow"), so one word in common is enough, however much else the old entry says.

    Both must be about the same kind of thing: a content word in common that is not a light
    verb ("escalations", "partner"), or a slot category in common ("alerts" and "paging").
    Each must hold a value the other does not (a name, a number, a day, a date), of a kind
    they share, and the new one must not name the old value at all (then other rules read
    it). The old one's subject, when it names something other than its owner (a customer, a
    flat, a product), must be named by the new one, unless the new one's subject names nothing
    of its own: "Halden Freight's contact is Mark now" does not update "Ostrava Steel's
    contact is Jana". Owners that are both people must be the same.

    ``later``: the new one was said in a later conversation, with no word of change ("match
    fees £12" after "match fee is £10"). Then, further:

    * the old one has a subject of its own that the new one says again ("stone", "the match
      fee"; not "the ledger service" for "pin Python for all services"), with a word in common
      that is not the name of the person both are said of ("Kez shoots recurve" is not "Kez
      is a Level 2 coach"); or both name one thing as subject ("the 0.9 release"). "We hire
      the minibus from Avis" and "John has been reading this book" are doings and stories,
      no slot said again;
    * both are of the same person, when both are of one;
    * the old one holds no kind of value the new one lacks, which replacing it would lose;
    * the new one's first clause does nothing the old one does not ("are delivered by" is
      not "come from");
    * what each says it is for, when both say, is the same ("for a van" is not "for a car").
    """
    new, old = read_slot(new_text), read_slot(old_text)
    new_names, old_names = set(new.names), set(old.names)
    # A capitalised first word that the other statement uses as a common word is one here.
    if new.first and (new.first in old.words or new.first in {root(n) for n in old_names}):
        new_names.discard(new.first)
    if old.first and old.first in new.words:
        old_names.discard(old.first)
    new_words = new.words | {n for n in (new.names - new_names)}
    old_words = old.words | {n for n in (old.names - old_names)}
    shared = {w for w in new_words & old_words if w not in _LIGHT}
    # Only the kind of slot in common ("alerts", "paging"): the old statement must be about
    # that slot alone, or it may be about something the new one does not say ("coffee beans
    # from Origin" is not "milk from Estate Dairy").
    by_kind = bool(new.cats & old.cats) and all(
        _CATEGORY.get(w) or w in _SLOT_HEADS for w in old_words
    )
    # Only a name in common, the subject of both ("Q3" of "my Q3 quota", "my number for Q3"):
    # then only another amount or date for it.
    named = bool(new.subject & old.subject - {new.owner, old.owner})
    if not shared and not by_kind and not named:
        return False
    people = {new.first, old.first, *new.owner.split(), *old.owner.split()}
    # (not the person both are said of: "Jolene" is the subject of all Jolene's news)
    thing = new.subject & old.subject - {new.owner, old.owner, new.who, old.who}
    if later and not thing and not (old.head and shared - people):
        return False
    if later and new.who and old.who and new.who != old.who:
        return False  # "Tim recently read a book" is not of "John has been reading ..."
    if later and old.head - new_words:
        return False  # not of the old one's subject: "pin Python ... for all services"
    if later and {value_kind(v) for v in old.values} - {value_kind(v) for v in new.values}:
        return False  # the old one says more: "visits are tuesdays, 30 children at most"
    if later and _doing(new_text) - _doing(old_text) - old.words:
        return False  # another relation: "drugs are delivered by X" after "come from Y"
    if later and None is not _for_what(new_text) != _for_what(old_text) is not None:
        return False  # for another thing: "£15 for a van" after "£10 for a car"
    if shared and not by_kind and not told and len(shared) < 0.3 * len(old_words - _LIGHT):
        return False  # a word in common among many others: a story, not the same slot
    if new.owner and old.owner and new.owner != old.owner and "i" not in (new.owner, old.owner):
        return False
    if _other_people(new, old, new_names, old_names):
        return False
    added_names, gone_names = new_names - old_names, old_names - new_names
    by_name = bool(added_names and gone_names)
    if not by_name:
        # A name said in part is the same name ("Philippa" for "Philippa Grange").
        new_parts = {w for n in new_names for w in n.split()}
        gone_names = {n for n in gone_names if not set(n.split()) & new_parts}
    added_values, gone_values = new.values - old.values, old.values - new.values
    # Another number, day or date of the same kind, and no name of the old one's lost ("Dr.
    # Whitfield gave the class until the 21st" after "the coursework is due 14 March": a
    # person added is fine); a name both hold may be the slot ("Q3": 410k, then 360k).
    kinds = {value_kind(v) for v in added_values} & {value_kind(v) for v in gone_values}
    by_value = bool(kinds) and not gone_names
    if not (by_name or by_value) or (by_name and not (shared or by_kind)):
        return False
    body = strip_source(new_text).lower()
    if any(re.search(rf"\b{re.escape(n)}\b", body) for n in gone_names):
        return False  # the old value named: a switch or "instead of", read elsewhere
    own = old.subject - {old.owner} - (old.names - old_names) - new.names - new.values
    if own and (new.subject - (new.names - new_names) - old.names - old.values):
        return False  # another thing's slot: "Halden Freight's contact" is not Ostrava's
    if own and by_value:
        return False  # "flat 3 rent" is not "flat 2 rent"
    # "Netflix costs £10" is not about "the gym": the old subject is not in the new statement
    # (but for words of the slot's kind), and the new one has a subject of its own.
    lost = {w for w in old.head - new_words if not _CATEGORY.get(w, frozenset()) & new.cats}
    lost -= {root(w) for w in old.owner.split()}  # "Lucia's head baker": Lucia owns the slot
    other_subject = (new.subject & new_names) - old_names or new.head - old_words
    if old.head and lost == old.head and other_subject and not new_names & old_names:
        return False
    # "the production server" is not "the staging server": one head, other modifiers.
    return not (new.head & old.head and old.head - new_words and new.head - old_words)


# --- measures: the value a statement gives, by kind ---------------------------------------------

_MONTH_WORDS = "|".join(sorted((m for m in lx.MONTHS), key=len, reverse=True))
_DAY_WORDS = "|".join(
    sorted((d for d in lx.WEEKDAYS if not d.startswith("week")), key=len, reverse=True)
)
_ORDINAL = r"\d{1,2}(?:st|nd|rd|th)?"
_HOURS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve")  # fmt: skip
_HOUR_WORDS = "|".join(_HOURS)
_ORDINALS = {"1st": "first", "2nd": "second", "3rd": "third", "4th": "fourth"}
_NTH = "|".join(["first", "second", "third", "fourth", "last", *_ORDINALS])
# Words that may follow an hour said after "at" ("at 9 with Lou", "at 10 sharp"): unlike a
# noun ("at 9 Baker Street", "at 3 degrees"), they leave the number a time.
_AFTER_TIME = "(?:with|and|on|every|each|sharp|then|till|until|for|from|daily|most)"
_MEASURE = re.compile(
    rf"(?P<money>[$£€]\s?\d+(?:,\d{{3}})*(?:\.\d+)?(?:k\b)?|\b\d+(?:,\d{{3}})*(?:\.\d+)?\s?(?:euros?|dollars?|"
    rf"pounds?|quid|eur|gbp|usd|cad)\b|\b\d{{1,2}}(?:\.\d)?p\b(?!\s*(?:m|pm)\b))"  # "45p a mile"
    # A price said without its currency ("14.90 per kilo", "it's 2.50 since Easter"): two
    # decimal places; a version ("Python 3.12") is told apart in :func:`measures`.
    rf"|(?P<price>(?<![\w.,:/£$€-])\d{{1,4}}\.\d{{2}}\b(?![.,]?\d|\s*%))"
    rf"|(?P<percent>\b\d+(?:\.\d+)?\s?(?:%|percent\b|per cent\b))"
    # "the 1st fri of the month", "last Saturday": a weekday of the month, before any date
    rf"|(?P<nth>\b(?:{_NTH})\s+(?:{_DAY_WORDS}|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)s?\b)"
    rf"|(?P<date>(?:\b(?:{_DAY_WORDS})s?,?\s+(?:the\s+)?)?(?:\b{_ORDINAL}\s+(?:of\s+)?"
    rf"(?:{_MONTH_WORDS})\b|\b(?:{_MONTH_WORDS})\s+(?:the\s+)?{_ORDINAL}\b|\b\d{{1,2}}(?:st|nd|rd|th)\b))"
    # opening hours: "8 to 6", "10-4", "9am till 5.30pm" (not "8 to 10 people")
    # (not the month and day of an ISO date: "2024-05-03")
    rf"|(?P<hours>(?<!\d-)\b\d{{1,2}}(?:[:.]\d{{2}})?\s?(?:am|pm)?\s*(?:to|till|until|-|–)\s*"
    rf"\d{{1,2}}(?:[:.]\d{{2}})?(?:\s?(?:am|pm))?\b(?![.,:]?\d|\s*(?:%|(?!(?:{_AFTER_TIME}|now)\b)[a-z]{{3,}})))"
    rf"|(?P<time>\b\d{{1,2}}(?:[:.]\d{{2}})?\s?(?:am|pm)\b|\b\d{{1,2}}:\d{{2}}\b"
    # a time as said aloud: "half two", "half past 2", "quarter to three", "3 o'clock"
    rf"|\b(?:half|quarter)\s+(?:past\s+|to\s+)?(?:{_HOUR_WORDS}|\d{{1,2}})\b(?!\s*(?:an?\s|hours?))"
    rf"|\b(?:{_HOUR_WORDS}|\d{{1,2}})\s?o'?clock\b"
    rf"|(?<=\bat )\d{{1,2}}\b"
    rf"(?![.,]?\d|\s*(?:%|percent|degrees|(?!(?:{_AFTER_TIME}|now)\b)[a-z]{{3,}})))"
    rf"|(?P<span>\b\d+(?:\.\d+)?\s?(?:weeks?|days?|hours?|hrs?|months?|years?|nights?|mins?|"
    rf"minutes?)\b)"
    rf"|(?P<weekday>\b(?:{_DAY_WORDS})s?\b)"
    # A number of things, counted by the noun after it ("8 crew", "40 cars", "12 beds"):
    # last, so that any kind above reads the number first.
    rf"|(?P<count>(?<![\d.,:/£$€-])\b(?!(?:19|20)\d\d\b)\d+(?:,\d{{3}})*\s+[a-z][a-z'-]{{2,}}\b)",
    re.I,
)


def _spoken_time(said: str) -> str:
    """A time said aloud written as digits: "half two" -> "2:30", "quarter to three" ->
    "2:45", "3 o'clock" -> "3"."""
    words = said.replace("o'clock", " ").replace("oclock", " ").split()
    last = words[-1]
    hour = int(last) if last.isdigit() else _HOURS.index(last) + 1
    if words[0] == "half":
        return f"{hour}:30"
    if words[0] == "quarter":
        return f"{hour - 1 or 12}:45" if "to" in words else f"{hour}:15"
    return str(hour)


def _counted(said: str) -> str | None:
    """What a count counts, as one word ("40 cars" -> "car", "6 full-time" -> "full-time"),
    or None when the word after the number is not a noun of things ("3 of them", "2 more",
    "10 to 6", "5 years": a length, read above)."""
    words = said.split()[1:]
    if any(w in lx.STOP_WORDS or w in _NOT_COUNTED for w in words):
        return None
    noun = words[-1]
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


#: Words before a number with two decimal places that make it a version or a time of day
#: ("version 2.10", "the 12.15 train"), not a price.
_NOT_PRICED = lx.words(
    "version v release build firmware update at from till until by before after around the"
)

#: Words before a number with two decimal places that make it a time of day ("at 10.30").
_AT_TIME = lx.words("at from till until by before after around")

#: Words after a number that are not what it counts.
_NOT_COUNTED = lx.words(
    "am pm and or to till until times time per percent degrees each between from years year "
    "months month weeks week days day hours hour minutes minute mins nights night euro euros "
    "pounds pound dollars dollar quid"
)


@dataclass(frozen=True)
class Measure:
    """A value a statement gives: its kind ("money", "percent", "date", "time", "span",
    "weekday", "count:car"), its value written one way ("4200", "26 mar"), and the words as
    said."""

    kind: str
    value: str
    said: str


# Days said together are one value: "Monday and Thursday", "tues to sat", "Mon Wed Fri". A
# day written short counts only there, and only in a run that cannot be prose ("the sun sat
# low"): one day in full, three days or more, or days joined by "to", "and", a comma or a dash.
_DAY = (
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|weds?|"
    r"thu(?:rs?)?|fri|sat|sun)s?\b(?!'|-(?!mon|tue|wed|thu|fri|sat|sun)\w)"
)
_DAY_JOIN = r"(?:\s*,\s*(?:and\s+)?|\s+(?:and|to|till|until|through|thru|or)\s+|\s*[-–/&]\s*|\s+)"
_DAY_RUN = re.compile(rf"{_DAY}(?:{_DAY_JOIN}{_DAY})+", re.I)
_DAY_RANGE = re.compile(r"\s+(?:to|till|until|through|thru)\s+|\s*[-–]\s*", re.I)


def _day_runs(text: str) -> list[tuple[int, int, Measure]]:
    """The runs of two days or more in ``text``: their span, and each as one value ("tue-sat"
    for a range, "mon,wed,fri" for a list)."""
    out = []
    for m in _DAY_RUN.finditer(text):
        days = re.findall(_DAY, m.group(0), re.I)
        full = any(len(d.rstrip("s")) > 5 for d in days)
        joined = re.search(r"\S\s*(?:,|-|–|/|&|\band\b|\bto\b|\btill\b|\bor\b)", m.group(0))
        if not full and len(days) < 3 and not joined:
            continue
        short = [d.lower().rstrip("s")[:3] for d in days]
        ranged = len(days) == 2 and _DAY_RANGE.search(m.group(0))
        out.append(
            (
                m.start(),
                m.end(),
                Measure("days", "-".join(short) if ranged else ",".join(short), m.group(0)),
            )
        )
    return out


@functools.lru_cache(maxsize=65536)
def measures(text: str) -> tuple[Measure, ...]:
    """The values of ``text`` that a later statement may replace, by kind: an amount of money,
    a percentage, a date, a time, a length of time, a weekday, days said together, a number of
    things ("£64", "30 percent", "Monday 16th", "3:30", "8 weeks", "Thursdays", "Mon Wed Fri",
    "8 crew")."""
    body = strip_source(text)
    found = list(_MEASURE.finditer(body))
    runs = [
        r
        for r in _day_runs(body)
        if not any(m.lastgroup != "weekday" and m.start() < r[1] and r[0] < m.end() for m in found)
    ]
    placed: list[tuple[int, Measure]] = [(a, r) for a, _, r in runs]
    for m in found:
        if m.lastgroup == "weekday" and any(a <= m.start() < b for a, b, _ in runs):
            continue  # one day of a run: the run is the value
        kind = m.lastgroup or ""
        said = m.group(0)
        if kind == "price":
            before = (body[: m.start()].split() or [""])[-1]
            named = before[:1].isupper() and before[-1:].isalnum()  # "Sorry, 2.50" names none
            if before.lower() in _AT_TIME:
                kind = "time"  # "opens at 9.30", "till 10.45"
            elif (named and before.lower() not in lx.STOP_WORDS) or before.lower() in _NOT_PRICED:
                continue  # "Python 3.12", "version 2.10", "the 12.15 train": not a price
            else:
                kind = "money"
        low = said.lower().replace(",", "")
        number = re.search(r"\d+(?:\.\d+)?", low)
        digits = number.group(0) if number else ""
        if kind == "money" or kind == "percent":
            value = digits + ("k" if low.endswith("k") else "")
        elif kind == "span":
            # One kind for every unit: "6 months" replaces "90 days".
            unit = re.search(r"[a-z]+$", low)
            kind, value = "span", f"{digits} {unit.group(0).rstrip('s')[:3] if unit else ''}"
        elif kind == "date":
            month = re.search(rf"\b(?:{_MONTH_WORDS})\b", low)
            day = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", low)
            value = f"{day.group(1) if day else ''} {month.group(0)[:3] if month else ''}".strip()
        elif kind == "weekday":
            value = low.rstrip("s")[:3]
        elif kind == "nth":
            # "1st fri" is "first fri", and not "last fri"
            nth, weekday = low.split()
            kind, value = "weekday", f"{_ORDINALS.get(nth, nth)} {weekday.rstrip('s')[:3]}"
        elif kind == "count":
            noun = _counted(low)
            if noun is None:
                continue
            kind, value = f"count:{noun}", digits
        elif kind == "time" and re.search(r"[a-z]", low) and not low.endswith(("am", "pm")):
            value = _spoken_time(low)
        elif kind in ("time", "hours"):
            # "10.45pm" is "10:45pm"; "8 to 6" is "8-6"
            value = re.sub(r"\s*(?:to|till|until|–)\s*", "-", low).replace(".", ":")
            value = re.sub(r"\s+", "", value)
        else:
            value = re.sub(r"\s+", "", low)
        placed.append((m.start(), Measure(kind, value, said)))
    return tuple(r for _, r in sorted(placed, key=lambda p: p[0]))
