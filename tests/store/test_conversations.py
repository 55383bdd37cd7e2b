"""Workspace, conversations, memory modes O1-O3, review ranges and the JSON Lines import.

Everything runs through the facade on a real data directory (SQLite and git).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie, Settings
from reverie.errors import NotFound, PermissionDenied, RefusedInput, StorageFault
from reverie.runtime.context import require_memory_on
from tests.conftest import fake

T0 = 1_700_000_000.0
T_0908 = 1_715_158_800.0  # 2024-05-08T09:00:00Z
IDLE = 30 * 60


@pytest.fixture
def ws(rv: Reverie) -> Reverie:
    """ada plus one channel of every kind; A2 is an automation that reports to group G1."""
    for cid, kind in [("D1", "dm"), ("W1", "web"), ("C1", "channel"), ("G1", "group")]:
        rv.ensure_channel(cid, kind)
    rv.ensure_channel("A1", "automation", reports_to="D1")
    rv.ensure_channel("A2", "automation", reports_to="G1")
    return rv


def talk(rv: Reverie, conv: str, *texts: str, channel: str | None = None, at: float = T0) -> None:
    for i, text in enumerate(texts):
        rv.append_message(
            conv,
            "user" if i % 2 == 0 else "assistant",
            text,
            author="sam",
            channel_id=channel,
            time=at + i,
        )


def ids_in_search(rv: Reverie, query: str, agent: str = "ada") -> set[str]:
    return {h.conversation for h in rv.context_search(agent, query, limit=20)}


def pending(rv: Reverie, agent: str = "ada") -> list[tuple[str, int, int]]:
    return rv.pending_ranges(agent, now=T0 + 10 * IDLE)


# O1


@pytest.mark.parametrize(("channel", "reason"), [("D1", "dm"), ("W1", "web"), ("C1", "channel")])
def test_o1_memory_is_on_in_dms_web_and_channels(ws: Reverie, channel: str, reason: str) -> None:
    conv = ws.create_conversation("ada", channel)
    assert (conv.memory_mode, conv.mode_reason, conv.memory_on) == ("on", reason, True)


def test_o1_memory_is_off_in_group_chats(ws: Reverie) -> None:
    conv = ws.create_conversation("ada", "G1")
    assert (conv.memory_mode, conv.mode_reason, conv.memory_on) == (
        "off",
        "started_in_group",
        False,
    )


def test_o1_automations_are_on_unless_they_report_to_a_group(ws: Reverie) -> None:
    assert ws.create_conversation("ada", "A1").memory_mode == "on"
    off = ws.create_conversation("ada", "A2")
    assert (off.memory_mode, off.mode_reason) == ("off", "automation_reports_to_group")


# O2


def test_o2_one_group_message_turns_a_conversation_off_for_good(ws: Reverie) -> None:
    ws.create_conversation("ada", "D1", conversation_id="dm-1")
    talk(ws, "dm-1", "the staging password rotates on Mondays", "noted")
    assert ids_in_search(ws, "staging password") == {"dm-1"}
    ws.append_message("dm-1", "user", "hi all", author="kim", channel_id="G1", time=T0 + 5)
    # later DM messages do not turn it back on
    talk(ws, "dm-1", "back in the DM: staging password again", "ok", at=T0 + 10)
    conv = ws.conversation("dm-1")
    assert (conv.memory_mode, conv.mode_reason) == ("off", "group_message")
    assert conv.linked_chats == ("G1",)
    # never reviewed, even when closed and idle
    ws.close_conversation("dm-1")
    assert pending(ws) == []
    # never searchable, never loaded, never readable from memory-on conversations
    assert ids_in_search(ws, "staging password") == set()
    assert ws.conversations.history_rows() == {}
    ws.create_conversation("ada", "D1", conversation_id="dm-2")
    assert [s.id for s in ws.context_sessions("ada", from_conversation="dm-2")] == []
    with pytest.raises(PermissionDenied) as e:
        ws.context_read("ada", "dm-1", from_conversation="dm-2")
    assert e.value.code == "memory_off"
    with pytest.raises(PermissionDenied):
        require_memory_on(ws.conversations, ws.agent("ada").id, "dm-1", asking=True)
    # classification never overrides a mode
    assert ws.classify_conversation("dm-1").memory_mode == "off"


def test_o2_a_conversation_started_in_a_group_stays_off(ws: Reverie) -> None:
    ws.create_conversation("ada", "G1", conversation_id="g")
    talk(ws, "g", "group talk about tea", "sure", channel="D1")
    assert ws.conversation("g").memory_mode == "off"
    assert ids_in_search(ws, "tea") == set()


def test_o2_sub_sessions_inherit_off_and_follow_their_parent_off(ws: Reverie) -> None:
    ws.create_conversation("ada", "G1", conversation_id="group-parent")
    child = ws.create_conversation("ada", "D1", parent="group-parent")
    assert (child.memory_mode, child.mode_reason) == ("off", "parent_off")
    ws.create_conversation("ada", "D1", conversation_id="p")
    kid = ws.create_conversation("ada", "D1", conversation_id="kid", parent="p")
    talk(ws, "kid", "sub-session research about kiwis", "done")
    assert kid.memory_mode == "on" and ids_in_search(ws, "kiwis") == {"kid"}
    ws.append_message("p", "user", "group ping", channel_id="G1", time=T0)
    kid_now = ws.conversation("kid")
    assert (kid_now.memory_mode, kid_now.mode_reason) == ("off", "parent_off")
    assert ids_in_search(ws, "kiwis") == set()


def test_o2_an_automation_that_reports_to_a_group_is_off(ws: Reverie) -> None:
    conv = ws.create_conversation("ada", "A2", conversation_id="nightly")
    talk(ws, "nightly", "nightly report: 3 failing builds")
    assert conv.memory_mode == "off" and ids_in_search(ws, "failing builds") == set()


def test_o2_an_automation_pointed_at_a_group_turns_off_for_good(ws: Reverie) -> None:
    ws.create_conversation("ada", "A1", conversation_id="run-1")
    talk(ws, "run-1", "automation run about llamas")
    assert ids_in_search(ws, "llamas") == {"run-1"}
    assert ws.ensure_channel("A1", "automation", reports_to="G1").answers_group
    assert ws.conversation("run-1").memory_mode == "off"
    assert ids_in_search(ws, "llamas") == set()
    ws.ensure_channel("A1", "automation", reports_to="D1")
    assert ws.conversation("run-1").memory_mode == "off"
    assert ws.create_conversation("ada", "A1").memory_mode == "on"


def test_o2_linking_a_group_chat_turns_memory_off(ws: Reverie) -> None:
    ws.create_conversation("ada", "W1", conversation_id="web")
    talk(ws, "web", "web session about quokkas")
    assert ws.link_chat("web", "D1").memory_mode == "on"
    conv = ws.link_chat("web", "G1")
    assert (conv.memory_mode, conv.mode_reason) == ("off", "linked_group")
    assert ids_in_search(ws, "quokkas") == set()


def test_o2_unclassified_conversations_are_classified_on_their_next_run(ws: Reverie) -> None:
    for cid in ("old-dm", "old-linked"):
        ws.create_conversation("ada", "D1", conversation_id=cid, unclassified=True)
        talk(ws, cid, f"legacy note about walruses in {cid}")
    ws.create_conversation("ada", "G1", conversation_id="old-group", unclassified=True)
    ws.link_chat("old-linked", "G1")  # linking a group already decides: off
    assert ws.conversation("old-dm").memory_mode is None
    # unknown is not on: not reviewed, not searched, not readable
    assert pending(ws) == []
    assert ids_in_search(ws, "walruses") == set()
    with pytest.raises(PermissionDenied) as e:
        ws.context_read("ada", "old-dm")
    assert e.value.code == "memory_off" and "classified" in e.value.message
    on = ws.classify_conversation("old-dm")
    assert (on.memory_mode, on.mode_reason) == ("on", "classified")
    assert ids_in_search(ws, "walruses") == {"old-dm"}
    assert pending(ws) == [("old-dm", 0, 1)]
    assert ws.classify_conversation("old-linked").memory_mode == "off"
    off = ws.classify_conversation("old-group")
    assert (off.memory_mode, off.mode_reason) == ("off", "classified_group")


def test_o2_a_group_message_decides_an_unclassified_conversation(ws: Reverie) -> None:
    ws.create_conversation("ada", "D1", conversation_id="old", unclassified=True)
    ws.append_message("old", "user", "from the group", channel_id="G1", time=T0)
    assert ws.conversation("old").memory_mode == "off"
    assert ws.classify_conversation("old").memory_mode == "off"


def test_o2_a_sub_session_of_an_unclassified_parent_is_classified_with_it(ws: Reverie) -> None:
    ws.create_conversation("ada", "G1", conversation_id="old", unclassified=True)
    ws.create_conversation("ada", "D1", conversation_id="sub", parent="old")
    assert ws.conversation("sub").memory_mode is None
    assert ws.classify_conversation("sub").memory_mode == "off"
    assert ws.conversation("old").memory_mode == "off"


# O3


def test_o3_memory_off_conversation_is_never_reviewed_loaded_or_seen(ws: Reverie) -> None:
    ws.create_conversation("ada", "G1", conversation_id="group")
    talk(ws, "group", "secret project zebra launches Friday", "ok")
    ws.close_conversation("group")
    ws.create_conversation("ada", "D1", conversation_id="dm")
    talk(ws, "dm", "what is new?")
    assert pending(ws) == [("dm", 0, 1)]
    assert ids_in_search(ws, "zebra") == set()
    assert [s.id for s in ws.context_sessions("ada")] == ["dm"]
    for asking in (None, "dm"):
        with pytest.raises(PermissionDenied):
            ws.context_read("ada", "group", from_conversation=asking)
    with pytest.raises(PermissionDenied) as e:
        ws.context_search("ada", "zebra", from_conversation="group")
    assert e.value.code == "memory_off" and "Nothing was loaded" in e.value.message


def test_o3_no_agent_reads_another_agents_conversations_or_memory(ws: Reverie) -> None:
    ws.create_agent("bob")
    ws.memory_apply("ada", {"action": "add", "text": "ada's private fact: the vault is blue"})
    ws.create_conversation("ada", "D1", conversation_id="ada-dm")
    talk(ws, "ada-dm", "the vault code is in the blue binder")
    with pytest.raises(NotFound) as foreign:
        ws.context_read("bob", "ada-dm")
    with pytest.raises(NotFound) as missing:
        ws.context_read("bob", "no-such-conversation")
    # the same answer as for a conversation that does not exist: existence is not revealed
    assert foreign.value.code == missing.value.code == "not_found"
    assert foreign.value.message.replace("ada-dm", "X") == missing.value.message.replace(
        "no-such-conversation", "X"
    )
    with pytest.raises(NotFound):
        ws.session_get("ada-dm", agent="bob")
    assert ws.context_sessions("bob") == []
    assert ws.context_search("bob", "vault blue binder") == []
    assert ws.memory_search("bob", "vault blue") == []
    assert "vault" not in ws.memory_read("bob").text
    with pytest.raises(NotFound):
        ws.create_conversation("bob", "D1", parent="ada-dm")
    with pytest.raises(NotFound):
        ws.context_sessions("bob", from_conversation="ada-dm")


# workspace: members, channels, grants


def test_members_have_roles_and_an_active_flag(rv: Reverie) -> None:
    rv.add_member("olga", "owner")
    rv.add_member("sam")
    assert [(m.name, m.role, m.active) for m in rv.members()] == [
        ("olga", "owner", True),
        ("sam", "member", True),
    ]
    assert rv.update_member("sam", role="admin", active=False).role == "admin"
    assert rv.member("sam").active is False
    with pytest.raises(RefusedInput) as e:
        rv.add_member("x", "superuser")
    assert e.value.code == "invalid_role"
    with pytest.raises(RefusedInput):
        rv.add_member("olga")
    with pytest.raises(NotFound):
        rv.member("nobody")


def test_an_agents_creator_is_a_member_already(rv: Reverie) -> None:
    """A creator no member holds is refused: a member added later under that name would get
    the creator's rights to an agent they never made."""
    with pytest.raises(NotFound):
        rv.create_agent("bo", creator="nobody")
    assert [a.name for a in rv.agents()] == ["ada"]
    rv.add_member("nobody")
    assert rv.create_agent("bo", creator="nobody").creator == "nobody"


