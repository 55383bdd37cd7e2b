"""Running review: find completed ranges, batch them, ask the reviewer, apply (SPEC R1-R10).

One run of one agent:

1. take the agent's review lock without waiting (R10): another process reviewing the same
   agent means this one skips it;
2. list the completed, unreviewed ranges of its memory-on conversations (R1, O3); with none,
   stop here: no model call, no commit (R2);
3. cut them into batches within a character budget, at most ``max_batches`` per run and
   ``max_seconds`` of wall time (R3);
4. per batch: discard uncommitted changes in the repository (R4), read the user and assistant
   text of the ranges (never tool logs, R5), gather the relevant memory by searching it, ask
   the reviewer, drop the operations the store would refuse or whose entries do not cite
   text reviewed in the batch (:mod:`.sources`), and a removal an update makes whose
   replacing entry did not survive (:mod:`.replacements`), all reported, never sinking the
   rest; apply the
   remainder as one commit whose message names the ranges (R7) with an idempotency key
   derived from the ranges, mark the ranges reviewed, record the tokens spent.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reverie.core.markdown import STANDARD_SECTIONS, apply_batch
from reverie.core.operations import parse_batch
from reverie.core.paths import is_topic
from reverie.errors import NotFound, RefusedInput
from reverie.llm.base import ProviderError
from reverie.store.reviews import BatchRecord, ReviewLog

from .offline import topic_slug
from .replacements import REPLACEMENT_NOT_KEPT, unreplaced
from .sources import BatchSources
from .types import Reviewer, ReviewInput, ReviewOutput, Turn

if TYPE_CHECKING:
    from reverie.api import Reverie
    from reverie.store.state import Agent

__all__ = ["AgentReport", "ReviewLimits", "review_agent", "unstarted_report"]

Range = tuple[str, int, int]
Progress = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class ReviewLimits:
    """How much one run may do (R3), and how much text one batch may carry."""

    max_batches: int = 10
    max_seconds: float = 15 * 60
    batch_chars: int = 24_000
    related_queries: int = 20


@dataclass
class AgentReport:
    """What one run did for one agent (the ``--json`` figures of ``reverie review run``)."""

    agent: str
    batches: int = 0
    commits: int = 0
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    revision: int = 0
    pending: int = 0
    skipped: str | None = None
    #: A model failure that stopped this agent's run; its ranges stay pending.
    error: dict[str, Any] | None = None
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON."""
        return {
            "agent": self.agent,
            "batches": self.batches,
            "commits": self.commits,
            "model_calls": self.model_calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "revision": self.revision,
            "pending": self.pending,
            "skipped": self.skipped,
            "error": self.error,
            "dropped": self.dropped,
        }


def review_agent(
    rv: Reverie,
    agent: str,
    reviewer: Reviewer,
    *,
    limits: ReviewLimits | None = None,
    now: float | None = None,
    trigger: str = "manual",
    progress: Progress | None = None,
) -> AgentReport:
    """Review one agent's completed conversation ranges (R1-R7, R10).

    Raises:
        NotFound: no such agent.
        StorageFault: the data directory failed; what was committed stays committed.
    """
    limits = limits or ReviewLimits()
    a = rv.agent(agent)
    memory_id = rv.state.memory_of(a.id)
    report = AgentReport(agent=a.name, revision=rv.memories.current(memory_id).revision)
    with rv.state.try_review_lock(a.id) as held:
        if not held:
            report.skipped = "review of this agent is running in another process"
            return report
        log = ReviewLog(rv.state)
        started = log.start_run(a.id, trigger, now)
        deadline = time.monotonic() + limits.max_seconds
        ranges = rv.conversations.pending_ranges(a.id, now)
        batches = _batches(rv, ranges, limits.batch_chars)
        report.pending = len(batches)
        if progress:
            progress("start", {"agent": a.name, "batches": min(len(batches), limits.max_batches)})
        for batch in batches[: limits.max_batches]:
            if time.monotonic() > deadline:
                break
            try:
                _run_batch(rv, a.name, a.id, memory_id, batch, reviewer, report, limits)
            except ProviderError as exc:
                # The model is down or answers nonsense: keep the ranges pending, record what
                # the attempt cost, and leave the other agents' runs unaffected.
                report.error = {"code": exc.code, "message": exc.message}
                for name in ("model_calls", "tokens_in", "tokens_out"):
                    setattr(report, name, getattr(report, name) + int(exc.details.get(name, 0)))
                break
            report.pending -= 1
            if progress:
                progress("batch", {"agent": a.name, "report": report})
        log.finish_run(a.id, started, report.batches)
    return report


