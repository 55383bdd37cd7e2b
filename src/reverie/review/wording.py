"""How a statement is written as a memory entry (SPEC R6): pure functions, no I/O.

An entry must say the same thing as the clause it comes from, read by someone who was not in
the conversation. Rewording is where meaning gets lost ("Melanie loves to.", "we" become "the
team"), so the rules reword as little as they can:

* a clause about the speaker ("I ...", "my ...", or "Passed the exam" with no subject) is put
  in the third person only where that is mechanical: the subject becomes the speaker's name
  and its verb agrees with it; later "I", "me", "my" become "they", "them", "their";
* a person's single-valued attribute stated as subject, verb and value alone is written the
  canonical way of :data:`.lexicon.CANONICAL` ("I moved to Berlin last month" -> "Sam lives
  in Berlin"), so that later statements of it meet the entry;
* anything else that speaks in the first or second person ("we", "our", "you", or an "I" that
  is not the subject) is kept as said, after the speaker's name: ``Sam: we deploy on
  Tuesdays.``; a clause about a thing or a named person is kept as said;
* relative days ("today", "last month") become dates from the message's time, so that the
  entry stays true when it is read later.
"""

from __future__ import annotations

import datetime as dt
import re

from . import lexicon as lx
from .frames import is_verb, past, subject_name
from .statements import Statement

__all__ = ["absolute_dates", "finish", "render", "third_person"]

_FIRST_OR_SECOND = re.compile(r"\b(?:we|we're|we've|we'll|we'd|our|ours|us|you|your|yours)\b", re.I)
_INNER_I = (
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
)
_CONTRACTED = {
    "i'm": "is",
    "i am": "is",
    "i've": "has",
    "i have": "has",
    "i'll": "will",
    "i will": "will",
    "i'd": "would",
    "i would": "would",
    "i was": "was",
}


def _conjugate(verb: str) -> str | None:
    """The third-person form of the verb after "I", or None when it is not clearly a verb."""
    low = verb.lower()
    if low in lx.IRREGULAR_PRESENT:
        return lx.IRREGULAR_PRESENT[low]
    if low in lx.NOT_VERBS or not re.fullmatch(r"[a-z][a-z'-]*", low):
        return None
    if low in lx.MODALS or past(low) or low.endswith("n't"):
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(text: str, speaker: str) -> str | None:
    """``text`` (about the speaker) in the third person, or None when that is not mechanical.

    "I prefer my tea black" -> "Sam prefers their tea black"; "my kids are excited" ->
    "Sam's kids are excited"; "Passed the B1 exam" -> "Sam passed the B1 exam".
    """
    if _FIRST_OR_SECOND.search(text):
        return None
    m = re.match(r"^my\s+", text, re.I)
    if m:
        head, rest = f"{speaker}'s", text[m.end() :]
    else:
        m = re.match(r"^(i'm|i am|i've|i have|i'll|i will|i'd|i would|i was)\b\s*", text, re.I)
        if m:
            head, rest = f"{speaker} {_CONTRACTED[m.group(1).lower()]}", text[m.end() :]
        else:
            m = re.match(r"^i\s+", text, re.I)
            words = (text[m.end() :] if m else text[0].lower() + text[1:]).split(" ")
            for i, word in enumerate(words):
                if word.lower() in lx.ADVERBS or word.lower().endswith("ly"):
                    continue
                verb = _conjugate(word)
                if verb is None:
                    return None
                if not m and verb != word:
                    return None  # no subject: only a past tense reads as "I did it"
                words[i] = verb
                head, rest = f"{speaker} {' '.join(words[: i + 1])}", " ".join(words[i + 1 :])
                break
            else:
                return None
    if head.endswith(" is"):
        # "I'm Ade, me and my partner Lou run ...": Ade is the subject of what follows
        rest = re.sub(rf"^({re.escape(speaker)}),\s+me and\s+", r"\1 and ", rest, flags=re.I)
    for pattern, repl in _INNER_I:
        rest = pattern.sub(repl, rest)
    # "... Tennessee. they report to ...": a sentence still opens with a capital
    rest = re.sub(r"(?<=[.!?] )the(?=y\b|m\b|ir\b|mselves\b)", "The", rest)
    if head.endswith(" is") and rest.lower().startswith(speaker.lower()):
        # "I'm Kofi Mensah, staff engineer at ..." said by Kofi: the name is the subject,
        # written as a name when typed in lower case ("im nadia, community manager").
        rest = speaker + rest[len(speaker) :]
        named = re.match(r"^[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2}", rest)
        if named and ("," in rest or rest[named.end() :].startswith(" and ")):
            # "Ade and their partner Lou run the Crown": the name opens the subject
            return _name_as_subject(rest, named.group(0))
        return None if named and named.group(0) == rest.strip() else f"{head} {rest}"
    return f"{head} {rest}".strip()


