"""Crashes at any instant leave a committed revision (SPEC W8), and keys survive them (W7).

Real git, real SQLite, real SIGKILL: a writer process (``_writer.py``) writes checkable batches
to one memory and is killed after a random delay, ~150 times; then this process opens the home
and proves that every acknowledged revision is intact, that no revision holds part of a batch,
that git and the search index agree with the files, and that idempotency keys replay across
crashes. A second group kills the writer at each step of the pipeline on purpose, so that
every window is covered on every run, not only when the random delays hit it. The long campaign
is ``bench/crash_campaign.py``.
"""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2
import pytest
from _writer import (
    HERE,
    MARKER,
    PACK_EVERY,
    STEPS,
    Campaign,
    check_acks,
    check_fsck,
    check_git,
    check_index,
    check_resend,
    check_revisions,
    expected_files,
    fts_integrity,
    git_files,
    git_status,
    head_files,
    history_oids,
    make_batch,
    memory_repo,
    oracle,
    read_acks,
    run_campaign,
    worktree_problems,
    write_forever,
    writer_env,
)
from pygit2.enums import FileMode

from reverie import Reverie
from reverie.core.markdown import new_index
from reverie.core.paths import INDEX
from reverie.store.gitrepo import MAX_PACKS

AGENT = "ada"
KILLS = 150
SEED = 8_2024
#: Every 15th writer is started with exec (a whole interpreter), the others are forked.
EXEC_EVERY = 15


@dataclass
class Verified:
    """A finished campaign and what each check found (empty lists: nothing wrong)."""

    campaign: Campaign
    acks: list[dict[str, Any]]
    repo: Path
    head_after_recovery: int
    problems: dict[str, list[str]] = field(default_factory=dict)
    rows_before_reindex: Counter[tuple[str, str]] = field(default_factory=Counter)
    rows_after_reindex: Counter[tuple[str, str]] = field(default_factory=Counter)
    status_after_recovery: str = ""
    status_at_end: str = ""
    packs: int = 0


def new_home(root: Path) -> Path:
    """A home with agent ``ada`` at revision 0."""
    home = root / "home"
    with Reverie(home, create=True) as r:
        r.create_agent(AGENT)
    return home


def verify(campaign: Campaign) -> Verified:
    """Run every check on a campaign's home (this resends two batches: see check_resend)."""
    home = campaign.home
    acks = read_acks(campaign.acks)
    repo = memory_repo(home, AGENT)
    with Reverie(home) as r:
        head = r.memory_read(AGENT).revision  # the first access recovers from the last kill
        v = Verified(campaign, acks, repo, head)
        v.packs = len(list((repo / ".git" / "objects" / "pack").glob("pack-*.pack")))
        v.problems["fsck_after_recovery"] = check_fsck(repo)
        v.problems["worktree_after_recovery"] = worktree_problems(repo)
        v.status_after_recovery = git_status(repo)
        v.problems["resend"] = check_resend(r, AGENT, acks, repo)
        oids = history_oids(r, AGENT)
        v.problems["acks"] = check_acks(r, AGENT, acks, repo, oids)
        v.problems["revisions"] = check_revisions(repo, oids)
        v.problems["fsck"] = check_fsck(repo)
        v.problems["worktree"] = worktree_problems(repo)
        v.status_at_end = git_status(repo)
        v.problems["index"] = check_index(r, AGENT, repo)
        v.problems["fts"] = fts_integrity(home)
        memory_id = r.state.memory_of(r.agent(AGENT).id)
        v.rows_before_reindex = r.memories.index_rows(memory_id)
        r.reindex(AGENT)
        v.rows_after_reindex = r.memories.index_rows(memory_id)
        v.problems["search"] = _search_problems(r, len(oids) - 1)
    return v


def _search_problems(r: Reverie, newest: int) -> list[str]:
    problems = []
    for part, source in (("a", INDEX), ("b", f"memory/t{newest % 7}.md")):
        line = f"fact {newest} part {part}"
        hits = r.memory_search(AGENT, line, limit=20)
        if not any(h.source == source and line in h.excerpt for h in hits):
            problems.append(f"search for {line!r} misses it in {source}: {hits[:3]}")
    return problems


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Verified:
    root = tmp_path_factory.mktemp("crash")
    home = new_home(root)
    done = run_campaign(
        home,
        AGENT,
        root / "acks.jsonl",
        root / "writer.log",
        kills=KILLS,
        seed=SEED,
        exec_every=EXEC_EVERY,
    )
    return verify(done)


# the campaign


