"""What a sentence says, for the offline reviewer (SPEC R6, R8): pure functions, no I/O.

:func:`read` takes one clause of a user's or the assistant's message and answers either why
memory must not hold it (a question, a request or a rule aimed at the agent, small talk, a
reaction, progress, a hedge, a secret, a to-do: short reasons for the notes) or a
:class:`Statement`: the clause as said, what kind of change it is (a fact, a switch from one
thing to another, a retirement of something), the section it belongs under, and its frame.

What a statement is about (its :class:`.frames.Frame`) is read in :mod:`.frames`; whether it
changes or outdates something in memory, in :mod:`.changes`.

Nothing here is tuned to a phrasing: every list is data in :mod:`.lexicon`, and each rule reads
a feature of the sentence (its subject, its verbs, its tokens) that any wording of the same
fact shares.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from . import learned
from . import lexicon as lx
from .changes import _retire, _switch, names_both
from .frames import (
    AUX,
    CALENDAR,
    MONTH,
    NAME_WORD,
    TIME_WORDS,
    WORD,
    Frame,
    frame,
    has_verb,
    is_verb,
    past,
    strip_source,
    subject_kind,
)
from .sentences import ROLE, TO_THE_LISTENER, clauses, clean, listed_note, other_subjects, sentences
from .slots import measures

__all__ = [
    "ASKS_VALUE",
    "CORRECTING",
    "DECISIONS",
    "ENVIRONMENT",
    "PEOPLE",
    "PROJECT",
    "Statement",
    "asks_secret",
    "beside_secret",
    "entry_problem",
    "priced",
    "read",
    "second_reading",
    "secret_values",
    "skip_reason",
    "withholds",
]

PEOPLE = "People & preferences"
DECISIONS = "Decisions"
ENVIRONMENT = "Environment & gotchas"
PROJECT = "Project state"

#: Longest clause read: a longer "sentence" is pasted text, not something said.
MAX_CHARS = 300
#: Longest text of sentences read together (:mod:`.discourse`).
MAX_JOINED = 500

_QUESTION = lx.phrases(lx.QUESTION_OPENERS)
_REQUEST = lx.phrases(lx.REQUESTS)
_AUX_Q = r"(?:is|are|was|were|do|does|did|can|could|will|would|should|has|have)"
# A question without its "?": one that asks to know ("I'd like to know whether ...", "just
# checking if ...", "can someone tell me when ..."), a question word with one word and its
# verb ("what time does ...", "which day is ..."), or a verb first and then its subject ("is
# the boiler still under warranty").
_ASKS = re.compile(
    rf"\b(?:know|tell (?:me|us)|check(?:ing)?|wonder(?:ing)?|curious|find out|idea|sure|confirm"
    rf"|ask(?:ing)?|asked(?:\s+(?:me|us))?,?)\s+(?:if|whether|when|where|who|what|which|how|why)\b"
    # "I always forget if it's times 0.85": not knowing, said of oneself
    rf"|\b(?:forget|forgot|remember|recall)\s+(?:if|whether)\b"
    rf"|^(?:what|which|how)\s+[a-z]+\s+{_AUX_Q}\s"
    rf"|^(?:when|where|who|why)\s+{_AUX_Q}\s"
    # "when's my licence due again", "what's the gate code": a question word and "is", then
    # what it asks about
    rf"|^(?:when|where|who|what|how)'s\s+(?:my|our|the|your|his|her|their|this|that)\s"
    rf"|^(?:and\s+|so\s+|but\s+)?{_AUX_Q}\s+(?:the|our|my|your|this|that|these|those|it|there"
    rf"|we|you|he|she|they|anyone|someone|anybody|somebody|other|any|most|all|people)\s"
    # "is 60% decent for a matinee", "was £40 too much": a verb, then a value it asks about
    rf"|^(?:and\s+|so\s+|but\s+)?(?:is|are|was|were)\s+[£$€]?\d[\d.,]*(?:%|k)?\s+[a-z]"
    rf"|^(?:and\s+|so\s+|but\s+)?(?:do|can|could|should|shall|will|would)\s+i\s",
    re.I,
)
_RULE = lx.phrases(lx.RULE_MARKERS)
_SMALL_TALK = lx.phrases(lx.SMALL_TALK)
_REACTION = lx.phrases(lx.REACTIONS)
_REACTION_OPENER = lx.phrases(lx.REACTION_OPENERS)
_GUESS = lx.phrases(lx.GUESSES)
_TRANSIENT = lx.phrases(lx.TRANSIENT)
#: A share of a piece of work done: progress ("70% finished", "90 percent done").
_SHARE_DONE = re.compile(
    r"\d\s?(?:%|percent|per cent)\s+(?:finished|done|complete|completed|there|through)\b", re.I
)
#: What was done a moment ago, said without a subject: "just unmoulded four loaves".
_JUST_DONE = re.compile(
    r"^just\s+(?P<v>[a-z]{3,}ed|" + "|".join(sorted(lx.IRREGULAR_PAST)) + r")\b", re.I
)
#: A piece of work the speaker just got done, said without its subject: "merged the big
#: refactor", "finally shipped the new checkout", "wrapped up the stock take" (not "finished
#: rugs ship by Canada Post", nor "deployed the API to Fly.io": where it went is a fact).
_WORK_DONE = re.compile(
    r"^(?:finally\s+|just\s+)?(?:merged|shipped|deployed|pushed|released|finished|completed"
    r"|wrapped\s+up)\s+(?:the|my|our|this|that|a|an)\s+(?!.*\b(?:to|into|onto|on|with|by|from|via)"
    r"\s+(?-i:[A-Z]))[^,;:]*$",
    re.I,
)
_MOMENT = lx.phrases(lx.MOMENT)
_THROUGH = lx.phrases(lx.PROGRESS_THROUGH)
_HEDGE = lx.phrases(lx.HEDGES)
_TODO = lx.phrases(lx.TODO)
_SECRET_NOUN = lx.phrases(lx.SECRET_NOUNS)
_SECRET_REFERENCE = lx.phrases(lx.SECRET_REFERENCES)
_LESSON = lx.phrases(lx.LESSON_CUES)
#: A thing that fails under a condition: "the dishwasher floods if you use washing up
#: liquid", "the reader won't connect when the phone is on the guest wifi", "the grinder
#: overheats after about 20 shots". A gotcha of the setting: a lesson, whose "you" is anyone's
#: (no rule for the agent), kept with the fix said after it ("..., only use the tablets").
_GOTCHA = re.compile(
    r"^(?:(?:[\w ]{0,20}\s)?(?:gotcha|heads up|watch out|beware|careful|fyi|warning)\b[\s:,!-]*)?"
    r"(?:the|our|my|this|that)\s+(?:[\w'-]+\s+){0,4}?"
    r"(?:(?:jams|floods|sticks|overheats|crashes|freezes|leaks|trips|stalls|dies|breaks|fails"
    r"|cuts\s+out|times\s+out|locks\s+up|drains|curdles|burns|smokes|resets|disconnects"
    r"|(?:won'?t|wont|doesn'?t|will\s+not|does\s+not|can'?t|cannot)\s+(?:connect|pair|start"
    r"|work|print|load|sync|boot|charge|open|close|lock|turn\s+on|scan|read|log\s+in))\b)"
    r"[^.!?]*?\b(?:if|when|whenever|unless|after|once|while|until)\b",
    re.I,
)


def _lesson(text: str) -> bool:
    """Whether ``text`` tells a lesson: a cue of one (:data:`_LESSON`), or a gotcha."""
    return bool(_LESSON.search(text) or _GOTCHA.search(text))


_FORWARD = lx.phrases(lx.FORWARD)
_DECISION = lx.phrases(lx.DECISION_CUES)
_PROJECT = lx.phrases(lx.PROJECT_CUES)
_ENVIRONMENT = lx.phrases(lx.ENVIRONMENT_CUES)
_PERSONAL = lx.phrases(lx.PERSONAL_CUES)
_ROLE = lx.phrases(lx.ROLES)
_HELP_OFFER = lx.phrases(lx.HELP_OFFERS)
#: A question about what to do now: "Which topic first?", "What shall we start with?"
_FOR_NOW = re.compile(
    r"\b(?:first|next|to (?:start|begin) with|start(?:ing)? with|begin(?:ning)? with)\W*$", re.I
)
_POLICY = lx.phrases(lx.POLICY_CUES)


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


# --- filters --------------------------------------------------------------------------------


def _is_small_talk(text: str) -> bool:
    rest = _SMALL_TALK.sub(" ", text.lower())
    return len(re.findall(r"[a-z0-9]+", rest)) == 0 or len(WORD.findall(text)) < 2


_WEATHER = lx.phrases(lx.WEATHER)
_WEATHER_MOMENT = lx.phrases(lx.WEATHER_MOMENT)
_WORN = re.compile(
    rf"\b(?:{'|'.join(sorted(lx.BODY_PARTS))})\s+(?:(?:is|are)\s+)?(?:(?:so|really|just|totally)"
    rf"\s+)?(?:{'|'.join(sorted(lx.WORN))})\b"
    rf"|\b(?:i'm|i am|we're|we are|they're|they are|everyone's|everyone is|[a-z]+s are)\s+"
    rf"(?:(?:so|really|absolutely|totally|completely|just)\s+)?(?:{'|'.join(sorted(lx.TIRED))})\b",
    re.I,
)
_ASIDE = lx.phrases(lx.ASIDES)
# How something looked or felt, likened to a thing: "I am like a pizza in the oven", "the car
# park looked like a Christmas card".
_LIKENED = re.compile(
    r"\b(?:i'm|i am|we're|we are|looked|looks|look|felt|feels|feel)\s+(?:just\s+)?like"
    r"\s+(?:a|an)\b",
    re.I,
)
_OFF_TO = re.compile(r"^(?:i'm|i am|we're|we are)\s+off\s+to\s+([a-z]+)\b", re.I)


def _chat(text: str) -> bool:
    """Whether ``text`` is talk of the moment that holds no fact: the weather now ("raining
    like always today"), how the speaker's body is ("my knees are killing me"), an aside
    about their day or a match ("just back from a night shift", "Leeds lost again"), or that
    they are leaving to do something ("I'm off to feed the hens"). The weather a rule depends
    on ("we close the pool when it rains") is not talk of the moment."""
    if _WEATHER.search(text) and _WEATHER_MOMENT.search(text):
        conditional = re.search(r"\b(?:if|when|whenever|unless|until|in case)\b", text, re.I)
        starting = re.search(r"\b(?:from|since|as of|starting)\s+today\b", text, re.I)
        if not conditional and not starting:
            return True
    worn = _WORN.search(text)
    body = worn is not None and worn[0].split()[0].lower() in lx.BODY_PARTS  # "my back is ..."
    if worn and not body and _stands_before(text[: worn.start()]):
        # "we've decided to stop doing the panto, too many of us are knackered by December":
        # how they feel, as the reason for what the clause says first
        worn = None
    if worn or _ASIDE.search(text) or _LIKENED.search(text):
        return True
    off = _OFF_TO.match(text)
    return off is not None and off[1].lower() in lx.VERBS


#: Praise of the user's: "Your English is great", "your plan sounds really good".
_PRAISE = re.compile(
    r"^your\s+(?:[\w'-]+\s+){1,3}(?:is|are|looks?|sounds?)\s+(?:really\s+|very\s+|so\s+)?"
    r"(?:great|lovely|good|fine|excellent|perfect|amazing|brilliant|impressive|fantastic)\b",
    re.I,
)


def _stands_before(before: str) -> bool:
    """Whether ``before``, what a clause says before a comma and what follows it, says
    something of its own: four words or more ("we've decided to stop doing the panto, ..."),
    not an opener ("Honestly, I'm exhausted")."""
    head, comma, _ = before.rpartition(",")
    return bool(comma) and len(WORD.findall(head)) >= 4


def _access_code(text: str) -> bool:
    """Whether ``text`` tells the digits that open something: a PIN, a door, key-safe or alarm
    code, a combination ("the keypad on the back door is 7 3 9 1", "safe combination is
    3-18-27"). A thing that opens, as a word of its own (not "code freeze"), then within a few
    words a group of at least three digits that is not a time, an amount or a measure.
    "Alarm's 5831", "PIN's 2681": the noun's "'s" is "is"."""
    text = re.sub(r"(?<=\w)'s\b", " is", text)
    for m in _ACCESS_NOUN.finditer(text):
        after = text[m.end() : m.end() + 60]
        nxt = re.match(r"^\s+([a-z]+)\b", after)
        # "code freeze", "alarm clock": a compound, not what opens; but "the lockbox with the
        # paddle keys is ...", "the safe behind the desk opens with ...": the thing, then
        # where or which it is
        # Where the noun names the code itself ("door code", "PIN"), what follows says what
        # became of it ("the door code changed today, it's ..."), not a compound.
        compound = nxt is not None and nxt[1] not in _PLACE_WORDS
        compound = compound and not _CODE_ITSELF.fullmatch(m[0])
        if compound and not re.match(r"^\s+(?:code|codes|number|combination|pin)\b", after, re.I):
            continue
        if _code_digits(after):
            return True
    return False


def _code_digits(text: str) -> bool:
    """Whether ``text`` holds digits a code could be: a group of at least three (with a letter
    or two around them too: "C2580X") that is not a time, an amount, a measure, a year or a
    room ("painted in 2024", "room 104", "£250"), digits read out one by one ("nine four nine
    four zero"), or a dial's turns ("27 left 11 right 5 left")."""
    found = (*_DIGITS.finditer(text), *_LETTERED_CODE.finditer(text))
    for d in found:
        lead = text[max(0, d.start() - 1) : d.start()]
        tail = text[d.end() : d.end() + 4].lower()
        if lead in "£$€#" and lead:
            continue
        if re.search(
            r"\b(?:in|since|from|by|until|of|before|after|at|year|room|unit)\s$",
            text[: d.start()],
            re.I,
        ):
            continue  # "painted in 2024", "room 104", "opens at 0730": not a code
        if re.match(r"^\s?(?:am|pm|%|k\b|st\b|nd\b|rd\b|th\b|kg|km|m\b|mm|cm)", tail):
            continue
        if sum(c.isdigit() for c in d.group(0)) >= 3:
            return True
    return bool(_SPELLED_DIGITS.search(text) or _DIAL_TURNS.search(text))


_ACCESS_NOUN = lx.phrases(lx.ACCESS_NOUNS)
#: An access noun that is the code itself, not the thing it opens nor a bare "code".
_CODE_ITSELF = re.compile(r"\w+\s+(?:code|pin|combination)|pins?|passcode|combination|combo", re.I)
#: Words after an access noun that say which one or where it is, not a compound.
_PLACE_WORDS = lx.words(
    "is are was were for to of on at in with by behind near beside outside inside under below "
    "above upstairs downstairs next that which where we you i opens unlocks"
)
_DIGITS = re.compile(r"(?<![\w.:/,])\d(?:[ -]?\d){2,9}(?![\w:.,]?\d)")
_DIGIT_WORD = r"(?:zero|oh|nought|one|two|three|four|five|six|seven|eight|nine)"
#: Digits read out one by one, three or more in a row: "seven seven one nine two". A number
#: said as words ("twenty five", "two or three") is not a run of single digits.
_SPELLED_DIGITS = re.compile(rf"\b{_DIGIT_WORD}(?:[\s-]+{_DIGIT_WORD}){{2,}}\b", re.I)
#: A keypad code with letters in it: "C2580X", "A4471", "7391B".
_LETTERED_CODE = re.compile(
    r"(?<![\w.:/,-])(?:[A-Za-z]{1,2}\d{3,8}[A-Za-z]?|\d{3,8}(?![KMGT]B?\b)[A-Z])(?![\w-])"
)
#: A dial's combination, each number with the way to turn: "27 left 11 right 5 left", "L27 R11
#: L5", "30 clockwise then 12 anticlockwise".
_TURN = r"(?:left|right|(?-i:L|R)|clockwise|anti-?clockwise|counter-?clockwise|cw|ccw)"
_DIAL_TURNS = re.compile(
    rf"\b(?:\d{{1,2}}\s*{_TURN}|{_TURN}\s*\d{{1,2}})\b(?:[\s,-]+(?:then\s+)?"
    rf"(?:\d{{1,2}}\s*{_TURN}|{_TURN}\s*\d{{1,2}})\b){{1,}}",
    re.I,
)


#: A value that looks made to be secret: letters and digits mixed, eight characters or more,
#: in one word ("Kestrel77bay", "Teal_Otter_91"), or a base32 seed ("KRSXG5CTMVRXEZLU").
_SECRET_CHARS = r"[A-Za-z0-9_!@#$%^&*+-]"
_SECRET_VALUE = (
    rf"(?:(?=[^\s]*\d)(?=[^\s]*[A-Za-z]){_SECRET_CHARS}{{8,}}|(?-i:[A-Z2-7]{{16,}}))"
    r"(?![\w@.]*[\w@])"
)
#: A secret's name, up to two more words ("wifi key", "token seed", "admin pass"), then its
#: value with or without "is", "it's", a comma or a colon: "the pw is ...", "pass Teal_Otter_91",
#: "the till login, it's ...", "uses an API key, ab_live_..."; or up to five
#: words that say whose it is before "is" ("the API key she gave me is ..."), or up to ten
#: before a colon, which nothing else in a sentence of words ends ("pass for the booking
#: portal: ...", "the API key in case the web person needs it: ...").
_NAMED_VALUE = re.compile(
    rf"\b(?:{_SECRET_NOUN.pattern}|pw|pwd|pass|key|seed)\b(?:(?:\s+[A-Za-z]+){{0,2}}?"
    rf"(?:\s*(?:\bis\b|\bwas\b|,\s*it(?:'s|\s+is)|[:=,])\s*|\s+)|(?:\s+[A-Za-z']+){{1,5}}?\s+(?:is|was)\s+"
    rf"|(?:\s+[A-Za-z']+){{1,10}}?\s*:\s*)"
    rf"(?P<value>{_SECRET_VALUE})",
    re.I,
)
#: A network's code given after its name ("wifi is BoatClub-Guest and the code is reg4tta2025"):
#: there "code" is the password.
_NETWORK_CODE = re.compile(
    rf"\b(?:wi-?fi|router|network|hotspot|broadband)\b[^.?!]{{0,60}}?\b(?:code|key)\b"
    rf"\s*(?:\bis\b|\bwas\b|[:=])?\s*(?P<value>{_SECRET_VALUE})",
    re.I,
)
#: A value shaped like a password made by a person: upper and lower case letters and a digit,
#: ten characters or more, in one word ("WiganPier1906!Mo"). Beside a secret's name anywhere in
#: the message, it is that secret, whatever the clause that holds it says.
_PASSWORD_SHAPED = re.compile(
    rf"(?<![\w@./:])(?=[^\s]*\d)(?=[^\s]*[a-z])(?=[^\s]*[A-Z]){_SECRET_CHARS}{{10,}}"
    r"(?![\w@/]|\.\w)"
)


def secret_values(message: str) -> list[tuple[int, int]]:
    """Where a message that names a secret (a password, a key, a token: :data:`_SECRET_NOUN`)
    holds a value shaped like one (:data:`_PASSWORD_SHAPED`): "set up a password ... she
    keeps forgetting it, it's WiganPier1906!Mo". The clause that holds it is not kept, though
    it names no secret itself."""
    if not _SECRET_NOUN.search(message):
        return []
    return [(m.start(), m.end()) for m in _PASSWORD_SHAPED.finditer(message)]


#: A login written as a pair, a name then a slash then a value made to be secret: "the club
#: laptop is admin / ParryRiposte77", "wifi is SfogliaGuest / rigatoni-4419".
_LOGIN_PAIR = re.compile(rf"(?<!\S)[\w.@-]{{3,}}\s*/\s*{_SECRET_VALUE}")


#: The speaker takes back what they just said, so that it is not kept: "his Medicare number is
#: ..., wait, actually don't save that", "don't write that down", "forget I said that".
_WITHHELD = re.compile(
    r"\b(?:(?:don'?t|dont|do not|please don'?t|pls don'?t)\s+(?:save|store|keep|write|note"
    r"|record|remember|log)\s+(?:that|this|it|them|those)(?:\s+(?:down|anywhere|one))?"
    r"(?:\s+(?:in|to)\s+(?:memory|your\s+notes|the\s+notes|your\s+memory))?\s*(?:[.!,;)]|$)"
    r"|forget\s+(?:i\s+said\s+that|what\s+i\s+(?:just\s+)?said|that\s+last\s+bit)"
    r"|(?:that'?s|it'?s)\s+not\s+for\s+(?:memory|your\s+notes|the\s+notes))",
    re.I,
)
#: A person's identity number, told with its value: "his Medicare number is 1EG4-TE5-MK73", "NI
#: number QQ 12 34 56 C", "passport no. 533412876". Not an account or a member number, which
#: the people who tell them mean to be kept.
_IDENTITY_NUMBER = re.compile(
    r"\b(?:(?:medicare|medicaid|nhs|social\s+security|national\s+insurance|ni|passport"
    r"|driving\s+licen[cs]e|driver'?s\s+licen[cs]e|tax\s+id|health\s+card)"
    r"\s+(?:number|no\.?|#)|ssn)\s*(?:is|was|:|=)?\s*"
    r"(?=[A-Z0-9][A-Z0-9 -]{5,16}\b)(?=(?:[A-Z -]*\d){3})",
    re.I,
)


#: A bank account's number told with its value ("my account is 40-12-76 / 88123390", "our
#: savings account: 0412 5588 19"): six digits or more after the account's name.
_BANK_ACCOUNT = re.compile(
    r"\b(?:my|our|his|her|their|bank|savings|checking|chequing|current|business)\s+"
    r"(?:bank\s+)?account\s*(?:is|was|:|=|no\.?|#)?\s*(?=(?:[\s/-]*\d){6})\d",
    re.I,
)
#: A reference that opens a booking or a policy to whoever quotes it, told with its value:
#: "booking ref X7QP2M", "policy SSR-7731902", "confirmation number 88412203". The value is
#: written in capitals and digits, with a digit in it ("policy renews in May" is no reference).
_REFERENCE = re.compile(
    r"\b(?:(?:booking|confirmation|reservation)\s+(?:ref(?:erence)?|code|number|no\.?|#)"
    r"|policy(?:\s+(?:number|no\.?|#))?|pnr)\s*(?:is|was|:|=)?\s*"
    r"(?-i:(?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{4,15})(?![\w-])",
    re.I,
)


def withholds(text: str, alone: bool = False) -> bool:
    """Whether ``text`` asks that what was just said not be kept ("wait, actually don't save
    that", "don't write that down"): the clause it is in is not kept, nor, when it says
    nothing else (``alone``: "Actually don't write that down."), the sentence before it."""
    m = _WITHHELD.search(text)
    if m is None or not alone:
        return m is not None
    rest = re.sub(
        r"\b(?:oh|ah|wait|actually|sorry|no|please|pls|and|but)\b",
        " ",
        text[: m.start()],
        flags=re.I,
    )
    return not WORD.findall(rest + " " + text[m.end() :])


def _secret_talk(text: str) -> bool:
    if _access_code(text) or _LOGIN_PAIR.search(text) or _NETWORK_CODE.search(text):
        return True
    if withholds(text) or _IDENTITY_NUMBER.search(text):
        return True
    if _BANK_ACCOUNT.search(text) or _REFERENCE.search(text):
        return True
    for m in _NAMED_VALUE.finditer(text):
        if not _SECRET_REFERENCE.search(m[0]):
            return True  # "Our password manager is 1Password" names where secrets are kept
    # ("password's lavender with a capital L": the noun's "'s" is "is")
    text = re.sub(
        r"\b(password|passcode|passphrase|login|token|secret)'s\b", r"\1 is", text, flags=re.I
    )
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


def asks_secret(question: str) -> bool:
    """Whether ``question`` asks for a secret or a code ("What's the login?", "What's the
    alarm code?"; not "when does the gate open?")."""
    code = re.search(r"\b(?:code|pin|combination|combo|passcode)\b", question, re.I)
    return bool(_SECRET_NOUN.search(question) or code)


def _asked_for_secret(question: str, answer: str) -> bool:
    """Whether ``answer`` gives what ``question`` asked for, when that is a secret or a code
    ("What's the login?" - "its kirsty and Lavender22"; "What's the alarm code?" - "2580 then
    press set"): a value with a digit in it."""
    return asks_secret(question) and bool(re.search(r"\d", answer))


def _imperative(text: str) -> bool:
    words = text.lower().split(" ")
    if re.match(r"(?:quit|stop)\s+[a-z]+ing\b", text, re.I):
        return True  # "Quit apologizing every time": an order, not someone who quit
    if words[0].strip(",") not in lx.IMPERATIVES:
        return False
    if any(w in AUX for w in words[1:4]):
        return False  # "Book three is in third person": a noun, not an order
    # "Use of ..." and "Keep in mind ..." are not orders; "Note: x" was cleaned already.
    return not re.match(r"^(?:use of|keep in mind)\b", text, re.I)


# A person's full name (or a title and a name), then at least two things said of them, listed.
_PROFILE = re.compile(
    r"^(?:(?:mr|mrs|ms|miss|dr)\.?\s+)?(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+)){0,2},"
    r"\s*[^,]+(?:,\s*[^,]+)+$",
    re.I,
)


def _profile(text: str) -> bool:
    """Whether ``text`` is a note about a person: their name, then what they are, listed with
    no clause ("Albert Fenn, 88, dementia, 4 calls a day (8am, 12, 5pm, 8pm)": no auxiliary,
    no one doing anything); not a greeting ("Thanks Tom, great, see you")."""
    if not _PROFILE.match(text) or text.split(" ", 1)[0] in lx.NAME_STOP:
        return False
    words = [w.lower() for w in WORD.findall(re.sub(r"\([^)]*\)", " ", text))]
    clause = AUX | lx.PRONOUN_SUBJECTS | {"i", "i'm", "im", "we're", "he's", "she's", "they're"}
    return len(words) >= 4 and not clause & set(words)


#: A line of a roster: a name, a dash, a colon or a bracket, then what they do ("Brenda
#: Kowalski - office mgr, does dispatch + billing", "Cody Barnes: installer").
_ROSTER = re.compile(
    r"^(?P<n>(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+)){0,2})\s*(?:[-\u2013\u2014:]\s+|\(\s*)"
    r"(?P<r>[^()]+?)\)?\s*$"
)


def _roster_line(text: str) -> bool:
    """Whether ``text`` is a line of a roster: a name, then after a dash, a colon or in
    brackets, the role they have ("Brenda Kowalski - office mgr, does dispatch + billing")."""
    m = _ROSTER.match(text)
    return bool(m and m["n"].split(" ", 1)[0] not in lx.NAME_STOP and ROLE.search(m["r"]))


def _told_to(low: str) -> bool:
    """Whether an assistant's sentence (``low``, in lower case) opens with a verb in its
    plain form and what it acts on ("rotate it ...", "change the password ..."): advice to
    the user, not a fact of theirs."""
    first, _, rest = low.partition(" ")
    return first in lx.VERBS and rest.split(" ", 1)[0] in _ACTED_ON


_ACTED_ON = lx.words("it them the your this that these those")


# What the user sets before an order to the agent: when they ask for something ("whenever I
# ask for a quote, add VAT"), or what the order is about ("for reports always give ...").
_ASKING = re.compile(
    r"^(?:when|whenever|if|every\s+time|each\s+time|any\s*time|once)\s+(?:(?:i|we)\s+"
    r"(?:ask|want|need|request|say|send|give|type|paste|share|mention|forward|tell|get)\b"
    # or when the agent does its work: "when replying to customers, always open with ..."
    r"|(?:replying|writing|answering|drafting|emailing|messaging|texting)\b)",
    re.I,
)
_NOT_A_PERSON = r"(?!(?:i|we|you|he|she|they|it|everyone|nobody)\b)"
_ABOUT = re.compile(
    rf"^(?:for|in|on|with|about)\s+(?:{_NOT_A_PERSON}[\w'-]+\s+){{0,3}}?"
    rf"{_NOT_A_PERSON}[\w'-]+(?:,\s*|\s+)(?=(?:always|never|only|just)\s)",
    re.I,
)
_ORDER = re.compile(
    r"(?:,\s*|\b(?:just|always|never|only|then)\s+)(?:(?:just|always|never|only|then|please)"
    r"\s+)*([a-z']+)",
    re.I,
)


_PRACTICE = re.compile(
    r"^(?P<rule>(?:always|never|don't|do not)\s+(?:ever\s+)?)?(?P<v>[a-z-]+)\b", re.I
)
_ANYONES_YOU = re.compile(
    r"\byou\s+(?:have to|need to|must|'ve got to|have got to|can't|cannot)\s+(?P<v>[a-z-]+)\b",
    re.I,
)
#: When a bare order is a standing practice: "clean it every service", "untick it at the start
#: of every shift", not "check my calendar".
_EACH_TIME = re.compile(
    r"\b(?:every|each|whenever|at the (?:start|end) of)\b"
    r"|\b(?:before|after)\s+(?:every|each|any)\b",
    re.I,
)
#: Who an order to the agent is for, or what it makes: the agent's own words.
_TO_THE_AGENT = re.compile(
    r"\b(?:you|your|yours|me|reply|replies|answer|answers|message|messages|draft|drafts|"
    r"write|summary|summaries|emails?|texts?|notes?|reminders?)\b",
    re.I,
)


def _own_practice(text: str) -> bool:
    """Whether ``text`` is a rule of the user's own work, said as an order to themselves
    ("Never spray Primo Maxx when it's going to be over 25 degrees", "Clean it every
    service") or to anyone ("in the Whole Game System you have to accept within 48 hours"):
    always or never, or each time, with a verb of handling things
    (:data:`.lexicon.PRACTICE_VERBS`), and nothing of the agent's words or of the listener."""
    m = _PRACTICE.match(text)
    if m is None or m["v"].lower() not in lx.PRACTICE_VERBS:
        m = _ANYONES_YOU.search(text)
    elif not m["rule"] and not _EACH_TIME.search(text):
        return False  # "check the van": a request of the moment
    if m is None or m["v"].lower() not in lx.PRACTICE_VERBS:
        return False
    # "in the Whole Game System you have to accept within 48 hours": anyone's "you"
    return not _TO_THE_AGENT.search(text[: m.start()] + " " + text[m.end() :])


def _ordered(text: str) -> bool:
    """Whether ``text`` is an order to the agent after what sets it up: a request of the
    user's own (:data:`_ASKING`) or a topic (:data:`_ABOUT`), then an imperative."""
    lead = _ASKING.match(text) or _ABOUT.match(text)
    if lead is None:
        return False
    if lead.re is _ABOUT:
        # "always give ...", "just send ...", "only use ...".
        return _imperative(re.sub(r"^(?:just|only)\s+", "", text[lead.end() :], flags=re.I))
    order = _ORDER.search(text, lead.end())
    return order is not None and order[1].lower() in lx.IMPERATIVES


#: A comparison with what the speaker thought ("cheaper than I think"): no hedge.
_COMPARED = re.compile(r"\b(?:than|as)\s+(?:i|we)\s+(?:think|thought|expected|imagined)\b", re.I)


#: A change of mind said and nothing more ("changed my mind on the shirts"): what changed is
#: in what follows, which updates what it names; on its own it holds no fact.
#: Said by the user of a thing ("changed my mind on Dallas"), it takes that thing back, as
#: "scrap the EV plan" does; what follows may take its place.
_MIND_CHANGED = re.compile(
    r"^(?:(?:ok|okay|so|and|actually|right|well)[\s,]+)?"
    r"(?:i've\s+|we've\s+|i\s+|we\s+|i\s+have\s+|we\s+have\s+)?"
    r"(?:changed\s+(?:my|our)\s+minds?|had\s+a\s+change\s+of\s+heart|change\s+of\s+plans?)"
    r"(?:\s+(?:on|about|re|regarding|with)\s+(?:the\s+|our\s+|my\s+)?"
    r"(?P<v>(?!it\b|that\b|this\b|them\b)[\w][\w+.'&-]*(?:\s+[\w][\w+.'&-]*){0,3}))?"
    r"[\s.!,;:-]*$",
    re.I,
)


def skip_reason(text: str, role: str, said: str = "") -> str | None:
    """Why memory must not hold ``text``, or None. ``said`` is the clause before it was
    cleaned, when a lead taken off it ("today: ...") told the time it speaks of."""
    if max(len(piece) for piece in re.split(r"(?<=[.!?])\s+", text)) > MAX_CHARS:
        return "too long"
    if _MIND_CHANGED.match(text):
        return "reaction"
    low = text.lower()
    if text.rstrip().endswith("?") or _QUESTION.match(low) or _ASKS.search(text):
        return "question"
    if _is_small_talk(text):
        return "small talk"
    if _secret_talk(text):
        return "secret"
    if text.rstrip().endswith(":") and len(WORD.findall(text)) <= 4:
        return "no durable fact"  # "my guys:": what a list that follows is, not a fact
    if role != "user" and _PRAISE.match(text):
        return "reaction"  # the assistant's "Your English is great, Kris"
    lesson = _lesson(text)
    if not lesson and _chat(text):
        return "small talk"
    if _REACTION.search(text) or _REACTION_OPENER.match(text):
        return "reaction"
    guess = _GUESS.search(text)
    # ("lines must be learned by 4 November": what must be done, not a guess)
    done = re.match(rf"\s+(?P<v>{_DID})\b", text[guess.end() :], re.I) if guess else None
    bound = done is not None and done["v"].lower() not in lx.FEELINGS  # not "Jo must be tired"
    if guess and not bound and not re.match(r"^(?:the|our|my|all|every|each|a|an)\b", low):
        return "reaction"
    if not lesson:
        if _TRANSIENT.search(text) or _COUNTDOWN.search(text) or _tally(text, said or text):
            return "transient"
        if _SHARE_DONE.search(text):
            return "transient"  # "the new website is 70% finished"
        done = _JUST_DONE.match(text)
        if done and not _CHANGED.fullmatch(done["v"]):
            # "just unmoulded four loaves of the oatmeal batch"; not "just moved to Leeds"
            return "transient"
        if _WORK_DONE.match(clean(text)):
            return "transient"
        through = _THROUGH.search(text)
        # "halfway through the Camino": a name after it may be what the fact is about; a month
        # ("through the May issue", "as far as March") is not a name, nor where the work is
        # ("halfway through the rope change at Mell Square").
        rest = CALENDAR.sub("", text[through.end() :]) if through else ""
        rest = re.split(r"\s(?:at|in|on|for|with|by|near)\s", rest, maxsplit=1)[0]
        if through and (not re.search(r"(?-i:\b[A-Z][a-z])", rest) or _TASK.match(rest)):
            return "transient"
        if _SO_FAR_INTO.search(text):
            return "transient"  # "about 30 boards into checking the hand records"
        first = low.split(" ", 1)[0].strip(",")
        gerund = first.endswith("ing") and len(first) > 4 and first not in lx.NOT_GERUNDS
        following = [*low.split(" "), ""][1].strip(",.")
        # "rerunning the pipeline", "sending the proposal now"; not "Billing disputes go to
        # Ingrid in finance" or "Staging database runs Postgres 16" (a noun, then its verb).
        doing = gerund and (not following or following in _OBJECT_STARTS or following[:1].isdigit())
        # "doing hut 9 now": a thing named by its number; not "charging point 4 is broken"
        numbered = re.match(r"^\w+\s+(?P<noun>[a-z]+)\s+\d+\b,?(?:\s+(?P<next>[\w']+))?", low)
        rough = lx.STOP_WORDS | {"around", "roughly", "nearly", "almost", "over", "under"}
        numbered = numbered if numbered and numbered["noun"] not in rough else None
        doing = doing or (gerund and numbered is not None and numbered["next"] not in AUX)
        doing = doing and not _SWITCHING.match(low)  # "going over to wylex boards now": a change
        doing = doing and first not in lx.ENDING_GERUNDS  # "scrapping the Saturday line runs"
        doing = doing and not _IN_A_MONTH.search(text)  # "doing my raising test in October"
        if doing and (_NOW.search(text) or len(WORD.findall(text)) <= 6):
            return "transient"
    if role == "user" and _own_practice(text):
        return None  # "Always check the goal nets are pegged down": how they work
    if _REQUEST.match(low) or _imperative(text) or re.search(r"\bplease\b", low):
        return "request" if role == "user" else "advice"
    if role != "user" and _told_to(low):
        return "advice"  # "rotate it in the Stripe dashboard to be safe"
    forward = _FORWARD.match(text)
    if forward and role == "user":
        rest = text[forward.end() :].lstrip(" ,")
        if _imperative(rest) or re.search(r"\b(?:you|your)\b", rest, re.I):
            return "behavioural rule"
    if not lesson and (_RULE.search(text) or (role == "user" and _ordered(text))):
        return "behavioural rule"
    if not lesson and _HEDGE.search(_COMPARED.sub("", text)):
        return "hedged"
    # (in the sentence the speaker opens: "we got the grant. Has to be spent by 31 March" is
    # what the grant asks, not a to-do)
    opening = re.split(r"(?<=[.!?])\s+", text, maxsplit=1)[0]
    if re.match(r"^(?:i|we|i'm|we're|i've|we've)\b", low) and _TODO.search(opening):
        return "to-do"
    return None


# --- durability -----------------------------------------------------------------------------

_QUANTIFIERS = lx.words("all every each both some most any")
# A standing rule over a set of things: "every game has a checklist card", "now all the premium
# shelf games are sleeved" (not a past tense: "all the kids loved it").
_RULE_OVER_SET = re.compile(
    r"^(?:now\s+)?(?:every|each|all(?:\s+(?:the|our|my))?)\s+(?:[a-z-]+\s+){1,3}?"
    r"(?:is|are|has|have|goes|go|gets|get|needs|need|must|stays|stay|sits|sit)\b",
    re.I,
)
# A change of what is used, said in -ing: "going over to wylex boards now", "moving to Xero".
_SWITCHING = re.compile(
    r"^(?:going|moving|switching|changing|swapping)\s+(?:over\s+|across\s+)?to\b", re.I
)
_EPISODE = lx.phrases(lx.EPISODE)
_NOW_ON = re.compile(r"\bnow\b", re.I)
_CHANGED = lx.phrases([*lx.CHANGE_VERBS, *lx.SWITCH_VERBS, *lx.RETIRE_VERBS])


#: A day something starts from ("from today", "since last night"): it outlasts the day.
_STARTING = re.compile(rf"\b(?:from|since|as of|starting|effective)\s+(?:{_EPISODE.pattern})", re.I)


def _lasting(text: str) -> bool:
    """Whether ``text`` says something that outlasts the day: a decision, a plan or a
    deadline, a rule of the place, what holds now, or a value that is not the day itself."""
    cued = any(c.search(text) for c in (_DECISION, _PROJECT, _POLICY, _NOW_ON))
    return cued or any(m.kind not in ("date", "weekday") for m in measures(text))


_OBJECT_STARTS = lx.words(
    "the a an my our your their his her it this that these those some to on at in for back now "
    "up out off down with through over"
)
_NOW = re.compile(r"\b(?:now|back|so far|today|tonight|right now|later)\b", re.I)
_PROGRESSIVE = re.compile(
    r"^(?:i'm|i am|we're|we are)\s+(?:\w+ly\s+|just\s+|still\s+)?(\w+ing)\b", re.I
)
#: What someone is partway through is a task, not a named work of theirs: a doing ("a third
#: of the way through labelling the Cascade bottles"), or a name that only says which one
#: ("halfway through the Range Rover valet"); not "halfway through the Camino".
_TASK = re.compile(
    r"^\s*(?:the\s+|my\s+|our\s+)?(?:[a-z]+ing\b|(?:(?-i:[A-Z][\w'-]*)\s+)+(?!(?:and|the|for|of|by)\b)(?-i:[a-z]{3,})\b)",
    re.I,
)
#: How many of something a task has got through: "30 boards into checking the records".
_SO_FAR_INTO = re.compile(
    r"\b\d+\s+[a-z]+\s+into\s+[a-z]+ing\b"
    # "we are now at 212 of 420", "Giulia is at fraction 12 of 40": how far, of a whole
    r"|\b(?:is|are|am|'m|'re|'s)\s+(?:now\s+|only\s+|already\s+)?(?:at|on|up\s+to)\s+"
    r"(?:[a-z]+\s+)?\d+\s+(?:of|out\s+of)\s+\d+\b",
    re.I,
)
#: When something starts or ends from now on: "we're starting at 10 from now on", not "I'm
#: starting the backup" or "we're finishing at 5 tomorrow".
_SCHEDULE = re.compile(
    r"^(?:i'm|i am|we're|we are)\s+(?:starting|finishing)\s+(?:at|from)\s+\d"
    r"(?!.*\b(?:tomorrow|tonight|today)\b)",
    re.I,
)
#: How someone is at the moment: "he's fine now", "she's ok now", "they're much better now".
_WELL_NOW = re.compile(
    r"(?:\b(?:is|are)|'s|'re)\s+(?:\w+\s+){0,2}(?:fine|ok|okay|better|well|grand|alright)\b"
    r"(?:\s+\w+){0,3}?\s+now\b",
    re.I,
)
_STATE_NOW = re.compile(
    r"\b(?:is|are|was|were)\s+(?:\w+\s+){0,2}(?:green|red|down|up|broken|done|slow|fast|"
    r"terrible|great|fine|ok|okay|packed|busy|quiet|full|empty|stuck|back)\b",
    re.I,
)


def _durable(
    text: str,
    kind: str,
    role: str,
    lesson: bool,
    values: frozenset[str],
    told: frozenset[str] = frozenset(),
) -> bool:
    """Whether a clause that passed the filters states something worth keeping (``told``:
    see :func:`read`)."""
    low = text.lower()
    words = WORD.findall(text)
    content = [w for w in words if w.lower() not in lx.STOP_WORDS]
    if len(words) < (2 if kind in ("i", "implicit", "name") else 3) or not content:
        return False
    if _ONLY_FROM_NOW.match(low):
        return True  # "casks only from now on", "cold food only from now": what is done now
    if role == "user" and _NAMED_NOW.match(text):
        return True  # "now on Chudleys ferret, ordered direct": what is used now, named
    if lesson:
        # "Lesson learned the hard way", "A lesson from last winter": a label, the lesson is
        # what follows it
        return len(content) >= 3 and not _LESSON_LABEL.match(text)
    if role == "user" and listed_note(text):
        return True  # "Kit list for new dancers: white shirt, green baldrick, bell pads"
    first = re.sub(r"'(?:s|re|ll|ve|d)$", "", words[0].lower())
    determiner = first in _QUANTIFIERS and len(words) > 1 and words[1].lower() not in AUX
    # "IT runs the servers": the department, not "it"
    pronoun = first in lx.PRONOUN_SUBJECTS and not determiner and words[0] != "IT"
    # "BCA membership, which is our insurance, has to be renewed": the aside is not the head
    head = _RELATIVE_ASIDE.sub("", text).split(",", 1)[0].split(" ")
    contracted = re.search(r"'(?:s|re|ve|ll|d|m)$", head[0], re.I)  # "It's Dr. Menendez"
    # a pronoun and its verb after an opening phrase: "at weekends it's Dana and me"
    contracted = contracted or _PRONOUN_VERB.search(" ".join(head[1:]))
    # "The club van's a Transit minibus": a noun's "'s" before an article or a value is "is"
    contracted = contracted or _NOUN_IS.search(" ".join(head))
    labelled = _LABEL.match(text)  # "New parts supplier: Brandtmann Cycle Supply": X is Y
    # "Husband Rafael, kids Mila (9) and Joaquin (6)": people named with who they are.
    listed = (
        role == "user"
        and len(_NAMED_LATER.findall(text)) >= 2
        and len(content) >= 4
        and not re.search(r"\b(?:later|today|tonight|tomorrow|soon|now|yesterday)\b", low)
    )
    if kind in ("thing", "our", "name", "there") and not (
        contracted
        or has_verb(head[1:])
        or labelled
        or listed
        or priced(text, role)
        or priced(text, role, "date")
        or priced(text, role, "hours")  # "shop hours 6am to 5pm, sundays 6 till 12"
    ):
        return False  # "Coffee first, then the sprint review", "The login page"
    if role != "user":
        if _COMMON_WISDOM.search(text):
            return False  # "A common choice is 48 kHz", "Most growers prune in March": advice
        if re.search(r"\byou\b", low):
            return False  # "you said ...", "you'll need to ...": to the user, about them
        # The assistant's own doings ("Updated the bus time") and its replies to the user are
        # not facts; a statement about a thing (an environment fact it explains) is.
        if kind not in ("thing", "our", "name") or pronoun or past(first):
            return False
        said = {w.lower() for w in content}
        # (of someone or something named, with a verb: not "chalkboard price signs")
        theirs = kind == "name" and bool(told) and said <= told and has_verb(words[1:])
        return bool(_ENVIRONMENT.search(text) or values or theirs)
    listener = re.search(r"\b(?:you|your|yours|yourself)\b", low)
    if role == "user" and listener and not _own_practice(text):
        return False  # about the listener or the talk itself: "I'll let you know"
    if re.match(r"^(?:would|could|should|can|might|may|will|must)\b", low):
        return False  # "Would love to see it": a wish, no subject
    intends = re.match(r"^(?:i'll|i will|we'll|we will|i'm going to|we're going to)\b", low)
    if intends and not (values or _DECISION.search(text) or re.search(r"\binstead\b", low)):
        return False  # an intention: "I'll definitely get one"
    feeling = re.match(
        r"^\S+\s+(?:is|am|are|was|'m|'re|'s)?\s*(?:so |really |very |super |just |"
        r"totally |pretty |quite |feeling |definitely |still |also )*(\w+)",
        low,
    )
    if feeling and feeling.group(1) in lx.FEELINGS and not values:
        return False  # "John is excited to catch up", "I'm determined to ..."
    felt = re.match(r"^(?:so |really |very |super |just |totally |pretty |quite )*(\w+)", low)
    if kind == "implicit" and felt and felt.group(1) in lx.FEELINGS and not values:
        return False  # "excited to be here", said without its "I'm"
    gerund = first.endswith("ing") and first not in lx.NOT_GERUNDS and not values
    gerund = gerund and kind != "implicit"
    following = words[1].lower() if len(words) > 1 else ""
    if gerund and (following in _OBJECT_STARTS or re.search(r"\b(?:us|we|our)\b", low)):
        return False  # "Creating a place that feels safe is key": a truism, no one's fact
    # A comment after a comma ("..., it's cheaper") leans on the clause it follows, not on
    # something said elsewhere: the main clause is what must not lean.
    main = _main_clause(low)
    before, comma, after = main.partition(", ")
    if kind == "name" and comma:
        # "Lewis does all the maintenance, any repairs go to him": the one named before the
        # comma, sent things after it
        sent = re.sub(r"\b(?:go|goes|come|comes)\s+to\s+(?:him|her)\b", "", after)
        main = before + comma + sent
    if not values and re.search(r"\b(?:it|them|him|her|these|those)\b", main) and len(content) < 6:
        return False  # "we won it by a tight score": what "it" is was said elsewhere
    cues = _ENVIRONMENT, _PROJECT, _DECISION, _PERSONAL
    placed = _PLACED.match(text)  # "The router is in the hall closet": where a thing is
    if (
        kind == "thing"
        and not pronoun
        and not values
        and not placed
        and not any(c.search(text) for c in cues)
        and not (_POLICY.search(text) and not _MOMENT.search(text))
        and not _RULE_OVER_SET.match(low)
        and not (role == "user" and _own_practice(text))
        and not (role == "user" and _GOES_ON.search(text))
    ):
        # (but "every game has a checklist card", "all the premium games are sleeved": a
        # standing rule over a set of things)
        return False  # "Hard work pays off eventually", "A cozy nook is a must": no one's fact
    if kind == "thing" and pronoun:
        # "everything moved to Buildkite", "they moved the exam to January 23", "it's Dr.
        # Menendez": a pronoun subject is kept only when the clause names what it is about.
        named = re.match(r"^(?:it's|it is|he's|he is|she's|she is)\s+(?-i:[A-Z])", text, re.I)
        # "anything over 90 days goes to auction": a rule over a range of things, told by value
        every = first in ("everything", "everyone", "they", "anything", "anyone")
        return (every and bool(values)) or bool(named)
    recounted = kind == "thing" and _past_event(text) and not values
    if recounted and not (_PROJECT.search(text) or _DECISION.search(text)):
        return False  # "the waiting room was packed", "the fees got silly"; not "... approved"
    head_noun = re.sub(r"^(?:the|our) ", "", low).split(" ")[0]
    if kind == "thing" and head_noun in lx.TRANSIENT_SUBJECTS and _STATE_NOW.search(text):
        return False  # "the tests are green now"
    progressive = _PROGRESSIVE.match(text)
    # (but "we're switching to Northcot for the bricks, account set up today": a change)
    changing = progressive and _SWITCHING.match(text[progressive.start(1) :])
    # (nor "we're sending the canvas to TentCare from now": what is done from now on)
    from_now = re.search(r"\b(?:from now|going forward)\b", text, re.I)
    moment = _MOMENT.search(text) and not from_now
    if moment and ((progressive and not changing) or _STATE_NOW.search(text)):
        return False
    if (
        _EPISODE.search(_STARTING.sub("", text))
        and not _CHANGED.search(text)
        and not _lasting(text)
    ):
        return False  # "covered in soot today", "saw the first oystercatchers this morning"
    momentary = progressive and progressive.group(1).lower() in lx.MOMENTARY
    if momentary and not _SCHEDULE.match(text) and not from_now:
        return False
    if not values and _UNCHANGED.match(low):
        return False  # "Seller's fee unchanged", "the rest is the same": no value of its own
    if re.search(r"\b(?:it|that|this|them)\s*$", low) and len(content) < 4:
        return False  # "I love it", "we like that": no object of their own
    liked = re.search(
        r"\b(?:love|loves|like|likes|hate|hates|enjoy|enjoys)\s+(?:it|that|this)\b", low
    )
    before = low.partition(", ")[0]
    if liked and not (liked.start() > len(before) and has_verb(before.split(" ")[1:])):
        # "I love it when that happens"; but "we take cards on a Square reader now, customers
        # love it" says what it says before the comment
        return False
    return len(content) >= (1 if kind in ("i", "implicit", "we") else 2)


#: A thing that goes on as it was ("tubing lane stays open", "the quiz and brunch stay"): said
#: beside something that ended, what is still true.
_GOES_ON = re.compile(
    r"\b(?:stays?|remains?|is still|are still)\s+(?:open|on|running|available|going)\b"
    r"|\b(?:carr(?:y|ies) on|continues?|stays?)\s*[.!]?$",
    re.I,
)


#: "now on Chudleys ferret", "maggots now from Trentside Bait Farm": a named thing used now,
#: said without a verb.
_NAMED_NOW = re.compile(
    r"^(?:(?:and|so)\s+)?(?:[a-z][\w'-]*\s+){0,3}?now\s+(?:on|with|using|through|from)\s+"
    r"(?-i:[A-Z])"
    # "rod repairs to RodFix in Lincoln now"
    r"|^(?:[a-z][\w'-]*\s+){1,3}(?:to|from|with|through|via)\s+(?-i:[A-Z])[^,;]*\bnow\s*[.!]*$",
    re.I,
)
#: What alone is done from now on, said without a verb ("casks only from now on", "just
#: acoustic from now", "shopify only now").
_ONLY_FROM_NOW = re.compile(
    r"^(?!no\b)(?:[\w' -]{2,40}?\bonly|(?i:just)\s+(?![a-z]+ing\b)[\w' -]{2,40}?)\s+"
    r"(?:from now(?: on)?|from today|going forward|these days|now)\s*[.!]*$"
)


#: A month something is planned for: what is being done then is a plan, not progress.
_IN_A_MONTH = re.compile(rf"\b(?:in|by|until|till)\s+(?:{MONTH.pattern})", re.I)


#: Said of a price of the moment or of one purchase, not of what something costs.
_ONCE = re.compile(r"\b(?:yesterday|last\s+(?:night|week)|so far|in total|total)\b", re.I)


def priced(text: str, role: str, kind: str = "money") -> bool:
    """Whether the user names something and then what it costs, with no verb ("tickets 9
    euros, members 6", "full board £160 a week", "night rate now £110"): a price list, kept
    like "X costs Y". A price that opens the clause ("£40, a bargain") names nothing; one of
    the moment ("lunch £12 today") or a sum ("£300 so far") is no price of a thing, nor is what
    someone did ("paid the plumber, £80", "saving up for a bike, about £600"). With ``kind``
    "date", the same of a date: "Beer festival in the garden 22 to 24 August"; with "hours",
    of opening hours: "shop hours 6am to 5pm"."""
    if role != "user" or _MOMENT.search(text) or _ONCE.search(text):
        return False
    money = next((m for m in measures(text) if m.kind == kind), None)
    if money is None:
        return False
    words = [w.lower() for w in WORD.findall(text[: text.find(money.said)])]
    doing = len(words) > 1 and words[0].endswith("ing") and words[1] in _OBJECT_STARTS
    if doing or any(past(w) for w in words):
        return False
    return any(w not in lx.STOP_WORDS and not w[0].isdigit() for w in words)


_COUNT = rf"(?:\d[\d,.]*|{'|'.join(sorted(lx.NUMBER_WORDS - {'half', 'dozen'}))})"
#: A past tense or a participle, as a pattern: "-ed", or one of the irregular ones.
_DID = (
    rf"(?:[a-z]{{3,}}ed|{'|'.join(sorted(lx.IRREGULAR_PAST))}|done|written|seen|taken|given"
    r"|eaten|driven|ridden|broken|chosen|sewn|sown|shown|grown|drawn|thrown|mown|begun|sung|spun)"
)
#: What the assistant says of how things commonly are, beside the user's question ("A common
#: approach is ...", "Many shops close on Mondays", "e.g. from ..."): advice, not the user's
#: world.
_COMMON_WISDOM = re.compile(
    r"^(?:a\s+)?(?:common|typical|popular|standard)\b|\b(?:is|are)\s+(?:a\s+)?(?:common|"
    r"typical|popular|standard)\b|^(?:many|most|several|some)\s+(?!of\s+(?:our|my|your)\b)"
    r"|\be\.g\.|\bcould work\b|\bis usually right\b",
    re.I,
)
#: Only that something did not change ("seller's fee unchanged", "the rest is the same"): a
#: few words of subject and no verb of their own, not "X handles it now, same rota as before".
_UNCHANGED = re.compile(
    r"^(?:[\w'-]+\s+){1,4}?(?:is\s+|are\s+|stays\s+|stay\s+|remains?\s+)?(?:unchanged|"
    r"(?:the\s+)?same|as before)$"
)
_LESSON_LABEL = re.compile(
    r"^(?:a\s+|another\s+|one\s+|the\s+)?lessons?\s+(?:learn(?:ed|t)(?:\s+the\s+hard\s+way)?|from\s+[^,;:]*"
    r"|for\s+next\s+time|for\s+the\s+future)$",
    re.I,
)
# What is left of a task or done of it: "three partitions left", "40 of 60 laptops reimaged",
# "four more to go, then the labels", "six boxes done", "the second coat is half done".
_COUNTDOWN = re.compile(
    rf"\b{_COUNT}\s+(?:more\s+)?[a-z]+\s+(?:left|to go)\s*$"
    rf"|\b{_COUNT}\s+(?:more\s+)?(?:[a-z]+\s+)?to\s+go\b"
    rf"|\b{_COUNT}\s+[a-z]+\s+(?:done|finished|completed)\b|\bhalf\s+(?:done|finished)\b"
    r"|\b\d+\s+(?:out\s+)?of\s+(?:the\s+)?\d+\s+[a-z]+\s+(?:done|finished|\w+ed)\b"
    # "two days behind on the fit-out" ("still 4 seats", "48 hours ahead" are values)
    rf"|\b{_COUNT}\s+[a-z]+\s+behind\b"
    # "first fix done", "3 more waiting for parts", "still the stitching on the lands to do"
    r"|\b(?:first|second|third|final|last)\s+[a-z]+\s+(?:done|finished|completed)\b"
    rf"|\b{_COUNT}\s+more\s+(?:waiting|outstanding|pending)\b"
    r"|\bstill\b[^.;]{0,40}\bto do\b"
    # "5 weeks into the 12 week Egypt topic"
    rf"|\b{_COUNT}\s+(?:days?|weeks?|months?|hours?)\s+into\s+(?:the|a|an|our|my|this)\b"
    # "about 150 left to do", "on page 12 of 40", "on his fourth attempt at the reverse park",
    # "in the middle of labelling the jars" (not "in the middle of town")
    rf"|\b{_COUNT}\s+(?:[a-z]+\s+)?left\s+to\s+do\b|\bon\s+page\s+\d+\s+of\s+\d+\b"
    r"|\bon\s+(?:my|his|her|their|our|the)\s+(?:second|third|fourth|fifth|sixth|seventh|eighth"
    r"|ninth|tenth|\d+(?:st|nd|rd|th))\s+(?:attempt|try|go|pallet|batch|coat|lap|load|crate"
    r"|draft)\b|\bin\s+the\s+middle\s+of\s+[a-z]+ing\b"
    # a part done, and after a comma what is still pending, with no verb of its own ("walls
    # primed, the ceiling still to do", "March sent, April still with the accountant")
    rf"|^[^,]*\b{_DID}\b[^,]*,(?:[^,]*,)*\s*(?:(?!is\b|are\b)[\w'-]+\s+){{1,3}}still\s+"
    r"(?:with|a|an|to|being|waiting|not|untouched)\b",
    re.I,
)
# A part of a whole got through: a past tense up to three words before "N of (the) M", "half
# (of) the" or a share of someone's ("I've sanded 14 of the 30 chairs", "we glazed about half the
# tiles", "done about half of Ingrid's training", "finished 60 percent of the audit"), or "N of
# the M <things> <done>" as a clause of its own ("9 of the 12 fences checked, rest on Monday").
_WHOSE = r"(?:the|my|our|his|her|their|[a-z]+'s)"
_PART = (
    # "14 of the 30", "two walls out of four", "20 from 35"
    rf"(?:{_COUNT}\s+(?:[a-z]+\s+)?(?:out\s+of|of|from)\s+(?:the\s+)?{_COUNT}"
    rf"|half\s+(?:of\s+)?{_WHOSE}"
    rf"|(?:\d+\s?(?:%|percent|per cent)|(?:a|one|two|three)\s+(?:thirds?|quarters?))\s+of\s+"
    rf"{_WHOSE})\b"
)
_PART_DONE = re.compile(
    rf"\b(?:{_DID}|finish)\s+(?:[\w-]+\s+){{0,3}}?(?:(?:about|around|roughly|nearly|almost|over|just)"
    rf"\s+)?{_PART}"
    rf"|\b{_PART}\s+(?:[\w-]+\s+){{1,3}}?{_DID}\s*(?:[,.;!]|$)",
    re.I,
)
# A count of what someone has got through ("we've done 41 moves this month", "today I have done
# 4000 words already", "we've prepped about 60% of the mise for tonight", "repotted 120
# seedlings today", "we ran it three times this morning"): the speaker (or no subject, or a
# label before a colon), a past tense, a number, and a stretch of time that is still running.
_TALLY = re.compile(
    rf"(?:\b(?:i|we)(?:'ve|\s+have)?\s+|^|:\s*)(?:(?:just|already|only|now)\s+)?{_DID}"
    r"\s+(?:(?:out|up|off|down|through|it|them)\s+)?"
    r"(?:(?:about|around|roughly|nearly|almost|over|just|already)\s+)?"
    rf"(?:\d[\d,.]*\s?%?|{_COUNT}\b|half\b|twice\b)",
    re.I,
)
_RUNNING = re.compile(
    r"\b(?:today|tonight|so far|already|yet|this\s+(?:morning|afternoon|evening|week|month|"
    r"term|quarter|season|year|shift))\b",
    re.I,
)
#: A year or a month said as when: a count told with one is a record of its time ("half the
#: roof was replaced in 2019"), not progress ("4 of the 6 invoices for March" is).
_DATED = re.compile(
    rf"\b(?:in|since|during|back in)\s+(?:(?:early|late|mid)\s+)?(?:(?:19|20)\d\d\b|"
    rf"{lx.phrases(set(lx.MONTHS) - {'may'}).pattern})",
    re.I,
)


def _tally(text: str, said: str) -> bool:
    """Whether ``text`` counts what the speaker has got through: a part of a whole
    (:data:`_PART_DONE`), or a count in a stretch of time that is still running (see
    :data:`_TALLY`; ``said`` is ``text`` with the lead that may name the time): progress,
    stale when the task or the stretch ends."""
    if _DATED.search(text):
        return False
    return bool(_PART_DONE.search(text) or (_TALLY.search(text) and _RUNNING.search(said)))


_PRONOUN_VERB = re.compile(r"\b(?:it|he|she|that|there|we|they)'(?:s|re)\b", re.I)
_NAMED_LATER = re.compile(r"(?<=[\s(])(?-i:[A-Z][a-z]+)\b(?!')")
_LABEL = re.compile(r"^[^:,]{3,40}:\s+(?-i:[A-Z0-9£$€])")


def _main_clause(low: str) -> str:
    """The clause before a comma that opens a comment on it ("evri collects the parcels now,
    it's cheaper"); the whole when the part before the comma has no verb."""
    head, sep, rest = low.partition(", ")
    opens = rest.split(" ", 1)[0] if sep else ""
    comment = opens in lx.PRONOUN_SUBJECTS or re.match(r"^(?:it|they|that|he|she)'", opens)
    return head if comment and has_verb(head.split(" ")[1:]) else low


def _past_event(text: str) -> bool:
    """Whether a clause about a thing tells a past event ("the deploy failed"): its first verb
    is in the past."""
    for w in WORD.findall(text)[1:]:
        low = w.lower()
        if low in ("was", "were", "had") or past(low):
            return True
        if is_verb(low):
            return False
    return False


# --- sections -------------------------------------------------------------------------------


def _section(
    text: str, kind: str, lesson: bool, values: frozenset[str], kinds: frozenset[str]
) -> str:
    if lesson:
        return ENVIRONMENT
    low = text.lower()
    if _DECISION.search(text) or _POLICY.search(text):
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
    # What something costs or when it happens ("basic service is £45", "walks on Tuesdays and
    # Saturdays", "the AGM is on Thursday 21 May"), with nothing technical said with it: how
    # things stand now, not the setting they are done in.
    timed = bool(kinds & {"date", "weekday", "time"}) or any(
        m.kind == "money" for m in measures(text)
    )
    setting = PROJECT if timed else ENVIRONMENT
    if kind == "name" and _ENVIRONMENT.search(text):
        return setting
    if kind == "name":
        return PEOPLE
    if _PROJECT.search(text):
        return PROJECT
    if "name" in kinds and not timed and _ROLE.search(text) and not _ENVIRONMENT.search(text):
        return PEOPLE  # "New sous chef is Haruka Ito": who someone is to the group
    if kind == "we":
        return DECISIONS
    return setting


# --- reading a clause -------------------------------------------------------------------------


# A plan called off by name: "scrap the EV plan", "forget HubSpot" (one that names what takes
# its place, "scratch the bullet points: ... prose instead", is an update, read elsewhere).
_CALLED_OFF = re.compile(
    r"^(?:(?:ok|okay|so|and|actually)[\s,]+)?(?:forget|scrap|scratch|ditch|bin|drop)\s+"
    r"(?:what\s+i\s+said\s+)?(?:about\s+)?(?:the\s+|our\s+|my\s+)?"
    r"(?P<v>(?!it\b|that\b|this\b|about\b)"
    r"[\w][\w+.'-]*(?:\s+[\w][\w+.'-]*){0,3}?)\s*(?=[,;:.!]|$|\s+(?:tho|though)\b)",
    re.I,
)

#: A decision taken back by what it was about: "we're reversing the solar decision",
#: "reversing the Christmas date": the thing it names is retired, as when called off.
_TAKEN_BACK = re.compile(
    r"^(?:(?:ok|okay|so|and|actually|right)[\s,]+)?(?:(?:we're|we are|i'm|i am|we've|i've|"
    r"we have|i have)\s+)?(?:reversing|reversed|reverse|undoing|undid|overturning|overturned|"
    r"revoking|revoked|withdrawing|withdrew)\s+(?:the|our|my|that)\s+"
    r"(?P<v>(?!it\b|that\b|this\b)[\w][\w+.'-]*(?:\s+[\w][\w+.'-]*){0,2}?)\s+"
    r"(?:decision|plan|idea|date|choice|booking|change)\b",
    re.I,
)

#: A plan given up: "not buying the Volvo after all", "we're not going ahead with RotaHub after
#: all": what it names is retired.
_NOT_AFTER_ALL = re.compile(
    r"^(?:(?:ok|okay|so|and|actually|right|well)[\s,.]+)?(?:(?:we're|we are|i'm|i am)\s+)?not\s+"
    r"[a-z]+ing\s+(?:ahead\s+with\s+|with\s+)?(?:the\s+|our\s+|my\s+|that\s+)?"
    r"(?P<v>(?!it\b|that\b|this\b)[\w][\w+.'-]*(?:\s+[\w][\w+.'-]*){0,3}?)\s+after\s+all\b",
    re.I,
)


#: A thing no longer offered, taken off where it was listed: "take raspberries off the
#: website", "we've taken the veggie lasagne off the menu".
_TAKEN_OFF = re.compile(
    r"^(?:(?:ok|okay|so|and|actually|right)[\s,]+)?(?:(?:we've|i've|we have|i have)\s+)?"
    r"(?:take|took|taken|taking)\s+(?:the\s+|our\s+|my\s+)?"
    r"(?P<v>(?!it\b|that\b|this\b|them\b)[\w][\w+.'-]*(?:\s+[\w][\w+.'-]*){0,3}?)\s+off\s+"
    r"(?:the\s+|our\s+|my\s+)?(?:website|site|menu|price\s+list|list|shelves|shop)\b",
    re.I,
)


#: Someone presented to the listener, then who they are: "Meet Raúl, our new development
#: director", "say hi to Priya, my sister", "welcome to Priya Venkatesan, new associate".
_PRESENTED = re.compile(
    r"^(?:meet|say (?:hi|hello) to|please welcome|introducing|(?:a big )?welcome(?: to| aboard)?)"
    rf"\s+(?P<name>{NAME_WORD}(?:\s+{NAME_WORD}){{0,2}}),?\s+"
    r"(?P<who>(?:our|my|the)\s+\S.*|(?:a|an)\s+new\s+\S.*|new\s+\S.*)$",
    re.I,
)


def read(
    clause: str, *, role: str, speaker: str, question: str = "", told: frozenset[str] = frozenset()
) -> Statement | str:
    """A :class:`Statement` for a durable clause, or the reason to skip it.

    ``told`` is, for an assistant's reply that says it has taken note, the words (lower case)
    of the users' messages it reads back: a statement of it about someone or something named,
    with a verb, all of whose words they said ("Noted: Ruth is chair; Dev is treasurer" after
    "Ruth (chair) here", "Dev, treasurer"), is theirs, and durable as theirs would be.

    ``question`` is the question the message answers, when the message before it in the
    conversation ended with one: a user's verbless answer ("Organic chemistry and a statistics
    elective") is then kept beside it, since alone it says nothing.
    """
    text = clean(clause)
    if not text:
        return "small talk"
    first = speaker.split()[0] if role == "user" and speaker.split() else ""
    if len(first) > 1:
        # "this is darnell hughes, i own Peach State Turf": who is speaking, then what
        text = re.sub(rf"^(?:this is|it's|it is)\s+(?={re.escape(first)}\b)", "", text, flags=re.I)
    if role == "user" and (shown := _PRESENTED.match(text)):
        # "Meet Raúl, our new development director": who someone is, said to the listener
        who = shown["who"]
        who = who if re.match(r"(?:our|my|the|a|an)\s", who, re.I) else f"the {who}"
        text = f"{shown['name']} is {who}"
    if _secret_talk(text) or _asked_for_secret(question, text):
        # before any other reading: "bin combo is 38-14-22, don't write that down" is a
        # secret, whatever else the clause looks like
        return "secret"
    if _HELP_OFFER.search(question) or _FOR_NOW.search(question):
        # "mostly keeping track of invoices": what they want help with; "resp" after "Which
        # topic first?": what to do now
        question = ""
    called_off = None
    if role == "user":
        called_off = (
            _CALLED_OFF.match(text)
            or _TAKEN_BACK.match(text)
            or _NOT_AFTER_ALL.match(text)
            or _TAKEN_OFF.match(text)
            or ((m := _MIND_CHANGED.match(text)) and m["v"] and m)
        )
    if called_off and not _is_small_talk(text) and not re.search(r"\binstead\b", text, re.I):
        # "scrap the EV plan", "forget HubSpot": the speaker calls off their own plan; said
        # like a request, but to no one, and what it names is retired.
        thing = re.sub(r"\s+(?:plan|idea|thing)$", "", called_off["v"].strip(), flags=re.I)
        if thing and thing.split(" ")[0].lower() not in lx.PRONOUN_SUBJECTS | {"it", "that"}:
            rest = text[called_off.end() :].strip(" ,;.")
            f = frame(text, speaker, role)
            return Statement(text, DECISIONS, f, "retire", thing, "", rest, False, "we", speaker)
    reason = skip_reason(text, role, clause)
    one_word = len(WORD.findall(text)) == 1
    if reason == "small talk" and role == "user" and one_word and _answer(text, question):
        # "postgres" after "Which database did you pick?": one word, the thing asked for
        # (not a word of small talk: "thanks", "sure")
        word = _SMALL_TALK.sub(" ", text.lower()).strip(" .,!?")
        if word and word not in _NO_ANSWER and not _HELP_OFFER.search(question):
            section = _section(f"{question} {text}", "i", False, frozenset(), frozenset())
            f = frame(text, speaker, role)
            meta = {"question": question}
            return Statement(text, section, f, "answer", speaker=speaker, role=role, meta=meta)
    intro = _INTRODUCTION.match(text)
    if intro is None and role == "user":
        intro = _own_introduction(text, speaker)
    if reason and not (reason in _ASIDES and intro and _is_speaker(intro["n"], speaker)):
        unless = _OR_ELSE.match(text) if role == "user" else None
        if reason == "behavioural rule" and unless:
            # "BCA membership has to be renewed by 1 January or you can't come on trips": the
            # "you" of what happens otherwise is anyone's, not the agent's.
            found = read(unless["rest"], role=role, speaker=speaker)
            if isinstance(found, Statement):
                return found
        # "my labrador Bruno had cruciate surgery 3 weeks ago, the vet said hydro might help":
        # the guess is the comment's; "i run a burger van in Swansea called Gaz's Grill, do you
        # do wholesale?": the question is the part after the comma. The clause before stands.
        head = _before_hedge(text) if reason == "hedged" else None
        head = head or (_before_question(text) if reason == "question" else None)
        if head is not None:
            found = read(head, role=role, speaker=speaker)
            if isinstance(found, Statement):
                return found
        return reason
    kind, _ = subject_kind(text, role)
    named = _SELF_NAMED.fullmatch(text)
    if named and (named["n"] or named["m"]).strip().casefold() == speaker.casefold():
        return "introduction"  # "I'm Priya", "Priya here", said by Priya: names no one new
    full_name = named is not None and _is_speaker(named["n"] or named["m"], speaker)
    if full_name or (
        intro
        and _is_speaker(intro["n"], speaker)
        and _introduces(intro["rest"], whole_name=" " in intro["n"].strip())
    ):
        # "Priya Raman here", "Priya Raman, head of platform at Kestrel Labs": who the
        # speaker is, with no verb.
        return Statement(
            text,
            PEOPLE,
            frame(text, speaker, role),
            subject_kind="name",
            speaker=speaker,
            role=role,
        )
    lesson = _lesson(text)
    f = frame(text, speaker, role)
    if role == "user":
        switched = _switch(text)
        if switched and (kind in ("i", "we", "implicit", "our") or names_both(text)):
            section = PEOPLE if kind in ("i", "implicit") else DECISIONS
            return Statement(
                text, section, f, "switch", switched[0], switched[1], "", lesson, kind, speaker
            )
        # A lesson told over sentences says what ended as its outcome ("... and the crash is
        # gone"): it is kept whole, not read as a retirement.
        story = lesson and len(re.findall(r"[.!?;:]\s+\S", text)) >= 2
        # ("we're scrapping the 2k and doing a 5k test instead": what replaces it, in one
        # clause, is kept whole, as a switch it names in other words)
        instead = re.search(r"\band\b[^,;.]*\binstead\b", text, re.I)
        retired = None if story or instead else _retire(text, kind)
        if retired:
            return Statement(
                text, DECISIONS, f, "retire", retired[0], "", retired[1], lesson, kind, speaker
            )
    if role == "user" and f.reverses and not f.decided:
        # "Changed my mind again: the vicar did it after all": a decision taken back is kept,
        # whatever its shape, so that it can replace the decision it reverses.
        content = [w for w in WORD.findall(text) if w.lower() not in lx.STOP_WORDS]
        if len(content) >= 3:
            return Statement(text, DECISIONS, f, subject_kind=kind, speaker=speaker, role=role)
    # "Mostly the Kubernetes clusters" after "What does the team look after?": an answer
    # that leans on the question is kept with it, whether or not it has a verb.
    leans = text.split(" ", 1)[0].lower().strip(",") in lx.LEANING_OPENERS
    if not _durable(text, kind, role, lesson, f.values, told) or (question and leans):
        passing = _WELL_NOW.search(text)
        if question and role == "user" and (_answer(text, question) or leans) and not passing:
            # (not how someone is at the moment: "Is he on the mend?" "he's fine now")
            section = _section(f"{question} {text}", "i", False, f.values, f.kinds)
            meta = {"question": question}
            return Statement(text, section, f, "answer", speaker=speaker, role=role, meta=meta)
        if role != "user":
            return "no durable fact"
        noted = clean(clause, heading=True)
        if noted != text and listed_note(noted) and skip_reason(noted, role) is None:
            # "services: routine care, nail surgery, orthotics": the list says nothing without
            # the heading that says what it is a list of
            f = frame(noted, speaker, role)
            kind, _ = subject_kind(noted, role)
            section = _section(noted, kind, False, f.values, f.kinds)
            return Statement(noted, section, f, subject_kind=kind, speaker=speaker, role=role)
        if (
            role == "user"
            and (_profile(text) or _roster_line(text))
            and not skip_reason(text, role)
        ):
            # "Albert Fenn, 88, dementia, 4 calls a day": a person's name, then what they are,
            # listed: a note about them
            f = frame(text, speaker, role)
            kind, _ = subject_kind(text, role)
            section = _section(text, kind, False, f.values, f.kinds)
            return Statement(text, section, f, subject_kind=kind, speaker=speaker, role=role)
        # "With prices going up, we raised the budget to 1,050": the statement is what follows
        # the opening phrase. "I work for Deliveroo and Uber Eats, you switch apps depending
        # which is busy": an aside to anyone after a comma; the statement before it stands alone.
        reason = ""
        for part in (_OPENING, _OPENING_BARE, _HEAD_BEFORE_ASIDE):
            m = part.match(text)
            if m:
                found = read(m["rest"], role=role, speaker=speaker)
                if isinstance(found, Statement):
                    return found
                reason = reason or found
        then = _SO_THEN.match(text)
        fact = read(then["head"], role=role, speaker=speaker) if then else None
        if then and isinstance(fact, Statement) and fact.kind == "fact":
            # "alfie is lactose intolerant so no normal milk for him": what follows "so" leans
            # on the fact before it ("him"), which stands alone; the two are kept together,
            # unless what follows is of the moment ("..., so I'm shattered today") or is said
            # to the listener ("..., so you can forget the creeping thing").
            after = then["then"]
            passing = _MOMENT.search(after) or _EPISODE.search(after)
            if passing or after.rstrip().endswith("?") or TO_THE_LISTENER.search(after):
                return reason or "transient"
            return replace(fact, text=text, frame=frame(text, speaker, role))
        return reason or "no durable fact"
    section = _section(text, kind, lesson, f.values, f.kinds)
    return Statement(text, section, f, lesson=lesson, subject_kind=kind, speaker=speaker, role=role)


#: What a part of a message that names a secret may not hold to be kept: a word of letters and
#: digits, shaped like a password ("FjordvikGuest22"), a number of three digits or more, a
#: thing whose value is one, or a word that leans on it ("the container one is 7702").
_CODE_WORD = re.compile(r"\b(?:code|codes|pin|passcode|combination|combo)\b", re.I)
_MIXED_WORD = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{5,}\b", re.I)
_SECRET_LIKE = re.compile(
    rf"{_MIXED_WORD.pattern}|\d[\d -]{{2,}}\d|\b(?:wi-?fi|network|login|"
    r"account|pin|alarm|lock|safe|code|password|one|it|that)\b",
    re.I,
)
#: The short words people give a password by: "pw", "pwd", "pass", "creds", "login".
_NAMES_A_PASSWORD = re.compile(r"\b(?:pw|pwd|pword|pass|creds|user(?:name)?|log-?in)\b", re.I)


#: Where a sentence that tells a secret is cut to find what else it says: a comma, a
#: semicolon, a bracket, a dash between spaces, or "and", "but", "also", "btw", "plus" before
#: a new subject ("the alarm company is ADT and the code is ...", "... and we bill on the 1st").
_BESIDE_CUT = re.compile(
    r"\s*(?:[,;()]|\s[-\u2013\u2014]+\s|[\u2013\u2014])\s*(?:(?:and|but|also|btw|plus)\s+)?"
    r"|,?\s+(?:and|but|also|btw|plus)\s+(?=(?:the|our|my|his|her|their|its|we|we're|i|i'm|he"
    r"|she|they|you|there)\b)",
    re.I,
)
#: A part that leans on the one before (the secret, or the thing it opens): "that's mine",
#: "it's in the closet", "which is my birthday", "or 9932 for the back door", "changed
#: monthly", "only for Booker".
_LEANS = re.compile(
    r"^(?:it|it's|its|that|that's|this|which|one|same|or|then|else|only|changed|changes"
    r"|expires|valid)\b",
    re.I,
)
#: A part that gives another of the same ("the distributor portal one is ..."), or a value in
#: quotes: a second secret, whatever it is shaped like.
_ANOTHER = re.compile(
    r"\b(?:one|ones|same)\b(?:\s+\w+)?\s*(?:is|are|was|'s|[:=])|\"[^\"\s]{3,}\"|'[^'\s]{3,}'",
    re.I,
)
#: What is nothing but its code (as for core.secrets' access codes): a part that names one
#: beside its code tells where that code is used ("22 larch close has a key safe").
_CODE_BOX = re.compile(r"\b(?:lock\s?box|key\s?safe|key\s?box|padlock)(?:es|s)?\b", re.I)
#: The login a password goes with: an e-mail address, or "acc"/"user id" said before one.
_LOGIN = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b(?:acc|user\s?id)\b", re.I)
#: A part that ends where a value would follow it: "the code is", "pw for the portal:".
_GIVES_NEXT = re.compile(r"(?:\b(?:is|was|are|were)|'s|[:=])\W*$", re.I)


#: A message or clause that opens by correcting what was said before it ("no. 40 hogsheads",
#: "Ah no, ...", "Correction: ...", "Not the 14th, ..."): what it says leans on what it corrects.
CORRECTING = re.compile(
    r"^\W*(?:(?:ah|oh|oops|sorry|wait)[,\s]+)?(?:no+|nope|not|correction|sorry|actually|wait)\b",
    re.I,
)

#: What the learned reading leaves to the rules, whatever it scores: an order with no one to
#: do it but the listener ("Bev says always use metric with us"), a correction that leans on
#: what it corrects ("Ah no, Saturday is until 4, not 5"), a question without its mark, a laugh
#: ("... lol"), a clause that ends leaning on another.
_LEFT_TO_RULES = re.compile(
    r"(?:^|\b(?:says?|said|wants?|asks?)\s+|[,:;]\s*)(?:always|never|don't|do not|dont)\s+[a-z]"
    rf"|{CORRECTING.pattern}"
    # a clause that opens as a question does ("can HoneyBook send automatic reminders")
    r"|^(?:can|could|would|will|should|shall|may|might|do|does|did|is|are|was|were|what|when"
    r"|where|who|which|why|how)\b"
    r"|\b(?:lol|lmao|omg|haha\w*)\b"
    # a clause that ends on a word leaning on another ("need the certs uploaded before then")
    r"|\b(?:it|them|then|that|this|these|those|there)\W*$",
    re.I,
)


def second_reading(clause: str, speaker: str) -> Statement | None:
    """A user's clause the rules found no durable fact in, as a fact when the learned model
    (:mod:`.learned`) reads one in it ("gym 6am mon wed fri", "Cabs from Meru for late
    shift."); else None. Asked only after :func:`read` said "no durable fact": what the rules refuse
    for a reason of their own is never read again."""
    text = clean(clause)
    # (as said, and as cleaned: "FYI: no, ..." opens with the "no")
    if (
        not text
        or TO_THE_LISTENER.search(clause)
        or any(map(_LEFT_TO_RULES.search, (clause, text)))
    ):
        return None
    if learned.chance(clause) < learned.THRESHOLD:
        return None
    after = text.rsplit(":", 1)[-1].strip()
    if after != text and read(after, role="user", speaker=speaker) == "introduction":
        return None  # "Quick intro before we start: I'm Priya", said by Priya: no one new
    kind, _ = subject_kind(text, "user")
    f = frame(text, speaker, "user")
    section = _section(text, kind, False, f.values, f.kinds)
    return Statement(text, section, f, subject_kind=kind, speaker=speaker, role="user")


def beside_secret(sentence: str, spans: Iterable[tuple[int, int]] = ()) -> list[str]:
    """What a sentence that tells a secret says beside it: its parts (cut at
    :data:`_BESIDE_CUT`) but those that hold the secret (overlap one of ``spans``, offsets in
    ``sentence``, or read as a secret), name a secret, a code, a key safe or the login it goes
    with, give another ("the portal one is ..."), hold a value one could be (a word of letters
    and digits, a code's digits: :func:`_code_digits`), lean on a part left out ("..., that's
    my birthday", an aside in brackets after it), or follow a part that ends where its value
    would start: "the cottage alarm company is ADT and the code is ...": "the cottage alarm
    company is ADT"."""
    spans = list(spans)
    cuts = [(m.start(), m.end()) for m in _BESIDE_CUT.finditer(sentence)]
    starts = [0] + [e for _, e in cuts]
    ends = [s for s, _ in cuts] + [len(sentence)]
    kept: list[str] = []
    before, dropped = "", False
    for n, (a, b) in enumerate(zip(starts, ends, strict=True)):
        part = sentence[a:b].strip()
        if not part:
            continue
        # on the part left out: "that's my birthday", "(my mum's birthday lol)"
        aside = n > 0 and "(" in sentence[ends[n - 1] : a]
        leans = dropped and (aside or bool(_LEANS.match(part)))
        dropped = (
            leans
            or any(x < b and a < y for x, y in spans)
            or bool(_GIVES_NEXT.search(before))
            or bool(_SECRET_NOUN.search(part) or _CODE_WORD.search(part))
            or bool(_CODE_BOX.search(part))
            or bool(_NAMES_A_PASSWORD.search(part) or _LOGIN.search(part))
            or bool(_MIXED_WORD.search(part) or _ANOTHER.search(part))
            or _code_digits(part)
            or _secret_talk(clean(part))
        )
        before = part
        if not dropped:
            kept.append(part)
    return kept


def pieces(clause: str, *, role: str, speaker: str) -> list[str]:
    """``clause``, or its parts about different things (:func:`.sentences.other_subjects`) where
    one of them would spoil what the others say: a part of the moment said beside a fact ("Mrs
    Ahmed is allergic to penicillin and the waiting room printer is broken again": the fact
    alone), or a secret, or a mention of one ("the wifi password is on the fridge, also the
    bins go out thursdays": the bins alone; never a part shaped like a secret or naming one,
    :data:`_SECRET_LIKE`). Otherwise the clause is read whole, as said ("our cheese vat is
    2000 litres from Kalt, and the press is pneumatic")."""
    if _secret_talk(clean(clause)):
        return beside_secret(clause) or [clause]  # what it says beside the secret, or nothing
    parts = other_subjects(clause)
    if len(parts) < 2:
        return [clause]
    whole = read(clause, role=role, speaker=speaker)
    named = (_SECRET_NOUN.search(p) or _CODE_WORD.search(p) for p in parts)
    if whole == "secret" or any(named):
        return [p for p in parts if not _SECRET_LIKE.search(p)] or [clause]
    if isinstance(whole, Statement) or whole in ("no durable fact", "transient"):
        lasting = [p for p in parts if not _of_the_moment(clean(p))]
        return lasting if 0 < len(lasting) < len(parts) else [clause]
    return [clause]


def _of_the_moment(text: str) -> bool:
    """How things are now: "the lift is out of order today", "the printer is broken again"
    (not "folding bikes are fine": what holds)."""
    return bool(_MOMENT.search(text) or (_STATE_NOW.search(text) and _AGAIN.search(text)))


_AGAIN = re.compile(r"\b(?:again|still|playing up)\b", re.I)


#: A thing and what it does, in the present: "the big autoclave leaks", "when it rains".
_DOES = re.compile(r"\b(?:the|our|my|it|he|she)\s+(?:[\w-]+\s+){0,2}?[a-z]{2,}[^s\W]s\b")


def because(text: str, cause: str, then: str, *, role: str, speaker: str) -> Statement | None:
    """``text``, which says what is done, ``then``, for a ``cause`` that alone says nothing
    lasting ("the back fridge runs warm, so we keep milk in the front one"), kept whole; or
    None: when ``then`` is no fact or an update, or the cause is of the moment ("the lift is
    out today") or told in the past (why something changed)."""
    if skip_reason(cause, role) is not None or _MOMENT.search(cause) or _EPISODE.search(cause):
        return None
    if not (has_verb(cause.split()[1:]) or _DOES.search(cause)):
        return None  # "van kit, so I can check it off": a heading, not a cause
    if _past_event(cause) or any(not m.kind.startswith("count") for m in measures(cause)):
        # "customers kept asking for something local": why it changed, a story; "no its
        # £16.99 since february": a value put right, read as such
        return None
    after = read(then, role=role, speaker=speaker)
    if not isinstance(after, Statement) or after.kind != "fact" or after.frame.update:
        return None  # (an update stays alone, to find the entry it updates)
    return replace(after, text=text, frame=frame(text, speaker, role))


#: A statement, then after a comma an aside that speaks to anyone ("you switch the apps") or
#: comments on it ("so it's all evenings for the ref stuff").
_HEAD_BEFORE_ASIDE = re.compile(
    r"^(?P<rest>[^;:]{12,}?),\s+(?:so\s+)?(?:you|it's|it is|that's|that is)\b.*$", re.I
)
#: A fact, then what follows from it after "so" ("alfie is lactose intolerant so no normal
#: milk for him"); not "so much", "so far", "or so", "so that's that".
_SO_THEN = re.compile(
    r"^(?P<head>(?:\S+\s+){2,}?\S+?),?\s+so\s+(?!(?:much|many|far|long|good|bad|yeah|yes|anyway|"
    r"what|i\s+guess|that's\s+that|on|forth)\b)(?P<then>\S+(?:\s+\S+)+)$",
    re.I,
)
#: ", which is our insurance,", ", one of the regulars,": said of the head, not the head.
_RELATIVE_ASIDE = re.compile(
    r",\s+(?:which|who|whose|one of|a|an|the|my|our|his|her|their)\s+[^,]{2,60},", re.I
)
_OR_ELSE = re.compile(r"^(?P<rest>[^;:]{12,}?),?\s+(?:or|otherwise|or else)\s+(?:you|they)\b", re.I)
_NOUN_IS = re.compile(
    r"\w's\s+(?:a|an|the|my|our|his|her|their|now|not|still|always|never|\d)\b", re.I
)
_PLACED = re.compile(
    r"^(?:the|our|my)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:is|are|lives|live|sits|sit|stays|stay|hangs|"
    r"hang|is kept|are kept)\s+(?:(?:only|now|still|always|just)\s+)?"
    r"(?:in|at|on|under|behind|inside|above|below|next to|beside)\s",
    re.I,
)
_OPENING = re.compile(
    rf"^(?:{lx.phrases(lx.OPENING_PHRASES).pattern})\b[^,;:]{{1,60}},\s+(?P<rest>\S.{{8,}})$", re.I
)
# "For restoration I use only wheat starch paste": the opening phrase without its comma, ended
# by the speaker's "I" or "we".
_OPENING_BARE = re.compile(
    rf"^(?:{lx.phrases(lx.OPENING_PHRASES).pattern})\b[^,;:]{{1,40}}?\s+"
    r"(?P<rest>(?:I|we|I'm|we're|I've|we've)\s+\S.{8,})$",
    re.I,
)
_PERSON = r"(?-i:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})"
_SELF_NAMED = re.compile(
    rf"(?:(?:i'm|i am|my name is|name's|this is|it's|it is)\s+(?P<n>{_PERSON})|(?P<m>{_PERSON})"
    r"\s+here)",
    re.I,
)
_INTRODUCTION = re.compile(
    rf"^(?:(?:this is|it's|it is)\s+)?(?P<n>{_PERSON})(?:\s+here)?\s*(?:,|:|\s[-–—])\s*"
    r"(?P<rest>\S.*)$",
    re.I,
)


#: What an aside in an introduction may read as ("... which is Manchester if you squint"): the
#: introduction is kept all the same.
_ASIDES = frozenset({"behavioural rule", "hedged"})


#: A question asked after a comma, to the end: ", do you do wholesale?".
_ASKED_AFTER = re.compile(
    r",\s+(?:do|does|did|can|could|is|are|will|would|should|have|has|what|when|where|who|how)"
    r"\b[^,.!?]*\?\s*$",
    re.I,
)


def _before_question(text: str) -> str | None:
    """The words of ``text`` before a question it asks after a comma (:data:`_ASKED_AFTER`),
    when they are at least five words and ask nothing; else None."""
    m = _ASKED_AFTER.search(text)
    head = text[: m.start()] if m else ""
    # ('How I say "pradaria marinha", is ...': a question word opens it, it asks too)
    asks = "?" in head or re.match(r"(?:how|what|when|where|why|which|who)\b", head, re.I)
    # (nor what is going on as they ask: "my ebike's making a grinding noise, can you come?")
    going_on = re.search(r"(?:\b(?:is|are)|'s|'re)\s+(?:\w+ly\s+)?\w+ing\b", head, re.I)
    return head if len(WORD.findall(head)) >= 5 and not asks and not going_on else None


def _before_hedge(text: str) -> str | None:
    """The words before the comma that begins the part of ``text`` that hedges, when that
    part is a clause of its own that comes after at least four words that do not ("..., the
    vet said hydro might help"); else None ("..., maybe Wednesday" hedges what it follows)."""
    hedge = _HEDGE.search(text)
    cut = text.rfind(", ", 0, hedge.start()) if hedge else -1
    before = WORD.findall(text[cut : hedge.start()]) if hedge and cut > 0 else []
    if len(before) < 3 or not has_verb(before):
        return None  # ("..., then done I think": the guess is of all of it)
    head = text[:cut]
    return head if len(WORD.findall(head)) >= 4 and not _HEDGE.search(head) else None


def _own_introduction(text: str, speaker: str) -> re.Match[str] | None:
    """The speaker's name, as typed (lower case too), opening a verbless introduction: "gaz
    here. pryce roofing, swansea", "rory fitzpatrick, stand-up, based in manchester", "Stan
    Whitlock. Fishmonger. Whitlock & Sons on Flowergate"."""
    first = speaker.split()[0] if speaker.split() else ""
    if len(first) < 2:
        return None
    return re.match(
        rf"^(?P<n>{re.escape(first)}(?:\s+(?!here\b)"
        rf"[^\W\d_][\w'-]*)?)(?:\s+here)?\s*(?:[,:.!]|\s[-–—])\s*(?P<rest>\S.*)$",
        text,
        re.I,
    )


def _is_speaker(name: str, speaker: str) -> bool:
    """Whether ``name`` names the speaker: their name, or it begins with it."""
    first = name.split()[0].casefold() if name.split() else ""
    return bool(first) and first == speaker.split()[0].casefold()


_SIGN_OFF = re.compile(rf"^\s*(?:{lx.phrases(lx.LEADS).pattern}|{_SMALL_TALK.pattern})", re.I)


def _introduces(rest: str, *, whole_name: bool = False) -> bool:
    """What follows a name in a verbless introduction: a role, a team, a place ("head of
    platform at Kestrel Labs"), not a clause with a verb of its own. After a first name and
    a surname one word will do ("Fergus Doyle, treasurer")."""
    words = WORD.findall(rest)
    content = [w for w in words if w.lower() not in lx.STOP_WORDS]
    if not words or is_verb(words[0]) or _SIGN_OFF.match(rest):
        return False  # "Fergus Doyle, cheers mate": a sign-off
    return len(content) >= (1 if whole_name else 2)


#: A question that asks for a value, which a reply names: not one answered yes or no.
ASKS_VALUE = re.compile(
    r"^\W*(?:what|which|who|whose|where|when|how many|how much|how long)\b", re.I
)


def _answer(text: str, question: str) -> bool:
    """Whether ``text`` is a verbless answer with content of its own to ``question``.

    A word after a determiner names a thing, whatever else it may be ("under the blue pot by
    the back door", "postgres, the managed one"). One word of content answers a question that
    names the kind of thing it asks for ("Which database did you pick?" "postgres") or asks
    who; a value alone answers any question asking for one."""
    words = WORD.findall(text)
    content = [w for w in words if w.lower() not in lx.STOP_WORDS and w.lower() not in TIME_WORDS]
    asks_what = ASKS_VALUE.match(question)
    named = re.match(
        r"^\W*(?:(?:which|what|whose)\s+(?!(?:is|are|was|were|do|does|did|about|of|if|else|"
        r"kind|sort|type)\b)[a-z]{3,}|who(?:'s|\s+is|\s+was|\s+are)?\s+(?:your|the|our|their)\s)",
        question,
        re.I,
    )
    # (one word of content alone, or with a determiner: "postgres", "the blue one"; not "no,
    # that's wrong", "dunno")
    alone = all(w.lower() in _DETERMINERS | {"one"} for w in words if w not in content)
    one = len(content) == 1 and alone and content[0].lower() not in _NO_ANSWER
    # ("7.4" after "What pH should the buffer be?", "120" after "How much is adult
    # membership?": a value alone answers any question asking for one)
    valued = one and bool(re.fullmatch(rf"\W*[£$€]?(?:{lx.VALUE_TOKEN.pattern})\W*", text, re.I))
    enough = len(content) >= 2 or ((bool(named) or valued) and one and len(words) <= 3)
    pieces = [WORD.findall(piece) for piece in re.split(r"[,;:.!?()]", text)]
    return bool(asks_what) and enough and not any(has_verb(_beside_nouns(p)) for p in pieces)


#: One word that answers nothing: "dunno", "whatever", "both".
_NO_ANSWER = lx.words(
    "dunno idk unsure whatever either neither both none nothing anything any same all "
    "later tbc tbd nope yep yeah yes no maybe"
)
_DETERMINERS = lx.words(
    "the a an my our your his her their its this that these those some any every each"
)


def _beside_nouns(words: list[str]) -> list[str]:
    """``words`` without those that follow a determiner (or another word that does) up to the
    next stop word: they name a thing ("the back door", "the shared drive"), though each may
    also read as a verb. An auxiliary still is one: "the van is parked"."""
    out: list[str] = []
    naming = -1  # words of the thing named so far, after its determiner; -1: none
    for w in words:
        low = w.lower()
        if low in _DETERMINERS:
            naming = 0
        elif naming >= 0 and low not in lx.STOP_WORDS and low not in AUX:
            # (after the first word, an inflected verb is the thing's verb: "the packhouse
            # runs itself"; a bare one still names: "the shared drive")
            if naming == 0 or not is_verb(w) or low in lx.VERBS:
                naming += 1
                continue
            naming = -1
        else:
            naming = -1
        out.append(w)
    return out


_NEVER = frozenset({"question", "request", "behavioural rule", "secret"})


def entry_problem(entry: str) -> str | None:
    """Why an entry written by any reviewer is not a fact for memory, read the way the offline
    reviewer reads a clause (:func:`read`): any clause that is a question, a request or a rule
    aimed at the agent, or a secret (also a secret named in one sentence and given in another,
    :func:`secret_values`, as in a message); or no clause that is durable (small talk, a
    reaction, progress, a hedge, a to-do, a past event). None when it is a fact. "Sam said:"
    and "Sam:" attributions are read as that person speaking."""
    body = strip_source(entry)
    m = re.match(r"^(?P<who>[A-Z][\w.' -]{0,40}?)(?: said)?:\s+", body)
    speaker = m["who"] if m else "Someone"
    body = body[m.end() :] if m else body
    if secret_values(body):
        return "secret"  # named in one sentence, given in the next: the message's own rule
    reasons: list[str] = []
    for _, _, sentence in sentences(body):
        for part in clauses(sentence):
            if clean(part).endswith("?"):
                # (read() keeps what comes before a question asked after a comma; an entry
                # must not hold the question)
                return "question"
            found = read(part, role="user", speaker=speaker)
            if isinstance(found, Statement):
                reasons.append("")
            elif found in _NEVER:
                return found
            elif found != "too long":
                reasons.append(found)
    return None if "" in reasons or not reasons else reasons[0]
