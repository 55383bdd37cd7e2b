"""SPEC 15: the command-line contract (global options anywhere, JSON shapes, exit codes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.cli import hoist_global_options, main
from reverie.errors import NotFound, RefusedInput


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(list(args))
    text = capsys.readouterr().out
    return code, json.loads(text) if "--json" in args else text


@pytest.fixture
def home(tmp_path: Path, capsys: pytest.CaptureFixture[str], backend: str) -> str:
    h = str(tmp_path / "home")
    assert run(capsys, "--home", h, "init")[0] == 0
    assert run(capsys, "--home", h, "agent", "create", "ada")[0] == 0
    return h


def test_global_options_are_hoisted_from_anywhere() -> None:
    assert hoist_global_options(["memory", "show", "A", "--home", "D", "--json"]) == [
        "--home",
        "D",
        "--json",
        "memory",
        "show",
        "A",
    ]
    assert hoist_global_options(["x", "--home=D", "--", "--json"]) == [
        "--home=D",
        "x",
        "--",
        "--json",
    ]


def test_home_and_json_before_or_after_are_the_same_call(
    home: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a = run(capsys, "--home", home, "memory", "show", "ada", "--json")
    b = run(capsys, "memory", "show", "ada", "--home", home, "--json")
    assert a == b
    assert a[0] == 0 and a[1]["revision"] == 0 and a[1]["source"] == "MEMORY.md"
    assert "## Decisions" in a[1]["text"]


def test_init_is_idempotent(home: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "init", "--home", home, "--json")
    assert code == 0 and out["home"] == home  # and, on PostgreSQL, "database"
    _code, out = run(capsys, "agent", "list", "--home", home, "--json")
    assert [a["name"] for a in out["agents"]] == ["ada"]


def test_apply_search_history_diff(
    home: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "b.json"
    batch.write_text(
        json.dumps(
            {
                "operations": [
                    {
                        "action": "add",
                        "text": "Deploys need the VPN",
                        "section": "Environment & gotchas",
                    },
                    {
                        "action": "write_topic",
                        "topic": "vpn",
                        "content": "# VPN\n- WireGuard on wg0\n",
                    },
                ]
            }
        )
    )
    code, out = run(
        capsys, "memory", "apply", "ada", str(batch), "--home", home, "--json", "--key", "k1"
    )
    assert code == 0
    assert out == {
        "revision": 1,
        "changed": True,
        "paths": ["MEMORY.md", "memory/vpn.md"],
        "diagnostics": [],
        "replayed": False,
    }
    code, out = run(capsys, "memory", "search", "ada", "wireguard vpn", "--home", home, "--json")
    assert code == 0 and out["results"][0]["source"] == "memory/vpn.md"
    assert set(out["results"][0]) == {"source", "excerpt", "score"}
    code, text = run(capsys, "memory", "search", "ada", "wireguard vpn", "--home", home)
    assert code == 0 and text.splitlines()[0].startswith("1. memory/vpn.md  ")
    code, out = run(capsys, "memory", "history", "ada", "--home", home, "--json")
    assert [r["revision"] for r in out["revisions"]] == [1, 0]
    assert out["revisions"][0]["writer"] == "cli"
    code, out = run(capsys, "memory", "diff", "ada", "0", "1", "--home", home, "--json")
    assert "+- Deploys need the VPN" in out["diff"]
    code, out = run(
        capsys,
        "memory",
        "show",
        "ada",
        "--source",
        "memory/vpn.md",
        "--revision",
        "1",
        "--home",
        home,
        "--json",
    )
    assert out["text"] == "# VPN\n- WireGuard on wg0\n"
    code, out = run(capsys, "reindex", "--home", home, "--json")
    assert out == {"reindexed": {"ada": 3}, "history_messages": 0}
    code, out = run(capsys, "reindex", "ada", "--home", home, "--json")
    assert out == {"reindexed": {"ada": 3}}  # one agent: its memory only


def test_w7_a_replayed_key_says_nothing_was_written(
    home: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """W7: `memory apply --key` sent again answers the first write's revision and says, in
    text and in JSON, that it was already applied and nothing was written this time."""
    batch = tmp_path / "b.json"
    batch.write_text(json.dumps({"action": "add", "text": "We deploy on Tuesdays"}))
    apply = ("memory", "apply", "ada", str(batch), "--home", home, "--key", "evt-1")
    code, text = run(capsys, *apply)
    assert code == 0 and text.strip() == "Revision 1: changed (MEMORY.md)"
    code, text = run(capsys, *apply)
    assert code == 0
    assert text.strip().startswith("Revision 1: Already applied with this idempotency key")
    assert "nothing was written this time" in text
    code, out = run(capsys, *apply, "--json")
    assert code == 0 and (out["revision"], out["replayed"]) == (1, True)
    assert "nothing was written this time" in out["message"]
    _code, out = run(capsys, "memory", "history", "ada", "--home", home, "--json")
    assert [r["revision"] for r in out["revisions"]] == [1, 0]


@pytest.mark.parametrize(
    ("args", "stdin", "exit_code", "code"),
    [
        (["memory", "apply", "ada", "-"], '{"action": "remove", "old": "zz"}', 3, "no_match"),
        (["memory", "apply", "ada", "-"], "{not json", 3, "invalid_operation"),
        (
            ["memory", "apply", "ada", "-", "--expected-revision", "5"],
            '{"action": "add", "text": "x"}',
            4,
            "revision_conflict",
        ),
        (["memory", "show", "nobody"], None, 5, "not_found"),
        (["memory", "show", "ada", "--revision", "9"], None, 5, "not_found"),
        (["memory", "show", "ada", "--source", "../x"], None, 3, "invalid_path"),
        (["memory", "search", "ada", "x", "--limit", "50"], None, 2, "usage_error"),
        (["memory", "search", "ada", "x", "--limit", "0"], None, 2, "usage_error"),
        (["memory", "history", "ada", "--limit", "0"], None, 2, "usage_error"),
        (["memory", "show", "ada", "--revision", "-1"], None, 2, "usage_error"),
        (["memory", "show", "ada", "--revision", str(10**30)], None, 2, "usage_error"),
        (["memory", "diff", "ada", "0", str(2**63)], None, 2, "usage_error"),
        (["memory", "apply", "ada", "-", "--expected-revision", "-1"], "{}", 2, "usage_error"),
        (["memory", "show"], None, 2, "usage_error"),
        (["memory", "frobnicate"], None, 2, "usage_error"),
        (["memory", "apply", "ada", "/no/such/file.json"], None, 2, "usage_error"),
    ],
)
def test_refusals_print_json_errors_and_exit_codes(
    home: str,
    args: list[str],
    stdin: str | None,
    exit_code: int,
    code: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if stdin is not None:
        import io

        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    got, out = run(capsys, *args, "--home", home, "--json")
    assert got == exit_code
    assert out["error"]["code"] == code and out["error"]["message"]


def test_missing_home_says_how_to_create_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["agent", "list"], ["mcp"]):
        code, out = run(capsys, *command, "--home", str(tmp_path / "none"), "--json")
        assert code == 5 and "reverie init" in out["error"]["message"], command
        assert "create=True" not in out["error"]["message"]
        assert not (tmp_path / "none").exists()
    # a Python caller is told how to create it from Python
    with pytest.raises(NotFound) as err:
        Reverie(tmp_path / "none")
    assert err.value.code == "home_not_found" and "create=True" in err.value.message
    assert "reverie init" not in err.value.message


def test_error_paths_are_written_one_way(home: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 10: paths came as ``operations.0`` from one check and ``operations[0]`` from
    another."""
    with Reverie(home) as r:
        for request in (
            {"operations": [{"action": "add"}]},
            {"operations": [{"action": "add", "text": 3}]},
            {"operations": [{"action": "add", "text": "x", "extra": 1}]},
            {"operations": [{"action": "replace", "old": "", "text": "x"}]},
        ):
            with pytest.raises(RefusedInput) as err:
                r.memory_apply("ada", request)
            assert "operations[0]" in err.value.message and "operations.0" not in err.value.message


