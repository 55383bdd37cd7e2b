"""The ``!memory`` commands through Slack (SPEC C1-C3, W3, W7): signed events into the running
app, answers read back from the local Slack server, memory read from the real store."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from reverie.core.chat import HELP
from reverie.slack.app import SlackSurface
from tests.conftest import fake
from tests.slack.conftest import (
    DM_GHOST,
    DM_SAM,
    EVE,
    GHOST,
    GUEST,
    OLGA,
    OPS,
    SAM,
    SIGNING_SECRET,
    Stack,
)
from tests.slack.fake_slack_server import signed_headers

REMEMBER = "!remember Deploys - We deploy on Tuesdays\nRun make release from a clean main."


def answers(stack: Stack, channel: str) -> list[str]:
    stack.settle()
    return stack.texts(channel)


def revision(stack: Stack) -> int:
    return stack.rv.memory_read("ada").revision


def test_c1_memory_status_help_show(stack: Stack) -> None:
    stack.say(SAM, DM_SAM, "!memory")
    stack.say(SAM, DM_SAM, "!memory help")
    said = answers(stack, DM_SAM)
    assert said[0] == "ada has no memory yet (revision 0: the empty sections it starts with)."
    # What the agent sends is escaped for Slack (& < >), nothing else changes.
    assert said[1] == HELP.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    stack.say(SAM, DM_SAM, REMEMBER)
    stack.say(SAM, DM_SAM, "!memory")
    stack.say(SAM, DM_SAM, "!memory show memory")
    said = answers(stack, DM_SAM)[2:]
    assert said[0] == "Saved to ada's memory: revision 1."
    assert said[1].startswith("ada has a memory at revision 1: MEMORY.md holds ")
    assert said[2] == "ada's MEMORY.md at revision 1:"
    body = stack.rv.memory_read("ada").text
    assert said[3] == f"```\n{body.rstrip()}\n```".replace("&", "&amp;")


def test_c1_remember_appends_a_section_with_its_body(stack: Stack) -> None:
    stack.say(SAM, DM_SAM, REMEMBER)
    stack.say(SAM, DM_SAM, "!remember Deploys - Freeze from Dec 20")
    stack.say(SAM, DM_SAM, "!remember On call - Olga this week")
    assert answers(stack, DM_SAM)[-1] == "Saved to ada's memory: revision 3."
    body = stack.rv.memory_read("ada").text
    assert body.endswith(
        "## Deploys\n\nWe deploy on Tuesdays\n\nRun make release from a clean main.\n\n"
        "Freeze from Dec 20\n\n## On call\n\nOlga this week\n"
    )
    assert body.count("## Deploys") == 1
    # Each write is one revision by the chat path, with who asked in its message.
    history = stack.rv.memory_history("ada")
    assert [r.writer for r in history[:3]] == ["chat", "chat", "chat"]
    assert f"slack:{SAM}" in history[0].message


def test_c1_update_replaces_the_whole_body(stack: Stack) -> None:
    stack.say(SAM, DM_SAM, REMEMBER)
    stack.say(SAM, DM_SAM, "!memory update memory - # Memory\n## Decisions\n- Postgres 16")
    assert answers(stack, DM_SAM)[-1] == "Saved to ada's memory: revision 2."
    assert stack.rv.memory_read("ada").text == "# Memory\n\n## Decisions\n- Postgres 16\n"


def test_c1_forget_points_to_the_admin_page_and_changes_nothing(stack: Stack) -> None:
    stack.say(SAM, DM_SAM, "!forget memory")
    said = answers(stack, DM_SAM)
    assert said == [
        "Clearing ada's memory is done in the admin page: "
        "http://127.0.0.1:8765/admin/agents/ada . Nothing changed."
    ]
    assert revision(stack) == 0


def test_c1_malformed_commands_change_nothing(stack: Stack) -> None:
    stack.say(SAM, DM_SAM, "!remember just a thought")
    stack.say(SAM, DM_SAM, "!memory update memory")
    stack.say(SAM, DM_SAM, "!memory delete everything")
    said = answers(stack, DM_SAM)
    assert len(said) == 3
    assert all("Nothing changed." in s and "!memory help" in s for s in said)
    assert "`!remember &lt;name&gt; - &lt;description&gt;`" in said[0]
    assert revision(stack) == 0


def test_w3_chat_limits_come_from_settings(stack: Stack) -> None:
    stack.say(SAM, DM_SAM, "!remember Big - " + "x" * 513)
    stack.say(SAM, DM_SAM, "!remember Big - fine\n" + "y" * (8 * 1024 + 1))
    stack.say(SAM, DM_SAM, "!remember Fits - " + "x" * 512 + "\n" + "y" * (8 * 1024))
    said = answers(stack, DM_SAM)
    assert "description holds 513 bytes" in said[0] and "at most 512" in said[0]
    assert "body holds 8,193 bytes" in said[1] and "Nothing changed." in said[1]
    assert said[2] == (
        "Saved to ada's memory: revision 1. MEMORY.md is now longer than the part of it I "
        "read on every run."
    )


def test_w4_a_credential_is_refused_from_chat_too(stack: Stack) -> None:
    stack.say(SAM, DM_SAM, "!remember Deploy key - AKIA" + "ABCDEFGHIJKLMNOP")
    said = answers(stack, DM_SAM)
    assert "credential" in said[0] and said[0].endswith("Nothing changed.")
    assert revision(stack) == 0


def test_c2_a_member_of_a_granted_channel_writes(stack: Stack) -> None:
    stack.rv.ensure_channel(f"slack:{OPS}", "channel")
    stack.rv.grant("ada", f"slack:{OPS}")
    stack.say(OLGA, OPS, REMEMBER)
    assert answers(stack, OPS) == ["Saved to ada's memory: revision 1."]


def test_c2_a_guest_in_the_channel_writes_there_but_not_from_a_dm(stack: Stack) -> None:
    stack.rv.ensure_channel(f"slack:{OPS}", "channel")
    stack.rv.grant("ada", f"slack:{OPS}")
    stack.say(GUEST, OPS, REMEMBER)
    assert answers(stack, OPS) == ["Saved to ada's memory: revision 1."]
    stack.slack.add_channel("D0GUEST", [GUEST], kind="im")
    stack.say(GUEST, "D0GUEST", "!remember More - text")
    said = answers(stack, "D0GUEST")
    assert "is not an active member of the workspace" in said[0]
    assert revision(stack) == 1


def test_c2_a_non_members_remember_in_a_granted_channel_changes_nothing(stack: Stack) -> None:
    stack.rv.ensure_channel(f"slack:{OPS}", "channel")
    stack.rv.grant("ada", f"slack:{OPS}")
    # The event says Eve wrote in #ops; Slack's member list says she is not in it.
    _, status = stack.say(EVE, OPS, REMEMBER)
    assert status == 200
    said = answers(stack, OPS)
    assert said == [
        f"slack:{EVE} is not a member of this channel (as the chat platform reports it now), "
        "and only the channel's members may write memory from it. Nothing changed."
    ]
    assert revision(stack) == 0
    # The check asked Slack, following its cursor (the fake pages by two).
    assert stack.slack.calls["conversations.members"] >= 2


def test_c2_membership_is_asked_again_after_a_join(stack: Stack) -> None:
    stack.rv.ensure_channel(f"slack:{OPS}", "channel")
    stack.rv.grant("ada", f"slack:{OPS}")
    stack.say(EVE, OPS, "!remember A - one")
    stack.slack.channels[OPS].members.add(EVE)
    # Still within the cache window: the cached list holds.
    stack.say(EVE, OPS, "!remember B - two")
    assert revision(stack) == 0
    # Slack's join event drops the cached list (the event itself proves nothing).
    joined = stack.events.envelope(
        {"type": "member_joined_channel", "user": EVE, "channel": OPS, "event_ts": "1.0"}
    )
    assert stack.events.deliver(joined)[0] == 200
    stack.say(EVE, OPS, "!remember C - three")
    said = answers(stack, OPS)
    assert [s.split(" (")[0] for s in said[:2]] == [
        f"slack:{EVE} is not a member of this channel"
    ] * 2
    assert said[2] == "Saved to ada's memory: revision 1."


def test_c2_a_revoked_grant_changes_nothing(stack: Stack) -> None:
    stack.rv.ensure_channel(f"slack:{OPS}", "channel")
    stack.rv.grant("ada", f"slack:{OPS}")
    stack.rv.revoke("ada", f"slack:{OPS}")
    stack.say(SAM, OPS, REMEMBER)
    said = answers(stack, OPS)
    assert said[0].startswith("Agent ada has no active grant in this channel")
    assert said[0].endswith("Nothing changed.")
    assert revision(stack) == 0


def test_c2_no_grant_at_all_changes_nothing_but_reading_works(stack: Stack) -> None:
    stack.say(SAM, DM_SAM, REMEMBER)
    stack.say(SAM, OPS, "!remember Other - text")
    stack.say(EVE, OPS, "!memory show memory")
    said = answers(stack, OPS)
    assert said[0].startswith("Agent ada has no active grant in this channel")
    # C2: reading needs neither a grant nor membership.
    assert said[1] == "ada's MEMORY.md at revision 1:"
    assert "We deploy on Tuesdays" in said[2]


def test_c2_a_dm_from_a_deactivated_user_changes_nothing(stack: Stack) -> None:
    stack.slack.users[GHOST]["deleted"] = True
    stack.say(GHOST, DM_GHOST, REMEMBER)
    said = answers(stack, DM_GHOST)
    assert said == [
        f"slack:{GHOST} is not an active member of the workspace (deactivated, a guest, or "
        "unknown), and only active members may write memory from a DM. Nothing changed."
    ]
    assert revision(stack) == 0
    # The workspace member is deactivated too, for every surface.
    assert stack.rv.member(f"slack:{GHOST}").active is False


def test_c2_members_take_their_role_from_slack(stack: Stack) -> None:
    stack.say(OLGA, DM_SAM, "!memory")
    stack.say(SAM, DM_SAM, "!memory")
    assert stack.rv.member(f"slack:{OLGA}").role == "owner"
    assert stack.rv.member(f"slack:{SAM}").role == "member"


def test_c3_a_retried_event_returns_the_existing_revision_and_posts_once(stack: Stack) -> None:
    body = stack.events.message(SAM, DM_SAM, REMEMBER)
    assert stack.events.deliver(body)[0] == 200
    stack.say(SAM, DM_SAM, "!remember Later - another write")
    assert revision(stack) == 2
    # Slack retries the first event (say its acknowledgement was lost).
    assert stack.events.deliver(body, retry=1)[0] == 200
    assert stack.events.deliver(body, retry=2)[0] == 200
    said = answers(stack, DM_SAM)
    assert said == ["Saved to ada's memory: revision 1.", "Saved to ada's memory: revision 2."]
    assert revision(stack) == 2
    assert stack.rv.memory_read("ada").text.count("## Deploys") == 1


def test_c3_w7_the_retried_command_answers_its_revision(stack: Stack) -> None:
    body = stack.events.message(SAM, DM_SAM, REMEMBER)
    stack.events.deliver(body)
    stack.say(SAM, DM_SAM, "!remember Later - another write")
    conv = f"slack:{DM_SAM}:{body['event']['ts']}"
    from reverie.core.chat import parse_command

    command = parse_command(REMEMBER)
    assert command is not None
    again = stack.rv.chat_write(
        conv, command, author=f"slack:{SAM}", in_chat=True, key=f"slack:{body['event_id']}"
    )
    assert (again.revision, again.replayed, again.changed) == (1, True, True)


def test_c3_the_same_event_twice_at_once_writes_once(stack: Stack) -> None:
    body = stack.events.message(SAM, DM_SAM, REMEMBER)
    statuses: list[int] = []
    threads = [
        threading.Thread(target=lambda n=n: statuses.append(stack.events.deliver(body, retry=n)[0]))
        for n in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [200] * 4
    assert answers(stack, DM_SAM) == ["Saved to ada's memory: revision 1."]
    assert revision(stack) == 1


def test_c3_different_events_at_once_each_save_their_own_revision(stack: Stack) -> None:
    bodies = [stack.events.message(SAM, DM_SAM, f"!remember Note {i} - fact {i}") for i in range(8)]
    statuses: list[int] = []
    threads = [
        threading.Thread(target=lambda b=b: statuses.append(stack.events.deliver(b)[0]))
        for b in bodies
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [200] * 8
    said = answers(stack, DM_SAM)
    assert sorted(said) == sorted(f"Saved to ada's memory: revision {n}." for n in range(1, 9))
    assert revision(stack) == 8
    body = stack.rv.memory_read("ada").text
    assert all(body.count(f"## Note {i}\n\nfact {i}\n") == 1 for i in range(8))


def test_c2_a_deactivated_user_still_listed_in_a_channel_writes_nothing(stack: Stack) -> None:
    """Slack may still list a deactivated user among a channel's members: the write is refused
    for what the user is (``inactive_member``), whatever the member list says."""
    stack.rv.ensure_channel(f"slack:{OPS}", "channel")
    stack.rv.grant("ada", f"slack:{OPS}")
    stack.slack.channels[OPS].members.add(GHOST)
    stack.slack.users[GHOST]["deleted"] = True
    stack.say(GHOST, OPS, REMEMBER)
    assert answers(stack, OPS) == [
        f"slack:{GHOST} is deactivated in this workspace (as the chat platform reports it, or "
        "by an admin here), and a deactivated member writes memory from nowhere, a channel "
        "they are still listed in included. Nothing changed."
    ]
    assert revision(stack) == 0
    assert stack.rv.member(f"slack:{GHOST}").active is False


def test_c2_a_member_deactivated_here_writes_nothing_from_a_channel(stack: Stack) -> None:
    """An admin deactivated the member in Reverie; Slack still reports the user active and in
    the channel: deactivated here is deactivated everywhere, as in a DM."""
    stack.rv.ensure_channel(f"slack:{OPS}", "channel")
    stack.rv.grant("ada", f"slack:{OPS}")
    stack.say(SAM, OPS, "!remember Before - still active")
    stack.rv.update_member(f"slack:{SAM}", active=False)
    stack.say(SAM, OPS, REMEMBER)
    said = answers(stack, OPS)
    assert said[0] == "Saved to ada's memory: revision 1."
    assert said[1].startswith(f"slack:{SAM} is deactivated in this workspace")
    assert said[1].endswith("Nothing changed.")
    assert revision(stack) == 1


def test_c3_w7_a_retry_after_a_refusal_is_answered_by_the_refusal(stack: Stack) -> None:
    """Slack retries an event whose command was refused, after what refused it changed (the
    grant given again, the author joined): Slack was told nothing changed, so nothing does,
    and nothing more is posted; also when the retry reaches a process started since."""
    stack.rv.ensure_channel(f"slack:{OPS}", "channel")
    stack.rv.grant("ada", f"slack:{OPS}")
    stack.rv.revoke("ada", f"slack:{OPS}")
    no_grant = stack.events.message(SAM, OPS, REMEMBER)
    assert stack.events.deliver(no_grant)[0] == 200
    stack.settle()
    stack.rv.grant("ada", f"slack:{OPS}")
    assert stack.events.deliver(no_grant, retry=1)[0] == 200
    # Eve is not in the channel; she joins, and Slack retries her command.
    not_in = stack.events.message(EVE, OPS, "!remember Eve - was not in the channel")
    assert stack.events.deliver(not_in)[0] == 200
    stack.settle()
    stack.slack.channels[OPS].members.add(EVE)
    joined = stack.events.envelope(
        {"type": "member_joined_channel", "user": EVE, "channel": OPS, "event_ts": "1.0"}
    )
    assert stack.events.deliver(joined)[0] == 200
    assert stack.events.deliver(not_in, retry=1)[0] == 200
    # A process started since (a new surface on the same home) answers the next retries.
    again = SlackSurface(stack.rv, client=stack.surface.client)
    try:
        for body in (no_grant, not_in):
            raw = json.dumps(body)
            headers = signed_headers(SIGNING_SECRET, raw, retry=2)
            assert again.dispatch(raw.encode(), "", headers).status == 200
        assert again.wait_idle(timeout=30)
    finally:
        again.stop()
    said = answers(stack, OPS)
    assert len(said) == 2, said
    assert said[0].startswith("Agent ada has no active grant in this channel")
    assert said[1].startswith(f"slack:{EVE} is not a member of this channel")
    assert revision(stack) == 0


def test_c1_an_unknown_command_never_echoes_a_secret(stack: Stack) -> None:
    """A token pasted after ``!memory`` is neither posted back nor kept in the outbox."""
    token = fake("ghp_", "u8jzPde0IgxLd6Gncf", "BAepfJBd0Kh8oOOL8d")
    stash, _ = stack.say(SAM, DM_SAM, f"!memory stash {token}")
    bare, _ = stack.say(SAM, DM_SAM, f"!memory {token}")
    said = answers(stack, DM_SAM)
    assert said[0].startswith("I don't know the command `!memory stash ...`. Nothing changed.")
    assert said[1].startswith("I don't know the command `!memory ...`. Nothing changed.")
    kept = [d.text for body in (stash, bare) for d in stack.rv.outbox.for_task(_key(body))]
    assert len(kept) == 2 and not any("ghp_" in t for t in kept + said)


def _key(body: dict[str, Any]) -> str:
    """The idempotency key (and outbox task) of an event's answer."""
    return f"slack:{body['event_id']}"


