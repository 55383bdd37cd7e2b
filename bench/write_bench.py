"""Write latency of one memory: ``Reverie.memory_apply`` against the git command line.

What is measured: the wall time of one accepted write, from the call to its return, on one
memory, one writer after another (no contention). Two realistic writes:

* ``add``: one entry added under a section of ``MEMORY.md`` (the commonest review write);
* ``topic``: one topic file rewritten in full with one more entry (``write_topic``).

Each write goes, in the same round and in a rotating order so that machine drift hits all of
them alike, to these arms, each on its own copy of the same starting memory:

* ``reverie``: ``Reverie.memory_apply`` with default settings: validation, the memory lock, the
  revision check, one libgit2 commit, the state database and the search index, the working tree;
* ``reverie durable``: the same with ``Settings(durable=True)`` (fsync of git objects and
  SQLite ``synchronous=FULL``);
* ``git CLI``: the naive implementation: compute the same new text, write the file into a
  working tree, then ``git add`` and ``git commit -q`` as subprocesses;
* ``git CLI fsync``: the same with ``-c core.fsync=all``.

Each Reverie arm runs in a worker process of its own (libgit2's fsync switch is per process, so
a durable home must not share a process with the default one); the worker times the call
itself. ``MEMORY.md`` grows with every ``add``; every ``--reset-every`` writes all arms get the
starting body back in an untimed write, so the index stays between about 8 and 20 KiB.
At the end the files of the ``reverie`` and ``git CLI`` arms are compared: the two must hold
the same text, or the comparison would be meaningless.

Run: ``PYTHONPATH=src python bench/write_bench.py [--quick] [--json] [--writes N]``. With
``--baseline SRC`` (say ``git archive <commit> src | tar -x -C /tmp/base``, then
``--baseline /tmp/base/src``) a fifth arm runs that tree's Reverie, default settings, interleaved
with the others: before and after a change in one run, as the ratio ``reverie / reverie
baseline``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common
from _common import Stats, TextGen, fmt_ratio, markdown_table, ms, progress
from reverie.api import Reverie
from reverie.config import Settings
from reverie.core.markdown import apply_batch
from reverie.core.operations import parse_batch
from reverie.store.gitrepo import GitRepo

AGENT = "bench"
TOPICS = 20
SECTIONS = ("People & preferences", "Decisions", "Environment & gotchas", "Project state")


class Arm:
    """One way of doing the write; ``write`` is the timed call."""

    name = ""

    def setup(self, files: dict[str, str]) -> None:
        """Start from ``files`` (path to text), untimed."""
        raise NotImplementedError

    def write(self, request: dict[str, Any]) -> int:
        """Apply one write request (as ``memory_apply`` takes it); its wall time in ns."""
        raise NotImplementedError

    def files(self) -> dict[str, str]:
        """The memory files as this arm left them."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the arm holds."""


class ReverieArm(Arm):
    """``Reverie.memory_apply`` on a fresh home, in this process."""

    def __init__(self, name: str, home: Path, *, durable: bool) -> None:
        self.name = name
        self.rv = Reverie(home, create=True, settings=Settings.load(home, durable=durable))
        self.rv.create_agent(AGENT)

    def setup(self, files: dict[str, str]) -> None:
        ops: list[dict[str, Any]] = [{"action": "set_body", "text": files["MEMORY.md"]}]
        ops += [
            {"action": "write_topic", "topic": p, "content": t}
            for p, t in files.items()
            if p != "MEMORY.md"
        ]
        self.rv.memory_apply(AGENT, {"operations": ops, "message": "bench setup"})

    def write(self, request: dict[str, Any]) -> int:
        t0 = time.perf_counter_ns()
        outcome = self.rv.memory_apply(AGENT, request)
        elapsed = time.perf_counter_ns() - t0
        if not outcome.changed:
            raise RuntimeError(f"{self.name}: a bench write changed nothing: {request}")
        return elapsed

    def index(self) -> str:
        """``MEMORY.md`` as Reverie holds it now."""
        return self.rv.memory_read(AGENT).text

    def revision(self) -> int:
        """The memory's current revision."""
        return self.rv.memory_history(AGENT, limit=1)[0].revision

    def files(self) -> dict[str, str]:
        """The committed files at the branch tip (git is the truth, not the working tree)."""
        repo = self.repo()
        head = repo.head()
        return repo.files(head) if head else {}

    def tree_matches_head(self) -> bool:
        """Whether the working tree people look at holds exactly the committed files."""
        repo = self.repo()
        tree = {"MEMORY.md", *(f"memory/{p.name}" for p in (repo.path / "memory").glob("*"))}
        committed = self.files()
        return tree == set(committed) and all(
            (repo.path / p).read_text(encoding="utf-8") == t for p, t in committed.items()
        )

    def repo(self) -> GitRepo:
        """The memory's repository (through the store, as Reverie itself opens it)."""
        return self.rv.memories.repo(self.rv.state.memory_of(self.rv.agent(AGENT).id))

    def close(self) -> None:
        self.rv.close()


