"""Review quality on the issue-11 corpus: the development sets and the held-out test28 side by side.

The corpus (``tests/review/corpus/``, format and split rule in ``tests/review/corpus_format.py``)
holds 175 conversations written for the first round, split by a hash of their id into a ``dev``
and a ``test`` half (both development data since the first round studied the test half's
misses); ``test2``: 103 conversations written fresh for the second round and committed, with
the figures of the reviewer as it then was, before the reviewer was changed (development data
since the third round); ``test3``: 135 conversations written fresh for the third round, held
out the same way (development data since the fourth round); ``test4``: 169 written fresh for
the fourth round (development data since the fifth); ``test5``: 232 written fresh for the fifth
round (development data since the sixth); ``test6``: 250 written fresh for the sixth round
(development data since the seventh); ``test7``: 244 written fresh for the seventh round
(development data since the eighth); ``test8``: 240 written fresh for the eighth round
(development data since the ninth); ``test9``: 240 written fresh for the ninth round
(development data since the tenth); ``test10``: 320 written fresh for the tenth round
(development data since the eleventh); ``test11``: 320 written fresh for the eleventh round
(development data since the twelfth); ``test12``: 320 written fresh for the twelfth round
(development data since the thirteenth); ``test13``: 320 written fresh for the thirteenth round
(development data since the fourteenth); ``test14``: 320 written fresh for the fourteenth round
(development data since the fifteenth); ``test15``: written fresh for the fifteenth round
(development data since the seventeenth); ``test16``: written fresh at the end of the
sixteenth round (development data since the eighteenth); ``test17``: written fresh during the
seventeenth round (development data since the nineteenth); ``test18``: written fresh at the end
of the eighteenth round (development data since the twentieth); ``test19``: written fresh
during the nineteenth round (development data since the twenty-first); ``test20``: written
fresh during the twentieth round (development data since the twenty-second); ``test21``:
written fresh during the twenty-first round (development data since the twenty-third);
``test22``: written fresh at the end of the twenty-second round (development data since the
twenty-third); ``test23``: written fresh at the start of the twenty-third round (development
data since the twenty-seventh); ``test24``: written fresh at the start of the
twenty-seventh round (development data since the twenty-eighth); ``test25``: written fresh at
the start of the twenty-eighth round (development data since the twenty-ninth); ``test26``:
written fresh at the start of the twenty-ninth round (development data since the thirtieth);
``test27``: written fresh at the start of the thirtieth round (development data since the
thirty-first); and ``test28``: written fresh at the start of the thirty-first round and held
out. Each
conversation is imported into its own Reverie home and reviewed session by session through
the runner (``tests/review/corpus_eval.py``),
then scored: durable facts kept exactly once, superseded values removed with the new value
kept, retractions, phrases that must never reach memory or its history (secrets, tool output,
questions, group chat, rules aimed at the agent, progress, small talk), sources that resolve
through ``context_read``, an idle re-run that changes nothing, and precision.

Run::

    PYTHONPATH=src python bench/review_corpus.py [--half dev|test|test2|...|test28|both|all|every]
        [--details] [--reviewer offline|model] [--embeddings off|on] [--json]

``both`` is dev and test, ``all`` adds test2 to test27 (the default: every development set),
``every`` adds the held-out test28. ``--details`` lists what went wrong per conversation, for
the development sets only: test28 is reported in aggregate, so that nobody tunes on it by
accident.
``--reviewer model`` runs the
model reviewer with a scripted provider (``tests/review/corpus_model.py``) instead.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
from _common import markdown_table, progress

if str(_common.ROOT) not in sys.path:  # the corpus is in tests/, importable from the root
    sys.path.insert(0, str(_common.ROOT))

from tests.review.corpus_eval import Result, review_conversation, totals
from tests.review.corpus_format import DEVELOPMENT, HALVES, HELD_OUT, load

ROWS = (
    ("conversations", "conversations", "n"),
    ("durable facts", "facts", "n"),
    ("kept exactly once", "kept_once", "%"),
    ("kept at least once", "kept_at_all", "%"),
    ("kept more than once (facts)", "duplicated", "n"),
    ("kept once, in the expected section", "in_section", "%"),
    ("updates", "updates", "n"),
    ("superseded value removed", "superseded_removed", "%"),
    ("new value kept, where the old was removed", "new_kept_when_removed", "%"),
    (
        "new value kept, where an old value written to memory was removed",
        "new_kept_when_written_and_removed",
        "%",
    ),
    ("old removed and new kept", "updated_fully", "%"),
    ("old value ever written (update tested)", "old_ever_written", "%"),
    ("retractions", "retractions", "n"),
    ("retracted value removed", "retracted", "%"),
    ("entries", "entries", "n"),
    ("precision (entries holding an expected fact)", "precision", "%"),
    ("sources", "sources", "n"),
    ("sources that do not resolve", "bad_sources", "n"),
    ("idle re-run changed memory (conversations)", "idle_changes", "n"),
    ("operations dropped by the runner", "dropped_by_runner", "n"),
    ("MEMORY.md over its cap", "over_cap", "n"),
    ("model calls", "model_calls", "n"),
)


def _fmt(value: Any, kind: str) -> str:
    if value is None:
        return "-"
    if kind == "%":
        return f"{100 * value:.1f}%"
    return f"{value:,}"


def reviewer_factory(name: str, embeddings: str = "off") -> Any:
    """The reviewer to run: the offline one (with the embedding extra when ``embeddings`` is
    ``on``), or the model reviewer with a scripted model."""
    if name == "offline":
        from reverie.review import embeddings as extra
        from reverie.review.offline import OfflineReviewer

        embedder = extra.load(embeddings)
        return lambda conv: lambda: OfflineReviewer(embedder)
    from tests.review.corpus_model import scripted_reviewer

    return scripted_reviewer


def run(half: str, reviewer: str, embeddings: str = "off") -> list[Result]:
    """Review every conversation of ``half`` into homes under a temporary directory."""
    make = reviewer_factory(reviewer, embeddings)
    out = []
    with tempfile.TemporaryDirectory(prefix="review-corpus-") as tmp:
        for conv in load(half):
            out.append(review_conversation(conv, Path(tmp) / conv.id, make(conv)))
    return out


def details(results: list[Result]) -> list[str]:
    """One block per conversation with something wrong (development data only)."""
    lines: list[str] = []
    for r in results:
        problems = [f"  missed: {f.text}" for _, f, n, _ in r.kept if n == 0]
        problems += [f"  kept {n} times: {f.text}" for _, f, n, _ in r.kept if n > 1]
        problems += [
            f"  out of section ({s}): {f.text}" for s, f, n, ok in r.kept if n == 1 and not ok
        ]
        problems += [
            f"  update {o.text} => {nw.text}: {st} stale, new held by {nh}"
            f"{'' if ever else ' (old never written)'}"
            for o, nw, st, nh, ever in r.superseded
            if st or not nh
        ]
        problems += [f"  not retracted: {f.text}" for f, st, _ in r.retracted if st]
        problems += [f"  LEAK {k} in {w}: {p}" for k, p, w in r.never if w]
        problems += [f"  source: {b}" for b in r.bad_sources]
        problems += [f"  idle: {c}" for c in r.idle_changes]
        problems += [f"  dropped by the runner: {d}" for d in r.dropped]
        if problems:
            lines.append(f"- {r.conv.id} ({r.conv.setting}):")
            lines += problems
            lines += [f"    entry [{e.section or e.path}] {e.text}" for e in r.entries]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--half", choices=[*DEVELOPMENT, HELD_OUT, "both", "all", "every"], default="all"
    )
    parser.add_argument("--reviewer", choices=["offline", "model"], default="offline")
    parser.add_argument(
        "--embeddings",
        choices=["off", "on"],
        default="off",
        help="offline reviewer: the MiniLM extra (reverie[review-embeddings]) on or off",
    )
    parser.add_argument("--details", action="store_true", help=f"what went wrong (not {HELD_OUT})")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    halves = {"both": HALVES, "all": DEVELOPMENT, "every": (*DEVELOPMENT, HELD_OUT)}.get(
        args.half, (args.half,)
    )
    figures: dict[str, dict[str, Any]] = {}
    results: dict[str, list[Result]] = {}
    for half in halves:
        progress(f"reviewing the {half} half with the {args.reviewer} reviewer ...")
        started = time.perf_counter()
        results[half] = run(half, args.reviewer, args.embeddings)
        figures[half] = totals(results[half])
        figures[half]["seconds"] = round(time.perf_counter() - started, 1)
    table = markdown_table(
        ["figure", *halves],
        [[label, *(_fmt(figures[h][key], kind) for h in halves)] for label, key, kind in ROWS],
    )
    kinds = sorted({k for h in halves for k in figures[h]["never"]})
    leaks = markdown_table(
        ["must never appear", *halves],
        [
            [
                kind,
                *(
                    "{leaked} of {phrases}".format(**figures[h]["never"][kind])
                    if kind in figures[h]["never"]
                    else "-"
                    for h in halves
                ),
            ]
            for kind in kinds
        ],
    )
    text = [table, "", leaks]
    for half in DEVELOPMENT:  # never the held-out set
        if args.details and half in results:
            text += ["", f"What went wrong on the {half} half:", "", *details(results[half])]
    _common.emit(
        args.json,
        {"reviewer": args.reviewer, "embeddings": args.embeddings, "halves": figures},
        "\n".join(text),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
