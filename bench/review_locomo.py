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

**(c) Observations covered.** LoCoMo's authors wrote, per session and speaker, the facts a
reader should take away (``observation``: 2,541 on the published file, each with the turn or
turns it rests on). An observation is covered *by source* when one of its evidence turns lies
in the source range of a memory entry (the entry points an agent at it), and *by content* when
one entry of the agent's memory holds at least half of the observation's content words (at
least two; lower-case words of three letters or more, a trailing ``s``, ``es``, ``ed`` or
``ing`` cut, minus the benchmark's stop words and the two speakers' names), and *by both* when
one entry does both. Observations whose evidence names no existing turn are left out.

**(d) Precision on a hand-checked sample.** ``--sample N`` prints N entries (chosen with
``--seed``, with the turns they cite) to the terminal for a person to judge; the verdicts are
kept in ``bench/review_locomo_judged.json`` under a hash of the entry's text, never the text
(LoCoMo's licence), and the report counts, over the judged entries present in the memory,
those judged ``good``: a true statement of what the cited turns say, readable as written, and
worth keeping beyond the conversation.

Latency is the wall time of each arm's whole procedure for one question (for memory first:
the memory search, finding the cited lines, and the history search when it is needed), warm,
one question after another, the arms in rotating order; each question is asked ``--repeat``
times and its fastest time kept (as ``bench/locomo_bench.py`` does).

LoCoMo is CC BY-NC 4.0: it is read at run time (``--locomo``, ``$REVERIE_LOCOMO`` or
``../shared/bench/locomo10.json`` beside the repository) and never copied, and no text of it
(nor of the memory made from it) is printed; without it the benchmark says so and stops.

Run::

    PYTHONPATH=src python bench/review_locomo.py [--quick] [--json] [--locomo PATH]
        [--repeat N] [--save-json PATH] [--no-questions] [--sample N --seed S]

``--quick`` uses the first two samples; ``--no-questions`` skips (b).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import random
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

JUDGED = Path(__file__).with_name("review_locomo_judged.json")
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


# --- observations ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Observation:
    """One fact LoCoMo's authors took from a session, with the turns it rests on."""

    agent: str
    speaker: str
    text: str
    turns: tuple[Turn, ...]


def observations(sample: dict[str, Any]) -> tuple[list[Observation], int]:
    """A sample's observations whose evidence names existing turns, and how many were not."""
    where = locomo.evidence_map(sample)
    agent = locomo.agent_name(sample)
    out, dropped = [], 0
    for key, by_speaker in sorted(sample.get("observation", {}).items()):
        if not key.endswith("_observation") or not isinstance(by_speaker, dict):
            continue
        for speaker, items in sorted(by_speaker.items()):
            for item in items:
                text, evidence = item[0], item[1]
                turns = tuple(where[d] for d in locomo.normalize_evidence(evidence) if d in where)
                if turns:
                    out.append(Observation(agent, speaker, text, turns))
                else:
                    dropped += 1
    return out, dropped


_SUFFIX = re.compile(r"(?:ing|ed|es|s)$")


def fact_words(text: str, names: set[str]) -> set[str]:
    """Content words, crudely stemmed, without stop words and the speakers' names."""
    out = set()
    for w in _WORD.findall(text.lower()):
        if len(w) < 3 or w in STOP_WORDS or w in names:
            continue
        stem = _SUFFIX.sub("", w) if len(w) > 5 else w
        out.add(stem)
    return out


@dataclass
class ObservationCoverage:
    """Observations covered by a memory entry's source, by its content, and by both."""

    total: int = 0
    dropped: int = 0
    by_source: int = 0
    by_content: int = 0
    by_both: int = 0
    per_agent: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)