def unstarted_report(
    rv: Reverie,
    agent: Agent,
    error: dict[str, Any],
    *,
    limits: ReviewLimits | None = None,
    now: float | None = None,
) -> AgentReport:
    """The report of an agent whose review could not start (its reviewer could not be made:
    a model that is not installed, say): the revision its memory stands at and the batches
    left pending, with ``error`` only where there was something to review."""
    limits = limits or ReviewLimits()
    memory_id = rv.state.memory_of(agent.id)
    ranges = rv.conversations.pending_ranges(agent.id, now)
    pending = len(_batches(rv, ranges, limits.batch_chars))
    return AgentReport(
        agent=agent.name,
        revision=rv.memories.current(memory_id).revision,
        pending=pending,
        error=error if pending else None,
    )


def _batches(rv: Reverie, ranges: list[Range], budget: int) -> list[list[Range]]:
    """Cut ranges into batches of at most ``budget`` characters of text, in order.

    A long range is split at message boundaries; a single message longer than the budget is
    a batch of its own.
    """
    out: list[list[Range]] = []
    current: list[Range] = []
    size = 0
    for conv, start, end in ranges:
        piece_start = start
        for m in rv.conversations.messages(conv, start, end):
            n = len(m.text) if m.role != "tool" else 0
            if size + n > budget and (current or m.position > piece_start):
                if m.position > piece_start:
                    current.append((conv, piece_start, m.position))
                out.append(current)
                current, size, piece_start = [], 0, m.position
            size += n
        if end > piece_start:
            current.append((conv, piece_start, end))
    if current:
        out.append(current)
    return out


def _turns(rv: Reverie, batch: list[Range]) -> list[Turn]:
    turns = []
    for conv, start, end in batch:
        for m in rv.conversations.messages(conv, start, end):
            if m.role in ("user", "assistant"):  # R5: never tool output
                turns.append(Turn(conv, m.position, m.role, m.author, m.text, m.time))
    return turns


def _related_topics(rv: Reverie, agent: str, turns: list[Turn], queries: int) -> dict[str, str]:
    """Topic files that the new text is about, found by searching memory (not all of it)."""
    # The section topics are where detail moved out of the index goes: a reviewer that cannot
    # see them would start new ones beside them.
    paths: dict[str, None] = {f"memory/{topic_slug(s)}.md": None for s in STANDARD_SECTIONS}
    for turn in turns[:queries]:
        for hit in rv.memory_search(agent, turn.text, 5):
            if is_topic(hit.source):
                paths.setdefault(hit.source, None)
    out = {}
    for path in paths:
        try:
            out[path] = rv.memory_read(agent, path).text
        except NotFound:
            continue
    return out


def _run_batch(
    rv: Reverie,
    agent: str,
    agent_id: str,
    memory_id: str,
    batch: list[Range],
    reviewer: Reviewer,
    report: AgentReport,
    limits: ReviewLimits,
) -> None:
    rv.memories.discard_uncommitted(memory_id)  # R4
    turns = _turns(rv, batch)
    index = rv.memory_read(agent).text
    review_input = ReviewInput(
        agent=agent,
        turns=turns,
        index=index,
        topics=_related_topics(rv, agent, turns, limits.related_queries),
        index_cap_chars=rv.settings.prompt_index_chars,
    )
    answer = reviewer.review(review_input)
    report.batches += 1
    report.model_calls += answer.model_calls
    report.tokens_in += answer.tokens_in
    report.tokens_out += answer.tokens_out
    unread = {(c, p) for c, s, e in answer.left_out for p in range(s, e)}
    reviewed = BatchSources(t for t in turns if (t.conversation_id, t.position) not in unread)
    kept, dropped = _admissible(rv, memory_id, answer, reviewed)
    report.dropped += dropped
    revision = rv.memories.current(memory_id).revision
    changed = False
    if kept:
        key = "review:" + hashlib.sha256(repr(sorted(batch)).encode()).hexdigest()
        message = _message(answer.message, batch)
        outcome = rv.memory_apply(
            agent, {"operations": kept, "message": message}, writer="review", key=key
        )
        revision, changed = outcome.revision, outcome.changed
        report.commits += int(outcome.changed and not outcome.replayed)
    report.revision = revision
    record = BatchRecord(
        agent_id,
        time.time(),
        batch,
        revision,
        changed,
        answer.model_calls,
        answer.tokens_in,
        answer.tokens_out,
        dropped,
    )
    # The ranges are marked and the batch recorded together: a run killed after the write
    # leaves the whole batch pending, which the next run makes again and the key replays.
    with rv.state.transaction() as conn:
        for conv, _, end in batch:
            # Ranges the reviewer could not read stay pending from their start.
            skipped = [s for c, s, _ in answer.left_out if c == conv]
            rv.conversations.mark_reviewed_in(conn, conv, min([end, *skipped]))
        ReviewLog(rv.state).record_batch_in(conn, record)