def test_console_script_runs_as_a_process(home: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reverie.cli", "memory", "show", "ada", "--home", home],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("# Memory")
    proc = subprocess.run(
        [sys.executable, "-m", "reverie.cli", "memory", "show", "nobody", "--home", home],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 5 and "not_found" in proc.stderr


def test_tour_runs_end_to_end(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"  # the tour's temporary files: none stays (one holds a token)
    scratch.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "reverie.tour", "--home", str(tmp_path / "t")],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert proc.returncode == 0, proc.stderr
    assert list(scratch.iterdir()) == []
    assert "memory_credential_rejected" in proc.stdout
    assert "Prefers answers in British English" in proc.stdout
    # Output is a pipe, not a terminal: no line is cut at 80 columns, so each JSON line shown
    # (the batches fed to stdin, the --json answers) parses whole.
    shown = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(shown) >= 3 and any(len(line) > 80 for line in shown)
    for line in shown:
        json.loads(line)


def test_the_build_declares_its_license_as_spdx() -> None:
    """``make run`` printed setuptools' deprecation warning for the table form three times."""
    import tomllib

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    assert "setuptools>=77" in project["build-system"]["requires"]


def test_serve_and_mcp_without_the_server_extra_say_what_to_install(
    home: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain `pip install .` leaves the server extra out: `reverie serve` and `reverie mcp`
    refuse with the package to install (exit 3), not an internal error, and start nothing."""
    import importlib.util

    import reverie.http.serve
    import reverie.mcp

    started: list[str] = []
    monkeypatch.setattr(reverie.http.serve, "run", lambda *a, **k: started.append("serve"))
    monkeypatch.setattr(reverie.mcp, "serve_stdio", lambda *a, **k: started.append("mcp"))
    find = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else find(name, *a)
    )
    for command in ("serve", "mcp"):
        code, out = run(capsys, "--home", home, "--json", command)
        assert code == 3 and out["error"]["code"] == "missing_dependency"
        assert "pip install 'reverie[server]'" in out["error"]["message"]
        assert "missing: mcp" in out["error"]["message"]
    assert started == []


def test_serve_with_slack_set_but_without_the_slack_extra_says_what_to_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by an install audit: with SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET set and no
    slack extra, `reverie serve` made the first start's owner and token, then failed as an
    internal error; the token, shown once, was never shown. Now it refuses first (exit 3) and
    makes nothing; `reverie slack --socket` answers the same code."""
    import importlib.util

    import reverie.http.serve

    started: list[str] = []
    monkeypatch.setattr(reverie.http.serve, "run", lambda *a, **k: started.append("serve"))
    find = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name.startswith("slack_") else find(name, *a),
    )
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1-2-abc")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "abc")
    home = tmp_path / "home"
    for command in (["serve"], ["slack", "--socket"]):
        code, out = run(capsys, "--home", str(home), "--json", *command)
        assert code == 3 and out["error"]["code"] == "missing_dependency", out
        assert "pip install 'reverie[slack]'" in out["error"]["message"]
        assert "missing: slack_bolt, slack_sdk" in out["error"]["message"]
    assert started == [] and not home.exists()


def test_init_says_where_the_data_lives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    """On the embedded default `init` makes the home; with REVERIE_DATABASE_URL everything
    lives in the database, and `init` says so rather than name a directory it did not make."""
    h = tmp_path / "home"
    code, out = run(capsys, "--home", str(h), "--json", "init")
    assert code == 0 and out["home"] == str(h)
    if backend == "postgres":
        assert out["database"].startswith("postgresql://") and not h.exists()
        code, text = run(capsys, "--home", str(h), "init")
        assert text.startswith("Reverie ready in postgresql://") and "home ready" not in text
    else:
        assert "database" not in out and h.is_dir()
        code, text = run(capsys, "--home", str(h), "init")
        assert text.strip() == f"Reverie home ready at {h}"
