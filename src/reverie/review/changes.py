"""Changes, for the offline reviewer (SPEC R6, R8): pure functions, no I/O.

Two things live here. Reading a clause that says something changed: a switch from one thing
to another ("we moved from Jenkins to GitHub Actions") or a retirement ("we're not on Zendesk
any more"). And comparing a statement with an entry already in memory: whether it names a
thing (:func:`mentions`), says it is in use (:func:`uses`), says the same (:func:`restates`),
or makes it outdated (:func:`supersedes`), all on :class:`.frames.Frame`.
"""

from __future__ import annotations

import functools
import re

from . import lexicon as lx
from .frames import (
    CALENDAR,
    SPEAKER_NAMED,
    TITLE,
    WORD,
    Frame,
    entry_frame,
    has_verb,
    past,
    stem,
    strip_source,
)
from .slots import dated_alike, measures, read_slot, refills, root, turns_around

__all__ = ["keys", "mentions", "resets", "restates", "supersedes", "uses", "version_change"]

_USE = lx.phrases(lx.USE_VERBS)
_RETIRE = lx.phrases(lx.RETIRE_VERBS)
_SWITCH = lx.phrases(lx.SWITCH_VERBS)
_ENDED = lx.phrases(lx.ENDED_STATES)
_WHEN = re.compile(rf"(?:{CALENDAR.pattern}|\d)", re.I)
_NEGATED_USE = lx.phrases(lx.NEGATED_USE)
_NO_LONGER = lx.phrases(lx.NO_LONGER)
_NEGATED_STATE = lx.phrases(lx.NEGATED_STATES)

# --- changes: switches and retirements --------------------------------------------------------

_END_OF_THING = re.compile(
    r"\s*(?:[,;:(]|\s[-–—]\s|\s(?:and|but|because|since|after|as of|so|for good|entirely|"
    r"altogether|at all|anymore|any more|any longer|completely|last|this|over the|in favou?r|"
    r"it|which|though|yesterday|today|for the|for now|i'm afraid|i am afraid|sadly|"
    r"unfortunately|as a|as an|from next|from now|from this)\b"
    # a clause run on with no comma: "come off FishingBooker the commission was daylight robbery"
    r"|\s(?=(?:the|my|our|their)\s+\w+\s+(?:was|were|is|are|has|had)\b))",
    re.I,
)


def _thing(raw: str) -> str:
    """A named thing without articles or what follows it: "the old MySQL box, because" ->
    "old MySQL box"; "Disney+ to save money" -> "Disney+"."""
    value = re.sub(r"^(?:the|our|my|a|an|their|his|her)\s+", "", raw.strip(), flags=re.I)
    value = _END_OF_THING.split(value, maxsplit=1)[0]
    purpose = re.search(r"\s+to\s+(?P<v>(?-i:[a-z]+))\b", value)
    if purpose and purpose["v"] not in lx.STOP_WORDS:
        value = value[: purpose.start()]  # "to save money": why, not what
    # "the Children in Need bid", "the Netflix subscription": the named thing
    named = re.match(
        r"^(?P<v>.*(?-i:[A-Z]).*?)\s+(?:bid|application|subscription|account|contract)$", value
    )
    return (named["v"] if named else value).strip(" .,'\"")


#: A clause whose subject is one of the two things it says replaced the other: "Calor's out,
#: Flogas is in", "the new Dojo card machine has replaced the SumUp", "Spitz has been
#: replaced by Evans and Sutherland". (Whoever made the switch need not be said.)
_BOTH_NAMED = (
    re.compile(
        r"(?:^|:\s*)(?P<old>[^,;.:!?]+?)(?:'s|\s+is|\s+are|'re)\s+out[,;]\s+(?:and\s+)?"
        r"(?P<new>[^,;.:!?]+?)(?:'s|\s+is|\s+are|'re)\s+in\b",
        re.I,
    ),
    re.compile(
        r"(?:^|:\s*)(?P<new>[^,;.:!?]+?)\s+(?:has|have)\s+replaced\s+(?P<old>[^,;.:!?]+)", re.I
    ),
    re.compile(
        r"(?:^|:\s*)(?P<old>[^,;.:!?]+?)\s+(?:has|have)\s+been\s+replaced\s+(?:by|with)\s+"
        r"(?P<new>[^,;.:!?]+)",
        re.I,
    ),
)


def names_both(text: str) -> re.Match[str] | None:
    """The clause's :data:`_BOTH_NAMED` switch, or None."""
    return next((m for m in (p.search(text) for p in _BOTH_NAMED) if m), None)


def _switch(text: str) -> tuple[str, str] | None:
    """``(old thing, new thing)`` of a clause that says one replaced the other: "switched from
    X to Y", "moved CI off X to Y", "replaced X with Y", "swapped X for Y", "dropped X and
    went with Y", "X is out, Y is in", "Y has replaced X"; or None."""
    m = (
        re.search(
            rf"\b(?:{_SWITCH.pattern})\s+(?:\w+\s+){{0,3}}?(?:from|off)\s+(?P<old>.+?)\s+"
            r"(?:to|over to|onto)\s+(?P<new>[^,;.]+)",
            text,
            re.I,
        )
        or re.search(r"\breplaced\s+(?P<old>.+?)\s+with\s+(?P<new>[^,;.]+)", text, re.I)
        or names_both(text)
        or re.search(
            r"\b(?:swapped|swapping|traded|exchanged)\s+(?:the\s+|our\s+)?(?P<old>[^,;.]+?)\s+"
            r"for\s+(?P<new>[^,;.]+)",
            text,
            re.I,
        )
        or re.search(
            rf"\b(?:{_RETIRE.pattern})\s+(?P<old>[^,;.]+?),?\s+and\s+(?:we\s+|i\s+)?"
            r"(?:went with|went to|moved to|switched to|signed up with|signed with|now use)\s+"
            r"(?P<new>[^,;.]+)",
            text,
            re.I,
        )
        # "Sold the FireOne kit and bought Cobra"; but "sold the Civic and bought a Kia, so no
        # more oil changes" says what ended with it.
        or (
            None
            if _NO_MORE.search(text) or _NEGATED.search(text)
            else re.search(
                rf"\b(?:{_RETIRE.pattern})\s+(?P<old>[^,;.]+?),?\s+and\s+(?:we\s+|i\s+)?"
                r"(?:bought|got|picked up|went for)\s+(?P<new>[^,;.]+)",
                text,
                re.I,
            )
        )
    )
    if not m:
        return None
    old, new = _thing(m["old"]), _thing(m["new"])
    pronoun = {old.split(" ")[0].lower(), new.split(" ")[0].lower()} & set(lx.PRONOUN_SUBJECTS)
    if not old or not new or pronoun:
        return None
    return old, new


