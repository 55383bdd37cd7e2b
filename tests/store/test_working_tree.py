"""The working tree after each write (W8): the files on disk, and git's index, are ``HEAD``.

A write refreshes only the files it changed (``GitRepo.checkout(paths)``); these tests hold
that refresh to what a full checkout gives, over writes that add, change and remove topic
files and ``MEMORY.md``, and threads writing at once.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.store.gitrepo import GitRepo

#: The working tree and git's index: the embedded store's own machinery.
pytestmark = pytest.mark.sqlite_only


def repo_of(rv: Reverie, agent: str = "ada") -> GitRepo:
    return rv.memories.repo(rv.state.memory_of(rv.agent(agent).id))


def on_disk(root: Path) -> dict[str, bytes]:
    """Every file under the working tree, ``.git`` aside."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def at_head(repo: GitRepo) -> dict[str, bytes]:
    head = repo.head()
    assert head is not None
    return {path: text.encode() for path, text in repo.files(head).items()}


def git_status(root: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def assert_tree_is_head(rv: Reverie) -> None:
    repo = repo_of(rv)
    assert on_disk(repo.path) == at_head(repo)
    assert git_status(repo.path) == ""


def topic(name: str, content: str) -> dict[str, object]:
    return {"operations": [{"action": "write_topic", "topic": name, "content": content}]}


def test_w8_tree_is_head_after_writes_that_add_change_and_remove_topic_files(
    rv: Reverie,
) -> None:
    steps: list[dict[str, object]] = [
        topic("tea", "# Tea\n- green\n"),  # adds a topic file (and its link in MEMORY.md)
        topic("coffee", "# Coffee\n- black\n"),  # a second one
        topic("tea", "# Tea\n- green\n- oolong\n"),  # changes one
        {"operations": [{"action": "add", "text": "likes tea", "section": "Decisions"}]},
        {
            "operations": [
                {
                    "action": "replace",
                    "source": "memory/coffee.md",
                    "old": "black",
                    "text": "- flat",
                },
                {"action": "write_topic", "topic": "tea", "content": ""},  # removes one
            ]
        },
        topic("coffee", ""),  # removes the last topic file
        topic("tea", "# Tea\n- back again\n"),  # and a topic file comes back
        {"operations": [{"action": "set_body", "text": "# Memory\n\n- short now\n"}]},
    ]
    for i, batch in enumerate(steps, start=1):
        out = rv.memory_apply("ada", batch)
        assert out.changed and out.revision == i
        assert_tree_is_head(rv)
    repo = repo_of(rv)
    assert not (repo.path / "memory" / "coffee.md").exists()
    assert (repo.path / "memory" / "tea.md").read_text() == "# Tea\n- back again\n"


def test_w8_tree_is_head_after_threads_write_at_once(rv: Reverie) -> None:
    def write(n: int) -> None:
        for i in range(5):
            rv.memory_apply("ada", topic(f"t{n}", f"# T{n}\n- fact {i}\n"))
            rv.memory_apply("ada", {"operations": [{"action": "add", "text": f"t{n} fact {i}"}]})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert rv.memory_read("ada").revision == 40
    assert_tree_is_head(rv)


def test_w8_a_link_planted_in_the_tree_is_replaced_not_followed(
    rv: Reverie, tmp_path: Path
) -> None:
    rv.memory_apply("ada", topic("tea", "# Tea\n- green\n"))
    outside = tmp_path / "outside.txt"
    outside.write_text("not memory\n")
    planted = repo_of(rv).path / "memory" / "tea.md"
    planted.unlink()
    planted.symlink_to(outside)
    rv.memory_apply("ada", topic("tea", "# Tea\n- green\n- oolong\n"))
    assert outside.read_text() == "not memory\n"
    assert not planted.is_symlink()
    assert_tree_is_head(rv)


def test_w8_a_file_edited_by_hand_is_rewritten_by_the_next_write_to_it(rv: Reverie) -> None:
    rv.memory_apply("ada", topic("tea", "# Tea\n- green\n"))
    hand = repo_of(rv).path / "memory" / "tea.md"
    hand.write_text("# Tea\n- edited by hand, longer than what the write puts back\n")
    rv.memory_apply("ada", topic("tea", "# Tea\n- black\n"))
    assert hand.read_text() == "# Tea\n- black\n"
    assert_tree_is_head(rv)
