"""Train the offline reviewer's learned reading of updates (``learned.update_chance``).

Each development conversation of the review corpus is reviewed as ``bench/review_corpus.py``
reviews it (session by session, then the idle re-run), with the model answering 0 to every
pair, so that the rules alone decide. Every pair the reviewer asks about is an example: a
statement it is about to add as a new entry, and an entry said before it that shares a word
with it. The pair is a positive when the statement holds the new side of one of the
conversation's ``was`` updates and the entry holds its old side without the new one; else a
negative. The held-out set (``corpus_format.HELD_OUT``) is never read.

The model is a logistic regression over :func:`reverie.review.learned.update_features`, fitted
as the second reading's is (``train_durable.fit``: AdaGrad, fixed order, features of at least
two pairs), on the pairs sorted, so the weights do not depend on the order they were met in.

Run::

    PYTHONPATH=src python bench/train_updates.py [--validate test25,test26,test27] [--write]

Reviewing every development set takes about 15 minutes on a 2-core machine (a set per core).
``--validate`` leaves those sets out of training and prints, per threshold, how many of their
pairs the model reads as updates and how many are; and the same for the likeliest entry of
each statement, which is what the reviewer acts on. ``--write`` stores the weights (trained
on every set not left out) in ``src/reverie/review/updates.json``. ``--pairs FILE`` keeps each
set's pairs in ``FILE`` and reads them from it on later runs (a rules change makes it stale:
remove it). The pairs also hold those of a statement read again in the idle re-run and an entry
said after it (``OfflineReviewer`` asks whether the entry outdated it): the same question.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from unittest import mock

import _common
from _common import progress
from train_durable import chosen, fit, options, store

if str(_common.ROOT) not in sys.path:  # the corpus is in tests/, importable from the root
    sys.path.insert(0, str(_common.ROOT))

from reverie.review import learned
from reverie.review.offline import OfflineReviewer
from tests.review.corpus_eval import Entry, review_conversation
from tests.review.corpus_format import HELD_OUT, load


def examples(sets: Iterable[str], cache: Path | None = None) -> list[tuple[str, str, int]]:
    """(statement, entry, 1 when the statement updates the entry) for every pair asked of
    ``sets``, once; with ``cache``, a JSON file of each set's pairs, read from it where it
    holds the set and written to it where it did not."""
    sets = list(sets)
    if HELD_OUT in sets:
        raise SystemExit(f"{HELD_OUT} is held out: it is never trained on")
    stored = json.loads(cache.read_text(encoding="utf-8")) if cache and cache.exists() else {}
    missing = [name for name in sets if name not in stored]
    if missing:
        # one set per process, as many at once as there are cores
        with ProcessPoolExecutor(max_workers=min(len(missing), os.cpu_count() or 1)) as pool:
            for name, pairs in zip(missing, pool.map(_asked, missing), strict=True):
                stored[name] = pairs
                if cache is not None:
                    cache.write_text(json.dumps(stored), encoding="utf-8")
    return sorted({(s, e, y) for name in sets for s, e, y in stored[name]})


def _asked(name: str) -> list[tuple[str, str, int]]:
    """The labelled pairs the reviewer asks about in the set ``name``."""
    out: set[tuple[str, str, int]] = set()
    asked: list[tuple[str, str]] = []

    def ask(statement: str, entry: str, weights: dict[str, float] | None = None) -> float:
        asked.append((statement, entry))
        return 0.0  # the rules alone: the pairs met are those of the reviewer without the model

    with (
        tempfile.TemporaryDirectory(prefix="train-updates-") as tmp,
        mock.patch.object(learned, "update_chance", ask),
    ):
        progress(f"reviewing {name} ...")  # (each set takes a minute or more)
        for conv in load(name):
            asked.clear()
            review_conversation(conv, Path(tmp) / conv.id, OfflineReviewer)
            for statement, entry in asked:
                held = Entry("", None, entry).plain
                label = any(
                    new.held_by(statement) and old.held_by(held) and not new.held_by(held)
                    for old, new in conv.was
                )
                out.add((statement, entry, int(label)))
    return sorted(out)


def train(data: list[tuple[str, str, int]]) -> dict[str, float]:
    """The update reading's weights for ``data``."""
    return fit([(learned.update_features(s, e), label) for s, e, label in data])


def _report(scored: list[tuple[float, int]], what: str) -> None:
    for bar in (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3):
        read = [y for s, y in scored if s >= bar]
        share = f"{100 * sum(read) / len(read):.0f}%" if read else "-"
        print(f"  at {bar}: {len(read):,} {what} read as updates, {sum(read):,} are ({share})")


def main(argv: list[str] | None = None) -> int:
    parser = options(__doc__, learned.UPDATE_WEIGHTS)
    parser.add_argument(
        "--pairs", type=Path, help="a JSON file to keep each set's pairs in, and read them from"
    )
    args = parser.parse_args(argv)
    fitted, left_out = chosen(parser, args.validate)
    data = examples(fitted, args.pairs)
    print(f"training: {len(data):,} pairs, {sum(y for *_, y in data):,} updates")
    weights = train(data)
    print(f"weights: {len(weights):,}")
    if left_out:
        held = examples(left_out, args.pairs)
        print(
            f"validation ({','.join(left_out)}): {len(held):,} pairs, "
            f"{sum(y for *_, y in held):,} updates"
        )
        scored = [(learned.update_chance(s, e, weights), y) for s, e, y in held]
        _report(scored, "pairs")
        best: dict[str, tuple[float, int]] = {}
        for (s, _, _), (p, y) in zip(held, scored, strict=True):
            if s not in best or p > best[s][0]:
                best[s] = (p, y)
        _report(list(best.values()), "statements' likeliest entries")
    if args.write:
        store(learned.UPDATE_WEIGHTS, weights)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