_NEGATED = re.compile(
    # (typed without the apostrophe too: "we dont do show and tell anymore")
    rf"(?:\bnot|n't|\b(?:dont|doesnt|isnt|arent)\b|\bno longer)\s+(?:\w+\s+){{0,2}}?"
    rf"(?:{_NEGATED_USE.pattern})\s+"
    rf"(?P<v>[^,;:.!?]+?)\s*(?:{_NO_LONGER.pattern})",
    re.I,
)
_NO_MORE = re.compile(
    r"(?:^|,?\s+(?:so|and|but)\s+|[,;]\s+)no more\s+(?P<v>[^,;:.!?]+)"
    # "no grooming any more, sue's moved to cromer"
    r"|^no\s+(?P<w>[^,;:.!?]+?)\s+any\s?more\b"
    # "sadly no Christmas Day event this year or from now on"
    r"|^(?:(?:sadly|so|and|also)\s+)?no\s+(?P<y>[^,;:.!?]+?)\s+(?:this year\s+or\s+)?"
    r"from now on\b",
    re.I,
)


#: The thing first, then that it is no longer used: "And Connexxion we don't use anymore".
_FRONTED_NEGATED = re.compile(
    r"^(?:(?:and|also|oh and|oh|but)\s+)?(?:the\s+|our\s+)?(?P<v>[^,;:.!?]+?)\s+(?:we|i)\s+"
    r"(?:don't|dont|do not|no longer)\s+(?:use|do|need|stock|sell|offer|run|have|order|book)"
    r"\s*(?:any\s?more|any longer)(?=\s*(?:$|[,;.!]))",
    re.I,
)
_NOT_DOING = re.compile(
    r"^(?:i'm|i am|im|we're|we are|were)\s+not\s+(?P<v>[a-z]{4,}ing)\s+(?:any\s?more|any longer)\b",
    re.I,
)

_JUST_A_SUBJECT = re.compile(
    r"\s*(?:(?:we|i|they|he|she|you)(?:'re|'m|'ve|'s)?(?:\s+(?:are|am|is|have|has|do|does))?)?\s*",
    re.I,
)


#: A thing mourned as dead: "RIP the Brinsea", "R.I.P. old van".
_RIP = re.compile(
    r"^(?:rip|r\.i\.p\.?)\s+(?:(?:the|our|my|old|poor)\s+)*(?P<v>(?-i:[A-Z])[^,;.!?]{1,40}?)\s*"
    r"(?:[.,;!?]|$)",
    re.I,
)


#: What comes before a word that says who someone is ("a retired nurse", "Lydia, retired").
_SAID_OF_SOMEONE = re.compile(r"(?:,|\b(?:a|an|am)|'m)\s*$", re.I)


