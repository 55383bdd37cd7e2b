"""``reverie doctor [AGENT]``: check a home, repair what can be rebuilt from the truth, and say
what was done and what is left (SPEC 15).

What it checks, and how it repairs:

* **the state database**: every table's pages (``PRAGMA quick_check``), that every row of the
  tables that hold the truth can be read, and the FTS5 indexes; a damaged search index is
  rebuilt from the memory files and the messages, pages left unused by an earlier repair are
  given back (``VACUUM``). Damage to any other table (``state_database_damaged``) cannot be
  mended: doctor names it, says what to do, and stops there, writing nothing more to
  ``reverie.db`` and checking no memory (every check of a memory reads or writes it). When
  ``reverie.db`` cannot even be opened, or is missing while memory repositories remain
  (``state_database_missing``), :func:`examine_unopened` says so without opening the home;
* **each memory** (one agent's, or every one): a marker left by an interrupted write (the write
  is rolled forward, or undone when it was refused), lock and temporary files a killed writer
  left, every object of every recorded revision and every loose object file, the branch
  against the last recorded revision, the working tree against the newest revision
  (``working_tree_differs``: rewritten from it, a hand-edited file's content kept aside first),
  and the index rows against the files (on PostgreSQL, also the search postings against the
  index rows);
* **the home's memory repositories** (a check of the whole home): a repository under
  ``memories/`` that no agent in the database owns (``memory_repository_unowned``), with what
  it holds; nothing is changed, since it is the only copy of that memory.

A damaged object is written again when its content can be had from the working tree (the
files of the newest revision are checked out after each write): a blob from a file, a tree
from the files, the newest commit from its tree, its parent and the message and writer the
state database recorded (the time is found by trying the second it was recorded in and the
few before). What cannot be rebuilt is reported with the last revision whose objects are all
intact; ``rewind=True`` restores the memory to that revision and forgets the later ones.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import time
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .core.paths import INDEX, TOPIC_DIR
from .errors import NotFound, ReverieError, StorageFault
from .index import fts, postings
from .store.faults import ENVIRONMENT, is_corruption, storage_fault
from .store.gitrepo import Damage, GitRepo, blob_id, object_id, tree_body
from .store.state import DB_NAME, RevisionRecord

if TYPE_CHECKING:
    from .api import Reverie

__all__ = ["DoctorReport", "Finding", "examine_unopened", "memory_repositories", "run"]

#: How far back from the recorded time a commit's own time may be (it is taken first).
_CLOCK_SLACK = 5


@dataclass(frozen=True)
class Finding:
    """One problem: where, which check, what is wrong, and what was done or is to be done."""

    where: str
    check: str
    problem: str
    repaired: str | None = None
    advice: str | None = None
    #: A stable name for the kind of problem, for scripts (``None`` where none is given yet).
    code: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The finding as ``reverie doctor --json`` prints it."""
        return dict(self.__dict__)


