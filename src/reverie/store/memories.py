"""The one write pipeline of every memory (SPEC W1-W10) and its reads (M1-M3).

Order of a write: parse and check the batch (no lock), take the memory's lock, recover from
any crash of an earlier writer, answer a known idempotency key, check the expected revision,
apply the batch in memory and check what it would write, then commit to git (the commit
point), record the revision, the key and the index rows in one state-database transaction,
and refresh the working tree. A crash anywhere leaves either the old revision or a commit that
the next writer or reader rolls forward from its trailers.

Group commit: the threads of one process queue for a memory's lock, and the one that gets it
writes the queued writes with its own (at most :data:`GROUP_MAX`, in the order they came), each
through the steps above against the state the writes before it left: its own key, expected
revision and checks, its own revision and commit, the commits a chain (each one's parent the
one before). A write that is refused is left out and the next builds on the last good state.
The group then writes the marker once (its parent the revision before the group), moves the
branch once, to the last commit (the commit point of all of them), records every revision,
index row and key in one transaction, refreshes the working tree and git's index once and
removes the marker; only then is any of its writes answered. If the transaction fails, every
write of the group is refused and the branch goes back. A crash leaves the old revision (the
branch not moved) or the whole chain, which recovery rolls forward commit by commit. A write
with nobody queued behind it is a group of one: one commit that moves the branch, as before.

A batch can also be built under the lock (``apply(build=...)``), from the ``MEMORY.md`` the
writes before it left: a chat ``!remember`` appends to the newest text without an expected
revision, so concurrent commands neither conflict nor redo.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from reverie.config import Settings
from reverie.core import validation
from reverie.core.markdown import Applied, apply_batch, new_index
from reverie.core.operations import Batch, parse_batch
from reverie.core.paths import INDEX, normalize_source
from reverie.errors import NotFound, PermissionDenied, RefusedInput, RevisionConflict, StorageFault
from reverie.index import fts

from .faults import ENVIRONMENT, storage_fault
from .gitrepo import GitRepo, fsync_objects
from .locks import file_lock
from .state import KeyRecord, RevisionRecord, SQLiteState

__all__ = [
    "CALLER_KEYS",
    "PEOPLE_WRITERS",
    "REPLAYED_MESSAGE",
    "WRITERS",
    "MemoryFile",
    "MemoryStore",
    "WriteOutcome",
    "search_limit_ok",
]

#: The paths a write can come through (W1); the author of its commit.
WRITERS = ("review", "agent", "chat", "admin", "mcp", "api", "cli")
#: Paths driven by a person, which may always write within their permissions (W10).
PEOPLE_WRITERS = frozenset({"chat", "admin", "mcp", "api", "cli"})

_TRAILER = re.compile(r"^Reverie-([A-Za-z]+): (.+)$", re.MULTILINE)
_MARKER = "reverie-writing"
#: The marker's file between writes: renamed to, and back from, the marker's name, never
#: deleted (see :meth:`MemoryStore._begin`). Nothing reads it.
_PARKED = "reverie-written"
_WRITING, _REFUSED = b"writing", b"refused"  # the same length: one is written over the other
_NO_PARENT = "-" * 40
_OID = re.compile(rb"[0-9a-f]{40}|-{40}")


#: What the answer to a write says when its idempotency key was used before (W7), on every
#: surface that prints an outcome (CLI, HTTP, MCP, the agent's tool), through
#: :meth:`WriteOutcome.to_dict`.
REPLAYED_MESSAGE = (
    "Already applied with this idempotency key: nothing was written this time. The revision "
    "and paths are those of the write that first used the key."
)


@dataclass(frozen=True)
class WriteOutcome:
    """The answer of a write (W1)."""

    changed: bool
    revision: int
    paths: list[str]
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    #: True when an idempotency key was seen before and nothing was applied this time.
    replayed: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The outcome as the JSON surfaces print it; a replay says so in words too
        (``message``: :data:`REPLAYED_MESSAGE`)."""
        out: dict[str, Any] = {
            "revision": self.revision,
            "changed": self.changed,
            "paths": self.paths,
            "diagnostics": self.diagnostics,
            "replayed": self.replayed,
        }
        if self.replayed:
            out["message"] = REPLAYED_MESSAGE
        return out


#: A batch made under the memory's lock from the current ``MEMORY.md`` (``None`` if none).
Builder = Callable[[str | None], Any]

#: The most writes one holder of a memory's lock writes as a group.
GROUP_MAX = 16
_LOCK_TIMEOUT = 30.0
#: The namespace of the idempotency keys callers give (W7): ``Reverie.memory_apply`` stores
#: a caller's key under it, apart from the keys Reverie makes for its own writes.
CALLER_KEYS = "caller:"


@dataclass(eq=False)
class _Write:
    """One write on its way through the pipeline, and, once ``done``, its answer."""

    batch: Batch | None  # None until ``build`` made it, under the lock
    build: Builder | None
    writer: str
    expected_revision: int | None
    key_hash: str | None
    conversation_id: str | None
    #: The hash a caller's key had before caller keys had a namespace (:func:`_legacy_hash`).
    legacy_hash: str | None = None
    done: threading.Event = field(default_factory=threading.Event)
    outcome: WriteOutcome | None = None
    error: BaseException | None = None
    # set while its group is written
    applied: Applied | None = None
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    revision: int = 0
    record: RevisionRecord | None = None  # None: the write changed nothing
    key_record: KeyRecord | None = None

    def answer(self, outcome: WriteOutcome) -> None:
        self.outcome, self.error = outcome, None

    def fail(self, exc: BaseException) -> None:
        self.outcome, self.error = None, exc

    def result(self) -> WriteOutcome:
        """The outcome, or the error raised."""
        if self.error is not None:
            raise self.error
        if self.outcome is None:
            raise StorageFault("The write was not answered; read the memory before writing again.")
        return self.outcome


