"""What a sentence says, for the offline reviewer (SPEC R6, R8): pure functions, no I/O.

:func:`read` takes one clause of a user's or the assistant's message and answers either why
memory must not hold it (a question, a request or a rule aimed at the agent, small talk, a
reaction, progress, a hedge, a secret, a to-do: short reasons for the notes) or a
:class:`Statement`: the clause as said, what kind of change it is (a fact, a switch from one
thing to another, a retirement of something), the section it belongs under, and its
:class:`Frame`.

A :class:`Frame` is what a statement is *about*, read the same way from a new clause and from
an entry already in memory (:func:`entry_frame`), so that the two can be compared:

* ``owner``: whose fact it is: the speaker for "I" and "my", ``we`` for "we" and "our", a
  named person, or nobody for a thing ("the billing service");
* ``skeleton``: its content words, crudely stemmed, without the values;
* ``values``: what may change while the statement stays about the same thing: names, numbers,
  times, dates, weekdays, versions, and the words of a closed class (vegetarian, vegan);
* ``kinds``: the kinds of those values (weekday, date, time, number, version, name, class);
* ``cls``: the single-valued attribute it states, when one of :data:`.lexicon.SINGLE_VALUED`
  fits (a person lives in one place, a deadline has one date);
* ``old``: values the statement says are replaced ("instead of Fridays", "not 8:30").

Nothing here is tuned to a phrasing: every list is data in :mod:`.lexicon`, and each rule reads
a feature of the sentence (its subject, its verbs, its tokens) that any wording of the same
fact shares.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from . import lexicon as lx
from .sentences import clauses, clean, sentences
from .types import SOURCE_PATTERN

__all__ = [
    "DECISIONS",
    "ENVIRONMENT",
    "PEOPLE",
    "PROJECT",
    "Frame",
    "Statement",
    "entry_frame",
    "entry_problem",
    "frame",
    "is_verb",
    "keys",
    "meaning",
    "past",
    "read",
    "restates",
    "strip_source",
    "subject_name",
    "supersedes",
]

PEOPLE = "People & preferences"
DECISIONS = "Decisions"
ENVIRONMENT = "Environment & gotchas"
PROJECT = "Project state"

#: Longest clause read: a longer "sentence" is pasted text, not something said.
MAX_CHARS = 300

_QUESTION = lx.phrases(lx.QUESTION_OPENERS)
_REQUEST = lx.phrases(lx.REQUESTS)
_RULE = lx.phrases(lx.RULE_MARKERS)
_SMALL_TALK = lx.phrases(lx.SMALL_TALK)
_REACTION = lx.phrases(lx.REACTIONS)
_REACTION_OPENER = lx.phrases(lx.REACTION_OPENERS)
_GUESS = lx.phrases(lx.GUESSES)
_TRANSIENT = lx.phrases(lx.TRANSIENT)
_MOMENT = lx.phrases(lx.MOMENT)
_HEDGE = lx.phrases(lx.HEDGES)
_TODO = lx.phrases(lx.TODO)
_SECRET_NOUN = lx.phrases(lx.SECRET_NOUNS)
_SECRET_REFERENCE = lx.phrases(lx.SECRET_REFERENCES)
_LESSON = lx.phrases(lx.LESSON_CUES)
_FORWARD = lx.phrases(lx.FORWARD)
_DECISION = lx.phrases(lx.DECISION_CUES)
_PROJECT = lx.phrases(lx.PROJECT_CUES)
_ENVIRONMENT = lx.phrases(lx.ENVIRONMENT_CUES)
_PERSONAL = lx.phrases(lx.PERSONAL_CUES)
_UPDATE = lx.phrases(lx.UPDATE_MARKERS)
_MONTH = lx.phrases(lx.MONTHS)
_WEEKDAY = lx.phrases(lx.WEEKDAYS)
_USE = lx.phrases(lx.USE_VERBS)
_RETIRE = lx.phrases(lx.RETIRE_VERBS)
_SWITCH = lx.phrases(lx.SWITCH_VERBS)
_OLD_VALUE = re.compile(
    r"(?:" + lx.phrases(lx.OLD_VALUE_LEADS).pattern + r")\s+(?P<v>[^,;:.!?]+)", re.I
)
_CLASS_PATTERNS = {
    name: lx.phrases(verbs) for name, verbs in lx.SINGLE_VALUED.items() if name != "amount"
}
_WORD = re.compile(r"[A-Za-z0-9][\w.+#'/&-]*[\w+#]|[A-Za-z0-9]")
_VERSIONED = re.compile(r"\b([A-Z][\w.+#-]*?|[a-z][\w+#-]*)\s+v?(\d+(?:\.\d+)*)\b")
_TITLE = r"(?:Dr\.?|Mr\.?|Mrs\.?|Ms\.?|Prof\.?|Professor|Inspector|Sergeant|Grandma|Grandpa)"
_NAME_WORD = r"(?-i:[A-Z][A-Za-z-]*(?:'[A-Z][A-Za-z-]*)?)"  # "Ava", "O'Brien"; not "Ava's"
_NAME = re.compile(rf"^(?P<n>(?:{_TITLE}\s+)?{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,2}})(?:'s)?\b")
_TIME_WORDS = lx.words(
    "today tonight tomorrow yesterday week weeks month months year years quarter weekend "
    "morning afternoon evening night last next this ago recently lately soon later earlier "
    "currently now sprint time"
)
_SEPARATORS = re.compile(r"\s*(?:[,;:.!?()]|\s-\s|\s–\s|\s—\s)\s*")


@functools.lru_cache(maxsize=65536)
def strip_source(text: str) -> str:
    """An entry's text without its ``(source: ...)`` citations."""
    return re.sub(r"\s+", " ", SOURCE_PATTERN.sub("", text)).strip()


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    w = word.lower().strip("'")
    w = re.sub(r"'s$", "", w)
    if len(w) > 5 and w.endswith("ing"):
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
    words = _WORD.findall(body.replace("’", "'"))
    kept = [_stem(w) for w in words if w.lower() not in lx.STOP_WORDS]
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

    def same_owner(self, other: Frame) -> bool:
        """Whether both are facts of the same person or group (or both of no one)."""
        if not self.owner or not other.owner:
            return not self.owner and not other.owner
        a, b = set(self.owner), set(other.owner)
        return a <= b or b <= a