def test_c2_w4_a_refused_character_is_said_as_in_the_persons_message(stack: Stack) -> None:
    """The core refuses a character at a position of the whole MEMORY.md; the person reads
    which character, that it is in their message, and that nothing changed, once."""
    stack.say(SAM, DM_SAM, "!remember Bell - a\x07b")
    stack.say(SAM, DM_SAM, "!remember Esc\x1b[31m - red")
    stack.say(SAM, DM_SAM, "!remember Flip - a \u202eevil\u202c b")
    stack.say(SAM, DM_SAM, "!remember Deploy key - AKIA" + "ABCDEFGHIJKLMNOP")
    said = answers(stack, DM_SAM)
    assert said[0] == (
        "Your message holds the control character U+0007, which is never kept (newline and "
        "tab are fine): remove it and send the message again. Nothing changed."
    )
    assert said[1].startswith("Your message holds the control character U+001B,")
    assert said[2] == (
        "Your message holds the invisible character U+202E (RIGHT-TO-LEFT OVERRIDE), which "
        "can hide or reorder text for a person while a model still reads it: remove it and "
        "send the message again. Nothing changed."
    )
    assert said[3].startswith(
        "Your message looks like it holds a credential (AWS access key ID on line 1 of your "
        "message)."
    )
    for text in said:
        assert "position" not in text and "operations[0]" not in text and "MEMORY.md" not in text
        assert text.lower().count("nothing") == 1, text
    assert revision(stack) == 0


def test_an_admin_link_names_the_agent_as_one_path_segment(tmp_path: Path) -> None:
    """An agent named ``q?x#y`` is linked as itself, not as agent ``q`` with a query."""
    from reverie.config import Settings
    from reverie.slack.commands import admin_link

    settings = Settings.load(tmp_path, public_url="http://reverie.example:8765/")
    assert admin_link(settings, "q?x#y") == "http://reverie.example:8765/admin/agents/q%3Fx%23y"
