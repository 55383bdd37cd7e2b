"""``reverie doctor [AGENT]`` (SPEC 15): checks git objects, the state database, the index
against the files and leftover markers; repairs what can be rebuilt from the truth; says what it
did, and what is left (exit 1), with ``--json`` too. Real damage: object files cut in half,
overwritten SQLite pages, files a killed writer leaves."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pygit2
import pytest

from bench._faults import corrupt_fts, object_path, truncate
from reverie import Reverie
from reverie.cli import main


def doctor(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> tuple[int, Any]:
    code = main(["doctor", *args, "--home", str(home), "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    with Reverie(home, create=True) as rv:
        rv.create_agent("ada")
        rv.create_agent("bob")
        for n in range(4):
            rv.memory_apply("ada", {"action": "add", "text": f"fact {n} about deploys"})
            rv.memory_apply("ada", {"action": "write_topic", "topic": "ops", "content": f"- {n}\n"})
        rv.memory_apply("bob", {"action": "add", "text": "Bob likes tea"})
    return home


def repo_of(home: Path, agent: str = "ada") -> Path:
    with Reverie(home) as rv:
        return home / "memories" / rv.state.memory_of(rv.agent(agent).id)


def head_commit(home: Path) -> pygit2.Commit:
    commit = pygit2.Repository(str(repo_of(home))).revparse_single("refs/heads/main")
    assert isinstance(commit, pygit2.Commit)
    return commit


def test_a_healthy_home_is_well(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = doctor(capsys, home)
    assert code == 0
    assert out == {
        "ok": True,
        "checked": ["state database", "memory of ada", "memory of bob"],
        "findings": [],
    }
    assert main(["doctor", "--home", str(home)]) == 0
    assert "All is well." in capsys.readouterr().out
    assert doctor(capsys, home, "bob")[1]["checked"] == ["state database", "memory of bob"]


def test_a_damaged_index_is_rebuilt(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corrupt_fts(home / "reverie.db")
    code, out = doctor(capsys, home)
    assert code == 0 and out["ok"]
    (finding,) = out["findings"]
    assert finding["check"] == "index" and "memory_fts" in finding["problem"]
    assert finding["repaired"]
    with Reverie(home) as rv:
        assert rv.state.damaged_tables() == []
        assert rv.memory_search("ada", "deploys")


def test_an_index_emptied_of_its_entries_is_found_and_rebuilt(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Entries deleted from the search index while their rows stayed: its integrity check
    passed, doctor said all was well, search found nothing, and a replace or a reindex failed
    on the index. The check now compares the index with its rows."""
    import sqlite3

    with sqlite3.connect(home / "reverie.db") as conn:
        conn.execute("DELETE FROM memory_fts")
    code, out = doctor(capsys, home)
    assert code == 0 and [f["check"] for f in out["findings"]] == ["index"], out
    with Reverie(home) as rv:
        assert rv.state.damaged_tables() == []
        assert rv.memory_search("ada", "deploys")
        done = rv.memory_apply("ada", {"action": "replace", "old": "fact 0", "text": "- fact zero"})
        assert done.changed


@pytest.mark.parametrize("which", ["commit", "tree", "blob", "topic"])
def test_damaged_newest_objects_are_written_again_from_the_working_tree(
    home: Path, which: str, capsys: pytest.CaptureFixture[str]
) -> None:
    commit = head_commit(home)
    oid = {
        "commit": str(commit.id),
        "tree": str(commit.tree_id),
        "blob": str(commit.tree["MEMORY.md"].id),
        "topic": str(commit.tree["memory/ops.md"].id),
    }[which]
    truncate(object_path(repo_of(home), oid))
    code, out = doctor(capsys, home, "ada")
    assert code == 0, out
    (finding,) = out["findings"]
    assert (
        oid in finding["problem"] and finding["repaired"] == "written again from the working tree"
    )
    with Reverie(home) as rv:
        assert rv.memory_read("ada", "memory/ops.md").text == "- 3\n"
        assert rv.memory_apply("ada", {"action": "add", "text": "after"}).revision == 9
    assert subprocess.run(["git", "-C", str(repo_of(home)), "fsck"], check=False).returncode == 0


