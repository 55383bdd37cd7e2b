"""Ctrl-C at any point of a command (SPEC 15), the first second too, while the package loads:
no traceback, one line (or the contract's JSON error), exit 130. Through the ``reverie``
script itself and ``python -m reverie.cli``, as a person starts them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import reverie
from tests.server.conftest import free_port

SRC = str(Path(reverie.__file__).resolve().parents[1])
SCRIPT = str(Path(sys.executable).with_name("reverie"))
ENTRIES = {"script": [SCRIPT], "module": [sys.executable, "-m", "reverie.cli"]}


def _start(command: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command,
        stdin=subprocess.PIPE,  # open, and silent: `reverie mcp` waits on it
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC, "REVERIE_DATABASE_URL": ""},
    )


#: Per entry, a process that starts as it does and runs no code of Reverie's: ``python -m``
#: imports ``runpy`` first.
BARE = {"script": ["-c", "pass"], "module": ["-c", "import runpy"]}


def _interpreter_start(entry: str) -> float:
    """Seconds this machine's interpreter takes to start (and exit) as ``entry`` does, with
    nothing to do, the slowest of three: before that, no code of Reverie runs, and an
    interrupt is Python's own to answer."""
    times = []
    for _ in range(3):
        began = time.monotonic()
        subprocess.run([sys.executable, *BARE[entry]], check=True)
        times.append(time.monotonic() - began)
    return max(times)


@pytest.fixture(scope="module")
def starts() -> dict[str, float]:
    return {entry: _interpreter_start(entry) for entry in ENTRIES}


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("delay", [0.05, 0.2, 0.5])
@pytest.mark.parametrize("command", ["mcp", "serve"])
def test_15_ctrl_c_in_the_first_second_ends_quietly(
    tmp_path: Path, starts: dict[str, float], entry: str, delay: float, command: str
) -> None:
    """15: SIGINT ``delay`` seconds after the interpreter is up (the package takes about a
    second to load): exit 130, no traceback, one line that says the command was interrupted;
    with ``--json``, the contract's JSON error on stdout. ``reverie mcp`` waits on its stdin
    however soon it loaded; ``reverie serve``, once it has said where it serves, stops
    cleanly on Ctrl-C (exit 0, "Stopped."), as it does whenever it is stopped."""
    args = [command] + (["--port", str(free_port())] if command == "serve" else [])
    for as_json in (False, True):
        proc = _start(
            [*ENTRIES[entry], "--home", str(tmp_path / "home"), *args]
            + (["--json"] if as_json else [])
        )
        time.sleep(starts[entry] + delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert "Traceback" not in err, err
        if "Reverie is serving" in out:  # serve was up: its own clean stop
            assert proc.returncode == 0 and out.rstrip().endswith("Stopped."), (out, err)
            continue
        assert proc.returncode == 130, (proc.returncode, out, err)
        if as_json:
            assert json.loads(out)["error"]["code"] == "interrupted", out
        else:
            lines = err.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error (interrupted): Interrupted"), err


def test_15_importing_reverie_loads_no_command_nor_store() -> None:
    """What the CLI imports before it can answer Ctrl-C is the standard library's start:
    ``import reverie.cli`` loads none of the commands, the stores or ``typing``; a public name
    of ``reverie`` is there on first use."""
    code = (
        "import sys, reverie.cli\n"
        "heavy = [m for m in sys.modules if m.startswith(('reverie.', 'typing', 'click', 'json'))"
        " and m != 'reverie.cli._interrupt']\n"
        "assert heavy == ['reverie.cli'], heavy\n"
        "from reverie import Reverie, WriteOutcome\n"
        "assert Reverie.__module__ == 'reverie.api' and 'reverie.api' in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC},
    )
    assert done.returncode == 0, done.stderr


def test_15_an_interrupt_a_callback_swallows_while_the_commands_load_still_ends_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """15: a SIGINT that lands in a callback while the commands load (importlib's module lock
    has one) is swallowed there, and Python prints "Exception ignored in ..." with a traceback
    and goes on loading: the command then ran as if not interrupted. It ends the loading as an
    interrupt anywhere else does, and nothing is printed."""
    import weakref

    import reverie.cli as cli

    class Held:
        pass

    def loading() -> str:
        held = Held()

        def callback(_: object) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)  # the handler runs here, inside the callback

        ref = weakref.ref(held, callback)
        del held
        assert ref() is None
        return "loaded"

    monkeypatch.setattr(cli, "_commands", loading)
    with pytest.raises(KeyboardInterrupt), cli.watching():  # as cli.main runs it
        cli._load()
    assert "Exception ignored" not in capsys.readouterr().err


@pytest.mark.parametrize("interrupt", [True, False])
def test_15_an_interrupt_a_library_turns_into_its_own_error_ends_as_an_interrupt(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    interrupt: bool,
) -> None:
    """15: a SIGINT that lands while a library builds something (pydantic's compiled core,
    while the MCP SDK's models load) comes back as that library's error ("SchemaError: ...
    KeyboardInterrupt"); the command answered it as a bug (internal_error, exit 1). It ends as
    interrupted, exit 130; the same error with no SIGINT is still a bug."""
    import reverie.cli as cli
    from reverie.cli import _contract

    def building(*args: object, **kwargs: object) -> None:
        try:
            if interrupt:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.5)  # the handler runs here
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error building serializer: KeyboardInterrupt") from exc
        raise RuntimeError("Error building serializer")

    monkeypatch.setattr(_contract, "Reverie", building)
    code = cli.main(["--home", str(tmp_path), "agent", "create", "ada"])
    err = capsys.readouterr().err
    if interrupt:
        assert code == 130 and "error (interrupted)" in err, err
    else:
        assert code == 1 and "error (internal_error)" in err, err