class GitCliArm(Arm):
    """The naive implementation: same text, then ``git add`` + ``git commit -q``."""

    def __init__(self, name: str, path: Path, *, fsync: bool) -> None:
        self.name = name
        self.path = path
        self.git = ["git", *(["-c", "core.fsync=all"] if fsync else [])]
        # Isolate from the host's git configuration (hooks, signing) so the run is repeatable.
        self.env = {
            **os.environ,
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@localhost",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@localhost",
        }
        path.mkdir(parents=True)
        self._git("init", "-q", "-b", "main")

    def _git(self, *args: str) -> None:
        subprocess.run([*self.git, *args], cwd=self.path, env=self.env, check=True)

    def _read(self, path: str) -> str | None:
        try:
            return (self.path / path).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def _commit(self, changes: dict[str, str | None], message: str) -> None:
        for path, text in changes.items():
            target = self.path / path
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(exist_ok=True)
            target.write_text(text, encoding="utf-8")
        self._git("add", "-A", "--", *changes)
        self._git("commit", "-q", "-m", message)

    def setup(self, files: dict[str, str]) -> None:
        self._commit(dict(files), "bench setup")

    def write(self, request: dict[str, Any]) -> int:
        t0 = time.perf_counter_ns()
        # The same pure text transformation Reverie applies, so both arms write the same bytes.
        applied = apply_batch(parse_batch(request), self._read)
        if applied.files:
            self._commit(applied.files, request.get("message") or "memory write")
        elapsed = time.perf_counter_ns() - t0
        if not applied.files:
            raise RuntimeError(f"{self.name}: a bench write changed nothing: {request}")
        return elapsed

    def files(self) -> dict[str, str]:
        out = {"MEMORY.md": self._read("MEMORY.md") or ""}
        for p in sorted((self.path / "memory").glob("*.md")):
            out[f"memory/{p.name}"] = p.read_text(encoding="utf-8")
        return out


#: The Reverie arms: name -> ``Settings.durable``.
REVERIE_ARMS = {"reverie": False, "reverie durable": True}
#: The arm ``--baseline SRC`` adds: default settings, Reverie imported from another source tree.
BASELINE = "reverie baseline"


class WorkerArm(Arm):
    """A :class:`ReverieArm` in a process of its own, driven over a pipe, one call at a time.

    libgit2's fsync switch is process-wide and opening a durable home turns it on, so each
    Reverie arm runs alone in its process: the default arm is never made durable by a neighbour.
    The worker times each write itself, so the pipe is not in the figures.
    """

    def __init__(self, name: str, home: Path, src: Path | None = None) -> None:
        self.name = name
        env = dict(os.environ)
        if src is not None:  # that tree's ``reverie`` is found before the installed one
            env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", name, str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.source = str(self._ask("ping"))

    def _ask(self, op: str, **args: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name}: the worker process exited ({self.proc.wait()})")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"{self.name}: {reply['error']}")
        return reply["value"]

    def setup(self, files: dict[str, str]) -> None:
        self._ask("setup", files=files)

    def write(self, request: dict[str, Any]) -> int:
        return int(self._ask("write", request=request))

    def files(self) -> dict[str, str]:
        return dict(self._ask("files"))

    def index(self) -> str:
        """``MEMORY.md`` as the worker's Reverie holds it now."""
        return str(self._ask("index"))

    def tree_matches_head(self) -> bool:
        """See :meth:`ReverieArm.tree_matches_head`."""
        return bool(self._ask("tree_matches_head"))

    def revision(self) -> int:
        """The memory's current revision."""
        return int(self._ask("revision"))

    def close(self) -> None:
        self._ask("close")
        self.proc.wait(timeout=60)


def worker(name: str, home: Path) -> int:
    """Serve one Reverie arm: JSON requests on stdin, one JSON answer per line on stdout."""
    import reverie

    arm = ReverieArm(name, home, durable=REVERIE_ARMS.get(name, False))
    calls: dict[str, Callable[[dict[str, Any]], Any]] = {
        "ping": lambda m: str(Path(reverie.__file__).parent),
        "setup": lambda m: arm.setup(m["files"]),
        "write": lambda m: arm.write(m["request"]),
        "files": lambda m: arm.files(),
        "index": lambda m: arm.index(),
        "tree_matches_head": lambda m: arm.tree_matches_head(),
        "revision": lambda m: arm.revision(),
        "close": lambda m: arm.close(),
    }
    for line in sys.stdin:
        message = json.loads(line)
        try:
            reply = {"value": calls[message["op"]](message)}
        except Exception as exc:  # answered to the parent, which raises it
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)
        if message["op"] == "close":
            break
    return 0


