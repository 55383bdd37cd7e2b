"""Fault campaign: real storage faults while writers and readers run (issue 10).

A home on a size-limited tmpfs (needs root, for the mounts), three agents, two writer processes
and two reader processes, all through the Python API, for as long as the campaign lasts. The
controller injects one fault after another, in random order and at random moments:

* ``disk_full``: the tmpfs filled until between 0 and 256 KiB are left, then freed;
* ``read_only``: every file and directory of the home made immutable (``chattr -R +i``), then
  writable again: no file can be created, renamed or opened for writing (a remount cannot be
  done while the workers hold files open; what they hold open stays writable);
* ``index_damage``: a page of one of the search indexes' tables overwritten with garbage;
* ``object_damage``: a power loss: every worker is killed, the newest commit, tree or
  ``MEMORY.md`` blob of one memory is cut in half (what a power loss can leave without
  ``REVERIE_DURABLE=1``), the workers start again; ``reverie doctor`` runs after the fault.

Every write adds one line with a unique marker; every outcome is logged (acknowledged with
its revision, refused with its code, unknown, or a raw exception). At the end, with the
storage back and ``reverie doctor`` run, it checks and reports:

* acknowledged writes lost: an acknowledged revision that is missing or does not hold its
  marker (target 0);
* refused writes applied later: a refused write's marker found in any commit of any memory
  (target 0);
* raw tracebacks: an exception that is not a ``ReverieError``, in any worker, or a traceback
  from a command (target 0);
* hangs: a worker silent for ``--hang-seconds``, or a command past its timeout (target 0);
* reads served: the share of reads answered during each kind of fault (and outside faults);
  a read of the memory whose objects are damaged is expected to be refused, so that share is
  also given for the other memories.

Run (as root): ``python bench/fault_campaign.py [--rounds 4] [--seed 1] [--json]``; the suite
runs a short one (``tests/store/test_fault_campaign.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

HERE = Path(__file__).resolve().parent
if str(HERE.parent / "src") not in sys.path:  # run from a checkout
    sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from _faults import (  # noqa: E402
    corrupt_fts,
    fill,
    free,
    immutable,
    mount_error,
    object_path,
    tmpfs,
    truncate,
)
from reverie import Reverie  # noqa: E402
from reverie.errors import ReverieError  # noqa: E402

AGENTS = ("ada", "bob", "cy")
FAULTS = ("disk_full", "read_only", "index_damage", "object_damage")
INDEX_TABLES = (
    "memory_fts_config",
    "memory_fts_data",
    "memory_fts_idx",
    "memory_lines",
    "history_fts_config",
    "history_fts_data",
)
#: Every this many writes a writer resets MEMORY.md (it stays under its 64 KiB cap).
RESET_EVERY = 150
#: A fault lasts at least until this many reads have ended while it is on.
MIN_READS = 4


# workers (run as ``fault_campaign.py --worker KIND HOME LOG SEED``)


def _log(out: Any, **entry: Any) -> None:
    out.write(json.dumps({"t": time.time(), **entry}) + "\n")
    out.flush()


def writer(home: Path, log: Path, seed: int) -> None:
    rng = random.Random(seed)
    n = 0
    with open(log, "a", encoding="utf-8") as out:
        rv = None
        while True:
            n += 1
            agent = rng.choice(AGENTS)
            marker = f"m{seed}x{n}"
            try:
                if rv is None or n % 40 == 0:  # reopen now and then: opening meets faults too
                    if rv is not None:
                        rv.close()
                    rv = Reverie(home)
                if n % RESET_EVERY == 0:
                    request: dict[str, Any] = {
                        "action": "set_body",
                        "text": f"# Memory\n- {marker}\n",
                    }
                else:
                    request = {"action": "add", "text": f"{marker} noted", "section": "Decisions"}
                out_ = rv.memory_apply(agent, request)
                _log(out, kind="ack", agent=agent, marker=marker, revision=out_.revision)
            except ReverieError as exc:
                unknown = "may still appear" in exc.message
                _log(out, kind="unknown" if unknown else "refused", agent=agent, marker=marker,
                     code=exc.code, message=exc.message[:200])  # fmt: skip
                rv = None  # open again: the fault may be gone by then
                time.sleep(0.02)
            except Exception as exc:  # a raw exception is what the campaign counts
                _log(out, kind="raw", agent=agent, marker=marker,
                     error="".join(traceback.format_exception_only(exc)).strip()[:300])  # fmt: skip
                time.sleep(0.05)
            time.sleep(rng.uniform(0, 0.01))


def reader(home: Path, log: Path, seed: int) -> None:
    rng = random.Random(seed)
    n = 0
    with open(log, "a", encoding="utf-8") as out:
        rv = None
        while True:
            n += 1
            agent = rng.choice(AGENTS)
            op = rng.choice(("show", "search", "history", "list", "diff"))
            started = time.time()
            try:
                if rv is None or n % 25 == 0:
                    if rv is not None:
                        rv.close()
                    rv = Reverie(home)
                if op == "show":
                    rv.memory_read(agent)
                elif op == "search":
                    rv.memory_search(agent, "noted")
                elif op == "history":
                    rv.memory_history(agent, limit=5)
                elif op == "list":
                    rv.agents()
                else:
                    head = rv.memory_history(agent, limit=1)[0].revision
                    rv.memory_diff(agent, max(0, head - 1), head)
                _log(out, kind="read", ok=True, agent=agent, op=op, seconds=time.time() - started)
            except ReverieError as exc:
                _log(out, kind="read", ok=False, agent=agent, op=op, code=exc.code,
                     message=exc.message[:200], seconds=time.time() - started)  # fmt: skip
                rv = None
                time.sleep(0.02)
            except Exception as exc:
                _log(out, kind="raw", agent=agent, op=op,
                     error="".join(traceback.format_exception_only(exc)).strip()[:300])  # fmt: skip
                rv = None
            time.sleep(rng.uniform(0, 0.02))


# the controller


@dataclass
class Window:
    fault: str
    start: float
    end: float = 0.0
    detail: str = ""
    memory: str | None = None  # the agent whose objects were damaged
    undo: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)


@dataclass
class Result:
    windows: list[Window] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    command_tracebacks: list[str] = field(default_factory=list)
    doctor: list[dict[str, Any]] = field(default_factory=list)


def _cli(home: Path, *args: str, timeout: float = 60.0) -> tuple[int, str, str, bool]:
    """A command as a user runs it: code, stdout, stderr, and whether it hung (then stderr
    holds where it was: the process is stopped with SIGABRT, and Python's fault handler
    prints its stack)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-X",
            "faulthandler",
            "-m",
            "reverie.cli",
            *args,
            "--home",
            str(home),
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(HERE.parent / "src")},
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        out, err = proc.communicate()
        return -1, out, err, True
    return proc.returncode, out, err, False