def test_a_newest_commit_its_tree_and_blob_all_cut_short_are_mended_in_one_run(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A write cut short by a power loss can leave its commit, tree and blob all truncated,
    with the working tree whole. Doctor moved the tree and blob aside as used by no revision
    (it could not read past the damaged commit to see them used), mended only the commit and
    said all was well, while the memory stayed unreadable; --rewind then forgot the
    acknowledged revision. One run now writes all three again and rewinds nothing."""
    commit = head_commit(home)
    objects = [str(commit.id), str(commit.tree_id), str(commit.tree["MEMORY.md"].id)]
    for oid in objects:
        truncate(object_path(repo_of(home), oid))
    code, out = doctor(capsys, home, "ada", "--rewind")
    assert code == 0, out
    repaired = [
        f for f in out["findings"] if f["repaired"] == "written again from the working tree"
    ]
    assert sorted(o for f in repaired for o in objects if o in f["problem"]) == sorted(objects)
    assert not any(f["check"] == "rewind" for f in out["findings"]), out
    with Reverie(home) as rv:
        assert rv.memory_read("ada").revision == 8 and "fact 3" in rv.memory_read("ada").text
        assert rv.memory_apply("ada", {"action": "add", "text": "after"}).revision == 9
    assert doctor(capsys, home, "ada")[1]["findings"] == []


def test_what_cannot_be_rebuilt_is_named_and_rewind_restores_the_last_intact_revision(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repo_of(home)
    blob = str(head_commit(home).tree["MEMORY.md"].id)
    truncate(object_path(repo, blob))
    (repo / "MEMORY.md").write_text("# Memory\n- edited by hand since\n")  # no copy left
    code, out = doctor(capsys, home, "ada")
    assert code == 1 and not out["ok"]
    (finding,) = out["findings"]
    assert blob in finding["problem"] and finding["repaired"] is None
    # revision 7 added fact 3 to MEMORY.md, revision 8 changed a topic: both use the blob
    assert "Revision 6 is the newest intact one" in finding["advice"]
    assert "reverie doctor ada --rewind" in finding["advice"]
    code, out = doctor(capsys, home, "ada", "--rewind")
    assert code == 0, out
    assert out["findings"][-1]["check"] == "rewind"
    assert "revisions 7 to 8 are forgotten" in out["findings"][-1]["repaired"]
    with Reverie(home) as rv:
        assert rv.memory_read("ada").revision == 6
        assert "fact 3" not in rv.memory_read("ada").text
        assert rv.memory_read("ada", "memory/ops.md").text == "- 2\n"
        out2 = rv.memory_apply("ada", {"action": "add", "text": "fact 3 about deploys"})
        assert out2.revision == 7 and out2.changed
    assert doctor(capsys, home)[1]["findings"] == []


def test_damage_to_an_older_revision_only_is_reported_not_rewound(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = head_commit(home).parents[0].parents[0]  # revision 6, its MEMORY.md changed later
    blob = str(first.tree["MEMORY.md"].id)
    truncate(object_path(repo_of(home), blob))
    code, out = doctor(capsys, home, "ada", "--rewind")
    assert code == 1
    (finding,) = out["findings"]
    assert blob in finding["problem"] and "newest revision is intact" in finding["advice"]
    with Reverie(home) as rv:
        assert rv.memory_read("ada").revision == 8  # nothing was forgotten


def test_an_interrupted_write_and_a_killed_writers_files_are_cleaned_up(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repo_of(home)
    with Reverie(home) as rv:
        memory_id = rv.state.memory_of(rv.agent("ada").id)
        latest = rv.memories.current(memory_id)
        rv.memories._begin(memory_id, latest.oid)
        rv.memories.repo(memory_id).commit(
            latest.oid,
            {"MEMORY.md": "# Memory\n- left by a killed writer\n"},
            "api: add 1\n\nReverie-Revision: 9\nReverie-Writer: api\n",
            "api",
        )
    code, out = doctor(capsys, home, "ada")
    assert code == 0, out
    (finding,) = out["findings"]
    assert finding["check"] == "marker"
    assert finding["repaired"] == "recovered when the home was opened, at revision 9"
    assert not (repo / ".git" / "reverie-writing").exists()
    # a killed writer's files without a marker (it died before writing one)
    (repo / ".git" / "index.lock").write_text("")
    (repo / ".git" / "objects" / "tmp_object_git2_x").write_text("half")
    code, out = doctor(capsys, home, "ada")
    assert code == 0, out
    (finding,) = out["findings"]
    assert finding["check"] == "leftovers" and "2 lock or temporary" in finding["problem"]
    assert not (repo / ".git" / "index.lock").exists()


def test_a_branch_moved_outside_reverie_is_moved_back(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repo_of(home)
    subprocess.run(["git", "-C", str(repo), "reset", "-q", "--hard", "HEAD~3"], check=True)
    code, out = doctor(capsys, home, "ada")
    assert code == 0, out
    assert (
        out["findings"][0]["check"] == "branch" and "revision 8" in out["findings"][0]["repaired"]
    )
    with Reverie(home) as rv:
        assert rv.memory_read("ada").revision == 8
        assert rv.memory_apply("ada", {"action": "add", "text": "next"}).revision == 9


def test_index_rows_that_disagree_with_the_files_are_rebuilt(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(home / "reverie.db") as conn:
        conn.execute("DELETE FROM memory_lines WHERE text LIKE '%fact 2%'")
        conn.execute(
            "INSERT INTO memory_lines (memory_id, path, topic, scope, text) "
            "SELECT memory_id, path, topic, scope, 'a line no file holds' FROM memory_lines "
            "LIMIT 1"
        )
    code, out = doctor(capsys, home)
    assert code == 0
    assert [f["check"] for f in out["findings"]] == ["index"]
    with Reverie(home) as rv:
        assert rv.memory_search("ada", "fact 2")[0].excerpt == "- fact 2 about deploys"
        assert rv.memory_search("ada", "holds") == []


def test_damaged_objects_no_revision_uses_are_moved_aside(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a write refused on a full disk, or a killed one, left half-written."""
    repo = repo_of(home)
    orphan = "ab" + "c" * 38
    (repo / ".git" / "objects" / "ab").mkdir(exist_ok=True)
    (repo / ".git" / "objects" / "ab" / orphan[2:]).write_bytes(b"x\x9c\x4b\xca")
    code, out = doctor(capsys, home, "ada")
    assert code == 0
    (finding,) = out["findings"]
    assert orphan in finding["problem"] and "moved to .git/reverie-damaged" in finding["repaired"]
    assert (repo / ".git" / "reverie-damaged" / orphan).exists()
    assert doctor(capsys, home, "ada")[1]["findings"] == []
