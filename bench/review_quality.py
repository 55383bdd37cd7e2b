"""Quality of the offline reviewer on the review suite: precision and recall per scenario.

The scenarios live in ``tests/review/scenarios.py`` (the same ones ``tests/review/
test_quality.py`` asserts). Each is reviewed end to end into a fresh Reverie home, batch by
batch, through ``Reverie.memory_apply(..., writer="review")``. Then:

* **precision** = entries review wrote that hold an expected fact / all entries review wrote;
* **recall** = expected facts found in some entry / expected facts (including the facts the
  rules are known to miss, which the tests do not assert);
* **violations** = broken hard rules (a secret, a question, transient talk or a rule of
  behaviour in memory or its history; a duplicate; a wrong section; a source outside the
  batch; an index over its cap; operations on a second run with nothing new).

Run: ``PYTHONPATH=src python bench/review_quality.py [--json]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import _common
from _common import markdown_table, progress

if str(_common.ROOT) not in sys.path:  # the scenarios are in tests/, importable from the root
    sys.path.insert(0, str(_common.ROOT))

from tests.review.scenarios import SCENARIOS, Outcome, run_scenario, totals


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _row(o: Outcome) -> dict[str, Any]:
    facts = len(o.scenario.keep)
    return {
        "scenario": o.scenario.name,
        "entries": len(o.entries),
        "expected_entries": o.expected_entries,
        "precision": o.expected_entries / len(o.entries) if o.entries else None,
        "facts": facts,
        "found": o.found,
        "recall": o.found / facts if facts else None,
        "commits": o.commits,
        "operations": o.operations,
        "model_calls": o.model_calls,
        "violations": o.violations,
        "missed": [
            {"phrase": f.phrase, "why": f.why_missed or "not expected to be missed"}
            for f in o.scenario.keep
            if o.kept.get(f.phrase, 0) == 0
        ],
        "unexpected": [
            e.text
            for e in o.entries
            if not any(f.phrase.casefold() in e.text.casefold() for f in o.scenario.keep)
        ],
        "seconds": round(o.seconds, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="review-quality-") as tmp:
        for scenario in SCENARIOS:
            progress(f"reviewing {scenario.name} ...")
            outcomes.append(run_scenario(scenario, Path(tmp) / scenario.name))
    rows = [_row(o) for o in outcomes]
    total = totals(outcomes)
    payload = {"scenarios": rows, "total": total}
    table = markdown_table(
        ["scenario", "entries", "precision", "facts", "recall", "commits", "violations"],
        [
            [
                r["scenario"],
                r["entries"],
                "-" if r["precision"] is None else _pct(r["precision"]),
                r["facts"],
                "-" if r["recall"] is None else _pct(r["recall"]),
                r["commits"],
                len(r["violations"]),
            ]
            for r in rows
        ]
        + [
            [
                "**all**",
                int(total["entries"]),
                _pct(total["precision"]),
                int(total["facts"]),
                _pct(total["recall"]),
                sum(r["commits"] for r in rows),
                int(total["violations"]),
            ]
        ],
    )
    notes = ["", f"Recall of the facts the tests assert: {_pct(total['required_recall'])}."]
    for r in rows:
        for m in r["missed"]:
            notes.append(f"- missed in {r['scenario']}: {m['phrase']!r} ({m['why']})")
        for text in r["unexpected"]:
            notes.append(f"- unexpected entry in {r['scenario']}: {text}")
        for v in r["violations"]:
            notes.append(f"- VIOLATION in {r['scenario']}: {v}")
    _common.emit(args.json, payload, table + "\n" + "\n".join(notes))
    return 1 if total["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
