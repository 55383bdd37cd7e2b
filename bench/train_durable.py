"""Train the offline reviewer's second reading (``reverie.review.learned``) on the review corpus.

Every user clause of the development sets that the rules turn down as "no durable fact" is an
example: a positive when it holds, whole, a fact the corpus expects memory to keep (a ``keep``
fact, or either side of a ``was`` update), else a negative. The clauses are cut as the offline
reviewer cuts a message (sentences, clauses, pieces) and read by its rules. The held-out set
(``corpus_format.HELD_OUT``) is never read.

The model is a logistic regression over :func:`reverie.review.learned.features`, fitted by
AdaGrad in a fixed order (the same weights on every run), on the features found in at least
two clauses; weights under 0.005 are dropped.

Run::

    PYTHONPATH=src python bench/train_durable.py [--validate test25,test26,test27] [--write]

``--validate`` leaves those sets out of training and prints, per threshold, how many of their
clauses the model would keep and how many of those hold an expected fact. ``--write`` stores
the weights (trained on every set not left out) in ``src/reverie/review/durable.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import _common
from _common import progress

if str(_common.ROOT) not in sys.path:  # the corpus is in tests/, importable from the root
    sys.path.insert(0, str(_common.ROOT))

from reverie.review import learned, offline
from reverie.review.discourse import units
from reverie.review.sentences import clauses
from reverie.review.statements import pieces, read
from reverie.review.types import Turn
from tests.review.corpus_format import DEVELOPMENT, HELD_OUT, Conversation, load

REFUSED = "no durable fact"
EPOCHS = 8
RATE = 0.2
L2 = 1e-5
SEED = 7
SMALLEST = 0.005
FEWEST = 2


def _blocks(conv: Conversation) -> Iterable[tuple[str, str]]:
    """Each run of one user's consecutive messages, as one text, with its speaker, run as the
    reviewer runs them (group chats left out: memory-off, SPEC O1, review never reads them)."""
    for n, session in enumerate(conv.sessions, start=1):
        if session.kind == "group":
            continue
        given = [
            Turn(f"s{n}", i, m.role, m.author, m.text, 0.0) for i, m in enumerate(session.messages)
        ]
        for block, _ in offline._blocks(offline._turns(given)):
            if block[-1].role == "user":
                yield "\n".join(t.text for t in block), offline._display(block[-1].author)


def examples(sets: Iterable[str]) -> list[tuple[str, int]]:
    """(clause, 1 when it holds an expected fact) for every clause the rules turn down."""
    out: list[tuple[str, int]] = []
    for name in sets:
        if name == HELD_OUT:
            raise SystemExit(f"{HELD_OUT} is held out: it is never trained on")
        for conv in load(name):
            wanted = [f for _, f in conv.keep] + [f for pair in conv.was for f in pair]
            for text, speaker in _blocks(conv):
                for _, _, sentence in units(text, "user", speaker):
                    for part in clauses(sentence):
                        for clause in pieces(part, role="user", speaker=speaker):
                            if read(clause, role="user", speaker=speaker) != REFUSED:
                                continue
                            out.append((clause, int(any(f.held_by(clause) for f in wanted))))
    return out


def train(data: list[tuple[str, int]]) -> dict[str, float]:
    """The second reading's weights for ``data`` (:func:`fit` on each clause's features)."""
    return fit([(learned.features(text), label) for text, label in data])


def fit(rows: list[tuple[list[str], int]]) -> dict[str, float]:
    """Logistic regression by AdaGrad over ``rows`` (features, label), in an order fixed by
    :data:`SEED`."""
    weights: dict[str, float] = defaultdict(float)
    squares: dict[str, float] = defaultdict(float)
    seen: dict[str, int] = defaultdict(int)
    for feats, _ in rows:
        for f in set(feats):
            seen[f] += 1
    # a feature of one clause only is that clause's, not a shape: it would be learned by heart
    rows = [([f for f in feats if seen[f] >= FEWEST], label) for feats, label in rows]
    order = random.Random(SEED)
    for _ in range(EPOCHS):
        order.shuffle(rows)
        for feats, label in rows:
            error = learned.logistic(sum(weights[f] for f in feats)) - label
            for f in feats:
                grad = error + L2 * weights[f]
                squares[f] += grad * grad
                weights[f] -= RATE * grad / (math.sqrt(squares[f]) + 1e-8)
    return {f: round(w, 3) for f, w in sorted(weights.items()) if abs(w) >= SMALLEST}


def options(doc: str, target: Path) -> argparse.ArgumentParser:
    """The options of a trainer whose docstring is ``doc`` and weights ``target``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--validate", default="", help="sets to leave out and score, by comma")
    parser.add_argument("--write", action="store_true", help=f"write {target.name}")
    return parser


def chosen(parser: argparse.ArgumentParser, validate: str) -> tuple[list[str], list[str]]:
    """(the development sets to train on, those ``validate`` leaves out to score)."""
    left_out = [s for s in validate.split(",") if s]
    unknown = [s for s in left_out if s not in DEVELOPMENT]
    if unknown:
        parser.error(f"not a development set: {', '.join(unknown)}")
    return [s for s in DEVELOPMENT if s not in left_out], left_out


def store(target: Path, weights: dict[str, float]) -> None:
    """Write ``weights`` to ``target``, one feature a line, in order."""
    target.write_text(json.dumps(weights, indent=0, sort_keys=True) + "\n")
    print(f"wrote {target}")


def main(argv: list[str] | None = None) -> int:
    parser = options(__doc__, learned.WEIGHTS)
    args = parser.parse_args(argv)
    fitted, left_out = chosen(parser, args.validate)
    progress(f"reading {len(fitted)} development sets ...")
    data = examples(fitted)
    print(f"training: {len(data):,} clauses, {sum(y for _, y in data):,} holding a fact")
    weights = train(data)
    print(f"weights: {len(weights):,}")
    if left_out:
        held = examples(left_out)
        scored = sorted(((learned.chance(t, weights), y) for t, y in held), reverse=True)
        facts = sum(y for _, y in held)
        print(f"validation ({','.join(left_out)}): {len(held):,} clauses, {facts:,} holding a fact")
        for bar in (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3):
            kept = [y for s, y in scored if s >= bar]
            share = f"{100 * sum(kept) / len(kept):.0f}%" if kept else "-"
            print(f"  at {bar}: {len(kept):,} kept, {sum(kept):,} holding a fact ({share})")
    if args.write:
        store(learned.WEIGHTS, weights)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
