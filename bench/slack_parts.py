"""Where a Slack command event's time goes over HTTP, and what two ways of going faster would
give (issue 13: at least 200 command events/s).

Three measurements, each printed as a table (``--json`` for the figures):

1. **Phases** (``--phases``): ``!remember`` events over HTTP, 4 senders in another process,
   as in ``bench/slack_bench.py``, from a memory of 200 sections. Functions of the Slack app
   and the write pipeline are wrapped to add up, per event, the CPU time of the thread that
   ran them and their wall time: the mapping, the memory read and the ``!remember`` text built
   before the lock, the write under the memory lock (waiting for it included in its wall time)
   and its parts, the answer queued in the outbox. What the server process spent beyond
   ``dispatch`` is uvicorn and the hand-over to the worker thread.
2. **Group commit** (``--group``): what the git and marker work of a write costs on this disk
   when each write moves the branch, writes git's index and the working tree and creates and
   removes the write marker (as the pipeline does now), against groups of ``G`` writes doing
   those once per group (each write still its own blob, tree and commit). pygit2 directly, on
   a 200-section ``MEMORY.md`` growing a section per write; the two alternate.
3. **Workers** (``--workers``): the same HTTP run against ``reverie serve --workers 1`` and
   ``--workers 2`` on the same home (every worker handles events, the parent posts the
   outbox): events per second as the senders saw them, and until every answer was posted,
   and the CPU time of the server's processes (parent and workers) per event, with its
   system (kernel) part. ``--syscalls`` adds the system calls per event by name and the
   context switches, counted by ``perf stat`` on the kernel's tracepoints for every thread
   of the server's processes from after the warm-up until every answer is posted (not
   ``strace``, which slows each call enough to multiply the ``futex`` calls tenfold).

4. **Instructions** (``--instructions``, needs valgrind): the CPU instructions, in user space,
   that one ``!remember`` event costs through ``SlackSurface.dispatch`` in one process (bolt,
   the mapping, the C2 checks, the write, the answer queued), from a memory of 200 and of
   1,000 sections, counted by ``valgrind --tool=callgrind``: a run of N events less a run of
   none, over N. The count is the same from run to run whatever else the machine is doing,
   so it compares two versions of the code where times on a shared machine cannot;
   ``--baseline SRC`` counts another tree's ``src`` beside this one (the events are this
   tree's, so both run the same requests). It leaves out the kernel's share (files, locks,
   sockets) and everything a server adds around ``dispatch``.

Run::

    python bench/slack_parts.py [--phases] [--group] [--workers [--syscalls]]
        [--instructions] [--events 200] [--rounds 2] [--senders 4] [--baseline SRC]

(the first three when none is named).
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common

sys.path.insert(0, str(_common.ROOT))  # tests.*: the local Slack and model servers

import pygit2
from pygit2.enums import FileMode

import slack_bench
from reverie import Reverie
from reverie.slack import app as slack_app
from reverie.slack.app import SlackSurface
from reverie.slack.http import EventsEndpoint
from reverie.store import memories
from tests.slack.conftest import (
    BOT_TOKEN,
    DM_SAM,
    SAM,
    SIGNING_SECRET,
    serve,
)
from tests.slack.fake_slack_server import EventSender

#: The memory the runs start from: 200 sections, as the HTTP rows of slack_bench.py.
START = "# Memory\n\n" + "".join(f"## Note {i}\n\nfact {i}\n\n" for i in range(200))


stack = slack_bench.stack


# 1. phases


class Phases:
    """CPU and wall time per wrapped function, summed over every call in any thread."""

    def __init__(self) -> None:
        self.totals: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
        self._lock = threading.Lock()

    def wrap(self, owner: Any, name: str, label: str) -> None:
        inner: Callable[..., Any] = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            cpu, wall = time.thread_time_ns(), time.perf_counter_ns()
            try:
                return inner(*args, **kwargs)
            finally:
                spent = (time.thread_time_ns() - cpu, time.perf_counter_ns() - wall)
                with self._lock:
                    row = self.totals[label]
                    row[0], row[1], row[2] = row[0] + spent[0], row[1] + spent[1], row[2] + 1

        setattr(owner, name, timed)


#: What is wrapped: (owner, function, label); indented labels are parts of the one above.
WRAPPED: list[tuple[Any, str, str]] = [
    (SlackSurface, "dispatch", "dispatch: bolt, signature, the event handled"),
    (SlackSurface, "_chat", "  mapping to channel and conversation"),
    (slack_app, "run_command", "  the command (C2 checks and the write)"),
    (memories.MemoryStore, "read", "    MEMORY.md read before the lock"),
    (memories.MemoryStore, "_apply_locked", "    under the memory lock (wall: with waiting)"),
    (memories, "apply_batch", "      the batch applied in memory"),
    (memories.validation, "check_result", "      W4/W5 checks of the result"),
    (memories.MemoryStore, "_begin", "      write marker"),
    (memories.MemoryStore, "_commit", "      git objects and branch update"),
    (memories.MemoryStore, "_advance", "      git objects and branch update"),  # a group's
    (memories.fts, "replace_file", "      search index rows"),
    (memories.MemoryStore, "_after_commit", "      working tree, git index, marker removed"),
    (Reverie, "reply", "  the answer queued in the outbox"),
]


def phases(events: int) -> dict[str, Any]:
    timer = Phases()
    # (what the code measured lacks, such as the older code's group move, is left out)
    present = [(o, n, label) for o, n, label in WRAPPED if hasattr(o, n)]
    saved = {(owner, name): getattr(owner, name) for owner, name, _ in present}
    for owner, name, label in present:
        timer.wrap(owner, name, label)
    try:
        with stack() as (rv, slack, _, _):
            surface = SlackSurface(rv)
            gen = serve(EventsEndpoint(surface))
            url = next(gen)
            sender = EventSender(slack, url, SIGNING_SECRET)
            rv.memory_apply("ada", {"action": "set_body", "text": START})
            sender.deliver(sender.message(SAM, DM_SAM, "!memory"))  # lookups cached from here
            timer.totals.clear()
            run = slack_bench.over_http(rv, sender, events, elsewhere=True)
            next(gen, None)
    finally:
        for (owner, name), original in saved.items():
            setattr(owner, name, original)
    rows = {}
    for _, _, label in WRAPPED:  # in the order of WRAPPED: each part under its whole
        cpu, wall, n = timer.totals.get(label, [0, 0, 0])
        rows[label] = {"calls": n, "cpu_ms": cpu / 1e6 / events, "wall_ms": wall / 1e6 / events}
    return {"run": run, "per_event": rows, "load": os.getloadavg()}


# 2. group commit


def git_writes(count: int, group: int) -> float:
    """CPU ms per write of ``count`` writes in groups of ``group`` (see the module's 2.)."""
    with tempfile.TemporaryDirectory() as folder:
        repo = pygit2.init_repository(folder)
        sig = pygit2.Signature("reverie-chat", "chat@reverie.local", 0, 0)
        text = START
        root = repo.TreeBuilder()
        root.insert("MEMORY.md", repo.create_blob(text.encode()), FileMode.BLOB)
        head = repo.create_commit("refs/heads/main", sig, sig, "0", root.write(), [])
        marker = Path(folder) / ".git" / "reverie-writing"
        start = time.process_time()
        for first in range(0, count, group):
            marker.write_bytes(b"writing " + str(head).encode() + b"\n")
            tip = head
            for i in range(first, first + group):
                text += f"## Away {i}\n\nfact {i}\n\n"
                root = repo.TreeBuilder(repo.get(tip).peel(pygit2.Tree))
                root.insert("MEMORY.md", repo.create_blob(text.encode()), FileMode.BLOB)
                tip = repo.create_commit(None, sig, sig, str(i), root.write(), [tip])
            branch = repo.references.get("refs/heads/main")
            assert branch is not None
            branch.set_target(tip)
            (Path(folder) / "MEMORY.md").write_text(text)
            index = repo.index
            index.read(True)
            blob = repo.get(tip).peel(pygit2.Tree)["MEMORY.md"].id
            index.add(pygit2.IndexEntry("MEMORY.md", blob, FileMode.BLOB))
            index.write()
            marker.unlink()
            head = tip
        return (time.process_time() - start) * 1000 / count


def group_commit(events: int, rounds: int, group: int = 4) -> list[dict[str, float]]:
    out = []
    for _ in range(rounds):
        one, grouped = git_writes(events, 1), git_writes(events, group)
        out.append(
            {"one_ms": one, "group": group, "grouped_ms": grouped, "load": os.getloadavg()[0]}
        )
    return out


# 3. workers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def workers(
    events: int, rounds: int, senders: int = 4, *, syscalls: bool = False
) -> list[dict[str, Any]]:
    """``reverie serve --workers N`` for N = 1, 2 on the same home, in turn: the events per
    second the senders saw (every one acknowledged after its write and queued answer), and
    until the parent process had posted every answer to the local Slack. With ``syscalls``,
    ``strace -c`` follows every thread of the server's processes from after the warm-up until
    every answer is posted, and the counts per event are kept by system call (the rates are
    then strace's, not the server's)."""
    out = []
    with stack() as (rv, slack, _, home):
        env = dict(
            os.environ,
            SLACK_BOT_TOKEN=BOT_TOKEN,
            SLACK_SIGNING_SECRET=SIGNING_SECRET,
            REVERIE_SLACK_API_URL=slack.api_url,
            PYTHONPATH=os.pathsep.join(sys.path),
        )
        sender = EventSender(slack, "", SIGNING_SECRET)  # one: its event ids never repeat
        for r in range(rounds):
            for count in (1, 2):
                port = free_port()
                server = subprocess.Popen(
                    [
                        *(sys.executable, "-m", "reverie.cli", "serve", "--home", str(home)),
                        *("--port", str(port), "--workers", str(count), "--tick", "3600"),
                    ],
                    env=env,
                    stdout=subprocess.DEVNULL,
                )
                try:
                    sender.url = f"http://127.0.0.1:{port}/slack/events"
                    rv.memory_apply("ada", {"action": "set_body", "text": START})
                    warm_up(sender, 4 * count)
                    posted = len(slack.posted(DM_SAM))
                    while True:  # the warm-up's answers posted first
                        time.sleep(0.5)
                        if len(slack.posted(DM_SAM)) == posted:
                            break
                        posted = len(slack.posted(DM_SAM))
                    before = rv.memory_read("ada").revision
                    bodies = [
                        sender.message(SAM, DM_SAM, f"!remember W{count} {r} {i} - fact {i}")
                        for i in range(events)
                    ]
                    load = os.getloadavg()[0]
                    tracer = traced(server.pid) if syscalls else None
                    cpu = tree_cpu(server.pid)
                    started = time.perf_counter()
                    seconds, statuses = slack_bench.send_from_child(sender.url, bodies, senders)
                    assert statuses == [200] * events, statuses
                    deadline = time.monotonic() + 120
                    while len(slack.posted(DM_SAM)) < posted + events:
                        if time.monotonic() > deadline:
                            raise RuntimeError("some answers were never posted")
                        time.sleep(0.02)
                    answered = time.perf_counter() - started
                    user, system = (b - a for a, b in zip(cpu, tree_cpu(server.pid), strict=True))
                    calls = untraced(*tracer) if tracer else {}
                    time.sleep(1.0)  # any second post of an answer would come by now
                    out.append(
                        {
                            "syscalls_per_event": {k: n / events for k, n in calls.items()},
                            "workers": count,
                            "per_second": events / seconds,
                            "answered_per_second": events / answered,
                            "server_cpu_ms_per_event": (user + system) * 1000 / events,
                            "server_system_ms_per_event": system * 1000 / events,
                            "saved": rv.memory_read("ada").revision - before,
                            "posted": len(slack.posted(DM_SAM)) - posted,
                            "events": events,
                            "senders": senders,
                            "load": load,
                        }
                    )
                finally:
                    server.terminate()
                    server.wait(30)
    return out


