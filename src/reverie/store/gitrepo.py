"""One memory's git repository, in-process through pygit2 (libgit2).

The repository is the source of truth for a memory's files. A commit is built from blobs and
trees straight in the object database (never from the working tree), and the branch moves to
it in one atomic reference update that also checks the parent: a crash before that update
leaves only unreachable objects, a crash after it leaves a complete commit. The working tree is
a view for people, rewritten from ``HEAD`` after each commit and on recovery.

Every loose object is checked before libgit2 reads it (:meth:`GitRepo.verify`): a file cut
short, as a power loss without ``REVERIE_DURABLE=1`` can leave it, made libgit2 spin at full
CPU forever; a damaged object is answered with a :class:`StorageFault` that names it instead.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import hashlib
import os
import re
import shutil
import subprocess
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import CheckoutStrategy, FileMode

from reverie.config import git_environment
from reverie.core.paths import INDEX, TOPIC_DIR, is_topic
from reverie.errors import StorageFault

from .faults import environment_fault, not_writable, storage_fault

__all__ = [
    "CommitInfo",
    "Damage",
    "GitRepo",
    "blob_id",
    "fsync_objects",
    "object_id",
    "tree_body",
]

BRANCH = "refs/heads/main"
#: More packs than this and they are merged (see GitRepo.merge_packs).
MAX_PACKS = 8
#: A loose object's name: two hex digits of directory, 38 of file.
_LOOSE = re.compile(r"^[0-9a-f]{40}$")
_HEADER = re.compile(rb"^(commit|tree|blob|tag) (\d{1,20})\x00")
#: Verified objects remembered per handle (objects never change); past this, forgotten.
_VERIFIED_MAX = 200_000
#: Blobs whose content a repository keeps after verifying them (see ``GitRepo._blob``).
_BLOBS_KEPT = 8


def fsync_objects() -> None:
    """Make libgit2 fsync every object and reference it writes (``Settings.durable``).

    libgit2 holds this option per process, so once one durable home is opened every
    repository of the process is written durably: safer, never less safe.
    """
    pygit2.settings.enable_fsync_gitdir(True)


@dataclass(frozen=True)
class Damage:
    """A damaged or missing object: its name, what it is, what is wrong."""

    oid: str
    kind: str
    problem: str


@dataclass(frozen=True)
class CommitInfo:
    """A commit as history shows it."""

    oid: str
    parent: str | None
    message: str
    writer: str
    time: float


def _fault(action: str, path: Path, exc: Exception) -> StorageFault:
    fault = storage_fault(exc, f"git {action} in {path}")
    why = not_writable(path) if fault.code == "storage_fault" else None
    if why is not None:
        # libgit2 words a full disk in many ways ("object not found" for a blob it could not
        # write): the storage says what it is.
        fault = environment_fault(why, str(exc), f"git {action} in {path}")
    fault.details["path"] = str(path)
    return fault


class GitRepo:
    """A memory repository at ``path`` (a normal, non-bare git repository)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # As strings: every write stats the pack folder and reads its new objects back, and
        # building these paths with pathlib cost more than the reads.
        self._objects = os.path.join(path, ".git", "objects")
        self._packs = os.path.join(self._objects, "pack")
        self._verified: set[str] = set()
        self._walked: set[str] = set()  # trees verified with everything under them
        # The content of the last blobs verified, by name: a write's new MEMORY.md is read
        # back to be verified, then read again for the working tree and by the next write;
        # each libgit2 read inflates and hashes it once more (a file's size, every write).
        self._blobs: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._repo = self._open()

    def _open(self) -> pygit2.Repository:
        self._packs_at_open = self._packs_changed_at()
        try:
            return pygit2.Repository(str(self.path))
        except (pygit2.GitError, KeyError) as exc:
            raise StorageFault(
                f"{self.path} is not a readable git repository; restore it from a backup.",
                path=str(self.path),
            ) from exc

    def _packs_changed_at(self) -> int:
        try:
            return os.stat(self._packs).st_mtime_ns
        except FileNotFoundError:
            return 0

    def refresh(self) -> None:
        """Reopen the repository if its packs changed since it was opened (one ``stat``).

        After a merge deleted packs (in this process or another), libgit2 keeps them in its
        list and looks through them on every miss: without this, each merge made every later
        write of a long-lived handle a little slower (1.22x after 10,000 writes at
        ``pack_every=50``, 1.03x with it).
        """
        if self._packs_changed_at() != self._packs_at_open:
            self._repo = self._open()

    @classmethod
    def create(cls, path: Path) -> GitRepo:
        """Create an empty repository whose branch ``main`` has no commit yet."""
        try:
            repo = pygit2.init_repository(str(path), bare=False, initial_head="main")
            # Reflogs would be one more file per write that a crash could leave half-written.
            repo.config["core.logAllRefUpdates"] = False
            repo.config["user.name"] = "reverie"
            repo.config["user.email"] = "reverie@localhost"
        except pygit2.GitError as exc:
            raise _fault("init", path, exc) from exc
        return cls(path)

    # reading

    def head(self) -> str | None:
        """The oid of the branch tip, or ``None`` before the first commit."""
        try:
            ref = self._repo.references.get(BRANCH)
        except pygit2.GitError as exc:
            raise _fault("read ref", self.path, exc) from exc
        return None if ref is None else str(ref.target)

    def read(self, path: str, oid: str) -> str | None:
        """The text of ``path`` at commit ``oid``, or ``None`` when it has no such file."""
        tree = self._commit(oid).tree
        if "/" in path:
            folder = path.split("/", 1)[0]
            if folder not in tree:
                return None
            self.verify(str(tree[folder].id), "a tree")
        try:
            entry = tree[path]
        except KeyError:
            return None
        if entry.type_str != "blob" or entry.filemode != FileMode.BLOB:
            return None
        return self._blob(str(entry.id), f"the blob of {path}").decode("utf-8")

    def files(self, oid: str) -> dict[str, str]:
        """Every memory file at commit ``oid``: ``MEMORY.md`` and ``memory/*.md``."""
        tree = self._commit(oid).tree
        out: dict[str, str] = {}
        for path in self._paths(tree):
            text = self.read(path, oid)
            if text is not None:
                out[path] = text
        return out

    def _paths(self, tree: pygit2.Tree) -> Iterator[str]:
        if INDEX in tree:
            yield INDEX
        if TOPIC_DIR in tree:
            sub = self._object(str(tree[TOPIC_DIR].id), "a tree")
            for entry in sub:  # type: ignore[attr-defined]
                path = f"{TOPIC_DIR}/{entry.name}"
                if is_topic(path):
                    yield path

    def commit_info(self, oid: str) -> CommitInfo:
        """The message, writer, parent and time of one commit."""
        c = self._commit(oid)
        parent = str(c.parent_ids[0]) if c.parent_ids else None
        return CommitInfo(str(c.id), parent, c.message, c.author.name, float(c.commit_time))

    def commits_after(self, ancestor: str | None, tip: str) -> list[str]:
        """First-parent commits after ``ancestor`` up to ``tip``, oldest first.

        Raises:
            StorageFault: ``ancestor`` is not on the first-parent line of ``tip``.
        """
        out: list[str] = []
        oid: str | None = tip
        while oid is not None and oid != ancestor:
            out.append(oid)
            c = self._commit(oid)
            oid = str(c.parent_ids[0]) if c.parent_ids else None
        if oid != ancestor:
            raise StorageFault(
                f"The branch of {self.path} does not descend from the last recorded commit "
                f"{ancestor}: it was rewritten outside Reverie. `reverie doctor` moves it back "
                "to that commit (what was committed outside Reverie stays in git, unreachable).",
                path=str(self.path),
            )
        return out[::-1]

    def changed_paths(self, old: str | None, new: str) -> list[str]:
        """Memory files that differ between two commits (all of ``new``'s if ``old`` is None)."""
        new_files = self.files(new)
        old_files = self.files(old) if old else {}
        return sorted(
            p for p in set(new_files) | set(old_files) if new_files.get(p) != old_files.get(p)
        )

    def diff(self, old: str, new: str) -> str:
        """A unified diff (patch text) between two commits."""
        a, b = self._commit(old), self._commit(new)
        self.verify_tree(str(a.tree_id))
        self.verify_tree(str(b.tree_id))
        try:
            d = a.tree.diff_to_tree(b.tree, context_lines=3)
            return d.patch or ""
        except pygit2.GitError as exc:
            raise _fault("diff", self.path, exc) from exc

    def _commit(self, oid: str) -> pygit2.Commit:
        """The commit ``oid``, with it and its root tree verified."""
        obj = self._object(oid, "a commit")
        if not isinstance(obj, pygit2.Commit):
            raise StorageFault(f"{oid} in {self.path} is not a commit.", path=str(self.path))
        self.verify(str(obj.tree_id), "a tree")
        return obj

    def _object(self, oid: str, kind: str) -> pygit2.Object:
        self.verify(oid, kind)
        try:
            return self._repo[oid]
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise StorageFault(
                f"Object {oid} ({kind}) is missing from {self.path}; the repository is damaged. "
                "Run `reverie doctor` to find the memory's last intact revision.",
                path=str(self.path),
                object=oid,
            ) from exc

    def _blob(self, oid: str, kind: str) -> bytes:
        """The content of the blob ``oid``: kept from its verification, else read by libgit2
        (verified first). A name is its content's hash, so what is kept cannot go stale."""
        content = self._blobs.get(oid)
        if content is not None:
            return content
        obj = self._object(oid, kind)
        if not isinstance(obj, pygit2.Blob):
            raise StorageFault(f"{oid} in {self.path} is not a blob.", path=str(self.path))
        content = self._blobs.get(oid)  # verified just now, as a loose object
        return content if content is not None else bytes(obj.read_raw())

    def verify(self, oid: str, kind: str = "an object") -> None:
        """Check a loose object before libgit2 reads it: whole zlib stream, a header that
        matches its length, and content that hashes to its name. A packed object is left to
        libgit2 (a pack is written whole before it gets its name).

        Raises:
            StorageFault: the object is damaged; the message names it.
        """
        if oid in self._verified:
            return
        try:
            data = _read_whole(f"{self._objects}/{oid[:2]}/{oid[2:]}")
        except FileNotFoundError:
            return  # packed, or missing: libgit2 says which
        except OSError as exc:
            raise _fault(f"read object {oid}", self.path, exc) from exc
        problem, raw = _loose_problem(oid, data)
        if problem is not None:
            raise StorageFault(
                f"Object {oid} ({kind}) in {self.path} is damaged ({problem}); git cannot read "
                "it. Run `reverie doctor`: it rebuilds what it can from the files and says what "
                "is left; where the newest revisions are damaged, it names the last intact one, "
                "which `reverie doctor AGENT --rewind` restores.",
                path=str(self.path),
                object=oid,
                problem=problem,
            )
        if len(self._verified) >= _VERIFIED_MAX:
            self._verified.clear()
        self._verified.add(oid)
        if raw.startswith(b"blob "):
            self._blobs[oid] = raw[raw.index(b"\x00") + 1 :]
            if len(self._blobs) > _BLOBS_KEPT:
                self._blobs.popitem(last=False)

    def verify_tree(self, tree_id: str) -> None:
        """:meth:`verify` a tree and everything under it (a memory's tree is two levels)."""
        if tree_id in self._walked:
            return
        self.verify(tree_id, "a tree")
        tree = self._repo[tree_id]
        for entry in tree:  # type: ignore[attr-defined]
            if entry.type_str == "tree":
                self.verify_tree(str(entry.id))
            else:
                self.verify(str(entry.id), f"a {entry.type_str}")
        if len(self._walked) >= _VERIFIED_MAX:
            self._walked.clear()
        self._walked.add(tree_id)

    # writing

    def commit(
        self,
        parent: str | None,
        changes: Mapping[str, str | None],
        message: str,
        writer: str,
        *,
        move: bool = True,
    ) -> str:
        """Commit ``changes`` (path to new text, ``None`` deletes) on top of ``parent``.

        The branch moves only if its tip is still ``parent``: that is the commit point. With
        ``move=False`` only the objects are written (a group commit's chain, whose branch
        :meth:`advance` moves once, to its last commit).
        """
        try:
            repo = self._repo
            base = self._commit(parent).tree if parent else None
            root = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
            topics = None
            for path, text in changes.items():
                if path == INDEX:
                    _put(repo, root, INDEX, text)
                    continue
                if topics is None:
                    sub = base[TOPIC_DIR] if base is not None and TOPIC_DIR in base else None
                    if sub is not None:
                        self.verify(str(sub.id), "a tree")
                    topics = repo.TreeBuilder(sub.id) if sub else repo.TreeBuilder()
                _put(repo, topics, path[len(TOPIC_DIR) + 1 :], text)
            if topics is not None:
                if len(topics):
                    root.insert(TOPIC_DIR, topics.write(), FileMode.TREE)
                elif base is not None and TOPIC_DIR in base:
                    root.remove(TOPIC_DIR)
            tree = root.write()
            now = int(time.time())
            sig = pygit2.Signature(f"reverie-{writer}", f"{writer}@reverie.local", now, 0)
            parents = [pygit2.Oid(hex=parent)] if parent else []
            oid = repo.create_commit(None, sig, sig, message, tree, parents)
        except (pygit2.GitError, OSError) as exc:
            raise _fault("commit", self.path, exc) from exc
        # On a nearly full disk libgit2 has answered a write as done and left an object cut
        # short or missing: every object of the commit is read back before the branch moves.
        self.verify_tree(str(tree))
        self.verify(str(oid), "a commit")
        if move:
            self.advance(parent, str(oid))
        return str(oid)

    def advance(self, parent: str | None, oid: str) -> None:
        """Move the branch from ``parent`` to the commit ``oid`` (a descendant whose objects
        are written and checked): the commit point.

        Raises:
            StorageFault: the branch is no longer at ``parent``, or could not be moved.
        """
        repo = self._repo
        try:
            if parent is None:
                repo.references.create(BRANCH, pygit2.Oid(hex=oid))
            else:
                # set_target moves the branch only if its tip is still the one it read: a
                # compare-and-swap that backs up the memory lock.
                ref = repo.references.get(BRANCH)
                if ref is None or str(ref.target) != parent:
                    raise pygit2.GitError(f"the branch is no longer at {parent}")
                ref.set_target(pygit2.Oid(hex=oid))
        except (pygit2.GitError, OSError) as exc:
            raise _fault("commit", self.path, exc) from exc
        self._moved(parent, oid, "commit")

    def _moved(self, before: str | None, after: str, action: str) -> None:
        """Check that the branch now points at ``after``. On a nearly full disk libgit2 has
        answered a branch update as done while the branch stayed where it was: then the
        commit point was not reached, and that is a fault, not a success.

        Raises:
            StorageFault: the branch is still elsewhere.
        """
        head = self.head()
        if head != after:
            stayed = f"the branch stayed at {head or 'nothing'}, not {after}"
            raise _fault(action, self.path, OSError(f"{stayed} (from {before or 'nothing'})"))

    def reset_branch(self, target: str, expected: str) -> None:
        """Move the branch back to ``target``, if its tip is still ``expected``: undoes a commit
        whose write was refused after the commit point. Call under the memory lock.

        Raises:
            StorageFault: the reference could not be written (a full or read-only disk).
        """
        try:
            ref = self._repo.references.get(BRANCH)
            if ref is None or str(ref.target) != expected:
                return
            ref.set_target(pygit2.Oid(hex=target))
        except (pygit2.GitError, OSError) as exc:
            raise _fault("reset", self.path, exc) from exc
        self._moved(expected, target, "reset")

    def checkout(self, paths: list[str] | None = None) -> None:
        """Make the working tree (and git's index) match ``HEAD`` for ``paths`` (or all).

        With ``paths`` (the files a write changed), each is written from its blob at ``HEAD``,
        or removed when ``HEAD`` has none, and only its entry in git's index is updated (a
        libgit2 checkout compares the tree with git's index and the disk first, and writes each
        file as a new one). The rest of the tree is left alone, as a checkout limited to
        ``paths`` leaves it. A crash half-way leaves the write marker, and recovery then checks
        out everything (``paths=None``).
        """
        head = self.head()
        if head is None:
            return
        commit = self._commit(head)
        self.verify_tree(str(commit.tree_id))
        try:
            if paths is None:
                # A writer killed inside an earlier checkout can leave git's index at an older
                # revision; a checkout compares against that index, so reset it to HEAD first.
                index = self._repo.index
                index.read_tree(commit.tree)
                index.write()
                self._repo.checkout_head(  # type: ignore[no-untyped-call]
                    strategy=CheckoutStrategy.FORCE | CheckoutStrategy.REMOVE_UNTRACKED
                )
            else:
                self._write_paths(commit.tree, paths)
        except (pygit2.GitError, OSError) as exc:
            raise _fault("checkout", self.path, exc) from exc

    def _write_paths(self, tree: pygit2.Tree, paths: list[str]) -> None:
        """Write ``paths`` into the working tree and git's index as ``tree`` holds them."""
        index = self._repo.index
        # Read again from disk: another process may have written it since, and libgit2 can miss
        # that (it compares time, size and inode: a rewrite within one tick of the file
        # system's coarse clock, of the same size, in a freed inode, looks unchanged).
        index.read(True)
        for path in paths:
            target = self.path / path
            try:
                entry = tree[path]
            except KeyError:
                entry = None
            if entry is None:
                target.unlink(missing_ok=True)
                if path in index:
                    index.remove(path)
                if target.parent != self.path:  # the topic folder, gone with its last file
                    with contextlib.suppress(OSError):
                        target.parent.rmdir()
                continue
            content = self._blob(str(entry.id), f"the blob of {path}")
            target.parent.mkdir(exist_ok=True)
            _overwrite(target, content)
            # The entry names the blob without the file's stat: git compares the file's content
            # with it on the next `git status` (hashing the file again would write a temporary
            # object, which costs as much as the file itself).
            index.add(pygit2.IndexEntry(path, entry.id, FileMode.BLOB))
        index.write()

    def pack_loose(self) -> int:
        """Move every loose object into one new pack file, then delete the loose copies.

        Returns the number of objects packed. Call under the memory lock. A kill at any point
        loses nothing: libgit2 writes the pack under a temporary name and renames it only when
        its index is written, and the loose copies go only after that. Readers in other
        processes are safe too: an object missing from the loose store is looked up again in
        the packs. Packs are merged by :meth:`merge_packs`.

        Raises:
            StorageFault: libgit2 could not write the pack (nothing was deleted).
        """
        objects = self.path / ".git" / "objects"
        loose = [p for p in _fanout_files(objects) if _LOOSE.match(p.parent.name + p.name)]
        if not loose:
            return 0
        for p in loose:  # libgit2 would spin on a damaged one
            self.verify(p.parent.name + p.name)

        def add_all(builder: pygit2.PackBuilder) -> None:
            for p in loose:
                builder.add(pygit2.Oid(hex=p.parent.name + p.name))

        try:
            written = self._repo.pack(pack_delegate=add_all)
        except (pygit2.GitError, ValueError, OSError) as exc:
            raise _fault("pack", self.path, exc) from exc
        if written != len(loose):
            raise StorageFault(
                f"git pack wrote {written} of {len(loose)} objects in {self.path}; the loose "
                "objects were kept.",
                path=str(self.path),
            )
        for p in loose:
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
        return written

    def merge_packs(self) -> bool:
        """Past ``MAX_PACKS`` packs, merge them with ``git repack --geometric=2 -d``.

        Returns whether a merge ran. libgit2 cannot do this well: its pack builder computes
        every delta anew and, over thousands of versions of one file, ends with packs several
        times larger than the small ones it merges; ``git repack`` reuses the deltas (six packs
        of 1.0 MB became one of 0.91 MB in 0.12 s; see docs/benchmarks.md). Without ``git`` on
        the PATH nothing is merged and packs accumulate. Call under the memory lock; git writes
        the new pack before it deletes the old ones, and a kill leaves only temporary files
        (:meth:`remove_crash_leftovers`).

        Raises:
            StorageFault: git failed (its message says why); the packs are as they were.
        """
        packs = list((self.path / ".git" / "objects" / "pack").glob("pack-*.pack"))
        git = shutil.which("git")
        if len(packs) <= MAX_PACKS or git is None:
            return False
        try:
            done = subprocess.run(
                [git, "-C", str(self.path), "repack", "--geometric=2", "-d", "-q"],
                capture_output=True,
                text=True,
                env=git_environment(),
                timeout=600,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise _fault("repack", self.path, exc) from exc
        if done.returncode != 0:
            raise _fault("repack", self.path, RuntimeError(done.stderr.strip()[-500:]))
        self.refresh()  # drop the deleted packs from libgit2's list
        return True

    # checks and repairs (reverie doctor)

    def damaged_objects(self, commit: str) -> list[Damage]:
        """The damaged or missing objects of one commit: itself, its trees and blobs. Unlike
        the reads, it goes on past the first, so that a report names them all."""
        found: list[Damage] = []

        def check(oid: str, kind: str) -> bool:
            try:
                self.verify(oid, kind)
                self._repo[oid]  # a missing object raises
            except (StorageFault, KeyError, ValueError, pygit2.GitError) as exc:
                problem = (
                    str(exc.details.get("problem", exc.message))
                    if isinstance(exc, StorageFault)
                    else "missing"
                )
                found.append(Damage(oid, kind, problem))
                return False
            return True

        if not check(commit, "a commit"):
            return found
        stack = [(str(self._repo[commit].tree_id), "")]  # type: ignore[attr-defined]
        while stack:
            tree_id, prefix = stack.pop()
            if not check(tree_id, f"the tree {prefix or '/'}"):
                continue
            for entry in self._repo[tree_id]:  # type: ignore[attr-defined]
                path = f"{prefix}{entry.name}"
                if entry.type_str == "tree":
                    stack.append((str(entry.id), f"{path}/"))
                else:
                    check(str(entry.id), f"the blob of {path}")
        return found

    def loose_damage(self) -> list[Damage]:
        """Every loose object file that is damaged, whether any revision uses it or not."""
        objects = self.path / ".git" / "objects"
        found = []
        for p in _fanout_files(objects):
            oid = p.parent.name + p.name
            if not _LOOSE.match(oid):
                continue
            try:
                problem, _ = _loose_problem(oid, p.read_bytes())
            except OSError as exc:
                problem = str(exc)
            if problem is not None:
                found.append(Damage(oid, "an object", problem))
        return found

    def restore(self, oid: str, kind: str, body: bytes) -> bool:
        """Write the loose object ``oid`` again from its content, if ``kind`` and ``body`` hash
        to ``oid`` (nothing else can be written under its name). Returns whether it did.

        Raises:
            StorageFault: the object file cannot be written.
        """
        if object_id(kind, body) != oid:
            return False
        raw = f"{kind} {len(body)}".encode() + b"\x00" + body
        path = self.path / ".git" / "objects" / oid[:2] / oid[2:]
        temp = path.with_name(f"tmp_object_git2_reverie_{os.getpid()}")
        try:
            path.parent.mkdir(exist_ok=True)
            temp.write_bytes(zlib.compress(raw))
            os.replace(temp, path)
        except OSError as exc:
            raise _fault(f"restore object {oid}", self.path, exc) from exc
        self._verified.discard(oid)
        self._blobs.pop(oid, None)
        self._walked.clear()
        self.refresh()
        return True

    def quarantine(self, oid: str) -> bool:
        """Move a loose object file to ``.git/reverie-damaged/`` (where nothing reads it, and
        nothing is lost); whether it was there. Call under the memory lock."""
        path = self.path / ".git" / "objects" / oid[:2] / oid[2:]
        aside = self.path / ".git" / "reverie-damaged"
        try:
            aside.mkdir(exist_ok=True)
            os.replace(path, aside / oid)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise _fault(f"move object {oid} aside", self.path, exc) from exc
        self._verified.discard(oid)
        self._blobs.pop(oid, None)
        self._walked.clear()
        return True

    def working_files(self) -> dict[str, bytes]:
        """The memory files of the working tree (a copy of ``HEAD`` after each write)."""
        out = {}
        for path in [self.path / INDEX, *sorted((self.path / TOPIC_DIR).glob("*.md"))]:
            relative = path.relative_to(self.path).as_posix()
            if path.is_file() and (relative == INDEX or is_topic(relative)):
                with contextlib.suppress(OSError):  # an unreadable copy is no copy
                    out[relative] = path.read_bytes()
        return out

    def set_branch(self, oid: str) -> None:
        """Point the branch at ``oid``, whatever it points at now (``reverie doctor`` only,
        under the memory lock).

        Raises:
            StorageFault: the reference cannot be written.
        """
        try:
            self._repo.references.create(BRANCH, pygit2.Oid(hex=oid), force=True)
        except (pygit2.GitError, OSError) as exc:
            raise _fault("move the branch", self.path, exc) from exc
        self._moved(None, oid, "move the branch")

    def remove_crash_leftovers(self) -> list[str]:
        """Delete the lock files and half-written temporary objects and packs a killed writer
        left in ``.git``. Call only under the memory lock: then no live writer owns them.

        Raises:
            StorageFault: a leftover could not be deleted (a read-only or failing disk).
        """
        removed = []
        gitdir = self.path / ".git"
        objects = gitdir / "objects"
        packs = objects / "pack"
        leftovers = [
            *gitdir.glob("*.lock"),
            *gitdir.glob("refs/**/*.lock"),
            *gitdir.glob("objects/tmp_object_git2_*"),
            *(p for p in _fanout_files(objects) if p.name.startswith("tmp_object_git2_")),
            *packs.glob("pack_git2_*"),
            *packs.glob("*.lock"),
            *packs.glob("tmp_*"),  # git repack's temporary pack and index
            *packs.glob(".tmp-*"),
            # an index whose pack never got its final name (git and libgit2 ignore it)
            *(i for i in packs.glob("pack-*.idx") if not i.with_suffix(".pack").exists()),
            # a pack whose index never got its own (git renames the index last): unused by
            # git and libgit2, its objects still loose or in the packs it was merging; left
            # alone for an hour, in case a git command of the user's is still writing it
            *(
                p.with_suffix(suffix)
                for p in packs.glob("pack-*.pack")
                if _unindexed_and_old(p)
                for suffix in (".pack", ".rev", ".bitmap", ".mtimes")
                if p.with_suffix(suffix).exists()
            ),
        ]
        for lock in leftovers:
            try:
                lock.unlink()
            except FileNotFoundError:
                continue
            except OSError as exc:
                # a read-only or failing disk: a storage fault, which a reader meets by serving
                # the last recorded revision, not a raw error
                raise _fault("remove a killed writer's leftover", self.path, exc) from exc
            removed.append(str(lock.relative_to(self.path)))
        return removed


#: A pack without an index older than this (seconds) is a killed writer's leftover.
UNINDEXED_PACK_AGE = 3600.0


def _unindexed_and_old(pack: Path) -> bool:
    """Whether ``pack`` has no index beside it and was last written over
    :data:`UNINDEXED_PACK_AGE` seconds ago."""
    if pack.with_suffix(".idx").exists():
        return False
    try:
        return time.time() - pack.stat().st_mtime > UNINDEXED_PACK_AGE
    except FileNotFoundError:
        return False


def object_id(kind: str, body: bytes) -> str:
    """The name git gives an object of this kind and content (SHA-1 of header and body)."""
    return hashlib.sha1(f"{kind} {len(body)}".encode() + b"\x00" + body).hexdigest()


def blob_id(data: bytes) -> str:
    """The object name git gives a file with this content."""
    return object_id("blob", data)


def tree_body(entries: Mapping[str, tuple[str, str]]) -> bytes:
    """The content of a tree object: ``name`` to ``(mode, oid)``, in git's order (a directory
    sorts as if its name ended in '/')."""
    names = sorted(entries, key=lambda n: n + "/" if entries[n][0] == "40000" else n)
    return b"".join(
        f"{entries[n][0]} {n}".encode() + b"\x00" + bytes.fromhex(entries[n][1]) for n in names
    )


def _loose_problem(oid: str, data: bytes) -> tuple[str | None, bytes]:
    """What is wrong with a loose object's file (``None`` when it is whole), and the object
    it holds (header and content; empty when it cannot be read)."""
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(data)
    except zlib.error:
        return "not a valid zlib stream", b""
    if not inflater.eof:
        return f"cut short at {len(data)} bytes", b""
    header = _HEADER.match(raw)
    if header is None:
        return "no object header", b""
    if int(header.group(2)) != len(raw) - header.end():
        return "its length does not match its header", b""
    if hashlib.sha1(raw).hexdigest() != oid:  # git names objects by SHA-1
        return "its content does not match its name", b""
    return None, raw


def _fanout_files(objects: Path) -> list[Path]:
    """The files in the ``objects/??`` directories. A directory that vanishes while it is
    listed is skipped: a ``git repack`` left running by a killed writer removes the emptied
    ones (its work is safe to race with: it deletes nothing it has not packed)."""
    try:
        with os.scandir(objects) as top:
            folders = [e.path for e in top if len(e.name) == 2]
    except FileNotFoundError:
        return []
    found: list[Path] = []
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                found += [Path(e.path) for e in entries]
        except (FileNotFoundError, NotADirectoryError):
            continue
    return found


def _read_whole(path: str) -> bytes:
    """The whole content of the file at ``path`` in four system calls (``open``, ``fstat``,
    ``read``, ``close``; Python's buffered ``open().read()`` makes nine): every write reads
    its new objects back this way.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        asked = os.fstat(fd).st_size + 1
        data = os.read(fd, asked)
        if len(data) < asked:  # a short read of a regular file: its end
            return data
        parts = [data]  # longer than it was a moment ago: read on to the end
        while part := os.read(fd, 1 << 16):
            parts.append(part)
        return b"".join(parts)
    finally:
        os.close(fd)


def _overwrite(path: Path, data: bytes) -> None:
    """Write ``data`` into the file at ``path`` in place (creating it if needed).

    In place, because creating a file costs ten times more than rewriting one on the disks we
    measured. A link planted at ``path`` is replaced, never followed.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        path.unlink()
        fd = os.open(path, flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _put(repo: pygit2.Repository, builder: pygit2.TreeBuilder, name: str, text: str | None) -> None:
    if text is None:
        if builder.get(name) is not None:
            builder.remove(name)
        return
    builder.insert(name, repo.create_blob(text.encode("utf-8")), FileMode.BLOB)