def test_the_only_active_owner_stays_one(rv: Reverie) -> None:
    """Demoting or deactivating the last active owner is refused (no one could make admins
    and owners again, and the commands that act as the owner would fail); with a second
    owner it is allowed."""
    rv.add_member("olga", "owner")
    for change in ({"role": "admin"}, {"active": False}):
        with pytest.raises(RefusedInput) as e:
            rv.update_member("olga", **change)  # type: ignore[arg-type]
        assert e.value.code == "last_owner"
        assert rv.member("olga").role == "owner" and rv.member("olga").active
    rv.add_member("ines", "owner")
    assert rv.update_member("olga", active=False).active is False
    assert rv.ensure_owner().name == "ines"
    with pytest.raises(RefusedInput):
        rv.update_member("ines", role="member")


def test_channels_keep_their_kind(ws: Reverie) -> None:
    assert {c.kind for c in ws.channels()} == {"dm", "web", "channel", "group", "automation"}
    assert [c.id for c in ws.channels("automation")] == ["A1", "A2"]
    assert ws.ensure_channel("D1", "dm").kind == "dm"
    with pytest.raises(RefusedInput) as e:
        ws.ensure_channel("D1", "group")
    assert e.value.code == "channel_kind_mismatch"
    for bad in [("X", "forum"), ("has space", "dm"), ("a#b", "dm")]:
        with pytest.raises(RefusedInput):
            ws.ensure_channel(*bad)
    with pytest.raises(RefusedInput):
        ws.ensure_channel("A3", "automation", reports_to="nowhere")
    with pytest.raises(RefusedInput):
        ws.ensure_channel("D9", "dm", reports_to="G1")