def test_w8_campaign_kills_writers_inside_the_write(campaign: Verified) -> None:
    """The campaign is not vacuous: writers wrote, and kills landed mid-write and mid-ack."""
    c = campaign.campaign
    assert c.kills == KILLS
    assert c.checked == KILLS // 2  # this process recovered after every other kill
    assert c.exec_runs == KILLS // EXEC_EVERY
    assert len(campaign.acks) > KILLS, "the writers acknowledged too few writes"
    # between the marker and its removal: inside commit, SQLite transaction or checkout
    assert c.landed["marker"] >= KILLS // 10, c.landed
    # after the branch moved, before the state database recorded the revision
    assert c.landed["git_ahead_of_db"] >= 1, c.landed
    # committed, but killed before its ack was written: the restarted writer's key replays it
    resent = [a for a in campaign.acks if "head_before" in a]
    assert sum(a["replayed"] for a in resent) >= 1
    assert sum(not a["replayed"] for a in resent) >= 1


def test_w8_every_acknowledged_revision_is_intact_and_gap_free(campaign: Verified) -> None:
    """memory_read(revision=r) gives back what was acknowledged for r; revisions are 0..N."""
    last_ack = campaign.acks[-1]["revision"]
    assert campaign.head_after_recovery >= last_ack
    assert campaign.problems["acks"] == []


def test_w8_no_revision_holds_part_of_a_batch(campaign: Verified) -> None:
    """At every revision 0..N each batch is wholly there or wholly absent (the oracle)."""
    assert campaign.problems["revisions"] == []


def test_w8_git_is_sound_after_the_campaign(campaign: Verified) -> None:
    """``git fsck --full`` passes; no lock file or write marker is left after recovery."""
    assert campaign.problems["fsck_after_recovery"] == []
    assert campaign.problems["fsck"] == []


def test_w8_working_tree_and_git_index_are_head_after_every_recovery(campaign: Verified) -> None:
    """After each recovery (every other kill, and the last) the files and git's index are HEAD.

    Files on disk are compared with HEAD's blobs; ``git status --porcelain`` must be empty.
    """
    c = campaign.campaign
    assert c.worktree_bad == []
    assert campaign.problems["worktree_after_recovery"] == []
    assert campaign.problems["worktree"] == []
    assert c.status_dirty == []
    assert campaign.status_after_recovery == ""
    assert campaign.status_at_end == ""


def test_w8_index_matches_files_and_reindex_changes_nothing(campaign: Verified) -> None:
    """The search index equals the files at the current revision, before and after reindex."""
    assert campaign.problems["index"] == []
    assert campaign.problems["fts"] == []
    assert campaign.rows_before_reindex == campaign.rows_after_reindex
    assert campaign.problems["search"] == []


def test_w8_writers_packed_and_merged_their_objects_between_kills(campaign: Verified) -> None:
    """Writers pack every ``PACK_EVERY`` revisions and merge packs past ``MAX_PACKS`` (with
    git), so kills land inside both; the checks above (fsck, every revision's files) then
    cover packed and merged objects."""
    packed = campaign.head_after_recovery // PACK_EVERY  # writes that packed (about 120 here)
    # Bounded by merging once there are more than MAX_PACKS; a kill inside a merge can leave
    # the new pack beside the old ones until the next merge.
    assert 0 < campaign.packs <= min(packed, MAX_PACKS + 2)


def test_w7_keys_replay_across_crashes(campaign: Verified) -> None:
    """A batch committed but not acknowledged replays under its key; others apply once."""
    resent = [a for a in campaign.acks if "head_before" in a]
    assert all(a["replayed"] == (a["head_before"] == a["revision"]) for a in resent)
    assert campaign.problems["resend"] == []


# the checks can fail


