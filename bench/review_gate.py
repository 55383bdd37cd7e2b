"""Could a learned gate give back the facts the offline reviewer turns down? (issue 11)

Of the user clauses the offline reviewer reads and turns down as ``no durable fact``, some hold
a whole fact the corpus's authors expected memory to keep. This bench asks whether a classifier
trained on the development sets tells those apart from the rest well enough to keep them:

1. every development set (never the held-out test28) is reviewed as ``review_corpus.py`` does,
   with the reviewer's reading of each clause logged (``offline.read`` wrapped, nothing else
   changed); a user clause it turned down as ``no durable fact`` is a positive when it holds a
   ``keep`` fact or the new value of a ``was`` whole and no ``never`` phrase;
2. logistic regressions are trained on the sets before ``--validate`` (default test20-22), on
   MiniLM sentence vectors (the ``review-embeddings`` extra), on hashed word 1-2 grams, and on
   both; each is measured on the ``--validate`` sets: at each threshold, the clauses it would
   keep, the share of them that hold a fact (precision), the share of the positives it finds
   (recall), and how many facts the reviewer missed they would give back.

Needs ``reverie[review-embeddings]`` (scikit-learn comes with sentence-transformers).

Run: ``PYTHONPATH=src python bench/review_gate.py [--validate test20,test21,test22]
[--clauses FILE] [--json]``; ``--clauses`` keeps the logged clauses (JSON lines) and reads them
from there when the file exists (the review of every development set takes about 6 minutes).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import _common
from _common import markdown_table, progress

if str(_common.ROOT) not in sys.path:  # the corpus is in tests/, importable from the root
    sys.path.insert(0, str(_common.ROOT))

from tests.review.corpus_eval import review_conversation
from tests.review.corpus_format import DEVELOPMENT, load

TURNED_DOWN = "no durable fact"
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def gather() -> list[dict[str, Any]]:
    """Review every development set; one row per distinct clause a user said that the
    reviewer turned down as :data:`TURNED_DOWN`, labelled."""
    from reverie.review import offline

    read = offline.read
    said: list[tuple[str, str, str]] = []

    def logged(clause: str, *, role: str, **kw: Any) -> Any:
        found = read(clause, role=role, **kw)
        said.append((role, clause, found if isinstance(found, str) else "kept"))
        return found

    rows: list[dict[str, Any]] = []
    offline.read = logged
    try:
        for half in DEVELOPMENT:
            progress(f"reviewing the {half} set ...")
            with tempfile.TemporaryDirectory(prefix="review-gate-") as tmp:
                for conv in load(half):
                    said.clear()
                    result = review_conversation(
                        conv, Path(tmp) / conv.id, lambda: offline.OfflineReviewer()
                    )
                    missed = {f.text for _, f, n, _ in result.kept if n == 0}
                    facts = [f for _, f in conv.keep] + [new for _, new in conv.was]
                    seen: set[str] = set()
                    for role, clause, found in said:
                        if role != "user" or found != TURNED_DOWN or clause in seen:
                            continue
                        seen.add(clause)
                        held = [f.text for f in facts if f.held_by(clause)]
                        never = [p for _, p in conv.never if p.lower() in clause.lower()]
                        rows.append(
                            {
                                "set": half,
                                "clause": clause,
                                "fact": bool(held) and not never,
                                "gives_back": sorted({h for h in held if h in missed}),
                            }
                        )
    finally:
        offline.read = read
    return rows


def measure(rows: list[dict[str, Any]], validate: set[str]) -> dict[str, Any]:
    """Train on the sets outside ``validate``, measure on those in it."""
    import numpy as np
    from scipy.sparse import csr_matrix, hstack
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.linear_model import LogisticRegression

    from reverie.review import embeddings

    train = [r for r in rows if r["set"] not in validate]
    held = [r for r in rows if r["set"] in validate]
    y_train = np.array([r["fact"] for r in train], dtype=int)
    y_held = np.array([r["fact"] for r in held], dtype=int)
    embeddings.load("on")  # refuses with what to install when the extra is missing
    encode = embeddings._minilm()  # the reviewer's own encoder: the vectors it would compare
    assert encode is not None

    def vectors(part: list[dict[str, Any]]) -> Any:
        return np.array(encode([r["clause"] for r in part]))

    grams = HashingVectorizer(n_features=2**16, ngram_range=(1, 2), alternate_sign=False)
    features = {
        "MiniLM": (vectors(train), vectors(held)),
        "word 1-2 grams": (
            grams.transform([r["clause"] for r in train]),
            grams.transform([r["clause"] for r in held]),
        ),
    }
    m_train, m_held = features["MiniLM"]
    g_train, g_held = features["word 1-2 grams"]
    features["both"] = (
        hstack([g_train, csr_matrix(m_train)]).tocsr(),
        hstack([g_held, csr_matrix(m_held)]).tocsr(),
    )
    out: dict[str, Any] = {
        "train": {"clauses": len(train), "facts": int(y_train.sum())},
        "validate": {
            "clauses": len(held),
            "facts": int(y_held.sum()),
            "missed facts held": len({f for r in held for f in r["gives_back"]}),
        },
        "models": {},
    }
    for name, (x_train, x_held) in features.items():
        model = LogisticRegression(C=1.0, max_iter=3000, class_weight="balanced")
        p = model.fit(x_train, y_train).predict_proba(x_held)[:, 1]
        points = []
        for t in THRESHOLDS:
            kept = p >= t
            n = int(kept.sum())
            back = {f for r, k in zip(held, kept, strict=True) if k for f in r["gives_back"]}
            points.append(
                {
                    "threshold": t,
                    "kept": n,
                    "precision": float(y_held[kept].mean()) if n else None,
                    "recall": float(y_held[kept].sum() / max(1, y_held.sum())),
                    "missed facts given back": len(back),
                }
            )
        out["models"][name] = points
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--validate", default="test20,test21,test22")
    parser.add_argument("--clauses", type=Path, help="JSON lines of the logged clauses")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    validate = set(args.validate.split(","))
    unknown = validate - set(DEVELOPMENT)
    if unknown:
        parser.error(f"--validate takes development sets only, not {', '.join(sorted(unknown))}")
    if args.clauses and args.clauses.exists():
        rows = [json.loads(line) for line in args.clauses.read_text().splitlines()]
    else:
        rows = gather()
        if args.clauses:
            args.clauses.write_text("".join(json.dumps(r) + "\n" for r in rows))
    progress(f"training on {len(rows):,} clauses turned down ...")
    result = measure(rows, validate)
    table = markdown_table(
        ["features", "threshold", "kept", "precision", "recall", "missed facts given back"],
        [
            [
                name,
                f"{pt['threshold']:.1f}",
                pt["kept"],
                "-" if pt["precision"] is None else f"{100 * pt['precision']:.0f}%",
                f"{100 * pt['recall']:.0f}%",
                pt["missed facts given back"],
            ]
            for name, points in result["models"].items()
            for pt in points
        ],
    )
    v = result["validate"]
    head = (
        f"trained on {result['train']['clauses']:,} clauses ({result['train']['facts']} hold a "
        f"fact); validated on {v['clauses']:,} ({v['facts']} hold a fact, "
        f"{v['missed facts held']} facts the reviewer missed)"
    )
    _common.emit(args.json, result, head + "\n\n" + table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
