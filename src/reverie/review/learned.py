"""A second reading of the clauses the rules found no durable fact in: a linear model.

The rules of :mod:`.statements` keep a user's clause when it has a shape they know ("X is Y",
"we decided ...", a price after a name). People state facts in many more shapes ("wms is
snapfulfil", "goods in - beata", "edging + blow included", "Cabs from Meru for late shift."),
and no list of shapes written from one set of conversations carried over to the next: on
conversations written after the rules, about a third of the clauses they turned down held a
fact that memory was expected to keep.

This module scores such a clause (it learns shapes from examples, not every shape): a
logistic model over its words, the shape of its tokens
(a capitalised word, a number, a currency sign, in sequence) and its length, trained on the
development sets of the review corpus (``bench/train_durable.py``, which writes the weights
to ``durable.json`` beside this file; the held-out set is never read). The offline reviewer
asks it only after the rules said "no durable fact" and a correction of an entry did not fit
either, so what the rules refuse for a reason (a secret, a question, a request, a rule for
the agent, small talk, progress) is never kept by it.

No third-party package: the weights are a JSON object of feature to float.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
from pathlib import Path

__all__ = ["THRESHOLD", "chance", "features", "logistic"]

#: Kept at this chance or above: chosen on development sets the weights were not trained on
#: (docs/benchmarks.md, "Thirty-second round").
THRESHOLD = 0.5

WEIGHTS = Path(__file__).with_name("durable.json")

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


@functools.cache
def _weights() -> dict[str, float]:
    try:
        loaded = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}  # not trained: chance() is 0 for every clause, nothing is read again
    return {str(k): float(v) for k, v in loaded.items()}


def chance(clause: str, weights: dict[str, float] | None = None) -> float:
    """How likely ``clause`` states a fact memory should keep, from 0 to 1."""
    w = _weights() if weights is None else weights
    if not w:
        return 0.0
    return logistic(sum(w.get(f, 0.0) for f in features(clause)))


def logistic(z: float) -> float:
    """The chance a summed weight ``z`` stands for (clamped, so no overflow)."""
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
