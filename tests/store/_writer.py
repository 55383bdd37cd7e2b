"""Crash and concurrency kit for the store tests (SPEC W6, W7, W8).

Run as a script, it is the process that gets killed or raced:

* ``_writer.py write HOME AGENT ACKS`` opens ``Reverie(HOME)``, prints ``ready`` and writes
  batches to AGENT's memory until it is killed, appending one line per acknowledged write to the
  ack file ACKS (flushed and fsynced before the next batch is sent).
* ``_writer.py serve HOME AGENT ACKS`` is the same writer behind a fork server: it imports
  Reverie once, then for each ``run DELAY`` line on stdin forks a fresh writer process, waits
  for it to be ready, lets it write for DELAY seconds, kills it with SIGKILL and prints one JSON
  line about it. A forked writer starts in milliseconds instead of a quarter of a second, so a
  campaign spends its time writing and being killed rather than importing. The child has not
  inherited any open database or repository: the server never opens one.
* ``_writer.py die HOME AGENT ACKS STEP`` sends the batch after the last ack and SIGKILLs itself
  at one step of the write pipeline (see :data:`STEPS`): the deterministic twin of the campaign.
* ``_writer.py rmw HOME AGENT WORKER CYCLES`` waits for a ``go`` line on stdin, then does CYCLES
  read-modify-write cycles with ``expected_revision`` and prints a JSON summary;
  ``_writer.py keyed HOME AGENT WORKER KEYS`` sends the same KEYS keyed batches as every other
  worker (W7 under concurrency).

As a module it holds what the tests and ``bench/crash_campaign.py`` share: the batches, the
oracle that says what every revision must hold, the campaign driver and the checks.

Batch ``n`` is a pure function of ``n`` and the files before it, and since one writer writes
and every batch changes something, batch ``n`` makes revision ``n``. A batch

* adds ``- fact n part a`` to ``MEMORY.md`` (under a standard section; every 50th batch
  rewrites the whole body with ``set_body`` instead),
* appends ``- fact n part b`` to topic ``memory/t<n % 7>.md`` (``write_topic``),
* removes fact ``n - 42`` again, both parts (``remove``; one of them in a topic file that the
  same batch also rewrites), so that files stay small,
* every third batch revises fact ``n - 1``'s line (``replace``) to ``... (revised in n)``,
* every tenth batch rewrites a larger topic ``memory/bulk.md`` holding ``fact n part c`` and
  filler lines (a longer commit and index update, for kills to land in),
* creates ``memory/scratch.md`` with ``fact n part d`` when ``n % 4 == 1`` and deletes it when
  ``n % 4 == 3`` (a deletion, and the index link that goes with it).

So the whole content of every revision is known in advance: :func:`oracle` checks it without
Reverie's Markdown code, and any half-applied batch shows as a part without its partner.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from reverie import Reverie, RevisionConflict
from reverie.core.markdown import STANDARD_SECTIONS, apply_batch, new_index
from reverie.core.operations import parse_batch
from reverie.core.paths import INDEX
from reverie.index.fts import index_lines

HERE = Path(__file__).resolve()
SRC = HERE.parents[2] / "src"

#: How many facts MEMORY.md keeps: batch n removes fact n - KEEP (a multiple of 7, so that the
#: removal of part b hits the topic file that the same batch rewrites).
KEEP = 42
SET_BODY_EVERY, SET_BODY_AT = 50, 25
REVISE_EVERY = 3
BULK_EVERY = 10
BULK_LINES = 300
TOPICS = 7
MARKER = "reverie-writing"

_PART = re.compile(r"fact (\d+) part ([abcd])\b")
_REVISED = re.compile(r"fact (\d+) part a \(revised in (\d+)\)")
_FILLER = re.compile(r"^- filler (\d+) line \d+ ", re.MULTILINE)

Files = dict[str, str]


def sha(text: str) -> str:
    """The sha256 of a text, as the ack file records it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def key_of(n: int) -> str:
    """The idempotency key of batch ``n``."""
    return f"crash-batch-{n}"


# batches and what they must produce


