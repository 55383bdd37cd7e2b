"""The soul (SPEC S1-S3): drafts edited like memory, numbered immutable versions, receipts."""

from __future__ import annotations

import sqlite3

import pytest

from reverie import Reverie
from reverie.errors import NotFound, RefusedInput, RevisionConflict
from tests.conftest import fake


@pytest.fixture
def conv(rv: Reverie) -> str:
    rv.ensure_channel("D1", "dm")
    return rv.create_conversation("ada", "D1").id


def test_s1_a_new_agent_has_version_0_and_a_soul_given_at_creation_is_version_1(
    rv: Reverie,
) -> None:
    assert rv.soul("ada").version == 0 and rv.soul("ada").text == ""
    rv.create_agent("bo", soul="You are Bo.\n\nYou answer in haiku.")
    assert (rv.soul("bo").version, rv.soul("bo").text) == (
        1,
        "You are Bo.\n\nYou answer in haiku.\n",
    )


def test_s1_the_draft_is_edited_with_memory_operations_and_publishes_nothing(
    rv: Reverie, conv: str
) -> None:
    d = rv.soul_edit("ada", conv, {"action": "set_body", "text": "# Ada\n\n## Tone\n- Brief.\n"})
    assert d.base_version == 0
    d = rv.soul_edit(
        "ada",
        conv,
        {
            "operations": [
                {"action": "add", "text": "Warm, never gushing.", "section": "Tone"},
                {"action": "replace", "old": "Brief.", "text": "- Brief: three sentences at most."},
            ]
        },
    )
    assert d.text == "# Ada\n\n## Tone\n- Brief: three sentences at most.\n- Warm, never gushing.\n"
    d = rv.soul_edit("ada", conv, {"action": "remove", "old": "Warm"})
    assert "Warm" not in d.text
    assert rv.soul("ada").version == 0  # still unpublished
    assert rv.soul_draft("ada", conv).text == d.text


@pytest.mark.parametrize(
    ("op", "code"),
    [
        (
            {
                "action": "add",
                "text": "token " + fake("xoxb-", "1234567890-", "abcdefghijklmnopqrstuvwx"),
            },
            "memory_credential_rejected",
        ),
        ({"action": "add", "text": "bell \x07 here"}, "memory_invalid_control_character"),
        ({"action": "replace", "old": "nowhere", "text": "x"}, "no_match"),
        ({"action": "write_topic", "topic": "x", "content": "y"}, "invalid_operation"),
        ({"action": "remove", "old": "Ada", "source": "memory/x.md"}, "invalid_operation"),
        ({"action": "set_body", "text": "x" * 20_000}, "soul_too_large"),
    ],
)
def test_s1_the_draft_has_memorys_content_checks(
    rv: Reverie, conv: str, op: dict[str, str], code: str
) -> None:
    rv.soul_edit("ada", conv, {"action": "set_body", "text": "# Ada\n"})
    with pytest.raises(RefusedInput) as e:
        rv.soul_edit("ada", conv, op)
    assert e.value.code == code
    assert rv.soul_draft("ada", conv).text == "# Ada\n"  # nothing stored
    assert "MEMORY.md" not in str(e.value.to_dict())  # the model edited the soul


def test_s1_what_a_soul_edit_says_is_about_the_soul(rv: Reverie, conv: str) -> None:
    """The draft is edited with memory's operations, but its notes name the soul: the model
    was told of a section missing from "MEMORY.md" while it edited the soul."""
    rv.soul_edit("ada", conv, {"action": "set_body", "text": "# Ada\n\n## Tone\n- Brief.\n"})
    d = rv.soul_edit("ada", conv, {"action": "add", "text": "Be kind.", "section": "Style"})
    assert d.notes and all("MEMORY.md" not in note for note in d.notes)
    assert "the soul had no section 'Style'" in d.notes[0]


def test_s2_s3_publish_gives_a_numbered_receipt(rv: Reverie, conv: str) -> None:
    rv.soul_edit("ada", conv, {"action": "set_body", "text": "You are Ada."})
    receipt = rv.soul_publish("ada", conv)
    assert (receipt.version, receipt.changed) == (1, True)
    assert rv.soul("ada").text == "You are Ada.\n"
    rv.soul_edit("ada", conv, {"action": "add", "text": "Be brief."})
    assert rv.soul_publish("ada", conv).version == 2
    assert [v.version for v in rv.soul_history("ada")] == [2, 1]
    assert rv.soul("ada", 1).text == "You are Ada.\n"
    with pytest.raises(NotFound) as e:
        rv.soul("ada", 9)
    assert e.value.details["current_version"] == 2
    # Publishing a draft equal to the current text makes no version.
    rv.soul_edit("ada", conv, {"action": "add", "text": "Be brief."})
    assert rv.soul_publish("ada", conv).changed is False and rv.soul("ada").version == 2


def test_s2_publish_without_a_draft_is_refused(rv: Reverie, conv: str) -> None:
    with pytest.raises(RefusedInput) as e:
        rv.soul_publish("ada", conv)
    assert e.value.code == "no_draft"


def test_s2_a_stale_publish_is_refused_and_the_draft_reset(rv: Reverie, conv: str) -> None:
    other = rv.create_conversation("ada", "D1").id
    rv.soul_edit("ada", conv, {"action": "set_body", "text": "Draft one."})
    rv.soul_edit("ada", other, {"action": "set_body", "text": "Draft two."})
    assert rv.soul_publish("ada", other).version == 1
    with pytest.raises(RevisionConflict) as e:
        rv.soul_publish("ada", conv)
    assert e.value.code == "soul_version_conflict"
    assert e.value.details == {"current_version": 1, "draft_base": 0}
    assert rv.soul("ada").text == "Draft two.\n"
    draft = rv.soul_draft("ada", conv)
    assert (draft.base_version, draft.text) == (1, "Draft two.\n")
    # Redone on top, it publishes.
    rv.soul_edit("ada", conv, {"action": "add", "text": "And draft one."})
    assert rv.soul_publish("ada", conv).version == 2


def test_s2_published_versions_are_immutable(rv: Reverie, conv: str) -> None:
    rv.soul_edit("ada", conv, {"action": "set_body", "text": "You are Ada."})
    rv.soul_publish("ada", conv)
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        rv.state.conn.execute("UPDATE soul_versions SET text = 'evil'")
    assert rv.soul("ada").text == "You are Ada.\n"


def test_s1_drafts_are_per_conversation_and_of_the_agent(rv: Reverie, conv: str) -> None:
    rv.create_agent("bo")
    rv.soul_edit("ada", conv, {"action": "set_body", "text": "Mine."})
    with pytest.raises(NotFound):
        rv.soul_edit("bo", conv, {"action": "set_body", "text": "Not yours."})
    assert rv.soul_draft("ada", rv.create_conversation("ada", "D1").id).text == ""