def test_grants_are_active_or_revoked(ws: Reverie) -> None:
    assert ws.grant("ada", "C1").status == "active"
    ada = ws.agent("ada").id
    assert ws.conversations.has_grant(ada, "C1")
    assert ws.revoke("ada", "C1").status == "revoked"
    assert not ws.conversations.has_grant(ada, "C1")
    assert [(g.channel_id, g.status) for g in ws.grants("ada")] == [("C1", "revoked")]
    with pytest.raises(NotFound):
        ws.grant("ada", "nope")


def test_a_channels_grants_are_every_agents(ws: Reverie) -> None:
    ws.create_agent("bob")
    ws.ensure_channel("C2", "channel")
    ws.grant("ada", "C1")
    ws.grant("bob", "C1")
    ws.revoke("bob", "C1")
    ws.grant("bob", "C2")
    ids = {ws.agent(n).id: n for n in ("ada", "bob")}
    held = {ids[g.agent_id]: g.status for g in ws.channel_grants("C1")}
    assert held == {"ada": "active", "bob": "revoked"}
    assert [(ids[g.agent_id], g.status) for g in ws.channel_grants("C2")] == [("bob", "active")]
    assert ws.channel_grants("C9") == []


# A3


def _rows(rv: Reverie, table: str, column: str, value: str) -> int:
    sql = f"SELECT COUNT(*) FROM {table} WHERE {column} = ?"
    return int(rv.state.conn.execute(sql, (value,)).fetchone()[0])


