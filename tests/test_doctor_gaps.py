"""``reverie doctor`` on three kinds of damage an audit of a damaged home found it silent or
failing on (SPEC 15):

* a memory file deleted, emptied or edited by hand in the working tree stayed so after doctor
  said all was well; it is now written again from the newest revision, and what was found
  there is kept aside first (``working_tree_differs``);
* a damaged page (or row) of a table that holds the truth in ``reverie.db`` made doctor fail
  with the error it was meant to explain; it is now a finding (``state_database_damaged``)
  that says what to do, exit 1, and nothing more is written to the file;
* with ``reverie.db`` lost the memory repositories left in the home were never mentioned, so
  the agents looked gone; doctor now lists them (``state_database_missing``,
  ``memory_repository_unowned``) with what each holds.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pygit2
import pytest

from bench._faults import corrupt_fts
from reverie import Reverie
from reverie.cli import main


def doctor(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> tuple[int, Any]:
    code = main(["doctor", *args, "--home", str(home), "--json"])
    return code, json.loads(capsys.readouterr().out)


def doctor_process(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``reverie doctor`` in a process of its own, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "reverie.cli", "doctor", *args, "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=os.environ,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    with Reverie(home, create=True) as rv:
        rv.create_agent("ada")
        rv.create_agent("bob")
        for n in range(4):
            rv.memory_apply("ada", {"action": "add", "text": f"fact {n} about deploys"})
            rv.memory_apply("ada", {"action": "write_topic", "topic": "ops", "content": f"- {n}\n"})
        rv.memory_apply("ada", {"action": "write_topic", "topic": "people", "content": "- Ann\n"})
        rv.memory_apply("bob", {"action": "add", "text": "Bob likes tea"})
    return home


def repo_of(home: Path, agent: str = "ada") -> Path:
    with Reverie(home) as rv:
        return home / "memories" / rv.state.memory_of(rv.agent(agent).id)


def committed(repo: Path) -> dict[str, bytes]:
    """The memory files of the branch's newest commit."""
    tree = pygit2.Repository(str(repo)).revparse_single("refs/heads/main").peel(pygit2.Tree)
    out = {"MEMORY.md": tree["MEMORY.md"].read_raw()}
    for entry in tree["memory"].peel(pygit2.Tree):
        out[f"memory/{entry.name}"] = entry.read_raw()
    return out


def settled(db: Path) -> bytes:
    """Everything the WAL holds moved into ``db``, so that the file alone is the database;
    its bytes."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db.read_bytes()


# the working tree


def test_a_working_tree_changed_by_hand_is_rewritten_and_what_was_there_is_kept(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Search and reads use git, so nothing showed the damage, and doctor said all was well;
    the working tree is the copy people read and the one doctor mends objects from."""
    repo = repo_of(home)
    truth = committed(repo)
    (repo / "memory" / "ops.md").unlink()
    (repo / "memory" / "people.md").write_text("")
    edited = truth["MEMORY.md"] + b"- deploy on Mondays (edited by hand)\n"
    (repo / "MEMORY.md").write_bytes(edited)
    (repo / "memory" / "scratch.md").write_text("- a topic written by hand\n")

    code, out = doctor(capsys, home)
    assert code == 0 and out["ok"], out
    (finding,) = out["findings"]
    assert finding["code"] == "working_tree_differs" and finding["where"] == "memory of ada"
    for said in (
        "MEMORY.md edited",
        "memory/ops.md deleted",
        "memory/people.md emptied",
        "memory/scratch.md added",
        "revision 9",
    ):
        assert said in finding["problem"], finding
    assert (
        "rewritten from revision 9: MEMORY.md, memory/ops.md, memory/people.md"
        in (finding["repaired"])
    )
    assert "removed (revision 9 has no such file): memory/scratch.md" in finding["repaired"]
    assert "reverie memory apply ada" in finding["advice"]

    # the working tree is the newest revision again, git's index with it
    assert {p: (repo / p).read_bytes() for p in truth} == truth
    assert not (repo / "memory" / "scratch.md").exists()
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True
    )
    assert status.stdout == "", status.stdout
    # what was found there is kept, where doctor sets damaged things aside
    (aside,) = (repo / ".git" / "reverie-damaged").glob("working-tree-*")
    assert str(aside) in finding["repaired"]
    assert (aside / "MEMORY.md").read_bytes() == edited
    assert (aside / "memory" / "scratch.md").read_text() == "- a topic written by hand\n"
    assert sorted(p.relative_to(aside).as_posix() for p in aside.rglob("*.md")) == [
        "MEMORY.md",
        "memory/scratch.md",
    ]
    # the memory itself never changed
    with Reverie(home) as rv:
        assert rv.memory_read("ada").revision == 9
        assert "Mondays" not in rv.memory_read("ada").text
    assert doctor(capsys, home)[1]["findings"] == []


