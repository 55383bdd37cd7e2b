"""SPEC 15: ``reverie conversations import`` and ``reverie context sessions/read/search``."""

from __future__ import annotations

import base64
import io
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(list(args))
    text = capsys.readouterr().out
    return code, json.loads(text) if "--json" in args else text


def msg(
    conv: str,
    text: str,
    *,
    role: str = "user",
    kind: str = "dm",
    channel: str = "D1",
    agent: str = "ada",
    time: str = "2024-05-08T13:56:00Z",
) -> dict[str, Any]:
    return {
        "conversation": conv,
        "agent": agent,
        "channel": {"kind": kind, "id": channel},
        "author": "sam" if role == "user" else "ada",
        "role": role,
        "text": text,
        "time": time,
    }


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


LINES = jsonl(
    msg("c1", "We deploy the billing service on Tuesdays"),
    msg("c1", "Noted: billing deploys on Tuesdays", role="assistant", time="2024-05-08T13:56:10Z"),
    msg("c1", "tool says: deployed", role="tool", time="2024-05-08T13:56:20Z"),
    {"conversation": "c1", "closed": True},
    msg("c2", "Tea preferences: green, no sugar", time="2024-05-09T08:00:00Z"),
    msg("g1", "Group gossip about billing", kind="group", channel="G1"),
)


@pytest.fixture
def home(tmp_path: Path, capsys: pytest.CaptureFixture[str], backend: str) -> str:
    h = str(tmp_path / "home")
    assert run(capsys, "--home", h, "init")[0] == 0
    return h