@pytest.fixture
def full(ws: Reverie) -> Iterator[tuple[Reverie, str, str]]:
    """ada with memory writes, an idempotency key, a refused write, conversations; bob too."""
    ws.create_agent("bob")
    ws.memory_apply("ada", {"action": "add", "text": "ada likes pistachio"}, key="k1")
    with pytest.raises(RefusedInput):
        ws.memory_apply("ada", {"action": "remove", "old": "nothing"}, conversation_id="c")
    ws.memory_apply("bob", {"action": "add", "text": "bob likes pistachio too"})
    ws.create_conversation("ada", "D1", conversation_id="ada-c")
    ws.create_conversation("ada", "D1", conversation_id="ada-sub", parent="ada-c")
    talk(ws, "ada-c", "pistachio ice cream")
    ws.create_conversation("bob", "D1", conversation_id="bob-c")
    talk(ws, "bob-c", "pistachio cake")
    ws.grant("ada", "C1")
    yield ws, ws.agent("ada").id, ws.state.memory_of(ws.agent("ada").id)


def test_a3_deleting_an_agent_deletes_its_memory_and_conversations(
    full: tuple[Reverie, str, str],
) -> None:
    rv, agent_id, memory_id = full
    repo = rv.home / "memories" / memory_id
    on_git = rv.settings.database_url is None
    assert repo.is_dir() == on_git
    rv.delete_agent("ada")
    with pytest.raises(NotFound):
        rv.agent("ada")
    tables = [] if on_git else [("memory_files", "memory_id", memory_id)]
    for table, column, value in [
        *tables,
        ("memories", "id", memory_id),
        ("revisions", "memory_id", memory_id),
        ("idempotency_keys", "memory_id", memory_id),
        ("memory_lines", "memory_id", memory_id),
        ("write_failures", "memory_id", memory_id),
        ("conversations", "agent_id", agent_id),
        ("messages", "conversation_id", "ada-c"),
        ("history_docs", "conversation_id", "ada-c"),
        ("grants", "agent_id", agent_id),
        ("deleted_memories", "memory_id", memory_id),
    ]:
        assert _rows(rv, table, column, value) == 0, table
    assert not repo.exists()
    assert not (rv.home / "locks" / f"{memory_id}.lock").exists()
    # the FTS tables hold nothing of ada's any more; bob is untouched
    assert [h.source for h in rv.memory_search("bob", "pistachio")] == ["MEMORY.md"]
    assert ids_in_search(rv, "pistachio", "bob") == {"bob-c"}
    if not on_git:
        return  # PostgreSQL's index is a column of these rows, gone with them
    rv.state.conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('integrity-check')")
    rv.state.conn.execute("INSERT INTO history_fts (history_fts) VALUES ('integrity-check')")
    n = rv.state.conn.execute(
        "SELECT COUNT(*) FROM memory_fts WHERE memory_fts MATCH 'pistachio'"
    ).fetchone()[0]
    assert n == 1


