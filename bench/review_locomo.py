"""Review on LoCoMo: what the offline reviewer keeps from long casual chat, and what it adds to
answering questions from memory first, then history.

Every LoCoMo sample is imported through the facade (``reverie.importers.locomo`` records into
``Reverie.import_records``: one agent per sample, one closed conversation per session, both
speakers as ``user`` messages with their names as authors), then each agent is reviewed by the
offline reviewer through ``Reverie.review_run(agent, force=True)``, called again while ranges
are pending (a run does at most 10 batches, SPEC R3). Then, in one run:

**(a) Coverage.** The *evidence turns* are the distinct turns named by the ``evidence`` of the
questions in categories 1-4 (multi-hop, temporal, open-domain, single-hop) that have evidence,
normalised by the importer (``locomo.questions(..., with_evidence=True)``: packed ids split,
malformed ids repaired, ids of missing turns dropped; 1,536 questions on the published file).
A turn is *covered* when it lies in the source range ``(source: conv#start-end)`` of at least
one list item of the agent's memory (``MEMORY.md`` and every topic file, parsed with
``reverie.review.types.parse_sources``). Reported: covered evidence turns / evidence turns;
beside it, covered turns / all turns, the rate at which a turn picked at random would be
covered, so that the lift says whether review keeps what questions ask about. Memory size:
list items, characters, topic files.

**(b) Recall@5, memory first, against history alone.** Every arm gets a budget of exactly five
*turns* per question; Recall@5 of a question is the share of its evidence turns among them,
averaged over the questions.

* *History alone*: ``Reverie.context_search(agent, question, limit=5)``; the hits' message
  ranges are expanded in rank order (each hit's turns in order, duplicates dropped) and cut at
  five turns, as ``bench/locomo_bench.py`` does.
* *Memory first*: ``Reverie.memory_search(agent, question, limit=5)``; each hit, in rank order,
  contributes the turns of its line's source ranges (what an agent reaches by opening the
  source with ``context_read``); a line without a source (a ``[[link]]`` line) contributes
  nothing. The slots memory leaves are filled, in rank order, from
  ``context_search(agent, question, limit=min(20, 5 + turns from memory))`` (asked for more
  hits by the number of memory turns, so that hits already taken by memory cannot leave a slot
  empty); the list is cut at five turns. History is not asked when memory fills all five.
* *Memory first, gated*: the same, except that a memory hit counts only when its line shares
  at least two content words with the question (lower-case words, no stemming, minus the stop
  words of ``bench/locomo_bench.py``). Memory search ORs every word of the query, so nearly
  every question gets memory hits however weak; this arm shows what a simple relevance check,
  fixed before it was measured, changes. It is a diagnostic, not a tuned method.

Latency is the wall time of each arm's whole procedure for one question (for memory first:
the memory search, finding the cited lines, and the history search when it is needed), warm,
one question after another, the arms in rotating order; each question is asked ``--repeat``
times and its fastest time kept (as ``bench/locomo_bench.py`` does).

LoCoMo is CC BY-NC 4.0: it is read at run time (``--locomo``, ``$REVERIE_LOCOMO`` or
``../shared/bench/locomo10.json`` beside the repository) and never copied, and no text of it
(nor of the memory made from it) is printed; without it the benchmark says so and stops.

Run::

    PYTHONPATH=src python bench/review_locomo.py [--quick] [--json] [--locomo PATH]
        [--repeat N] [--save-json PATH]

``--quick`` uses the first two samples.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
from _common import Stats, fmt_ratio, markdown_table, ms, progress
from locomo_bench import STOP_WORDS
from reverie.api import Reverie
from reverie.importers import locomo
from reverie.index.fts import SearchHit, query_terms
from reverie.review.types import parse_sources
from review_cost import Cost, list_items, memory_files, offline_run, review_until_done

K = 5
WARMUP = 10

Turn = tuple[str, int]
_WORD = re.compile(r"\w+")


# --- import and review -------------------------------------------------------------------------


@dataclass
class AgentResult:
    """One LoCoMo sample after review: its cost, its memory, what the memory cites."""

    agent: str
    turns: int
    review_chars: int
    cost: Cost
    files: dict[str, str]
    cited: set[Turn] = field(default_factory=set)
    entries: int = 0
    sourced_entries: int = 0

    @property
    def chars(self) -> int:
        """Characters over every memory file."""
        return sum(len(t) for t in self.files.values())


def cited_turns(files: dict[str, str]) -> tuple[set[Turn], int, int]:
    """Turns named by the source ranges of list items, list items, and items with a source."""
    cited: set[Turn] = set()
    items = list_items(files)
    sourced = 0
    for line in items:
        sources = parse_sources(line)
        sourced += bool(sources)
        for conv, start, end in sources:
            cited.update((conv, p) for p in range(start, end))
    return cited, len(items), sourced


def import_and_review(rv: Reverie, samples: list[dict[str, Any]]) -> list[AgentResult]:
    """Import every sample, then review each agent with the offline reviewer until done."""
    summary = rv.import_records(list(locomo.convert(samples)))
    want = sum(len(s.turns) for sample in samples for s in locomo.sessions(sample))
    if summary.messages != want:
        sys.exit(f"imported {summary.messages} messages, expected {want}")
    if rv.settings.model:
        sys.exit(f"REVERIE_MODEL is set ({rv.settings.model}): unset it to measure offline")
    out = []
    for sample in samples:
        agent = locomo.agent_name(sample)
        turns = [t for s in locomo.sessions(sample) for t in s.turns]
        progress(f"reviewing {agent} ({len(turns)} turns) ...")
        cost = review_until_done(rv, agent, offline_run(rv, agent))
        files = memory_files(rv, agent)
        cited, entries, sourced = cited_turns(files)
        out.append(
            AgentResult(
                agent=agent,
                turns=len(turns),
                review_chars=sum(len(locomo.turn_text(t)) for t in turns),
                cost=cost,
                files=files,
                cited=cited,
                entries=entries,
                sourced_entries=sourced,
            )
        )
    return out


# --- the arms ----------------------------------------------------------------------------------


def ranked_turns(
    ranges: Iterable[tuple[str, int, int]], k: int, taken: Sequence[Turn] = ()
) -> list[Turn]:
    """``taken``, then the turns of ``ranges`` in order, without duplicates, cut at ``k``."""
    out: dict[Turn, None] = dict.fromkeys(taken)
    for conv, start, end in ranges:
        for p in range(start, end):
            if len(out) >= k:
                return list(out)[:k]
            out.setdefault((conv, p), None)
    return list(out)[:k]


class MemoryLines:
    """The full line behind a memory search hit (a hit's excerpt is cut past 300 characters)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.lines = {path: text.split("\n") for path, text in files.items()}

    def line(self, hit: SearchHit) -> str:
        """The line of ``hit.source`` that ``hit`` matched."""
        if not hit.excerpt.startswith("…") and not hit.excerpt.endswith("…"):
            return hit.excerpt
        core = hit.excerpt.strip("…")
        return next((line for line in self.lines.get(hit.source, []) if core in line), "")


def content_words(text: str) -> set[str]:
    """The lower-cased words of ``text`` that are not function or question words."""
    return {w for w in query_terms(text) if w not in STOP_WORDS}


def history_alone(rv: Reverie, agent: str, question: str) -> tuple[list[Turn], int]:
    """The first five turns of ``context_search`` (none from memory)."""
    hits = rv.context_search(agent, question, limit=K)
    return ranked_turns(((h.conversation, h.start, h.end) for h in hits), K), 0


def memory_first(
    rv: Reverie, agent: str, question: str, lines: MemoryLines, *, gated: bool = False
) -> tuple[list[Turn], int]:
    """Turns cited by the memory hits, then history hits in the slots left; and how many of
    the five came from memory.

    ``gated``: a memory hit counts only when its line shares at least two content words with
    the question (``content_words``, exact lower-case words, no stemming).
    """
    ranges: list[tuple[str, int, int]] = []
    wanted = content_words(question) if gated else set()
    for hit in rv.memory_search(agent, question, limit=K):
        line = lines.line(hit)
        if gated and len(wanted & set(_WORD.findall(line.lower()))) < 2:
            continue
        ranges += parse_sources(line)
    from_memory = ranked_turns(ranges, K)
    if len(from_memory) >= K:
        return from_memory, K
    hits = rv.context_search(agent, question, limit=min(20, K + len(from_memory)))
    turns = ranked_turns(((h.conversation, h.start, h.end) for h in hits), K, from_memory)
    return turns, len(from_memory)


# --- scoring -----------------------------------------------------------------------------------


def recall(targets: Sequence[Turn], found: Iterable[Turn]) -> float:
    """The share of ``targets`` in ``found``."""
    wanted = set(targets)
    return len(wanted & set(found)) / len(wanted)


@dataclass
class Arm:
    """Recall and latency of one arm over the questions, and what memory gave it."""

    name: str
    recall: list[float] = field(default_factory=list)
    by_category: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    latencies_ns: list[int] = field(default_factory=list)
    #: Per question, how many of the five turns came from memory.
    memory_turns: list[int] = field(default_factory=list)
    #: Per question, Recall@5 of the memory turns alone (the history fill left out).
    memory_recall: list[float] = field(default_factory=list)
    #: Questions whose five turns differ (as a set) from history alone's.
    changed: int = 0

    def mean(self) -> float:
        """Mean Recall@5."""
        return statistics.fmean(self.recall) if self.recall else 0.0

    def category(self, c: int) -> float:
        """Mean Recall@5 over one category's questions."""
        values = self.by_category.get(c, [])
        return statistics.fmean(values) if values else 0.0

    def with_memory(self) -> int:
        """Questions for which memory gave at least one of the five turns."""
        return sum(1 for n in self.memory_turns if n)

    @property
    def stats(self) -> Stats:
        """Latency statistics."""
        return Stats.of_ns(self.latencies_ns)

    def to_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        return {
            "name": self.name,
            "recall@5": round(self.mean(), 4),
            "recall@5_by_category": {
                locomo.CATEGORIES[c]: round(self.category(c), 4) for c in sorted(self.by_category)
            },
            "latency_ms": self.stats.to_dict(),
            "questions_with_memory_turns": self.with_memory(),
            "mean_memory_turns": round(statistics.fmean(self.memory_turns or [0]), 3),
            "memory_turns_recall@5": round(statistics.fmean(self.memory_recall or [0]), 4),
            "changed_from_history_alone": self.changed,
        }


Procedure = Callable[[Reverie, locomo.Question], tuple[list[Turn], int]]


def arms(lines: dict[str, MemoryLines]) -> list[tuple[Arm, Procedure]]:
    """History alone, memory first, and memory first with gated memory hits."""
    return [
        (Arm("history alone"), lambda rv, q: history_alone(rv, q.agent, q.question)),
        (
            Arm("memory first, then history"),
            lambda rv, q: memory_first(rv, q.agent, q.question, lines[q.agent]),
        ),
        (
            Arm("memory first (gated), then history"),
            lambda rv, q: memory_first(rv, q.agent, q.question, lines[q.agent], gated=True),
        ),
    ]


def ask(
    rv: Reverie,
    questions: list[locomo.Question],
    lines: dict[str, MemoryLines],
    repeat: int,
) -> list[Arm]:
    """Ask every question of every arm (rotating order), score once, keep the fastest time."""
    procedures = arms(lines)
    for q in questions[:WARMUP]:
        for _, run in procedures:
            run(rv, q)
    clock = time.perf_counter_ns
    n = len(procedures)
    for i, q in enumerate(questions):
        best = [0] * n
        found: list[tuple[list[Turn], int]] = [([], 0)] * n
        for r in range(repeat):
            for j in range(n):
                k = (i + j + r) % n
                t0 = clock()
                got = procedures[k][1](rv, q)
                took = clock() - t0
                best[k] = took if r == 0 else min(best[k], took)
                found[k] = got
        baseline = set(found[0][0])
        for (arm, _), took, (turns, from_memory) in zip(procedures, best, found, strict=True):
            score = recall(q.targets, turns)
            arm.recall.append(score)
            arm.by_category[q.category].append(score)
            arm.latencies_ns.append(took)
            arm.memory_turns.append(from_memory)
            arm.memory_recall.append(recall(q.targets, turns[:from_memory]))
            arm.changed += set(turns) != baseline
    return [arm for arm, _ in procedures]


# --- the report --------------------------------------------------------------------------------


@dataclass
class Coverage:
    """Evidence turns covered by memory sources, against all turns covered."""

    evidence: int
    evidence_covered: int
    turns: int
    turns_covered: int
    questions: int
    questions_touched: int
    by_category: dict[int, tuple[int, int]]

    @property
    def share(self) -> float:
        """Covered evidence turns / evidence turns."""
        return self.evidence_covered / self.evidence if self.evidence else 0.0

    @property
    def base(self) -> float:
        """Covered turns / all turns: the chance a random turn is covered."""
        return self.turns_covered / self.turns if self.turns else 0.0


def coverage(agents: list[AgentResult], questions: list[locomo.Question]) -> Coverage:
    """Which evidence turns (distinct over questions) lie in a memory entry's source range."""
    cited = {a.agent: a.cited for a in agents}
    evidence: dict[tuple[str, Turn], set[int]] = defaultdict(set)
    for q in questions:
        for t in q.targets:
            evidence[(q.agent, t)].add(q.category)
    covered = {key for key in evidence if key[1] in cited[key[0]]}
    cats: dict[int, tuple[int, int]] = {}
    for c in sorted({c for cs in evidence.values() for c in cs}):
        keys = [k for k, cs in evidence.items() if c in cs]
        cats[c] = (len(keys), sum(1 for k in keys if k in covered))
    touched = sum(1 for q in questions if any(t in cited[q.agent] for t in q.targets))
    return Coverage(
        evidence=len(evidence),
        evidence_covered=len(covered),
        turns=sum(a.turns for a in agents),
        turns_covered=sum(len(a.cited) for a in agents),
        questions=len(questions),
        questions_touched=touched,
        by_category=cats,
    )


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def report(
    agents: list[AgentResult],
    cov: Coverage,
    results: list[Arm],
    info: dict[str, str],
    cmd: str,
) -> str:
    """The Markdown report: ratios first, then coverage, memory, recall, latency, machine."""
    h, m, g = results
    n_q = len(h.recall)
    total = Cost()
    for a in agents:
        for name in ("runs", "batches", "commits", "model_calls", "seconds"):
            setattr(total, name, getattr(total, name) + getattr(a.cost, name))
    entries = sum(a.entries for a in agents)
    chars = sum(a.chars for a in agents)
    lines = [
        f"`{cmd}`",
        "",
        f"- **Recall@5**: memory first, then history {m.mean():.3f} = "
        f"{fmt_ratio(m.mean(), h.mean())} history alone ({h.mean():.3f}); with memory hits "
        f"gated on two shared content words {g.mean():.3f} = {fmt_ratio(g.mean(), h.mean())}. "
        f"Memory gave at least one of the five turns for {m.with_memory()} of {n_q} questions "
        f"({_pct(m.with_memory() / max(1, n_q))}; gated: {g.with_memory()}), and those turns "
        f"alone reach Recall@5 {statistics.fmean(m.memory_recall):.3f} (gated "
        f"{statistics.fmean(g.memory_recall):.3f}).",
        f"- **Coverage**: {cov.evidence_covered:,} of {cov.evidence:,} evidence turns "
        f"({_pct(cov.share)}) lie in a memory entry's source range, against {_pct(cov.base)} of "
        f"all {cov.turns:,} turns ({fmt_ratio(cov.share, cov.base)} the rate of a random turn); "
        f"{cov.questions_touched:,} of {cov.questions:,} questions have an evidence turn covered.",
        f"- **Latency**: memory first p50 {ms(m.stats.p50)} ms = "
        f"{fmt_ratio(m.stats.p50, h.stats.p50)} history alone ({ms(h.stats.p50)} ms), p95 "
        f"{ms(m.stats.p95)} ms = {fmt_ratio(m.stats.p95, h.stats.p95)} ({ms(h.stats.p95)} ms); "
        f"gated p50 {fmt_ratio(g.stats.p50, h.stats.p50)}, p95 "
        f"{fmt_ratio(g.stats.p95, h.stats.p95)}.",
        f"- **Memory**: {entries:,} entries, {chars:,} characters over {len(agents)} agents; "
        f"review took {total.runs} runs, {total.batches} batches, {total.commits} commits, "
        f"{total.model_calls} model calls, {total.seconds:.1f} s.",
        "",
        "Per sample (one agent each):",
        "",
    ]
    rows = []
    for a in agents:
        rows.append(
            [
                a.agent.removeprefix("locomo-"),
                f"{a.turns:,}",
                f"{a.review_chars:,}",
                a.cost.runs,
                a.cost.batches,
                a.cost.commits,
                f"{a.cost.seconds:.1f}",
                f"{a.entries:,}",
                f"{a.sourced_entries:,}",
                f"{len(a.files.get('MEMORY.md', '')):,}",
                len(a.files) - 1 if "MEMORY.md" in a.files else len(a.files),
                f"{a.chars:,}",
                f"{len(a.cited):,}",
            ]
        )
    lines.append(
        markdown_table(
            [
                "sample",
                "turns",
                "text chars",
                "runs",
                "batches",
                "commits",
                "review s",
                "entries",
                "with a source",
                "MEMORY.md chars",
                "topic files",
                "memory chars",
                "turns cited",
            ],
            rows,
        )
    )
    lines += ["", "Evidence turns covered by a memory entry's source, by question category:", ""]
    lines.append(
        markdown_table(
            ["category", "evidence turns", "covered", "share"],
            [
                [locomo.CATEGORIES[c], f"{n:,}", f"{k:,}", _pct(k / n if n else 0.0)]
                for c, (n, k) in cov.by_category.items()
            ]
            + [
                [
                    "all (distinct)",
                    f"{cov.evidence:,}",
                    f"{cov.evidence_covered:,}",
                    _pct(cov.share),
                ]
            ],
        )
    )
    cats = sorted(h.by_category)
    counts = {c: len(h.by_category[c]) for c in cats}
    lines += ["", f"Recall@5 over {n_q:,} questions, and latency per question:", ""]
    lines.append(
        markdown_table(
            [
                "arm",
                "R@5",
                *[f"{locomo.CATEGORIES[c]} ({counts[c]})" for c in cats],
                "questions with memory turns",
                "R@5 of memory turns",
                "p50 ms",
                "p95 ms",
            ],
            [
                [
                    arm.name,
                    f"{arm.mean():.3f}",
                    *[f"{arm.category(c):.3f}" for c in cats],
                    f"{arm.with_memory():,}",
                    f"{statistics.fmean(arm.memory_recall):.3f}",
                    ms(arm.stats.p50),
                    ms(arm.stats.p95),
                ]
                for arm in results
            ],
        )
    )
    lines += ["", _common.machine_markdown(info)]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, import and review LoCoMo, measure, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, help="path to locomo10.json")
    parser.add_argument("--quick", action="store_true", help="the first 2 samples only")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--repeat", type=int, default=3, help="ask each question N times, keep the fastest"
    )
    parser.add_argument("--save-json", type=Path, help="also write the JSON figures to this file")
    args = parser.parse_args(argv)
    path = _common.locomo_path(args.locomo)
    if not path.is_file():
        print(
            f"LoCoMo not found at {path}: nothing measured. Pass --locomo PATH or set "
            "REVERIE_LOCOMO to locomo10.json (snap-research/LoCoMo, CC BY-NC 4.0; never copy "
            "it into the repository).",
            file=sys.stderr,
        )
        return 0
    samples = json.loads(path.read_text(encoding="utf-8"))
    if args.quick:
        samples = samples[:2]
    questions = [
        q for s in samples for q in locomo.questions(s, locomo.ANSWERABLE, with_evidence=True)
    ]
    cmd = "python bench/review_locomo.py " + " ".join(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="review-locomo-") as tmp:
        info = _common.machine(Path(tmp))
        with Reverie(Path(tmp) / "home", create=True) as rv:
            agents = import_and_review(rv, samples)
            cov = coverage(agents, questions)
            lines = {a.agent: MemoryLines(a.files) for a in agents}
            progress(f"asking {len(questions)} questions of three arms, {args.repeat}x ...")
            results = ask(rv, questions, lines, max(1, args.repeat))
    payload = {
        "machine": info,
        "command": cmd.strip(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "samples": len(samples),
        "questions": len(questions),
        "coverage": {
            "evidence_turns": cov.evidence,
            "evidence_covered": cov.evidence_covered,
            "share": round(cov.share, 4),
            "turns": cov.turns,
            "turns_covered": cov.turns_covered,
            "base_share": round(cov.base, 4),
            "questions_touched": cov.questions_touched,
            "by_category": {
                locomo.CATEGORIES[c]: {"evidence_turns": n, "covered": k}
                for c, (n, k) in cov.by_category.items()
            },
        },
        "agents": [
            {
                "agent": a.agent,
                "turns": a.turns,
                "review_chars": a.review_chars,
                "runs": a.cost.runs,
                "batches": a.cost.batches,
                "commits": a.cost.commits,
                "model_calls": a.cost.model_calls,
                "review_seconds": round(a.cost.seconds, 3),
                "entries": a.entries,
                "sourced_entries": a.sourced_entries,
                "index_chars": len(a.files.get("MEMORY.md", "")),
                "files": len(a.files),
                "chars": a.chars,
                "turns_cited": len(a.cited),
            }
            for a in agents
        ],
        "arms": [arm.to_dict() for arm in results],
    }
    if args.save_json:
        args.save_json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    _common.emit(args.json, payload, report(agents, cov, results, info, cmd.strip()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
