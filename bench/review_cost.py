"""Review cost as conversations grow, and the cost of new text on a home with a long past.

Two questions, measured in one run on seeded synthetic chat (no network, no model):

1. **Growth.** The same stream of conversations at 1x, 10x and 100x the messages, each imported
   into a fresh home and reviewed until nothing is pending: runs, batches, commits, model calls,
   tokens in and out, wall time, and the memory that results.
2. **New text on a big home.** The same ``--base`` new conversations ("1x new") reviewed on an
   empty home and on a home whose history is already 100x as long and already reviewed (its
   memory full and its detail moved into topic files). The ratio of the two costs says whether
   review pays for the new text only or also for the size of the memory and of the history.

Each question is answered twice:

* with the **offline reviewer**, the default with no model configured, through the facade
  ``Reverie.review_run(agent, force=True)``, called again while ranges are pending (a run does
  at most 10 batches, SPEC R3). It makes no model call: tokens are 0 by construction, and wall
  time is its cost;
* with the **model reviewer** (``reverie.review.model.ModelReviewer``) driven by a scripted
  provider (``reverie.llm.scripted.ScriptedProvider``) through
  ``reverie.review.runner.review_agent``: the real prompt is built and sent to a handler that
  answers with a small valid JSON answer (one entry per batch while ``MEMORY.md`` has room,
  else no operation). Token counts are what that prompt and answer would cost a real model,
  estimated by the provider at four characters a token, read back from the review log
  (``ReviewLog.batches``). This is what a model would be sent; a real model's answers (and a
  second call when the first is unusable or too big) would add to it.

The synthetic chat: an ops team of 12 people talking with one agent in DMs. Each conversation
is 4-14 exchanges; an exchange is a durable fact (people, decisions, ports, gotchas, launch dates,
customers with made-up names, so that memory keeps growing with history), an update of an
earlier fact (a move, a switch of tools, a retired tool, a new date), small talk, a question
with the agent's answer, a task whose tool output (a log of 8-60 lines, never read by review,
SPEC R5) the agent summarises, or transient progress. The generator is seeded: 1x is the first
``--base`` conversations of 10x, which are the first of 100x.

Run::

    PYTHONPATH=src python bench/review_cost.py [--quick] [--json] [--base N] [--repeat N]
        [--save-json PATH]

``--quick`` measures 1x and 10x, and the new text on a 10x home, once.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import _common
from _common import (
    MONTHS,
    NOUNS,
    PEOPLE,
    PROJECTS,
    QUALIFIERS,
    REGIONS,
    SYLLABLES,
    SYSTEMS,
    UNITS,
    VERBS,
    fmt_ratio,
    markdown_table,
    progress,
    words,
)
from reverie.api import Reverie
from reverie.llm.scripted import Answer, ScriptedCall, ScriptedProvider
from reverie.review.model import ModelReviewer
from reverie.review.runner import AgentReport, review_agent
from reverie.review.types import parse_sources
from reverie.store.reviews import ReviewLog

AGENT = "ops-bot"
SEED = 20260
DEFAULT_BASE = 20
MAX_RUNS = 10_000
START = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC)

# --- a seeded chat generator -------------------------------------------------------------------

TEAM = PEOPLE[:12]
CITIES = words(
    "Lyon Berlin Lisbon Nairobi Osaka Toronto Austin Krakow Porto Seoul Dublin Bogota Oslo "
    "Hanoi Accra Tallinn Valencia Montreal"
)
TIMEZONES = words("CET UTC PST EST IST JST BRT")
FOODS = words("peanuts shellfish gluten sesame soy")
ROLES = words("DBA PM designer SRE reviewer architect")
CHANNELS = words("#ops #eng #support #data DMs email")
KINDS = ("fact", "update", "chatter", "question", "task", "progress")
WEIGHTS = (24, 8, 18, 20, 18, 12)


@dataclass(frozen=True)
class Msg:
    """One message of a synthetic conversation."""

    role: str  # user, assistant or tool
    author: str | None
    text: str


class ChatGen:
    """Seeded conversations of an ops team with its agent (see the module docstring)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.customers: list[str] = []

    # vocabulary

    def _customer(self) -> str:
        # A new made-up customer now and then, else a known one: an open, growing vocabulary.
        if not self.customers or self.rng.random() < 0.4:
            k = self.rng.randint(2, 3)
            name = "".join(self.rng.choice(SYLLABLES) for _ in range(k)).capitalize()
            self.customers.append(name)
            return name
        return self.rng.choice(self.customers)

    def _day(self) -> str:
        return f"{self.rng.randint(1, 28)} {self.rng.choice(MONTHS)}"

    def _fill(self, template: str, person: str) -> str:
        r = self.rng
        project = r.choice(PROJECTS)
        system, system2 = r.sample(SYSTEMS, 2)
        values = {
            "person": person,
            "other": r.choice([p for p in TEAM if p != person]),
            "project": project,
            "Project": project.capitalize(),
            "system": system,
            "System": system.capitalize(),
            "system2": system2,
            "noun": r.choice(NOUNS),
            "qual": r.choice(QUALIFIERS),
            "verb": r.choice(VERBS),
            "city": r.choice(CITIES),
            "tz": r.choice(TIMEZONES),
            "food": r.choice(FOODS),
            "role": r.choice(ROLES),
            "channel": r.choice(CHANNELS),
            "region": r.choice(REGIONS),
            "unit": r.choice(UNITS),
            "num": r.choice([5, 10, 30, 50, 100, 250, 500, 1000, 5000]),
            "port": r.choice([5432, 5433, 6379, 8080, 8443, 9090, 9200, 3000]),
            "day": self._day(),
            "customer": self._customer() if "{customer}" in template else "",
        }
        return template.format(**values)

    # exchanges

    def _say(self, person: str, templates: Sequence[str]) -> str:
        return self._fill(self.rng.choice(templates), person)

    def exchange(self, person: str) -> list[Msg]:
        """One user turn and what follows it (an answer, maybe a tool call and its output)."""
        r = self.rng
        kind = r.choices(KINDS, WEIGHTS)[0]
        if kind in ("fact", "update"):
            text = self._say(person, FACTS if kind == "fact" else UPDATES)
            if r.random() < 0.25:
                text = f"{r.choice(OPENERS)} {text}"
            if r.random() < 0.2:
                text = f"{text} {self._say(person, FACTS)}"
            return [Msg("user", person, text), Msg("assistant", None, self._say(person, ACKS))]
        if kind == "chatter":
            return [
                Msg("user", person, r.choice(CHATTER)),
                Msg("assistant", None, r.choice(REPLIES)),
            ]
        if kind == "question":
            return [
                Msg("user", person, self._say(person, QUESTIONS)),
                Msg("assistant", None, self._say(person, ANSWERS)),
            ]
        if kind == "progress":
            return [
                Msg("user", person, self._say(person, PROGRESS)),
                Msg("assistant", None, "Ok, take your time."),
            ]
        out = [
            Msg("user", person, self._say(person, TASKS)),
            Msg("assistant", None, self._say(person, STARTED)),
            Msg("tool", "shell", self._log()),
            Msg("assistant", None, self._say(person, DONE)),
        ]
        if r.random() < 0.3:
            out[-1] = Msg("assistant", None, f"{out[-1].text} {self._say(person, LESSONS)}")
        return out

    def _log(self) -> str:
        r = self.rng
        system, noun = r.choice(SYSTEMS), r.choice(NOUNS)
        n = r.randint(8, 60)
        stamp = START + dt.timedelta(seconds=r.randint(0, 10**7))
        lines = []
        for i in range(n):
            at = (stamp + dt.timedelta(milliseconds=137 * i)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            level = r.choices(("INFO", "WARN", "DEBUG"), (8, 1, 2))[0]
            lines.append(
                f"{at} {level} {system}.{noun} batch {i + 1}/{n} rows={r.randint(0, 5000)} "
                f"took={r.randint(2, 900)}ms shard={r.randint(0, 15)}"
            )
        return "\n".join(lines)

    def conversation(self) -> tuple[str, list[Msg]]:
        """One DM conversation: the person, and its messages in order."""
        person = self.rng.choice(TEAM)
        msgs: list[Msg] = []
        for _ in range(self.rng.randint(4, 14)):
            msgs += self.exchange(person)
        return person, msgs


FACTS = (
    "I live in {city}.",
    "My timezone is {tz}.",
    "My team is {project}.",
    "I prefer {qual} summaries in {channel}, not long threads.",
    "I'm allergic to {food}.",
    "We decided to use {system} for the {project} {noun}.",
    "We use {system} for {noun} alerts.",
    "The {project} {system} runs on port {port}.",
    "Heads up: {system} drops {qual} {noun} events when the queue is full.",
    "{System} times out above {num} {unit}.",
    "The {project} launch date is moved to {day}.",
    "{Project} is blocked on the {noun} review.",
    "{other} is our {role} for {project}.",
    "{other} is on leave until {day}.",
    "Remember that customer {customer} needs the {noun} export by {day}.",
    "Note: customer {customer} is on the {qual} plan in {region}.",
)
UPDATES = (
    "I moved to {city} last month.",
    "We switched from {system} to {system2} for {noun} alerts.",
    "We no longer use {system}.",
    "{Project} is now live.",
    "The {project} launch date is pushed to {day}.",
    "The {project} {system} now runs on port {port}.",
)
OPENERS = ("Morning!", "Quick note:", "FYI", "Oh, and", "By the way,")
ACKS = (
    "Noted. I'll keep that in mind for the {project} work and mention it when it comes up.",
    "Got it, thanks for telling me. I'll use that from now on when we talk about {project}.",
    "Thanks, noted. If anything about the {noun} changes again, just tell me and I'll update it.",
    "Understood.",
)
CHATTER = (
    "thanks!",
    "haha nice",
    "good morning!",
    "ok sounds good",
    "cool, thank you",
    "perfect",
    "lol yes",
    "have a good weekend!",
    "great, thanks a lot",
)
REPLIES = ("You're welcome!", "Good morning! What can I do for you?", "Anytime.", "Enjoy!")
QUESTIONS = (
    "Can you check why the {noun} failed on {project}?",
    "What's the status of the {project} {noun}?",
    "How do I {verb} the {qual} {noun}?",
    "Is {system} down again?",
    "Who owns the {project} {noun}?",
    "Where are the {noun} dashboards for {project} again?",
)
ANSWERS = (
    "The {project} {noun} failed because {system} hit its limit of {num} {unit} during the "
    "nightly window. I retried it in smaller batches and it went through; the next run is "
    "scheduled as usual, so nothing else should be needed unless the volume keeps growing.",
    "{other} owns it. The last change was on {day}, the {qual} checks passed, and the open "
    "follow-ups are the {noun} clean-up and a note in the runbook about the {system} limits.",
    "Run `make {verb}-{noun}` from the {project} repository; it takes about {num} seconds and "
    "prints a summary at the end. If it stops half-way, run it again: it picks up where it "
    "left off.",
    "No, {system} is up: the alert came from a {qual} probe in {region} that flaps when the "
    "network is busy. I checked the last hour of metrics and every real request succeeded.",
    "The dashboards are in the {project} folder in Grafana. The {noun} panel is the second "
    "one, and the {qual} view has the per-region split you asked about last time.",
)
PROGRESS = (
    "I'm still debugging the {noun} on {project}, back in 10.",
    "Deploying {project} now, one sec.",
    "Hold on, the build is still running.",
    "Let me check the {noun} logs first.",
)
TASKS = (
    "Please run the {noun} report for {project}.",
    "Could you export the {qual} {noun} for {project}?",
    "Can you {verb} the {noun} job on {system}?",
)
STARTED = ("On it: running `make {verb}-{noun}` on {project}.", "Starting the {noun} job now.")
DONE = (
    "Done: {num} rows in {port} ms, no warnings. The export is in the usual bucket and the "
    "link is in {channel}.",
    "Finished; the {noun} is in {channel}. Two shards were slower than usual but every batch "
    "completed, and the totals match the previous run within a few rows.",
    "Done. The job ran on {system} without errors; I attached the summary to the {project} "
    "ticket so the others can see it.",
)
LESSONS = (
    "The root cause was a {qual} {noun} cache in {system}.",
    "Lesson: {system} needs the {noun} index rebuilt after a restore.",
)


def records(
    gen: ChatGen, n: int, prefix: str, start: dt.datetime
) -> tuple[list[dict[str, Any]], dt.datetime]:
    """``n`` conversations as SPEC 15 import records (each followed by its closing line).

    Conversations start two hours apart from ``start``; messages are 40 seconds apart.
    Returns the records and the time after the last conversation.
    """
    out: list[dict[str, Any]] = []
    at = start
    for i in range(n):
        person, msgs = gen.conversation()
        conv = f"{prefix}-{i:05d}"
        channel = {"kind": "dm", "id": f"dm-{person.lower()}"}
        for k, m in enumerate(msgs):
            rec: dict[str, Any] = {
                "conversation": conv,
                "agent": AGENT,
                "channel": channel,
                "role": m.role,
                "text": m.text,
                "time": (at + dt.timedelta(seconds=40 * k)).isoformat(),
            }
            if m.author is not None:
                rec["author"] = m.author
            out.append(rec)
        out.append({"conversation": conv, "closed": True})
        at += dt.timedelta(hours=2)
    return out, at


def text_size(recs: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Messages, and characters of text review reads (user, assistant) and never reads (tool)."""
    msgs = [r for r in recs if "role" in r]
    said = sum(len(r["text"]) for r in msgs if r["role"] != "tool")
    tool = sum(len(r["text"]) for r in msgs if r["role"] == "tool")
    return {"messages": len(msgs), "text_chars": said, "tool_chars": tool}


# --- measuring a review ------------------------------------------------------------------------

_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\S")


def memory_files(rv: Reverie, agent: str) -> dict[str, str]:
    """Every file of the agent's memory at its current revision: ``MEMORY.md`` and the topics.

    Paths come from the memory repository's tree; each text is read through
    ``Reverie.memory_read``, as an agent would read it.
    """
    memory_id = rv.state.memory_of(rv.agent(agent).id)
    head = rv.memories.current(memory_id)
    paths = sorted(rv.memories.repo(memory_id).files(head.oid)) if head.oid else []
    return {p: rv.memory_read(agent, p).text for p in paths if p.endswith(".md")}


def list_items(files: dict[str, str]) -> list[str]:
    """The list items (entries, and lines of detail written as items) of memory files."""
    return [line for text in files.values() for line in text.split("\n") if _ITEM.match(line)]


def memory_size(rv: Reverie, agent: str) -> dict[str, int]:
    """Entries (list items), entries citing a source, and characters of the agent's memory."""
    files = memory_files(rv, agent)
    items = list_items(files)
    return {
        "files": len(files),
        "topic_files": sum(1 for p in files if p != "MEMORY.md"),
        "entries": len(items),
        "sourced_entries": sum(1 for line in items if parse_sources(line)),
        "index_chars": len(files.get("MEMORY.md", "")),
        "chars": sum(len(t) for t in files.values()),
    }


def history_messages(rv: Reverie, agent: str) -> int:
    """How many messages the agent's conversations hold."""
    row = rv.state.conn.execute(
        "SELECT COALESCE(SUM(message_count), 0) FROM conversations WHERE agent_id = ?",
        (rv.agent(agent).id,),
    ).fetchone()
    return int(row[0])


@dataclass
class Cost:
    """What reviewing everything pending cost, summed over the runs it took."""

    runs: int = 0
    batches: int = 0
    commits: int = 0
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    #: CPU time of this process over the same span: review runs in-process (SQLite, libgit2),
    #: so this is its cost with less of the noise other work on the machine adds to wall time.
    cpu_seconds: float = 0.0
    #: Tokens in and out summed from the review log's batch records (they must agree).
    logged_tokens_in: int = 0
    logged_tokens_out: int = 0
    max_batch_tokens_in: int = 0
    dropped: int = 0

    def per_batch_ms(self) -> float:
        """Mean wall time of one batch, in milliseconds."""
        return 1000 * self.seconds / self.batches if self.batches else 0.0


def review_until_done(rv: Reverie, agent: str, run_once: Callable[[], AgentReport]) -> Cost:
    """Call ``run_once`` until the agent has nothing pending; sum what the runs reported.

    Raises:
        RuntimeError: a run failed, or made no progress while work was pending.
    """
    log = ReviewLog(rv.state)
    agent_id = rv.agent(agent).id
    logged_before = len(log.batches(agent_id, limit=10**7))
    cost = Cost()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(MAX_RUNS):
        report = run_once()
        if report.error or report.skipped:
            raise RuntimeError(f"review stopped: {report.error or report.skipped}")
        cost.runs += 1
        cost.batches += report.batches
        cost.commits += report.commits
        cost.model_calls += report.model_calls
        cost.tokens_in += report.tokens_in
        cost.tokens_out += report.tokens_out
        cost.dropped += len(report.dropped)
        if report.pending == 0:
            break
        if report.batches == 0:
            raise RuntimeError(f"review made no progress with {report.pending} batches pending")
    cost.seconds = time.perf_counter() - t0
    cost.cpu_seconds = time.process_time() - c0
    new = log.batches(agent_id, limit=10**7)
    new = new[: len(new) - logged_before]
    cost.logged_tokens_in = sum(b.tokens_in for b in new)
    cost.logged_tokens_out = sum(b.tokens_out for b in new)
    cost.max_batch_tokens_in = max((b.tokens_in for b in new), default=0)
    if len(new) != cost.batches:
        raise RuntimeError(f"the review log holds {len(new)} batches, the runs {cost.batches}")
    return cost


def offline_run(rv: Reverie, agent: str) -> Callable[[], AgentReport]:
    """One run of the offline reviewer through the facade (the agent has no model)."""

    def run() -> AgentReport:
        reports = rv.review_run(agent, force=True)
        if len(reports) != 1:
            raise RuntimeError(f"expected one report for {agent}, got {len(reports)}")
        return reports[0]

    return run


_FIRST_MESSAGE = re.compile(
    r'<message conversation="([^"]+)" position="(\d+)" role="user"[^>]*>\n([^\n<]{20,})'
)
_INDEX = re.compile(r"<memory_index>\n(.*?)\n</memory_index>", re.S)


def scripted_answer(call: ScriptedCall) -> Answer:
    """A small valid review answer: one entry quoting the first user message shown (so that
    the model reviewer's post-checks find it said there), while the index has room for it;
    otherwise no operation."""
    prompt = call.messages[0]["content"]
    first = _FIRST_MESSAGE.search(prompt)
    index = _INDEX.search(prompt)
    if first is None:
        return {"operations": [], "message": "Nothing to keep"}
    conv, pos = first.group(1), int(first.group(2))
    said = " ".join(first.group(3).split()[:12]).rstrip(".!?,")
    text = f"Said in {conv}: {said} (source: {conv}#{pos}-{pos + 1})"
    if index is not None and len(index.group(1)) + len(text) + 200 > 2000:
        return {"operations": [], "message": "Nothing new to keep"}
    op = {
        "action": "add",
        "text": text,
        "section": "Project state",
        "old": None,
        "topic": None,
        "content": None,
    }
    return {"operations": [op], "message": "Noted one review"}


def model_run(rv: Reverie, agent: str) -> Callable[[], AgentReport]:
    """One run of the model reviewer, its model a scripted provider, via ``review_agent``."""
    reviewer = ModelReviewer(
        ScriptedProvider(scripted_answer),
        max_prompt_tokens=rv.settings.model_prompt_tokens,
        max_answer_tokens=rv.settings.model_answer_tokens,
    )
    return lambda: review_agent(rv, agent, reviewer)


RUNNERS: dict[str, Callable[[Reverie, str], Callable[[], AgentReport]]] = {
    "offline": offline_run,
    "scripted model": model_run,
}


@dataclass
class Case:
    """One measured review: what was imported, what the home held before, what it cost."""

    label: str
    reviewer: str
    new: dict[str, int]
    history_messages: int
    memory_before: dict[str, int]
    cost: Cost
    memory_after: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        return {**asdict(self), "per_batch_ms": round(self.cost.per_batch_ms(), 2)}


def measure(
    home: Path,
    recs: list[dict[str, Any]],
    label: str,
    reviewer: str,
    *,
    create: bool = True,
) -> Case:
    """Import ``recs`` into ``home`` (new, or a copy of a reviewed one) and review them all."""
    with Reverie(home, create=create) as rv:
        if rv.settings.model:
            sys.exit(f"REVERIE_MODEL is set ({rv.settings.model}): unset it to measure offline")
        history, before = 0, {}
        if not create:
            history = history_messages(rv, AGENT)
            before = memory_size(rv, AGENT)
        rv.import_records(recs)
        cost = review_until_done(rv, AGENT, RUNNERS[reviewer](rv, AGENT))
        after = memory_size(rv, AGENT)
    return Case(label, reviewer, text_size(recs), history, before, cost, after)


# --- the scenarios -----------------------------------------------------------------------------


@dataclass
class Results:
    """Everything one run measured."""

    base: int
    scales: list[int]
    growth: list[Case] = field(default_factory=list)
    incremental: dict[str, list[Case]] = field(default_factory=dict)


#: Where the new conversations are reviewed: a fresh home; a home whose long history was
#: imported and marked reviewed but whose memory is empty (the size of the history alone); and
#: the reviewed top-scale home (history and the memory review made of it).
WHERES = ("empty", "history only", "reviewed")


def run(base: int, scales: list[int], repeat: int, tmp: Path) -> Results:
    """Growth at every scale with both reviewers, then the new text on three kinds of home."""
    out = Results(base, scales)
    top = max(scales)
    history, end = records(ChatGen(SEED), base * top, "c", START)
    # The new conversations come after the whole history, from another stream of the generator.
    fresh, _ = records(ChatGen(SEED + 1), base, "new", end + dt.timedelta(days=1))
    homes = {"reviewed": tmp / "reviewed", "history only": tmp / "history-only"}
    for scale in scales:
        n_conv = base * scale
        cut = _records_of(history, n_conv)
        for reviewer in RUNNERS:
            cases = []
            # The top scale once (it takes minutes); the smaller ones ``repeat`` times.
            for r in range(1 if scale == top else repeat):
                home = tmp / f"{reviewer.split()[0]}-{scale}x-{r}"
                progress(f"growth: {scale}x ({n_conv} conversations), {reviewer} reviewer ...")
                cases.append(measure(home, cut, f"{scale}x", reviewer))
                if scale == top and reviewer == "offline":
                    home.rename(homes["reviewed"])  # the big reviewed home for question 2
                else:
                    shutil.rmtree(home)
            out.growth.append(median_case(cases))
    progress(f"history only: {base * top} conversations imported and marked reviewed ...")
    with Reverie(homes["history only"], create=True) as rv:
        rv.import_records(history)
        for rec in history:
            if rec.get("closed"):
                conv = rv.conversation(rec["conversation"])
                rv.mark_reviewed(conv.id, conv.message_count)
    for r in range(repeat):
        for reviewer in RUNNERS:
            for where in WHERES:
                key = f"{reviewer} on {where}"
                home = tmp / f"incr-{r}-{reviewer.split()[0]}-{where.replace(' ', '-')}"
                progress(f"new text ({base} conversations), {key}, repeat {r + 1}/{repeat} ...")
                if where != "empty":
                    shutil.copytree(homes[where], home)
                label = "1x new" if where == "empty" else f"1x new after {top}x, {where}"
                case = measure(home, fresh, label, reviewer, create=where == "empty")
                out.incremental.setdefault(key, []).append(case)
                shutil.rmtree(home)
    return out


def _records_of(recs: list[dict[str, Any]], n_conv: int) -> list[dict[str, Any]]:
    """The records of the first ``n_conv`` conversations (up to and with their closing line)."""
    closed = 0
    for i, rec in enumerate(recs):
        if rec.get("closed"):
            closed += 1
            if closed == n_conv:
                return recs[: i + 1]
    return recs


def repeat_note(res: Results) -> int:
    """How many times the smaller scales were measured."""
    return len(res.incremental.get("offline on empty", [])) or 1


def median_case(cases: list[Case]) -> Case:
    """The case of median wall time (counts are the same in every repeat: the data is seeded)."""
    ordered = sorted(cases, key=lambda c: c.cost.seconds)
    return ordered[(len(ordered) - 1) // 2]


# --- the report --------------------------------------------------------------------------------


def _num(n: float) -> str:
    return f"{n:,.0f}" if abs(n) >= 100 or float(n).is_integer() else f"{n:.2f}"


def report(res: Results, info: dict[str, str], cmd: str) -> str:
    """The Markdown report: the ratios first, then the tables, then the machine."""
    top = max(res.scales)
    lines: list[str] = []
    grow = {(c.reviewer, c.label): c for c in res.growth}
    one_off, big_off = grow[("offline", "1x")], grow[("offline", f"{top}x")]
    one_mod, big_mod = grow[("scripted model", "1x")], grow[("scripted model", f"{top}x")]
    inc = {k: median_case(v) for k, v in res.incremental.items()}
    e_off, h_off, b_off = (inc[f"offline on {w}"] for w in WHERES)
    e_mod, h_mod, b_mod = (inc[f"scripted model on {w}"] for w in WHERES)
    msgs = big_off.new["messages"] / one_off.new["messages"]
    lines += [
        f"`{cmd}`",
        "",
        f"- **Growth**: {top}x the conversations is {msgs:.0f}x the messages; the offline "
        f"reviewer takes {fmt_ratio(big_off.cost.batches, one_off.cost.batches)} the batches "
        f"and {fmt_ratio(big_off.cost.seconds, one_off.cost.seconds)} the wall time of 1x "
        f"({fmt_ratio(big_off.cost.cpu_seconds, one_off.cost.cpu_seconds)} the CPU time); the "
        f"scripted model reviewer {fmt_ratio(big_mod.cost.model_calls, one_mod.cost.model_calls)}"
        f" the model calls and {fmt_ratio(big_mod.cost.tokens_in, one_mod.cost.tokens_in)} the "
        "tokens in.",
        f"- **New text on a big home** ({res.base} new conversations, "
        f"{e_off.new['messages']:,} messages, against the same text on an empty home): after "
        f"{h_off.history_messages:,} messages of history with an empty memory, offline wall "
        f"time {fmt_ratio(h_off.cost.seconds, e_off.cost.seconds)} and scripted tokens in "
        f"{fmt_ratio(h_mod.cost.tokens_in, e_mod.cost.tokens_in)}; after the same history and "
        f"the {b_off.memory_before.get('entries', 0):,}-entry memory review made of it, offline "
        f"wall time {fmt_ratio(b_off.cost.seconds, e_off.cost.seconds)} (CPU "
        f"{fmt_ratio(b_off.cost.cpu_seconds, e_off.cost.cpu_seconds)}), batches "
        f"{fmt_ratio(b_off.cost.batches, e_off.cost.batches)}; scripted model calls "
        f"{fmt_ratio(b_mod.cost.model_calls, e_mod.cost.model_calls)}, tokens in "
        f"{fmt_ratio(b_mod.cost.tokens_in, e_mod.cost.tokens_in)}, tokens out "
        f"{fmt_ratio(b_mod.cost.tokens_out, e_mod.cost.tokens_out)}.",
        "",
        "Growth (each scale a fresh home; 1x is the first conversations of 10x, and so on; "
        f"scales below {top}x: the run of median wall time among {repeat_note(res)}):",
        "",
    ]
    headers = [
        "reviewer",
        "scale",
        "messages",
        "review text chars",
        "tool chars",
        "runs",
        "batches",
        "commits",
        "model calls",
        "tokens in",
        "tokens out",
        "wall s",
        "cpu s",
        "ms / batch",
        "batches vs 1x",
        "wall vs 1x",
        "cpu vs 1x",
    ]
    rows = []
    for c in res.growth:
        first = grow[(c.reviewer, "1x")]
        rows.append(
            [
                c.reviewer,
                c.label,
                f"{c.new['messages']:,}",
                f"{c.new['text_chars']:,}",
                f"{c.new['tool_chars']:,}",
                c.cost.runs,
                c.cost.batches,
                c.cost.commits,
                c.cost.model_calls,
                f"{c.cost.tokens_in:,}",
                f"{c.cost.tokens_out:,}",
                f"{c.cost.seconds:.2f}",
                f"{c.cost.cpu_seconds:.2f}",
                f"{c.cost.per_batch_ms():.0f}",
                fmt_ratio(c.cost.batches, first.cost.batches),
                fmt_ratio(c.cost.seconds, first.cost.seconds),
                fmt_ratio(c.cost.cpu_seconds, first.cost.cpu_seconds),
            ]
        )
    lines += [markdown_table(headers, rows), ""]
    lines += ["Memory after the offline reviewer (entries are list items in every file):", ""]
    lines.append(
        markdown_table(
            ["scale", "entries", "with a source", "MEMORY.md chars", "topic files", "all chars"],
            [
                [
                    c.label,
                    f"{c.memory_after['entries']:,}",
                    f"{c.memory_after['sourced_entries']:,}",
                    f"{c.memory_after['index_chars']:,}",
                    c.memory_after["topic_files"],
                    f"{c.memory_after['chars']:,}",
                ]
                for c in res.growth
                if c.reviewer == "offline"
            ],
        )
    )
    repeats = len(res.incremental["offline on empty"])
    lines += [
        "",
        f"New text: the same {res.base} conversations on an empty home, on a home holding the "
        f"{top}x history marked reviewed with an empty memory, and on the reviewed {top}x home "
        f"(times: the run of median wall time among {repeats}; counts do not vary):",
        "",
    ]

    def pair(name: str, get: Callable[[Case], float | int]) -> list[str]:
        cases = [inc[f"{name.split(':')[0]} on {w}"] for w in WHERES]
        a, h, b = (get(c) for c in cases)
        cells = [f"{v:,.2f}" if isinstance(v, float) else f"{v:,}" for v in (a, h, b)]
        return [name, *cells, fmt_ratio(h, a) if a else "-", fmt_ratio(b, a) if a else "-"]

    new_rows = [
        pair("offline: batches", lambda c: c.cost.batches),
        pair("offline: commits", lambda c: c.cost.commits),
        pair("offline: model calls", lambda c: c.cost.model_calls),
        pair("offline: wall s", lambda c: c.cost.seconds),
        pair("offline: cpu s", lambda c: c.cost.cpu_seconds),
        pair("scripted model: batches", lambda c: c.cost.batches),
        pair("scripted model: model calls", lambda c: c.cost.model_calls),
        pair("scripted model: tokens in", lambda c: c.cost.tokens_in),
        pair("scripted model: tokens in, largest batch", lambda c: c.cost.max_batch_tokens_in),
        pair("scripted model: tokens out", lambda c: c.cost.tokens_out),
        pair("scripted model: wall s", lambda c: c.cost.seconds),
        pair("offline: history before (messages)", lambda c: c.history_messages),
        pair("offline: memory before (entries)", lambda c: c.memory_before.get("entries", 0)),
        pair("offline: memory before (chars)", lambda c: c.memory_before.get("chars", 0)),
    ]
    lines.append(
        markdown_table(
            [
                "",
                "empty home",
                f"{top}x history only",
                f"{top}x reviewed",
                "ratio, history only",
                "ratio, reviewed",
            ],
            new_rows,
        )
    )
    lines += ["", _common.machine_markdown(info)]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run the scenarios, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1x and 10x only, one repeat")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--base", type=int, default=DEFAULT_BASE, help="conversations at 1x (and new ones)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="repeats of the new-text runs")
    parser.add_argument("--save-json", type=Path, help="also write the JSON figures to this file")
    args = parser.parse_args(argv)
    scales = [1, 10] if args.quick else [1, 10, 100]
    repeat = 1 if args.quick else max(1, args.repeat)
    cmd = "python bench/review_cost.py " + " ".join(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="review-cost-") as tmp:
        info = _common.machine(Path(tmp))
        res = run(max(1, args.base), scales, repeat, Path(tmp))
    payload = {
        "machine": info,
        "command": cmd.strip(),
        "base_conversations": res.base,
        "scales": res.scales,
        "growth": [c.to_dict() for c in res.growth],
        "incremental": {k: [c.to_dict() for c in v] for k, v in res.incremental.items()},
    }
    if args.save_json:
        args.save_json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    _common.emit(args.json, payload, report(res, info, cmd.strip()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