@dataclass(frozen=True)
class MemoryFile:
    """A memory file as read at one revision."""

    revision: int
    source: str
    text: str


class MemoryStore:
    """Memories of one data directory: git repositories under ``root``, state in ``state``."""

    def __init__(self, state: SQLiteState, root: Path, settings: Settings) -> None:
        self.state = state
        self.root = root
        self.settings = settings
        self._local = threading.local()
        self._thread_locks: dict[str, threading.Lock] = {}
        self._thread_locks_guard = threading.Lock()
        self._waiting: dict[str, list[_Write]] = {}  # writes queued for the lock, per memory
        if settings.durable:
            fsync_objects()
        (root / "memories").mkdir(parents=True, exist_ok=True)
        (root / "locks").mkdir(parents=True, exist_ok=True)

    # plumbing

    def _repo_path(self, memory_id: str) -> Path:
        return self.root / "memories" / memory_id

    def repo(self, memory_id: str) -> GitRepo:
        """This thread's handle on the memory's repository (libgit2 handles are per thread)."""
        cache: dict[str, GitRepo] | None = getattr(self._local, "repos", None)
        if cache is None:
            cache = self._local.repos = {}
        repo = cache.get(memory_id)
        if repo is None:
            path = self._repo_path(memory_id)
            repo = GitRepo(path) if (path / ".git").exists() else GitRepo.create(path)
            cache[memory_id] = repo
        else:
            repo.refresh()  # packs merged since, here or by another process
        return repo

    def _marker(self, memory_id: str) -> Path:
        """The file that says a write to this memory is under way (gone when it completed).

        It holds ``writing <parent>`` while a write is under way, and ``refused <parent>``
        once a write that got past the commit point was refused (its state transaction
        failed): recovery moves the branch back to ``<parent>`` then, instead of rolling the
        commit forward, so that a refused write never appears later. An empty marker (from an
        older version) means ``writing``.
        """
        return self._repo_path(memory_id) / ".git" / _MARKER

    def _begin(self, memory_id: str, parent: str | None) -> None:
        """Write the marker before a commit; nothing is committed if this fails.

        The file of the last write's marker, parked under another name when that write ended
        (:meth:`_end`), gets the new line first and then the marker's name (an atomic rename):
        the marker appears with its whole line, as a new file's would, and no file is
        created or deleted per write. (On ext4 without a journal, as on the machines we
        measured, creating a file scans past every inode of its group freed in the last
        minutes or so; a file created and deleted per write made that scan a quarter of the
        server's CPU time.) Without a parked file (the first write, or after a fault) the
        marker is created.

        Raises:
            StorageFault: the marker cannot be written (a full or read-only disk).
        """
        marker = self._marker(memory_id)
        parked = marker.with_name(_PARKED)
        line = _WRITING + b" " + (parent or _NO_PARENT).encode() + b"\n"
        try:
            # os-level calls: a buffered open() adds an fstat, an ioctl and an lseek per write
            try:
                fd, reused = os.open(parked, os.O_WRONLY | os.O_CLOEXEC), True
            except FileNotFoundError:
                flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
                fd, reused = os.open(marker, flags, 0o666), False
            try:
                if os.pwrite(fd, line, 0) != len(line):
                    raise OSError(errno.ENOSPC, "the write marker was cut short")
                if reused:
                    os.ftruncate(fd, len(line))  # (every line has this length)
                if self.settings.durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            if reused:
                os.replace(parked, marker)
        except OSError as exc:
            with contextlib.suppress(OSError):
                marker.unlink(missing_ok=True)
            raise storage_fault(exc, "starting a write") from exc

    def _end(self, memory_id: str) -> None:
        """Remove the marker once a write is complete: renamed to its parked name, for the
        next write's :meth:`_begin`, or else deleted."""
        marker = self._marker(memory_id)
        try:
            os.replace(marker, marker.with_name(_PARKED))
        except FileNotFoundError:
            pass
        except OSError:
            with contextlib.suppress(OSError):
                marker.unlink(missing_ok=True)

    def marked(self, memory_id: str) -> tuple[bytes, str | None] | None:
        """The marker's state (``b"writing"``, ``b"refused"``) and parent, or ``None`` without
        a marker."""
        try:
            content = self._marker(memory_id).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise storage_fault(exc, "reading the write marker") from exc
        state, _, parent = content.strip().partition(b" ")
        if state not in (_WRITING, _REFUSED) or not _OID.fullmatch(parent):
            return _WRITING, None
        return state, None if parent == _NO_PARENT.encode() else parent.decode()

    def _refuse(self, memory_id: str, repo: GitRepo, parent: str, oid: str) -> bool:
        """Undo a commit whose write is being refused; whether the refusal is certain.

        First ``refused`` goes into the marker, in place (no new disk space: this runs when the
        disk may be full), so that recovery moves the branch back even if nothing else can
        be written now; then the branch is moved back to ``parent`` and the marker removed.
        """
        recorded = False
        try:
            with open(self._marker(memory_id), "r+b") as f:
                f.write(_REFUSED)
                if self.settings.durable:
                    f.flush()
                    os.fsync(f.fileno())
            recorded = True
        except OSError:
            pass
        try:
            repo.reset_branch(parent, expected=oid)
        except StorageFault:
            return recorded
        with contextlib.suppress(OSError):
            self._marker(memory_id).unlink(missing_ok=True)
        return True

    def lock(self, memory_id: str) -> Any:
        """The memory's write lock (W8): a context manager, across threads and processes."""
        return self._locked(memory_id)

    @contextlib.contextmanager
    def _locked(self, memory_id: str, timeout: float = _LOCK_TIMEOUT) -> Iterator[None]:
        # The threads of this process queue on a lock of their own before the file lock:
        # a waiting thread is woken the moment the holder releases it, where the file lock's
        # polling could leave the memory idle for up to 10 ms after each write.
        with self._thread_locks_guard:
            queue = self._thread_locks.setdefault(memory_id, threading.Lock())
        if not queue.acquire(timeout=timeout):
            raise StorageFault(
                f"Another writer in this process has held memory {memory_id} for over "
                f"{timeout:.0f} s; try again.",
                memory=memory_id,
            )
        try:
            with file_lock(self.root / "locks" / f"{memory_id}.lock", timeout):
                yield
        finally:
            queue.release()

    def create(self, memory_id: str) -> RevisionRecord:
        """Create the memory's repository at revision 0 (idempotent)."""
        with self.lock(memory_id):
            return self._recover(memory_id)

    def recover_all(self) -> dict[str, StorageFault | None]:
        """Recover every memory whose last writer died mid-write (W8: on the next open).

        Returns the memories it found with a marker: ``None`` for those recovered, the fault
        for those whose recovery could not finish. One memory's fault never stops the others,
        nor the home from opening: that memory answers the fault, with the way out, when it
        is used (see :meth:`current`). A stat per memory when nothing crashed.
        """
        rows = self.state.conn.execute("SELECT id FROM memories").fetchall()
        crashed = [str(r[0]) for r in rows if self._marker(str(r[0])).exists()]
        found: dict[str, StorageFault | None] = {}
        for memory_id in crashed:
            try:
                with self.lock(memory_id):
                    self._recover(memory_id)
                found[memory_id] = None
            except StorageFault as exc:
                found[memory_id] = exc
        return found

    def current(self, memory_id: str) -> RevisionRecord:
        """The newest acknowledged revision (recovering first if the memory needs it).

        When recovery cannot run because the storage takes no writes (a full disk, read-only
        storage), the last recorded revision is the answer: reads go on, writes wait.

        Raises:
            StorageFault: the memory's recovery failed for another reason; the message says
                how to repair it.
        """
        latest = self.state.latest(memory_id)
        if latest is not None and not self._marker(memory_id).exists():
            return latest
        try:
            with self.lock(memory_id):
                return self._recover(memory_id)
        except StorageFault as exc:
            if latest is None or exc.code not in ENVIRONMENT:
                raise
            return latest

    def _recover(self, memory_id: str) -> RevisionRecord:
        """Bring repository, working tree and state database into agreement (W8).

        Call with the memory lock held. Git is the truth: commits past the last recorded one
        are rolled forward from their trailers; objects that no branch reaches are ignored.
        """
        repo = self.repo(memory_id)
        marker = self._marker(memory_id)
        marked = self.marked(memory_id)
        crashed = marked is not None
        if crashed:
            repo.remove_crash_leftovers()
        head = repo.head()
        latest = self.state.latest(memory_id)
        refused = marked[1] if marked is not None and marked[0] == _REFUSED else None
        # A write refused after its commit point goes back to its parent, never forward.
        if head is not None and latest is not None and latest.oid == refused != head:
            repo.reset_branch(refused, expected=head)
            head = repo.head()
        if head is None:
            if latest is not None:
                raise StorageFault(
                    f"The repository of memory {memory_id} has lost its branch; restore "
                    f"{repo.path} from a backup.",
                    memory=memory_id,
                )
            self._begin(memory_id, None)
            message = _message("Create memory", "system", 0, None, None)
            head = repo.commit(None, {INDEX: new_index()}, message, "system")
            crashed = True
        if latest is None or latest.oid != head:
            for oid in repo.commits_after(latest.oid if latest else None, head):
                latest = self._roll_forward(memory_id, repo, oid, latest)
            crashed = True
        if crashed:
            try:
                repo.checkout(None)
            except StorageFault as exc:
                if exc.code not in ENVIRONMENT:
                    raise
                # The working tree is a view: refreshed by the next recovery, under the marker.
                assert latest is not None
                return latest
            with contextlib.suppress(OSError):
                marker.unlink(missing_ok=True)
        assert latest is not None
        return latest

    def _roll_forward(
        self, memory_id: str, repo: GitRepo, oid: str, prev: RevisionRecord | None
    ) -> RevisionRecord:
        info = repo.commit_info(oid)
        # Only the last paragraph is the trailer block this module wrote: a caller's commit
        # message comes before it and cannot pose as a revision, writer or key.
        trailers = dict(_TRAILER.findall(info.message.rstrip("\n").rsplit("\n\n", 1)[-1]))
        expected = prev.revision + 1 if prev else 0
        revision = int(trailers.get("Revision", expected))
        if revision != expected:
            raise StorageFault(
                f"Commit {oid} of memory {memory_id} says revision {revision}, expected "
                f"{expected}: the repository was edited outside Reverie.",
                memory=memory_id,
            )
        paths = repo.changed_paths(prev.oid if prev else None, oid)
        rec = RevisionRecord(
            revision, oid, info.time, trailers.get("Writer", "unknown"), info.message, paths
        )
        with self.state.transaction() as conn:
            self.state.record_revision(conn, memory_id, rec)
            for path in paths:
                old = repo.read(path, prev.oid) if prev else None
                fts.replace_file(conn, memory_id, path, old, repo.read(path, oid))
            if "Key" in trailers:
                self.state.record_key(
                    conn,
                    memory_id,
                    trailers["Key"],
                    KeyRecord(trailers.get("Batch", ""), revision, True, paths),
                )
        return rec

    # the write pipeline

    def apply(
        self,
        memory_id: str,
        request: Any = None,
        *,
        writer: str,
        writers_mode: str = "review_only",
        expected_revision: int | None = None,
        key: str | None = None,
        conversation_id: str | None = None,
        build: Builder | None = None,
    ) -> WriteOutcome:
        """Apply a batch through the whole pipeline (W1-W10).

        ``build``, given instead of ``request``, makes the batch under the memory's lock from
        the current ``MEMORY.md`` (its text, ``None`` where there is none): a write that adds
        to the text as it is (a chat ``!remember``) needs no expected revision then. A key it
        used before is answered whatever the memory became since, as the same event again.

        Raises:
            RefusedInput: the batch breaks a rule (W2-W5, W7); with ``stop_retrying`` in its
                details after the third refusal in a row in ``conversation_id`` (W9).
            PermissionDenied: ``writer`` may not write to this memory (W10).
            RevisionConflict: ``expected_revision`` is stale (W6).
            StorageFault: the data directory failed; nothing was acknowledged.
        """
        _check_call(writer, writers_mode, expected_revision)
        if (request is None) == (build is None):
            raise TypeError("apply takes a request or a builder, not both or neither")
        try:
            write = self._write_of(request, build, writer, expected_revision, key, conversation_id)
            outcome = self._apply_locked(memory_id, write)
        except RefusedInput as exc:
            if conversation_id:
                self._count_refusal(memory_id, conversation_id, exc)
            raise
        return outcome

    def apply_agent(
        self,
        agent: str,
        request: Any,
        *,
        writer: str,
        expected_revision: int | None = None,
        key: str | None = None,
        conversation_id: str | None = None,
    ) -> WriteOutcome:
        """:meth:`apply` of ``request`` to the memory of ``agent`` (a name or an id), under
        the agent's writers mode.

        Raises:
            NotFound: no such agent, or it has no memory; then what :meth:`apply` raises.
        """
        a, memory_id = self.state.agent_and_memory(agent)
        return self.apply(
            memory_id,
            request,
            writer=writer,
            writers_mode=a.memory_writers,
            expected_revision=expected_revision,
            key=key,
            conversation_id=conversation_id,
        )

    def _write_of(
        self,
        request: Any,
        build: Builder | None,
        writer: str,
        expected_revision: int | None,
        key: str | None,
        conversation_id: str | None,
    ) -> _Write:
        """A write on its way in: its batch parsed and checked (W2-W5), unless it is built
        under the lock.

        Raises:
            RefusedInput: the batch breaks a rule.
        """
        batch = None
        if build is None:
            batch = parse_batch(request)
            validation.check_request(batch, self.settings)
        key_hash = _key_hash(key) if key else None
        return _Write(
            batch,
            build,
            writer,
            expected_revision,
            key_hash,
            conversation_id,
            legacy_hash=_legacy_hash(key),
        )

    def _count_refusal(self, memory_id: str, conversation_id: str, exc: RefusedInput) -> None:
        try:
            run = self.state.count_failure(memory_id, conversation_id)
        except StorageFault:
            return  # the refusal stands; only its count in a row (W9) could not be kept
        exc.details["failures_in_a_row"] = run
        if run >= self.settings.max_failures_in_a_row:
            exc.details["stop_retrying"] = True
            exc.message += (
                f" This is refusal {run} in a row in this conversation: stop retrying this "
                "write, and tell the user what could not be saved and why."
            )
            exc.args = (exc.message,)

    def _apply_locked(self, memory_id: str, write: _Write) -> WriteOutcome:
        """Queue ``write``, and take the memory's lock: whoever holds it writes the queued
        writes of this process with its own, as one group (at most :data:`GROUP_MAX`). A
        write taken into another thread's group is answered once that group is recorded."""
        with self._thread_locks_guard:
            queue = self._thread_locks.setdefault(memory_id, threading.Lock())
            waiting = self._waiting.setdefault(memory_id, [])
            waiting.append(write)
        if not queue.acquire(timeout=_LOCK_TIMEOUT):
            with self._thread_locks_guard:
                mine = write in waiting
                if mine:
                    waiting.remove(write)
            if mine:
                raise StorageFault(
                    f"Another writer in this process has held memory {memory_id} for over "
                    f"{_LOCK_TIMEOUT:.0f} s; try again.",
                    memory=memory_id,
                )
            write.done.wait()  # a holder took it into its group: the answer follows
            return write.result()
        try:
            if not write.done.is_set():
                self._lead(memory_id, write, waiting)
        finally:
            queue.release()
        return write.result()

    def _lead(self, memory_id: str, write: _Write, waiting: list[_Write]) -> None:
        """Under this process's lock of the memory: take the file lock and write ``write``
        with the writes queued behind it; every write of the group ends answered."""
        group = [write]
        try:
            with file_lock(self.root / "locks" / f"{memory_id}.lock", _LOCK_TIMEOUT):
                with self._thread_locks_guard:
                    # In the order they came, with this thread's own write among them.
                    group = waiting[:GROUP_MAX]
                    if write not in group:
                        group[-1] = write
                    for w in group:
                        waiting.remove(w)
                self._write_group(memory_id, group)
        except BaseException as exc:
            with self._thread_locks_guard:
                if write in waiting:
                    waiting.remove(write)
            for w in group:
                if w.outcome is None and w.error is None:  # not answered yet
                    w.fail(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            for w in group:
                w.done.set()

    def _write_group(self, memory_id: str, group: list[_Write]) -> None:
        """Write ``group`` in order, each write checked against the state the ones before it
        left (its own key, expected revision, batch and W3-W5 checks, its own revision and
        commit: a chain), then record them all: one marker, one branch move, one state
        transaction, one refresh of the working tree. A refused write is left out; the next
        builds on the last good state. Call with the memory's lock held."""
        latest = self._recover(memory_id)
        repo = self.repo(memory_id)
        overlay: dict[str, str | None] = {}  # the files the group changed so far
        keys: dict[str, KeyRecord] = {}  # the keys the group used so far
        tip, revision = latest.oid, latest.revision
        staged: list[_Write] = []  # answered once recorded
        marked = False
        chain = len(group) > 1  # a lone write commits and moves the branch in one call

        def read(path: str) -> str | None:
            return overlay[path] if path in overlay else repo.read(path, latest.oid)

        for w in group:
            try:
                if w.key_hash is not None:
                    seen = keys.get(w.key_hash) or self.state.key(
                        memory_id, w.key_hash, w.legacy_hash
                    )
                    if seen is not None:
                        w.answer(self._replay(seen, w.batch))
                        continue
                _check_expected(revision, w.expected_revision)
                batch = w.batch
                if batch is None:
                    assert w.build is not None
                    batch = w.batch = parse_batch(w.build(read(INDEX)))
                    validation.check_request(batch, self.settings)
                applied = apply_batch(batch, read)
                validation.check_result(applied, self.settings)
                w.diagnostics = [{"code": code, "message": note} for code, note in applied.notes]
                w.applied = applied
                batch_hash = batch.digest() if w.key_hash else None
                if not applied.files:
                    w.revision = revision
                    if w.key_hash is not None:
                        assert batch_hash is not None
                        w.key_record = keys[w.key_hash] = KeyRecord(batch_hash, revision, False, [])
                    staged.append(w)
                    continue
                paths = sorted(applied.files)
                message = _message(
                    _summary(batch, w.writer, paths), w.writer, revision + 1, w.key_hash, batch_hash
                )
                if not marked:
                    self.state.refuse_if_degraded()
                    self._begin(memory_id, latest.oid)
                    marked = True
                oid = self._commit(
                    memory_id, repo, tip, applied.files, message, w.writer, move=not chain
                )
            except Exception as exc:
                w.fail(exc)
                continue
            revision += 1
            tip = oid
            overlay.update(applied.files)
            w.revision = revision
            w.record = RevisionRecord(revision, oid, time.time(), w.writer, message, paths)
            if w.key_hash is not None:
                assert batch_hash is not None
                w.key_record = keys[w.key_hash] = KeyRecord(batch_hash, revision, True, paths)
            staged.append(w)
        if marked and tip == latest.oid:  # every commit failed: nothing to undo
            with contextlib.suppress(OSError):
                self._marker(memory_id).unlink(missing_ok=True)
        if not staged:
            return
        if chain and tip != latest.oid:
            fault = self._advance(memory_id, repo, latest.oid, tip)
            if fault is not None:
                for w in staged:
                    w.fail(fault)
                return
        try:
            with self.state.transaction() as conn:
                for w in staged:
                    assert w.applied is not None and w.batch is not None
                    if w.record is not None:
                        self.state.record_revision(conn, memory_id, w.record)
                        for path, text in w.applied.files.items():
                            fts.replace_file(conn, memory_id, path, w.applied.before[path], text)
                    if w.key_hash is not None:
                        assert w.key_record is not None
                        self.state.record_key(conn, memory_id, w.key_hash, w.key_record)
                    if w.conversation_id:
                        self.state.clear_failures(conn, memory_id, w.conversation_id)
        except Exception as exc:  # whatever failed, no write of the group may appear later
            lost = self._unrecorded(memory_id, repo, latest.oid, tip, exc)
            if lost is not None:
                for w in staged:
                    w.fail(lost)
                return
        diagnostics: list[dict[str, Any]] = []
        if tip != latest.oid:
            changed = sorted({p for w in staged if w.record is not None for p in w.record.paths})
            diagnostics = self._after_commit(memory_id, repo, changed, revision, latest.revision)
        for w in staged:
            assert w.applied is not None
            if w.record is None:
                w.answer(WriteOutcome(False, w.revision, [], w.diagnostics))
                continue
            w.answer(
                self._written(
                    w.applied.files.get(INDEX),
                    w.revision,
                    w.record.paths,
                    w.diagnostics + diagnostics,
                )
            )

    def _unrecorded(
        self, memory_id: str, repo: GitRepo, parent: str, tip: str, exc: Exception
    ) -> StorageFault | None:
        """The fault of writes whose state transaction failed; their commits (``parent`` to
        ``tip``, if any) are undone. ``None`` when they were recorded after all."""
        fault = exc if isinstance(exc, StorageFault) else storage_fault(exc, "recording")
        if exc is not fault:
            fault.__cause__ = exc
        if tip == parent:
            return fault
        try:
            now = self.state.latest(memory_id)
        except Exception:  # whether it was recorded cannot be told
            unknown = StorageFault(
                f"{fault.message} Whether the write was saved cannot be told now: read "
                "the memory (or run `reverie doctor`) before writing again.",
                code=fault.code,
            )
            unknown.__cause__ = exc
            return unknown
        if now is None or now.oid != tip:  # not recorded: refused, and undone
            try:
                self._refused_after_commit(memory_id, repo, parent, tip, fault)
            except StorageFault as refused:
                return refused
        return None

    def _advance(self, memory_id: str, repo: GitRepo, parent: str, tip: str) -> StorageFault | None:
        """Move the branch from a group's parent to its last commit (the group's commit
        point); on failure the fault, the branch back at ``parent`` and the marker removed."""
        try:
            repo.advance(parent, tip)
        except StorageFault as exc:
            return self._undo_group(memory_id, repo, parent, exc)
        return None

    def _undo_group(
        self, memory_id: str, repo: GitRepo, parent: str, exc: StorageFault
    ) -> StorageFault:
        """The fault of a group whose branch move failed: if the branch moved after all it
        goes back to ``parent``; the marker is removed."""
        head = repo.head()
        fault = exc
        if head is not None and head != parent:
            try:
                self._refused_after_commit(memory_id, repo, parent, head, exc)
            except StorageFault as refused:
                fault = refused
        with contextlib.suppress(OSError):
            self._marker(memory_id).unlink(missing_ok=True)
        return fault

    def _written(
        self, index: str | None, revision: int, paths: list[str], diagnostics: list[Any]
    ) -> WriteOutcome:
        """The answer of a write that made ``revision``; a note when ``MEMORY.md`` (``index``,
        if the write changed it) is longer than runs read of it."""
        if index is not None and len(index) > self.settings.prompt_index_chars:
            diagnostics.append(
                {
                    "code": "index_over_prompt_cap",
                    "message": f"{INDEX} is {len(index):,} characters; runs see the first "
                    f"{self.settings.prompt_index_chars:,}. Move detail into topic files.",
                }
            )
        return WriteOutcome(True, revision, paths, diagnostics)

    def _commit(
        self,
        memory_id: str,
        repo: GitRepo,
        parent: str,
        files: dict[str, str | None],
        message: str,
        writer: str,
        *,
        move: bool = True,
    ) -> str:
        """Commit under the marker; a failure before the branch moved removes the marker.
        ``move=False``: a link of a group's chain, only its objects written (the group's
        marker stays for the links after it)."""
        if not move:
            return repo.commit(parent, files, message, writer, move=False)
        try:
            return repo.commit(parent, files, message, writer)
        except StorageFault as exc:
            head = repo.head()
            if head is not None and head != parent:  # the branch moved after all
                self._refused_after_commit(memory_id, repo, parent, head, exc)
            with contextlib.suppress(OSError):
                self._marker(memory_id).unlink(missing_ok=True)
            raise

    def _refused_after_commit(
        self, memory_id: str, repo: GitRepo, parent: str, oid: str, exc: StorageFault
    ) -> NoReturn:
        """Refuse a write whose commit exists but whose revision was not recorded.

        Raises:
            StorageFault: always; when the refusal could not be made certain (neither the
                marker nor the branch could be written), the message says the outcome is
                unknown.
        """
        if self._refuse(memory_id, repo, parent, oid):
            raise exc
        raise StorageFault(
            f"{exc.message} The write got as far as its commit, and neither the commit nor a "
            "note to undo it could be written back: it may still appear as the next revision "
            "once the storage works. Read the memory before writing again.",
            code=exc.code,
            **exc.details,
        ) from exc

    def _after_commit(
        self, memory_id: str, repo: GitRepo, paths: list[str], revision: int, before: int
    ) -> list[dict[str, Any]]:
        """Refresh the working tree, pack when due (a multiple of ``pack_every`` passed from
        revision ``before`` to ``revision``), remove the marker. The writes are recorded
        already: what fails here is reported, never raised."""
        try:
            repo.checkout(paths)
        except StorageFault as exc:
            # The marker stays: the next recovery refreshes the working tree.
            return [
                {
                    "code": "working_tree_stale",
                    "message": f"The write is saved; the files on disk are not refreshed yet "
                    f"({exc.message}).",
                }
            ]
        diagnostics = []
        every = self.settings.pack_every
        if every > 0 and revision // every > before // every:
            diagnostics += _pack(repo)  # under the marker: a kill here is recovered too
        self._end(memory_id)
        return diagnostics

    def preview(
        self, memory_id: str, request: Any, *, expected_revision: int | None = None
    ) -> list[str]:
        """Run every check of :meth:`apply` on ``request`` without writing; the paths it
        would change. Review uses it to drop the operations the store would refuse.

        Raises:
            RefusedInput, RevisionConflict, NotFound: as :meth:`apply` would.
        """
        batch = parse_batch(request)
        validation.check_request(batch, self.settings)
        latest = self.current(memory_id)
        _check_expected(latest.revision, expected_revision)
        applied = apply_batch(batch, lambda path: self._file(memory_id, latest, path))
        validation.check_result(applied, self.settings)
        return sorted(applied.files)

    def _replay(self, seen: KeyRecord, batch: Batch | None) -> WriteOutcome:
        """The answer to a key seen before: what it saved, when ``batch`` is the same one
        (``None``: a batch still to be built, from a text that may have moved on since)."""
        if batch is not None and seen.batch_hash and seen.batch_hash != batch.digest():
            raise RefusedInput(
                "This idempotency key was already used for a different write; use a new key "
                "for a new write.",
                code="idempotency_key_reused",
                revision=seen.revision,
            )
        return WriteOutcome(seen.changed, seen.revision, seen.paths, [], replayed=True)

    # reads

    def read(
        self, memory_id: str, source: str | None = None, revision: int | None = None
    ) -> MemoryFile:
        """A memory file at the current or a past revision (M1).

        Raises:
            RefusedInput: ``invalid_path`` for anything but memory files.
            NotFound: no such revision, or no such file at it.
        """
        path = normalize_source(source)
        rec = self.current(memory_id) if revision is None else self.at_revision(memory_id, revision)
        text = self._file(memory_id, rec, path)
        if text is None:
            raise NotFound(
                f"{path} does not exist at revision {rec.revision}.",
                source=path,
                revision=rec.revision,
            )
        return MemoryFile(rec.revision, path, text)

    def at_revision(self, memory_id: str, revision: int) -> RevisionRecord:
        """The record of one revision (after recovering the memory if it needs it).

        Raises:
            NotFound: the memory has no such revision.
        """
        self.current(memory_id)
        return self.state.revision(memory_id, revision)

    def search(self, memory_id: str, query: str, limit: int = 8) -> list[fts.SearchHit]:
        """Ranked full-text search over the memory's lines (M2).

        Raises:
            RefusedInput: ``invalid_limit`` unless 1 <= limit <= 20.
        """
        _check_limit(limit)
        self.current(memory_id)
        use_fts = self.state.text_search and self.settings.search_backend == "fts5"
        return fts.search(
            self.state.conn,
            memory_id,
            query,
            limit,
            use_fts=use_fts,
            scan_max_lines=self.settings.scan_max_lines,
        )

    def search_agent(self, agent: str, query: str, limit: int = 8) -> list[fts.SearchHit]:
        """:meth:`search` of the memory of ``agent`` (a name or an id).

        Raises:
            NotFound: no such agent, or it has no memory.
            RefusedInput: ``invalid_limit`` unless 1 <= limit <= 20.
        """
        return self.search(self.state.agent_and_memory(agent)[1], query, limit)

    def history(
        self, memory_id: str, limit: int = 50, before: int | None = None
    ) -> list[RevisionRecord]:
        """Accepted writes, newest first (M3)."""
        self.current(memory_id)
        return self.state.revisions(memory_id, limit, before)

    def diff(self, memory_id: str, rev_a: int, rev_b: int) -> str:
        """A unified diff between two revisions (M3).

        Raises:
            NotFound: either revision does not exist.
        """
        a, b = self.at_revision(memory_id, rev_a), self.at_revision(memory_id, rev_b)
        return self.repo(memory_id).diff(a.oid, b.oid)

    def _file(self, memory_id: str, rec: RevisionRecord, path: str) -> str | None:
        """The text of ``path`` at revision ``rec``, or ``None`` where it does not exist."""
        return self.repo(memory_id).read(path, rec.oid)

    def files(self, memory_id: str, rec: RevisionRecord) -> dict[str, str]:
        """Every file of the memory at revision ``rec``: path to text."""
        return self.repo(memory_id).files(rec.oid)

    def discard_uncommitted(self, memory_id: str) -> None:
        """Throw away edits in the working tree that were never committed (R4)."""
        with self.lock(memory_id):
            self._recover(memory_id)
            self.repo(memory_id).checkout(None)

    def reindex(self, memory_id: str) -> int:
        """Rebuild the memory's index rows from the files at the current revision.

        Returns the number of indexed lines.
        """
        with self.lock(memory_id):
            latest = self._recover(memory_id)
            files = self.repo(memory_id).files(latest.oid)
            with self.state.transaction() as conn:
                conn.execute("DELETE FROM memory_lines WHERE memory_id = ?", (memory_id,))
                for path, text in files.items():
                    fts.replace_file(conn, memory_id, path, None, text)
                if self.state.has_fts5:
                    conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('integrity-check')")
            return sum(len(fts.index_lines(t)) for t in files.values())

    def rebuild_index(self, damaged: list[str]) -> dict[str, str]:
        """Drop the memory index (``damaged`` names its damaged tables) and remake it from
        every memory's files at its recorded revision, in one transaction. Returns the memories
        whose files could not be read (id to the reason): their rows stay out until their
        repository is repaired.

        Raises:
            StorageFault: the state database cannot be written.
        """
        skipped: dict[str, str] = {}
        with self.state.transaction() as conn:
            self.state.drop_tables(conn, fts.TABLES, damaged)
            fts.create_tables(conn, has_fts5=self.state.has_fts5)
            for (memory_id,) in conn.execute("SELECT id FROM memories").fetchall():
                latest = self.state.latest(memory_id)
                if latest is None:
                    continue
                try:
                    files = self.repo(memory_id).files(latest.oid)
                except StorageFault as exc:
                    skipped[memory_id] = exc.message
                    continue
                for path, text in files.items():
                    fts.replace_file(conn, memory_id, path, None, text)
        return skipped

    def rewind(self, memory_id: str, revision: int) -> list[int]:
        """Restore the memory to an earlier revision whose objects are intact, forgetting the
        later ones (``reverie doctor --rewind``, when their objects are damaged beyond repair).
        Returns the revisions forgotten. Their idempotency keys go too, so a retry applies again.

        A crash half-way is finished by recovery: the marker says ``refused <revision>``
        before anything moves.

        Raises:
            NotFound: no such revision.  StorageFault: the storage cannot be written.
        """
        with self.lock(memory_id):
            target = self.state.revision(memory_id, revision)
            repo = self.repo(memory_id)
            files = repo.files(target.oid)
            self._begin(memory_id, target.oid)
            with open(self._marker(memory_id), "r+b") as f:
                f.write(_REFUSED)
            with self.state.transaction() as conn:
                dropped = self.state.forget_revisions_after(conn, memory_id, revision)
                conn.execute("DELETE FROM memory_lines WHERE memory_id = ?", (memory_id,))
                for path, text in files.items():
                    fts.replace_file(conn, memory_id, path, None, text)
            repo.set_branch(target.oid)
            repo.checkout(None)
            self._marker(memory_id).unlink(missing_ok=True)
        return dropped

    def index_rows(self, memory_id: str) -> Counter[tuple[str, str]]:
        """The indexed ``(path, line)`` rows, to compare an index with the files."""
        rows = self.state.conn.execute(
            "SELECT path, text FROM memory_lines WHERE memory_id = ?", (memory_id,)
        ).fetchall()
        return Counter((p, t) for p, t in rows)


def search_limit_ok(limit: int) -> bool:
    """Whether a search may return ``limit`` hits: 1 to 20 (M2)."""
    return 1 <= limit <= 20


def _check_limit(limit: int) -> None:
    """Refuse a search limit that :func:`search_limit_ok` does not admit.

    Raises:
        RefusedInput: ``invalid_limit``.
    """
    if not search_limit_ok(limit):
        raise RefusedInput("limit must be between 1 and 20.", code="invalid_limit", limit=limit)


def _check_call(writer: str, writers_mode: str, expected_revision: int | None) -> None:
    """What a write's call must be before its batch is looked at: a revision number, a known
    writer, and one that may write to this memory (W10).

    Raises:
        RefusedInput: ``invalid_revision``, ``invalid_operation``.
        PermissionDenied: ``memory_read_only``.
    """
    if expected_revision is not None and (
        not isinstance(expected_revision, int)
        or isinstance(expected_revision, bool)
        or expected_revision < 0
    ):
        raise RefusedInput(
            f"expected_revision is a revision number (a whole number from 0), not "
            f"{str(expected_revision)[:40]!r}.",
            code="invalid_revision",
        )
    if writer not in WRITERS:
        raise RefusedInput(
            f"Unknown writer {writer!r}; one of {', '.join(WRITERS)}.", code="invalid_operation"
        )
    if writer == "agent" and writers_mode == "review_only":
        raise PermissionDenied(
            "This agent's memory is review-only: conversations read memory, and review "
            "saves what was said. State the fact in your reply instead; nothing was "
            "written.",
            code="memory_read_only",
            writer=writer,
        )


def _check_expected(current: int, expected_revision: int | None) -> None:
    """W6: a write made at a revision that is not the newest (``current``) is refused.

    Raises:
        RevisionConflict: with the current revision.
    """
    if expected_revision is not None and expected_revision != current:
        raise RevisionConflict(
            f"The memory is at revision {current}, not {expected_revision}: "
            "it changed since you read it. Read it again and redo your change on top.",
            current_revision=current,
            expected_revision=expected_revision,
        )


def _key_hash(key: str) -> str:
    """How an idempotency key is stored (W7): its hash, never the key."""
    return hashlib.sha256(key.encode()).hexdigest()


def _legacy_hash(key: str | None) -> str | None:
    """W7 across the upgrade that gave a caller's keys their namespace: the hash a caller's
    key (``caller:<key>``) was stored under before (``<key>``, raw), or ``None`` for a key
    Reverie makes. A row kept from before that upgrade (``legacy``, set once by shared
    migration 10) still answers it; the hashes cannot be moved into the namespace, being
    hashes. Only those rows: a key Reverie makes after the upgrade is never an answer to a
    caller's, nor a caller's key to Reverie's."""
    if not key or not key.startswith(CALLER_KEYS) or len(key) == len(CALLER_KEYS):
        return None
    return _key_hash(key[len(CALLER_KEYS) :])


def _pack(repo: GitRepo) -> list[dict[str, str]]:
    """Pack the loose objects after a committed write; a failure is reported, not raised: the
    write itself stands, and the next pack picks the objects up."""
    try:
        repo.pack_loose()
        repo.merge_packs()
    except (StorageFault, OSError) as exc:
        return [{"code": "pack_failed", "message": f"The write is saved; packing failed: {exc}"}]
    return []


def _summary(batch: Batch, writer: str, paths: list[str]) -> str:
    counts = Counter(op.action for op in batch.operations)
    ops = ", ".join(f"{action} {n}" for action, n in counts.items())
    head = batch.message.strip().split("\n")[0][:120] if batch.message else f"{writer}: {ops}"
    body = batch.message.strip().split("\n")[1:] if batch.message else []
    lines = [
        head,
        "",
        *body,
        *([""] if body else []),
        f"Operations: {ops}",
        f"Files: {', '.join(paths)}",
    ]
    return "\n".join(lines)


def _message(
    summary: str, writer: str, revision: int, key_hash: str | None, batch_hash: str | None
) -> str:
    trailers = [f"Reverie-Revision: {revision}", f"Reverie-Writer: {writer}"]
    if key_hash:
        trailers += [f"Reverie-Key: {key_hash}", f"Reverie-Batch: {batch_hash}"]
    return summary.rstrip("\n") + "\n\n" + "\n".join(trailers) + "\n"