_THEY = {"they're": "is", "they are": "is", "they've": "has", "they have": "has"}
_THEY.update({"they'll": "will", "they'd": "would", "they were": "was"})


def _name_as_subject(text: str, name: str) -> str:
    """ "Marnie, they make soap" -> "Marnie makes soap": the speaker's name said before what
    they do ("I'm Marnie, I make soap") is its subject."""
    m = re.match(
        rf"^{re.escape(name)},\s+(they're|they are|they've|they have|they'll|they'd|"
        r"they were|they)\s+(\S+)",
        text,
    )
    if m is None:
        # "Lena, the new designer" ("I'm Lena, the new designer"): who they are, said after
        # their name, with no verb of its own, is what they are.
        role = re.match(
            rf"^{re.escape(name)},\s+((?:the|a|an|our|your|their|one of)\s+[^,;]+?)\W*$", text, re.I
        )
        if role and not any(is_verb(w) for w in role.group(1).split()):
            return f"{name} is {role.group(1)}"
        return text
    said = m.group(1).lower()
    if said != "they":
        return f"{name} {_THEY[said]} {text[m.start(2) :]}"
    verb = _conjugate(m.group(2))
    return f"{name} {verb}{text[m.end(2) :]}" if verb else text


def _canonical(st: Statement, who: str) -> str | None:
    """ "I moved to Berlin last month" -> "Sam lives in Berlin" (see :data:`.lexicon.CANONICAL`);
    ``who`` is the speaker for "I", or the name the clause starts with."""
    cls = st.frame.cls
    if cls not in lx.CANONICAL:
        return None
    verbs = "|".join(re.escape(v) for v in sorted(lx.SINGLE_VALUED[cls], key=len, reverse=True))
    m = re.match(
        rf"^(?:I|I've|I have|I'm|I am|{re.escape(who)})?(?:\s+(?:\w+ly|now|just|also))*\s*"
        rf"(?:{verbs})\s+(?P<v>(?-i:[A-Z])[\w.'&-]*(?:\s+(?:of\s+|the\s+|de\s+)?"
        rf"(?-i:[A-Z])[\w.'&-]*){{0,3}})(?P<tail>.*)$",
        st.text,
        re.I,
    )
    if not m or not _only_time(m["tail"]):
        return None
    return lx.CANONICAL[cls].format(s=who, v=m["v"])


_TIME_TAIL = re.compile(
    r"^(?:\s*,)?\s*(?:(?:last|this|next) (?:week|month|year|spring|summer|autumn|fall|winter|"
    r"quarter)|recently|lately|a (?:few |couple of )?(?:days|weeks|months|years) ago|"
    r"(?:\w+ )?(?:days|weeks|months|years) ago|in (?:\d{4}|"
    + "|".join(lx.MONTHS)
    + r")|over the weekend|yesterday|today|for good|now)?\s*$",
    re.I,
)


def _only_time(tail: str) -> bool:
    return bool(_TIME_TAIL.match(tail))


def _month(day: dt.date, shift: int) -> str:
    month = day.month - 1 + shift
    year = day.year + month // 12
    return dt.date(year, month % 12 + 1, 1).strftime("%B %Y")


def absolute_dates(text: str, when: float) -> str:
    """Relative days made absolute with the message's date (UTC): "today" -> "on 2024-05-03",
    "last month" -> "in April 2024"."""
    day = dt.datetime.fromtimestamp(when, dt.UTC).date()

    def on(shift: int) -> str:
        return f"on {(day + dt.timedelta(days=shift)).isoformat()}"

    table = {
        "today": on(0),
        "tonight": on(0),
        "this morning": on(0),
        "this afternoon": on(0),
        "this evening": on(0),
        "yesterday": on(-1),
        "tomorrow": on(1),
        "last week": f"in the week before {day.isoformat()}",
        "this week": f"in the week of {day.isoformat()}",
        "next week": f"in the week after {day.isoformat()}",
        "last month": f"in {_month(day, -1)}",
        "this month": f"in {_month(day, 0)}",
        "next month": f"in {_month(day, 1)}",
        "last year": f"in {day.year - 1}",
        "this year": f"in {day.year}",
        "next year": f"in {day.year + 1}",
    }
    pattern = re.compile(
        r"(?:\b(?:on|in)\s+|\b(?P<p>from|since|until|till|by|starting|as of|before|after)\s+)?"
        r"(?P<of>\bthe\s+(?:first|1st|start|beginning|middle|end)\s+of\s+)?"
        r"\b(?P<w>" + "|".join(table) + r")\b(?P<s>'s)?",
        re.I,
    )

    def repl(m: re.Match[str]) -> str:
        said = table[m["w"].lower()]
        lead = f"{m['p']} " if m["p"] else ""
        if m["of"] and said.startswith("in "):
            # "from the first of next month" -> "from 1 April 2026", not "... of in April"
            part = m["of"].split()[1].lower()
            period = said[len("in ") :]
            if part in ("first", "1st") and not period.isdigit():
                return f"{lead}1 {period}"
            return f"{lead}the {part} of {period}"
        if m["of"]:
            return m.group(0)  # "the end of this week": left as said
        if m["p"]:
            # "from this week" -> "from the week of 2024-05-03", not "from in the week of"
            bare = re.sub(r"^(?:on|in) ", "", said)
            return f"{m['p']} {'the ' + bare if bare.startswith('week') else bare}"
        # "yesterday's migration" -> "the 2024-05-02 migration"
        return f"the {said.split(' ')[-1]}" if m["s"] else said

    return pattern.sub(repl, text)