def _retire(text: str, kind: str) -> tuple[str, str] | None:
    """``(thing retired, what the clause goes on to say)``, or None.

    Read three ways, whoever the subject: a negated use that says it ended ("we're not on
    Zendesk any more", "we aren't using Jira anymore"); "no more X" ("Dev bought an EV, so no
    more oil changes": what comes before it is said too); a thing in an ended state ("the old
    build box is gone"). Then, for the speaker or their team, a verb that retires ("we dropped
    Vellum", "I've given up on Scrivener").
    """
    if kind == "thing" and text.split(" ", 1)[0].lower() in lx.ENDING_GERUNDS:
        # "scrapping the Saturday line runs": the speaker does it; but "Cancelling the Friday
        # class costs us £50", "Killing the lights after 11 is the rule": the doing is the
        # subject of what the clause says
        if _GERUND_AS_SUBJECT.search(text.split(",", 1)[0]):
            return None
        kind = "implicit"
    m = _RIP.match(text)
    if m:
        return _thing(m["v"]), ""  # "RIP the Brinsea": it broke for good
    m = _CHANGED_ALL.match(text)
    if m:
        # "Jess moved physios", "I've switched visas": the one before is over, whoever
        # follows (said next, it is kept as it comes).
        return m["v"], ""
    m = _NEGATED.search(text) or _NO_MORE.search(text) or _FRONTED_NEGATED.match(text)
    if m is None and kind in ("i", "we"):
        # "I am not demonstrating anymore this year": what they did is over
        m = _NOT_DOING.match(text)
    if m:
        thing = _thing(m["v"] or m.groupdict().get("w") or m.groupdict().get("y") or "")
        if thing and thing.split(" ")[0].lower() not in lx.PRONOUN_SUBJECTS:
            before = text[: m.start()]
            if _JUST_A_SUBJECT.fullmatch(before):
                before = ""  # "we're not taking X any more, ...": "we're" says nothing alone
            said = (before + " " + text[m.end() :].lstrip(" ,;")).strip(" ,;")
            return thing, said if len(said.split()) >= 2 else ""
    m = re.match(
        rf"^(?:the |our |my )?(?P<w>[^,;:]+?)"
        rf"(?: (?:isn't|aren't|isnt|arent|won't be|wont be|is not|are not|will not be)|'s not"
        rf"|'re not)"
        rf" (?:{_NEGATED_STATE.pattern})\b",
        text,
        re.I,
    )
    weekly = m and re.match(r"^\s*(?:on|at|before|after|until|in)\s+", text[m.end() :], re.I)
    if m and not weekly and m["w"].split(" ")[0].lower() not in lx.PRONOUN_SUBJECTS:
        return _thing(m["w"]), ""  # "Homework club isn't happening this year"
    m = _CLOSED_DOWN.match(text) if kind not in ("i", "we", "implicit") else None
    if m:
        return re.sub(r"'s$", "", m["who"]), m["rest"].strip(" .,;:()")
    if kind != "name" and _ONLY_A_PERSON.match(text):
        # "jordan's handed his notice in": a name typed in lower case, before what only a
        # person does
        text, kind = text[0].upper() + text[1:], "name"
    if kind == "name":
        # "Hattie left for Ubisoft", "Callum left the band": a person no longer in the role
        # memory gives them; who takes it may follow. (Leave is not leaving: "Beatriz is on
        # maternity leave until August" keeps her as the contact.)
        m = _DEPARTED.match(text)
        if m and not _WENT_ON.match(m["rest"]):
            rest = m["rest"].strip(" .,;:()")
            if rest and past(rest.split(" ")[0].lower()):
                rest = ""  # "..., retired at the end of March": more of the same leaving
            return m["who"], rest
        # "Mila quit swimming": a person gives something up; what follows is said too.
        m = re.match(
            rf"^(?P<who>(?:{TITLE}\s+)?[A-Z][\w'-]+(?: [A-Z][\w'-]+)?) (?:has |have )?"
            rf"(?:{_RETIRE.pattern})\s+(?P<v>[^,;.!?]+)(?P<rest>.*)$",
            text,
        )
        objectless = r"(?:a|an|any|some|to|the idea|the ball|on|with|at|for|by|in|us|me|it)\b"
        if m and not re.match(objectless, m["v"], re.I):
            thing = _thing(m["v"])
            if thing and not _only_when(thing):
                return thing, m["rest"].strip(" .,;")
    if kind not in ("i", "we", "implicit"):
        m = (
            re.match(
                r"^(?:the |our |my )?(?P<w>[^,;:]+?)"  # one thing, not a clause before a comma
                r"(?:(?: (?:is|are|was|were|has been|have been|got)|'s been|'ve been)(?: now)? (?:"
                + _ENDED.pattern
                # said short ("beer festival's off for good"), the state ends the clause:
                # "Kyle's gone to uni", "diesel's gone through the roof" end nothing
                + r")|(?:'s|'re| has| have)(?: now)? (?:"
                + _ENDED.pattern
                + r")(?=\s*(?:$|[.,;!]|for (?:us|good)\b|by the way\b|btw\b|i'm afraid\b|too\b"
                r"|as well\b))" + ("|" + _OFF if kind == "thing" else "") + ")",
                text,
                re.I,
            )
            or re.match(rf"^(?P<w>(?:{TITLE}\s+)?[A-Z][\w'-]+(?: [A-Z][\w'-]+)?) retired\b", text)
        )
        m = m or _finished(text) or _NOT_RENEWED.match(text) or _ENDED_TERSE.match(text)
        m = m or _THATS_ENDED.match(text) or _DEAD_IDEA.match(text)
        if not m:
            # "Leadership cancelled the code freeze": whoever ends it, it ended.
            ended = _CALLED_OFF_BY.match(text)
            moved = None if ended else _MOVED_OFF_BY.match(text)
            if moved and re.search(r"[A-Z0-9]", moved["v"]):
                ended = moved  # a named thing, not a seat ("moved us off the front row")
            if ended:
                thing = _thing(ended["v"])
                if thing and not _only_when(thing):
                    return thing, ended["rest"].strip(" .,;")
            return None
        # What follows in the same statement is read too ("Tobias retired. Adaeze Obi ...",
        # "Helen Ward's gone, new facilities manager is Steve Kerr").
        tail = text[m.end() :]
        what = m.groupdict().get("w") or m.groupdict().get("v") or ""
        if tail.startswith(",") and m[0].rstrip().endswith(" off") and len(what.split()) < 2:
            return None  # "the heating is off, it's freezing": how a thing is now
        if tail.startswith(","):
            return _thing(what), tail.strip(" ,")
        after = re.match(r"^[^.;!?]*[.;!?]\s+(?P<rest>\S.*)$", tail)
        return _thing(what), after["rest"] if after else ""
    m = (
        _LAPSED.search(text)
        or _OUT_OF_BUSINESS.search(text)
        or _TAKEN_OFF.search(text)
        or _ON_THE_HEAD.search(text)
        or re.search(rf"\b(?:{_RETIRE.pattern})\s+(?P<v>.+)", text, re.I)
    )
    # the thing, by the group its pattern gives it ("shut the Patreon down": ``d``)
    got = next((n for n in ("v", "d", "g", "o", "f") if m and m.groupdict().get(n)), "v")
    if not m or _OTHER_SUBJECT.search(text[: m.start()]):
        # "switched the deliveries to Acme, Brightway stopped doing pallets": someone else
        # gave it up, not the speaker.
        return None
    if _SAID_OF_SOMEONE.search(text[: m.start()]) and text[m.start() :].lower().startswith(
        "retire"
    ):
        return None  # "I'm Lydia, retired engineer in Stoke": who she is, nothing ended
    verb = text[m.start() : m.start(got)].split()
    # ("had to cancel the trial before it started" happened once)
    habitual = (
        bool(verb)
        and verb[-1].lower() in _HABITUAL_ENDS
        and " ".join(verb[-3:-1]).lower() != "had to"
    )
    if verb and verb[-1].lower() in ("drop", "drops", "dropping") and re.match(r"off\b", m[got]):
        return None  # "we're dropping off the kids at nine": a delivery, not an end
    raw = re.sub(r"^(?:using|buying from|buying|with|on|off|from)\s+", "", m[got], flags=re.I)
    doing = re.match(r"^(?P<g>\w+ing)\s+(?=\S)", raw)
    if doing and doing["g"].lower() not in lx.NOT_GERUNDS:
        raw = raw[doing.end() :]  # "stopped doing Saturday hours": the hours, not the doing
        # "stopped teaching at Circomedia": where the doing was is what ended
        raw = re.sub(r"^(?:at|for|with)\s+(?=(?-i:[A-Z]))", "", raw, flags=re.I)
    # "cancel the Saturday trial before it started": the thing ends where a clause begins
    cut = re.split(
        r"\s+(?:before|after|until|because|when|since|as)\s+(?:it|they|we|i|he|she|the)\b",
        raw,
        maxsplit=1,
        flags=re.I,
    )[0]
    thing = _thing(cut)
    if (
        not thing
        or thing.split(" ")[0].lower() in lx.PRONOUN_SUBJECTS
        or re.match(r"(?:a|an|any|some|to|much|many|more|that|this|the idea)\b", raw, re.I)
        # "we now stop at 1222 degrees", "we shut by 6": where it stops, not what ended
        or re.match(r"(?:at|by|around|about|after|before|until|till|short)\b", raw, re.I)
        # "we stop serving breakfast at 11", "we cancel unpaid bookings after two days": a
        # present-tense ending with a time or a rule after it is a schedule or a policy
        or (habitual and re.search(_SCHEDULE, raw, re.I))
        or re.search(r"\b(?:you|your)\b", thing, re.I)
        or _only_when(thing)  # "we're closed on July 4": a day, not a thing that ended
        # "we'll be shut Mondays again": the days it is closed, not a thing that ended
        or (bool(verb) and verb[-1].lower() in ("shut", "closed") and CALENDAR.match(thing))
        or _TO_VALUE.match(raw)  # "we cut the class size to 12": a new value, not an end
    ):
        return None
    rest = raw[raw.find(thing) + len(thing) :] if thing in raw else ""
    rest = re.sub(
        r"^(?:[\s,;:.!?]|\b(?:and|so|anymore|any more|at all|entirely|for good|altogether|"
        r"completely|as an? (?:separate |standalone )?(?:thing|option|service|extra))\b)+",
        "",
        rest,
        flags=re.I,
    ).strip()
    # A clause of its own before it is said too: "we switched to Comotomo bottles, sold the
    # Dr Brown's", "we got a Tascam and sold the H5".
    before = re.sub(r"(?:[\s,;]+|\s+and)\s*$", "", text[: m.start()], flags=re.I)
    if before != text[: m.start()].rstrip() and _clause(before):
        rest = f"{before}. {rest}" if rest else before
    return thing, rest