def _starting_files(gen: TextGen) -> tuple[str, dict[str, str]]:
    """A realistic starting memory: an index of ~8 KiB and 20 topics of 100-200 entries."""
    index = _common.index_text(gen.entries(60))
    files = {"MEMORY.md": index}
    for i in range(TOPICS):
        slug = gen.topic_slug(i)
        title = slug.rsplit("-", 1)[0].replace("-", " ").capitalize()
        files[f"memory/{slug}.md"] = _common.topic_text(
            title, gen.entries(gen.rng.randint(100, 200)), gen.rng
        )
    return index, files


def _with_index(files: dict[str, str], arm: ReverieArm | WorkerArm) -> dict[str, str]:
    """``files`` with ``MEMORY.md`` as Reverie left it after setup (links to every topic)."""
    return {**files, "MEMORY.md": arm.index()}


def _requests(variant: str, n: int, gen: TextGen, files: dict[str, str]) -> list[dict[str, Any]]:
    """The ``n`` timed write requests of a variant, identical for every arm."""
    out: list[dict[str, Any]] = []
    topics = {p: t for p, t in files.items() if p != "MEMORY.md"}
    paths = sorted(topics)
    for i in range(n):
        if variant == "add":
            op = {"action": "add", "text": gen.entry(), "section": gen.rng.choice(SECTIONS)}
        else:
            path = paths[i % len(paths)]
            topics[path] = topics[path] + f"- {gen.entry()}\n"
            op = {"action": "write_topic", "topic": path, "content": topics[path]}
        out.append({"operations": [op], "message": f"bench {variant} {i}"})
    return out


def run_variant(
    variant: str,
    n: int,
    warmup: int,
    reset_every: int,
    seed: int,
    root: Path,
    baseline: Path | None = None,
) -> dict[str, Any]:
    """Time ``n`` writes of one variant on every arm, interleaved; returns the raw results."""
    gen = TextGen(seed)
    base_index, files = _starting_files(gen)
    workdir = root / variant
    workers = [WorkerArm(name, workdir / name.replace(" ", "-")) for name in REVERIE_ARMS]
    if baseline is not None:
        workers.append(WorkerArm(BASELINE, workdir / "baseline", baseline))
        progress(f"  {BASELINE}: reverie from {workers[-1].source}")
    reverie = workers[0]
    git_cli = GitCliArm("git CLI", workdir / "git", fsync=False)
    arms: list[Arm] = [
        *workers,
        git_cli,
        GitCliArm("git CLI fsync", workdir / "git-fsync", fsync=True),
    ]
    for worker_arm in workers:
        worker_arm.setup(files)
    # The git arms start from the index Reverie made (with its topic links), byte for byte.
    start = _with_index(files, reverie)
    base_index = start["MEMORY.md"]
    for cli_arm in arms[len(workers) :]:
        cli_arm.setup(start)

    requests = _requests(variant, warmup + n, gen, start)
    reset = {"operations": [{"action": "set_body", "text": base_index}], "message": "reset"}
    samples: dict[str, list[int]] = {arm.name: [] for arm in arms}
    order = list(range(len(arms)))
    rng = random.Random(seed + 1)
    for i, request in enumerate(requests):
        if variant == "add" and i and i % reset_every == 0:
            for each in arms:
                each.write(reset)
        rng.shuffle(order)
        for k in order:
            elapsed = arms[k].write(request)
            if i >= warmup:
                samples[arms[k].name].append(elapsed)
        if (i + 1) % 100 == 0:
            progress(f"  {variant}: {i + 1}/{len(requests)} writes on {len(arms)} arms")

    same = all(w.files() == git_cli.files() for w in workers if not REVERIE_ARMS.get(w.name))
    trees = all(w.tree_matches_head() for w in workers)
    revision = reverie.revision()
    for each in arms:
        each.close()
    return {
        "samples": samples,
        "identical_files": same,
        "working_trees_match": trees,
        "final_revision": revision,
    }