# Asking to be told, before the question itself: "remind me how ...", "do you know what ...".
_TELL_ME = re.compile(
    r"^(?:(?:so|ok|okay|and|hey|sorry)[,:]?\s+)*(?:(?:can|could)\s+you\s+)?(?:remind\s+me|"
    r"tell\s+me|do\s+you\s+(?:know|remember)|remember)\s+",
    re.I,
)
# "what's X", "who is X", "how long is X": X is what the question is about.
_ASKS_OF = re.compile(
    r"^(?:(?:what|who|where|when|which)(?:'s|\s+is|\s+are|\s+was|\s+were)"
    r"|how\s+(?:long|much|many|big|far|old|often)\s+(?:is|are|was|were))\s+"
    r"(?!(?:you|we|they|i|he|she|it)\b)",  # not "what are you doing", a verb's question
    re.I,
)
# "how much we charge for ...", "when we open": a clause, said as a question ("how much" as
# "what").
_ASKS_CLAUSE = re.compile(
    r"^(?P<w>how\s+much|how\s+many|what|when|where|who|which)\s+"
    r"(?=(?:we|i|they|he|she|the|our|my)\b)",
    re.I,
)


def topic(question: str) -> str | None:
    """What ``question`` asks about, as a phrase that asks nothing ("what's our van's
    mileage again, for the insurance?" -> "our van's mileage"; "remind me how much we pay
    the cleaner?" -> "what we pay the cleaner"), or None when it has no such shape."""
    q = question.strip().rstrip("?!. ").strip()
    q = re.sub(r",\s*for\s+[^,]*$", "", q, flags=re.I)  # ", for the insurance form"
    q = re.sub(r"[,\s]+again$", "", q, flags=re.I).strip()
    told = _TELL_ME.match(q)
    q = q[told.end() :] if told else q
    asks = _ASKS_OF.match(q)
    if asks:
        q = q[asks.end() :]
    else:
        clause = _ASKS_CLAUSE.match(q)
        if clause is None or told is None:
            return None
        lead = "what" if clause["w"].lower().startswith("how") else clause["w"].lower()
        q = f"{lead} {q[clause.end() :]}"
    q = re.sub(r"[,\s]+again$", "", q, flags=re.I).strip(" ,")
    return q if len(q.split()) >= 2 or (q and q[0].isupper()) else None


# A question put the other way round ("Which three days is Bea in?", "What time do you
# open on Sundays?", "Is Bea in on Mondays?"): what it asks (or nothing), the verb, then the
# words of who or what it asks about and the rest.
_INVERTED = re.compile(
    r"^(?P<wh>(?:what|which|when|where|who|whose|how)(?:\s+[\w'-]+){0,3}?\s+)?"
    r"(?P<aux>is|are|was|were|do|does)\s+(?P<rest>.+)$",
    re.I,
)
# Where the words of who or what a question asks about end: a word that starts a phrase of its
# own ("Bea | in on Mondays", "the kids | back at school", "the shop | open on Sundays").
_PREPOSITIONS = lx.words("in on at for to from with by of about back after before over into")
_AFTER_SUBJECT = _PREPOSITIONS | lx.words(
    "under near off out up down next every this that these those open closed free available "
    "ready ok okay right still also always usually normally ever now today tomorrow"
)
_DETERMINERS = lx.words("the your our his her their my a an")