def _clause(text: str) -> bool:
    """Whether ``text`` says something of its own: three words or more, a verb among them
    after a subject (not "we've" or "I finally" alone)."""
    found = WORD.findall(text)
    return len(found) >= 3 and has_verb(found[1:])


#: What a verb of ending does to a value when a number follows "to" ("cut the fee to £30",
#: "dropped the class size down to 12"): it sets another value (:func:`resets`).
_TO_VALUE = re.compile(
    r"[^,;:.!?]*?\b(?:down |up |back )?to\s+(?:just |only |about |around )?[$£€]?\d", re.I
)


def resets(text: str) -> bool:
    """Whether ``text`` gives something a new value with a verb that otherwise ends things:
    "we've cut appointments to 75 minutes", "they dropped the fee to €35" (an update of the
    value, where "we dropped the fee" alone retires it)."""
    m = re.search(rf"\b(?:{_RETIRE.pattern})\s+(?P<v>\S.*)", text, re.I)
    return bool(m and _TO_VALUE.match(m["v"]))


#: A clause of its own, after a comma, whose subject is a name: its ending is that name's.
_OTHER_SUBJECT = re.compile(r"[,;]\s+(?-i:[A-Z][\w'&-]*)(?:\s+(?-i:[A-Z])[\w'&-]*){0,3}\s+$")
#: Verbs of ending that, in the present, also say what happens each time ("we stop at 6").
_HABITUAL_ENDS = frozenset({"stop", "stops", "cancel", "cancels", "shut", "shuts"})
#: A time or a recurrence: with one of those verbs, a schedule or a policy, not an ending.
_SCHEDULE = (
    r"\b(?:at|after|before|until|till|by|every|each|within|daily|weekly|nightly|weekends?|"
    r"on (?:mon|tues|wednes|thurs|fri|satur|sun)days)\b|\d"
)


# What only a person does when they leave (not "retired as churchwarden": one role of theirs
# ended, the rest of them stays; "ffion's off to uni", "steve's left us for hade edge").
_PERSON_LEAVES = (
    r"resigned\b|retired\b(?!\s+(?:as|from)\b)|hung up (?:his|her|their) boots\b"
    r"|(?:off|away) (?:to|at) (?:uni|university|college)\b|left us\b"
    r"|handed in (?:his|her|their) notice\b|handed (?:his|her|their) notice in\b"
    # "Mathis pulled out", "Gurpreet has gone back to Punjab for good", "Pankaj finished with
    # me last week", "Tasha's last day was Friday"
    r"|pulled out\b(?!\s+of\b)|(?:gone|went|moved) back to (?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?"
    r" for good\b|finished with (?:us|me)\b"
    r"|last day (?:was|is)(?: (?:on )?(?:\w+day|yesterday|today))?\b"
)