@pytest.mark.sqlite_only
def test_a3_the_deletion_is_one_transaction(full: tuple[Reverie, str, str]) -> None:
    rv, agent_id, memory_id = full
    # A fault on the last step (the agent row) must leave every earlier step undone.
    rv.state.conn.execute(
        "CREATE TEMP TRIGGER fail_agent_delete BEFORE DELETE ON agents "
        "BEGIN SELECT RAISE(ABORT, 'injected fault'); END"
    )
    with pytest.raises(StorageFault) as err:  # translated by the facade's guard
        rv.delete_agent("ada")
    assert isinstance(err.value.__cause__, sqlite3.DatabaseError)
    rv.state.conn.execute("DROP TRIGGER temp.fail_agent_delete")
    assert rv.agent("ada").id == agent_id
    assert _rows(rv, "memory_lines", "memory_id", memory_id) > 0
    assert _rows(rv, "deleted_memories", "memory_id", memory_id) == 0
    assert (rv.home / "memories" / memory_id).is_dir()
    assert "pistachio" in rv.memory_read("ada").text
    assert ids_in_search(rv, "pistachio") == {"ada-c"}


@pytest.mark.sqlite_only
def test_a3_a_repository_left_by_a_crash_is_removed_on_next_open(
    full: tuple[Reverie, str, str],
) -> None:
    rv, agent_id, memory_id = full
    rv.state.delete_agent(agent_id)  # the database step alone, as if the process died next
    repo = rv.home / "memories" / memory_id
    assert repo.is_dir()
    rv.close()
    with Reverie(rv.home) as again:
        assert not repo.exists()
        assert again.state.deleted_memories() == []
        assert [a.name for a in again.agents()] == ["bob"]


@pytest.mark.sqlite_only
def test_a3_a_repository_no_tombstone_names_is_left_alone(rv: Reverie) -> None:
    stray = rv.home / "memories" / "mem_000000000000"
    stray.mkdir()
    rv.close()
    Reverie(rv.home).close()
    assert stray.is_dir()


def test_a3_archiving_keeps_memory_and_conversations(full: tuple[Reverie, str, str]) -> None:
    rv, _agent_id, memory_id = full
    assert rv.archive_agent("ada").archived is True
    assert "pistachio" in rv.memory_read("ada").text
    assert rv.conversation("ada-c").message_count == 1
    if rv.settings.database_url is None:
        assert (rv.home / "memories" / memory_id).is_dir()
    assert rv.archive_agent("ada", archived=False).archived is False


# conversations and messages


def test_positions_are_zero_based_in_order_of_arrival(ws: Reverie) -> None:
    ws.create_conversation("ada", "D1", conversation_id="c")
    # arrival order wins over timestamps
    a = ws.append_message("c", "user", "second by time", time=T0 + 10)
    b = ws.append_message("c", "assistant", "first by time", time=T0)
    c = ws.append_message("c", "tool", "tool output", time=T0 + 20)
    assert (a.position, b.position, c.position) == (0, 1, 2)
    conv = ws.conversation("c")
    assert conv.message_count == 3
    assert conv.text_chars == len("second by time") + len("first by time")
    assert conv.last_message_at == T0 + 20
    assert conv.title == "second by time"
    assert [m.text for m in ws.conversations.messages("c", 1, 3)] == [
        "first by time",
        "tool output",
    ]


def test_the_same_message_is_not_added_twice(ws: Reverie) -> None:
    ws.create_conversation("ada", "D1", conversation_id="c")
    first = ws.append_message("c", "user", "hello", author="sam", time=T0)
    again = ws.append_message("c", "user", "hello", author="sam", time=T0)
    other = ws.append_message("c", "user", "hello", author="sam", time=T0 + 1)
    keyed = ws.append_message("c", "user", "hello", time=T0, message_id="evt-1")
    rekeyed = ws.append_message("c", "user", "different text", time=T0, message_id="evt-1")
    assert (first.added, again.added, other.added, keyed.added, rekeyed.added) == (
        True,
        False,
        True,
        True,
        False,
    )
    assert again.position == first.position == 0
    assert rekeyed.position == keyed.position == 2
    assert ws.conversation("c").message_count == 3