def _admissible(
    rv: Reverie, memory_id: str, answer: ReviewOutput, reviewed: BatchSources
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The operations to apply, in order, and the others, reported with their code.

    Here a reviewer's answer is finally assembled, so every rule that keeps an operation out
    is applied here, whoever the reviewer: the store must accept it, its entries must cite text
    reviewed in this batch (:mod:`.sources`), and a removal that an update makes stands only
    with the entry that replaces it (:mod:`.replacements`), whatever dropped that entry.
    """
    candidates = dict(enumerate(answer.operations))
    dropped: list[dict[str, Any]] = []
    while True:
        kept = _accepted(rv, memory_id, candidates, reviewed, dropped)
        units = {
            i: text
            for i, text in answer.replaced_by.items()
            if i in kept and kept[i].get("action") == "remove"
        }
        cancelled = (
            unreplaced(units, _files_after(rv, memory_id, list(kept.values()))) if units else []
        )
        if not cancelled:
            return list(kept.values()), sorted(dropped, key=lambda d: int(d["operation"]))
        # The old entry stays; what was kept is checked again against it.
        for i in cancelled:
            dropped.append({"operation": i, "action": "remove", "code": REPLACEMENT_NOT_KEPT})
        candidates = {i: op for i, op in kept.items() if i not in cancelled}


def _accepted(
    rv: Reverie,
    memory_id: str,
    candidates: dict[int, dict[str, Any]],
    reviewed: BatchSources,
    dropped: list[dict[str, Any]],
) -> dict[int, dict[str, Any]]:
    """Of ``candidates`` (by their index in the answer), those the store accepts and whose
    entries cite text reviewed in this batch, in order; the others are added to ``dropped``."""
    kept: dict[int, dict[str, Any]] = {}
    for i, op in candidates.items():
        reason = _source_problem(op, reviewed)
        if reason is None:
            try:
                parse_batch({"operations": [op]})
                rv.memories.preview(memory_id, {"operations": [*kept.values(), op]})
            except (RefusedInput, NotFound) as exc:
                reason = exc.code
        if reason is None:
            kept[i] = op
        else:
            # Never echo the operation's text: it may be exactly the secret that was refused.
            dropped.append({"operation": i, "action": str(op.get("action")), "code": reason})
    return kept


def _files_after(
    rv: Reverie, memory_id: str, operations: list[dict[str, Any]]
) -> dict[str, str | None]:
    """Every memory file as ``operations`` (accepted by the store) would leave it."""
    files: dict[str, str | None] = dict(
        rv.memories.files(memory_id, rv.memories.current(memory_id))
    )
    if operations:
        applied = apply_batch(parse_batch({"operations": operations}), files.get)
        files.update(applied.files)
    return files


def _source_problem(op: dict[str, Any], reviewed: BatchSources) -> str | None:
    """Every entry review adds or rewrites names a source reviewed in this batch (R6, H2)."""
    if op.get("action") not in ("add", "replace"):
        return None
    text = op.get("text")
    if not isinstance(text, str):
        return None  # parse_batch reports it
    problem = reviewed.problem(text)
    return None if problem is None else problem.code


def _message(reviewer_message: str, batch: list[Range]) -> str:
    where = ", ".join(f"{c}#{s}-{e}" for c, s, e in batch)
    head = reviewer_message.strip().split("\n")[0] if reviewer_message.strip() else "Review"
    return f"{head[:100]}\n\nReviewed: {where}"