def observation_coverage(
    samples: list[dict[str, Any]], agents: list[AgentResult]
) -> ObservationCoverage:
    """Which observations a memory entry covers (see (c) in the module docstring)."""
    files = {a.agent: a.files for a in agents}
    cov = ObservationCoverage()
    for sample in samples:
        obs, dropped = observations(sample)
        conv = sample["conversation"]
        names = {str(conv.get("speaker_a", "")).lower(), str(conv.get("speaker_b", "")).lower()}
        agent = locomo.agent_name(sample)
        entries = []
        for line in list_items(files[agent]):
            cited = {(c, p) for c, s, e in parse_sources(line) for p in range(s, e)}
            entries.append((cited, fact_words(line, names)))
        n = src = con = both = 0
        for o in obs:
            want = fact_words(o.text, names)
            need = max(2, (len(want) + 1) // 2)
            cites = [bool(cited & set(o.turns)) for cited, _ in entries]
            says = [len(want & words) >= need for _, words in entries]
            n += 1
            src += any(cites)
            con += any(says)
            both += any(c and w for c, w in zip(cites, says, strict=True))
        cov.total += n
        cov.dropped += dropped
        cov.by_source += src
        cov.by_content += con
        cov.by_both += both
        cov.per_agent[agent] = (n, src, con, both)
    return cov


# --- the hand-checked sample -------------------------------------------------------------------


def entry_key(line: str) -> str:
    """How a judged entry is named in the verdict file: a hash, never LoCoMo's text."""
    return hashlib.sha256(line.strip().encode()).hexdigest()[:16]


def sample_entries(agents: list[AgentResult], n: int, seed: int) -> list[tuple[str, str]]:
    """``n`` entries (agent, line) picked with ``seed`` from every agent's memory."""
    pool = [(a.agent, line) for a in agents for line in list_items(a.files) if parse_sources(line)]
    pool.sort(key=lambda item: entry_key(item[1]))
    rng = random.Random(seed)
    return rng.sample(pool, min(n, len(pool)))


def judged_precision(agents: list[AgentResult]) -> dict[str, int]:
    """Verdicts of the judged entries present in the memory, by verdict."""
    if not JUDGED.is_file():
        return {}
    verdicts: dict[str, str] = json.loads(JUDGED.read_text(encoding="utf-8"))
    counts: dict[str, int] = defaultdict(int)
    for a in agents:
        for line in list_items(a.files):
            verdict = verdicts.get(entry_key(line))
            if verdict is not None:
                counts[verdict] += 1
    return dict(counts)


def print_sample(rv: Reverie, agents: list[AgentResult], n: int, seed: int) -> None:
    """Entries and the turns they cite, to the terminal only, for a person to judge."""
    for agent, line in sample_entries(agents, n, seed):
        print(f"\n[{entry_key(line)}] {agent}\n  ENTRY: {line}")
        for conv, start, end in parse_sources(line):
            for m in rv.context_read(agent, conv, start, end).messages:
                print(f"  TURN {conv}#{m.position} {m.author}: {m.text}")


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


def observation_lines(obs: ObservationCoverage, judged: dict[str, int]) -> list[str]:
    """The observation coverage and the hand-checked precision, as report lines."""
    n = max(1, obs.total)
    checked = sum(judged.values())
    good = judged.get("good", 0)
    verdicts = ", ".join(f"{k} {v}" for k, v in sorted(judged.items()))
    return [
        f"- **Observations covered**: of {obs.total:,} LoCoMo observations "
        f"({obs.dropped} left out: no existing evidence turn), {obs.by_source:,} "
        f"({_pct(obs.by_source / n)}) by a memory entry's source range, {obs.by_content:,} "
        f"({_pct(obs.by_content / n)}) by an entry's content, {obs.by_both:,} "
        f"({_pct(obs.by_both / n)}) by one entry doing both.",
        f"- **Precision, hand-checked**: {good} of {checked} judged entries good "
        f"({_pct(good / checked) if checked else '-'}; {verdicts or 'none judged'})."
        if checked
        else "- **Precision, hand-checked**: no judged entry is in this memory.",
    ]


def report(
    agents: list[AgentResult],
    cov: Coverage,
    results: list[Arm],
    info: dict[str, str],
    cmd: str,
    obs: ObservationCoverage,
    judged: dict[str, int],
) -> str:
    """The Markdown report: ratios first, then coverage, memory, recall, latency, machine."""
    total = Cost()
    for a in agents:
        for name in ("runs", "batches", "commits", "model_calls", "seconds"):
            setattr(total, name, getattr(total, name) + getattr(a.cost, name))
    entries = sum(a.entries for a in agents)
    chars = sum(a.chars for a in agents)
    lines = [f"`{cmd}`", "", *observation_lines(obs, judged)]
    if results:
        h, m, g = results
        n_q = len(h.recall)
        lines += [
            f"- **Recall@5**: memory first, then history {m.mean():.3f} = "
            f"{fmt_ratio(m.mean(), h.mean())} history alone ({h.mean():.3f}); with memory hits "
            f"gated on two shared content words {g.mean():.3f} = "
            f"{fmt_ratio(g.mean(), h.mean())}. Memory gave at least one of the five turns for "
            f"{m.with_memory()} of {n_q} questions ({_pct(m.with_memory() / max(1, n_q))}; "
            f"gated: {g.with_memory()}), and those turns alone reach Recall@5 "
            f"{statistics.fmean(m.memory_recall):.3f} (gated "
            f"{statistics.fmean(g.memory_recall):.3f}).",
            f"- **Latency**: memory first p50 {ms(m.stats.p50)} ms = "
            f"{fmt_ratio(m.stats.p50, h.stats.p50)} history alone ({ms(h.stats.p50)} ms), p95 "
            f"{ms(m.stats.p95)} ms = {fmt_ratio(m.stats.p95, h.stats.p95)} "
            f"({ms(h.stats.p95)} ms); gated p50 {fmt_ratio(g.stats.p50, h.stats.p50)}, p95 "
            f"{fmt_ratio(g.stats.p95, h.stats.p95)}.",
        ]
    lines += [
        f"- **Coverage**: {cov.evidence_covered:,} of {cov.evidence:,} evidence turns "
        f"({_pct(cov.share)}) lie in a memory entry's source range, against {_pct(cov.base)} of "
        f"all {cov.turns:,} turns ({fmt_ratio(cov.share, cov.base)} the rate of a random turn); "
        f"{cov.questions_touched:,} of {cov.questions:,} questions have an evidence turn covered.",
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
    lines += ["", "Observations covered, per sample (by source / by content / by both):", ""]
    lines.append(
        markdown_table(
            ["sample", "observations", "by source", "by content", "by both"],
            [
                [agent.removeprefix("locomo-"), f"{n:,}", f"{a:,}", f"{b:,}", f"{c:,}"]
                for agent, (n, a, b, c) in obs.per_agent.items()
            ],
        )
    )
    if results:
        h = results[0]
        cats = sorted(h.by_category)
        counts = {c: len(h.by_category[c]) for c in cats}
        lines += ["", f"Recall@5 over {len(h.recall):,} questions, and latency per question:", ""]
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
    parser.add_argument("--no-questions", action="store_true", help="skip Recall@5 (b)")
    parser.add_argument(
        "--sample", type=int, default=0, help="print N entries to judge (terminal only)"
    )
    parser.add_argument("--seed", type=int, default=11, help="seed of --sample")
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
            obs = observation_coverage(samples, agents)
            judged = judged_precision(agents)
            if args.sample:
                print_sample(rv, agents, args.sample, args.seed)
                return 0
            results: list[Arm] = []
            if not args.no_questions:
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
        "observations": {
            "total": obs.total,
            "left_out": obs.dropped,
            "by_source": obs.by_source,
            "by_content": obs.by_content,
            "by_both": obs.by_both,
            "per_agent": {
                agent: dict(
                    zip(("observations", "by_source", "by_content", "by_both"), v, strict=True)
                )
                for agent, v in obs.per_agent.items()
            },
        },
        "judged": judged,
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
    _common.emit(args.json, payload, report(agents, cov, results, info, cmd.strip(), obs, judged))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
