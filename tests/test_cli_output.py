"""SPEC 15: what the command line prints. User text (names, messages, memory text, paths)
comes out as it was written, never read as rich markup; failures exit non-zero; Ctrl-C and
bad options answer in the contract's shape; paths and ranges are checked before anything is
done."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie, __version__
from reverie.cli import main
from tests.llm.fake_openai_server import FakeOpenAI


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(list(args))
    text = capsys.readouterr().out
    return code, json.loads(text) if "--json" in args else text


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def message(conv: str, text: str, author: str = "sam") -> dict[str, Any]:
    return {
        "conversation": conv,
        "agent": "ada",
        "channel": {"kind": "dm", "id": "D1"},
        "author": author,
        "role": "user",
        "text": text,
        "time": "2024-05-08T13:56:00Z",
    }


@pytest.fixture
def home(tmp_path: Path, backend: str) -> str:
    h = tmp_path / "home"
    with Reverie(h, create=True) as rv:
        rv.create_agent("ada")
    return str(h)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


# user text is not markup


def test_names_are_printed_as_written(home: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`agent create "[red]zed"` said "Created agent zed"; `member add "[/q]"` failed with an
    internal error after creating the member; the lists dropped or crashed on them."""
    code, text = run(capsys, "--home", home, "agent", "create", "[red]zed")
    assert code == 0 and text.startswith("Created agent [red]zed (")
    code, text = run(capsys, "--home", home, "member", "add", "[/q]")
    assert (code, text.strip()) == (0, "Added [/q] (member).")
    code, text = run(capsys, "--home", home, "member", "list")
    assert code == 0 and "[/q]" in text
    code, text = run(capsys, "--home", home, "agent", "list")
    assert code == 0 and "[red]zed" in text
    code, text = run(capsys, "--home", home, "token", "create", "[/q]", "--label", "[b]ci")
    assert code == 0
    code, text = run(capsys, "--home", home, "token", "list")
    assert code == 0 and "[/q]" in text and "[b]ci" in text


def test_message_and_history_text_is_printed_as_written(
    home: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = jsonl(
        message("c1", "[/] is how you close a tag; [x] done"),
        {"conversation": "c1", "closed": True},
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))
    assert run(capsys, "--home", home, "conversations", "import", "-")[0] == 0
    code, text = run(capsys, "--home", home, "context", "sessions", "ada")
    assert code == 0 and "[/]" in text and "[x]" in text
    batch = {
        "operations": [{"action": "add", "text": "Notes live in the wiki", "section": "Decisions"}],
        "message": "moved [notes] and [link=x] and [b]bold",
    }
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(batch)))
    assert run(capsys, "--home", home, "memory", "apply", "ada", "-")[0] == 0
    code, text = run(capsys, "--home", home, "memory", "history", "ada")
    assert code == 0
    for word in ("[notes]", "[link=x]", "[b]bold"):
        assert word in text, text


