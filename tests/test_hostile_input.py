"""Bad input is refused with a code, never a traceback, and nothing is written (issue 10).

Lone surrogates and invalid UTF-8, numbers past SQLite's integers, JSON nested 100,000 deep,
agent names that hide or pose as ids, and invisible format characters in memory text: each
through the Python API and the command line. The property test that throws arbitrary input at
every command and call is ``tests/test_fuzz.py``.
"""

from __future__ import annotations

import io
import json
import sqlite3
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.cli import main
from reverie.core.chars import INVISIBLE
from reverie.errors import NotFound, RefusedInput, ReverieError

DEEP = 100_000


def cli(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *args: str,
    stdin: bytes | None = None,
) -> tuple[int, dict[str, Any]]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main([*args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def revision_of(rv: Reverie) -> int:
    return rv.memory_read("ada").revision


# lone surrogates and invalid UTF-8


@pytest.mark.parametrize(
    "call",
    [
        lambda r: r.agent("a\ud800"),
        lambda r: r.create_agent("b\udcff"),
        lambda r: r.memory_search("ada", "deploy \ud800"),
        lambda r: r.memory_read("ada", "memory/\udc80.md"),
        lambda r: r.memory_apply("ada", {"action": "add", "text": "a\ud800b"}),
        lambda r: r.memory_apply(
            "ada", {"operations": [{"action": "add", "text": "ok"}]}, key="\ud800"
        ),
        lambda r: r.memory_apply("ada", {"action": "add", "text": "ok", "section": "\udfff"}),
        lambda r: r.memory_apply("ada", {"action": "add", "text": "ok", "\ud800": 1}),
        lambda r: r.add_member("m\ud800"),
        lambda r: r.context_search("ada", "\ud800"),
        lambda r: r.context_read(None, "c\ud800"),
        lambda r: r.session_get("\ud800"),
    ],
)
def test_lone_surrogates_in_api_arguments_are_refused(rv: Reverie, call: Any) -> None:
    with pytest.raises(RefusedInput) as err:
        call(rv)
    assert err.value.code == "invalid_unicode"
    assert "surrogate" in err.value.message and "\ud800" not in err.value.message
    assert revision_of(rv) == 0 and [a.name for a in rv.agents()] == ["ada"]


@pytest.mark.parametrize("field", ["text", "author", "title", "agent", "id"])
def test_lone_surrogates_in_import_fields_are_refused_with_the_line(
    rv: Reverie, field: str
) -> None:
    record: dict[str, Any] = {
        "conversation": "c1",
        "agent": "ada",
        "channel": {"kind": "dm", "id": "D1"},
        "author": "sam",
        "role": "user",
        "text": "hello",
        "time": "2024-05-08T13:56:00Z",
    }
    record[field] = "x\ud800y"
    ok = {**record, field: "fine"}
    with pytest.raises(RefusedInput) as err:
        rv.import_records([ok, record])
    assert err.value.code == "invalid_unicode"
    with pytest.raises(RefusedInput) as err:
        rv.import_conversations([json.dumps(ok), json.dumps(record)])
    assert err.value.code == "invalid_unicode" and err.value.details["line"] == 2
    assert rv.context_sessions("ada") == []


def test_invalid_utf8_in_a_file_is_refused_as_invalid_unicode(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch file, an import file and a soul file that are not UTF-8 are refused with the
    one code the README names for text that is not Unicode, and nothing is written."""
    with Reverie(home, create=True) as r:
        r.create_agent("ada")
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"action": "add", "text": "caf\xe9"}')
    code, out = cli(capsys, monkeypatch, "memory", "apply", "ada", str(bad), "--home", str(home))
    assert code == 3 and out["error"]["code"] == "invalid_unicode"
    code, out = cli(capsys, monkeypatch, "conversations", "import", str(bad), "--home", str(home))
    assert code == 3 and out["error"]["code"] == "invalid_unicode"
    code, out = cli(
        capsys, monkeypatch, "agent", "create", "bob", "--soul", str(bad), "--home", str(home)
    )
    assert code == 3 and out["error"]["code"] == "invalid_unicode"
    with Reverie(home) as r:
        assert r.memory_read("ada").revision == 0
        assert [a.name for a in r.agents()] == ["ada"]
        assert r.context_sessions("ada") == []


def test_invalid_utf8_on_stdin_is_refused_and_called_standard_input(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with Reverie(home, create=True) as r:
        r.create_agent("ada")
    bad = b'{"action": "add", "text": "caf\xe9 \xff"}'
    code, out = cli(
        capsys, monkeypatch, "memory", "apply", "ada", "-", "--home", str(home), stdin=bad
    )
    # one code for text that is not Unicode, whatever brings it (README)
    assert code == 3 and out["error"]["code"] == "invalid_unicode"
    assert out["error"]["message"].startswith("standard input is not UTF-8")
    code, out = cli(
        capsys, monkeypatch, "conversations", "import", "-", "--home", str(home), stdin=b"\xc3("
    )
    assert code == 3 and out["error"]["code"] == "invalid_unicode"
    assert "standard input" in out["error"]["message"]
    # JSON escapes can spell a lone surrogate in valid UTF-8: refused all the same
    escaped = b'{"action": "add", "text": "a\\ud800b"}'
    code, out = cli(
        capsys, monkeypatch, "memory", "apply", "ada", "-", "--home", str(home), stdin=escaped
    )
    assert code == 3 and out["error"]["code"] == "invalid_unicode"
    # and so can argv, decoded by Python with surrogate escapes
    code, out = cli(capsys, monkeypatch, "memory", "search", "ada", "x\udcff", "--home", str(home))
    assert code == 3 and out["error"]["code"] == "invalid_unicode"
    with Reverie(home) as r:
        assert r.memory_read("ada").revision == 0


def test_a_bad_json_file_is_named_by_its_path(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with Reverie(home, create=True) as r:
        r.create_agent("ada")
    code, out = cli(
        capsys, monkeypatch, "memory", "apply", "ada", "-", "--home", str(home), stdin=b"{"
    )
    assert code == 3 and out["error"]["message"].startswith("standard input is not valid JSON")
    path = tmp_path / "b.json"
    path.write_text("{", encoding="utf-8")
    code, out = cli(capsys, monkeypatch, "memory", "apply", "ada", str(path), "--home", str(home))
    assert code == 3 and out["error"]["message"].startswith(f"{path} is not valid JSON")


@pytest.mark.parametrize(
    "args",
    [
        ["agent", "list", "--home", "home\0"],
        ["export", "ada", "--git", "out\0"],
        ["agent", "create", "bo", "--soul", "soul\0.md"],
    ],
)
def test_a_path_with_a_nul_character_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    rv: Reverie,
    home: Path,
    args: list[str],
) -> None:
    # Found by test_fuzz.py: click's Path option failed inside os.stat ("embedded null byte").
    extra = [] if "--home" in args else ["--home", str(home)]
    code, out = cli(capsys, monkeypatch, *args, *extra)
    assert code == 2 and out["error"]["code"] == "usage_error"
    assert "NUL character" in out["error"]["message"]
    assert [a.name for a in rv.agents()] == ["ada"]


# numbers past SQLite's integers


@pytest.mark.parametrize("number", [2**63, 10**30, -(2**63) - 1])
def test_revision_numbers_past_sqlite_range_are_refused(rv: Reverie, number: int) -> None:
    with pytest.raises(NotFound):
        rv.memory_read("ada", revision=number)
    with pytest.raises(NotFound):
        rv.memory_diff("ada", 0, number)
    with pytest.raises(NotFound):
        rv.memory_revision("ada", number)
    with pytest.raises(RefusedInput) as err:
        rv.memory_apply("ada", {"action": "add", "text": "x"}, expected_revision=-1)
    assert err.value.code == "invalid_revision"
    assert len(rv.memory_history("ada", limit=10**30)) == 1
    with pytest.raises(RefusedInput):
        rv.memory_search("ada", "x", limit=number)
    with pytest.raises(RefusedInput):
        rv.context_sessions("ada", limit=number)
    rv.import_records(
        [
            {
                "conversation": "c1",
                "agent": "ada",
                "channel": {"kind": "dm", "id": "D1"},
                "role": "user",
                "text": "hello",
                "time": "2024-05-08T13:56:00Z",
            }
        ]
    )
    with pytest.raises(RefusedInput):
        rv.context_read("ada", "c1", 0, number)
    with pytest.raises(RefusedInput):
        rv.mark_reviewed("c1", number)
    assert revision_of(rv) == 0


# JSON nested 100,000 deep


def test_deep_json_on_the_command_line_is_refused(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with Reverie(home, create=True) as r:
        r.create_agent("ada")
    deep = b"[" * DEEP + b"]" * DEEP
    batch = b'{"operations": ' + deep + b"}"
    code, out = cli(
        capsys, monkeypatch, "memory", "apply", "ada", "-", "--home", str(home), stdin=batch
    )
    assert code == 3 and out["error"]["code"] == "invalid_operation"
    assert "nests JSON too deeply" in out["error"]["message"]
    line = b'{"conversation": "c1", "text": ' + deep + b"}\n"
    code, out = cli(
        capsys, monkeypatch, "conversations", "import", "-", "--home", str(home), stdin=line
    )
    assert code == 3 and out["error"]["code"] == "invalid_import"
    assert out["error"]["line"] == 1 and "nested too deeply" in out["error"]["message"]


def test_deep_arguments_are_refused_by_the_api(rv: Reverie) -> None:
    deep: Any = "x"
    for _ in range(DEEP):
        deep = [deep]
    for call in (
        lambda: rv.memory_apply("ada", {"operations": deep}),
        lambda: rv.memory_apply("ada", {"action": "add", "text": "x", "section": deep}),
        lambda: rv.import_records([{"conversation": deep}]),
    ):
        with pytest.raises(RefusedInput) as err:
            call()
        assert err.value.code == "invalid_input"
    assert revision_of(rv) == 0


# agent names


@pytest.mark.parametrize(
    "name",
    [
        "bell\x07",
        "nul\x00",
        "evil\u202eexe",
        "zero\u200bwidth",
        "line\u2028sep",
        "ag_0123456789ab",
        ".",
        "..",
    ],
)
def test_agent_names_with_hidden_characters_an_id_shape_or_a_dot_segment_are_refused(
    rv: Reverie, name: str
) -> None:
    with pytest.raises(RefusedInput) as err:
        rv.create_agent(name)
    assert err.value.code == "invalid_name"
    with pytest.raises(RefusedInput):
        rv.import_records(
            [
                {
                    "conversation": "c1",
                    "agent": name,
                    "channel": {"kind": "dm", "id": "D1"},
                    "role": "user",
                    "text": "hello",
                    "time": "2024-05-08T13:56:00Z",
                }
            ]
        )
    assert [a.name for a in rv.agents()] == ["ada"]


@pytest.mark.sqlite_only
def test_an_agent_named_like_another_agents_id_never_takes_its_writes(
    rv: Reverie, home: Path
) -> None:
    """A name equal to an id (stored before names were checked) does not capture the id."""
    real = rv.agent("ada")
    with sqlite3.connect(home / "reverie.db") as conn:
        conn.execute(
            "INSERT INTO agents (id, name, created_at) VALUES ('ag_ffffffffffff', ?, 0)", (real.id,)
        )
        conn.execute(
            "INSERT INTO memories (id, agent_id, created_at) VALUES "
            "('mem_ffffffffffff', 'ag_ffffffffffff', 0)"
        )
    assert rv.agent(real.id).name == "ada"
    rv.memory_apply(real.id, {"action": "add", "text": "meant for ada"})
    assert "meant for ada" in rv.memory_read("ada").text
    rv.import_records(
        [
            {
                "conversation": "c1",
                "agent": real.id,
                "channel": {"kind": "dm", "id": "D1"},
                "role": "user",
                "text": "hello",
                "time": "2024-05-08T13:56:00Z",
            }
        ]
    )
    assert rv.conversation("c1").agent_id == real.id


def test_member_names_cannot_pose_as_ids(rv: Reverie) -> None:
    with pytest.raises(RefusedInput) as err:
        rv.add_member("mb_0123456789ab")
    assert err.value.code == "invalid_name"


# invisible characters in memory text (W4)

HIDING = [
    "\u202e",  # right-to-left override
    "\u2066",  # left-to-right isolate
    "\u200b",  # zero-width space
    "\u200d",  # zero-width joiner between Latin letters
    "\ufeff",  # byte order mark
    "\u2028",  # line separator
    "\u2029",  # paragraph separator
    "\u00ad",  # soft hyphen
    "\U000e0041",  # tag letter A
    "\u2060",  # word joiner
    "\u3164",  # Hangul filler
]


@pytest.mark.parametrize("char", HIDING)
def test_invisible_characters_are_refused_on_every_write_path(rv: Reverie, char: str) -> None:
    rv.memory_apply("ada", {"operations": [{"action": "add", "text": "deploy on Fridays"}]})
    text = f"dep{char}loy"
    for request in (
        {"action": "add", "text": text},
        {"action": "add", "text": "x", "section": text},
        {"action": "replace", "old": "Fridays", "text": text},
        {"action": "write_topic", "topic": "t", "content": text},
        {"action": "set_body", "text": f"# Memory\n- {text}\n"},
        {"operations": [{"action": "add", "text": "x"}], "message": text},
    ):
        for writer in ("api", "admin", "review"):
            with pytest.raises(RefusedInput) as err:
                rv.memory_apply("ada", request, writer=writer)
            assert err.value.code == "memory_invisible_character", request
            assert f"U+{ord(char):04X}" in err.value.message
    assert revision_of(rv) == 1


def test_joiners_that_writing_needs_are_accepted(rv: Reverie) -> None:
    for text in (
        "Sam codes as 👩\u200d💻 all day",
        "family 👨\u200d👩\u200d👧 trip",
        "rainbow flag 🏳\ufe0f\u200d🌈",
        "the Scottish flag 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
        "Persian: می\u200cخواهم",
        "Hindi: क्\u200dष",
    ):
        out = rv.memory_apply("ada", {"action": "add", "text": text})
        assert out.changed, text
        assert text in rv.memory_read("ada").text


def test_a_line_written_before_the_rule_can_still_be_removed(rv: Reverie, home: Path) -> None:
    rv.memory_apply("ada", {"action": "add", "text": "plain"})
    with pytest.raises(RefusedInput):
        rv.memory_apply("ada", {"action": "add", "text": "a\u200bb"})
    # ``old`` only finds text, so it may hold what a new line may not
    with pytest.raises(RefusedInput) as err:
        rv.memory_apply("ada", {"action": "remove", "old": "a\u200bb"})
    assert err.value.code == "no_match"


def test_invisible_is_every_format_character_but_visible_number_signs() -> None:
    visible_signs = {0x0600, 0x0601, 0x0602, 0x0603, 0x0604, 0x0605, 0x06DD, 0x070F}
    visible_signs |= {0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD}
    for cp in range(0x110000):
        char = chr(cp)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        expected = unicodedata.category(char) == "Cf" and cp not in visible_signs
        expected |= cp in (0x2028, 0x2029, 0x115F, 0x1160, 0x3164, 0xFFA0)
        if cp in (0x200C, 0x200D) or 0x13430 <= cp <= 0x1343F:
            expected = True  # joiners are judged in context; newer hieroglyph controls too
        assert bool(INVISIBLE.match(char)) == expected, f"U+{cp:04X}"


def test_no_refusal_leaves_a_trace(rv: Reverie, home: Path) -> None:
    for bad in ("\ud800", "\u202e", "\x00"):
        with pytest.raises(ReverieError):
            rv.memory_apply("ada", {"action": "add", "text": f"x{bad}"})
    assert revision_of(rv) == 0
    assert len(rv.memory_history("ada")) == 1


def test_an_error_echoes_what_was_sent_short_and_never_a_credential(
    rv: Reverie, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name the caller sent is echoed to say what was wrong: a token pasted in its place is
    blanked, in the message and in the error's fields, and a huge one is cut in its middle,
    on every surface (the errors are made safe where they are made)."""
    from tests.conftest import fake

    token = fake("ghp_", "Zq8Lm2Xv7Rt4Nw9Bp3Kd", "6Hs1Yc5Fj0Ga")
    with pytest.raises(NotFound) as err:
        rv.memory_read(token)
    assert token not in json.dumps(err.value.to_dict()) and "[redacted]" in err.value.message
    with pytest.raises(NotFound) as err:
        rv.memory_read("x" * 1_000_000)
    text = json.dumps(err.value.to_dict())
    assert len(text) < 3000 and "characters ...]" in err.value.message
    code, out = cli(capsys, monkeypatch, "--home", str(rv.home), "memory", "show", token)
    assert code == 5 and token not in json.dumps(out)


def test_a_name_or_id_that_looks_like_a_credential_is_refused(rv: Reverie) -> None:
    """W4 on every path: names and ids are listed, logged and cited in review commits, so a
    token pasted as one is refused, without being quoted, and nothing is written."""
    from tests.conftest import fake

    token = fake("ghp_", "Zq8Lm2Xv7Rt4Nw9Bp3Kd", "6Hs1Yc5Fj0Ga")
    record = {
        "conversation": "c1",
        "agent": "ada",
        "channel": {"kind": "dm", "id": "D1"},
        "role": "user",
        "text": "hello",
        "time": "2024-05-08T13:56:00Z",
    }
    refusals = [
        (lambda: rv.create_agent(token), "invalid_name"),
        (lambda: rv.add_member(token), "invalid_name"),
        (lambda: rv.import_records([{**record, "conversation": token}]), "invalid_id"),
        (
            lambda: rv.import_records([{**record, "channel": {"kind": "dm", "id": token}}]),
            "invalid_id",
        ),
        (lambda: rv.import_records([{**record, "title": token}]), "invalid_operation"),
    ]
    for call, code in refusals:
        with pytest.raises(RefusedInput) as err:
            call()
        assert err.value.code == code and token not in json.dumps(err.value.to_dict())
        assert "credential" in err.value.message
    assert [a.name for a in rv.agents()] == ["ada"] and rv.context_sessions("ada") == []


def test_a_token_label_and_a_default_model_refuse_control_characters(rv: Reverie) -> None:
    """Both are listed and shown; on PostgreSQL a NUL was stored as U+FFFD, on SQLite as it
    was, and ESC or BEL reached a terminal's screen through `reverie token list`."""
    rv.add_member("olga", "owner")
    for label in ("lab\x00el", "lab\x1b[2J\x07"):
        with pytest.raises(RefusedInput) as err:
            rv.create_token("olga", label)
        assert err.value.code == "invalid_name"
    with pytest.raises(RefusedInput) as err:
        rv.configure_agent("ada", default_model="openai:m\x00")
    assert err.value.code == "invalid_setting"
    assert rv.tokens_of("olga") == [] and rv.agent("ada").default_model is None
