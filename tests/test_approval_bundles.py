"""Approving a bundle (A2: a memory body with an instruction change) writes both halves or
neither (W1, I2), whoever approves or denies it at the same time and wherever a process stops;
a caller's idempotency key never meets the key of a write Reverie makes for itself (W7); and
approving re-reads the agent's grant (X1). On both backends."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

import pytest

from reverie import Reverie
from reverie.errors import PermissionDenied, RefusedInput, ReverieError, RevisionConflict
from reverie.store.instructions import Approval


@pytest.fixture
def ws(rv: Reverie) -> Reverie:
    rv.add_member("olga", "owner")
    rv.add_member("ann", "admin")
    rv.add_member("sam", "member")
    rv.ensure_channel("C-eng", "channel")
    rv.ensure_channel("D-sam", "dm")
    rv.grant("ada", "C-eng")
    return rv


def bundle(rv: Reverie, line: str, instructions: str = "Be brief.") -> Approval:
    """A bundle that adds ``line`` to the memory as it is now, and ``instructions`` to
    C-eng's."""
    now = rv.memory_read("ada")
    return rv.propose_bundle(
        "ada",
        body=now.text + f"- {line}\n",
        expected_revision=now.revision,
        channel_id="C-eng",
        instructions=instructions,
        requested_by="ann",
    )


def memory(rv: Reverie) -> tuple[int, str]:
    got = rv.memory_read("ada")
    return got.revision, got.text


def refused(call: Callable[[], Any], code: str) -> ReverieError:
    with pytest.raises(ReverieError) as e:
        call()
    assert e.value.code == code, e.value
    return e.value


# 1a: a refused instructions half writes no memory


def test_w1_i2_a_bundle_whose_instructions_would_be_too_long_writes_no_memory(
    ws: Reverie,
) -> None:
    conv = ws.create_conversation("ada", "C-eng").id
    for i in range(5):
        a = ws.propose_instructions(conv, f"{i}" * 2040, "append", author="sam")
        ws.approve(a.id, by="olga")
    assert len(ws.channel_instructions("ada", "C-eng").text) == 5 * 2040 + 4 * 2
    before = memory(ws)
    b = bundle(ws, "Deploys need two reviewers.", instructions="y" * 2380)
    error = refused(lambda: ws.approve(b.id, by="olga"), "invalid_instructions")
    assert "Nothing changed" in error.message
    assert memory(ws) == before
    got = ws.approval(b.id)
    assert (got.status, got.applying) == ("pending", False)
    assert ws.deny(b.id, by="olga").status == "denied"
    assert memory(ws) == before
    assert ws.channel_instructions("ada", "C-eng").version == 5


# 1b: approve and deny at once, many times


