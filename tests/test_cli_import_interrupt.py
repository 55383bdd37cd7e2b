"""Ctrl-C during ``reverie conversations import`` (SPEC 15): no traceback, exit 130, and a
message that says truthfully what was kept. An import is one transaction, so an interrupt
before its end keeps nothing; running it again imports the whole file, and ends with the same
data as one import that was never interrupted."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pexpect
import pytest

from reverie import Reverie
from reverie.cli import main
from reverie.errors import NotFound
from tests.conftest import PostgresServer

ROOT = Path(__file__).resolve().parents[1]

#: Messages in each conversation, and the agents they belong to.
MESSAGES, AGENTS = 25, 4


def records(conversations: int) -> Iterator[dict[str, Any]]:
    """``conversations`` DM conversations of MESSAGES messages; every other one closed."""
    for c in range(conversations):
        agent = f"agent{c % AGENTS}"
        for i in range(MESSAGES):
            user = i % 2 == 0
            yield {
                "conversation": f"conv-{c}",
                "agent": agent,
                "channel": {"kind": "dm", "id": f"D{c % 9}"},
                "author": "sam" if user else agent,
                "role": "user" if user else "assistant",
                "text": f"Message {i} of conversation {c}: the billing deploy runs on Tuesdays.",
                "time": f"2024-05-{1 + c % 28:02d}T{i % 24:02d}:{c % 60:02d}:00Z",
            }
        if c % 2:
            yield {"conversation": f"conv-{c}", "closed": True}


def lines(conversations: int) -> int:
    return conversations * MESSAGES + conversations // 2


def write(path: Path, conversations: int) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records(conversations)))
    return path


#: The terminal test's file: past the 2,000 lines from which the progress bar shows, and long
#: enough that Ctrl-C lands before its end (PostgreSQL writes a line more slowly).
BIG = {"sqlite": 160, "postgres": 84}
#: The in-process tests' file.
SMALL = 8


@pytest.fixture
def home(tmp_path: Path, backend: str) -> str:
    h = tmp_path / "home"
    Reverie(h, create=True).close()
    return str(h)


@pytest.fixture
def reference(
    tmp_path: Path, backend: str, postgres_server: PostgresServer
) -> Iterator[tuple[str, str | None]]:
    """A second, empty home for the import that is never interrupted (on PostgreSQL, in a
    schema of its own): its path and database URL."""
    h = tmp_path / "reference"
    if backend != "postgres":
        Reverie(h, create=True).close()
        yield str(h), None
        return
    schema, url = postgres_server.schema_url()
    with database(url):
        Reverie(h, create=True).close()
    yield str(h), url
    postgres_server.drop_schema(schema)


@contextmanager
def database(url: str | None) -> Iterator[None]:
    """The backend of a home opened in this process: ``url``, or the test's own."""
    if url is None:
        yield
        return
    before = os.environ.get("REVERIE_DATABASE_URL")
    os.environ["REVERIE_DATABASE_URL"] = url
    try:
        yield
    finally:
        if before is None:
            del os.environ["REVERIE_DATABASE_URL"]
        else:
            os.environ["REVERIE_DATABASE_URL"] = before


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    e["PYTHONPATH"] = str(ROOT / "src")
    if "REVERIE_DATABASE_URL" in os.environ:  # the backend under test
        e["REVERIE_DATABASE_URL"] = os.environ["REVERIE_DATABASE_URL"]
    return e


def snapshot(home: str, n: int) -> dict[str, Any]:
    """Everything an import of ``n`` conversations writes, as the facade reads it back."""
    with Reverie(home) as rv:
        agents = {a.name: rv.memory_read(a.name).revision for a in rv.agents()}
        conversations = {}
        for c in range(n):
            try:
                conv = rv.conversation(f"conv-{c}")
            except NotFound:
                continue
            page = rv.context_read(None, conv.id, max_chars=100_000)
            assert page.next_cursor is None
            conversations[conv.id] = (
                rv.agent(conv.agent_id).name,
                conv.channel_id,
                conv.memory_mode,
                conv.closed,
                [(m.position, m.role, m.author, m.text, m.time) for m in page.messages],
            )
    return {"agents": agents, "conversations": conversations}


def test_ctrl_c_in_a_terminal_keeps_nothing_and_a_second_import_completes(
    home: str, tmp_path: Path, backend: str, reference: tuple[str, str | None]
) -> None:
    n = BIG[backend]
    big = write(tmp_path / "big.jsonl", n)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "reverie.cli", "conversations", "import", str(big), "--home", home],
        env={**env(), "TERM": "xterm", "COLUMNS": "120"},
        encoding="utf-8",
        codec_errors="replace",
        timeout=120,
        dimensions=(24, 120),
    )
    try:
        # The bar shows a percentage once lines are being written, inside the transaction.
        child.expect(re.compile(r"\d+%"))
        child.sendintr()  # what Ctrl-C sends: SIGINT to the terminal's foreground
        child.expect(pexpect.EOF)
        said = child.before
    finally:
        child.close()
    assert child.exitstatus == 130, said
    assert "Traceback" not in said
    message = re.search(r"error \(interrupted\): Interrupted; ([^\r\n]*)", said)
    assert message, said
    assert message[1].startswith(
        "nothing was imported: an import is all or nothing, and this one stopped before its "
        "end, after "
    )
    assert message[1].endswith(
        f" of its {lines(n):,} lines. Running it again is safe: it adds what is missing and "
        "skips what is already there."
    )
    assert snapshot(home, n) == {"agents": {}, "conversations": {}}

    again = subprocess.run(
        [sys.executable, "-m", "reverie.cli", "conversations", "import", str(big), "--json"],
        capture_output=True,
        text=True,
        env={**env(), "REVERIE_HOME": home},
        timeout=120,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout) == {
        "conversations": n,
        "messages": n * MESSAGES,
        "closed": n // 2,
        "skipped": 0,
    }
    ref_home, ref_url = reference
    with database(ref_url):
        assert main(["conversations", "import", str(big), "--home", ref_home, "--json"]) == 0
        once = snapshot(ref_home, n)
    assert snapshot(home, n) == once
    assert len(once["conversations"]) == n and len(once["agents"]) == AGENTS