def test_a_message_from_another_chat_links_it(ws: Reverie) -> None:
    ws.create_conversation("ada", "W1", conversation_id="c")
    ws.append_message("c", "user", "from slack dm", channel_id="D1", time=T0)
    conv = ws.conversation("c")
    assert conv.linked_chats == ("D1",) and conv.memory_mode == "on"


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x7f", "\r"])
def test_messages_refuse_control_characters_like_memory_writes(ws: Reverie, char: str) -> None:
    ws.create_conversation("ada", "D1", conversation_id="c")
    with pytest.raises(RefusedInput) as e:
        ws.append_message("c", "user", f"ring{char}bell", time=T0)
    assert e.value.code == "memory_invalid_control_character"
    assert ws.conversation("c").message_count == 0


def test_history_keeps_text_as_given_even_credential_shaped(ws: Reverie) -> None:
    # History is conversation data: it is stored as said (memory writes refuse it, W4).
    token = fake("xox", "b-", "2417359083-", "5836194720341-", "k9QmZtR4vXw2Lp8sN3yB6cHd")
    ws.create_conversation("ada", "D1", conversation_id="c")
    ws.append_message("c", "user", f"token {token}", time=T0)
    assert ws.context_read("ada", "c").messages[0].text == f"token {token}"


def test_bad_values_are_refused(ws: Reverie) -> None:
    ws.create_conversation("ada", "D1", conversation_id="c")
    cases: list[tuple[Any, str]] = [
        (lambda: ws.create_conversation("ada", "D1", conversation_id="c"), "already_exists"),
        (lambda: ws.create_conversation("ada", "D1", conversation_id="a b"), "invalid_id"),
        (lambda: ws.create_conversation("ada", "D1", conversation_id="x#1"), "invalid_id"),
        (lambda: ws.append_message("c", "system", "hi"), "invalid_role"),
        (lambda: ws.set_task("c", {"kind": "telepathy"}), "invalid_operation"),
        (lambda: ws.set_task("c", {"kind": "api", "by": ["x"]}), "invalid_operation"),
        (lambda: ws.create_conversation("ada", "D1", thinking="VERY HIGH"), "invalid_operation"),
    ]
    for call, code in cases:
        with pytest.raises(RefusedInput) as e:
            call()
        assert e.value.code == code
    with pytest.raises(NotFound):
        ws.create_conversation("ada", "nope")
    with pytest.raises(NotFound):
        ws.create_conversation("nobody", "D1")
    with pytest.raises(NotFound):
        ws.append_message("nope", "user", "hi")


def test_deleting_a_conversation_deletes_its_sub_sessions(ws: Reverie) -> None:
    ws.create_conversation("ada", "D1", conversation_id="p")
    ws.create_conversation("ada", "D1", conversation_id="s", parent="p")
    talk(ws, "s", "sub-session note about otters")
    ws.close_conversation("s")
    assert ws.delete_conversation("p").deleted
    assert ws.conversation("s").deleted
    assert ids_in_search(ws, "otters") == set()
    assert pending(ws) == []
    with pytest.raises(NotFound) as e:
        ws.append_message("s", "user", "still there?")
    assert e.value.code == "conversation_deleted"
    with pytest.raises(NotFound):
        ws.create_conversation("ada", "D1", parent="p")


# completed ranges (the bookkeeping review uses)


def test_ranges_are_pending_when_closed_or_idle_until_reviewed(ws: Reverie) -> None:
    ws.create_conversation("ada", "D1", conversation_id="idle")
    talk(ws, "idle", "one", "two", "three")  # last message at T0 + 2
    ws.create_conversation("ada", "D1", conversation_id="closed")
    talk(ws, "closed", "four", at=T0 + 100)
    assert ws.pending_ranges("ada", now=T0 + 101) == []
    assert not ws.conversations.tail_complete(ws.conversation("idle"), now=T0 + 1 + IDLE)
    assert ws.conversations.tail_complete(ws.conversation("idle"), now=T0 + 2 + IDLE)
    ws.close_conversation("closed")
    assert ws.pending_ranges("ada", now=T0 + 101) == [("closed", 0, 1)]
    assert ws.pending_ranges("ada", now=T0 + 2 + IDLE) == [("idle", 0, 3), ("closed", 0, 1)]
    ws.mark_reviewed("idle", 3)
    ws.mark_reviewed("closed", 1)
    assert ws.pending_ranges("ada", now=T0 + 10 * IDLE) == []
    # more talk opens a new tail; a message reopens a closed conversation
    talk(ws, "closed", "five", "six", at=T0 + 200)
    assert not ws.conversation("closed").closed
    assert ws.pending_ranges("ada", now=T0 + 201) == []
    assert ws.pending_ranges("ada", now=T0 + 201 + IDLE) == [("closed", 1, 3)]
    # review never moves back, and cannot run past the end
    ws.mark_reviewed("closed", 2)
    assert ws.conversation("closed").reviewed_upto == 2
    ws.mark_reviewed("closed", 1)
    assert ws.conversation("closed").reviewed_upto == 2
    for bad in (-1, 4):
        with pytest.raises(RefusedInput) as e:
            ws.mark_reviewed("closed", bad)
        assert e.value.code == "invalid_range"