def test_w1_i2_approve_and_deny_at_once_never_leave_half_a_bundle(ws: Reverie) -> None:
    """Two openings of the home (as two processes would) approve and deny the same bundle at
    the same instant, 20 times: each ends approved with both halves applied, or denied with
    neither."""
    approver, denier = Reverie(ws.home), Reverie(ws.home)

    def at_once(approval_id: str) -> dict[str, str]:
        """Approve and deny in two threads started together: the codes they were refused
        with."""
        start = threading.Barrier(2)
        errors: dict[str, str] = {}

        def run(name: str, call: Callable[[], Approval]) -> None:
            start.wait()
            try:
                call()
            except ReverieError as exc:
                errors[name] = exc.code

        threads = [
            threading.Thread(
                target=run, args=("approve", lambda: approver.approve(approval_id, by="olga"))
            ),
            threading.Thread(target=run, args=("deny", lambda: denier.deny(approval_id, by="ann"))),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        return errors

    outcomes: list[str] = []
    try:
        for i in range(20):
            before_rev, before_text = memory(ws)
            before_instructions = ws.channel_instructions("ada", "C-eng")
            b = bundle(ws, f"Round {i} fact.", instructions=f"Round {i} rule.")
            errors = at_once(b.id)
            got = ws.approval(b.id)
            rev, text = memory(ws)
            instructions = ws.channel_instructions("ada", "C-eng")
            if got.status == "approved":
                assert errors in ({"deny": "approval_in_progress"}, {"deny": "approval_decided"})
                assert rev == before_rev + 1 and f"Round {i} fact." in text
                assert instructions.version == before_instructions.version + 1
                assert instructions.text.endswith(f"Round {i} rule.")
            else:
                assert got.status == "denied", (got, errors)
                assert errors == {"approve": "approval_decided"}, errors
                assert (rev, text) == (before_rev, before_text)
                assert instructions == before_instructions
            outcomes.append(got.status)
    finally:
        approver.close()
        denier.close()
    assert set(outcomes) <= {"approved", "denied"}


# a stop between the steps: approving again finishes it, exactly once


class Crash(Exception):
    """A process stopping at this point."""


def crash_at_the_memory_write(rv: Reverie, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """Make a bundle's memory write (the one keyed ``approval:...``) stop the process just
    before it (``before_memory``) or just after it committed (``after_memory``)."""
    store = type(rv.memories)
    for name in ("apply", "apply_agent"):
        real = getattr(store, name)

        def stop(self: Any, *args: Any, real: Any = real, **kwargs: Any) -> Any:
            if not str(kwargs.get("key") or "").startswith("approval:"):
                return real(self, *args, **kwargs)
            if where == "after_memory":
                real(self, *args, **kwargs)
            raise Crash(where)

        monkeypatch.setattr(store, name, stop)


@pytest.mark.parametrize("where", ["before_memory", "after_memory"])
def test_i2_a_bundle_stopped_between_its_steps_is_finished_by_approving_again(
    ws: Reverie, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    before_rev, before_text = memory(ws)
    b = bundle(ws, "Deploys need two reviewers.")
    crash_at_the_memory_write(ws, monkeypatch, where)
    with pytest.raises(Crash):
        ws.approve(b.id, by="olga")
    monkeypatch.undo()
    # Being applied: no deny, no comment; nothing changes.
    error = refused(lambda: ws.deny(b.id, by="ann"), "approval_in_progress")
    assert "Approving it again finishes it" in error.message
    refused(lambda: ws.comment(b.id, "Why?", by="ann"), "approval_in_progress")
    got = ws.approval(b.id)
    assert (got.status, got.applying, got.applying_by) == ("pending", True, "olga")
    assert memory(ws)[0] == before_rev + (where == "after_memory")
    assert ws.channel_instructions("ada", "C-eng").version == 0
    # Nor is another change of the same channel applied meanwhile (the length checked holds).
    conv = ws.create_conversation("ada", "C-eng").id
    plain = ws.propose_instructions(conv, "Use metric units.", "append", author="sam")
    assert (
        refused(lambda: ws.approve(plain.id, by="olga"), "approval_in_progress").details["approval"]
        == b.id
    )
    other = bundle(ws, "Another fact.") if where == "before_memory" else None
    if other is not None:
        refused(lambda: ws.approve(other.id, by="olga"), "approval_in_progress")
    assert ws.approval(b.id).applying and ws.channel_instructions("ada", "C-eng").version == 0
    # Anyone who may approve it finishes it: both halves, once.
    done = ws.approve(b.id, by="ann")
    assert (done.status, done.decided_by, done.applied_version) == ("approved", "ann", 1)
    rev, text = memory(ws)
    assert rev == before_rev + 1 and "Deploys need two reviewers." in text
    assert ws.approve(b.id, by="olga").status == "approved"
    assert memory(ws)[0] == before_rev + 1
    assert ws.channel_instructions("ada", "C-eng").text == "Be brief."
    assert [r.revision for r in ws.memory_history("ada") if b.id in r.message] == [rev]
    # Then the channel's other changes go on.
    ws.approve(plain.id, by="olga")
    assert ws.channel_instructions("ada", "C-eng").version == 2
    if other is not None:  # it expected the revision before the bundle: memory moved
        with pytest.raises(RevisionConflict):
            ws.approve(other.id, by="olga")
        assert not ws.approval(other.id).applying
    assert text != before_text


def test_w6_a_claimed_bundle_whose_memory_moved_is_released_and_can_be_denied(
    ws: Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = bundle(ws, "Only this.")

    crash_at_the_memory_write(ws, monkeypatch, "before_memory")
    with pytest.raises(Crash):
        ws.approve(b.id, by="olga")
    monkeypatch.undo()
    ws.memory_apply("ada", {"action": "add", "text": "Added since."})
    moved = memory(ws)
    with pytest.raises(RevisionConflict) as e:
        ws.approve(b.id, by="olga")
    assert "pending as before" in e.value.message and "Deny it" in e.value.message
    got = ws.approval(b.id)
    assert (got.status, got.applying) == ("pending", False)
    assert memory(ws) == moved and ws.channel_instructions("ada", "C-eng").version == 0
    assert ws.deny(b.id, by="ann").status == "denied"
    assert memory(ws) == moved


def test_w7_a_bundle_whose_key_another_write_took_is_let_go_and_can_be_denied(
    ws: Reverie,
) -> None:
    """Found when the fixes were checked: a home upgraded after a caller had stored an
    unchanged write under `approval:<id>` (before a caller's keys had a namespace) left the
    bundle claimed for good: approve answered idempotency_key_reused, deny
    approval_in_progress, and no other change of that channel could be approved. A write
    Reverie keys itself (a review's) stands in for the old one here."""
    b = bundle(ws, "Deploys need two reviewers.")
    body = ws.memory_read("ada").text
    took = ws.memory_apply(
        "ada", {"action": "set_body", "text": body}, writer="review", key=f"approval:{b.id}"
    )
    assert not took.changed
    before = memory(ws)
    error = refused(lambda: ws.approve(b.id, by="olga"), "idempotency_key_reused")
    assert "pending as before" in error.message and "Deny it" in error.message
    got = ws.approval(b.id)
    assert (got.status, got.applying) == ("pending", False)
    assert memory(ws) == before and ws.channel_instructions("ada", "C-eng").version == 0
    plain = ws.propose_instructions(
        ws.create_conversation("ada", "C-eng").id, "Use metric units.", author="ann"
    )
    assert ws.approve(plain.id, by="olga").status == "approved"
    assert ws.deny(b.id, by="ann").status == "denied"


def test_w1_a_bundle_whose_body_is_refused_now_is_not_claimed(ws: Reverie) -> None:
    """The memory half is checked before the claim: a body the rules refuse now (a smaller
    limit set since it was proposed) leaves the approval pending as it was, to be denied."""
    b = bundle(ws, "x" * 2000)
    before = memory(ws)
    small = dataclasses.replace(ws.settings, max_index_bytes=1000)
    with Reverie(ws.home, settings=small) as strict:
        refused(lambda: strict.approve(b.id, by="olga"), "memory_too_large")
    got = ws.approval(b.id)
    assert (got.status, got.applying) == ("pending", False)
    assert memory(ws) == before and ws.channel_instructions("ada", "C-eng").version == 0
    assert ws.deny(b.id, by="ann").status == "denied"


# W7: a caller's key and the keys Reverie makes


def test_w7_a_callers_key_equal_to_a_bundles_own_key_does_not_block_it(ws: Reverie) -> None:
    b = bundle(ws, "Deploys need two reviewers.")
    body = ws.memory_read("ada").text
    # An editor sends the approval's key with an unchanged body, over the member's facade
    # (as HTTP and MCP do) and the owner's.
    for writer in (ws.as_member("ann"), ws):
        got = writer.memory_apply(
            "ada", {"action": "set_body", "text": body}, writer="mcp", key=f"approval:{b.id}"
        )
        assert not got.changed
    done = ws.approve(b.id, by="olga")
    assert done.status == "approved"
    assert "Deploys need two reviewers." in ws.memory_read("ada").text


def test_w7_a_callers_key_still_replays_over_the_facade(ws: Reverie) -> None:
    ann = ws.as_member("ann")
    request = {"action": "add", "text": "We deploy on Tuesdays.", "section": "Decisions"}
    first = ann.memory_apply("ada", request, writer="api", key="req-1")
    again = ann.memory_apply("ada", request, writer="api", key="req-1")
    assert first.changed and not first.replayed
    assert (again.replayed, again.revision) == (True, first.revision)
    # The same key from the same caller namespace on another path (the CLI, the owner).
    assert ws.memory_apply("ada", request, writer="cli", key="req-1").replayed
    # Another write under it is refused, and the message repeats no key.
    other = {"action": "add", "text": "We deploy on Fridays."}
    error = refused(
        lambda: ann.memory_apply("ada", other, writer="api", key="req-1"),
        "idempotency_key_reused",
    )
    assert "caller:" not in error.message
    assert ws.memory_read("ada").revision == first.revision


def test_w7_a_callers_key_never_answers_a_write_reverie_keyed_itself(ws: Reverie) -> None:
    request = {"action": "add", "text": "Reviewed fact."}
    reviewed = ws.memory_apply("ada", request, writer="review", key="review:abc")
    assert reviewed.changed
    # The same text under the same key from a caller: a write of its own, not a replay.
    got = ws.memory_apply("ada", request, writer="api", key="review:abc")
    assert not got.replayed and not got.changed


# X1: the grant is read again when approving


@pytest.mark.parametrize("kind", ["instructions", "bundle"])
def test_x1_approving_after_the_grant_was_revoked_is_refused(ws: Reverie, kind: str) -> None:
    if kind == "bundle":
        a = bundle(ws, "Deploys need two reviewers.")
    else:
        conv = ws.create_conversation("ada", "C-eng").id
        a = ws.propose_instructions(conv, "Answer in English.", "append", author="sam")
    before = memory(ws)
    ws.revoke("ada", "C-eng")
    with pytest.raises(PermissionDenied) as e:
        ws.approve(a.id, by="olga")
    assert e.value.code == "permission_denied" and "Nothing was applied" in e.value.message
    got = ws.approval(a.id)
    assert (got.status, got.applying) == ("pending", False)
    assert memory(ws) == before and ws.channel_instructions("ada", "C-eng").version == 0
    # Comment and deny still answer it.
    assert ws.comment(a.id, "Not while it has no grant.", by="ann").status == "commented"
    refused(lambda: ws.deny(a.id, by="ann"), "approval_decided")
    assert memory(ws) == before


def test_x1_a_grant_given_again_lets_it_be_approved(ws: Reverie) -> None:
    a = bundle(ws, "Deploys need two reviewers.")
    ws.revoke("ada", "C-eng")
    with pytest.raises(PermissionDenied):
        ws.approve(a.id, by="olga")
    ws.grant("ada", "C-eng")
    assert ws.approve(a.id, by="olga").status == "approved"
    # In a DM there is no grant to hold.
    conv = ws.create_conversation("ada", "D-sam").id
    plain = ws.propose_instructions(conv, "Be terse.", "append", author="sam")
    assert ws.approve(plain.id, by="olga").status == "approved"


def test_i2_a_denied_bundle_cannot_be_claimed(ws: Reverie) -> None:
    a = bundle(ws, "Deploys need two reviewers.")
    before = memory(ws)
    ws.deny(a.id, by="ann")
    with pytest.raises(RefusedInput) as e:
        ws.approve(a.id, by="olga")
    assert e.value.code == "approval_decided"
    assert memory(ws) == before and not ws.approval(a.id).applying