def indirect(question: str) -> str | None:
    """``question`` said as a clause that asks nothing, the way one reports it ("Which three
    days is Bea in?" -> "which three days Bea is in", "What does the team look after?" ->
    "what the team looks after", "Is Bea in on Mondays?" -> "whether Bea is in on Mondays"),
    or None when it has no such shape. Memory keeps an answer with what it answered, not a
    question (R8)."""
    q = re.sub(
        r"^(?:(?:and|so|ok|okay|sure|great|thanks)[,.!]?\s+)+", "", question.strip(), flags=re.I
    )
    q = q.rstrip("?!. ").split(",")[0].strip()  # (not an aside: "..., roughly?")
    m = _INVERTED.match(q)
    if m is None or re.search(r"[?;:]", q):
        return None
    aux = m["aux"].lower()
    words = m["rest"].split()
    n = 1 if words[0].lower() in _DETERMINERS else 0
    if aux in ("do", "does"):
        # who or what, then the verb: a pronoun or a name and the word after it ("you | open |
        # on Sundays"); "the" and the words up to a preposition, the last of them the verb
        # ("the running club | meet", "the team | look | after")
        end = n + 1
        if n:
            while end < len(words) and words[end].lower() not in _PREPOSITIONS:
                end += 1
            end -= 1
        subject, verb, rest = words[:end], words[end : end + 1], words[end + 1 :]
        if len(subject) <= n or not verb or not re.fullmatch(r"[a-z]+", verb[0]):
            return None  # "Who does the bookings?": "does" is the verb itself
        said = [*subject, _third_person_verb(verb[0]) if aux == "does" else verb[0]]
    else:
        while n < len(words) and not _ends_subject(words[n]):
            n += 1
        subject, rest = words[:n], words[n:]
        said = [*subject, aux]
    if not subject or subject[0].lower() in ("there", "it", "that", "this"):
        return None  # "Is that right?", "Is there parking?"
    wh = m["wh"].strip().lower() if m["wh"] else "whether"
    return " ".join([wh, *said, *rest])


def _ends_subject(word: str) -> bool:
    """Whether ``word``, after a form of "be" and who or what a question asks about, starts
    what it says of them: a preposition, a word of how it is ("the shop | open"), a participle
    ("the dogs | called")."""
    low = word.lower()
    return low in _AFTER_SUBJECT or (len(low) > 4 and low.endswith(("ed", "ing")))


def _third_person_verb(verb: str) -> str:
    """ "look" -> "looks", "watch" -> "watches", "carry" -> "carries", "have" -> "has"."""
    low = verb.lower()
    if low == "have":
        return "has"
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def finish(text: str) -> str:
    """One sentence: single spaces, a capital where a sentence starts, one full stop."""
    text = re.sub(r"\s+", " ", text).strip().rstrip(",;:-–—")
    text = re.sub(r"[.!…]+$", "", text).strip()
    if not text:
        return ""
    first = text.split(" ", 1)[0]
    if first.lower() in lx.STOP_WORDS or first.lower() in lx.PRONOUN_SUBJECTS:
        text = text[0].upper() + text[1:]
    return text + "."


def render(st: Statement, *, listener: str | None, when: float) -> str:
    """The entry for ``st`` (without its source), said at ``when`` to ``listener``."""
    text = absolute_dates(st.text, when)
    if st.kind == "answer":
        # A verbless answer is kept with the question it answers, both as they were said; an
        # answer to the speaker's own question (a correction of the assistant's reply) with
        # what the question was about, since memory holds no question the user asked (R8).
        question = absolute_dates(st.meta["question"], when)
        if st.meta.get("own"):
            about = topic(question)
            return finish(f"{st.speaker}, on {about}: {text}" if about else f"{st.speaker}: {text}")
        reported = indirect(question)
        if reported:
            return finish(f"{st.speaker}, asked {reported}: {text}")
        return finish(f'{st.speaker}, asked "{question}": {text}')
    if st.role != "user":
        if listener:
            text = re.sub(r"\byour\b", f"{listener}'s", text, flags=re.I)
            text = re.sub(r"\byou're\b", f"{listener} is", text, flags=re.I)
            text = re.sub(r"\byou\b", listener, text, flags=re.I)
        return finish(text)
    speaker = st.speaker
    if st.subject_kind in ("i", "implicit", "name"):
        who = speaker if st.subject_kind != "name" else subject_name(st.text)
        canonical = _canonical(st, who) if who else None
        if canonical:
            return finish(canonical)
    if st.subject_kind in ("i", "implicit"):
        third = third_person(text, speaker)
        if third:
            return finish(third)
    # The speaker's own words, named: "I"/"my" in them, or no subject at all ("buying from
    # Blaen Onneu now").
    own = _FIRST_OR_SECOND.search(text) or re.search(r"\b(?:I|me|my|mine)\b", text)
    if own or st.subject_kind == "implicit":
        return finish(f"{speaker}: {text[0].upper() + text[1:]}")
    return finish(text)