def make_batch(n: int, files: Mapping[str, str]) -> dict[str, Any]:
    """Batch ``n`` (n >= 1), given the files of revision ``n - 1``."""
    ops: list[dict[str, Any]] = []
    gone = n - KEEP
    if n % SET_BODY_EVERY == SET_BODY_AT:
        lines = files[INDEX].rstrip("\n").split("\n")
        if gone >= 1:
            lines = [line for line in lines if f"fact {gone} part a" not in line]
        body = "\n".join(lines) + f"\n- fact {n} part a\n"
        ops.append({"action": "set_body", "text": body})
    else:
        section = STANDARD_SECTIONS[n % len(STANDARD_SECTIONS)]
        ops.append({"action": "add", "text": f"fact {n} part a", "section": section})
        if gone >= 1:
            ops.append({"action": "remove", "old": f"fact {gone} part a"})
    if n % REVISE_EVERY == 0:
        ops.append(
            {
                "action": "replace",
                "old": f"fact {n - 1} part a",
                "text": f"- fact {n - 1} part a (revised in {n})",
            }
        )
    topic = f"memory/t{n % TOPICS}.md"
    before = files.get(topic, f"# Topic {n % TOPICS}\n")
    ops.append(
        {
            "action": "write_topic",
            "topic": f"t{n % TOPICS}",
            "content": before.rstrip("\n") + f"\n- fact {n} part b\n",
        }
    )
    if gone >= 1:
        ops.append(
            {
                "action": "remove",
                "source": f"memory/t{gone % TOPICS}.md",
                "old": f"fact {gone} part b",
            }
        )
    if n % BULK_EVERY == 0:
        filler = "".join(
            f"- filler {n} line {i} about the quiet harbour and its boats\n"
            for i in range(BULK_LINES)
        )
        ops.append(
            {
                "action": "write_topic",
                "topic": "bulk",
                "content": f"# Bulk\n\n- fact {n} part c\n{filler}",
            }
        )
    if n % 4 == 1:
        ops.append(
            {
                "action": "write_topic",
                "topic": "scratch",
                "content": f"# Scratch\n\n- fact {n} part d\n",
            }
        )
    elif n % 4 == 3:
        ops.append({"action": "write_topic", "topic": "scratch", "content": ""})
    return {"operations": ops, "message": f"crash campaign batch {n}"}


def expected_files(batch: Mapping[str, Any], files: Mapping[str, str]) -> Files:
    """The files after ``batch``, by Reverie's own pure Markdown code (for exact hashes)."""
    applied = apply_batch(parse_batch(batch), files.get)
    out = dict(files)
    for path, text in applied.files.items():
        if text is None:
            out.pop(path, None)
        else:
            out[path] = text
    return out


def files_digest(files: Mapping[str, str]) -> dict[str, str]:
    """``{path: sha256}`` of every file."""
    return {p: sha(t) for p, t in sorted(files.items())}


def oracle(r: int, files: Mapping[str, str]) -> list[str]:
    """What is wrong with ``files`` as the content of revision ``r`` (empty: nothing).

    Written from the batch rules above, not from Reverie's Markdown code: each batch ``n <= r``
    must be wholly there (both parts, its revision of fact n - 1, its bulk and scratch files)
    and each later batch wholly absent.
    """
    problems: list[str] = []
    live = set(range(max(1, r - KEEP + 1), r + 1))
    index = files.get(INDEX)
    if index is None:
        return [f"r{r}: {INDEX} is missing"]
    if r == 0 and index != new_index():
        problems.append(f"r0: {INDEX} is not the new-memory template")
    parts: dict[str, Counter[int]] = {p: Counter() for p in "abcd"}
    where_b: dict[int, str] = {}
    for path, text in files.items():
        for num, part in _PART.findall(text):
            parts[part][int(num)] += 1
            if part == "a" and path != INDEX:
                problems.append(f"r{r}: part a of fact {num} is in {path}")
            if part == "b":
                where_b[int(num)] = path
    for part in "ab":
        extra = sorted(set(parts[part]) - live)
        missing = sorted(live - set(parts[part]))
        twice = sorted(n for n, c in parts[part].items() if c > 1)
        if extra:
            problems.append(f"r{r}: part {part} of facts {extra[:5]} present (should not be)")
        if missing:
            problems.append(f"r{r}: part {part} of facts {missing[:5]} missing")
        if twice:
            problems.append(f"r{r}: part {part} of facts {twice[:5]} present more than once")
    for n, path in where_b.items():
        if path != f"memory/t{n % TOPICS}.md":
            problems.append(f"r{r}: part b of fact {n} is in {path}")
    revised = Counter((int(a), int(b)) for a, b in _REVISED.findall(index))
    want_revised = {(m - 1, m) for m in range(REVISE_EVERY, r + 1, REVISE_EVERY) if m - 1 in live}
    if set(revised) != want_revised or any(c > 1 for c in revised.values()):
        problems.append(
            f"r{r}: revised lines {sorted(revised)[-3:]}, expected {sorted(want_revised)[-3:]}"
        )
    bulk = files.get("memory/bulk.md")
    if r >= BULK_EVERY:
        m = r - r % BULK_EVERY
        fillers = Counter(int(x) for x in _FILLER.findall(bulk or ""))
        if bulk is None or dict(parts["c"]) != {m: 1} or dict(fillers) != {m: BULK_LINES}:
            problems.append(f"r{r}: bulk topic should hold fact {m} part c and its filler")
    elif bulk is not None or parts["c"]:
        problems.append(f"r{r}: bulk topic present too early")
    scratch = files.get("memory/scratch.md")
    if r % 4 in (1, 2):
        m = r - r % 4 + 1
        if scratch is None or dict(parts["d"]) != {m: 1}:
            problems.append(f"r{r}: scratch topic should hold fact {m} part d")
    elif scratch is not None or parts["d"]:
        problems.append(f"r{r}: scratch topic present (should be deleted)")
    topics = {f"memory/t{n % TOPICS}.md" for n in range(1, r + 1)}
    want_paths = {INDEX, *topics}
    if r >= BULK_EVERY:
        want_paths.add("memory/bulk.md")
    if r % 4 in (1, 2):
        want_paths.add("memory/scratch.md")
    if set(files) != want_paths:
        problems.append(f"r{r}: files {sorted(files)}, expected {sorted(want_paths)}")
    for path in files:
        if path != INDEX and f"[[{path}]]" not in index:
            problems.append(f"r{r}: {INDEX} has no link to {path}")
    if "memory/scratch.md" not in files and "[[memory/scratch.md]]" in index:
        problems.append(f"r{r}: {INDEX} links the deleted scratch topic")
    return problems