_DEPARTED = re.compile(
    rf"^(?P<who>(?:{TITLE}\s+)?(?-i:[A-Z][\w-]+)(?: (?-i:[A-Z][\w-]+))?)(?:'s| has| is| was)? "
    r"(?:(?:left|out of) (?:for (?-i:[A-Z])[\w-]*|to join\b|the (?:company|team|band|firm|practice|"
    r"business|club|school|agency)\b"
    r"|(?:on (?:mon|tues|wednes|thurs|fri|satur|sun)day|last \w+|yesterday|this (?:week|month))\b)"
    rf"|{_PERSON_LEAVES}"
    # "Calum quit.", "Dr Lindqvist has left Velacor", "Barry stood down", "Berrow lost the
    # contract", "Dominik was transferred to Dublin": out of the role, whatever follows.
    r"|quit(?=\s*(?:[.,;!]|$|(?:on|last|yesterday|this|today|in|at|after)\b))"
    r"|left (?-i:[A-Z])[\w&'-]*(?: (?-i:[A-Z])[\w&'-]*)*|(?:stepped|stood) down\b"
    r"|lost (?:the|our|their) (?:contract|account)\b"
    r"|(?:been )?(?:transferred|seconded)\b)"
    r"(?P<rest>.*)$",
    re.I,
)

# What only a person does, said of one whose name is typed in lower case: "sasha handed her
# notice in", "aled has retired".
_ONLY_A_PERSON = re.compile(
    r"^(?!(?:he|she|they|it|we|i|you|the|our|my|this|that)\b)[a-z][\w-]+"
    rf"(?:'s| has| have| is| was)? (?:{_PERSON_LEAVES})",
)

# What a person who left did next, with them as its subject ("Sven left Valley and set up on
# his own at Baydon Equine"): they moved on, still in memory's picture; said whole, it is a fact.
_WENT_ON = re.compile(
    r"^\s*,?\s*and (?!(?:I|we|they|he|she|it|you|the|our|my|that|so|then)\b)[a-z]"
)

# A firm or a person that stopped, named first, whatever the subject reads as: "Cirrus have
# stopped trading", "Collins has packed it in", "Wallfish shut for good last week".
_CLOSED_DOWN = re.compile(
    rf"^(?P<who>(?:{TITLE}\s+)?(?-i:[A-Z][\w'-]+)(?: (?-i:[A-Z][\w'-]+))?) (?:has |have )?"
    r"(?:(?:stopped|ceased) trading|packed it in|sold up|(?:shut|closed) for good"
    r"|(?:cancell?ed|pulled out|dropped out) on (?:us|me)"
    r"|(?:went|gone) (?:bust|under|into (?:administration|liquidation|receivership)))\b"
    r"(?P<rest>.*)$",
    re.I,
)

# "bottomless brunch is off.": off, and nothing after it; said of a thing only ("Dan's off."
# is a day off).
_OFF = (
    r"(?: is| are|'s|'re)(?: now)? off(?: now| this year| for now| this season| the timetable"
    r"| the schedule| the rota| the menu| the list| our list| the cards)?(?: as well| too)?"
    r"(?=\s*(?:$|[.;!,]))"
)

# Said tersely, without "is" or "has": "TC52s replaced.", "RingGo contract ended.", "cwm nant
# closed for good". The clause ends there: "the boiler replaced the old one" says more.
_ENDED_TERSE = re.compile(
    r"^(?:the |our |my )?(?P<w>[^,;:]{2,40}?) (?:(?:contract|lease|"
    + "|".join(sorted(lx.ENDS_WHEN_FINISHED))
    + r") ended"
    r"|replaced|scrapped|discontinued|decommissioned|closed (?:for good|down)|shut down"
    r"|went bust|went under|folded)\s*(?:for good\b)?\s*(?=[.;!]|$)",
    re.I,
)

# "so that's the Friday swimming shuttle finished": the speaker says a thing has ended.
_THATS_ENDED = re.compile(
    r"^(?:so\s+|and\s+)?that's\s+(?:the\s+|our\s+|my\s+)?(?P<w>[^,;:]{2,40}?)\s+"
    r"(?:finished|over|ended|gone|done for)\b",
    re.I,
)

# "Gardening club has finished.", "the deal is over, new manager", "Mepal is finished for us":
# said of the thing alone, nothing after it but a comma or "for us".
_FINISHED = re.compile(
    r"^(?:the |our |my )?(?P<w>[^,;:]+?)(?: (?:is|are|has|have)|'s|'re)(?: now)?"
    r" (?P<s>finished|over|done)"
    r"(?=\s*(?:$|[.,;!]|for (?:us|good|now)\b|sadly\b|i'm afraid\b))",
    re.I,
)


_GERUND_AS_SUBJECT = re.compile(
    r"\b(?:is|are|was|were|costs?|needs?|takes?|means?|makes?|has|have|gets?|helps?|saves?)\b",
    re.I,
)

#: A plan given up: "the Friday DJ idea is dead too", "the loft conversion plan's dead".
_DEAD_IDEA = re.compile(
    r"^(?:the |our |my )?(?P<w>[^,;:]+?) (?:idea|plan)(?: is|'s) (?:dead|shelved|off)"
    r"(?: too| as well| now)?(?=\s*(?:$|[.,;!]))",
    re.I,
)


def _finished(text: str) -> re.Match[str] | None:
    """A thing said to be over, finished or done when it is something that recurs or an
    arrangement (a club, a deal, a named place), not a piece of work or today's meeting."""
    m = _FINISHED.match(text)
    if m is None:
        return None
    words = m["w"].split()
    if re.match(r"\s*for good\b", m.string[m.end() :], re.I):
        return m  # "the farm shop's finished for good": whatever it was, it ended
    if m["s"].lower() == "over":
        return None if words[-1].lower() in lx.OF_THE_DAY else m  # "the deal is over"
    # "Mepal is finished for us"; not "Monday is done"
    named = len(words) == 1 and words[0][0].isupper() and words[0] not in lx.NAME_STOP
    # "Pie day is finished": a day named for what happens on it, not "the day is done"
    event = (
        len(words) >= 2
        and words[-1].lower() in ("day", "night", "morning", "evening")
        and words[0].lower() not in lx.STOP_WORDS
        and not CALENDAR.match(words[0])
        and m["s"].lower() == "finished"
    )
    return m if words[-1].lower() in lx.ENDS_WHEN_FINISHED or named or event else None