@dataclass(frozen=True)
class Statement:
    """A durable clause, as said, and what the review does with it."""

    text: str  # the clause, cleaned, in the speaker's own words
    section: str
    frame: Frame
    kind: str = "fact"  # "fact", "switch" or "retire"
    old: str = ""  # the thing switched from or retired
    new: str = ""  # the thing switched to
    #: What follows a retirement in the same clause ("..., everything runs on X now").
    rest: str = ""
    lesson: bool = False
    subject_kind: str = "thing"  # "i", "we", "name", "thing", "implicit"
    speaker: str = ""
    role: str = "user"
    moment: bool = False  # carries relative time ("yesterday"), made a date when written
    meta: dict[str, str] = field(default_factory=dict, compare=False)


# --- reading the subject --------------------------------------------------------------------

_I = re.compile(r"^(?:i|i'm|i've|i'd|i'll|i am|i have|i was)\b", re.I)
_MY = re.compile(r"^my\b", re.I)
_WE = re.compile(r"^(?:we|we're|we've|we'd|we'll|we are|we have|us)\b", re.I)
_OUR = re.compile(r"^our\b", re.I)
_THERE = re.compile(r"^there(?:'s| is| are| was| were)\b", re.I)


def past(word: str) -> bool:
    """Whether ``word`` is a past tense ("moved", "rewrote"), by ending or by the list."""
    w = word.lower()
    for prefix in ("", "re", "over", "under", "out", "mis"):
        if w.startswith(prefix) and w[len(prefix) :] in lx.IRREGULAR_PAST:
            return True
    return len(w) > 4 and w.endswith("ed") and not w.endswith("eed")


def _subject_kind(text: str, role: str) -> tuple[str, tuple[str, ...]]:
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
    if role == "user" and past(low):
        return "implicit", ()
    name = subject_name(text)
    if name:
        name = re.sub(rf"^{_TITLE}\s+", "", name)
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
                _stem(x) for x in _WORD.findall(" ".join(subject)) if x.lower() not in lx.STOP_WORDS
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
        out.append(_stem(low))
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
    if " " not in name and not re.match(rf"^{_TITLE}", name):
        rest = text[m.end() :].split()
        if name.lower().endswith(lx.NOUN_ENDINGS) and not text[m.end() :].startswith("'s"):
            return ""
        if not text[len(name) :].startswith("'s") and not (rest and is_verb(rest[0])):
            return ""
    return name


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
    for m in _MONTH.finditer(text):
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
    words = _WORD.findall(text)
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
        dated = _MONTH.fullmatch(w) or _WEEKDAY.fullmatch(w)
        if capital and low not in owner and low not in lx.STOP_WORDS and not dated:
            values.add(low)
            kinds.add("name")
    return frozenset(values), frozenset(kinds)


