"""The chat commands' grammar, limits and effect on MEMORY.md (SPEC C1, W3), as pure functions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reverie.config import Settings
from reverie.core.chat import ChatCommand, check_limits, parse_command, remember_body, update_body
from reverie.core.markdown import new_index
from reverie.errors import RefusedInput
from tests.conftest import fake


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("!memory", "status"),
        ("  !Memory  ", "status"),
        ("!memory help", "help"),
        ("!memory show memory", "show"),
        ("!MEMORY SHOW MEMORY", "show"),
        ("!forget memory", "forget"),
        ("!remember Deploys - Tuesdays", "remember"),
        ("!memory update memory - # Memory", "update"),
        ("!memory show", "invalid"),
        ("!memory\nmore", "invalid"),
        ("!forget everything", "invalid"),
        ("!remember no dash here", "invalid"),
        ("!remember - no name", "invalid"),
        ("!remember Name -", "invalid"),
        ("!remember # Heading - text", "invalid"),
        ("!memory update memory", "invalid"),
        ("!memory update memory -", "invalid"),
    ],
)
def test_c1_grammar(text: str, action: str) -> None:
    command = parse_command(text)
    assert command is not None and command.action == action


@pytest.mark.parametrize("text", ["hello", "!memoryless", "memory please", "!remembered it", ""])
def test_c1_other_text_is_no_command(text: str) -> None:
    assert parse_command(text) is None


def test_c1_remember_parts() -> None:
    command = parse_command("!remember On call - Olga - this week\nline one\n\nline two\n")
    assert command == ChatCommand(
        "remember", name="On call", description="Olga - this week", body="line one\n\nline two"
    )
    assert command.writes


def test_c1_remember_appends_a_section_or_extends_its_namesake() -> None:
    body = remember_body(new_index(), ChatCommand("remember", name="Deploys", description="Tue"))
    assert body.endswith("## Project state\n\n## Deploys\n\nTue\n")
    again = remember_body(
        body + "\n## Other\n\n- x\n",
        ChatCommand("remember", name="Deploys", description="Freeze", body="In December"),
    )
    assert "## Deploys\n\nTue\n\nFreeze\n\nIn December\n\n## Other\n\n- x\n" in again
    assert remember_body("", ChatCommand("remember", name="A", description="b")) == "## A\n\nb\n"


def test_c1_update_is_the_description_then_the_body() -> None:
    assert update_body(ChatCommand("update", description="# Memory", body="## A\n- b")) == (
        "# Memory\n\n## A\n- b\n"
    )


def test_w3_chat_limits_are_bytes_from_settings() -> None:
    settings = Settings(max_chat_description_bytes=4, max_chat_body_bytes=3)
    check_limits(ChatCommand("remember", name="ab", description="éé", body="abc"), settings)
    with pytest.raises(RefusedInput) as refused:
        check_limits(ChatCommand("remember", name="ab", description="ééé"), settings)
    assert refused.value.code == "chat_command_too_large"
    assert refused.value.details["field"] == "description"
    with pytest.raises(RefusedInput):
        check_limits(ChatCommand("update", description="a", body="abcd"), settings)
    with pytest.raises(RefusedInput):
        check_limits(ChatCommand("remember", name="abcde", description="a"), settings)


@given(st.text())
def test_c1_any_text_parses_or_is_no_command(text: str) -> None:
    command = parse_command(text)
    assert command is None or command.action in (
        "status",
        "help",
        "show",
        "remember",
        "update",
        "forget",
        "invalid",
    )
    if command is not None and command.action == "invalid":
        assert command.problem


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (
            "!memory stash " + fake("ghp_", "u8jzPde0IgxLd6Gncf", "BAepfJBd0Kh8oOOL8d"),
            "`!memory stash ...`",
        ),
        ("!memory " + fake("xoxb-", "1111-2222-", "fakebottoken"), "`!memory ...`"),
        ("!memory updat memory - x", "`!memory updat memory ...`"),
    ],
    ids=["github-token", "slack-token", "typo"],
)
def test_c1_an_unknown_command_is_named_without_what_was_typed_after_it(
    text: str, named: str
) -> None:
    """The answer to an unknown command is posted back and kept: it names the command word
    and the plain words after it, never the rest (a pasted token)."""
    command = parse_command(text)
    assert command is not None and command.action == "invalid"
    assert command.problem == f"I don't know the command {named}."
