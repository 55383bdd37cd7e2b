"""Helpers shared by the benchmarks: the machine, timing statistics, tables, seeded text.

Nothing here is timed. The benchmarks run by hand (``make bench`` or ``python bench/...``),
never inside the tests. Importing this module also makes ``src/`` importable when the package
is not installed, so ``python bench/write_bench.py`` works from a plain checkout.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import platform
import random
import re
import shutil
import sqlite3
import subprocess
import sys
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

try:  # an installed package wins; otherwise use this checkout's sources
    import reverie  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "src"))

__all__ = [
    "ROOT",
    "Stats",
    "TextGen",
    "emit",
    "fmt_ratio",
    "index_text",
    "locomo_path",
    "machine",
    "machine_markdown",
    "markdown_table",
    "ms",
    "percentile",
    "pg_scratch_database",
    "pg_version",
    "progress",
    "topic_text",
    "words",
]


# the data


def locomo_path(explicit: Path | None = None) -> Path:
    """Where LoCoMo (``locomo10.json``, CC BY-NC 4.0, read at run time and never copied) is:
    ``explicit`` (a ``--locomo`` option), else ``$REVERIE_LOCOMO``, else the first of
    ``shared/bench/locomo10.json`` beside the repository or beside the checkout it was cloned
    from (a clean clone made elsewhere, as CI makes one, still finds the data next to its
    origin). The one rule for the benchmarks and the tests (``tests/importers/test_locomo.py``);
    when none exists, the first candidate is returned, for the error message."""
    if explicit is not None:
        return explicit
    if os.environ.get("REVERIE_LOCOMO"):
        return Path(os.environ["REVERIE_LOCOMO"])
    candidates = [ROOT.parent / "shared/bench/locomo10.json"]
    origin = _origin_checkout()
    if origin is not None:
        candidates.append(origin.parent / "shared/bench/locomo10.json")
    return next((c for c in candidates if c.is_file()), candidates[0])


def _origin_checkout() -> Path | None:
    """The local directory this repository was cloned from, if its origin is one."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "remote", "get-url", "origin"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    url = out.stdout.strip().removeprefix("file://")
    if out.returncode != 0 or not url or "://" in url or ":" in url.split("/")[0]:
        return None  # a network remote, or none
    path = Path(url)
    return path if path.is_dir() else None


# PostgreSQL


#: The machine's PostgreSQL server (trust authentication), as the tests use it.
PG_SERVER = os.environ.get("REVERIE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")


def _pg_admin(sql: str) -> None:
    """Run one statement on the server's ``postgres`` database, outside a transaction."""
    import psycopg  # the postgres extra; imported late so the SQLite benches need none of it

    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(sql)


@contextlib.contextmanager
def pg_scratch_database(name: str) -> Any:
    """A fresh database ``name`` on :data:`PG_SERVER`, yielding its URL; dropped afterwards
    (its connections ended first), whatever happened in between."""
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise ValueError(f"not a plain database name: {name!r}")
    _pg_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    _pg_admin(f"CREATE DATABASE {name}")
    try:
        yield f"{PG_SERVER}/{name}"
    finally:
        _pg_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def pg_version() -> str:
    """The server's version line (``PostgreSQL 15.20 ...``), or why it is unknown."""
    import psycopg

    try:
        with psycopg.connect(f"{PG_SERVER}/postgres") as conn:
            row = conn.execute("SHOW server_version").fetchone()
    except psycopg.Error as exc:
        return f"unreachable ({str(exc).strip().splitlines()[0]})"
    return f"PostgreSQL {row[0]}" if row else "unknown"


# the machine