def _versions(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    for m in _VERSIONED.finditer(text):
        tool, version = m.group(1), m.group(2)
        low = tool.lower()
        if low in lx.STOP_WORDS or _MONTH.fullmatch(tool) or low in _TIME_WORDS:
            continue
        if not (tool[:1].isupper() or "." in version):
            continue
        after = text[m.end() :].split(" ", 2)
        following = after[1].lower().strip(",.;:!?") if len(after) > 1 else ""
        plain = "." not in version and following and following not in lx.STOP_WORDS
        if plain and not is_verb(following):
            continue  # "SOC 2 audit", "Pixel 8 case": a name with a number, not a version
        out.append((low, version))
    return tuple(out)


def _old_values(text: str) -> frozenset[str]:
    """Words of what the clause says is replaced: "instead of Fridays" -> {"fri"}."""
    out: set[str] = set()
    phrases = [m["v"] for m in _OLD_VALUE.finditer(text)]
    switched = re.search(r"\bfrom (?P<v>[\w.+# -]+?) to\b", text, re.I)
    if switched:
        phrases.append(switched["v"])
    for phrase in phrases:
        phrase = " ".join(phrase.split()[:4])
        values, _ = _values(f"x {phrase}", ())
        out |= values
        out |= {_stem(w) for w in _WORD.findall(phrase) if w.lower() not in lx.STOP_WORDS}
    return frozenset(out)


def _class(text: str) -> str | None:
    """The single-valued attribute a clause states, read from its verb and the value after
    it: "moved to Berlin" is a place, "moved to May 2" a date."""
    for name, pattern in _CLASS_PATTERNS.items():
        for m in pattern.finditer(text):
            after = text[m.end() :].strip()
            dated = bool(
                re.match(r"^(?:on |to |for |by |the )?(?:\d|" + _MONTH.pattern + ")", after, re.I)
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
    kind, owner = _subject_kind(text, role)
    subject = _subject_words(text, kind)
    mine = re.search(r"\b(?:my|me|I|I'm|I've)\b", text)
    if kind in ("i", "implicit") or (kind in ("thing", "name") and mine and speaker):
        # "Leadership raised my quota": a fact about the speaker's quota.
        owner = tuple(w.lower() for w in speaker.split()) if speaker else ("i",)
        if kind not in ("i", "implicit") and mine:
            subject = _noun_phrase(text[mine.end() :].split(" "))
    subject -= {_stem(w) for w in owner}
    values, kinds = _values(text, owner)
    skeleton = frozenset(
        lx.SAME_VERB.get(_stem(w), _stem(w))
        for w in _WORD.findall(text.replace("-", " "))
        if w.lower() not in lx.STOP_WORDS
        and w.lower() not in owner
        and w.lower() not in _TIME_WORDS
        and w.lower() not in values
        and not _UPDATE.fullmatch(w)
        and not lx.VALUE_TOKEN.fullmatch(w)
        and not _MONTH.fullmatch(w)
        and not _WEEKDAY.fullmatch(w)
    ) - {_stem(v) for v in values}
    return Frame(
        owner=owner,
        subject=subject,
        skeleton=skeleton,
        values=values,
        kinds=kinds,
        cls=_class(text),
        old=_old_values(text),
        update=bool(_UPDATE.search(text)),
        versions=_versions(text),
        purpose=_purpose(text),
    )


def _purpose(text: str) -> frozenset[str]:
    m = re.search(r"\bfor\s+([^,;.()]+)", text, re.I)
    if not m:
        return frozenset()
    return frozenset(
        _stem(w) for w in _WORD.findall(m.group(1)) if w.lower() not in lx.STOP_WORDS | _TIME_WORDS
    )


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


# --- filters --------------------------------------------------------------------------------


def _is_small_talk(text: str) -> bool:
    rest = _SMALL_TALK.sub(" ", text.lower())
    return len(re.findall(r"[a-z0-9]+", rest)) == 0 or len(_WORD.findall(text)) < 2


def _secret_talk(text: str) -> bool:
    for m in _SECRET_NOUN.finditer(text):
        after = text[m.end() : m.end() + 60]
        if re.match(r"^\s+(?!is\b|are\b|was\b|were\b|for\b|to\b|of\b|itself\b)[a-z]", after):
            continue  # "the login page breaks": a compound, not the secret itself
        gives = re.match(r"^[^.?!]{0,40}?(?:\b(?:is|are|was|were|to)\b|[:=]|->)", after, re.I)
        if gives and not _SECRET_REFERENCE.search(after):
            return True
    return bool(
        re.search(
            rf"\b(?:here'?s|here is|use this|try this|paste|pasted|sending)\b[^.?!]{{0,25}}"
            rf"(?:{_SECRET_NOUN.pattern})",
            text,
            re.I,
        )
    )


def _imperative(text: str) -> bool:
    words = text.lower().split(" ")
    if words[0].strip(",") not in lx.IMPERATIVES:
        return False
    if any(w in _AUX for w in words[1:4]):
        return False  # "Book three is in third person": a noun, not an order
    # "Use of ..." and "Keep in mind ..." are not orders; "Note: x" was cleaned already.
    return not re.match(r"^(?:use of|keep in mind)\b", text, re.I)


def skip_reason(text: str, role: str) -> str | None:
    """Why memory must not hold ``text``, or None."""
    if len(text) > MAX_CHARS:
        return "too long"
    low = text.lower()
    if text.rstrip().endswith("?") or _QUESTION.match(low):
        return "question"
    if _is_small_talk(text):
        return "small talk"
    if _secret_talk(text):
        return "secret"
    lesson = bool(_LESSON.search(text))
    if _REACTION.search(text) or _REACTION_OPENER.match(text):
        return "reaction"
    guess = _GUESS.search(text)
    if guess and not re.match(r"^(?:the|our|my|all|every|each|a|an)\b", low):
        return "reaction"
    if not lesson:
        if _TRANSIENT.search(text):
            return "transient"
        first = low.split(" ", 1)[0].strip(",")
        gerund = first.endswith("ing") and len(first) > 4 and first not in lx.NOT_GERUNDS
        following = [*low.split(" "), ""][1].strip(",.")
        # "rerunning the pipeline", "sending the proposal now"; not "Billing disputes go to
        # Ingrid in finance" or "Staging database runs Postgres 16" (a noun, then its verb).
        doing = gerund and (not following or following in _OBJECT_STARTS)
        if doing and (_NOW.search(text) or len(_WORD.findall(text)) <= 6):
            return "transient"
    if _REQUEST.match(low) or _imperative(text) or re.search(r"\bplease\b", low):
        return "request" if role == "user" else "advice"
    forward = _FORWARD.match(text)
    if forward and role == "user":
        rest = text[forward.end() :].lstrip(" ,")
        if _imperative(rest) or re.search(r"\b(?:you|your)\b", rest, re.I):
            return "behavioural rule"
    if not lesson and _RULE.search(text):
        return "behavioural rule"
    if not lesson and _HEDGE.search(text):
        return "hedged"
    if re.match(r"^(?:i|we|i'm|we're|i've|we've)\b", low) and _TODO.search(text):
        return "to-do"
    return None


# --- durability -----------------------------------------------------------------------------

_QUANTIFIERS = lx.words("all every each both some most any")
_OBJECT_STARTS = lx.words(
    "the a an my our your their his her it this that these those some to on at in for back now "
    "up out off down with through over"
)
_NOW = re.compile(r"\b(?:now|back|so far|today|tonight|right now|later)\b", re.I)
_AUX = lx.words("is are was were has have had will would can could should must may might 's")
_PROGRESSIVE = re.compile(
    r"^(?:i'm|i am|we're|we are)\s+(?:\w+ly\s+|just\s+|still\s+)?(\w+ing)\b", re.I
)
_STATE_NOW = re.compile(
    r"\b(?:is|are|was|were)\s+(?:\w+\s+){0,2}(?:green|red|down|up|broken|done|slow|fast|"
    r"terrible|great|fine|ok|okay|packed|busy|quiet|full|empty|stuck|back)\b",
    re.I,
)


def _durable(text: str, kind: str, role: str, lesson: bool, values: frozenset[str]) -> bool:
    """Whether a clause that passed the filters states something worth keeping."""
    low = text.lower()
    words = _WORD.findall(text)
    content = [w for w in words if w.lower() not in lx.STOP_WORDS]
    if len(words) < (2 if kind in ("i", "implicit", "name") else 3) or not content:
        return False
    if lesson:
        return len(content) >= 3
    first = re.sub(r"'(?:s|re|ll|ve|d)$", "", words[0].lower())
    determiner = first in _QUANTIFIERS and len(words) > 1 and words[1].lower() not in _AUX
    pronoun = first in lx.PRONOUN_SUBJECTS and not determiner
    head = text.split(",", 1)[0].split(" ")
    contracted = re.search(r"'(?:s|re|ve|ll|d|m)$", head[0], re.I)  # "It's Dr. Menendez"
    if kind in ("thing", "our", "name", "there") and not (contracted or _has_verb(head[1:])):
        return False  # "Coffee first, then the sprint review", "The login page"
    if role != "user":
        if re.search(r"\byou\b", low):
            return False  # "you said ...", "you'll need to ...": to the user, about them
        # The assistant's own doings ("Updated the bus time") and its replies to the user are
        # not facts; a statement about a thing (an environment fact it explains) is.
        if kind not in ("thing", "our", "name") or pronoun or past(first):
            return False
        return bool(_ENVIRONMENT.search(text) or values)
    if role == "user" and re.search(r"\b(?:you|your|yours|yourself)\b", low):
        return False  # about the listener or the talk itself: "I'll let you know"
    if re.match(r"^(?:would|could|should|can|might|may|will|must)\b", low):
        return False  # "Would love to see it": a wish, no subject
    intends = re.match(r"^(?:i'll|i will|we'll|we will|i'm going to|we're going to)\b", low)
    if intends and not (values or _DECISION.search(text)):
        return False  # an intention: "I'll definitely get one"
    feeling = re.match(
        r"^\S+\s+(?:is|am|are|was|'m|'re|'s)?\s*(?:so |really |very |super |just |"
        r"totally |pretty |quite |feeling |definitely |still |also )*(\w+)",
        low,
    )
    if feeling and feeling.group(1) in lx.FEELINGS and not values:
        return False  # "John is excited to catch up", "I'm determined to ..."
    gerund = first.endswith("ing") and first not in lx.NOT_GERUNDS and not values
    following = words[1].lower() if len(words) > 1 else ""
    if gerund and (following in _OBJECT_STARTS or re.search(r"\b(?:us|we|our)\b", low)):
        return False  # "Creating a place that feels safe is key": a truism, no one's fact
    if not values and re.search(r"\b(?:it|them|him|her|these|those)\b", low) and len(content) < 6:
        return False  # "we won it by a tight score": what "it" is was said elsewhere
    cues = _ENVIRONMENT, _PROJECT, _DECISION, _PERSONAL
    if kind == "thing" and not pronoun and not values and not any(c.search(text) for c in cues):
        return False  # "Hard work pays off eventually", "A cozy nook is a must": no one's fact
    if kind == "thing" and pronoun:
        # "everything moved to Buildkite", "they moved the exam to January 23", "it's Dr.
        # Menendez": a pronoun subject is kept only when the clause names what it is about.
        named = re.match(r"^(?:it's|it is|he's|he is|she's|she is)\s+(?-i:[A-Z])", text, re.I)
        return (first in ("everything", "everyone", "they") and bool(values)) or bool(named)
    told = kind == "thing" and _past_event(text) and not values
    if told and not (_PROJECT.search(text) or _DECISION.search(text)):
        return False  # "the waiting room was packed", "the fees got silly"; not "... approved"
    head_noun = re.sub(r"^(?:the|our) ", "", low).split(" ")[0]
    if kind == "thing" and head_noun in lx.TRANSIENT_SUBJECTS and _STATE_NOW.search(text):
        return False  # "the tests are green now"
    if _MOMENT.search(text) and (_PROGRESSIVE.match(text) or _STATE_NOW.search(text)):
        return False
    progressive = _PROGRESSIVE.match(text)
    if progressive and progressive.group(1).lower() in lx.MOMENTARY:
        return False
    if re.search(r"\b(?:it|that|this|them)\s*$", low) and len(content) < 4:
        return False  # "I love it", "we like that": no object of their own
    if re.search(r"\b(?:love|loves|like|likes|hate|hates|enjoy|enjoys)\s+(?:it|that|this)\b", low):
        return False  # "I love it when that happens"
    return len(content) >= (1 if kind in ("i", "implicit", "we") else 2)


def _has_verb(words: list[str]) -> bool:
    return any(is_verb(w) for w in words)


def is_verb(word: str) -> bool:
    """Whether ``word`` reads as a verb form: an auxiliary, a listed verb or an inflection of
    one, a past tense."""
    low = word.lower().strip(",.;:!?")
    if low in _AUX or low in lx.VERBS or low in lx.IRREGULAR_PAST or past(low):
        return True
    if low.endswith("n't") or low in ("does", "do", "did", "goes"):
        return True
    for end in ("ies", "es", "s"):
        stem = low[: -len(end)] if low.endswith(end) else ""
        if stem and (stem in lx.VERBS or stem + "e" in lx.VERBS or stem + "y" in lx.VERBS):
            return True
    return False


def _past_event(text: str) -> bool:
    """Whether a clause about a thing tells a past event ("the deploy failed"): its first verb
    is in the past."""
    for w in _WORD.findall(text)[1:]:
        low = w.lower()
        if low in ("was", "were", "had") or past(low):
            return True
        if is_verb(low):
            return False
    return False


# --- changes: switches and retirements --------------------------------------------------------

_END_OF_THING = re.compile(
    r"\s*(?:[,;:(]|\s[-–—]\s|\s(?:and|but|because|since|after|as of|so|for good|entirely|"
    r"altogether|at all|anymore|any more|any longer|completely|last|this|over the|in favou?r|"
    r"it|which|though|yesterday|today|for the|for now)\b)",
    re.I,
)


def _thing(raw: str) -> str:
    """A named thing without articles or what follows it: "the old MySQL box, because" ->
    "old MySQL box"."""
    value = re.sub(r"^(?:the|our|my|a|an|their|his|her)\s+", "", raw.strip(), flags=re.I)
    value = _END_OF_THING.split(value, maxsplit=1)[0]
    return value.strip(" .,'\"")


def _switch(text: str) -> tuple[str, str] | None:
    m = re.search(
        rf"\b(?:{_SWITCH.pattern})\s+(?:\w+\s+){{0,3}}?from\s+(?P<old>.+?)\s+(?:to|over to|onto)"
        r"\s+(?P<new>[^,;.]+)",
        text,
        re.I,
    ) or re.search(r"\breplaced\s+(?P<old>.+?)\s+with\s+(?P<new>[^,;.]+)", text, re.I)
    if not m:
        return None
    old, new = _thing(m["old"]), _thing(m["new"])
    if not old or not new or old.split(" ")[0].lower() in lx.PRONOUN_SUBJECTS:
        return None
    return old, new


def _retire(text: str, kind: str) -> tuple[str, str] | None:
    """``(thing retired, what the clause goes on to say)``, or None."""
    if kind not in ("i", "we", "implicit"):
        m = re.match(
            r"^(?:the |our |my )?(?P<w>.+?) (?:is|are|was|were|has been|have been|got)(?: now)?"
            r" (?:retired|decommissioned|shut down|turned off|gone|removed|cancell?ed|dropped|"
            r"no longer used)\b",
            text,
            re.I,
        ) or re.match(rf"^(?P<w>(?:{_TITLE}\s+)?[A-Z][\w'-]+(?: [A-Z][\w'-]+)?) retired\b", text)
        if not m:
            return None
        return _thing(m["w"]), ""
    m = re.search(rf"\b(?:{_RETIRE.pattern})\s+(?P<v>.+)", text, re.I)
    if not m:
        return None
    raw = re.sub(r"^(?:using|buying from|buying|with|on|off|from)\s+", "", m["v"], flags=re.I)
    thing = _thing(raw)
    if (
        not thing
        or thing.split(" ")[0].lower() in lx.PRONOUN_SUBJECTS
        or re.match(r"(?:a|an|any|some|to|much|many|more|that|this|the idea)\b", raw, re.I)
        or re.search(r"\b(?:you|your)\b", thing, re.I)
    ):
        return None
    rest = raw[raw.find(thing) + len(thing) :] if thing in raw else ""
    rest = re.sub(
        r"^(?:[\s,;:]|\b(?:and|so|anymore|any more|at all|entirely|for good|altogether|"
        r"completely)\b)+",
        "",
        rest,
        flags=re.I,
    ).strip()
    return thing, rest


# --- sections -------------------------------------------------------------------------------


def _section(
    text: str, kind: str, lesson: bool, values: frozenset[str], kinds: frozenset[str]
) -> str:
    if lesson:
        return ENVIRONMENT
    low = text.lower()
    if _DECISION.search(text):
        return DECISIONS
    if kind in ("we", "our") and re.search(r"\b(?:use|uses|rely on|relies on)\b.+\bfor\b", low):
        return PEOPLE
    if "version" in kinds or re.search(r"\bport\s+\d|[\w-]+\.(?:internal|local|io|com)\b", low):
        return ENVIRONMENT
    if _PROJECT.search(text) and kinds & {"date", "weekday"}:
        return PROJECT
    if "path" in kinds:
        return ENVIRONMENT
    if kind in ("i", "implicit") or (kind in ("name", "our") and _PERSONAL.search(text)):
        return PEOPLE
    if kind == "name" and _ENVIRONMENT.search(text):
        return ENVIRONMENT
    if kind == "name":
        return PEOPLE
    if _PROJECT.search(text):
        return PROJECT
    if kind == "we":
        return DECISIONS
    if _ENVIRONMENT.search(text):
        return ENVIRONMENT
    if "date" in kinds:
        return PROJECT
    return ENVIRONMENT


# --- reading a clause -------------------------------------------------------------------------


def read(clause: str, *, role: str, speaker: str, question: str = "") -> Statement | str:
    """A :class:`Statement` for a durable clause, or the reason to skip it.

    ``question`` is the question the message answers, when the message before it in the
    conversation ended with one: a user's verbless answer ("Organic chemistry and a statistics
    elective") is then kept beside it, since alone it says nothing.
    """
    text = clean(clause)
    if not text:
        return "small talk"
    reason = skip_reason(text, role)
    if reason:
        return reason
    kind, _ = _subject_kind(text, role)
    named = re.fullmatch(r"(?:i'm|i am|my name is|name's|this is)\s+(?P<n>[\w' -]+)", text, re.I)
    if named and named["n"].strip().casefold() == speaker.casefold():
        return "no durable fact"  # "I'm Priya", said by Priya, names no one new
    lesson = bool(_LESSON.search(text))
    f = frame(text, speaker, role)
    if role == "user":
        switched = _switch(text)
        if switched and kind in ("i", "we", "implicit", "our"):
            section = PEOPLE if kind in ("i", "implicit") else DECISIONS
            return Statement(
                text, section, f, "switch", switched[0], switched[1], "", lesson, kind, speaker
            )
        retired = _retire(text, kind)
        if retired:
            return Statement(
                text, DECISIONS, f, "retire", retired[0], "", retired[1], lesson, kind, speaker
            )
    if not _durable(text, kind, role, lesson, f.values):
        if question and role == "user" and _answer(text, question):
            section = _section(f"{question} {text}", "i", False, f.values, f.kinds)
            meta = {"question": question}
            return Statement(text, section, f, "answer", speaker=speaker, role=role, meta=meta)
        return "no durable fact"
    section = _section(text, kind, lesson, f.values, f.kinds)
    return Statement(text, section, f, lesson=lesson, subject_kind=kind, speaker=speaker, role=role)


def _answer(text: str, question: str) -> bool:
    """Whether ``text`` is a verbless answer with content of its own to ``question``."""
    words = _WORD.findall(text)
    content = [w for w in words if w.lower() not in lx.STOP_WORDS and w.lower() not in _TIME_WORDS]
    asks_what = re.match(
        r"^(?:what|which|who|where|when|how many|how much|how long)\b", question, re.I
    )
    return bool(asks_what) and len(content) >= 2 and not _has_verb(words)


_NEVER = frozenset({"question", "request", "behavioural rule", "secret"})


def entry_problem(entry: str) -> str | None:
    """Why an entry written by any reviewer is not a fact for memory, read the way the offline
    reviewer reads a clause (:func:`read`): any clause that is a question, a request or a rule
    aimed at the agent, or a secret; or no clause that is durable (small talk, a reaction,
    progress, a hedge, a to-do, a past event). None when it is a fact. "Sam said:" and "Sam:"
    attributions are read as that person speaking."""
    body = strip_source(entry)
    m = re.match(r"^(?P<who>[A-Z][\w.' -]{0,40}?)(?: said)?:\s+", body)
    speaker = m["who"] if m else "Someone"
    body = body[m.end() :] if m else body
    reasons: list[str] = []
    for _, _, sentence in sentences(body):
        for part in clauses(sentence):
            found = read(part, role="user", speaker=speaker)
            if isinstance(found, Statement):
                reasons.append("")
            elif found in _NEVER:
                return found
            elif found != "too long":
                reasons.append(found)
    return None if "" in reasons or not reasons else reasons[0]


def mentions(entry: str, thing: str) -> bool:
    """Whether an entry names ``thing``: every content word of it, as whole words."""
    want = _stems(thing, generic=False)
    return bool(want) and want <= _stems(entry, generic=True)


@functools.lru_cache(maxsize=65536)
def _stems(text: str, *, generic: bool) -> frozenset[str]:
    words = _WORD.findall(strip_source(text))
    return frozenset(_stem(w) for w in words if generic or w.lower() not in _GENERIC)


_GENERIC = lx.STOP_WORDS | lx.words(
    "job account subscription plan tool service app thing stuff membership store box use using"
)


def uses(entry: str, thing: str) -> bool:
    """Whether an entry says ``thing`` is in use ("We use MySQL 5.7 for ...")."""
    body = strip_source(entry)
    return bool(
        re.search(rf"(?:{_USE.pattern})\s+(?:the\s+)?{re.escape(thing)}\b", body, re.I)
    ) and not re.search(r"\b(?:switched|moved|migrated) from\b", body, re.I)


_KINDS_OF_CHANGE = frozenset({"weekday", "time", "date", "number", "class", "version"})


def supersedes(new: Frame, old: Frame) -> bool:
    """Whether a statement with frame ``new`` makes an entry with frame ``old`` outdated.

    First, both must be about the same thing: the same person or group (and, when both name
    one, the same attribute of theirs: "my thesis", not "my advisor"), or the same thing; a
    person's fact and a thing's statement only when they share at least two words. Then any
    of: the new one names the old one's value as replaced ("instead of Fridays"); it names
    another version of the same tool; both state the same single-valued attribute with other
    values; it says the same in other words; both hold values of one kind (days, dates, times,
    amounts) in nearly the same words; or it says it is an update and shares their words.
    """
    shared = new.skeleton & old.skeleton
    smaller = min(len(new.skeleton), len(old.skeleton))
    # Nothing but values on one side ("Standup is on Mondays at 9"): the words agree.
    overlap = len(shared) / smaller if smaller else 1.0
    if new.owner and old.owner:
        if not new.same_owner(old):
            return False
        about = not (new.subject and old.subject) or _similar(new.subject, old.subject)
    elif not new.owner and not old.owner:
        about = _similar(new.subject, old.subject)
    else:
        about = len(shared) >= 2 or (bool(shared) and bool(new.cls) and new.cls == old.cls)
    if restates(new, old, shared) and new.values >= old.values:
        return True  # the same said again in other words, with all its values
    names = {v for v in new.values & old.values if v.isalpha()}
    changed = new.update and names and new.kinds & old.kinds & _KINDS_OF_CHANGE
    if changed and new.values != old.values and (about or not (new.owner and old.owner)):
        return True  # "the Kyoto trip is April 9 to 19 now"
    if not about and not (new.old & old.values and shared):
        return False
    if new.old & (old.values | old.skeleton) and (shared or (new.cls and new.cls == old.cls)):
        return True
    if version_change(new, old):
        return True
    if new.owner and new.same_owner(old) and _exclusive(new.values, old.values):
        return True  # "vegan" after "vegetarian": one of a closed class at a time
    if new.cls and new.cls == old.cls and new.values and new.values != old.values:
        return about
    kinds = new.kinds & old.kinds & _KINDS_OF_CHANGE
    if new.purpose and old.purpose and not new.purpose & old.purpose:
        return False  # another purpose: another fact ("tool X for builds", "tool Y for docs")
    old_names = {v for v in old.values if _is_name(v)}
    if old_names and not new.update and not old_names & new.values:
        return False  # other names: another thing ("Tool02 for job 2" after "Tool01 for job 1")
    if kinds and overlap >= 0.5 and new.values != old.values:
        return about
    return new.update and len(shared) >= 2 and overlap >= 0.4 and about


@functools.lru_cache(maxsize=65536)
def keys(entry: str) -> frozenset[str]:
    """The words, values and person of an entry: :func:`supersedes` can only find an entry
    outdated by a statement that shares one of them, so that the others need not be
    compared (review stays cheap as memory grows)."""
    f = entry_frame(entry)
    owner = {"@" + " ".join(f.owner)} if f.owner and f.owner != ("we",) else set()
    return f.skeleton | f.values | f.old | owner | {t for t, _ in f.versions}


def restates(new: Frame, old: Frame, shared: frozenset[str] | None = None) -> bool:
    """Whether ``new`` says nearly what ``old`` says, in other words (most of its words)."""
    shared = new.skeleton & old.skeleton if shared is None else shared
    smaller = max(1, min(len(new.skeleton), len(old.skeleton)))
    if new.owner and old.owner and not new.same_owner(old):
        return False
    return len(shared) >= 4 and len(shared) / smaller >= 0.6


def _exclusive(new: frozenset[str], old: frozenset[str]) -> bool:
    return any(new & cls and old & cls and not old & cls <= new for cls in lx.EXCLUSIVE_CLASSES)


def _is_name(value: str) -> bool:
    return bool(re.search(r"[a-z]", value)) and not lx.VALUE_TOKEN.fullmatch(value)


def _similar(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a | b) and len(a & b) / len(a | b) >= 0.5


def version_change(new: Frame, old: Frame) -> bool:
    """Whether ``new`` names another version of a tool ``old`` names ("Postgres 16")."""
    return any(
        t1 == t2 and v1 != v2 for t1, v1 in new.versions for t2, v2 in old.versions
    ) and not any(t1 == t2 and v1 == v2 for t1, v1 in new.versions for t2, v2 in old.versions)
