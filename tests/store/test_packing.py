"""Loose git objects are packed every ``pack_every`` revisions, and nothing is lost by it.

Real git (``git fsck``, ``git count-objects``) checks the repository; a second process that
opened the memory before the pack reads every revision after it. Kills inside packing are in
``test_crash.py`` (the ``inside_pack`` step, and the random campaign, which packs every
``PACK_EVERY`` revisions).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _writer import MARKER
from test_pipeline import add, git, repo_of

from reverie import Reverie, Settings
from reverie.errors import StorageFault
from reverie.store import gitrepo
from reverie.store.gitrepo import GitRepo

EVERY = 10

#: git's packs: the embedded store's own machinery.
pytestmark = pytest.mark.sqlite_only


@pytest.fixture
def prv(home: Path) -> Reverie:
    r = Reverie(settings=Settings.load(home, pack_every=EVERY), create=True)
    r.create_agent("ada")
    return r


def loose_count(repo: Path) -> int:
    counts = dict(
        line.split(": ") for line in git(repo, "count-objects", "-v").splitlines() if ": " in line
    )
    return int(counts["count"])


def packs(repo: Path) -> list[Path]:
    return sorted((repo / ".git" / "objects" / "pack").glob("pack-*.pack"))


def texts_at_every_revision(r: Reverie, upto: int) -> list[str]:
    return [r.memory_read("ada", revision=n).text for n in range(upto + 1)]


def test_loose_objects_are_packed_every_pack_every_revisions(prv: Reverie) -> None:
    repo = repo_of(prv)
    for i in range(1, EVERY):
        prv.memory_apply("ada", add(f"fact {i}"))
    before = loose_count(repo)
    assert before >= 3 * (EVERY - 1) and packs(repo) == []
    expected = texts_at_every_revision(prv, EVERY - 1)
    out = prv.memory_apply("ada", add(f"fact {EVERY}"))
    assert out.revision == EVERY and out.diagnostics == []
    assert loose_count(repo) == 0
    assert len(packs(repo)) == 1
    assert texts_at_every_revision(prv, EVERY - 1) == expected
    assert f"fact {EVERY}" in prv.memory_read("ada").text
    git(repo, "fsck", "--full", "--no-dangling")
    assert git(repo, "status", "--porcelain") == ""
    # the next writes are loose again until the next multiple
    prv.memory_apply("ada", add("fact after the pack"))
    assert loose_count(repo) > 0 and len(packs(repo)) == 1
    for i in range(EVERY + 2, 2 * EVERY + 1):
        prv.memory_apply("ada", add(f"fact {i}"))
    assert loose_count(repo) == 0 and len(packs(repo)) == 2
    assert len(git(repo, "rev-list", "HEAD").split()) == 2 * EVERY + 1


def test_packing_is_off_with_zero(home: Path) -> None:
    r = Reverie(settings=Settings.load(home, pack_every=0), create=True)
    r.create_agent("ada")
    for i in range(EVERY):
        r.memory_apply("ada", add(f"fact {i}"))
    assert packs(repo_of(r)) == [] and loose_count(repo_of(r)) > 0


_READER = """
import json, sys
from reverie import Reverie
r = Reverie(sys.argv[1])
r.memory_read("ada", revision=0)  # the repository is open, its object store looked at
print("ready", flush=True)
sys.stdin.readline()  # the other process writes and packs meanwhile
print(json.dumps([r.memory_read("ada", revision=n).text for n in range(int(sys.argv[2]) + 1)]))
"""


def test_a_reader_in_another_process_reads_every_revision_after_a_pack(prv: Reverie) -> None:
    # The reader opened the memory while every object was loose; it then reads objects it has
    # never read, which exist only in the pack by then.
    reader = subprocess.Popen(
        [sys.executable, "-c", _READER, str(prv.home), str(EVERY)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert reader.stdout is not None and reader.stdin is not None
    try:
        assert reader.stdout.readline().strip() == "ready"
        for i in range(1, EVERY + 1):
            prv.memory_apply("ada", add(f"fact {i}"))
        assert loose_count(repo_of(prv)) == 0
        reader.stdin.write("go\n")
        reader.stdin.flush()
        seen = json.loads(reader.stdout.readline())
        assert seen == texts_at_every_revision(prv, EVERY)
        assert "fact 1" in seen[1] and f"fact {EVERY}" in seen[EVERY]
    finally:
        reader.kill()
        reader.wait()


def test_a_failed_pack_is_reported_and_the_write_stands(
    prv: Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: GitRepo) -> int:
        raise StorageFault("disk full", path=str(self.path))

    monkeypatch.setattr(GitRepo, "pack_loose", broken)
    for i in range(1, EVERY):
        prv.memory_apply("ada", add(f"fact {i}"))
    out = prv.memory_apply("ada", add("the write that packs"))
    assert out.changed and out.revision == EVERY
    assert [d["code"] for d in out.diagnostics] == ["pack_failed"]
    assert "the write that packs" in prv.memory_read("ada").text
    assert not (repo_of(prv) / ".git" / MARKER).exists()  # the write completed
    monkeypatch.undo()
    # the next pack takes every loose object, those of the failed one included
    for i in range(EVERY + 1, 2 * EVERY + 1):
        prv.memory_apply("ada", add(f"fact {i}"))
    assert loose_count(repo_of(prv)) == 0


def test_leftovers_of_a_killed_pack_are_removed_and_complete_packs_kept(prv: Reverie) -> None:
    for i in range(1, EVERY + 1):
        prv.memory_apply("ada", add(f"fact {i}"))
    repo = repo_of(prv)
    pack_dir = repo / ".git" / "objects" / "pack"
    (complete,) = packs(repo)
    left = [
        pack_dir / "pack_git2_a1b2c3",  # libgit2's pack being written
        pack_dir / ("pack-" + "0" * 40 + ".idx"),  # an index whose pack never got its name
        pack_dir / "tmp_pack_Xy12ab",  # git repack's
        pack_dir / ".tmp-4242-pack-abc.pack",
    ]
    # git repack killed after it named its pack, before the index (git names that last): the
    # pack and its reverse index, written an hour and more ago
    unindexed = [pack_dir / ("pack-" + "1" * 40 + s) for s in (".pack", ".rev")]
    # the same, written a moment ago: a git command of the user's may still be writing it
    recent = pack_dir / ("pack-" + "2" * 40 + ".pack")
    for path in [*left, *unindexed, recent]:
        path.write_bytes(b"half")
    for path in unindexed:
        os.utime(path, (time.time() - 3700, time.time() - 3700))
    removed = GitRepo(repo).remove_crash_leftovers()
    assert sorted(Path(p).name for p in removed) == sorted(p.name for p in left + unindexed)
    assert recent.exists()
    recent.unlink()
    assert packs(repo) == [complete] and complete.with_suffix(".idx").exists()
    git(repo, "fsck", "--full", "--no-dangling")


# merging packs (git repack --geometric, when git is on the PATH)


def test_packs_are_merged_past_max_packs(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gitrepo, "MAX_PACKS", 3)
    r = Reverie(settings=Settings.load(home, pack_every=2), create=True)
    r.create_agent("ada")
    repo = repo_of(r)
    seen = []
    for i in range(1, 31):
        r.memory_apply("ada", add(f"fact {i}"))
        seen.append(len(packs(repo)))
    # the write that makes a fourth pack merges them: never more than three are left
    assert max(seen) == 3 and seen.count(1) >= 3
    assert loose_count(repo) == 0
    texts = texts_at_every_revision(r, 30)
    assert all(f"fact {n}" in texts[n] for n in range(1, 31))
    git(repo, "fsck", "--full", "--no-dangling")
    assert git(repo, "status", "--porcelain") == ""


def test_without_git_packs_accumulate(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gitrepo, "MAX_PACKS", 3)
    monkeypatch.setattr(gitrepo.shutil, "which", lambda name: None)
    r = Reverie(settings=Settings.load(home, pack_every=2), create=True)
    r.create_agent("ada")
    for i in range(1, 13):
        out = r.memory_apply("ada", add(f"fact {i}"))
        assert out.diagnostics == []
    assert len(packs(repo_of(r))) == 6


def test_a_failed_merge_is_reported_and_the_write_stands(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gitrepo, "MAX_PACKS", 1)
    monkeypatch.setattr(gitrepo.shutil, "which", lambda name: "/bin/false")  # git that fails
    r = Reverie(settings=Settings.load(home, pack_every=2), create=True)
    r.create_agent("ada")
    r.memory_apply("ada", add("fact 1"))
    r.memory_apply("ada", add("fact 2"))  # first pack
    r.memory_apply("ada", add("fact 3"))
    out = r.memory_apply("ada", add("fact 4"))  # second pack, and a merge that fails
    assert out.changed and out.revision == 4
    assert [d["code"] for d in out.diagnostics] == ["pack_failed"]
    assert "repack" in out.diagnostics[0]["message"]
    assert len(packs(repo_of(r))) == 2 and "fact 4" in r.memory_read("ada").text
    git(repo_of(r), "fsck", "--full", "--no-dangling")


def test_a_long_lived_handle_reopens_once_packs_change(prv: Reverie) -> None:
    # libgit2 would keep looking through packs that a merge deleted; a handle reopens when
    # the pack directory changed, and only then.
    handle = GitRepo(repo_of(prv))
    opened = handle._repo
    prv.memory_apply("ada", add("fact 1"))
    handle.refresh()
    assert handle._repo is opened  # a loose write: the packs did not change
    for i in range(2, EVERY + 1):
        prv.memory_apply("ada", add(f"fact {i}"))
    handle.refresh()
    assert handle._repo is not opened
    head = handle.head()
    assert head is not None and f"fact {EVERY}" in handle.files(head)["MEMORY.md"]
