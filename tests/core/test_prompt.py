"""Prompt assembly (SPEC P1, I3): one pure function from what a run read to the prompt."""

from __future__ import annotations

import pytest

from reverie.core.prompt import (
    ADVISORY_AFTER,
    ADVISORY_BEFORE,
    MEMORY_GUIDE,
    MEMORY_OFF_GUIDE,
    AgentState,
    ConversationView,
    build_prompt,
    cut_index,
)

INDEX = "# Memory\n\n## Decisions\n- We deploy on Tuesdays.\n"


def state(**changes: object) -> AgentState:
    base = dict(
        agent="ada",
        soul="You are Ada, terse and kind.",
        soul_version=3,
        instructions="",
        instructions_version=0,
        index=INDEX,
        memory_revision=7,
    )
    base.update(changes)
    return AgentState(**base)  # type: ignore[arg-type]


ON = ConversationView("c-1", memory_on=True)
OFF = ConversationView("c-2", memory_on=False)


def test_p1_parts_in_order() -> None:
    p = build_prompt(state(), ON)
    guide, soul, index = (
        p.system.index(MEMORY_GUIDE),
        p.system.index("### Agent Soul\n\nYou are Ada"),
        p.system.index("### Memory index\n\n# Memory"),
    )
    assert guide == 0 < soul < index
    assert (p.memory_revision, p.soul_version, p.index_cut) == (7, 3, False)
    assert "- We deploy on Tuesdays." in p.system


def test_p1_the_guide_teaches_what_the_spec_asks() -> None:
    g = MEMORY_GUIDE.lower()
    assert "search your memory" in g and "before" in g and "don't know" in g
    # A fact is kept by saying it; review saves it; never claim to have saved it.
    assert "review" in g and "do not say that you have saved" in g
    # A lesson goes in the reply text: review does not read tool output.
    assert "lesson" in g and "not tool output" in g
    assert "cut" in g and "read memory.md in full" in g


def test_p1_index_cut_at_the_cap_with_the_full_length() -> None:
    long = "# Memory\n\n## Decisions\n" + "".join(
        f"- decision number {i:04d}\n" for i in range(400)
    )
    p = build_prompt(state(index=long), ON, cap=2000)
    shown = p.system.split("### Memory index\n\n", 1)[1]
    body, notice = shown.rsplit("\n\n", 1)
    assert len(body) <= 2000 and long.startswith(body)
    assert f"MEMORY.md is {len(long):,} characters" in notice
    assert "read_channel_memory" in notice
    assert p.index_cut and p.index_chars == len(long)
    # Cut at a line break: no half entry.
    assert body.endswith(tuple(f"{i:04d}" for i in range(400)))


def test_p1_cut_without_a_nearby_line_break_still_holds_the_cap() -> None:
    text, cut = cut_index("x" * 5000, 2000)
    assert cut and text.startswith("x" * 2000) and "x" * 2001 not in text
    assert cut_index("short", 2000) == ("short", False)


def test_p1_memory_off_has_no_index_and_says_so() -> None:
    p = build_prompt(state(), OFF)
    assert "### Memory index" not in p.system and "We deploy" not in p.system
    assert MEMORY_OFF_GUIDE in p.system and MEMORY_GUIDE not in p.system
    assert p.memory_revision is None and "### Agent Soul" in p.system


def test_p1_advisory_framing() -> None:
    p = build_prompt(state(framing="advisory"), ON)
    block = p.system.split("### Memory index\n\n", 1)[1]
    assert block.startswith(ADVISORY_BEFORE + "\n<agent_memory>\n# Memory")
    assert block.rstrip().endswith("</agent_memory>\n" + ADVISORY_AFTER)
    assert "grants no authority" in ADVISORY_BEFORE
    for word in ("format", "tone", "wording", "facts", "permissions", "tools"):
        assert word in ADVISORY_AFTER


def test_i3_instructions_enter_the_prompt_and_win() -> None:
    p = build_prompt(state(instructions="Answer in English.", instructions_version=2), ON)
    head = p.system.index("### Channel instructions")
    assert head < p.system.index("### Memory index")
    assert "Answer in English." in p.system
    assert "where they and memory disagree, these win" in p.system
    assert p.instructions_version == 2
    assert "### Channel instructions" not in build_prompt(state(), ON).system


@pytest.mark.parametrize("writable", [False, True])
def test_the_guide_mentions_writing_only_where_conversations_may(writable: bool) -> None:
    p = build_prompt(state(memory_writable=writable), ON)
    assert ("update_channel_memory" in p.system) is writable


def test_no_soul_yet_is_said_plainly() -> None:
    assert "No soul has been published yet" in build_prompt(state(soul=""), ON).system


def test_assembly_is_pure() -> None:
    assert build_prompt(state(), ON) == build_prompt(state(), ON)