def tree_pids(pid: int) -> list[int]:
    """Process ``pid`` and its live descendants."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def traced(pid: int) -> tuple[subprocess.Popen[bytes], Path]:
    """``perf stat`` counting the system calls (kernel tracepoints, by name) and context
    switches of ``pid``'s process tree, threads included. Not ``strace -c``: stopping on every
    call slows each thread so much that they queue for the interpreter lock, which multiplies
    the ``futex`` calls (about 400 per event under strace against 45 without)."""
    if shutil.which("perf") is None:
        raise SystemExit("--syscalls needs perf (apt-get install linux-perf)")
    out = Path(tempfile.mkstemp(prefix="slack-syscalls-")[1])
    pids = ",".join(str(p) for p in tree_pids(pid))
    events = "context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_*"
    if Path("/sys/kernel/tracing/events/ext4").is_dir():  # files created and deleted, on ext4
        events += ",ext4:ext4_allocate_inode,ext4:ext4_free_inode"
    tracer = subprocess.Popen(
        ["perf", "stat", "-x", ",", "-e", events, "-p", pids, "-o", str(out)],
        stderr=subprocess.DEVNULL,
    )
    time.sleep(2.0)  # perf opens some 700 counters per thread before it counts
    return tracer, out


#: What the counts of :func:`traced` are called in the tables.
LABELS = {
    "raw_syscalls:sys_enter": "all",
    "ext4:ext4_allocate_inode": "ext4 inodes allocated (files created)",
    "ext4:ext4_free_inode": "ext4 inodes freed (files deleted)",
}


def untraced(tracer: subprocess.Popen[bytes], out: Path) -> dict[str, int]:
    """Stop ``tracer`` and read its counts, by system call (``all`` for every call,
    ``context switches`` for those)."""
    tracer.send_signal(signal.SIGINT)
    tracer.wait(60)
    calls: dict[str, int] = {}
    for line in out.read_text().splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[0].isdigit() and int(fields[0]):
            name = fields[2].removeprefix("syscalls:sys_enter_")
            name = LABELS.get(name, name).replace("-", " ")
            calls[name] = int(fields[0])
    out.unlink()
    return calls


def tree_cpu(pid: int) -> tuple[float, float]:
    """CPU seconds, user and system, of process ``pid`` and its live descendants so far."""
    tick = os.sysconf("SC_CLK_TCK")
    user = system = 0.0
    for p in tree_pids(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended meanwhile
        user, system = user + int(fields[11]) / tick, system + int(fields[12]) / tick
    return user, system


def warm_up(sender: EventSender, count: int, timeout: float = 60) -> None:
    """Wait for the server, and let each worker cache its Slack lookups."""
    deadline = time.monotonic() + timeout
    done = 0
    while done < count:
        try:
            sender.deliver(sender.message(SAM, DM_SAM, "!memory"))
            done += 1
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


# 4. instructions


def dispatch_events(events: int, sections: int) -> None:
    """What ``--instructions`` counts (run in a child under valgrind): ``events``
    ``!remember`` events through ``dispatch``, after 20 that warm every cache."""
    with stack() as (rv, slack, _, _):
        surface = SlackSurface(rv)
        sender = EventSender(slack, "", SIGNING_SECRET)
        notes = "".join(f"## Note {i}\n\nfact {i}\n\n" for i in range(sections))
        rv.memory_apply("ada", {"action": "set_body", "text": "# Memory\n\n" + notes})
        for i in range(-20, events):
            body = sender.message(SAM, DM_SAM, f"!remember I {i} - x {i}")
            raw, headers = slack_bench.signed(body)
            surface.dispatch(raw, "", headers)
        saved = rv.memory_read("ada").revision
        assert saved == events + 21, saved  # the body, then each event saved


def counted(src: str, events: int, sections: int) -> int:
    """User-space instructions of a child running :func:`dispatch_events` on ``src``."""
    run = subprocess.run(
        [
            *("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"),
            *(sys.executable, __file__, "--dispatch", str(events), "--sections", str(sections)),
        ],
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([src, str(_common.ROOT)])),
        capture_output=True,
        text=True,
        check=True,
    )
    for line in run.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    raise RuntimeError(f"valgrind printed no count:\n{run.stderr[-2000:]}")


def instructions(events: int, baseline: str | None) -> list[dict[str, Any]]:
    """Instructions per event for this tree (and ``baseline``), at 200 and 1,000 sections."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    trees = {"this tree": str(_common.ROOT / "src")}
    if baseline:
        trees["baseline"] = baseline
    out = []
    for sections in (200, 1000):
        for name, src in trees.items():
            _common.progress(f"instructions: {name}, {sections} sections")
            empty, full = counted(src, 0, sections), counted(src, events, sections)
            out.append(
                {
                    "tree": name,
                    "src": src,
                    "sections": sections,
                    "events": events,
                    "per_event": (full - empty) / events,
                }
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--phases", action="store_true")
    parser.add_argument("--group", action="store_true")
    parser.add_argument("--workers", action="store_true")
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--senders", type=int, default=4, help="--workers: events at once")
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--syscalls", action="store_true", help="--workers under strace -c")
    parser.add_argument("--baseline", help="--instructions: another tree's src to count too")
    parser.add_argument("--dispatch", type=int, help=argparse.SUPPRESS)  # --instructions' child
    parser.add_argument("--sections", type=int, default=200, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.dispatch is not None:
        dispatch_events(args.dispatch, args.sections)
        return 0
    every = not (args.phases or args.group or args.workers or args.instructions)
    payload: dict[str, Any] = {"machine": _common.machine(Path(tempfile.gettempdir()))}
    text = [_common.machine_markdown(payload["machine"])]
    if every or args.phases:
        _common.progress(f"phases: {args.events} !remember events over HTTP")
        found = payload["phases"] = phases(args.events)
        run = found["run"]
        text.append(
            f"{run['per_second']:.0f} events/s, {run['saved']} of {run['events']} saved, "
            f"server CPU {run['process_cpu_ms_per_event']:.2f} ms/event\n\n"
            + _common.markdown_table(
                ["per event", "CPU ms", "wall ms"],
                [
                    [
                        "· " * ((len(label) - len(label.lstrip())) // 2) + label.strip(),
                        f"{row['cpu_ms']:.2f}",
                        f"{row['wall_ms']:.2f}",
                    ]
                    for label, row in found["per_event"].items()
                ],
            )
        )
    if every or args.group:
        _common.progress("group commit: git and marker work per write")
        rows = payload["group_commit"] = group_commit(2 * args.events, args.rounds)
        text.append(
            _common.markdown_table(
                ["round", "one write at a time, ms/write", "groups, ms/write", "ratio", "load"],
                [
                    [
                        str(i + 1),
                        f"{r['one_ms']:.2f}",
                        f"{r['grouped_ms']:.2f} (of {r['group']:.0f})",
                        f"{r['one_ms'] / r['grouped_ms']:.2f}",
                        f"{r['load']:.2f}",
                    ]
                    for i, r in enumerate(rows)
                ],
            )
        )
    if args.instructions:
        counts = payload["instructions"] = instructions(min(args.events, 50), args.baseline)
        text.append(
            _common.markdown_table(
                ["tree", "sections", "events", "instructions per event (M)"],
                [
                    [c["tree"], str(c["sections"]), str(c["events"]), f"{c['per_event'] / 1e6:.2f}"]
                    for c in counts
                ],
            )
        )
    if every or args.workers:
        _common.progress("workers: reverie serve --workers 1 and 2")
        found_workers = payload["workers"] = workers(
            args.events, args.rounds, args.senders, syscalls=args.syscalls
        )
        text.append(
            _common.markdown_table(
                [
                    "workers",
                    "events/s",
                    "all answered, /s",
                    "server CPU ms/event (system)",
                    "saved",
                    "posted",
                    "load",
                ],
                [
                    [
                        str(r["workers"]),
                        f"{r['per_second']:.0f}",
                        f"{r['answered_per_second']:.0f}",
                        f"{r['server_cpu_ms_per_event']:.2f} "
                        f"({r['server_system_ms_per_event']:.2f})",
                        str(r["saved"]),
                        str(r["posted"]),
                        f"{r['load']:.2f}",
                    ]
                    for r in found_workers
                ],
            )
        )
        if args.syscalls:
            per = [r["syscalls_per_event"] for r in found_workers]
            names = sorted(
                {k for calls in per for k in calls}, key=lambda k: -max(c.get(k, 0) for c in per)
            )
            text.append(
                _common.markdown_table(
                    ["per event", *(f"{r['workers']} worker(s)" for r in found_workers)],
                    [
                        [k, *(f"{c.get(k, 0):.1f}" for c in per)]
                        for k in names
                        if max(c.get(k, 0) for c in per) >= 0.5
                    ],
                )
            )
    _common.emit(args.json, payload, "\n\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
