"""Names as a batch spells them, for the offline reviewer (SPEC R6): pure.

Many people type in lower case ("our vet is dr sian rees at tywi vets"), while the assistant
and the memory written before spell the same names with capitals ("Dr Sian Rees at Tywi
Vets"). The rules take a capital as the mark of a name (:mod:`.slots`, :mod:`.frames`), so a
lower-case message is read with the names it shares with the rest of the batch and with
memory spelled as they are spelled there. Only the case of letters changes: every offset in
the message stays where it was, so sources and secret spans are untouched.

A spelling is learnt from a run of capitalised words ("Tywi Vets", "Platen & Ribbon") that
does not merely open a sentence, a line or a list item (one capitalised word there may be any
word: "Noted."), or from a run of two or more, less the common words it opens with ("Thanks
Bev" is Bev), and from the words said only of people, whatever their case ("kim and raj do the
bookings", "helen is my supervisor", "dr okafor"). A single common word (a stop word, a
verb, an ordinal, a day or a month) teaches nothing, since the lower-case word may be the
common one ("burns", "may"); nor does a word in capitals alone ("SLUDGE"), a Markdown
heading, or the name of someone talking.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from . import lexicon as lx
from .frames import CALENDAR, is_verb

__all__ = ["recase", "spellings"]

# Capitalised words in a row, joined by spaces, "&" or "of" ("Platen & Ribbon").
_RUN = re.compile(r"(?<![\w'’])(?-i:[A-Z][\w'’&-]*)(?:[ ](?:(?:&|of)[ ])?(?-i:[A-Z][\w'’&-]*))*")
# Where a sentence, a line or a list item begins ("- Billing escalations go to Ruairi.").
_OPENS = re.compile(r"(?:^|[.!?:;\n]\s*|[\"“(]\s*|(?:^|\n)\s*[-*]\s+)$")
_JOINERS = ("&", "of")
_HEADING = re.compile(r"^#.*$", re.M)
_COMMON = (
    lx.STOP_WORDS
    | lx.NAME_STOP
    | lx.FILLERS
    | lx.words("first second third fourth fifth last next")
    | lx.words("thanks thank cheers hi hello hey ok okay sure noted great good yes sorry")
)


#: A word that opens a sentence, a list item, a clause after a comma or "and", or what follows
#: a speaker's name or a title ("mrs ahmed", "coach dan": :data:`.lexicon.TITLES`), and is
#: said to have an allergy, an intolerance, a condition or a diet ("mia has a severe peanut
#: allergy", "alfie is lactose intolerant", and memory's "- Mia has a peanut allergy."): those
#: are said of people (or their pets), so the word is a name, spelled with a capital, in this
#: message and in the later ones that name them in lower case ("mia is ok with almonds").
_TITLES = "|".join(sorted(lx.TITLES))
_PERSON_FIRST = re.compile(
    rf"(?:(?:^|[.!?;:\n]\s*|(?:^|\n)\s*[-*]\s+|,\s+|\band\s+)|\b(?=(?:{_TITLES})\.?\s))"
    rf"(?:(?P<t>{_TITLES})\.?\s+)?(?P<n>[a-zA-Z][a-z'’-]{{1,20}})\s+"
    r"(?:is|has|'s|’s|gets|can'?t\s+have)\s+"
    r"(?:(?:a|an|got|got\s+a|quite|very|really|super|so|severely|badly|mildly|severe|mild|bad"
    r"|serious|nasty)\s+)*(?:[a-z-]+\s+){0,2}?"
    r"(?:allerg(?:y|ic|ies)|intoleran(?:t|ce)|coeliac|celiac|vegan|vegetarian|diabetic"
    r"|asthma(?:tic)?|epilep(?:sy|tic)|diabetes|deaf|hard\s+of\s+hearing)\b"
)


_W = r"[a-zA-Z][a-z'’-]{1,20}"
_ROLE = r"(?:new\s+|old\s+|current\s+)?(?:" + lx.phrases(lx.KIN_ROLES).pattern + ")"
#: A duty one person does ("lee does the bookings", "priti's running the games", "steve's
#: doing badges"); not one done by everyone, the staff, an app or someone named by who they
#: are ("dad runs the bar").
_DOES = {v for v in lx.DUTY_VERBS if v.endswith("s") and v != "books"}
_DOING = lx.words("running doing handling covering organising organizing managing leading")
_DOING |= lx.words("teaching coaching sorting booking")
_NOBODY = (
    {w.lower() for w in lx.NAME_STOP}
    | lx.PRONOUN_SUBJECTS
    | lx.words("everybody somebody anybody anyone staff crew app system")
    | lx.words("mum mom dad mother father wife husband partner son daughter brother sister")
    | set(lx.KIN_ROLES)
)
#: Words said of people only, whatever their case: a pair or a list sharing a duty ("kim and
#: raj do the mass spec bookings"), one person doing one ("lee does the bookings", "steve's
#: doing badges", "lee's the first aider"), someone
#: beside the speaker ("me and rob", "tom and i"), someone said to be the speaker's supervisor,
#: coach or gp ("helen is now my supervisor", "my gp is dr shah"), someone standing in for
#: another ("ruby's covering her saturdays", "ruby's doing her saturdays", "ruby's replaced
#: chloe"), and a title before a name ("dr okafor"). Each named group is a name, or a list of
#: names.
_PEOPLE = re.compile(
    r"(?:^|[.!?;:,\n]\s*|(?:^|\n)\s*[-*]\s+|\b(?:so|but|and)\s+"
    r"|\bfrom\s+(?:next\s+|this\s+)?[a-z]+\s+)"
    rf"(?:(?P<list>{_W}(?:,\s+{_W})*,?\s+(?:and|&)\s+{_W})\s+(?:now\s+)?"
    rf"(?:{'|'.join(sorted(lx.DUTY_VERBS))})\s+(?:the|all|both|most|our|my|their)\b"
    rf"|(?P<s>{_W})\s+(?:now\s+)?(?:{'|'.join(sorted(_DOES))})\s+(?:the|all|our|my)\s+(?!\w+ing\b)"
    rf"|(?P<g>{_W})(?:'s|’s|\s+is)\s+(?:now\s+)?(?:{'|'.join(sorted(_DOING))})\s+"
    r"(?:(?:the|all|our|my)\s+(?!\w+ing\b)|[a-z]+s\b)"
    rf"|(?P<n>{_W})(?:'s|’s|\s+is)\s+(?:now\s+|no\s+longer\s+|not\s+|still\s+)?"
    rf"(?:my|our|the)\s+{_ROLE}(?![\w-])"
    rf"|(?P<c>{_W})(?:'s|’s|\s+is|\s+will\s+be|\s+has)\s+(?:now\s+)?(?:(?:covering|doing|"
    r"taking\s+over|taken\s+over|took\s+over)\s+(?:for\s+|his\b|her\b|their\b)|"
    r"(?:replaced|stepping\s+in\s+for)\s+(?!the\b|a\b|an\b|my\b|our\b|it\b))"
    rf"|(?:me|i)\s+and\s+(?P<m>{_W})\s+(?!and\b|or\b)|(?P<a>{_W})\s+and\s+(?:me|i)\s+"
    r"(?!and\b|or\b))"
    rf"|\b(?:my|our)\s+{_ROLE}\s+is\s+(?:now\s+)?(?P<r>{_W})\s*(?:$|[.!,;]|\s+now\b)"
    rf"|\b(?P<t>(?:{'|'.join(sorted(lx.FORMAL_TITLES))})\.?\s+{_W})",
    re.I,
)
#: What a word after "my gp is" may be instead of a name: how they are ("lovely", "away").
_NOT_NAMED = re.compile(r"(?:ly|ful|ous|ive|able|ible|ing|ed|ish|less)$")


def _people(text: str) -> Iterable[str]:
    """The words :data:`_PEOPLE` says are people in ``text``, in lower case."""
    for m in _PEOPLE.finditer(text):
        if m["list"]:
            split = re.split(r",?\s+(?:and|&)\s+|,\s+", m["list"].lower())
            listed = [w for w in split if w not in ("me", "i")]  # "me and rob do the ..."
            # (not things: "registrations and billing run ...", "now treasurer and will do")
            if not any(w in _COMMON or w.endswith((*lx.NOUN_ENDINGS, "ing")) for w in listed):
                yield from listed
        elif m["t"]:
            titled = re.sub(r"\.?\s+", " ", m["t"].lower())
            yield from (titled, titled.split(" ")[1])
        else:
            named = (m["n"], m["c"], m["m"], m["a"], m["r"], m["s"], m["g"])
            word = next(w for w in named if w).lower()
            doing = m["s"] or m["g"]
            if doing and (word in _NOBODY or word.endswith((*lx.NOUN_ENDINGS, "ing"))):
                continue  # "everyone does the washing up", "billing handles the refunds"
            if not (m["r"] and (_NOT_NAMED.search(word) or word in lx.FEELINGS)):
                yield word


def _common(word: str) -> bool:
    low = re.sub(r"['’]s$", "", word.lower())
    return len(low) < 3 or low in _COMMON or is_verb(low) or bool(CALENDAR.fullmatch(low))


def spellings(texts: Iterable[str], people: Iterable[str] = ()) -> dict[str, str]:
    """The names ``texts`` spell with capitals, by their lower-case form, longest first (the
    order :func:`recase` tries them in): ``{"tywi vets": "Tywi Vets"}``. The first spelling
    seen wins; a Markdown heading teaches nothing, nor a word in capitals alone, nor the name
    of one of ``people`` (who talk: how a speaker types their own name is read as typed)."""
    found: dict[str, str] = {}
    talking = {p.lower() for p in people}
    for said in texts:
        text = _HEADING.sub("", said)  # "## People & preferences" names nothing
        for m in _RUN.finditer(text):
            words = m.group(0).split(" ")
            if _OPENS.search(text[: m.start()]) and len(words) < 2:
                continue  # "Noted.", "Sure": a sentence's first word
            while words and (words[0] in _JOINERS or _common(words[0])):
                words.pop(0)  # "Thanks Dr Rees" is not a name; "Rees" is
            while words and words[-1] in _JOINERS:
                words.pop()
            if not words or (len(words) == 1 and _common(words[0])):
                continue
            if any(w.isupper() for w in words if w not in _JOINERS):
                continue  # "SLUDGE", "REST": said loud, or an acronym, not a spelling
            name = " ".join(words)
            if talking & {w.lower() for w in words}:
                continue
            if name.lower() != name and len(name.lower()) == len(name):
                found.setdefault(name.lower(), name)
        for m in _PERSON_FIRST.finditer(text):
            low = m["n"].lower()
            # (after a title any word is a name: "mrs ahmed", though "ahmed" ends like "-ed")
            if (m["t"] or not _common(low)) and low not in talking:
                found.setdefault(low, low.capitalize())
                if m["t"]:  # "coach dan", "mrs ahmed": the title is part of the name
                    titled = f"{m['t'].lower()} {low}"
                    found.setdefault(titled, f"{m['t'].capitalize()} {low.capitalize()}")
        for low in _people(text):
            # (a short name is a name here: "li", "mo"; not a word every sentence has)
            plain = low not in _COMMON and not CALENDAR.fullmatch(low)
            if plain and not talking & set(low.split(" ")):
                found.setdefault(low, " ".join(w.capitalize() for w in low.split(" ")))
    return {low: found[low] for low in sorted(found, key=len, reverse=True)}


def recase(text: str, names: dict[str, str]) -> str:
    """``text`` with each all-lower-case occurrence of a name in ``names`` (whole words)
    spelled as ``names`` spells it, in the order of ``names`` (:func:`spellings`: longest
    first, once per batch, not per message). Its length never changes."""
    if not names or not re.search(r"[a-z]", text):
        return text
    for low in names:
        if low not in text:
            continue
        # (case-blind it is not: "USK Vets", typed with capitals, stays as typed)
        pattern = re.compile(rf"(?<![\w'’-]){re.escape(low)}(?![\w-])")
        text = pattern.sub(names[low].replace("\\", r"\\"), text)
    return text