# Where the interrupt comes decides what is true to say: in process, the interrupt raised at
# a chosen moment.


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return write(tmp_path / "small.jsonl", SMALL)


def interrupt_at(monkeypatch: pytest.MonkeyPatch, at: Callable[[int, int], bool]) -> None:
    """Ctrl-C as the import writes its line ``done`` of ``total``, when ``at`` says so."""
    real = Reverie.import_conversations

    def wrapped(self: Reverie, lines: Any, progress: Any = None) -> Any:
        def step(done: int, total: int) -> None:
            progress(done, total)
            if at(done, total):
                raise KeyboardInterrupt

        return real(self, lines, step)

    monkeypatch.setattr(Reverie, "import_conversations", wrapped)


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main([*args, "--json"])
    return code, json.loads(capsys.readouterr().out)


AGAIN = "Running it again is safe: it adds what is missing and skips what is already there."


def test_an_interrupt_part_way_keeps_nothing_and_says_how_far_it_went(
    home: str, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    interrupt_at(monkeypatch, lambda done, total: done == 10)
    code, said = run_json(capsys, "conversations", "import", str(small), "--home", home)
    assert code == 130
    assert said["error"] == {
        "code": "interrupted",
        "message": "Interrupted; nothing was imported: an import is all or nothing, and this "
        f"one stopped before its end, after 10 of its {lines(SMALL)} lines. {AGAIN}",
    }
    assert snapshot(home, SMALL) == {"agents": {}, "conversations": {}}


def test_an_interrupt_at_the_last_line_says_it_was_all_or_nothing(
    home: str, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once every line is written, the commit may or may not have been reached (here it was
    not: the interrupt came inside the transaction)."""
    real = Reverie.import_conversations
    interrupt_at(monkeypatch, lambda done, total: done == total)
    code, said = run_json(capsys, "conversations", "import", str(small), "--home", home)
    assert code == 130
    assert said["error"]["message"] == (
        f"Interrupted; every line had been written and the import was ending, so either all "
        f"{lines(SMALL)} lines were imported or none was (an import is all or nothing). {AGAIN}"
    )
    assert snapshot(home, SMALL) == {"agents": {}, "conversations": {}}
    monkeypatch.setattr(Reverie, "import_conversations", real)  # no more Ctrl-C
    assert run_json(capsys, "conversations", "import", str(small), "--home", home)[0] == 0
    assert len(snapshot(home, SMALL)["conversations"]) == SMALL


def test_an_interrupt_after_the_commit_says_the_same_and_all_was_kept(
    home: str, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while the facade makes the new agents' memories, after the commit: all of it
    was imported, as the message allows, and the memories are made when first used."""
    real = Reverie.import_conversations

    def late(self: Reverie, lines: Any, progress: Any = None) -> Any:
        real(self, lines, progress)
        raise KeyboardInterrupt

    monkeypatch.setattr(Reverie, "import_conversations", late)
    code, said = run_json(capsys, "conversations", "import", str(small), "--home", home)
    assert code == 130 and said["error"]["message"].startswith(
        "Interrupted; every line had been written and the import was ending"
    )
    done = snapshot(home, SMALL)
    assert len(done["conversations"]) == SMALL and done["agents"] == {
        f"agent{i}": 0 for i in range(AGENTS)
    }
    monkeypatch.setattr(Reverie, "import_conversations", real)
    code, again = run_json(capsys, "conversations", "import", str(small), "--home", home)
    assert code == 0 and again["messages"] == 0 and again["skipped"] == SMALL * MESSAGES
    assert snapshot(home, SMALL) == done


def test_an_interrupt_once_the_import_returned_says_it_finished(
    home: str, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Reverie.close

    def close(self: Reverie) -> None:
        real(self)
        raise KeyboardInterrupt  # as the home closes, after the import

    monkeypatch.setattr(Reverie, "close", close)
    code, said = run_json(capsys, "conversations", "import", str(small), "--home", home)
    monkeypatch.setattr(Reverie, "close", real)
    assert code == 130
    assert said["error"]["message"] == (
        f"Interrupted; the import had finished: {SMALL * MESSAGES} messages added to {SMALL} "
        f"conversations, {SMALL // 2} closed. Nothing is left to do."
    )
    assert len(snapshot(home, SMALL)["conversations"]) == SMALL


def test_an_interrupt_while_reading_the_input_keeps_nothing(
    home: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def reading(file: str) -> tuple[str, str]:
        raise KeyboardInterrupt  # Ctrl-C while stdin is still being typed or piped

    monkeypatch.setattr(sys.modules["reverie.cli.conversations"], "read_input", reading)
    code, said = run_json(capsys, "conversations", "import", "-", "--home", home)
    assert code == 130
    assert said["error"]["message"] == (
        f"Interrupted; nothing was imported: an import is all or nothing, and this one stopped "
        f"before its end. {AGAIN}"
    )