def test_the_idle_window_is_a_setting(home: Path) -> None:
    rv = Reverie(settings=Settings.load(home, idle_window_seconds=60), create=True)
    rv.create_agent("ada")
    rv.ensure_channel("D1", "dm")
    rv.create_conversation("ada", "D1", conversation_id="c")
    talk(rv, "c", "hello")
    assert rv.pending_ranges("ada", now=T0 + 59) == []
    assert rv.pending_ranges("ada", now=T0 + 60) == [("c", 0, 1)]
    assert Settings().idle_window_seconds == 30 * 60


def test_only_the_agents_own_ranges_are_pending(ws: Reverie) -> None:
    ws.create_agent("bob")
    ws.create_conversation("bob", "D1", conversation_id="b")
    talk(ws, "b", "bob's")
    ws.create_conversation("ada", "D1", conversation_id="a")
    talk(ws, "a", "ada's")
    assert pending(ws, "ada") == [("a", 0, 1)]
    assert pending(ws, "bob") == [("b", 0, 1)]


# JSON Lines import (SPEC 15)


def line(
    conv: str,
    text: str,
    *,
    agent: str = "ada",
    kind: str = "dm",
    channel: str = "D1",
    role: str = "user",
    author: str = "sam",
    time: str = "2024-05-08T13:56:00Z",
    **extra: Any,
) -> str:
    rec = {
        "conversation": conv,
        "agent": agent,
        "channel": {"kind": kind, "id": channel},
        "author": author,
        "role": role,
        "text": text,
        "time": time,
        **extra,
    }
    return json.dumps(rec)


def closed(conv: str) -> str:
    return json.dumps({"conversation": conv, "closed": True})


def table_counts(rv: Reverie) -> dict[str, int]:
    tables = ["agents", "memories", "channels", "conversations", "messages", "history_docs"]
    conn = rv.state.conn
    return {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in tables}


SAMPLE = [
    line("imp-1", "We moved the standup to 9:30", time="2024-05-08T09:00:00Z"),
    line(
        "imp-1", "Got it, 9:30 standup", role="assistant", author="ada", time="2024-05-08T09:00:05Z"
    ),
    line("imp-1", "ran calendar.update", role="tool", author="ada", time="2024-05-08T09:00:06Z"),
    "",
    line(
        "imp-2",
        "Group chatter about the offsite",
        kind="group",
        channel="G7",
        agent="newbie",
        time="2024-05-08T10:00:00+02:00",
    ),
    closed("imp-1"),
]


def test_import_creates_what_it_names_and_applies_the_mode_rules(ws: Reverie) -> None:
    summary = ws.import_conversations(SAMPLE)
    assert summary.to_dict() == {"conversations": 2, "messages": 4, "closed": 1}
    newbie = ws.agent("newbie")
    assert ws.memory_read("newbie").revision == 0  # its repository exists, at revision 0
    if ws.settings.database_url is None:
        assert (ws.home / "memories" / ws.state.memory_of(newbie.id) / ".git").is_dir()
    one, two = ws.conversation("imp-1"), ws.conversation("imp-2")
    assert (one.memory_mode, one.closed, one.message_count) == ("on", True, 3)
    assert one.created_at == T_0908 and one.last_message_at == T_0908 + 6
    assert (two.memory_mode, two.channel_kind, two.agent_id) == ("off", "group", newbie.id)
    assert two.created_at == T_0908 - 3600  # 10:00+02:00 is 08:00 UTC
    assert one.started_by == {"kind": "user_message", "by": "sam", "position": 0}
    assert ws.pending_ranges("ada", now=T_0908 + 60) == [("imp-1", 0, 3)]


