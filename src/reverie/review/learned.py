"""Two learned readings the offline reviewer asks where its rules found nothing: linear models.

**A second reading of the clauses the rules found no durable fact in** (:func:`chance`).

The rules of :mod:`.statements` keep a user's clause when it has a shape they know ("X is Y",
"we decided ...", a price after a name). People state facts in many more shapes ("wms is
snapfulfil", "goods in - beata", "edging + blow included", "Cabs from Meru for late shift."),
and no list of shapes written from one set of conversations carried over to the next: on
conversations written after the rules, about a third of the clauses they turned down held a
fact that memory was expected to keep.

The first model scores such a clause (it learns shapes from examples, not every shape): a
logistic model over its words, the shape of its tokens (a capitalised word, a number, a
currency sign, in sequence) and its length, trained on the
development sets of the review corpus (``bench/train_durable.py``, which writes the weights
to ``durable.json`` beside this file; the held-out set is never read). The offline reviewer
asks it only after the rules said "no durable fact" and a correction of an entry did not fit
either, so what the rules refuse for a reason (a secret, a question, a request, a rule for
the agent, small talk, progress) is never kept by it.

**Whether a statement updates an entry no rule connected it to** (:func:`update_chance`).
The rules connect a statement to the entry it updates by the shapes they know (a value of the
same kind after a word of change, a switch, a swap in a list). On conversations written after
the rules, a statement that did change an entry was often kept beside it instead ("Chloe's
placement extended to 29 May" beside "... Chloe, 3rd year from UWE, with them till 15 May";
"Callum Reid is the new Student Voice Coordinator" beside "... Gemma Hart, she's the Student
Voice Coordinator"), and the old value stayed. This model scores such a pair from the words the
two share and how they differ (names, numbers, values of one kind), and whether the statement
says something changed; trained by ``bench/train_updates.py`` on pairs the reviewer met in the
development sets (weights in ``updates.json``). The reviewer asks it only for a statement it
would otherwise add as a new entry, of the entries said before it that share a word with it;
and, when a batch is read again, whether an entry said after a statement outdated it.

No third-party package: the weights are JSON objects of feature to float.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from . import lexicon as lx
from .frames import SPEAKER_NAMED, says_update, strip_source
from .slots import measures

__all__ = [
    "OUTDATED_THRESHOLD",
    "THRESHOLD",
    "UPDATE_THRESHOLD",
    "chance",
    "features",
    "logistic",
    "update_chance",
    "update_features",
]

#: Kept at this chance or above: chosen on development sets the weights were not trained on
#: (docs/benchmarks.md, "Thirty-second round").
THRESHOLD = 0.5

WEIGHTS = Path(__file__).with_name("durable.json")

#: An entry is read as updated at this chance or above (docs/benchmarks.md, "Thirty-third
#: round").
UPDATE_THRESHOLD = 0.7

#: A statement read again (a batch reviewed twice) is outdated by an entry said after it at
#: this chance or above: lower, since that entry may be a later update of what the statement's
#: own update wrote, which the model reads less surely.
OUTDATED_THRESHOLD = 0.25

UPDATE_WEIGHTS = Path(__file__).with_name("updates.json")

_TOKEN = re.compile(r"[A-Za-z][\w'&.-]*[A-Za-z0-9]|[A-Za-z]|\d[\d,.:/%-]*\d|\d|[£$€@#&+=:;!?()/-]")


def _shape(token: str, first: bool) -> str:
    """A token as the model sees it in sequence: a number, a currency sign, a capitalised
    word (not the clause's first), else the word in lower case."""
    if token[0].isdigit():
        return "#"
    if token[0] in "£$€":
        return "$"
    if token[0].isupper() and not first:
        return "C"
    return token.lower()


def features(clause: str) -> list[str]:
    """The model's features of ``clause``: its words, its shapes in pairs and threes, how it
    starts and ends, and how long it is and how many names and numbers it holds."""
    tokens = _TOKEN.findall(clause)
    if not tokens:
        return ["bias", "empty"]
    shapes = [_shape(t, i == 0) for i, t in enumerate(tokens)]
    words = {t.lower() for t in tokens if t[0].isalpha()}
    out = ["bias"]
    out += [f"w={w}" for w in sorted(words)]
    out += [f"s={a}|{b}" for a, b in itertools.pairwise(shapes)]
    out += [f"s3={'|'.join(shapes[i : i + 3])}" for i in range(len(shapes) - 2)]
    out += [f"f={shapes[0]}", f"f2={'|'.join(shapes[:2])}", f"l={shapes[-1]}"]
    length = sum(1 for t in tokens if t[0].isalnum())
    out += [
        f"len={min(length // 3, 8)}",
        f"caps={min(shapes.count('C'), 3)}",
        f"nums={min(shapes.count('#'), 3)}",
    ]
    return out


#: Words a pair's features leave out when they count what a statement and an entry share.
_COMMON = lx.words(
    "a all also an and any are as at be been but by can could did do does for from had has"
    " have he her his i in is it it's its just me my no not now of on or our she so some"
    " than that the their them then there these they this those to very was we were what"
    " when where which who will with would you your"
)


def _word(token: str) -> str:
    """A word as a pair's features compare it: lower case, without a possessive "'s"."""
    return token.lower().removesuffix("'s")


@dataclass(frozen=True)
class _Side:
    """One text of a pair, as :func:`update_features` compares it."""

    words: frozenset[str]
    names: frozenset[str]  # capitalised words but the first
    numbers: frozenset[str]
    kinds: Mapping[str, frozenset[str]]  # values by kind (slots.measures), read-only
    length: int  # tokens
    change: str  # "upd", "weak" or "none": how it says something changed


@functools.lru_cache(maxsize=65536)
def _side(text: str) -> _Side:
    """``text`` (without its source and speaker) as a side of a pair; cached, since one entry
    is compared with every statement after it."""
    said = SPEAKER_NAMED.sub("", strip_source(text))
    tokens = _TOKEN.findall(said)
    kinds: dict[str, set[str]] = {}
    for m in measures(said):
        kinds.setdefault(m.kind, set()).add(m.value)
    change = "upd" if says_update(said, weak=False) else "weak" if says_update(said) else "none"
    return _Side(
        words=frozenset(_word(t) for t in tokens if t[0].isalpha()),
        names=frozenset(_word(t) for i, t in enumerate(tokens) if i and t[0].isupper()),
        numbers=frozenset(t for t in tokens if t[0].isdigit()),
        kinds=MappingProxyType({k: frozenset(v) for k, v in kinds.items()}),
        length=len(tokens),
        change=change,
    )


def update_features(statement: str, entry: str) -> list[str]:
    """The features of a pair: the words ``statement`` and ``entry`` (each with or without
    its source and speaker) share, how many and whether any names no one, how they differ (names,
    numbers, values of one kind: :func:`.slots.measures`), whether the statement says
    something changed (:func:`.frames.says_update`), and each difference with the word of
    change and the sharing, together. (The statement's own words are left out: learned from a
    few hundred updates, they were learned by heart.)"""
    ours, theirs = _side(statement), _side(entry)
    shared = (ours.words & theirs.words) - _COMMON
    names, their_names = ours.names, theirs.names
    numbers, their_numbers = ours.numbers, theirs.numbers
    out = ["bias", *(f"sh={w}" for w in sorted(shared))]
    out += [
        f"shared={min(len(shared), 4)}",
        f"capsh={min(len(names & their_names), 2)}",
        f"capnew={min(len(names - their_names), 2)}",
        f"capold={min(len(their_names - names), 3)}",
        f"numnew={min(len(numbers - their_numbers), 2)}",
        f"numold={min(len(their_numbers - numbers), 3)}",
        f"numsh={min(len(numbers & their_numbers), 2)}",
        f"elen={min(theirs.length // 8, 6)}",
        f"slen={min(ours.length // 4, 6)}",
    ]
    kinds, their_kinds = ours.kinds, theirs.kinds
    diffs = []
    for kind in sorted(kinds):
        short = kind.split(":")[0]  # "count:car" is a count
        if kind not in their_kinds:
            out.append(f"konly={short}")
        elif kinds[kind] - their_kinds[kind] and their_kinds[kind] - kinds[kind]:
            diffs.append(f"kd={short}")
        else:
            out.append(f"{'kadd' if kinds[kind] - their_kinds[kind] else 'ksame'}={short}")
    out += diffs
    if names - their_names and their_names - names:
        diffs.append("capdiff")
    if numbers - their_numbers and their_numbers - numbers:
        diffs.append("numdiff")
    change = ours.change
    out.append(f"u={change}")
    plain = shared - names - their_names  # shared words that name no one
    share = "shw" if plain else "shn" if names & their_names or shared else "nosh"
    out.append(f"plain={min(len(plain), 3)}")
    for d in diffs or ["nodiff"]:
        out += [f"{d}&{change}", f"{d}&{share}", f"{d}&{change}&{share}"]
    return out


@functools.cache
def _weights(path: Path = WEIGHTS) -> dict[str, float]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}  # not trained: every chance is 0, the rules alone decide
    return {str(k): float(v) for k, v in loaded.items()}


def chance(clause: str, weights: dict[str, float] | None = None) -> float:
    """How likely ``clause`` states a fact memory should keep, from 0 to 1."""
    w = _weights() if weights is None else weights
    if not w:
        return 0.0
    return logistic(sum(w.get(f, 0.0) for f in features(clause)))


def update_chance(statement: str, entry: str, weights: dict[str, float] | None = None) -> float:
    """How likely ``statement`` changes what ``entry`` says, from 0 to 1."""
    w = _weights(UPDATE_WEIGHTS) if weights is None else weights
    if not w:
        return 0.0
    return logistic(sum(w.get(f, 0.0) for f in update_features(statement, entry)))


def logistic(z: float) -> float:
    """The chance a summed weight ``z`` stands for (clamped, so no overflow)."""
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