def test_a_file_deleted_from_the_working_tree_is_written_again_and_nothing_is_kept(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repo_of(home)
    truth = committed(repo)
    (repo / "MEMORY.md").unlink()
    assert main(["doctor", "ada", "--home", str(home)]) == 0
    said = capsys.readouterr().out
    assert "[working_tree_differs]" in said and "MEMORY.md deleted" in said, said
    assert (repo / "MEMORY.md").read_bytes() == truth["MEMORY.md"]
    assert not (repo / ".git" / "reverie-damaged").exists()  # no hand-made content to keep


# a damaged reverie.db


@pytest.mark.parametrize("table", ["agents", "memories", "revisions", "messages", "members"])
def test_a_damaged_table_that_holds_the_truth_is_a_finding(
    home: Path, table: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was an error naming the table and sending the user to `reverie doctor` (the
    command that printed it), or the raw SQLite message."""
    db = home / "reverie.db"
    corrupt_fts(db, table)  # its first page overwritten with garbage
    before = settled(db)
    code, out = doctor(capsys, home)
    assert code == 1 and "error" not in out, out
    (finding,) = out["findings"]
    assert finding["code"] == "state_database_damaged" and finding["repaired"] is None
    assert table in finding["problem"] and str(db) in finding["problem"]
    for said in ("backup", "reverie.db-wal", "wrote nothing to reverie.db"):
        assert said in finding["advice"], finding["advice"]
    assert "2 repositories under" in finding["advice"]
    assert out["checked"] == ["state database"]  # no memory check reads the damaged file
    assert db.read_bytes() == before


def test_a_damaged_page_in_the_middle_of_a_table_is_a_finding_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A page that is not the table's first: found by reading every row."""
    home = tmp_path / "home"
    with Reverie(home, create=True) as rv:
        rv.create_agent("ada")
        for n in range(120):
            rv.memory_apply("ada", {"action": "add", "text": f"fact {n} about the long history"})
    db = home / "reverie.db"
    settled(db)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'revisions'")
        (first,) = root.fetchone()
        try:
            pages = [
                p
                for (p,) in conn.execute(
                    "SELECT pageno FROM dbstat WHERE name = 'revisions' ORDER BY pageno"
                )
            ]
        except sqlite3.OperationalError:
            pytest.skip("this SQLite has no dbstat table")
    inner = [p for p in pages if p != first]
    assert len(inner) >= 2, pages
    with open(db, "r+b") as f:
        f.seek((inner[len(inner) // 2] - 1) * size)
        f.write(bytes((i * 7 + 3) % 256 for i in range(size)))
    before = db.read_bytes()
    proc = doctor_process(home)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "[state_database_damaged]" in proc.stdout and "revisions" in proc.stdout, proc.stdout
    assert "error (" not in proc.stderr, proc.stderr
    assert db.read_bytes() == before


def test_a_row_overwritten_with_bytes_that_are_not_text_is_a_finding(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pages are sound (``quick_check`` says ok), a cell is not: the raw SQLite message
    ("Could not decode to UTF-8 column 'oid'") was all the user saw."""
    db = home / "reverie.db"
    data = settled(db)
    oid = str(pygit2.Repository(str(repo_of(home))).revparse_single("refs/heads/main").id)
    at = data.find(oid.encode())
    assert at > 0
    with open(db, "r+b") as f:
        f.seek(at)
        f.write(b"\xff" * 8)
    before = db.read_bytes()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    code, out = doctor(capsys, home)
    assert code == 1 and "error" not in out, out
    (finding,) = out["findings"]
    assert finding["code"] == "state_database_damaged" and "cannot be read" in finding["problem"]
    assert db.read_bytes() == before


def test_a_database_that_cannot_be_opened_is_a_finding_without_a_traceback(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its header overwritten: the home does not open, doctor says why and what to do."""
    db = home / "reverie.db"
    settled(db)
    with open(db, "r+b") as f:
        f.write(b"\x00" * 100)
    before = db.read_bytes()
    proc = doctor_process(home)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "[state_database_damaged]" in proc.stdout and "backup" in proc.stdout, proc.stdout
    code, out = doctor(capsys, home)
    assert code == 1 and out["findings"][0]["code"] == "state_database_damaged", out
    assert db.read_bytes() == before


# repositories no agent owns


def test_a_lost_reverie_db_leaves_repositories_that_doctor_lists(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said only "No Reverie home ...; create it with `reverie init`"."""
    ada, bob = repo_of(home, "ada"), repo_of(home, "bob")
    for p in home.glob("reverie.db*"):
        p.unlink()
    code, out = doctor(capsys, home)
    assert code == 1 and "error" not in out, out
    missing, *repos = out["findings"]
    assert missing["code"] == "state_database_missing"
    assert "2 memory repositories remain" in missing["problem"]
    assert "backup" in missing["advice"] and "reverie init" in missing["advice"]
    by_path = {f["problem"].split(" ", 1)[0]: f for f in repos}
    assert set(by_path) == {str(ada), str(bob)}
    assert all(f["code"] == "memory_repository_unowned" for f in repos)
    assert "revision 9 (commit" in by_path[str(ada)]["problem"]
    assert "3 files: MEMORY.md, memory/ops.md, memory/people.md" in by_path[str(ada)]["problem"]
    assert "revision 1 (commit" in by_path[str(bob)]["problem"]
    assert "Nothing was changed" in by_path[str(ada)]["advice"]
    assert not (home / "reverie.db").exists()  # doctor made no new database


def test_repositories_no_agent_owns_after_a_new_database_are_listed_and_left_alone(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new database after the loss (`reverie init` made one then; the Python API still
    can): doctor said all was well."""
    ada = repo_of(home, "ada")
    head = (ada / ".git" / "refs" / "heads" / "main").read_text()
    for p in home.glob("reverie.db*"):
        p.unlink()
    # The CLI refuses now, pointing at a backup and doctor, and makes no database.
    for command in (["init"], ["memory", "show", "ada"]):
        assert main([*command, "--home", str(home), "--json"]) == 5
        error = json.loads(capsys.readouterr().out)["error"]
        assert (
            error["code"] == "home_not_found" and "2 memory repositories remain" in error["message"]
        )
        assert "reverie doctor" in error["message"] and not (home / "reverie.db").exists()
    Reverie(home, create=True).close()
    code, out = doctor(capsys, home)
    assert code == 1, out
    assert [f["code"] for f in out["findings"]] == ["memory_repository_unowned"] * 2
    assert (ada / ".git" / "refs" / "heads" / "main").read_text() == head
    # an agent made now has a repository of its own, and the others stay listed
    with Reverie(home) as rv:
        rv.create_agent("ada")
    code, out = doctor(capsys, home)
    assert [f["code"] for f in out["findings"]] == ["memory_repository_unowned"] * 2
    assert "memory of ada" in out["checked"]
    # one agent's check is about that agent only
    assert doctor(capsys, home, "ada")[1]["findings"] == []


def test_restoring_a_backup_and_running_doctor_brings_the_newest_revisions_back(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the findings above advise: a backup of reverie.db older than the repositories,
    then `reverie doctor`, rolls each memory forward to its repository's newest revision."""
    backup = tmp_path / "backup.db"
    with contextlib.closing(sqlite3.connect(home / "reverie.db")) as conn:
        conn.execute("VACUUM INTO ?", (str(backup),))
    with Reverie(home) as rv:
        for n in range(3):
            rv.memory_apply("ada", {"action": "add", "text": f"after the backup {n}"})
    for p in home.glob("reverie.db*"):
        p.unlink()
    shutil.copy(backup, home / "reverie.db")
    code, out = doctor(capsys, home)
    assert code == 0, out
    with Reverie(home) as rv:
        read = rv.memory_read("ada")
        assert read.revision == 12 and "after the backup 2" in read.text
    assert doctor(capsys, home)[1]["findings"] == []