def test_soul_and_approvals_are_printed_as_written(
    home: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with Reverie(home) as rv:
        rv.add_member("[/q]", "member")
        rv.ensure_channel("D1", "dm")
        conv = rv.create_conversation("ada", "D1").id
        rv.soul_edit("ada", conv, {"action": "set_body", "text": "[/s] You are :smile: Ada."})
        rv.soul_publish("ada", conv)
        rv.propose_instructions(conv, "Use [b]metric[/b] units.", author="[/q]")
    code, text = run(capsys, "--home", home, "soul", "history", "ada")
    assert code == 0 and "[/s]" in text and ":smile:" in text  # (the table wraps the line)
    code, text = run(capsys, "--home", home, "approvals", "list")
    assert code == 0
    assert "asked by [/q]" in text and "Use [b]metric[/b] units." in text


@pytest.mark.sqlite_only
def test_a_home_whose_path_looks_like_markup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    h = tmp_path / "x-[/p]"
    code, text = run(capsys, "--home", str(h), "init")
    assert code == 0 and "x-[/p]" in text


# review run


def closed_conversation(home: str) -> None:
    with Reverie(home) as rv:
        rv.import_conversations(
            jsonl(
                message("c1", "We deploy on Tuesdays, from a clean main."),
                {"conversation": "c1", "closed": True},
            ).splitlines()
        )


def test_review_run_exits_1_and_says_why_when_a_review_failed(
    home: str,
    server: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It exited 0 with the error only inside the JSON (and, in text, cut by the table);
    a model name holding `[/m]` failed as an internal error."""
    closed_conversation(home)
    monkeypatch.setenv("REVERIE_MODEL", "openai:[/m]")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    server.fail(400, "The model '[/m]' does not exist; pick one of [/a], [/b].", times=2)
    code, out = run(capsys, "--home", home, "review", "run", "ada", "--now", "--json")
    assert code == 1
    [report] = out["agents"]
    assert report["error"]["code"].startswith("model_") and report["pending"] == 1
    code, text = run(capsys, "--home", home, "review", "run", "ada", "--now")
    assert code == 1
    [said] = [line for line in text.splitlines() if line.startswith("ada: review failed")]
    assert said.endswith("stay pending for the next run.")
    assert report["error"]["message"] in said  # whole, not cut


# who may act


def test_token_for_an_inactive_member_warns_that_it_does_not_work(
    home: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with Reverie(home) as rv:
        rv.add_member("sam", "member", active=False)
    code, out = run(capsys, "--home", home, "--json", "token", "create", "sam")
    assert code == 0 and out["token"]
    assert "sam is not active" in out["warning"] and "member set sam --active" in out["warning"]
    code, out = run(capsys, "--home", home, "--json", "token", "link", "sam")
    assert code == 0 and "not active" in out["warning"]
    code, out = run(capsys, "--home", home, "--json", "token", "create", "ada-bot")
    assert code == 5  # (no such member)
    with Reverie(home) as rv:
        rv.add_member("kim", "member")
    code, out = run(capsys, "--home", home, "--json", "token", "create", "kim")
    assert code == 0 and "warning" not in out


def test_active_and_inactive_together_are_a_usage_error(
    home: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with Reverie(home) as rv:
        rv.add_member("sam", "member")
    for order in (["--active", "--inactive"], ["--inactive", "--active"]):
        code, out = run(capsys, "--home", home, "--json", "member", "set", "sam", *order)
        assert code == 2 and out["error"]["code"] == "usage_error"
        assert "Nothing changed" in out["error"]["message"]
    with Reverie(home) as rv:
        assert rv.member("sam").active
    code, out = run(capsys, "--home", home, "--json", "member", "set", "sam", "--inactive")
    assert code == 0 and out["active"] is False
    code, out = run(capsys, "--home", home, "--json", "member", "set", "sam", "--active")
    assert code == 0 and out["active"] is True


# options checked before anything is done


def test_an_empty_home_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--home ""` made the current directory a home."""
    monkeypatch.chdir(tmp_path)
    for args in (["--home", ""], ["--home="]):
        code, out = run(capsys, *args, "--json", "init")
        assert code == 2 and out["error"]["code"] == "usage_error"
        assert "name a directory" in out["error"]["message"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "option",
    [
        ["--tick", "0"],
        ["--tick", "-1"],
        ["--tick", "nan"],
        ["--port", "-5"],
        ["--port", "0"],
        ["--port", "65536"],
        ["--port", "99999999999999999999"],
    ],
)
def test_serve_refuses_a_tick_or_port_out_of_range(
    home: str,
    option: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import reverie.http.serve

    started: list[Any] = []
    monkeypatch.setattr(reverie.http.serve, "run", lambda *a, **k: started.append(a))
    code, out = run(capsys, "--home", home, "--json", "serve", *option)
    assert code == 2 and out["error"]["code"] == "usage_error", out
    assert started == []


# paths that name the real problem


def test_export_to_a_destination_that_cannot_be_written_says_so(
    home: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "The data directory failed ... Run `reverie doctor`"."""
    (tmp_path / "file").write_text("x")
    for dest in (tmp_path / "file" / "x", Path("/proc/nope/x")):
        code, out = run(capsys, "--home", home, "--json", "export", "ada", "--git", str(dest))
        assert code == 3 and out["error"]["code"] == "invalid_path", out
        said = out["error"]["message"]
        assert said.startswith(f"Cannot write the export to {dest}") and "doctor" not in said
        assert "nothing was written" in said
    # the home was fine all along
    code, out = run(capsys, "--home", home, "--json", "export", "ada", "--git", str(tmp_path / "e"))
    assert code == 0 and out["commits"] == 1


@pytest.mark.sqlite_only
def test_init_on_a_file_says_it_is_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    """It said "File exists ... Run `reverie doctor`"."""
    f = tmp_path / "file"
    f.write_text("mine")
    for h in (f, f / "sub"):
        code, out = run(capsys, "--home", str(h), "--json", "init")
        assert code == 3 and out["error"]["code"] == "invalid_path", out
        assert f"{f} is a file, not a directory" in out["error"]["message"]
        assert "doctor" not in out["error"]["message"]
    code, out = run(capsys, "--home", str(f), "--json", "agent", "list")
    assert code == 5 and "is a file, not a directory" in out["error"]["message"]
    assert f.read_text() == "mine"


# Ctrl-C


@pytest.mark.parametrize(
    ("command", "method", "kept"),
    [
        (["conversations", "import", "-"], "import_conversations", "all or nothing"),
        (["review", "run", "ada", "--now"], "review_run", "keeps whole batches"),
        (["memory", "show", "ada"], "memory_read", "a write under way was not made"),
    ],
)
def test_ctrl_c_says_it_was_interrupted_and_what_was_kept(
    home: str,
    command: list[str],
    method: str,
    kept: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It exited 130 with blank lines only, and no JSON with --json."""

    def interrupt(*_a: Any, **_k: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(Reverie, method, interrupt)
    monkeypatch.setattr(sys, "stdin", io.StringIO(jsonl(message("c9", "hi"))))
    code, out = run(capsys, "--home", home, "--json", *command)
    assert code == 130
    assert out["error"]["code"] == "interrupted" and kept in out["error"]["message"]
    assert out["error"]["message"].startswith("Interrupted; ")
    monkeypatch.setattr(sys, "stdin", io.StringIO(jsonl(message("c9", "hi"))))
    assert main(["--home", home, *command]) == 130
    said = capsys.readouterr().err
    assert "error (interrupted): Interrupted; " in said and kept in said


# small things


def test_a_group_without_a_command_names_its_commands(
    home: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole help text was the JSON error's message."""
    code, out = run(capsys, "--home", home, "--json", "memory")
    assert code == 2 and out["error"]["code"] == "usage_error"
    said = out["error"]["message"]
    assert said.startswith("`reverie memory` needs a command: apply, diff, history, search")
    assert "Options:" not in said and "reverie memory --help" in said


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--version") == (0, f"reverie {__version__}\n")
    assert run(capsys, "--version", "--json") == (0, {"version": __version__})