def test_import_is_idempotent(ws: Reverie) -> None:
    ws.import_conversations(SAMPLE)
    before = table_counts(ws)
    again = ws.import_conversations(SAMPLE)
    assert again.to_dict() == {"conversations": 0, "messages": 0, "closed": 0}
    assert again.skipped == 4
    assert table_counts(ws) == before


def test_import_of_a_longer_file_adds_only_the_new_lines(ws: Reverie) -> None:
    ws.import_conversations([line("c", "ok"), line("c", "next")])
    # the same line twice in one file is two messages (said twice), and stays two
    out = ws.import_conversations(
        [line("c", "ok"), line("c", "next"), line("c", "ok"), line("c", "ok", id="m-9")]
    )
    assert (out.messages, out.skipped) == (2, 2)
    assert [m.text for m in ws.conversations.messages("c")] == ["ok", "next", "ok", "ok"]
    assert ws.import_conversations([line("c", "changed text, same id", id="m-9")]).messages == 0


def test_import_is_all_or_nothing(ws: Reverie) -> None:
    before = table_counts(ws)
    bad = [*SAMPLE, line("imp-3", "fine"), '{"conversation": "imp-3", "agent": "ada"}']
    with pytest.raises(RefusedInput) as e:
        ws.import_conversations(bad)
    assert e.value.details["line"] == 8 and e.value.message.startswith("line 8:")
    assert "Nothing was imported" in e.value.message
    assert table_counts(ws) == before
    with pytest.raises(NotFound):
        ws.agent("newbie")


@pytest.mark.parametrize(
    ("bad", "code", "says"),
    [
        ("{not json", "invalid_import", "not valid JSON"),
        ("[1, 2]", "invalid_import", "JSON object"),
        (line("c", "x", role="system"), "invalid_role", "role"),
        (line("c", "x", kind="forum"), "invalid_channel", "kind"),
        (line("c", "x", time="yesterday"), "invalid_time", "ISO-8601"),
        (line("c", "bell\x07"), "memory_invalid_control_character", "U+0007"),
        (line("c b", "x"), "invalid_id", "conversation"),
        (line("c", "x", mood="happy"), "invalid_import", "unknown field mood"),
        (line("c", "x", agent=""), "invalid_import", "agent"),
        (line("c", "x", agent="a/b"), "invalid_name", "agent name"),
        (json.dumps({"conversation": "c", "closed": False}), "invalid_import", "closing"),
        (closed("never-seen"), "invalid_import", "never-seen"),
        (line("c", "x", channel="D1", kind="group"), "channel_kind_mismatch", "D1"),
        (line("theirs", "x"), "invalid_import", "another agent"),
        (line("c", 5), "invalid_operation", "string"),
    ],
)
def test_import_names_the_bad_line(ws: Reverie, bad: str, code: str, says: str) -> None:
    ws.create_agent("bob")
    ws.create_conversation("bob", "D1", conversation_id="theirs")
    before = table_counts(ws)
    with pytest.raises(RefusedInput) as e:
        ws.import_conversations([line("c", "fine"), "", bad, line("c", "after")])
    assert e.value.code == code
    assert e.value.details["line"] == 3
    assert e.value.message.startswith("line 3: ") and says in e.value.message
    assert table_counts(ws) == before


def test_import_refuses_a_deleted_conversation_and_duplicate_ids(ws: Reverie) -> None:
    ws.import_conversations([line("c", "first")])
    ws.delete_conversation("c")
    with pytest.raises(RefusedInput) as e:
        ws.import_conversations([line("c", "more")])
    assert e.value.code == "conversation_deleted" and e.value.details["line"] == 1
    with pytest.raises(RefusedInput) as e:
        ws.import_conversations([line("d", "a", id="1"), line("d", "b", id="1")])
    assert e.value.details["line"] == 2 and "twice" in e.value.message


def test_import_reports_progress_and_accepts_decoded_records(ws: Reverie) -> None:
    seen: list[tuple[int, int]] = []
    ws.import_records(
        [json.loads(x) for x in SAMPLE if x], progress=lambda d, t: seen.append((d, t))
    )
    assert seen[-1] == (5, 5) and len(seen) == 5
    assert ws.conversation("imp-1").closed


def test_import_honours_an_automation_reporting_to_a_group(ws: Reverie) -> None:
    rec = json.loads(line("auto", "nightly summary", kind="automation", channel="N1"))
    rec["channel"]["reports_to"] = {"kind": "group", "id": "G9"}
    ws.import_records([rec])
    assert ws.conversation("auto").memory_mode == "off"
    assert ws.conversations.channel("N1").reports_to == "G9"