# "Jess moved physios", "we've switched banks", "I changed dentists": a plural after the verb
# and nothing more, so the one in memory is no longer theirs.
_CHANGED_ALL = re.compile(
    rf"^(?:(?:{TITLE}\s+)?[A-Z][\w'-]*\s+|i\s+|we\s+|i've\s+|we've\s+)?(?:has\s+|have\s+)?"
    r"(?:changed|switched|moved|swapped)\s+(?P<v>[a-z]{3,}?)s\s*[.!]?$",
    re.I,
)

_NOT_RENEWED = re.compile(
    r"^(?:the |our |my )?(?P<w>[^,;:]+?) (?:didn't|did not|won't|will not|isn't going to) renew\b"
    # said with no subject, what is not renewed after it: "Not renewing Sentry in March."
    r"|^not renewing (?:the |our |my )?(?P<v>[^,;:.!?]+?)"
    r"(?=\s*(?:$|[,;.!?]|(?:when|after|at|in|this|next|once)\b))",
    re.I,
)
_CALLED_OFF_BY = re.compile(
    r"^(?:the\s+)?[^,;:]{2,40}? (?:has |have )?(?:cancel+ed|scrapped|axed|discontinued|called off)"
    r"\s+(?:the |our |its |their )?(?P<v>[^,;.!?]+)(?P<rest>.*)$",
    re.I,
)

# "The council migrated us off Oracle": whoever moved the speaker off a thing, they are off it.
# A named thing only (a capital or a digit): "the usher moved us off the front row" is a seat.
_MOVED_OFF_BY = re.compile(
    r"^(?:the\s+)?[^,;:]{2,40}? (?:has |have )?(?:migrated|moved|switched|transitioned) "
    r"(?:us|me|them|everyone|everybody|the team|our team)\s+(?:away\s+)?off\s+"
    r"(?:the |our )?(?P<v>[^,;.!?]+?)"
    r"(?P<rest>\s+(?:over|during|in|on|at|last|this|after|before|since|until|when)\b.*|[,;.!?].*|)$",
    re.I,
)

# "We've taken spin off the timetable": what is no longer offered.
# "we've knocked the saturday beginners class on the head", "shut the Patreon down", "had to
# let Gosia go": ended, the thing in between (each verb with its own particle).
_ON_THE_HEAD = re.compile(
    r"\b(?:knocked\s+(?P<v>[^,;.]+?)\s+on\s+the\s+head"
    r"|(?:shut|closed|wound)\s+(?P<d>[^,;.]+?)\s+down"
    # (not "let the kids go to the park": the letting go ends the clause)
    r"|let\s+(?P<g>[^,;.]+?)\s+go(?=\s*(?:$|[,;.!?]|(?:because|as|since|after|last|this|for good|"
    r"in the end|recently|today|yesterday)\b))"
    r"|phased\s+(?P<o>[^,;.]+?)\s+out|called\s+(?P<f>[^,;.]+?)\s+off)\b(?P<rest>.*)",
    re.I,
)

_TAKEN_OFF = re.compile(
    r"\b(?:taken|took|take|taking)\s+(?P<v>[^,;.]+?)\s+off\s+(?:the\s+|our\s+)?(?:timetable|"
    r"menu|schedule|rota|list|website|price list|books)\b(?P<rest>.*)",
    re.I,
)

# "we're out of the shake business": a line of trade given up.
_OUT_OF_BUSINESS = re.compile(
    r"\bout\s+of\s+the\s+(?P<v>[\w -]+?)\s+(?:business|game|trade)\b(?P<rest>.*)", re.I
)

# "I let the Trados licence expire", "we let the contract lapse": what was let go.
_LAPSED = re.compile(
    r"\blet\s+(?:the\s+|my\s+|our\s+)?(?P<v>.+?)\s+(?:expire|lapse|run out)\b(?P<rest>.*)", re.I
)


def _only_when(thing: str) -> bool:
    """Whether ``thing`` names a day or a date only ("July 4", "the Friday after"), not a
    thing that happens on one ("Saturday hours")."""
    words = thing.split()
    return bool(words) and all(
        _WHEN.fullmatch(w)
        or re.fullmatch(r"\d{1,4}(?:st|nd|rd|th)?", w)  # not "5D": a camera, not a day
        or w.lower() in ("on", "the", "and", "of", "after", "before")
        for w in words
    )


def mentions(entry: str, thing: str) -> bool:
    """Whether an entry names ``thing``: every content word of it, as whole words."""
    want = _stems(thing, generic=False)
    return bool(want) and want <= _stems(entry, generic=True)


@functools.lru_cache(maxsize=65536)
def _stems(text: str, *, generic: bool) -> frozenset[str]:
    words = WORD.findall(strip_source(text))
    return frozenset(root(w) for w in words if generic or w.lower() not in _GENERIC)


_GENERIC = lx.STOP_WORDS | lx.words(
    "job account subscription plan tool service app thing stuff membership store box use using "
    "licence license licences licenses subscriptions memberships contract contracts deal offer "
    "arrangement kit gear equipment setup "
    "hours hour session sessions time times slot slots"
)


def uses(entry: str, thing: str) -> bool:
    """Whether an entry says ``thing`` is in use ("We use MySQL 5.7 for ...")."""
    body = strip_source(entry)
    return bool(
        re.search(rf"(?:{_USE.pattern})\s+(?:the\s+)?{re.escape(thing)}\b", body, re.I)
    ) and not re.search(r"\b(?:switched|moved|migrated) from\b", body, re.I)


_KINDS_OF_CHANGE = frozenset({"weekday", "time", "date", "number", "class", "version"})