@pytest.fixture
def imported(home: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    f = tmp_path / "conv.jsonl"
    f.write_text(LINES)
    code, out = run(capsys, "conversations", "import", str(f), "--home", home, "--json")
    assert code == 0, out
    return home


def test_import_prints_the_summary_and_is_idempotent(
    home: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "conv.jsonl"
    f.write_text(LINES)
    code, out = run(capsys, "conversations", "import", str(f), "--home", home, "--json")
    assert (code, out) == (0, {"conversations": 3, "messages": 5, "closed": 1, "skipped": 0})
    code, out = run(capsys, "--home", home, "--json", "conversations", "import", str(f))
    # What text mode says below ("5 already imported"), JSON says too.
    assert (code, out) == (0, {"conversations": 0, "messages": 0, "closed": 0, "skipped": 5})
    code, text = run(capsys, "conversations", "import", str(f), "--home", home)
    assert code == 0 and "Imported 0 messages" in text and "5 already imported" in text
    _code, out = run(capsys, "agent", "list", "--home", home, "--json")
    assert [a["name"] for a in out["agents"]] == ["ada"]


def test_import_reads_stdin(
    home: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(LINES))
    code, out = run(capsys, "conversations", "import", "-", "--home", home, "--json")
    assert (code, out["messages"]) == (0, 5)


def test_a_bad_line_imports_nothing_and_names_the_line(
    home: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text(LINES + '{"conversation": "c3", "agent": "ada", "role": "user"}\n')
    code, out = run(capsys, "conversations", "import", str(f), "--home", home, "--json")
    assert code == 3
    assert out["error"]["line"] == 7 and out["error"]["message"].startswith("line 7:")
    assert out["error"]["code"] == "invalid_import"
    code, out = run(capsys, "context", "sessions", "ada", "--home", home, "--json")
    assert code == 5  # not even the agent was created


def test_a_large_file_shows_progress_and_imports(
    home: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "big.jsonl"
    f.write_text(
        jsonl(
            *(
                msg("big", f"message {i}", time=f"2024-05-08T10:{i // 60 % 60:02d}:{i % 60:02d}Z")
                for i in range(2500)
            )
        )
    )
    code, text = run(capsys, "conversations", "import", str(f), "--home", home)
    assert code == 0 and "Imported 2500 messages into 1 conversation;" in text


def test_context_sessions_json(imported: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "context", "sessions", "ada", "--home", imported, "--json")
    assert code == 0
    assert [s["id"] for s in out["sessions"]] == ["c2", "c1"]  # never the group one
    c1 = out["sessions"][1]
    assert set(c1) == {"id", "title", "created", "updated", "messages", "chars"}
    assert (c1["messages"], c1["created"]) == (3, "2024-05-08T13:56:00Z")
    code, out = run(
        capsys, "context", "sessions", "ada", "--from", "g1", "--home", imported, "--json"
    )
    assert code == 3 and out["error"]["code"] == "memory_off"


def test_context_read_json_and_cursor(imported: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "context", "read", "c1", "--home", imported, "--json")
    assert code == 0
    assert set(out) == {
        "conversation",
        "start",
        "end",
        "messages",
        "next_cursor",
        "tools_omitted",
        "turns",
    }
    assert out["turns"] == []  # imported: no agent turn answered here
    assert (out["start"], out["end"], out["tools_omitted"], out["next_cursor"]) == (0, 3, 1, None)
    first = out["messages"][0]
    assert first == {
        "position": 0,
        "role": "user",
        "author": "sam",
        "text": "We deploy the billing service on Tuesdays",
        "time": "2024-05-08T13:56:00Z",
        "channel": "D1",
        "offset": 0,
        "continues": False,
    }
    code, out = run(
        capsys,
        "context",
        "read",
        "c1",
        "--start",
        "1",
        "--end",
        "3",
        "--include-tools",
        "--home",
        imported,
        "--json",
    )
    assert [m["position"] for m in out["messages"]] == [1, 2]
    code, out = run(
        capsys,
        "context",
        "read",
        "c1",
        "--max-chars",
        "100",
        "--agent",
        "ada",
        "--home",
        imported,
        "--json",
    )
    assert code == 0
    code, text = run(capsys, "context", "read", "c1", "--home", imported)
    assert "[0] user sam" in text and "1 tool messages left out" in text


def test_context_read_takes_a_range_as_memory_cites_it(
    imported: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An entry's source (``c1#1-2``) pasted as it is reads that range."""
    code, out = run(capsys, "context", "read", "c1#1-2", "--home", imported, "--json")
    assert code == 0 and (out["conversation"], out["start"], out["end"]) == ("c1", 1, 2)
    assert [m["position"] for m in out["messages"]] == [1]


def test_context_read_pages_with_a_cursor(
    home: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "long.jsonl"
    f.write_text(jsonl(msg("long", "abcdefghij" * 30)))
    run(capsys, "conversations", "import", str(f), "--home", home, "--json")
    code, out = run(
        capsys, "context", "read", "long", "--max-chars", "100", "--home", home, "--json"
    )
    parts = [out["messages"][0]["text"]]
    while out["next_cursor"]:
        code, out = run(
            capsys,
            "context",
            "read",
            "long",
            "--cursor",
            out["next_cursor"],
            "--max-chars",
            "100",
            "--home",
            home,
            "--json",
        )
        assert code == 0
        parts.append(out["messages"][0]["text"])
    assert "".join(parts) == "abcdefghij" * 30 and len(parts) == 3


def test_the_paging_hint_repeats_the_options_that_matter(
    home: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 10: the hint dropped --home (and --max-chars), so pasting it read another home."""
    f = tmp_path / "long.jsonl"
    f.write_text(jsonl(msg("long", "abcdefghij" * 30)))
    run(capsys, "conversations", "import", str(f), "--home", home)
    _code, text = run(
        capsys, "context", "read", "long", "--max-chars", "100", "--agent", "ada", "--home", home
    )
    hint = next(line for line in text.splitlines() if line.startswith("More: "))
    args = shlex.split(hint.removeprefix("More: "))
    assert args[:4] == ["reverie", "context", "read", "long"]
    assert args[args.index("--home") + 1] == home and "--max-chars" in args
    assert args[args.index("--agent") + 1] == "ada"
    code, text = run(capsys, *args[1:])
    assert code == 0 and "abcdefghij" in text


def test_refusals_name_no_tool_functions(imported: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 10: a person at the command line was told about ``context_sessions``."""
    for args in (["context", "read", "nope"], ["context", "read", "c1", "--cursor", "eyJ4Ijox"]):
        _code, out = run(capsys, *args, "--home", imported, "--json")
        assert not re.search(r"\bcontext_\w+|session_get", out["error"]["message"]), out


def test_context_search_json(imported: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(
        capsys, "context", "search", "ada", "billing deploy", "--home", imported, "--json"
    )
    assert code == 0
    assert [(r["conversation"], r["start"], r["end"]) for r in out["results"]] == [
        ("c1", 1, 2),
        ("c1", 0, 1),
    ]
    assert set(out["results"][0]) == {"conversation", "start", "end", "excerpt", "score"}
    code, text = run(capsys, "context", "search", "ada", "billing", "--home", imported)
    assert "c1#1-2" in text and "gossip" not in text
    assert text.splitlines()[0].startswith("1. c1#")  # ranked, best first


def test_reindex_rebuilds_history_search_too(
    imported: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # c1's two messages and c2's one: not the tool log, not the group conversation
    code, out = run(capsys, "reindex", "--home", imported, "--json")
    assert code == 0 and out["history_messages"] == 3
    code, text = run(capsys, "reindex", "--home", imported)
    assert "history search: 3 messages indexed" in text
    _code, out = run(capsys, "context", "search", "ada", "tea", "--home", imported, "--json")
    assert [r["conversation"] for r in out["results"]] == ["c2"]


@pytest.mark.parametrize(
    ("args", "exit_code", "code"),
    [
        (["context", "read", "nope"], 5, "not_found"),
        (["context", "read", "g1"], 3, "memory_off"),
        (["context", "read", "c1", "--start", "2", "--end", "9"], 3, "invalid_range"),
        (["context", "read", "c1", "--start", "-1"], 2, "usage_error"),
        (["context", "read", "c1", "--cursor", "%%%"], 3, "invalid_cursor"),
        (["context", "read", "c1", "--agent", "nobody"], 5, "not_found"),
        (["context", "read", "c1", "--start", "x"], 2, "usage_error"),
        (["context", "read"], 2, "usage_error"),
        (["context", "search", "ada"], 2, "usage_error"),
        (["context", "search", "ada", "x", "--limit", "0"], 2, "usage_error"),
        (["context", "sessions", "ada", "--limit", "0"], 2, "usage_error"),
        (["context", "read", "c1", "--end", str(2**64)], 2, "usage_error"),
        (["context", "search", "nobody", "x"], 5, "not_found"),
        (["context", "sessions", "nobody"], 5, "not_found"),
        (["context", "sessions", "ada", "--from", "nope"], 5, "not_found"),
        (["conversations", "import", "/no/such/file.jsonl"], 2, "usage_error"),
        (["conversations", "import"], 2, "usage_error"),
    ],
)
def test_refusals_print_json_errors_and_exit_codes(
    imported: str, args: list[str], exit_code: int, code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    got, out = run(capsys, *args, "--home", imported, "--json")
    assert (got, out["error"]["code"]) == (exit_code, code)
    assert out["error"]["message"]


def test_a_deleted_conversation_is_refused(
    imported: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with Reverie(imported) as rv:
        rv.delete_conversation("c2")
    code, out = run(capsys, "context", "read", "c2", "--home", imported, "--json")
    assert (code, out["error"]["code"]) == (5, "conversation_deleted")


def test_the_commands_are_documented() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    for command in [
        "reverie conversations import",
        "reverie context sessions",
        "reverie context read",
        "reverie context search",
    ]:
        assert command in readme


def cursor(raw: str) -> str:
    """A cursor made by hand, in the encoding ``context read`` uses."""
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "raw",
    [
        '[1,"c1",true,0,3,0]',  # a boolean is no position (True == 1 in Python)
        '[1,"c1",0,false,3,0]',
        '[true,"c1",0,0,3,0]',
        '[1,"c1",0,99999,3,0]',  # past the end of the message: empty text, once
        '[1,"c1",0,41,3,0]',  # at its end ("We deploy the billing service on Tuesdays")
        '[1,"c1",2,5,3,0]',  # inside the tool message this read leaves out
        '[1,"c1",0,0,3,2]',  # include_tools is 0 or 1
        '[1,"c1",3,0,3,0]',  # a position at the end: no cursor points there
        '[1, "c1", 0, 5, 3, 0]',  # the fields of a good cursor, not as written
    ],
)
def test_a_cursor_not_written_by_a_read_is_refused(
    imported: str, raw: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # As a read writes it, a cursor continues inside its message...
    good = cursor('[1,"c1",0,5,3,0]')
    code, out = run(capsys, "context", "read", "c1", "--cursor", good, "--home", imported, "--json")
    assert code == 0 and out["messages"][0]["offset"] == 5
    assert out["messages"][0]["text"] == "ploy the billing service on Tuesdays"
    # ...and anything else is refused, rather than read as something near it.
    code, out = run(
        capsys, "context", "read", "c1", "--cursor", cursor(raw), "--home", imported, "--json"
    )
    assert (code, out["error"]["code"]) == (3, "invalid_cursor"), out
