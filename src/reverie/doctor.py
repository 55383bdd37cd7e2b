"""``reverie doctor [AGENT]``: check a home, repair what can be rebuilt from the truth, and say
what was done and what is left (SPEC 15).

What it checks, and how it repairs:

* **the state database**: every table's pages (``PRAGMA quick_check``) and the FTS5 indexes;
  a damaged search index is rebuilt from the memory files and the messages, pages left unused
  by an earlier repair are given back (``VACUUM``); damage to any other table is named, with
  the advice to restore ``reverie.db`` from a backup;
* **each memory** (one agent's, or every one): a marker left by an interrupted write (the write
  is rolled forward, or undone when it was refused), lock and temporary files a killed writer
  left, every object of every recorded revision and every loose object file, the branch
  against the last recorded revision, and the index rows against the files (on PostgreSQL,
  also the search postings against the index rows).

A damaged object is written again when its content can be had from the working tree (the
files of the newest revision are checked out after each write): a blob from a file, a tree
from the files, the newest commit from its tree, its parent and the message and writer the
state database recorded (the time is found by trying the second it was recorded in and the
few before). What cannot be rebuilt is reported with the last revision whose objects are all
intact; ``rewind=True`` restores the memory to that revision and forgets the later ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .core.paths import INDEX, TOPIC_DIR
from .errors import ReverieError, StorageFault
from .index import fts, postings
from .store.faults import ENVIRONMENT
from .store.gitrepo import Damage, GitRepo, blob_id, object_id, tree_body
from .store.state import RevisionRecord

if TYPE_CHECKING:
    from .api import Reverie

__all__ = ["DoctorReport", "Finding", "run"]

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
    """Check the home (and one agent's memory, or all), repair what can be rebuilt.

    Raises:
        NotFound: no such agent.
    """
    report = DoctorReport()
    agents = [rv.agent(agent)] if agent else rv.agents()
    _check_database(rv, report)
    for a in agents:
        memory_id = rv.state.memory_of(a.id)
        report.checked.append(f"memory of {a.name}")
        try:
            _check_memory(rv, a.name, memory_id, rewind, report)
        except ReverieError as exc:
            advice = _STORAGE_ADVICE if exc.code in ENVIRONMENT else _ADVICE
            report.findings.append(
                Finding(f"memory of {a.name}", "memory", exc.message, advice=advice)
            )
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


def _check_database(rv: Reverie, report: DoctorReport) -> None:
    report.checked.append("state database")
    where = "state database"
    try:
        damaged = rv.state.damaged_tables()
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
        return
    unused = rv.state.integrity_notes()
    if unused:
        problem = f"{len(unused)} integrity note(s), for example: {unused[0]}"
        if all("never used" in u for u in unused) and rv.state.vacuum():
            report.findings.append(
                Finding(where, "pages", problem, repaired="unused pages given back (VACUUM)")
            )
        else:
            report.findings.append(Finding(where, "pages", problem, advice=_ADVICE))


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