# "instead of Booker", "rather than the Hilton": the name said to be replaced.
_IN_PLACE_OF = re.compile(r"\b(?:instead of|rather than)\s+(?:the\s+)?(?-i:([A-Z][\w'&+-]*))", re.I)


def _put_in_place_of(new: Frame, old: Frame) -> bool:
    """Whether ``new`` names, as the one it replaces, a name that ``old`` holds and says none
    of its own names that ``old`` holds, of no other owner ("Buying from Costco now instead of
    Booker" of "Stock comes from Booker on Sandringham Road")."""
    replaced = {w.lower() for w in _IN_PLACE_OF.findall(new.text)} & old.values
    if not replaced or (new.values - replaced) & old.values:
        return False
    mine, theirs = read_slot(new.text).owner, read_slot(old.text).owner
    return not (mine and theirs and mine != theirs)


# Who holds a role: "Geoffrey Pell is our steeple keeper", "Alan Brewer is steeple keeper
# now", "our new secretary is Doreen Walsh", "Sam Okoro took over training officer" (a role of a
# few lower-case words, a name in capitals).
_NAMED = r"(?-i:[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){0,3})"
_A_ROLE = r"(?-i:[a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,3}?)"
# From when it holds may follow: "Deano is crew chief from this season", "... as of May".
_SINCE = (
    r"(?:\s+(?:now|(?:from|since|as of|starting)\s+(?:(?:this|next|the)\s+)?\w+"
    r"|this\s+(?:season|year|term|month|week)|at the (?-i:AGM)|at the last meeting"
    r"|from the week (?:of|after) [\d-]+))?"
)
_HOLDS_ROLE = re.compile(
    rf"^(?:(?P<who>{_NAMED})(?:\s+is|\s*'s|\s+(?:has\s+)?(?:took|taken)\s+over(?:\s+as)?)\s+"
    rf"(?:now\s+)?(?:(?:our|the|my|their|his|her)\s+)?(?:new\s+)?(?P<role>{_A_ROLE}){_SINCE}"
    rf"|(?:our|the|my|their)\s+(?:new\s+)?(?P<role2>{_A_ROLE})\s+is\s+(?:now\s+)?"
    rf"(?P<who2>{_NAMED}){_SINCE})\s*$",
    re.I,
)


@functools.lru_cache(maxsize=65536)
def _first_clause(text: str) -> str:
    """An entry's first clause, without its source and the speaker's name before it."""
    body = SPEAKER_NAMED.sub("", strip_source(text))
    return re.split(r"[.;,!?]", body, maxsplit=1)[0].strip()


def _role_of(text: str) -> tuple[str, str] | None:
    """(role, who) of a statement whose first clause says who holds a role, else None."""
    m = _HOLDS_ROLE.match(_first_clause(text))
    if m is None:
        return None
    role, who = (m["role"], m["who"]) if m["who"] else (m["role2"], m["who2"])
    return " ".join(role.lower().split()), who


#: Who does a task, said as the doing of it: "Darren takes the pitch money at the gate".
_DOES_TASK = re.compile(
    rf"^(?P<who>{_NAMED})\s+(?:now\s+)?(?P<task>(?:takes|does|runs|handles|covers|collects)"
    r"\s+(?:the|our)\s+(?-i:[a-z][a-z'-]*)(?:\s+(?-i:[a-z][a-z'-]*)){1,6})\s*(?:now)?$",
)


def _role_taken(new: Frame, old: Frame) -> bool:
    """Whether ``new`` says someone else now holds the role ``old`` gives someone ("Alan
    Brewer is steeple keeper now" after "Geoffrey Pell is our steeple keeper"), or does the
    task the entry gives someone, word for word ("Kelly takes the pitch money at the gate"
    after "Darren takes the pitch money at the gate": one person does it at a time)."""
    ours, theirs = _role_of(new.text), _role_of(old.text)
    if ours is None or theirs is None or ours[0] != theirs[0]:
        return _task_taken(new.text, old.text)
    if ours[1].casefold() in old.text.casefold():
        return False  # the same person
    return new.update or bool(_HOLDS_FROM.search(new.text))


def _task_taken(new_text: str, old_text: str) -> bool:
    ours, theirs = (
        _DOES_TASK.match(_first_clause(new_text)),
        _DOES_TASK.match(_first_clause(old_text)),
    )
    return bool(
        ours
        and theirs
        and ours["task"].lower() == theirs["task"].lower()
        and ours["who"].casefold() != theirs["who"].casefold()
    )


#: A role holder said with when or how they came to hold it, not only who holds it.
_HOLDS_FROM = re.compile(
    r"\b(?:now|new|took over|taken over|from (?:this|next|the week)|as of|since|starting"
    r"|this season|this year|this term)\b",
    re.I,
)


_INSTEAD_OF = re.compile(r"\b(?:instead of|rather than|in place of)\s+(?P<v>[^,;.!?()]+)", re.I)


