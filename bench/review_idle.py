"""Idempotence of the offline reviewer after every session, on the development sets (issue 11).

The corpus check (``tests/review/corpus_eval.py``) re-runs the reviewer once, at the end. This
one re-runs it after EACH session's review, in two shapes, and counts what would change memory
(through the store's own pure apply; nothing is written):

* every turn so far given again, against the memory review made of them;
* only the session just reviewed given again.

The held-out test28 is not a choice here.

Run::

    PYTHONPATH=src python bench/review_idle.py [--half dev|test|...|test25|all] [--details]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import _common
from _common import progress

if str(_common.ROOT) not in sys.path:  # the corpus is in tests/, importable from the root
    sys.path.insert(0, str(_common.ROOT))

from tests.review.corpus_eval import review_conversation
from tests.review.corpus_format import DEVELOPMENT, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--half", choices=[*DEVELOPMENT, "all"], default="all")
    parser.add_argument("--details", action="store_true", help="the operations, per session")
    args = parser.parse_args(argv)
    halves = DEVELOPMENT if args.half == "all" else (args.half,)
    print("| set | conversations | sessions re-run | not idempotent (conversations) |")
    print("|---|---|---|---|")
    lines: list[str] = []
    for half in halves:
        progress(f"re-running the {half} half after every session ...")
        convs = load(half)
        bad = 0
        with tempfile.TemporaryDirectory(prefix="review-idle-") as tmp:
            for conv in convs:
                result = review_conversation(conv, Path(tmp) / conv.id, every_session=True)
                if result.session_idle:
                    bad += 1
                    lines += [f"- {conv.id}: {s}" for s in result.session_idle]
        sessions = sum(len(c.sessions) for c in convs)
        print(f"| {half} | {len(convs)} | {sessions} | {bad} |")
    if args.details:
        print()
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