# the ack file


def append_ack(path: Path, record: Mapping[str, Any]) -> None:
    """Append one acknowledged write, durably, before the next batch is sent."""
    line = (json.dumps(record, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_acks(path: Path) -> list[dict[str, Any]]:
    """The ack records; a last line cut by a kill is not an ack."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    return [json.loads(line) for line in data[:end].decode().splitlines()]


def last_ack(path: Path) -> dict[str, Any] | None:
    """The last ack record, read from the end of the file; a line cut by a kill is cut off.

    The writer calls this at every start, so it must not read a file that grows by a line per
    write (a long campaign would slow down as it goes).
    """
    if not path.exists():
        return None
    with path.open("r+b") as f:
        size = f.seek(0, os.SEEK_END)
        chunk = 65536
        while True:
            start = max(0, size - chunk)
            f.seek(start)
            tail = f.read(size - start)
            if start == 0 or tail.count(b"\n") >= 2:  # the last whole line is in the tail
                break
            chunk *= 2
        end = tail.rfind(b"\n") + 1
        if end < len(tail):  # a line cut by a kill: not an ack
            f.truncate(start + end)
    lines = tail[:end].splitlines()
    return json.loads(lines[-1]) if lines else None


# the writer


class WriterFailed(Exception):
    """The writer found the store in a state that breaks W7 or W8."""


def _load(r: Reverie, agent: str, revision: int, digest: Mapping[str, str] | None) -> Files:
    if digest is None:
        files = {INDEX: r.memory_read(agent, INDEX, revision).text}
        if files[INDEX] != new_index():
            raise WriterFailed(f"revision 0 of {INDEX} is not the new-memory template")
        return files
    files = {p: r.memory_read(agent, p, revision).text for p in digest}
    if files_digest(files) != dict(digest):
        raise WriterFailed(f"acknowledged revision {revision} changed since it was acknowledged")
    return files


def write_forever(
    home: Path, agent: str, acks_path: Path, ready: Callable[[], None], limit: int | None = None
) -> None:
    """Write batches (resuming after the last ack) until killed, or ``limit`` batches."""
    with Reverie(home) as r:
        ready()
        _write(r, agent, acks_path, limit)


def _write(r: Reverie, agent: str, acks_path: Path, limit: int | None) -> None:
    last = last_ack(acks_path)
    acked = last["revision"] if last else 0
    files = _load(r, agent, acked, last["files"] if last else None)
    head = r.memory_read(agent).revision  # recovered by the first read, in _load
    if head not in (acked, acked + 1):
        raise WriterFailed(
            f"after ack {acked} the memory is at revision {head}; the writer "
            "only ever sends the batch after its last ack"
        )
    n = acked + 1
    first = True
    while limit is None or n <= acked + limit:
        batch = make_batch(n, files)
        after = expected_files(batch, files)
        key = key_of(n)
        out = r.memory_apply(agent, batch, key=key)
        if out.revision != n or not out.changed:
            raise WriterFailed(f"batch {n} answered {out}")
        record: dict[str, Any] = {
            "revision": out.revision,
            "key": key,
            "replayed": out.replayed,
            "index_sha": sha(after[INDEX]),
            "files": files_digest(after),
            "pid": os.getpid(),
        }
        if first:
            # The batch sent after a restart: if the killed writer committed it without
            # acknowledging it, the key must replay it (W7); otherwise it applies now, once.
            record["head_before"] = head
            if out.replayed != (head == n):
                raise WriterFailed(
                    f"batch {n} resent with the memory at {head}: replayed={out.replayed}"
                )
        append_ack(acks_path, record)
        files, n, first = after, n + 1, False


def _ready_byte(fd: int) -> None:
    os.write(fd, b"r")


def _serve(home: Path, agent: str, acks_path: Path) -> None:
    """The fork server: one killed writer per ``run DELAY`` line."""
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            return
        delay = float(words[1])
        rfd, wfd = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the writer
            code = 71
            try:
                os.close(rfd)
                os.dup2(2, 1)
                write_forever(home, agent, acks_path, functools.partial(_ready_byte, wfd))
            except BaseException:
                traceback.print_exc()
                sys.stderr.flush()
                code = 70
            os._exit(code)
        os.close(wfd)
        report: dict[str, Any] = {"pid": pid}
        if select.select([rfd], [], [], 60)[0] and os.read(rfd, 1) == b"r":
            report["ready_s"] = round(time.monotonic() - started, 4)
            time.sleep(delay)
            os.kill(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
            report["not_ready"] = True
        os.close(rfd)
        _, status = os.waitpid(pid, 0)
        report["killed"] = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        report["status"] = status
        report["lived_s"] = round(time.monotonic() - started, 4)
        print(json.dumps(report), flush=True)


# a kill at one chosen step of the write pipeline

#: Where :func:`die_at` kills the writer, in pipeline order.
STEPS = (
    "before_commit",
    "after_ref_update",
    "inside_sqlite",
    "after_sqlite",
    "inside_checkout",
    "inside_pack",
)


def _die() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def die_at(home: Path, agent: str, acks_path: Path, step: str) -> None:
    """Send the batch after the last ack and SIGKILL this process at ``step`` of the write."""
    from pygit2.enums import CheckoutStrategy

    from reverie.store.gitrepo import GitRepo
    from reverie.store.state import SQLiteState

    commit, record = GitRepo.commit, SQLiteState.record_revision

    def commit_then_die(self: GitRepo, *args: Any, **kwargs: Any) -> str:
        commit(self, *args, **kwargs)
        _die()
        raise AssertionError("unreachable")

    def record_then_die(self: SQLiteState, *args: Any, **kwargs: Any) -> None:
        record(self, *args, **kwargs)  # inside the open transaction
        _die()

    def files_then_die(self: GitRepo, paths: list[str] | None = None) -> None:
        # libgit2 writes the files, then git's index: die between the two
        strategy = CheckoutStrategy.FORCE | CheckoutStrategy.DONT_WRITE_INDEX
        self._repo.checkout_head(strategy=strategy, paths=paths)  # type: ignore[no-untyped-call]
        _die()

    def pack_then_die(self: GitRepo) -> int:
        # the pack is written and complete; the loose copies are not deleted yet
        self._repo.pack()
        _die()
        raise AssertionError("unreachable")

    patches: dict[str, tuple[type, str, Callable[..., Any]]] = {
        "before_commit": (GitRepo, "commit", lambda *a, **k: _die()),
        "after_ref_update": (GitRepo, "commit", commit_then_die),
        "inside_sqlite": (SQLiteState, "record_revision", record_then_die),
        "after_sqlite": (GitRepo, "checkout", lambda *a, **k: _die()),
        "inside_checkout": (GitRepo, "checkout", files_then_die),
        "inside_pack": (GitRepo, "pack_loose", pack_then_die),
    }
    cls, name, fake = patches[step]
    setattr(cls, name, fake)
    write_forever(home, agent, acks_path, lambda: None, limit=1)
    raise AssertionError(f"the write survived step {step}")


# read-modify-write cycles (W6)

_COUNTER = re.compile(r"^- counter \[(\d+)\]$", re.MULTILINE)


@dataclass
class RmwResult:
    """What one worker did: its successful writes and the conflicts it met."""

    worker: str
    successes: list[tuple[int, str, int]] = field(default_factory=list)  # revision, entry, count
    conflicts: int = 0
    bad_conflicts: list[str] = field(default_factory=list)


def rmw_cycles(r: Reverie, agent: str, worker: str, cycles: int, rng: random.Random) -> RmwResult:
    """``cycles`` read-modify-write cycles, each retried on ``RevisionConflict`` until it lands.

    A cycle reads MEMORY.md, then writes at the revision it read: it adds a unique entry and
    moves the counter line from the value it read to that value plus one (or creates the line).
    """
    out = RmwResult(worker)
    for i in range(cycles):
        entry = f"entry {worker} cycle {i}"
        for _attempt in range(10_000):
            current = r.memory_read(agent)
            m = _COUNTER.search(current.text)
            count = int(m.group(1)) + 1 if m else 1
            ops: list[dict[str, Any]] = [{"action": "add", "text": entry, "section": "Decisions"}]
            if m:
                ops.append(
                    {
                        "action": "replace",
                        "old": f"counter [{m.group(1)}]",
                        "text": f"- counter [{count}]",
                    }
                )
            else:
                ops.append(
                    {"action": "add", "text": f"counter [{count}]", "section": "Project state"}
                )
            if rng.random() < 0.5:
                time.sleep(rng.random() * 0.002)  # widen the window between read and write
            try:
                res = r.memory_apply(agent, {"operations": ops}, expected_revision=current.revision)
            except RevisionConflict as exc:
                out.conflicts += 1
                now = exc.details.get("current_revision")
                if not isinstance(now, int) or now <= current.revision:
                    out.bad_conflicts.append(f"expected {current.revision}: {exc.details}")
                if exc.code != "revision_conflict":
                    out.bad_conflicts.append(f"code {exc.code}")
                continue
            if res.revision != current.revision + 1 or not res.changed:
                out.bad_conflicts.append(f"write at {current.revision} answered {res}")
            out.successes.append((res.revision, entry, count))
            break
        else:
            raise RuntimeError(f"{worker} cycle {i} never landed")
    return out


def keyed_writes(r: Reverie, agent: str, worker: str, keys: int) -> list[dict[str, Any]]:
    """Send the same ``keys`` keyed batches as every other worker, in this worker's order."""
    order = list(range(keys))
    random.Random(worker).shuffle(order)
    out = []
    for k in order:
        res = r.memory_apply(
            agent, {"action": "add", "text": f"keyed entry {k}"}, key=f"shared-key-{k}"
        )
        out.append(
            {"key": k, "revision": res.revision, "replayed": res.replayed, "changed": res.changed}
        )
    return out


def _race_main(mode: str, home: Path, agent: str, worker: str, count: int) -> None:
    r = Reverie(home)
    r.memory_read(agent)  # warm up before the start line, so that workers really race
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    if mode == "keyed":
        print(json.dumps(keyed_writes(r, agent, worker, count)), flush=True)
    else:
        res = rmw_cycles(r, agent, worker, count, random.Random(worker))
        print(json.dumps(res.__dict__), flush=True)


# the campaign driver


@dataclass
class Campaign:
    """The outcome of a crash campaign on one home."""

    home: Path
    agent: str
    acks: Path
    log: Path
    kills: int = 0
    seconds: float = 0.0
    exec_runs: int = 0
    #: where the kills left the memory, before anything recovered it
    landed: Counter[str] = field(default_factory=Counter)
    #: kills after which this process (not the next writer) recovered and checked the memory
    checked: int = 0
    #: after such a recovery: the working tree's files differ from HEAD (W8)
    worktree_bad: list[str] = field(default_factory=list)
    #: after such a recovery: ``git status --porcelain`` was not empty (git's index is stale)
    status_dirty: list[str] = field(default_factory=list)


def memory_repo(home: Path, agent: str) -> Path:
    """The git repository of ``agent``'s memory (found through the state database)."""
    with Reverie(home) as r:
        return home / "memories" / r.state.memory_of(r.agent(agent).id)


def inspect_kill(home: Path, repo: Path) -> list[str]:
    """Where a kill left the memory, before recovery, judged from the files alone."""
    tags: list[str] = []
    gitdir = repo / ".git"
    if (gitdir / MARKER).exists():
        tags.append("marker")
    if (gitdir / "refs" / "heads" / "main.lock").exists():
        tags.append("ref_lock")
    if (gitdir / "index.lock").exists():
        tags.append("index_lock")
    head = (gitdir / "refs" / "heads" / "main").read_text().strip()
    conn = sqlite3.connect(f"file:{home / 'reverie.db'}?mode=ro", uri=True)
    try:
        row = conn.execute(
            "SELECT oid FROM revisions WHERE memory_id = ? ORDER BY revision DESC LIMIT 1",
            (repo.name,),
        ).fetchone()
    finally:
        conn.close()
    if row is None or row[0] != head:
        tags.append("git_ahead_of_db")
    if git_status(repo):
        tags.append("worktree_dirty")
    return tags or ["clean"]


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False, timeout=900
    )


def git_status(repo: Path) -> str:
    """``git status --porcelain`` (untracked files included), without refreshing git's index."""
    out = _git(repo, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all")
    if out.returncode != 0:
        return f"git status failed: {out.stderr}"
    return out.stdout


#: Writers pack their loose git objects this often, so that kills land inside packing too.
PACK_EVERY = 20


def writer_env(pack_every: int = PACK_EVERY) -> dict[str, str]:
    """The environment of a writer process: this checkout's ``src`` first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    if "REVERIE_DATABASE_URL" in os.environ:  # the backend under test
        env["REVERIE_DATABASE_URL"] = os.environ["REVERIE_DATABASE_URL"]
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    env["REVERIE_PACK_EVERY"] = str(pack_every)
    return env


def _readline(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    if not select.select([proc.stdout], [], [], timeout)[0]:
        raise TimeoutError(f"no answer from pid {proc.pid} within {timeout} s")
    return proc.stdout.readline()


def _exec_run(home: Path, agent: str, acks: Path, delay: float, log: Path) -> dict[str, Any]:
    """One killed writer started with exec (a whole interpreter start), not forked."""
    with log.open("a") as err:
        proc = subprocess.Popen(
            [sys.executable, str(HERE), "write", str(home), agent, str(acks)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=writer_env(),
        )
    ready = False
    try:
        ready = _readline(proc, 60).strip() == "ready"
        if ready:
            time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    return {
        "killed": proc.returncode == -signal.SIGKILL,
        "status": proc.returncode,
        "not_ready": not ready,
    }


def _recover_here(campaign: Campaign, repo: Path, i: int) -> None:
    """Recover the memory in this process, as any reader would, and look at git."""
    with Reverie(campaign.home) as r:
        r.memory_history(campaign.agent, limit=1)
    campaign.checked += 1
    bad = worktree_problems(repo)
    if bad:
        campaign.worktree_bad.append(f"kill {i}: {bad}")
    status = git_status(repo)
    if status:
        campaign.status_dirty.append(f"kill {i}: {status.strip()!r}")


def run_campaign(
    home: Path,
    agent: str,
    acks: Path,
    log: Path,
    *,
    kills: int,
    seed: int,
    max_delay: float = 0.3,
    exec_every: int = 0,
    check_every: int = 2,
    inspect: bool = True,
    progress: Callable[[int, Campaign], None] | None = None,
) -> Campaign:
    """Start, kill (SIGKILL after a random delay) and restart a writer ``kills`` times.

    ``home`` must hold ``agent`` already. Every ``exec_every``-th writer (if not 0) is started
    with exec instead of forked. After every ``check_every``-th kill (if not 0) this process
    recovers the memory itself and checks the working tree; after the others the next writer
    recovers it, so kills also land inside recovery.

    Raises:
        AssertionError: a writer ended other than by the kill (its log is in the message).
    """
    rng = random.Random(seed)
    campaign = Campaign(home, agent, acks, log)
    repo = memory_repo(home, agent)
    started = time.monotonic()
    with log.open("a") as err:
        server = subprocess.Popen(
            [sys.executable, str(HERE), "serve", str(home), agent, str(acks)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=writer_env(),
        )
    try:
        assert server.stdin is not None
        for i in range(kills):
            delay = rng.uniform(0.0, max_delay)
            if exec_every and i % exec_every == exec_every - 1:
                report = _exec_run(home, agent, acks, delay, log)
                campaign.exec_runs += 1
            else:
                server.stdin.write(f"run {delay:.6f}\n")
                server.stdin.flush()
                report = json.loads(_readline(server, 120))
            if not report["killed"] or report.get("not_ready"):
                raise AssertionError(
                    f"writer {i} ended by itself ({report}); its log:\n" + log.read_text()[-6000:]
                )
            campaign.kills += 1
            if inspect:
                campaign.landed.update(inspect_kill(home, repo))
            if check_every and i % check_every == check_every - 1:
                _recover_here(campaign, repo, i)
            if progress is not None:
                progress(i, campaign)
        server.stdin.write("quit\n")
        server.stdin.flush()
        server.wait(60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for stream in (server.stdin, server.stdout):
            if stream is not None:
                stream.close()
    campaign.seconds = time.monotonic() - started
    return campaign


# the checks after a campaign


def history_oids(r: Reverie, agent: str) -> list[str]:
    """The commit of every revision 0..N, after checking that the history has no gap.

    Raises:
        AssertionError: the revisions are not exactly 0..N.
    """
    hist = list(reversed(r.memory_history(agent, limit=10**9)))
    revs = [h.revision for h in hist]
    if revs != list(range(len(revs))):
        missing = sorted(set(range(max(revs, default=0) + 1)) - set(revs))
        raise AssertionError(f"revisions are not gap-free 0..N: missing {missing[:10]}")
    return [h.oid for h in hist]


def git_files(repo: pygit2.Repository, oid: str) -> Files:
    """Every file of a commit, read with a handle of our own (not the store's)."""
    out: Files = {}

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            path = prefix + str(entry.name)
            if entry.type_str == "tree":
                sub = repo[entry.id]
                assert isinstance(sub, pygit2.Tree)
                walk(sub, path + "/")
            else:
                out[path] = bytes(repo[entry.id].read_raw()).decode("utf-8")

    commit = repo[oid]
    assert isinstance(commit, pygit2.Commit)
    walk(commit.tree, "")
    return out


def head_files(repo_path: Path) -> Files:
    """The files of the branch tip."""
    repo = pygit2.Repository(str(repo_path))
    return git_files(repo, str(repo.references["refs/heads/main"].target))


def check_revisions(repo_path: Path, oids: list[str]) -> list[str]:
    """Every revision is one commit on the branch, with its trailer and its oracle content."""
    problems: list[str] = []
    repo = pygit2.Repository(str(repo_path))
    head = str(repo.references["refs/heads/main"].target)
    if head != oids[-1]:
        problems.append(f"HEAD {head} is not the newest revision's commit {oids[-1]}")
    for r, oid in enumerate(oids):
        commit = repo[oid]
        assert isinstance(commit, pygit2.Commit)
        parents = [str(p) for p in commit.parent_ids]
        if parents != ([oids[r - 1]] if r else []):
            problems.append(f"r{r}: commit {oid} has parents {parents}")
        if f"Reverie-Revision: {r}\n" not in commit.message:
            problems.append(f"r{r}: commit {oid} lacks the trailer of its revision")
        problems += oracle(r, git_files(repo, oid))
    return problems


def check_acks(
    r: Reverie,
    agent: str,
    acks: list[dict[str, Any]],
    repo_path: Path,
    oids: list[str],
    first: int = 1,
) -> list[str]:
    """Every acknowledged revision is there, reads back through Reverie, and is unchanged.

    ``acks`` are the records from revision ``first`` on (all of them by default).
    """
    problems: list[str] = []
    revs = [a["revision"] for a in acks]
    if revs != list(range(first, first + len(revs))):
        problems.append(f"acks are not {first}..A in order: a batch was skipped or repeated")
    repo = pygit2.Repository(str(repo_path))
    for a in acks:
        rev = a["revision"]
        if rev >= len(oids):
            problems.append(f"acknowledged revision {rev} is gone (newest is {len(oids) - 1})")
            continue
        try:
            text = r.memory_read(agent, revision=rev).text
        except Exception as exc:
            problems.append(f"acknowledged revision {rev} cannot be read: {exc!r}")
            continue
        if sha(text) != a["index_sha"]:
            problems.append(f"r{rev}: {INDEX} differs from what was acknowledged")
        if files_digest(git_files(repo, oids[rev])) != a["files"]:
            problems.append(f"r{rev}: the files differ from what was acknowledged")
    return problems


def worktree_problems(repo_path: Path) -> list[str]:
    """Where the working tree's files differ from HEAD's (content, not git's index)."""
    want = head_files(repo_path)
    have = {
        str(p.relative_to(repo_path)): p.read_bytes().decode("utf-8", "replace")
        for top in repo_path.iterdir()
        if top.name != ".git"
        for p in ([top] if top.is_file() else top.rglob("*"))
        if p.is_file()
    }
    problems = [f"{p} differs from HEAD" for p in sorted(want) if have.get(p) != want[p]]
    problems += [f"{p} is not in HEAD" for p in sorted(set(have) - set(want))]
    return problems


def check_fsck(repo_path: Path) -> list[str]:
    """``git fsck --full`` passes, and no lock file or write marker is left in ``.git``."""
    problems: list[str] = []
    fsck = _git(repo_path, "fsck", "--full", "--no-dangling", "--no-progress")
    if fsck.returncode != 0 or "bad sha1 file" in fsck.stderr:
        problems.append(f"git fsck --full exited {fsck.returncode}: {fsck.stderr[-2000:]}")
    git_dir = repo_path / ".git"
    left = [str(p.relative_to(repo_path)) for p in git_dir.rglob("*.lock")]
    left += [str(p.relative_to(repo_path)) for p in git_dir.glob("objects/pack/pack_git2_*")]
    if left:
        problems.append(f"lock files or half-written packs left in .git: {left}")
    if (repo_path / ".git" / MARKER).exists():
        problems.append("the write marker is left after recovery")
    return problems


def check_git(repo_path: Path) -> list[str]:
    """:func:`check_fsck`, and the files of the working tree are HEAD's."""
    return check_fsck(repo_path) + [f"working tree: {p}" for p in worktree_problems(repo_path)]


def check_index(r: Reverie, agent: str, repo_path: Path) -> list[str]:
    """The search index holds exactly the lines of the files at the current revision."""
    memory_id = r.state.memory_of(r.agent(agent).id)
    got = r.memories.index_rows(memory_id)
    want = Counter((p, line) for p, t in head_files(repo_path).items() for line in index_lines(t))
    if got == want:
        return []
    return [
        f"index rows differ from the files: missing {list((want - got).items())[:3]}, "
        f"extra {list((got - want).items())[:3]}"
    ]


def fts_integrity(home: Path) -> list[str]:
    """FTS5's own check that its index matches its content table."""
    conn = sqlite3.connect(home / "reverie.db")
    try:
        conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('integrity-check')")
    except sqlite3.DatabaseError as exc:
        return [f"FTS5 integrity-check failed: {exc}"]
    finally:
        conn.close()
    return []


def check_resend(r: Reverie, agent: str, acks: list[dict[str, Any]], repo_path: Path) -> list[str]:
    """Keys survive crashes (W7): the last acked batch replays; the next one applies once.

    Leaves the memory at revision A + 1, where A is the last acknowledged revision.
    """
    problems: list[str] = []
    repo = pygit2.Repository(str(repo_path))
    oids = history_oids(r, agent)
    a = acks[-1]["revision"]
    head = len(oids) - 1
    if head not in (a, a + 1):
        return [f"the memory is at {head}, but the last ack is {a}"]
    again = r.memory_apply(agent, make_batch(a, git_files(repo, oids[a - 1])), key=key_of(a))
    if not again.replayed or again.revision != a:
        problems.append(f"the last acked batch {a}, sent again, answered {again}")
    batch = make_batch(a + 1, git_files(repo, oids[a]))
    first = r.memory_apply(agent, batch, key=key_of(a + 1))
    committed = head == a + 1
    if first.revision != a + 1 or first.replayed != committed or not first.changed:
        problems.append(
            f"batch {a + 1} ({'committed' if committed else 'not committed'} before its ack) "
            f"sent again answered {first}"
        )
    second = r.memory_apply(agent, batch, key=key_of(a + 1))
    if not second.replayed or second.revision != a + 1:
        problems.append(f"batch {a + 1} sent a third time answered {second}")
    text = r.memory_read(agent).text
    if text.count(f"fact {a + 1} part a") != 1:
        problems.append(f"fact {a + 1} part a is in {INDEX} {text.count(f'fact {a + 1} part a')}x")
    if r.memory_read(agent).revision != a + 1:
        problems.append("the resent batches moved the memory past A + 1")
    return problems


def main(argv: list[str]) -> None:
    """Entry point of the script (see the module docstring)."""
    mode, home, agent = argv[0], Path(argv[1]), argv[2]
    if mode == "write":
        write_forever(home, agent, Path(argv[3]), lambda: print("ready", flush=True))
    elif mode == "serve":
        _serve(home, agent, Path(argv[3]))
    elif mode in ("rmw", "keyed"):
        _race_main(mode, home, agent, argv[3], int(argv[4]))
    elif mode == "die":
        die_at(home, agent, Path(argv[3]), argv[4])
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
