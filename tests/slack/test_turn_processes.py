"""A Slack turn under way in another process (SPEC P3, W7), on both backends.

A worker process (``_turn_worker.py``) takes an event and runs its turn, which waits on the
model; this process is the one that resumes the turns a dead worker left. Killed with SIGKILL,
the worker leaves its turn ``running``: the turn run again marks it ``interrupted`` and answers
once. Alive, its turn is neither marked nor run again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reverie.slack import app as slack_app
from tests.llm.fake_openai_server import Received, Scripted
from tests.slack.conftest import BOT_TOKEN, DM_SAM, SAM, SIGNING_SECRET, Stack
from tests.slack.fake_slack_server import signed_headers

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def stack(backend: str, stack_factory: Callable[..., Stack]) -> Stack:
    """The resuming process's app, on the test's backend (``backend`` sets it first)."""
    return stack_factory()


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """Holds the model's answer to the worker until set (set at the end in any case)."""
    event = threading.Event()
    yield event
    event.set()


def held_answer(gate: threading.Event, text: str) -> Callable[[Received], Scripted]:
    def answer(request: Received) -> Scripted:
        gate.wait(60)
        return Scripted(text)

    return answer


def start_worker(stack: Stack, body: dict[str, Any]) -> subprocess.Popen[str]:
    """A worker process on the same home, database, Slack and model, given ``body``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    if os.environ.get("REVERIE_DATABASE_URL"):
        env["REVERIE_DATABASE_URL"] = os.environ["REVERIE_DATABASE_URL"]
    env |= {
        "PYTHONPATH": str(ROOT / "src"),
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "REVERIE_SLACK_API_URL": stack.slack.api_url,
        "REVERIE_MODEL": "openai:gpt-test",
        "REVERIE_MODEL_MAX_RETRIES": "0",
        "OPENAI_BASE_URL": stack.model.base_url,
        "OPENAI_API_KEY": "sk-local",
    }
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "slack" / "_turn_worker.py"), str(stack.rv.home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready", proc.communicate(timeout=30)[1]
    raw = json.dumps(body)
    headers = signed_headers(SIGNING_SECRET, raw)
    proc.stdin.write(json.dumps({"body": raw, "headers": headers}) + "\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "200", proc.communicate(timeout=30)[1]
    return proc


def kill_mid_turn(stack: Stack, body: dict[str, Any], gate: threading.Event) -> None:
    """A worker process takes ``body`` and is killed (SIGKILL) while its turn waits on the
    model; the held model call is let go after."""
    worker = start_worker(stack, body)
    try:
        wait_until(lambda: len(stack.model.requests) == 1)  # its turn waits on the model
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        gate.set()


def wait_until(done: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def outcomes(stack: Stack, conversation: str) -> list[str]:
    return [t.outcome for t in stack.rv.turn_log(conversation)]


def test_P3_a_killed_workers_turn_is_marked_interrupted_and_answered_once(
    stack: Stack, gate: threading.Event
) -> None:
    stack.model.script.append(held_answer(gate, "Too late."))  # the worker's call
    stack.model.answer("On Tuesdays.")  # the turn run again
    body = stack.events.message(SAM, DM_SAM, "When do we deploy?")
    conversation = f"slack:{DM_SAM}:{body['event']['ts']}"
    kill_mid_turn(stack, body, gate)
    assert outcomes(stack, conversation) == ["running"]  # what the dead worker left
    assert stack.surface.resume() == 1
    stack.settle()
    cut, answered = stack.rv.turn_log(conversation)
    assert (cut.outcome, answered.outcome) == ("interrupted", "delivered")
    assert cut.answer_position is None and cut.finished_at == answered.started_at
    assert cut.request_position == answered.request_position
    assert stack.texts(DM_SAM) == ["On Tuesdays."]
    assert len(stack.model.requests) == 2
    # Answered: no later look runs it again, nor marks anything.
    assert stack.surface.resume() == 0
    assert stack.rv.unanswered("slack:", 0) == []
    assert outcomes(stack, conversation) == ["interrupted", "delivered"]


def test_P3_a_live_turn_in_another_process_is_neither_marked_nor_run_again(
    stack: Stack, gate: threading.Event
) -> None:
    stack.model.script.append(held_answer(gate, "On Tuesdays."))
    body = stack.events.message(SAM, DM_SAM, "When do we deploy?")
    conversation = f"slack:{DM_SAM}:{body['event']['ts']}"
    worker = start_worker(stack, body)
    try:
        wait_until(lambda: len(stack.model.requests) == 1)
        # Its message looks unanswered, but its process holds the turn: nothing is done.
        assert [u.message_id for u in stack.rv.unanswered("slack:", 0)] == [
            f"slack:{body['event_id']}"
        ]
        assert stack.surface.resume() == 0
        assert outcomes(stack, conversation) == ["running"]
        gate.set()
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "idle"
    finally:
        worker.communicate(timeout=30)
    stack.settle()  # this process posts what the worker queued
    assert outcomes(stack, conversation) == ["delivered"]
    assert stack.texts(DM_SAM) == ["On Tuesdays."]
    assert len(stack.model.requests) == 1
    assert stack.surface.resume() == 0


def test_P3_a_killed_workers_turn_too_old_to_run_again_is_marked_interrupted(
    stack: Stack, gate: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack.model.script.append(held_answer(gate, "Too late."))
    body = stack.events.message(SAM, DM_SAM, "When do we deploy?")
    conversation = f"slack:{DM_SAM}:{body['event']['ts']}"
    kill_mid_turn(stack, body, gate)
    assert outcomes(stack, conversation) == ["running"]
    # Older than the window: not answered late, but no longer shown as running either.
    monkeypatch.setattr(slack_app, "RESUME_SECONDS", -60)
    assert stack.surface.resume() == 0
    stack.settle()
    [cut] = stack.rv.turn_log(conversation)
    assert cut.outcome == "interrupted" and cut.finished_at is not None
    assert stack.texts(DM_SAM) == [] and len(stack.model.requests) == 1
