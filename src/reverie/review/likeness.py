"""How alike two statements are, for an update or an ending that no rule connected (SPEC R6).

The rules of :mod:`.changes` and :mod:`.slots` connect an update to the entry it replaces
through a frame: the same owner and attribute, the old value named, a slot both fill. When no
rule does, and the statement says that something changed or ended, the offline reviewer asks a
likeness which of the entries it may replace (``offline._Memory._closest`` decides which may be
asked about at all: owner, values, what the message itself said) is closest, and replaces it
when the score clears a bar.

Two likenesses: :class:`SharedWords`, the default, which needs nothing installed, and the
optional MiniLM sentence model (:class:`.embeddings.Embedder`). Their scores are on different
scales, so each carries its own :class:`Bars`.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple, Protocol

from .slots import Slot, read_slot, root, value_kind

__all__ = ["Bars", "Likeness", "SharedWords", "features", "said_of_both"]


class Bars(NamedTuple):
    """The least score at which an entry is taken as the one a statement replaces."""

    value: float  # the statement holds a value the entry lacks, and lacks one it holds
    ended: float  # the statement says something ended, with no value of its own
    named: float  # the entry names what the statement (or the thing that ended) names


class Likeness(Protocol):
    """Scores of how alike a statement is to each of some entries (higher: more alike)."""

    bars: Bars

    def similarities(self, text: str, others: list[str]) -> list[float]: ...


@functools.lru_cache(maxsize=65536)
def features(text: str) -> frozenset[str]:
    """What a statement is about, as :func:`.slots.read_slot` reads it: its content stems,
    their slot categories, its names (whole, and each word of them), and the kinds of its
    values (a time, a date, a weekday, an amount), not the values themselves: an update gives
    the same kind of value another value ("hours are 10am to 6pm", "we're extending to
    7pm")."""
    slot = read_slot(text)
    out = set(slot.words)
    out.update(f"category:{c}" for c in slot.cats)
    for name in slot.names:
        out.add(f"name:{name}")
        out.update(f"word:{w}" for w in name.split())
    out.update(f"kind:{value_kind(v)}" for v in slot.values)
    return frozenset(out)


class SharedWords:
    """The cosine of two statements' :func:`features` taken as sets: what they share over the
    geometric mean of their sizes, in [0, 1].

    The bars were chosen on the development sets of the issue-11 corpus and then measured on
    a held-out set (docs/benchmarks.md, "Sixteenth round"): 0.2 is one shared feature of a
    statement of four and an entry of six.
    """

    bars = Bars(value=0.2, ended=0.3, named=0.15)

    def similarities(self, text: str, others: list[str]) -> list[float]:
        mine, slot = features(text), read_slot(text)
        out = []
        for other in others:
            a, b = mine, features(other)
            theirs = read_slot(other)
            who = said_of_both(slot, theirs)
            if who:
                words = who.split()
                person = {f"name:{who}", *(f"word:{w}" for w in words)}
                if slot.owner == theirs.owner == who:
                    # a person both are facts of: their name's stem is no shared word either
                    # ("Chloe's taking over training Jade", "Chloe's now senior tech"); a
                    # thing's is ("Quiz night's a Tuesday", "Quiz has moved to Thursdays")
                    person |= set(map(root, words))
                a, b = a - person, b - person
            out.append(_cosine(a, b))
        return out


def said_of_both(a: Slot, b: Slot) -> str:
    """The person (or thing) two statements are both said of, or "": what two things said of
    one person share ("Audrey loves cooking", "Audrey has never been fishing") is not a sign
    that one replaces the other."""
    return a.who if a.who and a.who == b.who else ""


def _cosine(a: frozenset[str], b: frozenset[str]) -> float:
    shared = a & b
    if not a or not b or all(f.startswith("kind:") for f in shared):
        return 0.0  # two values of a kind, and nothing else in common: two facts
    return len(shared) / math.sqrt(len(a) * len(b))