def _head_objects(home: Path, agent: str) -> list[tuple[Path, str]]:
    with Reverie(home) as rv:
        memory_id = rv.state.memory_of(rv.agent(agent).id)
    repo_path = home / "memories" / memory_id
    repo = pygit2.Repository(str(repo_path))
    commit = repo.revparse_single("refs/heads/main")
    assert isinstance(commit, pygit2.Commit)
    oids = [str(commit.id), str(commit.tree_id), str(commit.tree["MEMORY.md"].id)]
    return [(repo_path, oid) for oid in oids if object_path(repo_path, oid).exists()]


def _inject(fault: str, mount: Path, home: Path, rng: random.Random, window: Window) -> None:
    if fault == "disk_full":
        leave = rng.choice([0, 4096, 16384, 65536, 262144])
        window.detail = f"{leave} bytes left"
        fill(mount, leave)
    elif fault == "read_only":
        window.undo.enter_context(immutable(home))
    elif fault == "index_damage":
        table = rng.choice(INDEX_TABLES)
        window.detail = table
        corrupt_fts(home / "reverie.db", table)
    elif fault == "object_damage":
        agent = rng.choice(AGENTS)
        objects = _head_objects(home, agent)
        if objects:
            repo, oid = rng.choice(objects)
            truncate(object_path(repo, oid))
            window.memory, window.detail = agent, oid