def names_what_it_replaced(text: str, entry: str) -> bool:
    """Whether ``entry`` may be what ``text`` replaced: ``text`` names no replaced thing
    ("instead of lime", "rather than Tuesdays"), or ``entry`` shares a word with it."""
    m = _INSTEAD_OF.search(text)
    if m is None:
        return True
    words = {stem(w) for w in WORD.findall(m["v"]) if w.lower() not in lx.STOP_WORDS}
    return not words or bool(words & {stem(w) for w in WORD.findall(entry)})


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
    if _put_in_place_of(new, old):
        return True  # "buying from Costco now instead of Booker" after "stock comes from Booker"
    if _role_taken(new, old):
        return True  # "Alan Brewer is steeple keeper now" after "Geoffrey Pell is our ..."
    if not names_what_it_replaced(new.text, old.text):
        return False  # "with forced rhubarb instead of lime" replaces nothing about Recife
    if (new.update or dated_alike(new.text, old.text)) and refills(new.text, old.text):
        return True  # "Opsgenie handles alerts now" after "Paging goes through PagerDuty"
    if refills(new.text, old.text) and _one_subject(new.text, old.text):
        return True  # "house dry food is Skinner's" after "house dry food is Burns Original"
    if new.update and turns_around(new.text, old.text):
        return True  # "large Safari uploads work now" after "uploads ... fail on Safari"
    dotted = any("." in v for _, v in new.versions + old.versions)
    if (
        dotted
        and version_change(new, old)
        and (new.same_owner(old) or "we" in new.owner + old.owner)
    ):
        return True  # "Kenji upgraded Airflow to 2.9" after "we schedule with Airflow 2.6"
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
    if new.reverses and old.decided and _reversal(new, old, shared):
        return True  # "changed my mind: the vicar did it after all" after "I decided ..."
    if new.old & old.values and new.owner and new.same_owner(old):
        return True  # "Marcus is moving from DACH to the Nordics": his old value, named
    if _names_replaced(new, old):
        return True  # "consolidator is now Kuehne+Nagel, no longer Gefco" after "... at Gefco"
    if new.purpose and old.purpose and not new.purpose & old.purpose:
        return False  # another purpose: another fact ("tool X for builds", "tool Y for docs")
    if new.update and _slot_change(new, old, shared):
        return True  # "the core facility moved our slot to Mondays" after "our slot is Thursday"
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


_SLOT_KINDS = _KINDS_OF_CHANGE | {"name"}


def _one_subject(new_text: str, old_text: str) -> bool:
    """Whether two statements open on the same subject of two words or more ("house dry
    food", "home kit colour"): a slot said again with another value needs no word of change."""
    new, old = read_slot(new_text), read_slot(old_text)
    return len(new.head) >= 2 and new.head == old.head


def _names_replaced(new: Frame, old: Frame) -> bool:
    """Whether ``new`` names, as what it replaces ("instead of Festkogl", "no longer Gefco"),
    a name ``old`` holds, and gives a name of its own in its place: the name is what both are
    about, whatever else their words say. Not a day, a month or a number (those are slots of
    many things: "instead of Fridays" is read by the slot rules), and not between two
    people's facts."""
    named = {v for v in new.old & old.values if _is_name(v) and not _WHEN.search(v)}
    if not named or not {v for v in new.values - old.values if _is_name(v)}:
        return False
    if new.owner and old.owner and not new.same_owner(old):
        return "we" in new.owner + old.owner and not set(new.owner + old.owner) & named
    return True


def _reversal(new: Frame, old: Frame, shared: frozenset[str]) -> bool:
    """Whether a statement that takes a decision back is about ``old``'s decision: compatible
    owners, and a word or a name in common that is not generic."""
    if new.owner and old.owner and not new.same_owner(old) and "we" not in new.owner + old.owner:
        return False
    common = {w for w in shared if w not in lx.GENERIC_WORDS and len(w) > 2}
    return bool(common or {v for v in new.values & old.values if _is_name(v)})


def _slot_change(new: Frame, old: Frame, shared: frozenset[str]) -> bool:
    """Whether ``new``, said as an update, gives another value to what ``old`` states: they
    share a word that is not generic (the slot: "slot", "budget", "walk-ins"), hold values of a
    kind they share (days, times, dates, amounts, names) that differ both ways, and belong to
    compatible owners: the same, a person and a thing, or a named owner the other one names."""
    # (not the name of whom both are facts: "Chloe's now senior tech" and "Chloe's taking
    # over training Jade" share only Chloe; but "Quiz has moved to Thursdays" is of "Quiz
    # night's a Tuesday")
    same = new.owner and new.owner == old.owner
    whose = {stem(w) for o in new.owner for w in o.split()} if same else set()
    slot = {w for w in shared if w not in lx.GENERIC_WORDS and len(w) > 2 and w not in whose}
    if not slot or not new.kinds & old.kinds & _SLOT_KINDS:
        return False
    if not (new.values - old.values and old.values - new.values):
        return False
    if new.kinds & old.kinds & _SLOT_KINDS == {"number"} and not _measured_alike(new, old):
        return False  # "they eat two blocks" gives no price: "swan £295, logo block £180"
    if old.subject and not old.subject <= new.skeleton | new.subject | new.values:
        return False  # another thing: "the ledger service is on port 9100", "billing ... 7443"
    if new.owner and old.owner and not new.same_owner(old):
        named = set(new.owner) <= old.values or set(old.owner) <= new.values
        return named and not {"we"} & (set(new.owner) | set(old.owner))
    return True


def _measured_alike(new: Frame, old: Frame) -> bool:
    """Whether two statements whose values are numbers may hold numbers of one kind: not when
    one gives a price (:func:`.slots.measures`) and the other only a number said in words,
    which counts something ("they eat two blocks")."""

    def counts(f: Frame) -> bool:  # only numbers said in words, and no price
        worded = any(v.isalpha() and v in lx.NUMBER_WORDS for v in f.values)
        return worded and not any(m.kind == "money" for m in measures(f.text))

    def prices(f: Frame) -> bool:
        return any(m.kind == "money" for m in measures(f.text))

    return not ((counts(new) and prices(old)) or (counts(old) and prices(new)))


@functools.lru_cache(maxsize=65536)
def keys(entry: str) -> frozenset[str]:
    """The words, values and person of an entry: :func:`supersedes` can only find an entry
    outdated by a statement that shares one of them, so that the others need not be
    compared (review stays cheap as memory grows)."""
    f = entry_frame(entry)
    owner = {"@" + " ".join(f.owner)} if f.owner and f.owner != ("we",) else set()
    slot = read_slot(entry)
    cats = {f"#{c}" for c in slot.cats} | slot.words | ({slot.first} if slot.first else set())
    return f.skeleton | f.values | f.old | owner | {t for t, _ in f.versions} | cats


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
