"""Sentence rules of the offline reviewer (SPEC R6, R8): pure functions, no I/O, no model.

A message is cut into sentences (and a sentence into clauses at ``;`` and at "and I"/"and we"),
and each clause goes through two stages:

1. **Filters** that skip what memory must never hold: questions and requests, small talk,
   behavioural rules aimed at the agent (they belong to instructions), transient progress,
   hedged talk ("maybe we should ..."), and talk that gives a password or token value.
   Credential-shaped text itself is found by :func:`reverie.core.secrets.find_credentials`
   over the whole message before splitting (see ``offline.py``), so a secret cannot hide by
   straddling a sentence boundary.
2. **Extractors**, tried in order, that recognise a durable statement and rewrite it in third
   person or neutral form under one of the four standard sections. The order matters: the
   specific shapes (a switch, a date, a port) come before the general ones (a named person,
   "X needs Y"), so a sentence is read the most precise way that fits.

Rules are precision-first: a sentence no extractor recognises is dropped. A missed fact can
be said again; a wrong one misleads every later run.

The same module also reads entries back: :func:`normalize` (what counts as a duplicate) and
:func:`entry_key` (which subject and single-valued attribute an entry states, so that a newer
value replaces an older one). Both work on any entry text, written by this reviewer or not.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from .types import SOURCE_PATTERN

__all__ = [
    "DECISIONS",
    "ENVIRONMENT",
    "PEOPLE",
    "PROJECT",
    "Candidate",
    "classify",
    "entry_key",
    "mentions",
    "normalize",
    "sentences",
    "strip_source",
]

PEOPLE = "People & preferences"
DECISIONS = "Decisions"
ENVIRONMENT = "Environment & gotchas"
PROJECT = "Project state"

#: Longest entry the rules write: a longer "sentence" is pasted text, not something said.
MAX_ENTRY_CHARS = 300


@dataclass(frozen=True)
class Candidate:
    """A durable statement found in one clause, ready to become an entry (without source).

    ``kind`` is ``"fact"`` (add, or replace an entry with the same key), ``"switch"`` (``old``
    was replaced by ``new``: rewrite entries that say the old value is used) or ``"retire"``
    (``old`` is no longer used: remove entries that say it is).
    """

    section: str
    text: str
    kind: str = "fact"
    old: str = ""
    new: str = ""


# --- splitting -------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```|~~~)")
# Lines that are program output, not conversation: log lines, tracebacks, shell prompts,
# Markdown headings and tables. Review never reads tool output (R5); a pasted log is the same.
_NOT_PROSE = re.compile(
    r"^\s*(?:\$ |> |>>> |#|\||Traceback|File \"|at [\w.$]+\(|\[?\d{4}-\d{2}-\d{2}[ T]\d"
    r"|\[?\d{2}:\d{2}:\d{2}|(?:ERROR|WARN(?:ING)?|INFO|DEBUG|FATAL)\b)"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+")
_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|approx|cf|incl|Dr|Mr|Mrs|Ms|St|No|Inc|Ltd|Jr|Sr)\.|\b[A-Z]\.)$"
)


def sentences(text: str) -> list[tuple[int, int, str]]:
    """The prose sentences of a message as ``(start, end, text)`` offsets into ``text``.

    Fenced and indented code, log lines and headings are left out: they are output, not
    statements. A line break always ends a sentence (chat messages use them as full stops).
    """
    out: list[tuple[int, int, str]] = []
    offset = 0
    in_fence = False
    for line in text.split("\n"):
        start_of_line = offset
        offset += len(line) + 1
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or line.startswith(("    ", "\t")) or _NOT_PROSE.match(line):
            continue
        pos = 0
        pieces: list[tuple[int, int]] = []
        for m in _SENTENCE_END.finditer(line):
            pieces.append((pos, m.start()))
            pos = m.end()
        pieces.append((pos, len(line)))
        merged: list[tuple[int, int]] = []
        for a, b in pieces:
            # "e.g. Postgres" is one sentence: glue a piece to the previous one when that
            # one ends with an abbreviation.
            if merged and _ABBREVIATION.search(line[merged[-1][0] : merged[-1][1]]):
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        for a, b in merged:
            piece = line[a:b]
            if piece.strip():
                out.append((start_of_line + a, start_of_line + b, piece.strip()))
    return out


_CLAUSE_SPLIT = re.compile(
    r"\s*;\s+|,?\s+(?:and|but|so|also)\s+(?=(?:I|I'm|I've|we|we're|we've|my|our)\b)"
    r"|,\s+(?:so|but|because|since|which|although|though|while)\s+"
    r"|,\s+(?=(?:I'm|I am|I've|I live|I work|I prefer|my|we're|we use|we decided)\b)",
    re.I,
)


def clauses(sentence: str) -> list[str]:
    """A sentence cut where a second statement starts: "I live in Lyon and I work at Acme"."""
    return [c for c in _CLAUSE_SPLIT.split(sentence) if c and c.strip()]


# --- cleaning --------------------------------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)")
_TRAILING = re.compile(
    r"(?:[\s,]+(?:lol|haha+|thanks|thank you|thx|btw|by the way|though|fyi|cheers|please|pls"
    r"|:\)|:D|;\)"
    r"|[\U0001F300-\U0001FAFF\u2600-\u27BF]+))+\s*$",
    re.I,
)
_GREETING = re.compile(
    r"^(?:hi|hey|hello|yo|good (?:morning|afternoon|evening))\b[^,.!?]{0,30}[,.!]\s*", re.I
)
_LEAD = re.compile(
    r"^(?:(?:well|right|wait|so|no|yes),\s*"
    r"|(?:ok(?:ay)?|also|oh|ah|yeah|yep|hmm+|um+|and|but|anyway|anyways"
    r"|actually|btw|by the way|fyi|just fyi|for context|for the record|just so you know"
    r"|thanks|thank you|thx|cheers|great|cool|nice|perfect|awesome|got it|sounds good|sure"
    r"|alright|all right|one more thing|oh and|and also|ps|p\.s\.|again|as i said|like i said"
    r"|as mentioned|big news|good news|news|quick note|reminder)\b[\s,:;.!]*"
    r"|(?:update|quick update|small update|psa|context|info|status)\s*[:\-–]\s*)+",
    re.I,
)
# Explicit "keep this" cues: the rest of the clause is what to remember.
_CUE = re.compile(
    r"^(?:(?:just |please )?(?:remember|note|keep in mind|don't forget|do not forget|bear in mind)"
    r"(?: that)?[\s,:]+(?!to\b)|(?:gotcha|heads up|careful|watch out|beware|warning|note|tip"
    r"|important)\s*[:\-–!]\s*)",
    re.I,
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _clean(text: str) -> str:
    text = _CONTROL.sub(" ", text)
    text = _BULLET.sub("", text)
    text = _EMPHASIS.sub("", text)
    # A link or a source citation typed in chat must not become a link or a source in memory.
    text = SOURCE_PATTERN.sub("", text).replace("[[", "").replace("]]", "")
    text = re.sub(r"\s+", " ", text).strip().strip("\"'“”‘’")
    text = re.sub(r"[.!…]+$", "", text).strip()
    text = _GREETING.sub("", text)
    previous = None
    while previous != text:
        previous = text
        text = _LEAD.sub("", text).strip()
        text = _TRAILING.sub("", text).strip()
    return text


# --- filters ---------------------------------------------------------------------------------

_QUESTION_START = re.compile(
    r"^(?:(?:can|could|would|will|do|did|does|are|have) (?:you|we|they|i)\b|any ?(?:one|body) know"
    r"|any idea|is there|are there|what(?:'s| is| are| do| does)|how (?:do|does|can|should|much"
    r"|many|long)|where(?:'s| is| are| do)|who(?:'s| is)|which (?:one|of)|why (?:is|does|do|did)"
    r"|should (?:i|we)|shall (?:i|we)|wondering)\b",
    re.I,
)
_REQUEST = re.compile(
    r"^(?:please|pls|plz|kindly|(?:can|could|would|will) you|(?:i want|i'd like|i would like"
    r"|i need) you to|let me know|tell me|show me|remind me|help me|give me|send me|find me"
    r"|get me|walk me|explain|summari[sz]e|draft|write me|make me)\b",
    re.I,
)
_SMALL_TALK = re.compile(
    r"^(?:hi|hey|hello|thanks|thank you|thx|ty|cheers|bye|good ?night|see you|see ya|ok(?:ay)?"
    r"|cool|great|nice|awesome|perfect|sounds good|got it|sure|no problem|np|you're welcome"
    r"|lol|haha+|wow|yes|no|yep|nope|done|ack|noted|how are you|how's it going|have a (?:nice|good|"
    r"great) \w+|happy \w+day|welcome back|good (?:morning|afternoon|evening))\b[\s!.,:)]*$",
    re.I,
)
# Rules of behaviour aimed at the agent: imperatives and "you should"-style sentences.
_RULE = re.compile(
    r"^(?:always|never|don'?t|do not|stop|avoid|make sure|be sure|remember to|try to|try not to"
    r"|feel free|no more|refrain|answer|reply|respond|write|speak|talk|use|format|sign|address"
    r"|refer|keep|include|add|put|show|give|list|send|mention|translate|ask|ping|notify|cite|be"
    r"|stay|skip|prefer|act|pretend|just (?:answer|reply|say|use))\b"
    r"|\byou (?:should|must|need to|have to|'ll need to|will need to|are to|'re to|may not"
    r"|can't|cannot|shouldn't|mustn't|ought to|are not allowed|aren't allowed|'re not allowed)\b"
    r"|\b(?:whenever you|when you (?:answer|reply|respond|write|talk))\b"
    r"|\byour (?:answers|replies|responses|tone|messages|output|style)\b",
    re.I,
)
_RULE_EXCEPTIONS = re.compile(r"^(?:call me|keep in mind|use of)\b", re.I)
# "From now on, answer in French" is a rule; "from now on we deploy from main" is a decision.
_FORWARD = re.compile(r"\b(?:from now on|going forward|in (?:the )?future|next time)\b,?\s*", re.I)
_TRANSIENT = re.compile(
    r"\b(?:one sec(?:ond)?|a sec|one moment|just a (?:sec|second|minute|moment)|brb"
    r"|be right back|hang on|hold on|give me a (?:sec|second|minute|moment)|bear with me"
    r"|still (?:compiling|building|running|loading|waiting|downloading|installing|deploying"
    r"|working|thinking|syncing|indexing)"
    r"|(?:i'?m|i am|we'?re|we are) (?:currently |now |just |still )?(?:running|compiling|building"
    r"|deploying|restarting|rebooting|testing|checking|looking|trying|installing|downloading"
    r"|uploading|waiting|working on|debugging|fixing|reviewing|rerunning|re-running|pushing"
    r"|pulling|grabbing|heading|going to (?:check|look|try|run|grab)|about to|off to|back|stepping)"
    r"|let me (?:check|look|see|try|think|run|grab|find|dig|quickly|just)"
    r"|(?:i'll|i will) (?:check|look|get back|try|run|ping|be back|brb)"
    r"|(?:is|are) (?:still|now) (?:running|compiling|building|loading|deploying|uploading"
    r"|downloading|installing|rebooting|restarting)"
    r"|(?:is|are) (?:running|compiling|building|loading|deploying|uploading|downloading"
    r"|installing|rebooting|restarting)\W*$"
    r"|in progress|almost done|nearly done|halfway there|needs? (?:a )?(?:restart|reboot|look))\b",
    re.I,
)
# Relative time: "I'm working from home today" is not durable. In project state and decisions
# it is, once made absolute with the message's date ("shipped v2 on 2024-05-02").
_RELATIVE_TIME = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|this (?:morning|afternoon|evening)|right now"
    r"|at the moment|for now|for the moment)\b",
    re.I,
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|might|possibly|what if|not sure|unsure|probably|considering"
    r"|thinking (?:about|of)|wondering|i guess|i wonder|i think|i believe|i suppose"
    r"|we could|should we|hypothetically|in theory|or not)\b",
    re.I,
)
_SECRET_NOUN = (
    r"\b(?:passwords?|passwd|passcodes?|passphrases?|pin code|pin number|(?-i:PIN)|api[ -]?keys?"
    r"|access keys?|secret keys?|secrets?|tokens?|credentials?|private keys?|ssh keys?|2fa codes?"
    r"|otp|recovery codes?|license keys?)\b"
)
# Talk that gives or hands over a secret's value, with or without a detectable shape:
# "the staging password is hunter2", "here's my token: ...", "reset my password to ...".
_SECRET_TALK = re.compile(
    rf"{_SECRET_NOUN}[^.?!]{{0,40}}?(?:\b(?:is|are|was|were|to|=)\b|[:=]|->)"
    rf"|\b(?:here'?s|here is|use this|try this|paste|pasted|sending|gave|give)\b[^.?!]{{0,25}}"
    rf"{_SECRET_NOUN}",
    re.I,
)
# Saying where a secret lives is fine, and useful: "the deploy token is stored in Vault".
_SECRET_REFERENCE = re.compile(
    r"\b(?:stored|kept|lives?|managed|saved|held) (?:in|by|on)\b|\b(?:rotate[sd]?|expire[sd]?"
    r"|expiry|expiration)\b|\bin (?:the )?(?:vault|1password|bitwarden|lastpass|keychain|keepass"
    r"|secrets? manager|password manager|settings)\b",
    re.I,
)


def _skip_reason(text: str, role: str) -> str | None:
    if len(text) > MAX_ENTRY_CHARS:
        return "too long"
    if text.endswith("?") or _QUESTION_START.match(text):
        return "question"
    if _SMALL_TALK.match(text) or len(re.findall(r"[A-Za-z0-9]+", text)) < 2:
        return "small talk"
    if _SECRET_TALK.search(text) and not _SECRET_REFERENCE.search(text):
        return "secret"
    if _TRANSIENT.search(text):
        return "transient"
    if role == "user":
        if _REQUEST.match(text):
            return "request"
        if _RULE.search(text) and not _RULE_EXCEPTIONS.match(text):
            return "behavioural rule"
        forward = _FORWARD.search(text)
        if forward:
            rest = (text[: forward.start()] + text[forward.end() :]).strip(" ,")
            if _RULE.match(rest) or re.search(r"\b(?:you|your)\b", rest, re.I):
                return "behavioural rule"
    if _HEDGE.search(text):
        return "hedged"
    return None


# --- rewriting in third person ---------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ADVERBS = _words(
    "just also always usually still now never only really often sometimes mostly all both "
    "currently finally already definitely actually generally normally typically recently "
    "mainly primarily officially"
)
_MODALS = _words("will would can could should must might may shall did had used need dare 'll 'd")
_IRREGULAR_PAST = _words(
    "built ran made chose got went had did took wrote set put cut kept left found gave saw sent "
    "spent broke began bought brought fell felt forgot froze hit held knew led lost met paid "
    "read rode rose said sold shut sat split spoke stood stuck taught told thought threw "
    "understood woke won wore shipped was were"
)
_CONJUGATE = {
    "am": "is",
    "are": "is",
    "have": "has",
    "do": "does",
    "go": "goes",
    "don't": "doesn't",
    "haven't": "hasn't",
    "aren't": "isn't",
    "were": "was",
    "weren't": "wasn't",
}


def _third_person(verb: str) -> str:
    low = verb.lower()
    if low in _CONJUGATE:
        return _CONJUGATE[low]
    if low in _MODALS or low in _IRREGULAR_PAST or low.endswith(("ed", "n't")):
        return verb
    if re.fullmatch(r"[a-z]+", low) is None:
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


_SUBJECT_I = re.compile(r"^(?:I'm|I am|I've|I have|I'll|I will|I'd|I)\b ?", re.I)
_SUBJECT_WE = re.compile(
    r"^(?:we're|we are|we've|we have|we'll|we will|we'd|we|the team)\b ?", re.I
)
_CONTRACTED = {
    "i'm": "is",
    "i am": "is",
    "i've": "has",
    "i have": "has",
    "i'll": "will",
    "i will": "will",
    "i'd": "would",
    "we're": "is",
    "we are": "is",
    "we've": "has",
    "we have": "has",
    "we'll": "will",
    "we will": "will",
    "we'd": "would",
}


def _split_subject(text: str, subject: str, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    """``("Ada prefers", "their tea black")`` for "I prefer my tea black", or ``None``."""
    m = pattern.match(text)
    if not m:
        return None
    said = m.group(0).strip().lower()
    rest = text[m.end() :]
    if said in _CONTRACTED:
        return f"{subject} {_CONTRACTED[said]}", rest
    words = rest.split(" ")
    for i, word in enumerate(words):
        if word.lower() in _ADVERBS:
            continue
        words[i] = _third_person(word)
        return f"{subject} {' '.join(words[: i + 1])}", " ".join(words[i + 1 :])
    return subject, rest


_PRONOUNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bI'm\b"), "they're"),
    (re.compile(r"\bI've\b"), "they've"),
    (re.compile(r"\bI'll\b"), "they'll"),
    (re.compile(r"\bI'd\b"), "they'd"),
    (re.compile(r"\bI am\b"), "they are"),
    (re.compile(r"\bI was\b"), "they were"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmyself\b", re.I), "themselves"),
    (re.compile(r"\bmine\b", re.I), "theirs"),
    (re.compile(r"\bmy\b", re.I), "their"),
    (re.compile(r"\bme\b", re.I), "them"),
    (re.compile(r"\bwe're\b", re.I), "the team is"),
    (re.compile(r"\bwe've\b", re.I), "the team has"),
    (re.compile(r"\bwe'll\b", re.I), "the team will"),
    (re.compile(r"\bwe are\b", re.I), "the team is"),
    (re.compile(r"\bwe\b", re.I), "the team"),
    (re.compile(r"\bus\b"), "the team"),
    (re.compile(r"\bours\b", re.I), "the team's"),
    (re.compile(r"\bour\b", re.I), "the"),
)


def _object_pronouns(text: str, listener: str | None = None) -> str:
    """First-person words inside a clause in neutral form ("my laptop" -> "their laptop")."""
    for pattern, repl in _PRONOUNS:
        text = pattern.sub(repl, text)
    if listener is not None:
        # In an assistant's sentence "you" is the person it talks to.
        text = re.sub(r"\byour\b", f"{listener}'s", text, flags=re.I)
        text = re.sub(r"\byou're\b", f"{listener} is", text, flags=re.I)
        text = re.sub(r"\byou\b", listener, text, flags=re.I)
    return text


def _neutral(text: str, speaker: str, listener: str | None = None) -> str:
    """A whole clause in third person: the subject first, then pronouns inside it."""
    text = re.sub(r"^our\b", "the", text, flags=re.I)
    for subject, pattern in ((speaker, _SUBJECT_I), ("Team", _SUBJECT_WE)):
        split = _split_subject(text, subject, pattern)
        if split is not None:
            head, tail = split
            return f"{head} {_object_pronouns(tail, listener)}".strip()
    return _object_pronouns(text, listener)


def _finish(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip().rstrip(",;:-–")
    text = re.sub(r"[.!…]+$", "", text).strip()
    if not text:
        return ""
    first = text.split(" ", 1)[0]
    if first in {"the", "a", "an", "our", "this", "staging", "production", "prod", "deploys"}:
        text = text[0].upper() + text[1:]
    return text + "."


# --- date words ------------------------------------------------------------------------------

_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DATEISH = re.compile(
    rf"\b(?:{_MONTHS}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|today"
    r"|tomorrow|tonight|next (?:week|month|quarter|year|sprint)|end of|eo[dwmqy]|q[1-4]|h[12]"
    r"|\d{1,4}[-/.]\d{1,2}(?:[-/.]\d{1,4})?|\d{4}|\d{1,2}(?:st|nd|rd|th))\b|\bMay\b",
    re.I,
)


def _absolute_dates(text: str, when: float) -> str:
    day = dt.datetime.fromtimestamp(when, dt.UTC).date()
    shifts = {"yesterday": -1, "tomorrow": 1}

    def repl(m: re.Match[str]) -> str:
        word = m.group(1).lower()
        return f"on {(day + dt.timedelta(days=shifts.get(word, 0))).isoformat()}"

    return re.sub(
        r"(?:\bon )?\b(today|tonight|tomorrow|yesterday|this morning|this afternoon"
        r"|this evening)\b",
        repl,
        text,
        flags=re.I,
    )


# --- extractors ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Context:
    role: str
    speaker: str  # who "I" is, in third person
    listener: str | None  # who "you" is (for assistant sentences)
    when: float
    cue: bool  # the sentence began with "remember that", "heads up:", ...


_Extractor = Callable[[str, _Context], Candidate | None]
_PRONOUN_SUBJECT = _words(
    "i you he she they it this that these those we there here which who what everything "
    "nothing something anything someone everyone all both one lunch dinner"
)
_NAME_STOP = _words(
    "The This That These Those It I We You He She They Our My Your His Her Their There Here "
    "What When Where Why How Which Who Also And But So Then Now Today Tomorrow Yesterday "
    "Everyone Nobody Someone Everything Nothing Let Please Thanks Hi Hey Hello Yes No Ok Okay "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday Staging Production Prod Dev "
    "Sure Great Cool Just Maybe Perhaps If Since Because After Before While Once Team"
)
_NAME = r"(?P<n>[A-Z][a-z]+(?: [A-Z][a-z]+)?)"


_WHEN_SAID = re.compile(
    r"\s+(?:(?:last|this|next) (?:week|month|year|spring|summer|autumn|fall|winter)|recently"
    r"|a (?:few |couple of )?(?:days|weeks|months|years) ago|(?:\w+ )?(?:days|weeks|months|years)"
    r" ago|lately)$",
    re.I,
)


def _value(text: str, *, listener: str | None = None) -> str:
    # "I moved to Berlin last month": when it was said is not part of the value.
    return _object_pronouns(_WHEN_SAID.sub("", text.strip()), listener)


def _bad_object(value: str) -> bool:
    """Objects that carry no fact of their own: "I like that", "I love it", or about "you"."""
    return (
        len(value.strip()) < 2
        or re.match(r"^(?:it|that|this|those|these|them|the idea|so|too)\b", value, re.I)
        is not None
        or re.search(r"\b(?:you|your|yours)\b", value, re.I) is not None
    )


_PREFERENCE_VERBS = {
    "prefer": "prefers",
    "like": "likes",
    "love": "loves",
    "enjoy": "enjoys",
    "hate": "hates",
    "dislike": "dislikes",
    "can't stand": "dislikes",
    "cannot stand": "dislikes",
    "don't like": "dislikes",
    "do not like": "dislikes",
    "avoid": "avoids",
}
_UPPER = r"(?-i:[A-Z])"  # a proper noun starts here, even inside a case-blind pattern

# What the user says about themself: (pattern, template, whether the object must carry a fact).
# ``{s}`` is the speaker in third person, ``{v}`` the captured value in neutral form, ``{a}``
# a captured attribute, ``{verb}`` the preference verb conjugated.
_PERSONAL_RULES: tuple[tuple[str, str, bool], ...] = (
    (r"^(?:my name is|i'm called|i am called|the name's) (?P<v>.+)", "{s}'s name is {v}", False),
    (r"^(?:please )?(?:call me|i go by) (?P<v>.+)", "{s} prefers to be called {v}", False),
    (rf"^(?:i'm|i am) (?P<v>{_UPPER}[a-z]+(?: {_UPPER}[a-z]+)?)$", "{s}'s name is {v}", False),
    (
        r"^i(?: am|'m) (?:severely |very |mildly |deathly |also )?allergic to (?P<v>.+)",
        "{s} is allergic to {v}",
        False,
    ),
    (r"^i(?:'d| would) (?:much )?rather (?P<v>.+)", "{s} would rather {v}", True),
    (
        r"^i (?:really |strongly |much |generally |usually |always |definitely |also "
        r"|totally )?(?P<verb>prefer|like|love|enjoy|hate|dislike|can't stand|cannot stand"
        r"|don't like|do not like|avoid) (?P<v>.+)",
        "{s} {verb} {v}",
        True,
    ),
    (
        r"^i(?: now| currently)? (?:live|am living|'m living) in (?P<v>.+)"
        r"|^i(?:'m| am)(?: now)? based in (?P<w>.+)",
        "{s} lives in {v}",
        False,
    ),
    (
        r"^i(?: have|'ve)?(?: just| recently| finally)? (?:moved|relocated) to"
        rf" (?P<v>{_UPPER}.+)",
        "{s} lives in {v}",
        False,
    ),
    (
        r"^i(?: now| currently)? work (?:at|for) (?P<v>.+)"
        rf"|^i(?: have|'ve)?(?: just| recently)? joined (?P<w>{_UPPER}.+)",
        "{s} works at {v}",
        False,
    ),
    (r"^i work as (?P<v>an? .+)", "{s} works as {v}", False),
    (
        r"^i(?:'m| am) (?P<v>(?:an? |the )(?:[\w-]+ ){0,3}(?:engineer|developer|designer"
        r"|manager|lead|scientist|analyst|admin|administrator|architect|founder|cto|ceo|pm|sre"
        r"|consultant|researcher|student|teacher|doctor|nurse|writer|owner|intern|director"
        r"|accountant|lawyer|maintainer)\b.*)",
        "{s} is {v}",
        False,
    ),
    (
        r"^my (?P<a>(?:[\w-]+ ){0,2}?(?:name|birthday|wife|husband|partner|son|daughter|kids?"
        r"|children|dog|cat|pet|manager|boss|team|timezone|time zone|pronouns|role|title"
        r"|favou?rite [\w-]+|hometown|first language|native language|mother tongue|email"
        r"|handle|desk|office|team lead|lead)(?:'s name)?) (?:is|are) (?P<v>.+)",
        "{s}'s {a} is {v}",
        False,
    ),
    (
        r"^i(?:'m| am) (?P<v>(?:vegetarian|vegan|pescatarian|gluten[- ]free|lactose intolerant"
        r"|left[- ]handed|colou?r[- ]?blind|diabetic|celiac|coeliac|kosher|halal)\b.*)",
        "{s} is {v}",
        False,
    ),
    (r"^i (?:don't|do not|can't|cannot) (?P<a>eat|drink) (?P<v>.+)", "{s} doesn't {a} {v}", False),
    (r"^i speak (?P<v>.+)", "{s} speaks {v}", False),
    (rf"^i(?:'m| am) (?:originally )?from (?P<v>{_UPPER}.+)", "{s} is from {v}", False),
    (
        r"^i(?:'m| am) (?:in|on) (?:the )?(?P<v>[\w/+ -]+?) (?:time ?zone|time)\b",
        "{s}'s timezone is {v}",
        False,
    ),
    (
        r"^i have (?P<v>(?:a|an|one|two|three|four|five|\d+) (?:[\w-]+ )?(?:kids?|children"
        r"|sons?|daughters?|dogs?|cats?|pets?|brothers?|sisters?|siblings?)\b.*)",
        "{s} has {v}",
        False,
    ),
    (r"^i(?: mostly| mainly| usually| always)? use (?P<v>.+)", "{s} uses {v}", True),
)
_PERSONAL = tuple((re.compile(p, re.I), t, c) for p, t, c in _PERSONAL_RULES)


def _people(text: str, ctx: _Context) -> Candidate | None:
    if ctx.role != "user":
        return None
    for pattern, template, check in _PERSONAL:
        m = pattern.match(text)
        if not m:
            continue
        groups = {k: v or "" for k, v in m.groupdict().items()}
        # Alternatives capture the value as ``v`` or ``w``: whichever matched.
        value = groups.get("v", "") or groups.get("w", "")
        if check and _bad_object(value):
            return None
        if "name is" in template and value.strip().casefold() == ctx.speaker.casefold():
            return None  # "I'm Priya" said by Priya names no one new
        verb = _PREFERENCE_VERBS.get(groups.get("verb", "").lower(), "")
        fields = {**groups, "s": ctx.speaker, "verb": verb, "v": _value(value)}
        return Candidate(PEOPLE, template.format(**fields))
    return None


_ROLE_NOUN = (
    r"(?:dba|lead|manager|owner|pm|cto|ceo|cfo|coo|founder|designer|engineer|developer|admin"
    r"|contact|on-call|oncall|point person|architect|analyst|sre|maintainer|reviewer|boss"
    r"|director|head|expert|champion|liaison|accountant|lawyer|recruiter|intern)"
)


def _named_person(text: str, ctx: _Context) -> Candidate | None:
    if ctx.role != "user":
        return None
    m = re.match(
        _NAME + r" (?P<verb>prefers|likes|loves|hates|dislikes|is allergic to|lives in"
        r"|is based in|moved to|works at|works for|joined|works as|is on (?:parental |sick )?leave"
        r"|is on vacation|is on holiday|is out of office|owns|leads|manages|is responsible for"
        r"|is in charge of|handles|is (?:our|the|a|an|my)|is vegetarian|is vegan|speaks|goes by"
        r"|reports to|is from)\b(?P<v>.*)",
        text,
    )
    if not m or m["n"].split(" ")[0] in _NAME_STOP:
        return None
    name, verb, rest = m["n"], m["verb"], m["v"].strip()
    if verb.startswith("is ") and verb.split(" ")[1] in {"our", "the", "a", "an", "my"}:
        if not re.search(rf"\b{_ROLE_NOUN}\b", rest, re.I):
            return None
        owner = verb.split(" ")[1].lower()
        whose = {"our": "the team's", "my": f"{ctx.speaker}'s"}.get(owner, owner)
        return Candidate(PEOPLE, f"{name} is {whose} {rest}")
    if verb == "moved to":
        if not rest[:1].isupper():
            return None
        return Candidate(PEOPLE, f"{name} lives in {rest}")
    if verb in {"is based in"}:
        return Candidate(PEOPLE, f"{name} lives in {_value(rest)}")
    if verb == "joined":
        return Candidate(PEOPLE, f"{name} works at {rest}") if rest[:1].isupper() else None
    if not rest and verb not in {"is vegetarian", "is vegan"}:
        return None
    if _bad_object(rest) and verb in _PREFERENCE_VERBS.values():
        return None
    return Candidate(PEOPLE, f"{name} {verb} {_value(rest)}".rstrip())


def _switch(text: str, ctx: _Context) -> Candidate | None:
    m = re.match(
        r"^(?:we|the team|i)(?: have|'ve)?(?: just| finally| now| already| recently| officially)?"
        r" (?:switched|moved|migrated|changed|swapped|went|transitioned|ported \w+) from"
        r" (?P<old>.+?) (?:to|over to|onto) (?P<new>.+?)(?: for (?P<p>.+))?$"
        r"|^(?:we|the team)(?: have|'ve)?(?: just| finally)? replaced (?P<old2>.+?) with"
        r" (?P<new2>.+?)(?: for (?P<p2>.+))?$",
        text,
        re.I,
    )
    if not m:
        return None
    old = _bare(m["old"] or m["old2"])
    new = _bare(m["new"] or m["new2"])
    purpose = m["p"] or m["p2"]
    if not old or not new:
        return None
    what = f"Switched from {old} to {new}" + (f" for {_value(purpose)}" if purpose else "")
    return Candidate(DECISIONS, _absolute_dates(what, ctx.when), "switch", old, new)


def _bare(value: str) -> str:
    """A named thing without articles or trailing time words: "the old MySQL box" stays."""
    value = re.sub(r"^(?:the|our|a|an)\s+", "", value.strip(), flags=re.I)
    # "Jenkins, everything runs on Actions now": the thing is what comes before the aside.
    value = re.split(r"\s*(?:[,;(]|\s[-–—]\s|\bbecause\b|\bsince\b)", value, maxsplit=1)[0]
    value = re.sub(
        r"\s+(?:(?:last|this|next) (?:week|month|year|sprint|quarter|night)|over the weekend"
        r"|today|yesterday|a while ago|recently)$",
        "",
        value,
        flags=re.I,
    )
    return value.strip(" .,")


def _retire(text: str, ctx: _Context) -> Candidate | None:
    m = re.match(
        r"^(?:we|the team|i)(?: have|'ve)?(?: just| finally| officially)? (?:(?:no longer|don't"
        r"|do not|stopped|quit)(?: us(?:e|es|ing)| run(?:s|ning)?| need(?:s|ing)?| hav(?:e|ing))"
        r"|dropped|removed|retired|decommissioned|got rid of|ditched|killed|sunset|sunsetted"
        r"|turned off|shut down|deleted|uninstalled|moved off|moved away from) (?P<v>.+?)"
        r"(?: (?:anymore|any more|any longer|altogether|entirely|completely))?$"
        r"|^(?:the |our )?(?P<w>.+?) (?:is|are|was|were|has been|have been|got)(?: now)?"
        r" (?:retired|decommissioned|shut down|turned off|gone|removed|no longer used"
        r"|not used anymore|not used any more)\b",
        text,
        re.I,
    )
    if not m:
        return None
    raw = (m["v"] or m["w"]).strip()
    value = _bare(raw)
    if not value or value.split(" ")[0].lower() in _PRONOUN_SUBJECT:
        return None
    if re.search(r"\b(?:you|your)\b", value, re.I):
        return None
    # "We don't need a meeting" or "... need to wait" retires nothing: only named things retire.
    if re.match(r"(?:a|an|any|some|to|much|many|more|that|this)\b", raw, re.I):
        return None
    return Candidate(DECISIONS, f"No longer uses {value}", "retire", value)


def _decision(text: str, ctx: _Context) -> Candidate | None:
    m = re.match(
        # "After the spike we decided ...": a short lead-in may come before the decision.
        r"^(?:(?:after|following|in the end|eventually|ultimately|finally|today|yesterday)\b"
        r"[^,]{0,40}?,?\s+)?"
        r"(?P<who>we|the team|i|everyone)(?: have|'ve)?(?: all| finally| just| now| officially)?"
        r" (?P<verb>decided|agreed|settled|concluded|voted|committed)(?: (?P<prep>to|that|on|upon"
        r"|against|for))?[\s:,]+(?P<v>.+)",
        text,
        re.I,
    )
    if m:
        verb = m["verb"].lower()
        prep = (m["prep"] or "").lower()
        who = f"{ctx.speaker} " if m["who"].lower() == "i" else ""
        value = _value(m["v"])
        if _bad_object(value) and prep != "that":
            return None
        head = f"{who}{verb}" if who else verb.capitalize()
        joined = f"{head} {prep} {value}" if prep else f"{head} {value}"
        return Candidate(DECISIONS, _absolute_dates(joined, ctx.when))
    m = re.match(
        r"^(?:we|the team)(?: have|'ve)?(?: finally)? (?:chose|chosen|picked|selected|went with"
        r"|opted for|standardi[sz]ed on) (?P<v>.+)",
        text,
        re.I,
    )
    if m and not _bad_object(m["v"]):
        return Candidate(DECISIONS, _absolute_dates(f"Chose {_value(m['v'])}", ctx.when))
    m = re.match(
        r"^(?:the |our )?(?:final )?decision(?: is| was|:)\s*(?P<to>to )?(?P<v>.+)", text, re.I
    )
    if m and not _bad_object(m["v"]):
        lead = "Decided to" if m["to"] else "Decision:"
        return Candidate(DECISIONS, _absolute_dates(f"{lead} {_value(m['v'])}", ctx.when))
    if ctx.role != "user":
        # "Let's use X" from the assistant is a suggestion, not a decision.
        return None
    m = re.match(
        r"^(?:ok(?:ay)?,? )?(?:let'?s|let us|we'll|we will|we're going to|we are going to"
        r"|we're gonna|we'll be|from now on,? we(?:'ll| will)?|going forward,? we(?:'ll| will)?)"
        r" (?P<verb>go with|use|adopt|switch to|move to|migrate to|stick with|stay with"
        r"|standardi[sz]e on|keep|drop|deprecate|retire|ship|launch|release|deploy|freeze|run"
        r"|host|store|require|go)\b(?P<v>.*)"
        r"|^(?:we're|we are|i'm|i am)(?: going)? going with (?P<w>.+)",
        text,
        re.I,
    )
    if not m:
        return None
    if m["w"]:
        value = m["w"].strip()
        what = f"Decided to go with {_value(value)}"
    else:
        value = m["v"].strip()
        what = f"Decided to {m['verb'].lower()} {_value(value)}"
    if not value or _bad_object(value):
        return None
    return Candidate(DECISIONS, _absolute_dates(what.rstrip(), ctx.when))


def _team_uses(text: str, ctx: _Context) -> Candidate | None:
    m = re.match(
        r"^(?:we|the team)(?: mostly| mainly| currently| now| also| still| all| primarily)?"
        r" (?P<verb>use|rely on) (?P<x>.+?)(?: for (?P<p>.+))?$",
        text,
        re.I,
    )
    if not m or _bad_object(m["x"]):
        return None
    verb = "uses" if m["verb"].lower() == "use" else "relies on"
    what = f"Team {verb} {_value(m['x'])}" + (f" for {_value(m['p'])}" if m["p"] else "")
    return Candidate(PEOPLE, what)


_STATUS = (
    r"(?:done|finished|complete|completed|live|shipped|launched|released|merged|deployed"
    r"|in production|in prod|in beta|in alpha|in staging|on hold|blocked(?: on| by)?|cancelled"
    r"|canceled|paused|delayed|postponed|frozen|feature[- ]complete|code[- ]complete|deprecated"
    r"|approved|signed|rolled out|rolled back|green-?lit|out|over budget|on track|behind schedule)"
)
_TRANSIENT_SUBJECT = re.compile(
    r"\b(?:build|tests?|test run|job|download|upload|install|compile|compilation|ci|run|script"
    r"|command|query|import|export|backup|pr|coffee|lunch|meeting|call)s?$",
    re.I,
)
_EVENT = (
    r"(?P<e>deadline|launch date|release date|ship date|due date|launch|release|demo|cutover"
    r"|go-live|kickoff|kick-off|code freeze|feature freeze|freeze|offsite|review|audit)"
)


def _project(text: str, ctx: _Context) -> Candidate | None:
    m = re.match(
        r"^(?:we|the team|i)(?: have|'ve)?(?: just| finally| officially| successfully| already"
        r"| now)? (?P<verb>shipped|launched|released|finished|completed|wrapped up|rolled out"
        r"|delivered|went live with|signed|closed|merged|deployed|migrated|cut) (?P<v>.+)",
        text,
        re.I,
    )
    if m:
        if text.lower().startswith("i ") and ctx.role != "user":
            return None  # the assistant's own doings are not the user's project state
        if text.lower().startswith("i ") and m["verb"].lower() not in {
            "shipped",
            "launched",
            "released",
            "finished",
            "completed",
        }:
            return None
        if _bad_object(m["v"]):
            return None
        return Candidate(PROJECT, _absolute_dates(_neutral(text, ctx.speaker), ctx.when))
    m = re.match(
        rf"^(?:the |our )?(?P<s>[\w.'-]+(?: [\w.'-]+){{0,5}}? )?{_EVENT} (?:is |was |has been"
        r" |got |'s )?(?:now |officially )?(?:moved|pushed|postponed|delayed|rescheduled|slipped"
        r"|brought forward|changed|bumped|shifted|set|fixed|confirmed)(?: back| out| up| forward)?"
        r" (?:to|for) (?P<d>.+)",
        text,
        re.I,
    )
    if m and _DATEISH.search(m["d"]):
        return Candidate(PROJECT, _absolute_dates(_neutral(text, ctx.speaker), ctx.when))
    m = re.match(
        rf"^(?:the |our )?(?P<s>[\w.'-]+(?: [\w.'-]+){{0,5}}? )?{_EVENT} (?:is|was|will be)"
        r" (?:on |for |by |in |at )?(?P<d>.+)",
        text,
        re.I,
    )
    if m and _DATEISH.search(m["d"]) and not _RELATIVE_ONLY.fullmatch(m["d"]):
        return Candidate(PROJECT, _absolute_dates(_neutral(text, ctx.speaker), ctx.when))
    m = re.match(
        r"^(?:the |our )?(?P<s>[\w.'-]+(?: [\w.'-]+){0,4}?) (?:launches|ships|releases|goes live"
        r"|go live|is launching|is shipping|is releasing|will launch|will ship|will be released"
        r"|will go live|is due|are due|is scheduled|is planned|are scheduled|is set to launch)"
        r" (?:for |on |in |by |at )?(?P<d>.+)",
        text,
        re.I,
    )
    if m and _DATEISH.search(m["d"]) and m["s"].split(" ")[0].lower() not in _PRONOUN_SUBJECT:
        return Candidate(PROJECT, _absolute_dates(_neutral(text, ctx.speaker), ctx.when))
    m = re.match(
        r"^(?:the |our )?(?P<s>[\w.'-]+(?: [\w.'-]+){0,5}?) (?:is|are|was|were|has been"
        rf"|have been|got)(?: now| finally| officially| fully| all| totally)? {_STATUS}\b(?P<r>.*)",
        text,
        re.I,
    )
    if m:
        subject = m["s"].strip()
        if subject.split(" ")[0].lower() in _PRONOUN_SUBJECT or _TRANSIENT_SUBJECT.search(subject):
            return None
        if subject.lower().startswith("my "):
            return None
        return Candidate(PROJECT, _absolute_dates(_neutral(text, ctx.speaker), ctx.when))
    return None


_RELATIVE_ONLY = re.compile(r"(?:today|tomorrow|tonight)\W*", re.I)

_TOOL_VERSION = r"(?P<tool>[A-Za-z][\w.+-]*) (?P<ver>v?\d+(?:\.\d+)*)\b"


def _env_versions(text: str, ctx: _Context) -> Candidate | None:
    m = re.match(
        r"^(?:we|the team)(?:'re| are| have|'ve)?(?: now| still| currently| just| finally)?"
        r" (?:on|using|running|pinned to|stuck on|upgraded(?: \w+)? to|bumped(?: \w+)? to"
        rf"|updated(?: \w+)? to|moved(?: \w+)? to|downgraded(?: \w+)? to) {_TOOL_VERSION}",
        text,
        re.I,
    )
    if m:
        return Candidate(ENVIRONMENT, _neutral(text, ctx.speaker))
    m = re.match(
        r"^(?:the |our )?(?P<s>[\w.@/-]+(?: [\w.@/-]+){0,4}?) (?:runs|listens|is|lives|sits"
        r"|serves|is served|is exposed|is available|is reachable)(?: only)? (?:on|at) (?:port |:)"
        r"(?P<p>\d{2,5})\b",
        text,
        re.I,
    )
    if m and m["s"].split(" ")[0].lower() not in _PRONOUN_SUBJECT:
        return Candidate(ENVIRONMENT, _neutral(text, ctx.speaker))
    m = re.match(r"^(?:the |our )?[\w.+-]+ is pinned to (?:version )?v?\d", text, re.I)
    if m:
        return Candidate(ENVIRONMENT, _neutral(text, ctx.speaker))
    return None


_LESSON = re.compile(
    r"^(?:the |our |my )?(?:(?:root |real |actual |underlying |likely )?cause|culprit|fix|solution"
    r"|workaround|trick|remedy|key)(?: (?:here|for (?:this|that|it|the \w+)))? (?:was|is"
    r"|turned out to be|ended up being|:)\s*(?P<v>.+)"
    r"|^(?:the |our )?(?:problem|issue|bug|error|failure|crash|outage|leak|slowdown|regression)"
    r"(?: \w+){0,3}? (?:was|turned out to be|came from|was caused by)\b\s*(?P<w>.+)"
    r"|^(?:it )?turn(?:s|ed) out(?: that)?,?\s*(?P<t>.+)"
    r"|^(?:lesson(?: learned)?|takeaway|til|today i learned|note to self|learned|pro tip)"
    r"\s*[:\-–]\s*(?P<l>.+)",
    re.I,
)


def _lesson(text: str, ctx: _Context) -> Candidate | None:
    m = _LESSON.match(text)
    if not m:
        return None
    value = m["v"] or m["w"] or m["t"] or m["l"]
    if not value or ((m["t"] or m["l"]) and _bad_object(value)):
        return None
    if m["t"]:
        if value.split(" ")[0].lower() in {"i", "you", "it", "that", "this"}:
            return None
        text = f"Turned out {value}"
    elif m["l"]:
        text = f"Lesson: {value}"
    return Candidate(ENVIRONMENT, _neutral(text, ctx.speaker, ctx.listener))


_GOTCHA_VERBS = (
    r"(?:needs|requires|depends on|only works|won't work|doesn't work|does not work|can't handle"
    r"|cannot handle|breaks|fails|crashes|hangs|times out|errors out|chokes|panics|segfaults"
    r"|leaks|is flaky|is read-only|is readonly|is read only|is write-only|must be|must have"
    r"|must run|has to be|has to have|has to run|should never|only runs|only supports"
    r"|doesn't support|does not support|ignores|overwrites|rejects|drops|truncates|resets|wipes"
    r"|expires|caps|limits|rate-limits|throttles|blocks|isn't reachable|is not reachable"
    r"|is only reachable|is only available|only accepts|won't start|won't build|won't compile"
    r"|doesn't like|runs out of|defaults to|deletes|purges|restarts|caches"
    r"|(?:is|are) (?:stored|kept|managed) (?:in|by)|live in|lives in)"
)
_GOTCHA = re.compile(
    r"^(?P<s>(?:the |our |a |an )?[\w./@:+`'-]+(?: [\w./@:+`'-]+){0,5}?) "
    rf"(?:also |sometimes |always |still |silently |randomly |only )?{_GOTCHA_VERBS}\b(?P<r>.*)",
    re.I,
)
_ENV_TOKEN = re.compile(
    r"\bport \d{2,5}\b|\b[\w-]+:\d{2,5}\b|(?<![\w$])v?\d+\.\d+(?:\.\d+)?\b"
    r"|(?<![\w.])(?:~|\.{1,2})?/[\w.-]+(?:/[\w.*-]*)+|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"
    r"|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:internal|local|lan|io|com|net|org|dev|cloud|corp|svc"
    r"|cluster)\b|`[^`]+`",
)
_ENV_VERB = re.compile(
    r"^(?P<s>(?:the |our |a |an )?[\w./@:+`'-]+(?: [\w./@:+`'-]+){0,5}?)"
    r" (?:is|are|lives|live|sits|runs|run|points|resolves|is located|is hosted|is deployed"
    r"|are deployed|is at|are at|is in|are in|is on|are on|uses|use|goes|go|gets|get|has|have"
    r"|listens|stores|store|writes|write|reads|read|logs|log|caches|takes|need|should be"
    r"|must be|can be|lives at|is set to|defaults to|maps to|talks to|connects to)\b",
    re.I,
)


def _subject_ok(subject: str) -> bool:
    first = subject.strip().split(" ")[0].lower().strip("`")
    return first not in _PRONOUN_SUBJECT and not subject.lower().startswith("my ")


def _environment(text: str, ctx: _Context) -> Candidate | None:
    m = _GOTCHA.match(text)
    if m and _subject_ok(m["s"]):
        return Candidate(ENVIRONMENT, _neutral(text, ctx.speaker, ctx.listener))
    m = _ENV_VERB.match(text)
    if m and _ENV_TOKEN.search(text):
        subject = m["s"]
        if subject.lower() in {"i", "we", "the team"} or _subject_ok(subject):
            if ctx.role != "user" and subject.lower() == "i":
                return None
            return Candidate(ENVIRONMENT, _neutral(text, ctx.speaker, ctx.listener))
    if _SUBJECT_WE.match(text) and _ENV_TOKEN.search(text) and ctx.role == "user":
        return Candidate(ENVIRONMENT, _neutral(text, ctx.speaker))
    # "I'm on macOS 14.4": the user's own setup, when it names a version, host or path.
    setup = re.match(r"^(?:i'm|i am) (?:on|using|running) ", text, re.I)
    if setup and _ENV_TOKEN.search(text) and ctx.role == "user":
        return Candidate(ENVIRONMENT, _neutral(text, ctx.speaker))
    return None


def _cued(text: str, ctx: _Context) -> Candidate | None:
    """What follows "remember that" / "heads up:" when no more specific rule read it."""
    if not ctx.cue:
        return None
    first = text.split(" ", 1)[0]
    if ctx.role != "user" and first.lower() in {"i", "i'm", "my"}:
        return None
    named = re.match(_NAME + r" ", text) is not None and first not in _NAME_STOP
    if first.lower() in {"i", "i'm", "my"} or named:
        return Candidate(PEOPLE, _neutral(text, ctx.speaker))
    if first.lower() in {"it", "this", "that", "they", "he", "she", "you"}:
        return None
    return Candidate(ENVIRONMENT, _neutral(text, ctx.speaker, ctx.listener))


# The order is the precedence: specific shapes first (see the module docstring).
_EXTRACTORS: tuple[_Extractor, ...] = (
    _switch,
    _retire,
    _lesson,
    _decision,
    _env_versions,
    _team_uses,
    _project,
    _people,
    _named_person,
    _environment,
    _cued,
)


def classify(
    sentence: str, *, role: str, speaker: str, listener: str | None, when: float
) -> list[Candidate | str]:
    """Read one sentence: a :class:`Candidate` per durable clause, or why a clause was skipped.

    ``speaker`` names who "I" is in third person; ``listener`` who "you" is (for the
    assistant's sentences); ``when`` is the message time, to make "today" a date.
    Skip reasons are short words ("question", "transient", "behavioural rule", "secret", ...)
    for the reviewer's notes.
    """
    out: list[Candidate | str] = []
    whole = _clean(sentence)
    if not whole:
        return ["small talk"]
    reason = _skip_reason(whole, role)
    if reason in {"question", "secret", "too long"}:
        # A question or a secret taints the whole sentence, not just one clause of it.
        return [reason]
    for part in clauses(whole):
        out.append(_classify_clause(part, role, speaker, listener, when))
    return out


def _classify_clause(
    part: str, role: str, speaker: str, listener: str | None, when: float
) -> Candidate | str:
    text = _clean(part)
    cue = False
    m = _CUE.match(text)
    if m:
        cue = True
        text = _clean(text[m.end() :])
    if not text:
        return "small talk"
    reason = _skip_reason(text, role)
    if reason:
        return reason
    ctx = _Context(role=role, speaker=speaker, listener=listener, when=when, cue=cue)
    for extract in _EXTRACTORS:
        found = extract(text, ctx)
        if found is None:
            continue
        if found.kind == "fact":
            if found.section in {PEOPLE, ENVIRONMENT} and _RELATIVE_TIME.search(found.text):
                return "transient"
            finished = _finish(found.text)
            if not finished or len(finished) > MAX_ENTRY_CHARS:
                return "too long"
            return Candidate(found.section, finished)
        return Candidate(found.section, _finish(found.text), found.kind, found.old, found.new)
    return "no durable fact"


# --- reading entries back --------------------------------------------------------------------

_STOP_WORDS = _words(
    "a an the is are was were be been being to of for in on at by with and or that this it its "
    "their they them we our us team as from into than then so also just now currently very "
    "really has have had do does did will would"
)


# Cached: review compares every new statement with every entry of memory, so these pure
# functions of one string would otherwise be recomputed statements x entries times.
@functools.lru_cache(maxsize=65536)
def strip_source(text: str) -> str:
    """An entry's text without its ``(source: ...)`` citations."""
    return re.sub(r"\s+", " ", SOURCE_PATTERN.sub("", text)).strip()


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@functools.lru_cache(maxsize=65536)
def normalize(text: str) -> str:
    """What an entry means, for duplicate detection: no case, punctuation, stop words, source."""
    t = strip_source(text).casefold().replace("’", "'")
    t = re.sub(r"'s\b", "", t)
    words = re.findall(r"[a-z0-9]+(?:[.+#][a-z0-9]+)*\+*", t)
    return " ".join(_stem(w) for w in words if w not in _STOP_WORDS)


def mentions(text: str, value: str) -> bool:
    """Whether an entry names ``value`` (every content word of it, as whole words)."""
    words = [w for w in normalize(value).split(" ") if w]
    have = set(normalize(text).split(" "))
    return bool(words) and all(w in have for w in words)


def _subject(raw: str) -> str:
    s = raw.casefold().strip()
    s = re.sub(r"^(?:the|our|a|an)\s+", "", s)
    s = re.sub(r"'s$", "", s)
    return re.sub(r"\s+", " ", s).strip()


_EVENTS = {
    "launch date": "launch",
    "release date": "release",
    "ship date": "release",
    "due date": "deadline",
    "kick-off": "kickoff",
    "go-live": "launch",
}
_KEYS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], tuple[str, str]]], ...] = (
    (re.compile(r"^(?P<s>.+?)'s name is ", re.I), lambda m: (_subject(m["s"]), "name")),
    (
        re.compile(r"^(?P<s>.+?) (?:prefers to be called|goes by|wants to be called) ", re.I),
        lambda m: (_subject(m["s"]), "called"),
    ),
    (re.compile(r"^(?P<s>.+?) lives in ", re.I), lambda m: (_subject(m["s"]), "location")),
    (re.compile(r"^(?P<s>.+?) works (?:at|for) ", re.I), lambda m: (_subject(m["s"]), "employer")),
    (re.compile(r"^(?P<s>.+?) works as ", re.I), lambda m: (_subject(m["s"]), "role")),
    (
        re.compile(r"^team uses .+? for (?P<p>.+?)\.?$", re.I),
        lambda m: ("team", "uses for " + normalize(m["p"])),
    ),
    (
        re.compile(
            r"^(?P<s>.+?) (?:runs|listens|is|lives|sits|serves|is served|is exposed|is available"
            r"|is reachable|is running|is listening)(?: only)? (?:on|at) (?:port |:)\d",
            re.I,
        ),
        lambda m: (_subject(m["s"]), "port"),
    ),
    (
        re.compile(
            r"^team(?: is| has| have)?(?: now| still| currently| just| finally)? (?:on|using"
            r"|running|pinned to|stuck on|upgraded(?: \w+)? to|bumped(?: \w+)? to|updated(?: \w+)?"
            r" to|moved(?: \w+)? to|downgraded(?: \w+)? to) (?P<t>[a-z][\w.+-]*) v?\d",
            re.I,
        ),
        lambda m: (_subject(m["t"]), "version"),
    ),
    (
        re.compile(r"^(?:the )?(?P<t>[\w.+-]+) is pinned to ", re.I),
        lambda m: (_subject(m["t"]), "version"),
    ),
    (
        re.compile(
            rf"^(?:the )?(?P<s>.*?)\s*\b{_EVENT} (?:is|was|has|will|got|moved|pushed|postponed"
            r"|delayed|rescheduled|slipped|brought|changed|bumped|shifted|now|set|confirmed)\b",
            re.I,
        ),
        lambda m: (_subject(m["s"]), _EVENTS.get(m["e"].lower(), m["e"].lower())),
    ),
    (
        re.compile(
            r"^(?:the )?(?P<s>.+?) (?P<v>launches|will launch|is launching|goes live|will go live"
            r"|ships|releases|will ship|will be released|is shipping|is releasing|is due|are due) ",
            re.I,
        ),
        lambda m: (
            _subject(m["s"]),
            "launch"
            if "launch" in m["v"] or "live" in m["v"]
            else "deadline"
            if "due" in m["v"]
            else "release",
        ),
    ),
    (
        re.compile(
            r"^team (?P<v>launches|will launch|ships|will ship|releases|will release) (?P<s>.+?)"
            r" (?:on|in|by|at|next)\b",
            re.I,
        ),
        lambda m: (_subject(m["s"]), "launch" if "launch" in m["v"] else "release"),
    ),
    (
        re.compile(
            r"^(?:the )?(?P<s>.+?) (?:is|are|was|were|has been|have been|got)(?: now| finally"
            rf"| officially| fully| all| totally)? {_STATUS}\b",
            re.I,
        ),
        lambda m: (_subject(m["s"]), "status"),
    ),
    (
        re.compile(
            r"^team(?: has)?(?: just| finally| officially| successfully| already| now)?"
            r" (?:shipped|launched|released|finished|completed|wrapped up|rolled out|delivered)"
            r" (?P<s>.+?)(?: on \d{4}-\d{2}-\d{2}.*| on .+)?\.?$",
            re.I,
        ),
        lambda m: (_subject(m["s"]), "status"),
    ),
    (
        re.compile(r"^(?P<s>.+?)'s (?P<a>[\w' -]{1,40}?) (?:is|are) ", re.I),
        lambda m: (_subject(m["s"]), _subject(m["a"])),
    ),
)


@functools.lru_cache(maxsize=65536)
def entry_key(text: str) -> tuple[str, str] | None:
    """The ``(subject, attribute)`` an entry states, when the attribute has one value at a time.

    "Ada lives in Paris" and "Ada lives in Berlin" share ``("ada", "location")``: the newer
    replaces the older. Entries of many values ("Ada likes tea") have no key: they only merge
    when they say the same thing.
    """
    body = strip_source(text)
    for pattern, key in _KEYS:
        m = pattern.match(body)
        if m:
            subject, attribute = key(m)
            if subject.split(" ")[0] in _PRONOUN_SUBJECT and subject != "":
                return None
            return subject, attribute
    return None