def _run(cmd: Sequence[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "absent"
    return (out.stdout or out.stderr).strip().split("\n")[0] or "absent"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _filesystem(path: Path) -> str:
    """The file system holding ``path`` (from /proc/mounts), e.g. ``ext4`` or ``tmpfs``.

    For ext4 it says whether the file system has a journal (``/proc/fs/jbd2`` lists the
    journaled ones): without one, Linux's inode allocator skips every inode freed in the last
    minutes (``recently_deleted`` in ``fs/ext4/ialloc.c``), so creating files there grows
    slower while a program creates and deletes many, as a write does.
    """
    best, kind, device = "", "unknown", ""
    try:
        target = str(path.resolve())
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) < 3 or len(parts[1]) <= len(best):
                continue
            if target == parts[1] or target.startswith(parts[1].rstrip("/") + "/"):
                best, kind, device = parts[1], parts[2], parts[0]
    except OSError:
        pass
    if kind == "ext4":
        journaled = any(Path("/proc/fs/jbd2").glob(f"{Path(device).name}-*"))
        kind += ", journaled" if journaled else ", no journal"
    return kind


def machine(data_dir: Path | None = None) -> dict[str, str]:
    """What the numbers were measured on: CPU, cores, versions, the data directory's disk."""
    from importlib.metadata import version

    import pygit2  # the package's own dependency; imported late so --help stays fast

    cores = os.cpu_count() or 0
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = cores
    info = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": f"{cores} ({usable} usable)",
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "libgit2": f"{pygit2.LIBGIT2_VERSION} (pygit2 {version('pygit2')})",
        "git": _run(["git", "--version"]),
        "ripgrep": _run(["rg", "--version"]) if shutil.which("rg") else "absent",
    }
    if data_dir is not None:
        info["data dir"] = f"{data_dir} ({_filesystem(data_dir)})"
    with contextlib.suppress(OSError):
        info["load avg"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return info


def machine_markdown(info: dict[str, str]) -> str:
    """The machine as a two-column Markdown table."""
    return markdown_table(["machine", ""], [[k, v] for k, v in info.items()])


# statistics


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation between ranks (numpy's default).

    Raises:
        ValueError: ``values`` is empty.
    """
    if not values:
        raise ValueError("percentile of no values")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass(frozen=True)
class Stats:
    """Latency statistics of one series of timed calls, in milliseconds."""

    n: int
    p50: float
    p95: float
    p99: float
    mean: float
    max: float

    @classmethod
    def of_ns(cls, samples_ns: Sequence[int]) -> Stats:
        """Statistics of samples taken with ``time.perf_counter_ns``."""
        ms = [s / 1e6 for s in samples_ns]
        return cls(
            n=len(ms),
            p50=percentile(ms, 50),
            p95=percentile(ms, 95),
            p99=percentile(ms, 99),
            mean=sum(ms) / len(ms),
            max=max(ms),
        )

    @property
    def per_second(self) -> float:
        """Calls per second, one after the other (1 / mean latency)."""
        return 1000.0 / self.mean if self.mean else float("inf")

    def to_dict(self) -> dict[str, float]:
        """The statistics and the rate, for ``--json``."""
        return {**asdict(self), "per_second": self.per_second}


def fmt_ratio(ours: float, theirs: float) -> str:
    """``ours / theirs`` as ``0.42x``; below 1 means ours is faster (or smaller)."""
    if theirs <= 0:
        return "n/a"
    r = ours / theirs
    return f"{r:.3f}x" if r < 0.1 else f"{r:.2f}x"


def ms(value: float) -> str:
    """A latency in milliseconds with sensible precision."""
    return f"{value:.3f}" if value < 1 else f"{value:.2f}" if value < 100 else f"{value:.0f}"


# output


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub Markdown table; numeric columns are right-aligned."""
    body = [[str(c) for c in row] for row in rows]

    def numeric(i: int) -> bool:
        cells = [r[i] for r in body if i < len(r) and r[i] not in {"", "n/a", "-"}]
        return bool(cells) and all(re.fullmatch(r"[-+]?[\d.,]+ ?[x%]?", c) for c in cells)

    align = ["---:" if numeric(i) else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def progress(message: str) -> None:
    """A progress line on stderr (stdout is kept for the report)."""
    print(message, file=sys.stderr, flush=True)


def emit(as_json: bool, payload: dict[str, Any], markdown: str) -> None:
    """Print the report: JSON (``--json``) or Markdown."""
    if as_json:
        print(json.dumps(payload, indent=2, sort_keys=False))
    else:
        print(markdown)


# seeded text that reads like a chat agent's memory


def words(text: str) -> tuple[str, ...]:
    """The whitespace-separated words of ``text``: a compact way to write a vocabulary."""
    return tuple(text.split())


PEOPLE = words(
    "Alice Bruno Chen Dana Emeka Farah Goran Hana Ines Jonas Kiri Lena Mateo Nadia Omar Priya "
    "Quinn Rosa Sven Tariq Uma Viktor Wen Yusuf Zoe Aiko Bilal Carmen Dmitri Elif Femi Greta "
    "Hiro Ivana Jamal Kaito Lucia Malik Noor Olga Pavel Rania Sasha Tomas Vera Wanjiru Ximena"
)
SYSTEMS = words(
    "postgres redis kafka nginx terraform kubernetes grafana sentry airflow snowflake stripe "
    "okta vault github jenkins docker celery elasticsearch s3 cloudflare datadog pagerduty "
    "bigquery dbt helm argocd fastapi django react webpack pytest slack jira notion figma "
    "linear twilio sendgrid auth0 clickhouse rabbitmq memcached prometheus loki vercel"
)
PROJECTS = words(
    "atlas beacon cobalt drift ember falcon garnet harbor iris juniper kestrel lumen meridian "
    "nimbus onyx pylon quartz relay sable tundra umber vortex willow zephyr"
)
NOUNS = words(
    "deploy migration backup invoice schema dashboard alert runbook release rollout cache queue "
    "index budget roadmap contract onboarding standup retro incident timeout latency quota "
    "certificate webhook pipeline report survey ticket sprint review login password-reset "
    "export import billing refund pricing trial signup newsletter audit permission role token "
    "replica failover snapshot cron job worker build test flake benchmark outage postmortem "
    "sla escalation handoff demo launch feature flag experiment metric funnel churn cohort "
    "translation locale timezone calendar meeting agenda offsite hiring interview laptop vpn"
)
QUALIFIERS = words(
    "weekly nightly staging production legacy new regional shared internal customer-facing "
    "blue-green canary read-only monthly quarterly urgent optional default manual automated "
    "encrypted archived temporary primary secondary"
)
VERBS = words(
    "migrate pin rotate pause split merge drop rename rewrite document freeze retire upgrade "
    "downgrade cache shard batch retry throttle monitor review approve schedule postpone"
)
CHANNELS = words("#ops #eng #support #sales #design #data #general DMs email standups")
REGIONS = words("eu-west us-east ap-south sa-east eu-central us-west")
UNITS = words("ms seconds MB GB requests/s rows users EUR USD")
MONTHS = words("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec")
SYLLABLES = words("ka lo mi ren tor va shi en dal po ru xi bel mar ton fi qua zen lu ros")

_TEMPLATES = (
    "{person} prefers {qual} {noun} summaries in {channel}, not long threads",
    "Decided to {verb} the {system} {noun} for {project} after the {date} {noun2}",
    "{system} {noun} on {project} times out above {num} {unit}; {verb} it in batches instead",
    "{project} is in {qual} {noun}; {person} owns it until {date}",
    "Customer {rare} ({region}) needs the {noun} by {date}; ask {person} before promising",
    "{person} and {person2} disagree on the {noun2} for {project}: {person} wants {system}",
    "Gotcha: {system} drops {qual} {noun} events when the {noun2} queue is full",
    "{person} is on leave {date} to {date2}; {person2} covers {project} {noun}",
    "Use `{cmd}` to {verb} the {qual} {noun} on {project} ({region})",
    "The {noun} for {project} moved from {system} to {system2} on {date}",
    "{person} asked to keep {noun} notes short and to link the {system} ticket {ticket}",
    "Budget for {project} {noun} is {num} {unit} per month; {person} approves anything above",
    "{project} {noun2} failed twice in {region}: {system} {noun} limit was {num} {unit}",
    "Team agreed to {verb} {qual} {noun} reviews on {weekday}s; {person} runs them",
)
_WEEKDAYS = words("Monday Tuesday Wednesday Thursday Friday")
_STOP = frozenset(
    words(
        "a an the and or to of in on for by with not is it its be from as at when than into after "
        "before instead until per above anything ask asked wants runs them use needs keep"
    )
)


def _zipf(n: int, s: float = 1.07) -> list[float]:
    """Cumulative Zipf weights for ``n`` ranked choices (a few words common, a long tail)."""
    return list(accumulate(1.0 / (k + 1) ** s for k in range(n)))


class TextGen:
    """A seeded generator of memory entries and search queries.

    Words are drawn with Zipf weights from a fixed vocabulary (people, systems, projects,
    nouns) plus an open-ended tail of made-up customer names, so that a bigger memory has a
    bigger vocabulary, as real ones do. The same seed gives the same stream: the first 1,000
    entries of a 100k-entry memory are the entries of the 1k-entry one.
    """

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self._cum = {
            name: (words, _zipf(len(words)))
            for name, words in {
                "person": PEOPLE,
                "system": SYSTEMS,
                "project": PROJECTS,
                "noun": NOUNS,
                "qual": QUALIFIERS,
                "verb": VERBS,
            }.items()
        }
        self._rare: list[str] = []
        self.count = 0

    def pick(self, kind: str) -> str:
        """One word of a vocabulary class, Zipf-weighted."""
        words, cum = self._cum[kind]
        i = bisect_left(cum, self.rng.random() * cum[-1])
        return words[min(i, len(words) - 1)]

    def _rare_name(self) -> str:
        # A new made-up name now and then, otherwise one seen before: a growing long tail.
        if not self._rare or self.rng.random() < 0.25:
            k = self.rng.randint(2, 3)
            name = "".join(self.rng.choice(SYLLABLES) for _ in range(k)).capitalize()
            self._rare.append(name)
            return name
        return self.rng.choice(self._rare)

    def _date(self) -> str:
        return f"{self.rng.randint(1, 28)} {self.rng.choice(MONTHS)} {self.rng.randint(2023, 2026)}"

    def entry(self) -> str:
        """One entry's text (without the list bullet), sometimes with a review source range."""
        r = self.rng
        template = r.choice(_TEMPLATES)
        text = template.format(
            person=self.pick("person"),
            person2=self.pick("person"),
            system=self.pick("system"),
            system2=self.pick("system"),
            project=self.pick("project"),
            noun=self.pick("noun"),
            noun2=self.pick("noun"),
            qual=self.pick("qual"),
            verb=self.pick("verb"),
            channel=r.choice(CHANNELS),
            region=r.choice(REGIONS),
            unit=r.choice(UNITS),
            num=r.choice([5, 10, 30, 50, 100, 250, 500, 1000, 2000, 5000]),
            date=self._date(),
            date2=self._date(),
            rare=self._rare_name(),
            ticket=f"{self.pick('project')[:3].upper()}-{r.randint(10, 9999)}",
            weekday=r.choice(_WEEKDAYS),
            cmd=f"make {self.pick('verb')}-{self.pick('noun')}",
        )
        self.count += 1
        if r.random() < 0.4:
            start = r.randint(0, 80)
            text += f" (source: conv-{r.randint(1, 900)}#{start}-{start + r.randint(1, 6)})"
        return text

    def entries(self, n: int) -> list[str]:
        """The next ``n`` entries."""
        return [self.entry() for _ in range(n)]

    def topic_slug(self, i: int) -> str:
        """A readable, unique topic slug."""
        return f"{self.pick('project')}-{self.pick('noun')}-{i}"

    def query(self, known: Sequence[str]) -> str:
        """A 2-5 word query: either words of a known entry, or a topical mix of vocabulary."""
        r = self.rng
        k = r.randint(2, 5)
        if known and r.random() < 0.6:
            words = [
                w
                for w in re.findall(r"[A-Za-z][A-Za-z0-9-]+", r.choice(known))
                if w.lower() not in _STOP and w != "source" and not w.startswith("conv")
            ]
            if len(words) >= 2:
                picked = r.sample(words, min(k, len(words)))
                return " ".join(w.lower() if r.random() < 0.7 else w for w in picked)
        kinds = r.sample(["person", "system", "project", "noun", "noun", "qual", "verb"], k)
        return " ".join(self.pick(kind) for kind in kinds)

    def queries(self, n: int, known: Sequence[str]) -> list[str]:
        """``n`` seeded queries, about 60% drawn from ``known`` entries."""
        return [self.query(known) for _ in range(n)]


def topic_text(title: str, entries: Sequence[str], rng: random.Random) -> str:
    """A topic file: a heading, a short intro, the entries as list items (some with detail)."""
    lines = [f"# {title}", "", f"Notes on {title.lower()}, kept by review.", ""]
    for text in entries:
        lines.append(f"- {text}")
        if rng.random() < 0.1:
            lines.append(f"  Detail: checked again on {rng.randint(1, 28)} {rng.choice(MONTHS)}.")
    return "\n".join(lines) + "\n"


def index_text(entries: Sequence[str]) -> str:
    """A ``MEMORY.md`` body: the title and four standard sections sharing ``entries``."""
    sections = ("People & preferences", "Decisions", "Environment & gotchas", "Project state")
    lines = ["# Memory", ""]
    for k, name in enumerate(sections):
        lines += [f"## {name}", ""]
        lines += [f"- {e}" for e in entries[k :: len(sections)]]
        lines.append("")
    return "\n".join(lines)