def test_w8_checks_catch_damage(campaign: Verified, tmp_path: Path) -> None:
    """Each check flags a copy of the campaign's home damaged in the way it guards against."""
    home = tmp_path / "home"
    shutil.copytree(campaign.campaign.home, home)
    acks = [dict(a) for a in campaign.acks]
    repo_path = memory_repo(home, AGENT)
    with Reverie(home) as r:
        oids = history_oids(r, AGENT)
        assert check_git(repo_path) == []
        assert check_index(r, AGENT, repo_path) == []
        assert check_acks(r, AGENT, acks[-20:], repo_path, oids, acks[-20]["revision"]) == []
    repo = pygit2.Repository(str(repo_path))

    # A half-applied batch: part a of the next batch committed without part b, as if a writer
    # had committed half its batch before dying. Recovery adopts the commit; the oracle flags it.
    n = len(oids)
    batch = make_batch(n, git_files(repo, oids[-1]))
    half = expected_files(batch, git_files(repo, oids[-1]))[INDEX]
    base = repo[oids[-1]]
    assert isinstance(base, pygit2.Commit)
    builder = repo.TreeBuilder(base.tree)
    builder.insert(INDEX, repo.create_blob(half.encode()), FileMode.BLOB)
    sig = pygit2.Signature("reverie-api", "api@reverie.local")
    message = f"half a batch\n\nReverie-Revision: {n}\nReverie-Writer: api\n"
    repo.create_commit("refs/heads/main", sig, sig, message, builder.write(), [base.id])
    (repo_path / ".git" / MARKER).touch()
    with Reverie(home) as r:
        assert r.memory_read(AGENT).revision == n
        oids = history_oids(r, AGENT)
    found = check_revisions(repo_path, oids)
    assert f"r{n}: part b of facts [{n}] missing" in found
    assert all(p.startswith(f"r{n}:") for p in found), found

    # A lost index row.
    with closing(sqlite3.connect(home / "reverie.db")) as conn, conn:
        conn.execute("DELETE FROM memory_lines WHERE id = (SELECT max(id) FROM memory_lines)")
    with Reverie(home) as r:
        assert check_index(r, AGENT, repo_path) != []

    # An acknowledged revision whose content changed.
    acks[-1]["index_sha"] = "0" * 64
    with Reverie(home) as r:
        found = check_acks(r, AGENT, acks[-3:], repo_path, oids, acks[-3]["revision"])
    assert found == [f"r{acks[-1]['revision']}: {INDEX} differs from what was acknowledged"]

    # A working tree that is not HEAD.
    (repo_path / INDEX).write_text("edited by hand\n")
    (repo_path / "memory" / "stray.md").write_text("not in git\n")
    found = check_git(repo_path)
    assert f"working tree: {INDEX} differs from HEAD" in found
    assert "working tree: memory/stray.md is not in HEAD" in found

    # A gap in the revisions.
    with closing(sqlite3.connect(home / "reverie.db")) as conn, conn:
        conn.execute("DELETE FROM revisions WHERE revision = 5")
    with Reverie(home) as r, pytest.raises(AssertionError, match=r"missing \[5\]"):
        history_oids(r, AGENT)

    # A lost git object: the blob of memory/scratch.md that only revisions 1 and 2 hold. The
    # writers packed their objects; unpack them first, so that the blob is a file of its own.
    blob = pygit2.hash(git_files(repo, oids[1])["memory/scratch.md"].encode())
    assert blob.raw == repo[oids[1]].tree["memory/scratch.md"].id.raw
    for pack in sorted((repo_path / ".git" / "objects" / "pack").glob("pack-*.pack")):
        moved = tmp_path / pack.name
        pack.rename(moved)
        # A writer killed while packing can leave a pack whose index never got its final name
        # (git reads no pack without one; its objects are still loose, or in the packs being
        # merged): unpacked all the same.
        pack.with_suffix(".idx").unlink(missing_ok=True)
        with moved.open("rb") as data:
            subprocess.run(
                ["git", "-C", str(repo_path), "unpack-objects", "-q"], stdin=data, check=True
            )
    assert check_fsck(repo_path) == []  # the unpacked store is whole
    (repo_path / ".git" / "objects" / str(blob)[:2] / str(blob)[2:]).unlink()
    assert any("git fsck --full exited" in p for p in check_git(repo_path))


def test_w8_oracle_flags_each_kind_of_partial_batch() -> None:
    """The oracle knows revision r exactly: any one missing or extra piece is flagged."""
    files = {INDEX: new_index()}
    states = [dict(files)]
    for n in range(1, 60):
        files = expected_files(make_batch(n, files), files)
        states.append(dict(files))
    assert all(oracle(r, s) == [] for r, s in enumerate(states))
    r, good = 55, states[55]
    damaged = [
        {**good, INDEX: good[INDEX].replace("- fact 55 part a\n", "")},  # part a lost
        {**good, "memory/t6.md": good["memory/t6.md"].replace("- fact 55 part b\n", "")},
        {**good, INDEX: good[INDEX].replace(" (revised in 54)", "")},  # a replace lost
        {**good, INDEX: good[INDEX] + "- fact 13 part a\n"},  # a remove lost
        {**good, "memory/scratch.md": states[53]["memory/scratch.md"]},  # a deletion lost
        {k: v for k, v in good.items() if k != "memory/t5.md"},  # a topic lost
        {**good, "memory/bulk.md": states[49]["memory/bulk.md"]},  # an older bulk topic
        {**good, INDEX: good[INDEX] + "- fact 55 part a\n"},  # applied twice
    ]
    for i, files in enumerate(damaged):
        assert oracle(r, files) != [], f"damage {i} not flagged"
    # the state of the previous or next revision is not this one
    assert oracle(r, states[54]) != []
    assert oracle(r, states[56]) != []


# a kill at each step of the pipeline


@dataclass
class KilledAt:
    """A home whose writer was killed at ``step`` while sending batch ``SENT``."""

    step: str
    repo: Path
    head_after_recovery: int = -1
    status_after_recovery: str = ""
    problems: dict[str, list[str]] = field(default_factory=dict)
    files_after_resend: dict[str, str] = field(default_factory=dict)
    #: after two more plain writes, the second of which deletes the topic the killed one created
    worktree_after_more: list[str] = field(default_factory=list)
    status_after_more: str = ""