@dataclass
class DoctorReport:
    """What ``reverie doctor`` checked and found."""

    checked: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing is left to do: every finding was repaired."""
        return all(f.repaired is not None for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        """The report as ``reverie doctor --json`` prints it."""
        return {
            "ok": self.ok,
            "checked": self.checked,
            "findings": [f.to_dict() for f in self.findings],
        }


def run(rv: Reverie, agent: str | None = None, *, rewind: bool = False) -> DoctorReport:
    """Check the home (and one agent's memory, or all), repair what can be rebuilt; with no
    agent named, also list the memory repositories no agent owns. A damaged table that holds
    the truth stops the run after the database check.

    Raises:
        NotFound: no such agent.
    """
    report = DoctorReport()
    if not _check_database(rv, report):
        return report  # every further check reads or writes the damaged reverie.db
    agents = [rv.agent(agent)] if agent else rv.agents()
    for a in agents:
        memory_id = rv.state.memory_of(a.id)
        report.checked.append(f"memory of {a.name}")
        try:
            _check_memory(rv, a.name, memory_id, rewind, report)
        except (ReverieError, sqlite3.DatabaseError) as exc:
            if _is_damage(exc):  # rows the database check could read, and a write could not
                report.findings.append(
                    _damaged_database(rv.home, [f"reading the memory of {a.name}: {exc}"])
                )
                return report
            if not isinstance(exc, ReverieError):
                raise
            advice = _STORAGE_ADVICE if exc.code in ENVIRONMENT else _ADVICE
            report.findings.append(
                Finding(f"memory of {a.name}", "memory", exc.message, advice=advice)
            )
    if agent is None and not rv.settings.database_url:
        owned = {str(r[0]) for r in rv.state.conn.execute("SELECT id FROM memories")}
        owned |= set(rv.state.deleted_memories())  # removed when the home next opens
        report.findings += [
            _unowned(path) for path in memory_repositories(rv.home) if path.name not in owned
        ]
    return report


def examine_unopened(home: Path, fault: ReverieError) -> DoctorReport | None:
    """What doctor can say about a home that did not open with ``fault``, without opening it:
    ``reverie.db`` damaged past opening (``state_database_damaged``), or missing while memory
    repositories remain (``state_database_missing``, each repository with what it holds).
    Nothing is written. ``None`` when the fault is not one of these (then it is the answer).
    """
    repos = memory_repositories(home)
    db = home / DB_NAME
    if isinstance(fault, NotFound):
        if fault.code != "home_not_found" or db.exists() or not repos:
            return None
        report = DoctorReport(checked=["state database", "memory repositories"])
        report.findings.append(
            Finding(
                "state database",
                "database",
                f"{db} is missing, and {len(repos)} memory repositor"
                f"{'y remains' if len(repos) == 1 else 'ies remain'} under {home / 'memories'}: "
                "the agents, members, conversations and tokens were recorded in reverie.db, "
                "the memories themselves are in these repositories, untouched",
                advice=f"Restore reverie.db from a backup into {home}, then run `reverie "
                "doctor`: each memory that backup recorded is rolled forward to the newest "
                "revision its repository holds. `reverie init` would start a new, empty "
                "reverie.db in which no agent owns these repositories (doctor lists them then, "
                "as here).",
                code="state_database_missing",
            )
        )
        report.findings += [_unowned(path) for path in repos]
        return report
    if fault.code in ENVIRONMENT or not db.exists():
        return None
    problems = _examine_file(db)
    if not problems and not _is_damage(fault):
        return None
    report = DoctorReport(checked=["state database"])
    report.findings.append(_damaged_database(home, problems or [fault.message]))
    return report


_ADVICE = "Restore the data directory from a backup, or ask for help with this report."
#: A commit, its tree, a topic folder's tree, their blobs: how deep damage can hide.
_MEND_ROUNDS = 4
#: Storage that takes no writes (read-only, full) damages nothing; doctor cannot repair there.
_STORAGE_ADVICE = (
    "Nothing is damaged by this: the storage takes no writes now (read-only or full), so doctor "
    "could not check or repair what needs a write. Make it writable or free space, then run "
    "reverie doctor again."
)


#: Where the advice about a damaged reverie.db begins; the rest names the home.
_DB_ADVICE = (
    "Doctor cannot mend this (it rebuilds only the search index, from the memory files and "
    "the messages); it wrote nothing to reverie.db and checked no memory. Stop every "
    "Reverie process of this home (serve, review), copy reverie.db and any reverie.db-wal and "
    "reverie.db-shm beside it aside, and restore reverie.db from a backup; then run `reverie "
    "doctor`, which rolls each memory forward to the newest revision its repository holds "
    "(what else was recorded after the backup, such as agents, members, conversations and "
    "tokens, is lost). Without a backup, keep the copy and ask for help with this report: "
    "doctor cannot make a working reverie.db from the rows that can still be read."
)


def _check_database(rv: Reverie, report: DoctorReport) -> bool:
    """The state database's tables; whether it is sound enough for the memories' checks (no
    table that holds the truth is damaged)."""
    report.checked.append("state database")
    where = "state database"
    try:
        damaged = rv.state.damaged_tables()
    except StorageFault as exc:  # the schema itself cannot be read
        if _is_damage(exc):
            report.findings.append(_damaged_database(rv.home, [exc.message]))
            return False
        report.findings.append(Finding(where, "tables", exc.message, advice=_ADVICE))
        return True
    from .api import _derived  # the facade's one list of derived tables (it imports doctor)

    truth = [t for t in damaged if _derived(t) is None]
    if truth:
        report.findings.append(
            _damaged_database(rv.home, [f"the pages of {', '.join(truth)} cannot be read"])
        )
        return False
    if not rv.settings.database_url:
        unreadable = _unreadable_rows(rv.state.conn)
        if unreadable:
            report.findings.append(_damaged_database(rv.home, unreadable))
            return False
    try:
        if damaged and rv._repair_index():
            report.findings.append(
                Finding(
                    where,
                    "index",
                    f"damaged search index tables: {', '.join(damaged)}",
                    repaired="rebuilt from the memory files and the messages",
                )
            )
    except StorageFault as exc:
        report.findings.append(Finding(where, "tables", exc.message, advice=_ADVICE))
        return True
    unused = rv.state.integrity_notes()
    if unused:
        problem = f"{len(unused)} integrity note(s), for example: {unused[0]}"
        if all("never used" in u for u in unused) and rv.state.vacuum():
            report.findings.append(
                Finding(where, "pages", problem, repaired="unused pages given back (VACUUM)")
            )
        else:
            report.findings.append(Finding(where, "pages", problem, advice=_ADVICE))
    return True


def _damaged_database(home: Path, problems: list[str]) -> Finding:
    """The finding for a reverie.db whose truth cannot be read: what, and what to do."""
    repos = len(memory_repositories(home))
    safe = (
        f" The memories are not in reverie.db: the {repos} repositor"
        f"{'y' if repos == 1 else 'ies'} under {home / 'memories'} hold their files and every "
        "revision, and doctor did not touch them."
        if repos
        else ""
    )
    return Finding(
        "state database",
        "tables",
        f"{home / DB_NAME} is damaged: " + "; ".join(problems),
        advice=_DB_ADVICE + safe,
        code="state_database_damaged",
    )


def _is_damage(exc: BaseException | None) -> bool:
    """Whether ``exc``, or an error it was raised from, says reverie.db is damaged: pages
    SQLite cannot read, a file that is no database, or text that is not UTF-8 (which no
    write stores: every text is checked on its way in)."""
    if is_corruption(exc):
        return True
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, sqlite3.DatabaseError):
            code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
            if code == sqlite3.SQLITE_NOTADB or "Could not decode to UTF-8" in str(exc):
                return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _truth_tables(conn: sqlite3.Connection) -> list[str]:
    """The tables that hold what git does not (every table but the search indexes')."""
    from .api import _derived

    names = [str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return [n for n in names if _derived(n) is None]


def _unreadable_rows(conn: sqlite3.Connection) -> list[str]:
    """The tables holding the truth with a row that cannot be read, and why: a page that
    ``quick_check`` finds sound can still hold a cell overwritten with bytes that are not
    text, which only reading the row shows."""
    found = []
    for name in _truth_tables(conn):
        try:
            cursor = conn.execute(f'SELECT * FROM "{name}"')
            while cursor.fetchmany(1000):
                pass
        except sqlite3.DatabaseError as exc:
            found.append(f"a row of {name} cannot be read ({exc})")
    return found


def _examine_file(db: Path) -> list[str]:
    """What is damaged in the SQLite file ``db``, read without writing (not even the WAL
    index: ``mode=ro``); empty when it reads as sound."""
    uri = "file:" + urllib.parse.quote(str(db)) + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=5)
    except sqlite3.Error as exc:
        return [f"it cannot be opened ({exc})"] if _is_damage(exc) else []
    with contextlib.closing(conn):
        try:
            tables = _truth_tables(conn)
        except sqlite3.DatabaseError as exc:
            return [f"its schema cannot be read ({exc})"] if _is_damage(exc) else []
        damaged = []
        for name in tables:
            try:
                if conn.execute(f'PRAGMA quick_check("{name}")').fetchall() != [("ok",)]:
                    damaged.append(name)
            except sqlite3.DatabaseError:
                damaged.append(name)
        if damaged:
            return [f"the pages of {', '.join(damaged)} cannot be read"]
        return _unreadable_rows(conn)


def _check_memory(
    rv: Reverie, agent: str, memory_id: str, rewind: bool, report: DoctorReport
) -> None:
    store = rv.memories
    where = f"memory of {agent}"
    if rv.settings.database_url:  # PostgreSQL keeps its own pages and files: the index only
        _check_index(rv, agent, memory_id, report)
        _check_postings(rv, agent, memory_id, report)
        return
    repo = store.repo(memory_id)
    with store.lock(memory_id):
        marked = store.marked(memory_id)
        leftovers = repo.remove_crash_leftovers()
        if leftovers:
            report.findings.append(
                Finding(
                    where,
                    "leftovers",
                    f"{len(leftovers)} lock or temporary file(s) of a killed writer",
                    repaired="removed: " + ", ".join(leftovers[:5]),
                )
            )
        revisions = sorted(rv.state.revisions(memory_id, limit=2**62), key=lambda r: r.revision)
        used = [r.oid for r in revisions]
        head = repo.head()
        if head is not None and head not in used:
            used.append(head)  # an interrupted write's commit, rolled forward by recovery
        # Damage is seen from the top: a damaged commit hides its tree, a damaged tree its
        # blobs. So the working tree's copies are written again in rounds, each mended object
        # showing what was under it; only then is what no revision uses set aside (before,
        # a damaged commit's tree and blob looked unused and went aside with the copies that
        # could have mended them).
        damaged: list[Damage] = []
        restored: set[str] = set()
        for _ in range(_MEND_ROUNDS):
            seen = {d.oid for d in damaged}
            found = [d for d in _damage(repo, used) if d.oid not in seen]
            if not found:
                break
            damaged += found
            mended = _restore_from_working_tree(rv, repo, memory_id, found)
            restored |= mended
            if not mended:
                break
        findings = _quarantine_unused(repo, used, where)
        still: set[str] = set()
        newest_bad, last = False, None
        if damaged:
            still = {d.oid for d in _damage(repo, used)}
            newest_bad, last = _rewind_target(repo, revisions, still)
            if not newest_bad:
                advice = (
                    "The newest revision is intact: only reads of older revisions that use "
                    f"this object fail. {_ADVICE}"
                )
            elif last is None:
                advice = f"No revision of this memory is intact. {_ADVICE}"
            else:
                advice = (
                    f"Revision {last} is the newest intact one; `reverie doctor {agent} "
                    f"--rewind` restores the memory to it and forgets the later ones."
                )
            for d in damaged:
                fixed = d.oid in restored and d.oid not in still
                findings.append(
                    Finding(
                        where,
                        "git objects",
                        f"{d.kind} {d.oid}: {d.problem}",
                        repaired="written again from the working tree" if fixed else None,
                        advice=None if fixed else advice,
                    )
                )
            if still and newest_bad and not (rewind and last is not None):
                report.findings += findings
                return  # nothing more can be checked until the objects are dealt with
    if still and newest_bad and last is not None:
        dropped = store.rewind(memory_id, last)
        findings.append(
            Finding(
                where,
                "rewind",
                f"revisions {dropped[0]} to {dropped[-1]} used damaged objects",
                repaired=f"restored to revision {last}; revisions {dropped[0]} to "
                f"{dropped[-1]} are forgotten",
            )
        )
        with store.lock(memory_id):
            kept = [r.oid for r in rv.state.revisions(memory_id, limit=2**62)]
            moved = {f.problem.split(": ", 1)[0] for f in _quarantine_unused(repo, kept, where)}
        findings = [
            Finding(
                f.where,
                f.check,
                f.problem,
                repaired="no longer used after the rewind, moved to .git/reverie-damaged",
            )
            if f.check == "git objects"
            and f.repaired is None
            and any(o in f.problem for o in moved)
            else f
            for f in findings
        ]
    report.findings += findings
    _check_branch(rv, agent, memory_id, marked, report)
    _check_working_tree(rv, agent, memory_id, report)
    _check_index(rv, agent, memory_id, report)


def _quarantine_unused(repo: GitRepo, used: list[str], where: str) -> list[Finding]:
    """Damaged loose objects that no recorded revision uses (what a killed or refused
    write left half-written) are moved aside: nothing is lost, and nothing reads them."""
    needed = {d.oid for oid in used for d in repo.damaged_objects(oid)}
    findings = []
    for d in repo.loose_damage():
        if d.oid not in needed and repo.quarantine(d.oid):
            findings.append(
                Finding(
                    where,
                    "git objects",
                    f"{d.oid}: {d.problem}",
                    repaired="used by no revision; moved to .git/reverie-damaged",
                )
            )
    return findings


def _rewind_target(
    repo: GitRepo, revisions: list[RevisionRecord], bad: set[str]
) -> tuple[bool, int | None]:
    """Whether the newest revision uses a damaged object, and if so the newest revision that
    uses none (what ``--rewind`` restores)."""

    def intact(rec: RevisionRecord) -> bool:
        return rec.oid not in bad and not repo.damaged_objects(rec.oid)

    if not revisions or intact(revisions[-1]):
        return False, None
    return True, next((r.revision for r in reversed(revisions) if intact(r)), None)


def _damage(repo: GitRepo, commits: list[str]) -> list[Damage]:
    """The damaged objects the commits use, each once."""
    seen: dict[str, Damage] = {}
    for oid in commits:
        for d in repo.damaged_objects(oid):
            seen.setdefault(d.oid, d)
    return list(seen.values())


def _restore_from_working_tree(
    rv: Reverie, repo: GitRepo, memory_id: str, damaged: list[Damage]
) -> set[str]:
    """Write damaged objects again where the working tree holds their content: blobs, the
    trees of the checked-out revision, and its commit. Returns the oids restored."""
    files = repo.working_files()
    blobs = {blob_id(data): data for data in files.values()}
    topics = {
        path.split("/", 1)[1]: ("100644", blob_id(data))
        for path, data in files.items()
        if path != INDEX
    }
    trees: dict[str, bytes] = {}
    root: dict[str, tuple[str, str]] = {}
    if INDEX in files:
        root[INDEX] = ("100644", blob_id(files[INDEX]))
    if topics:
        body = tree_body(topics)
        sub = object_id("tree", body)
        trees[sub] = body
        root[TOPIC_DIR] = ("40000", sub)
    root_body = tree_body(root)
    root_id = object_id("tree", root_body)
    trees[root_id] = root_body
    restored = set()
    for d in damaged:
        if (
            (d.oid in blobs and repo.restore(d.oid, "blob", blobs[d.oid]))
            or (d.oid in trees and repo.restore(d.oid, "tree", trees[d.oid]))
            or _restore_commit(rv, repo, memory_id, d.oid, root_id)
        ):
            restored.add(d.oid)
    return restored


def _restore_commit(rv: Reverie, repo: GitRepo, memory_id: str, oid: str, tree: str) -> bool:
    """Rebuild a recorded commit whose tree is the working tree's: the parent, message and
    writer are recorded, the time is the second it was recorded in or one just before."""
    rec = rv.state.revision_of_commit(memory_id, oid)
    if rec is None:
        return False
    parent = rv.state.revision(memory_id, rec.revision - 1).oid if rec.revision > 0 else None
    for t in range(int(rec.created_at), int(rec.created_at) - _CLOCK_SLACK - 1, -1):
        who = f"reverie-{rec.writer} <{rec.writer}@reverie.local> {t} +0000"
        head = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "")
        body = f"{head}author {who}\ncommitter {who}\n\n{rec.message}".encode()
        if repo.restore(oid, "commit", body):
            return True
    return False


def _check_branch(
    rv: Reverie,
    agent: str,
    memory_id: str,
    marked: tuple[bytes, str | None] | None,
    report: DoctorReport,
) -> None:
    """The branch against the last recorded revision; an interrupted write recovered."""
    store = rv.memories
    where = f"memory of {agent}"
    repo = store.repo(memory_id)
    latest = rv.state.latest(memory_id)
    head = repo.head()
    if latest is not None and head != latest.oid:
        ahead = False
        if head is not None:
            try:
                repo.commits_after(latest.oid, head)
                ahead = True
            except StorageFault:
                ahead = False
        if not ahead:
            with store.lock(memory_id):
                repo.set_branch(latest.oid)
            report.findings.append(
                Finding(
                    where,
                    "branch",
                    f"the branch was at {head or 'nothing'}, not at revision {latest.revision}",
                    repaired=f"moved back to revision {latest.revision} ({latest.oid})",
                )
            )
    on_open = rv.recovered.get(memory_id, "absent")
    if on_open is None:
        report.findings.append(
            Finding(
                where,
                "marker",
                "a write was interrupted",
                repaired="recovered when the home was opened, at revision "
                f"{rv.memories.current(memory_id).revision}",
            )
        )
    if marked is not None or (latest is not None and head != latest.oid):
        before = latest.revision if latest else None
        after = store.create(memory_id).revision  # recovery, under the lock
        what = "rolled forward" if before is not None and after > before else "undone"
        report.findings.append(
            Finding(
                where,
                "marker",
                "a write was interrupted",
                repaired=f"recovered: {what}, at revision {after}",
            )
        )


#: What a working tree's file can be, beside the newest revision's.
_EDITED, _EMPTIED, _DELETED, _ADDED = "edited", "emptied", "deleted", "added"


def _check_working_tree(rv: Reverie, agent: str, memory_id: str, report: DoctorReport) -> None:
    """The memory files of the working tree against the newest revision.

    The working tree is a copy for people to read (and the one doctor mends damaged objects
    from); Reverie reads and searches the revisions in git, and a review discards edits made
    there (R4). A file deleted, emptied or edited by hand is written again from the newest
    revision, and a topic file added by hand is removed: the content of each such file is
    kept first in ``.git/reverie-damaged/working-tree-<time>/`` (where doctor sets damaged
    objects aside), and the finding says how to make an edit a revision.
    """
    store = rv.memories
    with store.lock(memory_id):
        repo = store.repo(memory_id)
        latest = rv.state.latest(memory_id)
        if latest is None or repo.head() != latest.oid:
            return  # not at a recorded revision: the branch check said why
        committed = {p: t.encode() for p, t in repo.files(latest.oid).items()}
        present = repo.working_files()
        changed = {
            path: _how(committed.get(path), present.get(path))
            for path in sorted(committed.keys() | present.keys())
            if committed.get(path) != present.get(path)
        }
        if not changed:
            return
        keep = {p: present[p] for p, how in changed.items() if how in (_EDITED, _ADDED)}
        aside = _keep_aside(repo, keep) if keep else None
        repo.checkout(sorted(changed))
    rev = latest.revision
    what = ", ".join(f"{p} {how}" for p, how in changed.items())
    written = [p for p, how in changed.items() if how != _ADDED]
    removed = [p for p, how in changed.items() if how == _ADDED]
    repaired = "; ".join(
        part
        for part in (
            f"rewritten from revision {rev}: {', '.join(written)}" if written else "",
            f"removed (revision {rev} has no such file): {', '.join(removed)}" if removed else "",
        )
        if part
    )
    advice = None
    if aside is not None:
        repaired += f"; the content found in {', '.join(keep)} is kept in {aside}"
        advice = (
            "An edit in the working tree is not part of the memory: Reverie reads and searches "
            "the revisions, and a review throws such edits away. To keep one, write it "
            f"through Reverie: `reverie memory apply {agent} batch.json` (a `set_body` with "
            "the kept MEMORY.md, a `write_topic` per topic file) or the admin page's memory "
            "editor."
        )
    report.findings.append(
        Finding(
            f"memory of {agent}",
            "working tree",
            f"the files in {repo.path} differ from revision {rev}, which Reverie reads: {what}",
            repaired=repaired,
            advice=advice,
            code="working_tree_differs",
        )
    )


def _how(was: bytes | None, now: bytes | None) -> str:
    """How a working tree's file differs from the revision's (``was``; ``None``: no file)."""
    if now is None:
        return _DELETED
    if was is None:
        return _ADDED
    return _EDITED if now else _EMPTIED


def _keep_aside(repo: GitRepo, files: dict[str, bytes]) -> Path:
    """Copy ``files`` (path to content) into a new folder under ``.git/reverie-damaged``;
    returns it. Call under the memory lock.

    Raises:
        StorageFault: the copies cannot be written (then nothing is rewritten).
    """
    base = repo.path / ".git" / "reverie-damaged"
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside, n = base / f"working-tree-{stamp}", 1
    try:
        base.mkdir(exist_ok=True)
        while True:  # a new folder per run, even two in one second
            try:
                aside.mkdir()
                break
            except FileExistsError:
                n += 1
                aside = base / f"working-tree-{stamp}-{n}"
        for path, data in files.items():
            (aside / path).parent.mkdir(parents=True, exist_ok=True)
            (aside / path).write_bytes(data)
    except OSError as exc:
        raise storage_fault(exc, f"keeping the working tree's files in {base}") from exc
    return aside


def memory_repositories(home: Path) -> list[Path]:
    """The memory repositories under ``home/memories`` (folders holding ``.git``)."""
    try:
        return sorted(p for p in (home / "memories").iterdir() if (p / ".git").is_dir())
    except OSError:
        return []


#: The revision a commit of Reverie's records, in its trailer block.
_REVISION = re.compile(r"^Reverie-Revision: (\d+)$", re.MULTILINE)


def _unowned(path: Path) -> Finding:
    """A memory repository no agent owns, with what it holds; nothing is changed."""
    try:
        repo = GitRepo(path)
        head = repo.head()
        if head is None:
            holds = "no revision (an empty repository)"
        else:
            info = repo.commit_info(head)
            files = sorted(repo.files(head))
            found = _REVISION.findall(info.message.rstrip("\n").rsplit("\n\n", 1)[-1])
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(info.time))
            holds = (
                (f"revision {found[-1]} " if found else "a newest revision ")
                + f"(commit {head[:12]}, {when}) with {len(files)} file"
                + ("" if len(files) == 1 else "s")
                + (f": {', '.join(files[:8])}" if files else "")
                + (", ..." if len(files) > 8 else "")
            )
    except (ReverieError, OSError) as exc:
        holds = f"a newest revision that cannot be read ({exc})"
    return Finding(
        f"repository {path.name}",
        "repositories",
        f"{path} is a memory repository that no agent in reverie.db owns; it holds {holds}",
        advice=(
            "Nothing was changed: nothing reads it now, and it may be the only copy of that "
            f"memory (`git -C {path} log` lists its revisions, `git -C {path} show "
            "HEAD:MEMORY.md` shows the newest MEMORY.md). To get its agent back, restore the "
            "reverie.db that recorded it from a backup, then run `reverie doctor`, which rolls "
            "the memory forward to the newest revision here. No Reverie command attaches a "
            "repository to another agent; to carry its text (not its history) into one, write "
            "the files with `reverie memory apply AGENT batch.json` (a `set_body` with "
            "MEMORY.md, a `write_topic` per topic file). Remove the folder only once you no "
            "longer need what it holds."
        ),
        code="memory_repository_unowned",
    )


def _check_index(rv: Reverie, agent: str, memory_id: str, report: DoctorReport) -> None:
    """The index rows against the files of the last recorded revision."""
    store = rv.memories
    latest = store.current(memory_id)
    files = store.files(memory_id, latest)
    expected = Counter(
        (path, line) for path, text in files.items() for line in fts.index_lines(text)
    )
    if store.index_rows(memory_id) != expected:
        store.reindex(memory_id)
        report.findings.append(
            Finding(
                f"memory of {agent}",
                "index",
                "the index rows did not match the files",
                repaired="rebuilt from the files",
            )
        )


def _check_postings(rv: Reverie, agent: str, memory_id: str, report: DoctorReport) -> None:
    """On PostgreSQL, the search postings and line count against the index rows (checked
    after them, so that they are right)."""
    with rv.memories.lock(memory_id), rv.state.transaction() as conn:
        if postings.check(conn, memory_id):
            return
        postings.repair(conn, memory_id)
    report.findings.append(
        Finding(
            f"memory of {agent}",
            "index",
            "the search postings did not match the index rows",
            repaired="rebuilt from the index rows",
        )
    )