def profile_writes(n: int, seed: int, root: Path) -> str:
    """Where the time of ``n`` default ``add`` writes goes (cProfile, top functions)."""
    gen = TextGen(seed)
    _, files = _starting_files(gen)
    arm = ReverieArm("reverie", root / "profile", durable=False)
    arm.setup(files)
    requests = _requests("add", n, gen, files)
    prof = cProfile.Profile()
    prof.enable()
    for request in requests:
        arm.write(request)
    prof.disable()
    arm.close()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(25)
    text = out.getvalue().replace(f"{_common.ROOT}/", "")
    return re.sub(r"\S*/site-packages/", "", text).strip("\n")


def soak(n: int, reset_every: int, seed: int, root: Path) -> dict[str, Any]:
    """``n`` default ``add`` writes on one memory: does latency drift as history grows?

    Returns p50/p95/max per tenth of the run and the size of ``.git`` at the end: its files,
    and what they take on disk (a loose object takes a whole file system block). Reverie packs
    the loose objects every ``Settings.pack_every`` revisions (500); ``git count-objects``
    tells how many are loose at the end.
    """
    gen = TextGen(seed)
    _, files = _starting_files(gen)
    arm = ReverieArm("reverie", root / "soak", durable=False)
    arm.setup(files)
    start = _with_index(files, arm)
    reset = {"operations": [{"action": "set_body", "text": start["MEMORY.md"]}]}
    samples: list[int] = []
    for i, request in enumerate(_requests("add", n, gen, start)):
        if i and i % reset_every == 0:
            arm.write(reset)
        samples.append(arm.write(request))
        if (i + 1) % 1000 == 0:
            progress(f"  soak: {i + 1}/{n} writes")
    block = max(1, n // 10)
    blocks = []
    for k in range(0, n, block):
        s = Stats.of_ns(samples[k : k + block])
        part = samples[k : k + block]
        blocks.append(
            {"first": k, "last": k + len(part) - 1, "p50": s.p50, "p95": s.p95, "max": s.max}
        )
    gitdir = arm.repo().path / ".git"
    objects = subprocess.run(
        ["git", "count-objects", "-v"],
        cwd=gitdir.parent,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    counts = dict(line.split(": ", 1) for line in objects.splitlines() if ": " in line)
    files = [f.stat() for f in gitdir.rglob("*") if f.is_file()]
    revision = arm.rv.memory_history(AGENT, limit=1)[0].revision
    arm.close()
    return {
        "writes": n,
        "blocks": blocks,
        "final_revision": revision,
        "loose_objects": int(counts.get("count", 0)),
        "packs": int(counts.get("packs", 0)),
        "git_dir_mib": sum(f.st_size for f in files) / 2**20,
        "git_dir_disk_mib": sum(f.st_blocks * 512 for f in files) / 2**20,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the report; returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--writes", type=int, help="timed writes per variant and arm (500; quick 40)")
    p.add_argument("--warmup", type=int, default=10, help="untimed writes first (10)")
    p.add_argument("--reset-every", type=int, default=100, help="reset MEMORY.md every N adds")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="a small, fast run")
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    p.add_argument("--dir", type=Path, help="where to create the scratch data (system temp)")
    p.add_argument("--keep", action="store_true", help="keep the scratch data")
    p.add_argument("--profile", action="store_true", help="also profile 200 reverie writes")
    p.add_argument("--soak", type=int, default=0, help="also N writes on one memory (drift)")
    p.add_argument(
        "--baseline",
        type=Path,
        help="also an arm importing reverie from this source tree (e.g. an older commit's src)",
    )
    p.add_argument("--worker", nargs=2, metavar=("ARM", "HOME"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args.worker[0], Path(args.worker[1]))
    n = args.writes or (40 if args.quick else 500)
    if shutil.which("git") is None:
        print("SKIP: the git command line is absent; the baseline cannot run.")
        return 0
    root = Path(tempfile.mkdtemp(prefix="reverie-write-bench-", dir=args.dir))
    info = _common.machine(root)
    results: dict[str, dict[str, Any]] = {}
    profile = ""
    soaked: dict[str, Any] | None = None
    try:
        for variant in ("add", "topic"):
            progress(f"{variant}: {n} timed writes per arm after {args.warmup} warm-up")
            results[variant] = run_variant(
                variant, n, args.warmup, args.reset_every, args.seed, root, args.baseline
            )
        if args.profile:
            profile = profile_writes(200, args.seed, root)
        if args.soak:
            progress(f"soak: {args.soak} writes on one memory")
            soaked = soak(args.soak, args.reset_every, args.seed, root)
    finally:
        if args.keep:
            progress(f"scratch data kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    stats = {
        v: {arm: Stats.of_ns(s) for arm, s in r["samples"].items()} for v, r in results.items()
    }
    command = "python bench/write_bench.py " + " ".join(sys.argv[1:] if argv is None else argv)
    payload = {
        "benchmark": "write",
        "command": command.strip(),
        "machine": info,
        "params": {
            "writes": n,
            "warmup": args.warmup,
            "reset_every": args.reset_every,
            "seed": args.seed,
            "topics": TOPICS,
        },
        "results": {
            v: {
                "identical_files": results[v]["identical_files"],
                "working_trees_match": results[v]["working_trees_match"],
                "final_revision": results[v]["final_revision"],
                "arms": {arm: s.to_dict() for arm, s in stats[v].items()},
            }
            for v in results
        },
        "ratios": _ratios(stats),
        "soak": soaked,
    }
    _common.emit(args.json, payload, _markdown(payload, stats, profile))
    return 0


_RATIOS: tuple[tuple[str, str, str], ...] = (
    ("reverie / git CLI", "reverie", "git CLI"),
    ("reverie durable / git CLI fsync", "reverie durable", "git CLI fsync"),
    ("reverie durable / reverie", "reverie durable", "reverie"),
    ("git CLI fsync / git CLI", "git CLI fsync", "git CLI"),
)


def _ratio_pairs(stats: dict[str, dict[str, Stats]]) -> tuple[tuple[str, str, str], ...]:
    baseline = any(BASELINE in s for s in stats.values())
    return _RATIOS + ((f"reverie / {BASELINE}", "reverie", BASELINE),) * baseline


def _ratios(stats: dict[str, dict[str, Stats]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for label, a, b in _ratio_pairs(stats):
        for v, s in stats.items():
            out.setdefault(label, {})[f"{v} p50"] = s[a].p50 / s[b].p50
            out[label][f"{v} p95"] = s[a].p95 / s[b].p95
    return out


def _markdown(payload: dict[str, Any], stats: dict[str, dict[str, Stats]], profile: str) -> str:
    parts = ["## Write latency", "", _common.machine_markdown(payload["machine"]), ""]
    params = ", ".join(f"{k} {v}" for k, v in payload["params"].items())
    parts.append(f"Command: `{payload['command']}` ({params}).")
    ratio_rows = []
    for label, a, b in _ratio_pairs(stats):
        row = [label]
        for s in stats.values():
            row += [fmt_ratio(s[a].p50, s[b].p50), fmt_ratio(s[a].p95, s[b].p95)]
        ratio_rows.append(row)
    heads = ["ratio (below 1: first is faster)"]
    for v in stats:
        heads += [f"{v} p50", f"{v} p95"]
    parts += ["", "### Ratios", "", markdown_table(heads, ratio_rows)]
    for v, by_arm in stats.items():
        res = payload["results"][v]
        base = by_arm["git CLI"]
        rows = [
            [
                arm,
                s.n,
                ms(s.p50),
                ms(s.p95),
                ms(s.p99),
                ms(s.mean),
                f"{s.per_second:.0f}",
                fmt_ratio(s.p50, base.p50),
            ]
            for arm, s in by_arm.items()
        ]
        parts += [
            "",
            f"### `{v}` (times in ms)",
            "",
            markdown_table(
                ["arm", "n", "p50", "p95", "p99", "mean", "writes/s", "p50 / git CLI"], rows
            ),
            "",
            f"Same files in `reverie` (and the baseline) and `git CLI` at the end: "
            f"{res['identical_files']}; "
            f"Reverie working trees match their commits: {res['working_trees_match']}; "
            f"final revision {res['final_revision']}.",
        ]
    p50 = stats["add"]["reverie"].p50
    verdict = "met" if p50 < 5 else "NOT met"
    parts += ["", f"Target write p50 < 5 ms (`add`, default settings): {verdict} ({ms(p50)} ms)."]
    soaked = payload["soak"]
    if soaked:
        rows = [
            [f"{b['first'] + 1}-{b['last'] + 1}", ms(b["p50"]), ms(b["p95"]), ms(b["max"])]
            for b in soaked["blocks"]
        ]
        parts += [
            "",
            f"### Soak: {soaked['writes']:,} `add` writes on one memory (times in ms)",
            "",
            markdown_table(["writes", "p50", "p95", "max"], rows),
            "",
            f"At revision {soaked['final_revision']:,}: {soaked['loose_objects']:,} loose "
            f"objects and {soaked['packs']} packs; `.git` holds {soaked['git_dir_mib']:.1f} MiB "
            f"of files, {soaked['git_dir_disk_mib']:.1f} MiB on disk.",
        ]
    if profile:
        parts += ["", "### Profile of 200 `add` writes (cumulative)", "", "```", profile, "```"]
    return "\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
