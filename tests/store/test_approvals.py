"""Channel instructions and approvals (SPEC I1-I3, X1): a proposal changes nothing until a
person with the right approves it; approve applies exactly its text, once, even across a kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.errors import NotFound, PermissionDenied, RefusedInput

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ws(rv: Reverie) -> Reverie:
    rv.add_member("olga", "owner")
    rv.add_member("ann", "admin")
    rv.add_member("sam", "member")
    rv.add_member("gone", "member", active=False)
    rv.ensure_channel("D-sam", "dm")
    rv.ensure_channel("C-eng", "channel")
    rv.ensure_channel("C-other", "channel")
    rv.grant("ada", "C-eng")
    return rv


def conv(rv: Reverie, channel: str) -> str:
    return rv.create_conversation("ada", channel).id


def test_i1_append_by_an_admitted_member_creates_a_pending_approval(ws: Reverie) -> None:
    a = ws.propose_instructions(conv(ws, "C-eng"), "Answer in English.", "append", author="sam")
    assert a.status == "pending" and a.id.startswith("apr_") and a.requested_by == "sam"
    # I2: nothing changes until it is approved.
    assert ws.channel_instructions("ada", "C-eng").text == ""
    assert [x.id for x in ws.approvals("ada")] == [a.id]


@pytest.mark.parametrize(
    ("channel", "author", "mode"),
    [
        ("C-other", "sam", "append"),  # the agent has no grant there: nobody is admitted
        ("C-eng", "gone", "append"),  # an inactive member
        ("C-eng", "stranger", "append"),  # not a member at all
        ("C-eng", None, "append"),
        ("C-eng", "sam", "replace"),  # replace is for admins
        ("D-sam", "sam", "replace"),
    ],
)
def test_i1_x1_who_may_propose_comes_from_stored_state(
    ws: Reverie, channel: str, author: str | None, mode: str
) -> None:
    with pytest.raises(PermissionDenied):
        ws.propose_instructions(conv(ws, channel), "Be terse.", mode, author=author)
    assert ws.approvals() == []


def test_i1_admins_may_replace_and_members_append_in_a_dm(ws: Reverie) -> None:
    assert (
        ws.propose_instructions(conv(ws, "C-eng"), "New.", "replace", author="ann").mode
        == "replace"
    )
    assert ws.propose_instructions(conv(ws, "D-sam"), "Be terse.", "append", author="sam")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("x" * 2401, "invalid_instructions"),
        ("Use this:\n```\nrm -rf /\n```", "invalid_instructions"),
        ("   ", "invalid_instructions"),
        ("bell \x07", "memory_invalid_control_character"),
    ],
)
def test_i1_text_rules(ws: Reverie, text: str, code: str) -> None:
    with pytest.raises(RefusedInput) as e:
        ws.propose_instructions(conv(ws, "C-eng"), text, "append", author="sam")
    assert e.value.code == code
    assert ws.approvals() == []
    ws.propose_instructions(conv(ws, "C-eng"), "x" * 2400, "append", author="sam")


def test_i2_approve_applies_exactly_that_text_once(ws: Reverie) -> None:
    c = conv(ws, "C-eng")
    first = ws.propose_instructions(c, "Answer in English.", "append", author="sam")
    second = ws.propose_instructions(c, "Use metric units.", "append", author="sam")
    done = ws.approve(first.id, by="olga")
    assert (done.status, done.decided_by, done.applied_version) == ("approved", "olga", 1)
    assert ws.channel_instructions("ada", "C-eng").text == "Answer in English."
    # Approving again answers it again and applies nothing.
    assert ws.approve(first.id, by="olga").applied_version == 1
    ws.approve(second.id, by="ann")
    got = ws.channel_instructions("ada", "C-eng")
    assert (got.text, got.version) == ("Answer in English.\n\nUse metric units.", 2)
    replace = ws.propose_instructions(c, "Only French.", "replace", author="ann")
    ws.approve(replace.id, by="olga")
    assert ws.channel_instructions("ada", "C-eng").text == "Only French."
    # The requesting conversation is told, through the outbox.
    notices = [d.text for d in ws.pending_deliveries(conversation_id=c) if d.kind == "notice"]
    assert any(first.id in n and "approved" in n for n in notices)


def test_i2_deny_and_comment_cancel(ws: Reverie) -> None:
    c = conv(ws, "C-eng")
    a = ws.propose_instructions(c, "Shout.", "append", author="sam")
    b = ws.propose_instructions(c, "Whisper.", "append", author="sam")
    assert ws.deny(a.id, by="ann").status == "denied"
    got = ws.comment(b.id, "Say why first.", by="ann")
    assert (got.status, got.comment) == ("commented", "Say why first.")
    assert ws.channel_instructions("ada", "C-eng").version == 0
    assert ws.approvals() == [] and len(ws.approvals(status=None)) == 2
    for decided in (a.id, b.id):
        with pytest.raises(RefusedInput) as e:
            ws.approve(decided, by="olga")
        assert e.value.code == "approval_decided"
    assert ws.channel_instructions("ada", "C-eng").version == 0
    notices = " ".join(d.text for d in ws.pending_deliveries(conversation_id=c))
    assert "denied" in notices and "Say why first." in notices


def test_a1_x1_only_editors_of_the_agent_decide(ws: Reverie) -> None:
    a = ws.propose_instructions(conv(ws, "C-eng"), "Be terse.", "append", author="sam")
    for who in ("sam", "gone", "stranger"):
        with pytest.raises(PermissionDenied):
            ws.approve(a.id, by=who)
    assert ws.approval(a.id).status == "pending"
    # The agent's edit policy lets every member decide.
    ws.configure_agent("ada", edit_policy="all_workspace_members")
    assert ws.approve(a.id, by="sam").status == "approved"
    with pytest.raises(NotFound):
        ws.approve("apr_nope", by="olga")


def test_i3_instructions_survive_clearing_a_conversation(ws: Reverie) -> None:
    c = conv(ws, "C-eng")
    ws.approve(ws.propose_instructions(c, "Answer in English.", author="sam").id, by="olga")
    ws.delete_conversation(c)
    assert ws.channel_instructions("ada", "C-eng").text == "Answer in English."
    assert ws.channel_instructions("ada", "C-other").text == ""


_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from reverie import Reverie
    from reverie.store.instructions import InstructionStore

    home, approval, where = sys.argv[1:4]
    real = InstructionStore._apply

    def die(*args, **kwargs):
        if where == "after_apply":
            real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    if where == "after_commit":
        real_decide = InstructionStore.decide
        def decide(self, *args, **kwargs):
            real_decide(self, *args, **kwargs)
            os.kill(os.getpid(), signal.SIGKILL)
        InstructionStore.decide = decide
    else:
        InstructionStore._apply = die
    Reverie(home).approve(approval, by="olga")
    """
)


@pytest.mark.parametrize("where", ["before_apply", "after_apply", "after_commit"])
def test_i2_a_kill_during_approve_applies_the_text_exactly_once(ws: Reverie, where: str) -> None:
    c = conv(ws, "C-eng")
    a = ws.propose_instructions(c, "Answer in English.", "append", author="sam")
    ws.close()
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ws.home), a.id, where],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    with Reverie(ws.home) as again:
        status = again.approval(a.id).status
        instructions = again.channel_instructions("ada", "C-eng")
        if where == "after_commit":
            assert status == "approved" and instructions.version == 1
        else:  # the transaction never committed: still pending, nothing applied
            assert status == "pending" and instructions.version == 0
        # Approving (again) after the restart leaves the text applied exactly once.
        again.approve(a.id, by="olga")
        again.approve(a.id, by="olga")
        got = again.channel_instructions("ada", "C-eng")
        assert (got.text, got.version) == ("Answer in English.", 1)