def _clear(window: Window, mount: Path, home: Path, result: Result) -> None:
    window.undo.close()
    if window.fault == "disk_full":
        free(mount)
    elif window.fault == "object_damage":
        code, out, err, hung = _cli(home, "doctor")
        if hung:
            result.hangs.append(f"reverie doctor: {err[-1500:]}")
        if "Traceback" in err:
            result.command_tracebacks.append(err[-500:])
        report = json.loads(out) if out.strip().startswith("{") else {"raw": out}
        result.doctor.append({"code": code, **report})


class Workers:
    """Two writer and two reader processes; killed and started again for a power loss (a
    new generation writes new markers, to logs of its own)."""

    KINDS = ("write", "write", "read", "read")

    def __init__(self, home: Path, logs_dir: Path, seed: int) -> None:
        self.home, self.logs_dir, self.seed = home, logs_dir, seed
        self.generation = 0
        self.logs: list[Path] = []
        self.procs: list[tuple[Path, subprocess.Popen[bytes]]] = []
        self.start()

    def start(self) -> None:
        self.generation += 1
        self.procs = []
        for i, kind in enumerate(self.KINDS):
            log = self.logs_dir / f"{kind}-{i}-g{self.generation}.jsonl"
            seed = self.seed * 1000 + self.generation * 10 + i
            with open(log.with_suffix(".err"), "w") as err:
                proc = subprocess.Popen(
                    [
                        sys.executable,
                        __file__,
                        "--worker",
                        kind,
                        str(self.home),
                        str(log),
                        str(seed),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                    env={**os.environ, "PYTHONPATH": str(HERE.parent / "src")},
                )
            self.logs.append(log)
            self.procs.append((log, proc))

    def reads_logged(self) -> int:
        """How many reads the reader processes have logged so far (every generation's)."""
        total = 0
        for log in self.logs:
            if log.name.startswith("read-") and log.exists():
                with open(log, "rb") as f:
                    total += f.read().count(b"\n")
        return total

    def kill(self) -> None:
        for _, proc in self.procs:
            proc.send_signal(signal.SIGKILL)
            proc.wait()

    def watch(self, hang_seconds: float, result: Result) -> None:
        """A worker whose log has been silent that long is hung: it is counted and killed."""
        now = time.time()
        for log, proc in self.procs:
            if proc.poll() is None and log.exists() and now - log.stat().st_mtime > hang_seconds:
                result.hangs.append(f"{log.name} silent for {now - log.stat().st_mtime:.0f} s")
                proc.kill()


def campaign(
    root: Path, *, rounds: int, seed: int, fault_seconds: float, calm_seconds: float,
    hang_seconds: float = 30.0, faults: tuple[str, ...] = FAULTS,
) -> dict[str, Any]:  # fmt: skip
    """Run the campaign under ``root`` (a tmpfs is mounted at ``root/disk``); the report."""
    rng = random.Random(seed)
    logs_dir = root / "logs"
    logs_dir.mkdir(parents=True, exist_ok=True)
    result = Result()
    with tmpfs(root / "disk", "128m") as mount:
        home = mount / "home"
        with Reverie(home, create=True) as rv:
            for agent in AGENTS:
                rv.create_agent(agent)
        workers = Workers(home, logs_dir, seed)
        try:
            plan = [f for _ in range(rounds) for f in rng.sample(faults, len(faults))]
            calm = Window("none", time.time())
            for fault in plan:
                time.sleep(rng.uniform(0.5, 1.5) * calm_seconds)
                workers.watch(hang_seconds, result)
                calm.end = time.time()
                result.windows.append(calm)
                window = Window(fault, time.time())
                if fault == "object_damage":  # a power loss: every process dies with it
                    workers.kill()
                try:
                    _inject(fault, mount, home, rng, window)
                except (OSError, sqlite3.Error, subprocess.SubprocessError) as exc:
                    window.detail = f"injection failed: {exc}"
                if fault == "object_damage":
                    workers.start()
                reads_before = workers.reads_logged()
                time.sleep(rng.uniform(0.5, 1.5) * fault_seconds)
                # On a busy machine a window can pass with no read ending in it (the first
                # reader after the damage rebuilds the index): it lasts until a few have.
                until = time.time() + hang_seconds
                while workers.reads_logged() - reads_before < MIN_READS and time.time() < until:
                    time.sleep(0.1)
                workers.watch(hang_seconds, result)
                _clear(window, mount, home, result)  # the fault lasts until it is cleared
                window.end = time.time()
                result.windows.append(window)
                calm = Window("none", time.time())
            time.sleep(calm_seconds)
            calm.end = time.time()
            result.windows.append(calm)
        finally:
            workers.kill()
            free(mount)
            for window in result.windows:
                window.undo.close()
        code, out, err, hung = _cli(home, "doctor")
        if hung:
            result.hangs.append("final reverie doctor")
        if "Traceback" in err:
            result.command_tracebacks.append(err[-500:])
        result.doctor.append(
            {"code": code, "final": True, **(json.loads(out) if out.strip() else {})}
        )
        return _report(home, workers.logs, result)


def _entries(logs: list[Path]) -> list[dict[str, Any]]:
    out = []
    for log in logs:
        if not log.exists():
            continue  # killed (a power loss) before it logged anything
        for line in log.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut short when the worker was stopped
    return out


def _lines(text: str) -> set[str]:
    return set(text.split("\n"))


def _written(marker: str, lines: set[str]) -> bool:
    """Whether a write's line is among ``lines`` (whole lines: "m1x15" is not "m1x150")."""
    return f"- {marker} noted" in lines or f"- {marker}" in lines


def _all_commit_lines(home: Path) -> tuple[dict[str, set[str]], list[str]]:
    """Every line of every revision, per agent, read through Reverie (which checks each object
    before libgit2 reads it: a plain walk over a damaged one spins); and what could not be
    read. With the branch at the newest recorded revision (``reverie doctor`` made sure of it),
    the revisions are every commit a reader can see."""
    texts: dict[str, set[str]] = {}
    unreadable = []
    with Reverie(home) as rv:
        for agent in AGENTS:
            lines: set[str] = set()
            for rec in rv.memory_history(agent, limit=10**9):
                try:
                    lines |= _lines(rv.memory_read(agent, revision=rec.revision).text)
                except ReverieError as exc:
                    unreadable.append(f"{agent} r{rec.revision}: {exc.code}")
            texts[agent] = lines
    return texts, unreadable


def _report(home: Path, logs: list[Path], result: Result) -> dict[str, Any]:
    entries = _entries(logs)
    outcomes = Counter(e["kind"] for e in entries if e["kind"] != "read")
    lost = []
    with Reverie(home) as rv:
        for e in (e for e in entries if e["kind"] == "ack"):
            try:
                text = rv.memory_read(e["agent"], revision=e["revision"]).text
            except ReverieError as exc:
                lost.append(f"{e['agent']} r{e['revision']}: {exc.code}")
                continue
            if not _written(e["marker"], _lines(text)):
                lost.append(f"{e['agent']} r{e['revision']} lacks {e['marker']}")
    committed, unreadable = _all_commit_lines(home)
    applied_later = [
        e["marker"]
        for e in entries
        if e["kind"] == "refused" and _written(e["marker"], committed[e["agent"]])
    ]
    refusals = [
        (next((w.fault for w in result.windows if w.start <= e["t"] <= w.end), "none"), e["code"])
        for e in entries
        if e["kind"] == "refused"
    ]
    raw = [e.get("error", "") for e in entries if e["kind"] == "raw"]
    for log in logs:
        err = log.with_suffix(".err").read_text(encoding="utf-8", errors="replace")
        if "Traceback" in err:
            raw.append(err[-300:])
    reads: dict[str, Counter[str]] = defaultdict(Counter)
    unserved: list[str] = []  # reads refused that the fault should not have stopped
    for e in (e for e in entries if e["kind"] == "read"):
        window = next((w for w in result.windows if w.start <= e["t"] <= w.end), None)
        if window is None:
            continue
        reads[window.fault]["total"] += 1
        reads[window.fault]["served"] += bool(e["ok"])
        if not e["ok"] and window.memory != e["agent"]:
            unserved.append(f"{window.fault}: {e['op']} {e['agent']}: {e.get('message', '')}")
        if e["seconds"] > 10:
            result.hangs.append(f"a read took {e['seconds']:.0f} s")
        if window.memory is not None and e["agent"] != window.memory:
            reads[window.fault]["others_total"] += 1
            reads[window.fault]["others_served"] += bool(e["ok"])
    fsck = {}
    with Reverie(home) as rv:
        for agent in AGENTS:
            repo = home / "memories" / rv.state.memory_of(rv.agent(agent).id)
            done = subprocess.run(["git", "-C", str(repo), "fsck", "--no-dangling"],
                                  capture_output=True, text=True, check=False)  # fmt: skip
            fsck[agent] = done.returncode == 0
    return {
        "faults": Counter(w.fault for w in result.windows if w.fault != "none"),
        "fault_details": [(w.fault, w.detail) for w in result.windows if w.fault != "none"],
        "writes": dict(outcomes),
        "refusal_codes": dict(Counter(e["code"] for e in entries if e["kind"] == "refused")),
        "refusals_during": {
            fault: dict(Counter(c for f, c in refusals if f == fault))
            for fault in sorted({f for f, _ in refusals})
        },
        "acknowledged_lost": lost,
        "refused_applied_later": applied_later,
        "raw_tracebacks": raw + result.command_tracebacks,
        "hangs": result.hangs,
        "reads": {fault: dict(c) for fault, c in reads.items()},
        "doctor": result.doctor,
        "git_fsck_clean": fsck,
        "unreadable_revisions": unreadable,
        "reads_refused_unexpectedly": unserved,
        "generic_refusals": [
            f"{f}: {e.get('message', '')}"
            for f, e in zip(
                (r[0] for r in refusals),
                (e for e in entries if e["kind"] == "refused"),
                strict=True,
            )
            if e["code"] == "storage_fault" and f != "object_damage"
        ],
    }


def markdown(report: dict[str, Any]) -> str:
    def counts(key: str) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(report[key].items()))

    rows = [
        "| measure | result |",
        "| --- | --- |",
        f"| faults injected | {counts('faults')} |",
        f"| write outcomes | {counts('writes')} |",
        f"| refusal codes | {counts('refusal_codes')} |",
        *(
            f"| refused during {fault} | {', '.join(f'{k} {v}' for k, v in sorted(c.items()))} |"
            for fault, c in report["refusals_during"].items()
        ),
        f"| acknowledged writes lost | {len(report['acknowledged_lost'])} |",
        f"| refused writes applied later | {len(report['refused_applied_later'])} |",
        f"| raw tracebacks | {len(report['raw_tracebacks'])} |",
        f"| hangs | {len(report['hangs'])} |",
        f"| git fsck clean | {all(report['git_fsck_clean'].values())} |",
        f"| revisions that cannot be read | {len(report['unreadable_revisions'])} |",
        "",
        "| during | reads | served | share | other memories served |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for fault, c in sorted(report["reads"].items()):
        others = "-"
        if c.get("others_total"):
            share = c["others_served"] / c["others_total"]
            others = f"{c['others_served']}/{c['others_total']} ({share:.1%})"
        share = c["served"] / c["total"] if c["total"] else 0.0
        rows.append(f"| {fault} | {c['total']} | {c['served']} | {share:.1%} | {others} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", nargs=4, metavar=("KIND", "HOME", "LOG", "SEED"))
    parser.add_argument("--rounds", type=int, default=4, help="rounds of the four faults")
    parser.add_argument("--faults", default=",".join(FAULTS), help="which faults to inject")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fault-seconds", type=float, default=3.0)
    parser.add_argument("--calm-seconds", type=float, default=2.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.worker:
        kind, home, log, seed = args.worker
        (writer if kind == "write" else reader)(Path(home), Path(log), int(seed))
        return 0
    why = mount_error()
    if why is not None:
        print(f"The fault campaign needs mounts: {why}.", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="fault-campaign-") as tmp:
        report = campaign(
            Path(tmp), rounds=args.rounds, seed=args.seed,
            fault_seconds=args.fault_seconds, calm_seconds=args.calm_seconds,
            faults=tuple(args.faults.split(",")),
        )  # fmt: skip
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(markdown(report))
        for key in ("acknowledged_lost", "refused_applied_later", "raw_tracebacks", "hangs",
                    "reads_refused_unexpectedly", "generic_refusals"):  # fmt: skip
            for item in report[key][:10]:
                print(f"{key}: {item}")
    bad = report["acknowledged_lost"] or report["refused_applied_later"]
    return 1 if bad or report["raw_tracebacks"] or report["hangs"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