#: The batch being written when the writer is killed: it creates ``memory/scratch.md``, and
#: batch SENT + 2 deletes it again.
SENT = 13


@pytest.fixture(scope="module", params=STEPS)
def killed_at(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> KilledAt:
    step: str = request.param
    root = tmp_path_factory.mktemp(f"kill-{step}")
    home = new_home(root)
    acks = root / "acks.jsonl"
    write_forever(home, AGENT, acks, lambda: None, limit=SENT - 1)
    proc = subprocess.run(
        [sys.executable, str(HERE), "die", str(home), AGENT, str(acks), step],
        capture_output=True,
        text=True,
        env=writer_env(pack_every=SENT),  # the killed batch packs
        timeout=120,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    k = KilledAt(step, memory_repo(home, AGENT))
    with Reverie(home) as r:
        k.head_after_recovery = r.memory_read(AGENT).revision  # recovers
        k.status_after_recovery = git_status(k.repo)
        k.problems["git"] = check_git(k.repo)
        k.problems["index"] = check_index(r, AGENT, k.repo)
        k.problems["revisions"] = check_revisions(k.repo, history_oids(r, AGENT))
        k.problems["resend"] = check_resend(r, AGENT, read_acks(acks), k.repo)
        k.files_after_resend = head_files(k.repo)
    write_forever(home, AGENT, acks, lambda: None, limit=3)  # SENT again (replays), +1, +2
    with Reverie(home) as r:
        assert r.memory_read(AGENT).revision == SENT + 2
        k.problems["revisions_after_more"] = check_revisions(k.repo, history_oids(r, AGENT))
        k.problems["index_after_more"] = check_index(r, AGENT, k.repo)
    k.worktree_after_more = worktree_problems(k.repo)
    k.status_after_more = git_status(k.repo)
    return k


def test_w8_kill_at_each_step_recovers_to_a_committed_revision(killed_at: KilledAt) -> None:
    """Killed before the commit point: the old revision; after it: the whole batch (W7 too).

    The files on disk equal HEAD's after recovery, and the key of the killed batch replays it
    (or applies it once, if it never committed).
    """
    k = killed_at
    assert k.head_after_recovery == (SENT - 1 if k.step == "before_commit" else SENT)
    assert k.problems == {name: [] for name in k.problems}
    assert k.files_after_resend == _expected_at(SENT)


def test_w8_kill_at_each_step_leaves_git_status_clean(
    killed_at: KilledAt,
) -> None:
    """After recovery ``git status --porcelain`` is empty: git's index is HEAD too."""
    assert killed_at.status_after_recovery == ""


def test_w8_writes_after_a_kill_keep_the_working_tree_at_head(
    killed_at: KilledAt,
) -> None:
    """Plain writes after a recovered kill leave the files on disk equal to HEAD's.

    The batch killed creates ``memory/scratch.md``; the second write after it deletes it, and
    the file must be gone from the working tree too.
    """
    assert "memory/scratch.md" in _expected_at(SENT)
    assert "memory/scratch.md" not in _expected_at(SENT + 2)
    assert killed_at.worktree_after_more == []
    assert killed_at.status_after_more == ""


def _expected_at(n: int) -> dict[str, str]:
    files = {INDEX: new_index()}
    for i in range(1, n + 1):
        files = expected_files(make_batch(i, files), files)
    return files


def test_w7_w8_roll_forward_trusts_only_its_own_trailers(tmp_path: Path) -> None:
    """Text in a commit message cannot register an idempotency key when a crash is recovered."""
    home = new_home(tmp_path)
    script = (
        "import hashlib, os, signal, sys\n"
        "from reverie import Reverie\n"
        "from reverie.store.state import SQLiteState\n"
        "r = Reverie(sys.argv[1])\n"
        "r.memory_read('ada')\n"
        "forged = hashlib.sha256(b'chat-event-42').hexdigest()\n"
        "# killed after the git commit, before the state database records it\n"
        "SQLiteState.transaction = lambda self: os.kill(os.getpid(), signal.SIGKILL)\n"
        "r.memory_apply('ada', {'operations': [{'action': 'add', 'text': 'harmless'}],\n"
        "               'message': 'note\\n\\nReverie-Key: ' + forged})\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(home)],
        capture_output=True,
        text=True,
        env=writer_env(),
        timeout=120,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Reverie(home) as r:
        assert r.memory_read(AGENT).revision == 1
        out = r.memory_apply(AGENT, {"action": "add", "text": "the real fact"}, key="chat-event-42")
        assert not out.replayed
        assert "the real fact" in r.memory_read(AGENT).text
