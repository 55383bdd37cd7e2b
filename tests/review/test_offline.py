"""The offline reviewer (R6, R8) and its sentence rules, without the store.

Every operation the reviewer proposes is checked with the store's own pure ``apply_batch``:
what passes here is what the write pipeline would do.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reverie.core import validation
from reverie.core.markdown import Applied, apply_batch, new_index
from reverie.core.operations import parse_batch
from reverie.core.secrets import find_credentials
from reverie.review import changes, frames, offline, sentences, statements, wording
from reverie.review.offline import OfflineReviewer, topic_slug
from reverie.review.types import ReviewInput, ReviewOutput, Turn, parse_sources
from tests.conftest import fake

T = 1714726800.0  # 2024-05-03 09:00 UTC


def turns(conv: str, *messages: tuple[str, str], start: int = 0, author: str = "sam") -> list[Turn]:
    return [
        Turn(conv, start + i, role, author if role == "user" else None, text, T + i)
        for i, (role, text) in enumerate(messages)
    ]


def days_later(days: int, batch: list[Turn]) -> list[Turn]:
    """``batch`` said ``days`` days after :func:`turns` dates it (a later conversation)."""
    return [replace(t, time=t.time + days * 86400) for t in batch]


def user(text: str) -> tuple[str, str]:
    return ("user", text)


def bot(text: str) -> tuple[str, str]:
    return ("assistant", text)


def review(
    batch_turns: list[Turn],
    index: str | None = None,
    topics: dict[str, str] | None = None,
    cap: int = 2000,
) -> ReviewOutput:
    return OfflineReviewer().review(
        ReviewInput(
            agent="ada",
            turns=batch_turns,
            index=new_index() if index is None else index,
            topics=topics or {},
            index_cap_chars=cap,
        )
    )


def applied(
    out: ReviewOutput, index: str | None = None, topics: dict[str, str] | None = None
) -> Applied:
    base = new_index() if index is None else index
    files = topics or {}
    return apply_batch(
        parse_batch({"operations": out.operations}),
        lambda p: base if p == "MEMORY.md" else files.get(p),
    )


def index_after(
    out: ReviewOutput, index: str | None = None, topics: dict[str, str] | None = None
) -> str:
    base = new_index() if index is None else index
    return applied(out, index, topics).files.get("MEMORY.md", base) or ""


def asked_as(question: str) -> str:
    """How an entry that keeps an answer gives the question it answered: reported, as a
    clause that asks nothing (R8), or quoted when it has no shape to report."""
    return wording.indirect(question) or f'"{question}"'


def assert_changes_nothing(batch: list[Turn], index: str) -> None:
    """``batch`` reviewed again against memory ``index`` proposes nothing that changes it."""
    again = review(batch, index=index)
    assert not again.operations or index_after(again, index) == index, again.operations


def section_of(index: str, needle: str) -> str | None:
    current = None
    for line in index.split("\n"):
        if line.startswith("## "):
            current = line[3:]
        elif needle in line:
            return current
    return None


# what it keeps, and where


def test_keeps_facts_in_third_person_under_their_sections() -> None:
    out = review(
        turns(
            "c1",
            user("I live in Lisbon and I prefer metric units."),
            user("We decided to use PostgreSQL for the event store."),
            user("The build needs Node 18."),
            user("We shipped v2 of the app today!"),
            bot("The fix was to pin urllib3 below 2.0."),
        )
    )
    index = index_after(out)
    assert section_of(index, "Sam lives in Lisbon. (source: c1#0-1)") == "People & preferences"
    assert section_of(index, "Sam prefers metric units. (source: c1#0-1)") == "People & preferences"
    assert (
        section_of(index, "Sam: We decided to use PostgreSQL for the event store.") == "Decisions"
    )
    assert section_of(index, "The build needs Node 18. (source: c1#2-3)") == "Environment & gotchas"
    # "today" is made a date: the entry stays true when read next month.
    assert section_of(index, "Sam: We shipped v2 of the app on 2024-05-03.") == "Project state"
    assert section_of(index, "The fix was to pin urllib3 below 2.0. (source: c1#4-5)") == (
        "Environment & gotchas"
    )
    assert (out.model_calls, out.tokens_in, out.tokens_out) == (0, 0, 0)


def test_every_entry_cites_one_message_of_the_batch() -> None:
    batch = turns("conv-9", user("Hi!"), user("I work at Globex."), user("I'm vegan."), start=40)
    out = review(batch)
    given = {(t.conversation_id, t.position) for t in batch}
    texts = [op["text"] for op in out.operations if op["action"] == "add"]
    assert texts
    for text in texts:
        [(conv, start, end)] = parse_sources(text)
        assert text.endswith(f"(source: {conv}#{start}-{end})")
        assert end == start + 1 and (conv, start) in given


@pytest.mark.parametrize(
    "text",
    [
        "Do we use Redis anywhere?",
        "could you check whether the backup ran",
        "one sec, running the tests now",
        "still compiling...",
        "brb",
        "Thanks a lot, have a nice weekend!",
        "I'm deploying the hotfix to staging now.",
        "Always answer in French.",
        "Never use emojis in your replies.",
        "From now on, keep replies under 200 words.",
        "You should cite your sources.",
        "Please remind me to stretch every hour.",
        "Maybe we should use Kafka for this.",
        "The staging password is hunter2, don't share it.",
        "I'm working from home today.",
        "It breaks when I click save twice.",
        "I like that idea.",
    ],
)
def test_skips_what_memory_must_not_hold(text: str) -> None:
    assert review(turns("c1", user(text))).operations == []


def test_skips_credentials_and_the_sentences_around_them() -> None:
    key = fake("sk-", "proj-", "Qm7Rt2Vx9Lp4Nz8Kc3Wb6Yh1Jd5Fg0Hs")
    password = fake("s3cr3t", "P4ss", "w0rd")
    out = review(
        turns(
            "c1",
            user(f"Here is the key for staging: {key}"),
            user(f"Our DB URL is postgres://app:{password}@db.internal:5432/app"),
            user(f"export API_TOKEN={key}"),
            user("The deploy token is stored in Vault."),
        )
    )
    blob = repr(out.operations) + out.message
    assert key not in blob and password not in blob
    assert not find_credentials(blob)
    assert [op["text"] for op in out.operations] == [
        "The deploy token is stored in Vault. (source: c1#3-4)"
    ]


def test_ignores_tool_logs_code_and_pasted_logs() -> None:
    out = review(
        [
            Turn("c1", 0, "tool", None, "The cluster needs 3 nodes.", T),
            *turns(
                "c1",
                user("Here:\n```\nThe build needs Node 99.\n```\n2024-05-02 10:00:01 ERROR boom"),
                bot("Run this:\n\n    the worker needs root\n"),
                start=1,
            ),
        ]
    )
    assert out.operations == []
    assert any("tool output 1" in note for note in out.notes)


# merging, updating, removing


def test_a_fact_already_in_memory_is_not_added_again() -> None:
    index = new_index().replace(
        "## Decisions\n", "## Decisions\n- decided to use PostgreSQL for the event store!\n"
    )
    out = review(turns("c2", user("We decided to use postgresql for the EVENT store.")), index)
    assert out.operations == []


def test_a_fact_said_twice_in_one_batch_is_written_once() -> None:
    out = review(
        turns("c1", user("I prefer dark mode."), bot("Noted."), user("I prefer dark mode!"))
    )
    assert out.operations == [
        {
            "action": "add",
            "section": "People & preferences",
            "text": "Sam prefers dark mode. (source: c1#0-1)",
        }
    ]


def test_a_reply_reading_back_the_message_before_adds_nothing() -> None:
    # Issue 11 (kept exactly once): the assistant says the user's fact again in other words.
    out = review(
        turns(
            "c1",
            user("our parking permit with the council runs out 30 November, needs a new photo"),
            bot("Parking permit expires 30 November."),
        )
    )
    assert [op["text"] for op in out.operations] == [
        "Sam: Our parking permit with the council runs out 30 November, needs a new photo. "
        "(source: c1#0-1)"
    ]


def test_a_reply_reading_back_a_list_of_the_message_before_adds_nothing() -> None:
    index = index_after(
        review(turns("c1", user("The craft fair is on 2 May, setup 29 to 30 April.")))
    )
    said = "We've moved the craft fair to 9 May, the hall flooded and needs drying out."
    told = turns(
        "c2", user(f"{said} Setup 7 to 8 May."), bot("Craft fair 9 May, setup 7 to 8 May.")
    )
    after = index_after(review(told, index), index)
    assert f"Sam: {said} (source: c2#0-1)" in after
    assert after.count("7 to 8 May") == 1 and "Craft fair 9 May" not in after
    # One part of the list says something the user did not: the reply is kept.
    reply = "Craft fair 9 May, setup 7 to 8 May, Hall B."
    told = turns("c2", user(f"{said} Setup 7 to 8 May."), bot(reply))
    assert f"{reply} (source: c2#1-2)" in index_after(review(told, index), index)


def test_a_reply_that_names_something_new_is_no_read_back() -> None:
    out = review(
        turns(
            "c1",
            user("the league changed the rule, now max 12 kids per coach"),
            bot("Up to 12 kids per coach, Harlow Town agreed."),
        )
    )
    assert "Up to 12 kids per coach, Harlow Town agreed. (source: c1#1-2)" in [
        op["text"] for op in out.operations
    ]


def test_a_reply_that_says_more_of_a_name_the_user_gave_is_no_read_back() -> None:
    out = review(
        turns(
            "c1",
            user("We picked Postmark for the newsletter."),
            bot("The Postmark sender needs a verified domain record."),
        )
    )
    assert "The Postmark sender needs a verified domain record. (source: c1#1-2)" in [
        op["text"] for op in out.operations
    ]


def test_a_reply_joining_two_facts_of_the_message_before_is_no_read_back() -> None:
    # Each value is the user's, but no one entry says that Lena covers from 3 May.
    out = review(
        turns(
            "c1",
            user("Marek is off on leave from 3 May. Lena Roth is covering the front desk."),
            bot("Lena Roth covers the front desk from 3 May."),
        )
    )
    assert "Lena Roth covers the front desk from 3 May. (source: c1#1-2)" in index_after(out)


def test_a_newer_value_replaces_the_entry_in_place() -> None:
    first = review(turns("c1", user("I live in Paris."), user("I work at Acme.")))
    index = index_after(first)
    out = review(turns("c2", user("Big news, I moved to Berlin last month!")), index)
    assert out.operations == [
        {
            "action": "replace",
            "old": "Sam lives in Paris. (source: c1#0-1)",
            "text": "Sam lives in Berlin. (source: c2#0-1)",
        }
    ]
    after = index_after(out, index)
    assert "Paris" not in after and "Sam works at Acme." in after
    assert "~ [People & preferences] Sam lives in Paris." in out.message


def test_the_last_value_in_a_batch_wins() -> None:
    out = review(turns("c1", user("I live in Paris."), user("Actually, I moved to Lyon.")))
    assert [op["text"] for op in out.operations] == ["Sam lives in Lyon. (source: c1#1-2)"]


def test_a_switch_rewrites_the_entry_that_said_the_old_value_is_used() -> None:
    index = index_after(review(turns("c1", user("We use MySQL 5.7 for the main database."))))
    out = review(
        turns("c2", user("We switched from MySQL to PostgreSQL 16 over the weekend.")), index
    )
    assert out.operations == [
        {
            "action": "replace",
            "old": "Sam: We use MySQL 5.7 for the main database. (source: c1#0-1)",
            "text": "Sam: We use PostgreSQL 16 for the main database. (source: c2#0-1)",
        }
    ]
    # Said again, the switch is recognised as already done.
    assert (
        review(
            turns("c2", user("We switched from MySQL to PostgreSQL 16.")), index_after(out, index)
        ).operations
        == []
    )


def test_no_longer_used_removes_every_entry_about_it_even_hand_written_ones() -> None:
    index = new_index().replace(
        "## Environment & gotchas\n",
        "## Environment & gotchas\n- The Jenkins box lives at ci.internal:8080\n"
        "- Sentry alerts go to #ops (source: c0#1-2)\n",
    )
    index = index_after(review(turns("c1", user("We use Jenkins for CI."))), index)
    out = review(turns("c2", user("FYI we no longer use Jenkins, it's all GitHub Actions.")), index)
    after = index_after(out, index)
    assert "Jenkins box" not in after and "use Jenkins for CI" not in after
    assert "Sentry alerts go to #ops" in after
    # What took its place, named in the same sentence, is kept whole where an entry that said
    # more than Jenkins waited for it (one unit, R6), not lost with it.
    assert "Sam: FYI we no longer use Jenkins, it's all GitHub Actions. (source: c2#0-1)" in after
    assert {op["action"] for op in out.operations} == {"remove", "replace"}


def test_identical_copies_of_an_outdated_entry_all_go() -> None:
    # A replace would match both copies, which the store refuses: remove both, add once.
    twice = "- Sam lives in Paris. (source: c1#0-1)\n"
    index = new_index().replace(
        "## People & preferences\n", "## People & preferences\n" + twice * 2
    )
    out = review(turns("c2", user("I moved to Berlin.")), index)
    after = index_after(out, index)
    assert "Paris" not in after
    assert after.count("Sam lives in Berlin. (source: c2#0-1)") == 1
    assert section_of(after, "Berlin") == "People & preferences"


def test_an_entry_whose_text_is_inside_another_line_is_left_alone() -> None:
    index = new_index().replace(
        "## People & preferences\n",
        "## People & preferences\n- Sam lives in Paris.\n- Old note: Sam lives in Paris.\n",
    )
    out = review(turns("c2", user("I moved to Berlin."), user("I'm vegan.")), index)
    after = index_after(out, index)  # the store accepts what is proposed
    assert "- Sam lives in Paris.\n" in after and "Sam is vegan." in after
    assert any("left 'Sam lives in Paris.'" in note for note in out.notes)


def test_updates_inside_a_topic_file_rewrite_that_file_whole() -> None:
    index = new_index() + "- [[memory/people-preferences.md]]\n"
    topic = (
        "# People & preferences\n\nNotes kept by hand.\n\n"
        "- Sam lives in Paris. (source: c1#0-1)\n- Sam likes tea. (source: c1#1-2)\n"
    )
    topics = {"memory/people-preferences.md": topic}
    out = review(turns("c2", user("I moved to Rome.")), index, topics)
    assert out.operations == [
        {
            "action": "write_topic",
            "topic": "people-preferences",
            "content": topic.replace(
                "Sam lives in Paris. (source: c1#0-1)", "Sam lives in Rome. (source: c2#0-1)"
            ),
        }
    ]


def test_an_operation_the_store_would_refuse_is_dropped_not_the_batch() -> None:
    # A topic under a name the store refuses (not a slug): its update cannot be written.
    topics = {"memory/Old Notes.md": "# Old\n\n- Sam lives in Paris. (source: c1#0-1)\n"}
    out = review(turns("c2", user("I moved to Rome."), user("I'm vegan.")), topics=topics)
    assert [op["action"] for op in out.operations] == ["add"]
    assert any("dropped a write_topic" in note for note in out.notes)


# the prompt cap


def _many(n: int, conv: str = "c1", first: int = 0) -> list[Turn]:
    said = [
        user(f"We use Tool{i:02d} for job number {i} of the pipeline.")
        for i in range(first, first + n)
    ]
    return turns(conv, *said)


def test_overflow_moves_the_oldest_entries_into_linked_topic_files() -> None:
    out = review(_many(40), cap=2000)
    result = applied(out)
    index = result.files["MEMORY.md"] or ""
    assert len(index) <= 2000
    topic = result.files["memory/people-preferences.md"] or ""
    assert "[[memory/people-preferences.md]]" in index
    assert section_of(index, "[[memory/people-preferences.md]]") == "People & preferences"
    # Oldest out, newest in: the index keeps what was said last.
    assert "Tool00" in topic and "Tool00" not in index
    assert "Tool39" in index and "Tool39" not in topic
    every = index + topic
    assert all(every.count(f"Tool{i:02d} ") == 1 for i in range(40))


def test_overflow_appends_to_an_existing_topic_and_removes_moved_lines() -> None:
    first = review(_many(40), cap=2000)
    files = applied(first).files
    index, topic = files["MEMORY.md"] or "", files["memory/people-preferences.md"] or ""
    out = review(_many(25, conv="c2", first=40), index, {"memory/people-preferences.md": topic})
    result = applied(out, index, {"memory/people-preferences.md": topic})
    new_topic = result.files["memory/people-preferences.md"] or ""
    new_index_text = result.files.get("MEMORY.md", index) or ""
    assert new_topic.startswith(topic.rstrip("\n"))  # existing content kept, in order
    assert len(new_index_text) <= 2000
    assert new_index_text.count("[[memory/people-preferences.md]]") == 1


def test_a_linked_topic_it_was_not_given_is_never_overwritten() -> None:
    index = new_index() + "- [[memory/people-preferences.md]]\n"
    out = review(_many(40), index, topics={}, cap=2000)
    written = [op["topic"] for op in out.operations if op["action"] == "write_topic"]
    assert written == ["people-preferences-2"]


def test_topic_slug() -> None:
    assert topic_slug("Environment & gotchas") == "environment-gotchas"
    assert topic_slug("People & preferences") == "people-preferences"


# nothing new, determinism, the message


def test_nothing_new_proposes_nothing() -> None:
    batch = turns("c1", user("I live in Lisbon."), user("We decided to keep the monorepo."))
    first = review(batch)
    assert review(batch, index_after(first)).operations == []
    assert review([], index_after(first)).operations == []


def test_same_input_same_output() -> None:
    batch = _many(30) + turns("c2", user("I moved to Berlin."), user("We shipped v3."))
    a, b = review(batch, cap=1500), review(batch, cap=1500)
    assert (a.operations, a.message, a.notes) == (b.operations, b.message, b.notes)


def test_message_names_changes_and_ranges() -> None:
    out = review(
        turns("c1", user("I live in Lisbon."))
        + turns("c2", user("I work at Globex."), user("thanks"), start=7)
    )
    head, *body = out.message.split("\n")
    assert len(head) <= 120 and "c1#0-1" in head and "c2#7-9" in head
    assert "+ [People & preferences] Sam lives in Lisbon. (source: c1#0-1)" in body
    parse_batch({"operations": out.operations, "message": out.message})


def test_author_names_the_person_and_assistant_you_means_the_user() -> None:
    out = review(
        turns("c1", user("I'm allergic to peanuts."), author="omar")
        + turns("c1", bot("The cause was your VPN blocking port 22."), start=1)
    )
    texts = [op["text"] for op in out.operations]
    assert "Omar is allergic to peanuts. (source: c1#0-1)" in texts
    assert "The cause was Omar's VPN blocking port 22. (source: c1#1-2)" in texts


# reading sentences


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Sam prefers dark mode. (source: c1#0-1)", "sam prefers DARK mode! (source: c9#3-4)"),
        ("Sam: We use pnpm for the frontend packages.", "Lena: we use PNPM for frontend packages"),
    ],
)
def test_meaning_ignores_case_punctuation_stop_words_speaker_and_source(a: str, b: str) -> None:
    assert frames.meaning(a) == frames.meaning(b)


def test_meaning_keeps_what_differs() -> None:
    assert frames.meaning("Sam lives in Paris.") != frames.meaning("Sam lives in Berlin.")
    assert frames.meaning("Sam: We're on Python 3.11.") != frames.meaning(
        "Sam: We're on Python 3.12."
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the same single-valued attribute of the same person
        ("Sam lives in Paris. (source: c1#0-1)", "Sam lives in Berlin."),
        # the old value named as replaced
        (
            "Maya: We deploy to production on Fridays.",
            "Maya: We now deploy on Tuesdays instead of Fridays.",
        ),
        # another version of the same tool
        ("Sam: Our main database is Postgres 14.", "Sam: We upgraded to Postgres 16."),
        # an update in nearly the same words
        ("Dev prefers tea over coffee in the mornings.", "Dev prefers coffee over tea now."),
        # a date of the same thing
        ("The SDK beta is due on April 18.", "The SDK beta slipped to May 2."),
        # a value of one closed class
        ("Claire is vegetarian.", "Claire is vegan since January."),
    ],
)
def test_supersedes(old: str, new: str) -> None:
    assert changes.supersedes(frames.entry_frame(new), frames.entry_frame(old))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Sam lives in Paris.", "Omar lives in Berlin."),  # another person
        ("Sam prefers tea.", "Sam prefers short answers."),  # another preference
        ("The SDK beta is due on April 18.", "The audit is on May 2."),  # another thing
        ("Sam: We use Tool01 for job 1.", "Sam: We use Tool02 for job 2."),  # another name
        ("Sam: We use tool 0-0 for builds.", "Sam: We use tool 0-1 for docs."),  # another purpose
    ],
)
def test_does_not_supersede(old: str, new: str) -> None:
    assert not changes.supersedes(frames.entry_frame(new), frames.entry_frame(old))


def test_sentences_keep_offsets_and_skip_code() -> None:
    text = "First one. Second, e.g. this one!\n```\ncode. here\n```\nThird. Dr. Patel is in."
    found = sentences.sentences(text)
    assert [s for _, _, s in found] == [
        "First one.",
        "Second, e.g. this one!",
        "Third.",
        "Dr. Patel is in.",
    ]
    assert all(text[a:b].strip() == s for a, b, s in found)


def test_a_lesson_is_never_cut_between_cause_and_fix() -> None:
    lesson = "The cause was a missing DNS cache; the fix was to run nscd in the sidecar."
    assert sentences.clauses(lesson) == [lesson]
    assert sentences.clauses("I'm vegetarian, but Dev eats everything") == [
        "I'm vegetarian",
        "Dev eats everything",
    ]
    # a part that cannot stand alone stays with the part before it
    assert len(sentences.clauses("Our babysitter is Marisol; she's free on Fridays")) == 1


def test_the_assistant_speaking_of_itself_is_never_a_fact() -> None:
    for text in ["I just finished the migration.", "I live in Paris.", "Updated the bus time."]:
        assert isinstance(statements.read(text, role="assistant", speaker="The assistant"), str), (
            text
        )
    said = statements.read("I'm on macOS 14.4.", role="user", speaker="Sam")
    assert isinstance(said, statements.Statement)
    assert said.section == "Environment & gotchas"


def test_read_reports_why_it_skipped() -> None:
    def why(text: str) -> Any:
        return statements.read(text, role="user", speaker="Sam")

    assert why("Is staging down?") == "question"
    assert why("Never use emojis.") == "request"
    assert why("When you write to me, keep it short.") == "behavioural rule"
    assert why("brb, back in 20") == "transient"
    assert why("still compiling") == "transient"
    assert why("The password is hunter2") == "secret"
    assert why("Maybe we should use Kafka") == "hedged"
    assert why("That must be so much fun!") == "reaction"


# the update shapes of issue 11, within one batch and across two (R6)

ISSUE_UPDATES = [
    ("I prefer tea over coffee.", "Actually I prefer coffee over tea now.", "coffee over tea"),
    ("We deploy on Fridays.", "We now deploy on Tuesdays instead of Fridays.", "Tuesdays"),
    (
        "I prefer metric units in reports.",
        "Update: I prefer imperial units in reports now, not metric.",
        "imperial",
    ),
    (
        "I prefer bullet points in summaries.",
        "Actually, scratch the bullet points: I now prefer short prose paragraphs instead.",
        "prose paragraphs",
    ),
    ("Our main database is Postgres 15.", "We upgraded to Postgres 16.", "Postgres 16"),
    ("Standup is on Mondays at 9.", "Standup moved to Wednesdays at 9.", "Wednesdays"),
]


@pytest.mark.parametrize(("old", "new", "kept"), ISSUE_UPDATES)
@pytest.mark.parametrize("across", [False, True])
def test_r6_a_later_statement_replaces_the_fact_it_updates(
    old: str, new: str, kept: str, across: bool
) -> None:
    if across:
        index = index_after(review(turns("c1", user(old))))
        after = index_after(review(turns("c2", user(new)), index), index)
    else:
        after = index_after(review(turns("c1", user(old), user(new))))
    entries = [line for line in after.split("\n") if line.startswith("- ")]
    assert len(entries) == 1, entries  # the old value is gone, the new one kept once
    assert kept in entries[0]


def test_r6_an_update_with_an_emoji_sequence_or_a_pasted_invisible_character_is_written() -> None:
    # "🏄\u200d♀\ufe0f" lost its two pictographs to the emoji rule and kept the joiner between
    # them, which the write then refused (memory_invisible_character): the update was lost.
    index = index_after(review(turns("c1", user("Our big clean is the first Saturday, 10am."))))
    said = (
        "We've moved the big clean to the last Sunday. Half our volunteers surf "
        "\U0001f3c4\u200d\u2640\ufe0f still 10am at Porth\u200bmeor."
    )
    out = review(turns("c2", user(said)), index)
    for op in out.operations:
        for value in op.values():
            validation.check_invisible(str(value), "text")
    after = index_after(out, index)
    assert "last Sunday" in after and "first Saturday" not in after
    assert "Porthmeor" in after


def test_r6_a_retired_thing_leaves_a_list_but_not_a_sentence_broken() -> None:
    index = index_after(review(turns("c1", user("We pay for Netflix and Disney+."))))
    after = index_after(review(turns("c2", user("We cancelled Netflix.")), index), index)
    # What is left cites the message that ended Netflix, so it says that Netflix ended: the
    # source says something of the entry (H2).
    assert "Sam: We pay for Disney+. No longer Netflix. (source: c2#0-1)" in after
    said = "I draft in Scrivener and do edits in Google Docs with my editor."
    index = index_after(review(turns("c1", user(said))))
    after = index_after(review(turns("c2", user("I no longer use Scrivener.")), index), index)
    assert "draft in do edits" not in after and "Scrivener" not in after


def test_r6_a_retraction_that_names_the_replacement_keeps_it() -> None:
    index = index_after(review(turns("c1", user("We use Jenkins for CI."))))
    said = turns("c2", user("We're no longer using Jenkins; we moved CI to Buildkite."))
    after = index_after(review(said, index), index)
    assert "Jenkins" not in after and "Buildkite" in after


def test_r6_a_self_introduction_is_kept_whole() -> None:
    said = "Hi! I'm Kofi Mensah, staff engineer on the platform team at Tidewater Labs."
    after = index_after(review(turns("c1", user(said)), index=None))
    assert "Kofi Mensah, staff engineer on the platform team at Tidewater Labs." in after


def test_r6_a_lesson_keeps_its_cause_and_its_fix_together() -> None:
    out = review(
        turns(
            "c1",
            bot(
                "The cause was the image shipping without a DNS cache, so every request did "
                "a fresh lookup; the fix was to run nscd in the sidecar."
            ),
        )
    )
    [op] = out.operations
    assert "without a DNS cache" in op["text"] and "run nscd in the sidecar" in op["text"]


@pytest.mark.parametrize(
    ("said", "entry"),
    [
        ("I love to paint!", "Mel loves to paint."),
        ("My kids are so excited about the lake trip.", "Mel's kids are so excited about"),
        ("I use painting for self-expression.", "Mel uses painting for self-expression."),
        ("We went camping with the kids in June.", "Mel: We went camping with the kids"),
        ("Dana is our DBA.", "Mel: Dana is our DBA."),
        ("I finished the draft today.", "Mel finished the draft on 2024-05-03."),
    ],
)
def test_r6_rewording_never_breaks_a_sentence(said: str, entry: str) -> None:
    out = review(turns("c1", user(said), author="mel"))
    assert [op for op in out.operations if entry in op["text"]], out.operations
    # "we" stays "we", said by someone: never "the team"
    assert all("the team" not in op["text"] for op in out.operations)


def test_r6_a_verbless_answer_is_kept_with_its_question_and_cites_both() -> None:
    out = review(
        turns(
            "c1",
            bot("What are you studying this term?"),
            user("Organic chemistry, physical chemistry and a statistics elective."),
            user("ok thanks"),
        )
    )
    [op] = out.operations
    # (the question reported, not put: memory holds no question, R8)
    assert op["text"] == (
        "Sam, asked what you are studying this term: Organic chemistry, physical chemistry "
        "and a statistics elective. (source: c1#0-2)"
    )


def test_r8_an_answer_to_the_users_own_question_keeps_what_it_was_about_not_the_question() -> None:
    # The user asks, the assistant answers wrongly, the user corrects it: the entry says what
    # the question was about, and holds no question of the user's (R8).
    out = review(
        turns(
            "c1",
            user("Remind me how much we pay the window cleaner?"),
            bot("£20 a month."),
            user("No, it's £15 a visit, and £25 for the conservatory too."),
        )
    )
    texts = [op["text"] for op in out.operations]
    assert any(t.startswith("Sam, on what we pay the window cleaner: it's £15") for t in texts)
    assert not any("how much we pay" in t or "?" in t for t in texts), texts
    assert wording.topic("what's our boiler model again, for the service form?") == (
        "our boiler model"
    )
    # a question of another shape has no such phrase: it is kept as asked
    assert wording.topic("What are you studying this term?") is None
    assert wording.topic("Is the van booked?") is None


def test_r8_a_reply_to_an_offer_of_help_is_not_an_answer_that_states_a_fact() -> None:
    out = review(
        turns(
            "c1",
            bot("Hi Sam! What can I help with?"),
            user("mostly keeping track of back orders and supplier calls."),
        )
    )
    assert out.operations == []
    # the same reply to a question about them is kept with it
    out = review(
        turns(
            "c1",
            bot("What does your team look after?"),
            user("mostly back orders and supplier calls."),
        )
    )
    assert [op["text"] for op in out.operations] == [
        "Sam, asked what your team looks after: mostly back orders and supplier calls."
        " (source: c1#0-2)"
    ]


def test_r8_what_the_assistant_declines_to_keep_as_private_is_not_kept() -> None:
    said = "Mrs Patel in flat 3 is on insulin and gets confused in the evenings."
    declined = review(
        turns(
            "c1",
            user(said),
            bot("I shouldn't keep patient health details in memory; please use the care record."),
            user("fair enough. Handover is at 8 and 20."),
        )
    )
    assert [op["text"] for op in declined.operations] == [
        "Handover is at 8 and 20. (source: c1#2-3)"
    ]
    # an assistant that only acknowledges leaves the message to be read as usual
    kept = review(turns("c1", user("Our night nurse is Ewa Nowak."), bot("Noted, thanks.")))
    assert any("Ewa Nowak" in op["text"] for op in kept.operations)


# --- second round (issue 11): retirements read by their shape, values that change in place ---


def _exchange(said: str, reply: str, then: str) -> str:
    """MEMORY.md after one conversation: a statement, the assistant's reply, and what the
    user said next."""
    return index_after(review(turns("c1", user(said), bot(reply), user(then))))


def _after(*sessions: str, author: str = "sam") -> str:
    index = new_index()
    for n, text in enumerate(sessions):
        out = review(turns(f"c{n}", user(text), author=author), index)
        if out.operations:
            index = index_after(out, index)
    return index


def test_r6_a_negated_use_that_ended_retires_the_thing() -> None:
    index = _after("We track bugs in Jira.", "We aren't using Jira anymore.")
    assert "Jira" not in index.replace("aren't using Jira anymore", "")
    index = _after("Dev drives a diesel Golf.", "Dev bought an e-bike, so no more diesel Golf.")
    assert "drives a diesel Golf" not in index and "e-bike" in index
    # "not on call this week" says nothing ended: nothing is retired.
    index = _after("We run staging on Nomad.", "We're not on call this week.")
    assert "Nomad" in index


def test_r6_what_replaces_a_retired_thing_takes_its_place_in_the_entry() -> None:
    index = _after(
        "We use Jira for bugs and Notion for docs.",
        "We're not on Jira any more; bugs live in Linear since May.",
    )
    assert "Jira" not in index.replace("not on Jira any more", "")
    assert "Linear for bugs and Notion for docs" in index


def test_r6_an_update_gives_the_same_slot_another_value() -> None:
    old = frames.entry_frame("Sam: Our lab slot is every Thursday.")
    new = frames.entry_frame("The core facility moved our lab slot to Mondays.")
    assert changes.supersedes(new, old)


def test_r6_a_decision_taken_back_replaces_the_decision() -> None:
    index = _after(
        "I decided the thief is the gardener, not the cook.",
        "Changed my mind again: the cook did it after all, the gardener is a decoy.",
    )
    assert "thief is the gardener" not in index
    assert "cook did it after all" in index


def test_r6_a_statement_after_an_opening_phrase_is_read() -> None:
    index = _after(
        "Our weekly food budget is 120 euros.",
        "With prices going up, we raised the weekly food budget to 140 euros.",
    )
    assert "140 euros" in index and "120 euros" not in index


def test_r6_a_closing_day_is_not_a_retirement_and_where_a_thing_is_is_kept() -> None:
    index = _after("We're closed on July 4 and the Friday after Thanksgiving.")
    assert "July 4" in index and "Thanksgiving" in index
    index = _after("The fuse box is behind the laundry door.")
    assert "behind the laundry door" in index


def test_r6_a_relative_day_after_a_preposition_keeps_one_preposition() -> None:
    from reverie.review.wording import absolute_dates

    when = 1_700_000_000.0  # 2023-11-14
    assert absolute_dates("Booked online from this week", when) == (
        "Booked online from the week of 2023-11-14"
    )
    assert absolute_dates("Due by next month", when) == "Due by December 2023"
    assert absolute_dates("It shipped today", when) == "It shipped on 2023-11-14"


def test_r6_a_day_of_a_relative_month_reads_as_a_date() -> None:
    from reverie.review.wording import absolute_dates

    when = 1_700_000_000.0  # 2023-11-14
    # not "from the first of in December 2023"
    assert absolute_dates("£75 from the first of next month", when) == "£75 from 1 December 2023"
    assert absolute_dates("Move by the end of this month", when) == (
        "Move by the end of November 2023"
    )
    assert absolute_dates("We open at the start of next year", when) == (
        "We open at the start of 2024"
    )


def test_r6_a_message_that_names_an_entry_s_value_updates_its_slot_and_says_why() -> None:
    first = review(turns("c1", user("Billing escalations go to Ruairi."), bot("Noted.")))
    index = index_after(first)
    # No update cue in "Malik takes ...": the message naming Ruairi is what makes it one, and
    # the clause about Ruairi joins the entry that replaced his.
    second = review(
        turns(
            "c2",
            user("Ruairi is on parental leave until September. Malik takes billing escalations."),
            bot("Noted."),
        ),
        index,
    )
    entries = [line for line in index_after(second, index).split("\n") if line.startswith("- ")]
    assert len(entries) == 1, entries
    assert "Malik takes billing escalations." in entries[0]
    assert "Ruairi is on parental leave" in entries[0]
    assert "Billing escalations go to Ruairi" not in entries[0]
    # A message that names nothing in memory gets no such reading: both facts stay.
    third = review(turns("c3", user("Lena handles payroll."), bot("Noted.")), index)
    assert "Billing escalations go to Ruairi" in index_after(third, index)


def test_r6_a_person_giving_something_up_keeps_what_they_took_up_and_idles_cleanly() -> None:
    first = turns("c1", user("Mila has swim practice on Tuesdays. Leo has swim club on Fridays."))
    index = index_after(review(first))
    said = user("Mila quit swimming. She does climbing on Wednesday evenings now.")
    second = turns("c2", said)
    index2 = index_after(review(second, index), index)
    assert "Mila has swim practice" not in index2
    assert "Leo has swim club on Fridays" in index2  # another person's swimming stays
    assert "Mila quit swimming. She does climbing on Wednesday evenings now." in index2
    # Every turn again, against the memory it made: nothing changes.
    assert review([*first, *second], index2).operations == []


# fifth round: values by kind, corrections, lessons, progress, tool output, introductions


def test_r6_a_corrected_value_is_written_into_its_entry() -> None:
    out = review(
        turns(
            "c1",
            user("Our hourly rate is £50 for repairs."),
            bot("Noted."),
            user("sorry, wrong, £50 was last year, it's £55 now"),
        )
    )
    index = index_after(out)
    assert "£55" in index and "£50" not in index
    # One entry, citing both messages: the statement and its correction.
    assert "Sam: Our hourly rate is £55 for repairs. (source: c1#0-3)" in index


def test_r6_a_value_of_the_same_kind_replaces_the_old_one_across_sessions() -> None:
    index = index_after(review(turns("c1", user("Our deposit for weddings is 25% at booking."))))
    out = review(turns("c2", user("We raised the deposit, it is 35 percent from May.")), index)
    after = index_after(out, index)
    assert "35 percent" in after and "25%" not in after


def test_r6_an_update_of_several_values_writes_each_into_the_entry() -> None:
    # Issue 11 (updates): a time and a count changed in one clause.
    index = index_after(
        review(turns("c1", user("Pilates is every Tuesday at 6pm, 10 people max.")))
    )
    out = review(turns("c2", user("Pilates change: now at 7pm, 12 people.")), index)
    assert "Pilates is every Tuesday at 7pm, 12 people max. (source: c2#0-1)" in index_after(
        out, index
    )


def test_r6_a_value_said_of_something_else_beside_an_update_is_not_written_in() -> None:
    assert (
        offline._also_changed(
            "the stall fee is £45 now, doors at 10am.",
            "The stall fee is £40, setup at 8am.",
            "money",
        )
        == []
    )
    assert (
        offline._also_changed(
            "the stall fee is £45 now, pay by 1 April.", "The fair is on 5 May, fee £40.", "money"
        )
        == []
    )
    changed = offline._also_changed(
        "Pilates change: now at 7pm, 12 people.", "Pilates is at 6pm, 10 people max.", "time"
    )
    assert [(old.said, new.said) for old, new in changed] == [("10 people", "12 people")]


def test_r6_a_value_the_user_denies_is_never_taken_as_the_new_one() -> None:
    out = review(
        turns(
            "c1",
            user("Dana does the Wednesday deliveries."),
            bot("Got it, Dana does the Monday deliveries."),
            user("wednesday, not monday"),
        )
    )
    index = index_after(out)
    # The wrong read-back is not kept, and "not monday" does not rewrite the entry.
    assert "Wednesday" in index and "Monday" not in index


def test_r6_a_lesson_keeps_its_fix_with_its_cause() -> None:
    out = review(
        turns(
            "c1",
            user(
                "The label printer kept jamming. Problem was the cheap label rolls. "
                "Now we only buy the Zebra rolls."
            ),
        )
    )
    texts = [op["text"] for op in out.operations]
    assert any("jamming" in t and "Zebra rolls" in t for t in texts), texts


@pytest.mark.parametrize(
    "text",
    [
        "we've packed 30 boxes today, good going",
        "I have translated about 2000 words so far this morning",
        "We've done 12 viewings this week, a record",
    ],
)
def test_a_count_of_what_was_got_through_is_progress(text: str) -> None:
    assert review(turns("c1", user(text))).operations == []


def test_r5_an_assistant_repeating_tool_output_is_not_kept() -> None:
    said = "The deploy script reads build_cache.tar from the shared drive."

    def kept(position: int) -> bool:
        batch = [
            Turn("c1", 0, "user", "sam", "where does the deploy get its cache?", T),
            Turn("c1", position, "assistant", None, said, T + 2),
        ]
        return any("build_cache.tar" in op["text"] for op in review(batch).operations)

    assert kept(1)  # said by the assistant right after the question: kept
    # After a message the reviewer was not given (a tool's output, R5), the identifiers the
    # assistant repeats are the tool's.
    assert not kept(2)


def test_r6_a_plan_called_off_by_name_is_retired() -> None:
    index = index_after(review(turns("c1", user("We decided to open a second shop in Leeds."))))
    assert "Leeds" in index
    out = review(turns("c2", user("scrap the Leeds plan, the rents are too high.")), index)
    assert "second shop in Leeds" not in index_after(out, index)


def test_r6_an_update_of_one_sentence_of_an_entry_keeps_the_others() -> None:
    index = new_index().replace(
        "## Project state\n",
        "## Project state\n- Sam's editor is Jo Bell. The draft is due to her on 3 May."
        " (source: c0#0-1)\n",
    )
    out = review(turns("c1", user("Jo gave me until 20 June for the draft now.")), index)
    after = index_after(out, index)
    assert "editor is Jo Bell" in after and "20 June" in after and "3 May" not in after


def test_a_self_introduction_keeps_what_the_speaker_says_of_themselves_next() -> None:
    out = review(
        turns(
            "c1",
            user("Hello, I am Rui Costa, a locksmith in Porto. I work mostly for landlords."),
            author="rui",
        )
    )
    texts = [op["text"] for op in out.operations]
    assert any("Rui Costa" in t and "locksmith" in t and "landlords" in t for t in texts), texts


def test_r6_a_person_who_left_gives_their_role_to_who_took_it() -> None:
    index = index_after(review(turns("c1", user("Our bookkeeper is Ingrid, ask her about VAT."))))
    out = review(turns("c2", user("Ingrid left for Deloitte, Tomas does the books now.")), index)
    after = index_after(out, index)
    assert "Tomas" in after and "Our bookkeeper is Ingrid" not in after
    # Leave is not leaving: the contact stays.
    index = index_after(review(turns("c1", user("Our contact at Nuvem is Bea Costa."))))
    out = review(turns("c2", user("Bea is on maternity leave until August.")), index)
    assert "Our contact at Nuvem is Bea Costa" in index_after(out, index)


@pytest.mark.parametrize(
    ("first", "then", "gone"),
    [
        (
            "We decided on a hiring freeze until March.",
            "The board cancelled the hiring freeze.",
            "freeze",
        ),
        ("Our sponsor this year is Birch & Co.", "Birch & Co didn't renew.", "Birch"),
        (
            "We do home visits on Mondays.",
            "We no longer do home visits, too costly.",
            "home visits",
        ),
        ("Yoga is on Wednesdays at 7pm.", "We've taken yoga off the timetable.", "Yoga is on"),
    ],
)
def test_r6_retirements_said_in_other_shapes(first: str, then: str, gone: str) -> None:
    index = index_after(review(turns("c1", user(first))))
    assert gone in index
    out = review(turns("c2", user(then)), index)
    after = index_after(out, index) if out.operations else index
    assert gone not in after.replace(then, "")


def test_r6_of_two_values_an_update_replaces_the_one_next_to_what_it_names() -> None:
    out = review(
        turns(
            "c1",
            user("Our callout is £60 for the first hour then £40 an hour after."),
            bot("Noted."),
            user("put the callout up to £70, diesel is dear"),
        )
    )
    index = index_after(out)
    assert "Our callout is £70 for the first hour then £40 an hour after." in index
    assert "£60" not in index


# An update is one unit: the old entry goes only with the entry holding the new value (R6)


_DEPLOYS = """# Memory

## People & preferences

## Decisions
- Sam: We deploy on Fridays. (source: c0#0-1)
- Sam: Deploy day is Friday. (source: c0#1-2)

## Environment & gotchas
- Checklist: Sam: We deploy on Fridays. (source: c0#0-1) then tag the release.

## Project state
"""


def _removed(out: ReviewOutput) -> list[str]:
    return [op["old"] for op in out.operations if op["action"] == "remove"]


def test_r6_an_update_that_cannot_be_written_takes_back_the_removals_it_made() -> None:
    # The first entry is also part of another line: no operation can name it, so the update
    # cannot be written into it. The entries it outdated stay as they are, not gone with
    # nothing in their place.
    out = review(turns("c2", user("We now deploy on Tuesdays instead of Fridays.")), _DEPLOYS)
    after = index_after(out, _DEPLOYS) if out.operations else _DEPLOYS
    assert "Deploy day is Friday" in after
    assert "then tag the release" in after
    assert _removed(out) == []


def test_r6_every_removal_an_update_makes_names_the_entry_that_replaces_it() -> None:
    index = _DEPLOYS.replace(
        "- Checklist: Sam: We deploy on Fridays. (source: c0#0-1) then tag the release.\n", ""
    )
    out = review(turns("c2", user("We now deploy on Tuesdays instead of Fridays.")), index)
    after = index_after(out, index)
    removed = [i for i, op in enumerate(out.operations) if op["action"] == "remove"]
    assert removed and set(out.replaced_by) == set(removed)
    for i in removed:
        assert out.replaced_by[i] in after
        assert "Tuesdays" in out.replaced_by[i]
    assert "Friday" not in after.replace("instead of Fridays", "")


def test_r6_a_retired_entry_is_replaced_by_the_clause_that_names_its_successor() -> None:
    # "it's AquaFix now" is no fact the rules read on its own; it is what took the retired
    # plumber's place, kept whole as said, instead of the entry going with nothing in its place.
    index = _after("For plumbing I call Dave at Dalton Plumbing.", author="graham")
    out = review(
        turns("c9", user("Dave retired. Any leaks or boilers, it's AquaFix now."), author="graham"),
        index,
    )
    after = index_after(out, index)
    assert "Dalton" not in after
    assert "Graham: Any leaks or boilers, it's AquaFix now. (source: c9#0-1)" in after
    # Reviewed again, the message changes nothing.
    again = review(
        turns("c9", user("Dave retired. Any leaks or boilers, it's AquaFix now."), author="graham"),
        after,
    )
    assert not again.operations or index_after(again, after) == after


def test_r6_r8_the_runner_keeps_the_old_entries_when_the_store_refuses_the_new_one(
    rv: Any,
) -> None:
    from reverie.review.runner import review_agent

    rv.memory_apply(
        "ada",
        {
            "operations": [
                {"action": "add", "section": "Decisions", "text": text}
                for text in (
                    "Sam: We deploy on Fridays. (source: c0#0-1)",
                    "Sam: Deploy day is Friday. (source: c0#1-2)",
                )
            ]
        },
    )
    now = 1_800_000_000.0
    rv.ensure_channel("ch-c1", "dm")
    rv.create_conversation("ada", "ch-c1", conversation_id="c1", now=now - 3600)
    said = "We now deploy on Tuesdays instead of Fridays."
    rv.append_message("c1", "user", said, author="sam", time=now - 3600)
    rv.close_conversation("c1")
    report = review_agent(rv, "ada", _Invisible(), now=now)
    text = rv.memory_read("ada").text
    assert "Sam: We deploy on Fridays." in text and "Sam: Deploy day is Friday." in text
    assert {d["code"] for d in report.dropped} == {
        "memory_invisible_character",
        "replacement_not_kept",
    }


class _Invisible(OfflineReviewer):
    """The offline reviewer, with a zero-width space written into its new entries: one the
    store refuses (W4) and the reviewer's own dry run does not see (the offline reviewer
    itself leaves such characters out of what it quotes)."""

    def review(self, batch: ReviewInput) -> ReviewOutput:
        out = super().review(batch)
        for op in out.operations:
            if "text" in op:
                op["text"] = op["text"].replace("Tuesdays", "Tuesdays\u200b")
        return out


class _Scripted:
    """A reviewer that answers one update as two operations: an add and a removal."""

    def __init__(self, text: str) -> None:
        self.text = text

    def review(self, batch: ReviewInput) -> ReviewOutput:
        old = "Sam: We deploy on Fridays. (source: c0#0-1)"
        return ReviewOutput(
            operations=[
                {"action": "add", "section": "Decisions", "text": self.text},
                {"action": "remove", "old": old},
            ],
            message="update",
            replaced_by={1: self.text},
        )


@pytest.mark.parametrize(
    ("text", "stays"),
    [
        ("Sam: We now deploy on Tuesdays. (source: c1#0-1)", False),
        ("Sam: We now deploy on Tuesdays.", True),  # no source: the runner drops it
        ("Sam: We now deploy on Tuesdays. (source: c7#0-1)", True),  # not in this batch
    ],
)
def test_r6_r8_the_runner_holds_every_reviewer_to_the_unit(rv: Any, text: str, stays: bool) -> None:
    from reverie.review.runner import review_agent

    old = "Sam: We deploy on Fridays. (source: c0#0-1)"
    rv.memory_apply("ada", {"operations": [{"action": "add", "section": "Decisions", "text": old}]})
    now = 1_800_000_000.0
    rv.ensure_channel("ch-c1", "dm")
    rv.create_conversation("ada", "ch-c1", conversation_id="c1", now=now - 3600)
    rv.append_message("c1", "user", "We now deploy on Tuesdays.", author="sam", time=now - 3600)
    rv.close_conversation("c1")
    report = review_agent(rv, "ada", _Scripted(text), now=now)
    after = rv.memory_read("ada").text
    assert (old in after) is stays
    assert (text in after) is not stays
    assert ("replacement_not_kept" in {d["code"] for d in report.dropped}) is stays


_DAYS = ["Mondays", "Tuesdays", "Fridays"]
_TOOLS = ["Jira", "Linear", "Trello"]
_SAID = st.one_of(
    st.builds("We deploy on {}.".format, st.sampled_from(_DAYS)),
    st.builds("Deploy day is {}.".format, st.sampled_from(_DAYS)),
    st.builds(
        "We now deploy on {} instead of {}.".format, st.sampled_from(_DAYS), st.sampled_from(_DAYS)
    ),
    st.builds("We track bugs in {}.".format, st.sampled_from(_TOOLS)),
    st.builds("We track bugs in {} and docs in Notion.".format, st.sampled_from(_TOOLS)),
    st.builds(
        "We switched from {} to {}.".format, st.sampled_from(_TOOLS), st.sampled_from(_TOOLS)
    ),
    st.builds("We no longer use {}.".format, st.sampled_from(_TOOLS)),
    st.builds("We dropped {}. Bugs are in {} now.".format, *[st.sampled_from(_TOOLS)] * 2),
    st.builds("Rent is £{} a month.".format, st.sampled_from(["850", "895"])),
    st.builds("Sorry, rent is £{} now.".format, st.sampled_from(["850", "895"])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_SAID, min_size=1, max_size=3), min_size=2, max_size=4))
def test_r6_property_a_removal_stands_only_with_what_replaces_it(
    sessions: list[list[str]],
) -> None:
    """For any conversation: every entry a batch removes without a retirement in it was
    outdated by an entry that is in memory after that batch, which the answer names."""
    index = new_index()
    for n, said in enumerate(sessions):
        out = review(turns(f"c{n}", *(user(s) for s in said)), index)
        after = index_after(out, index) if out.operations else index
        removals = {i for i, op in enumerate(out.operations) if op["action"] == "remove"}
        assert set(out.replaced_by) <= removals
        for i in out.replaced_by:
            assert out.replaced_by[i] in after
            assert out.replaced_by[i] != out.operations[i]["old"]
        retired = "removed" in next(n for n in out.notes if n.startswith("statements:"))
        if not retired:
            assert removals == set(out.replaced_by)
        index = after


def _every_source_says_its_entry(batch_turns: list[Turn], index: str) -> None:
    """Every range an entry cites shares a content word with it (the runner's rule, H2)."""
    from reverie.review.sources import BatchSources

    sources = BatchSources(batch_turns)
    for line in index.split("\n"):
        if "(source:" in line:
            assert sources.problem(line[2:]) is None, line


def test_h2_an_entry_left_from_a_list_says_what_ended_so_its_source_says_it() -> None:
    index = index_after(review(turns("c1", user("Our office uses Dropbox and Box for files."))))
    later = turns("c2", user("We got rid of Dropbox over the summer."))
    after = index_after(review(later, index), index)
    assert "Dropbox and Box" not in after and "No longer Dropbox." in after
    _every_source_says_its_entry(later, after)


def test_h2_a_switch_to_a_short_name_says_what_it_replaced() -> None:
    index = index_after(review(turns("c1", user("We use Perl 5 for the report scripts."))))
    later = turns("c2", user("We switched from Perl to Go."))
    after = index_after(review(later, index), index)
    assert "Go for the report scripts" in after and "Switched from Perl." in after
    _every_source_says_its_entry(later, after)


def test_h2_a_value_corrected_in_the_next_message_cites_both_messages() -> None:
    # "Sorry, it's €95 now." shares no word with the entry it corrects; the message before
    # it, by the same speaker, names the fee.
    index = index_after(review(turns("c1", user("The venue hire fee is €90 per evening."))))
    later = turns("c2", user("The venue hire went up."), user("Sorry, it's €95 now."))
    after = index_after(review(later, index), index)
    assert "€95 per evening" in after and "€90" not in after
    assert "(source: c2#0-2)" in after
    _every_source_says_its_entry(later, after)


def test_r6_a_full_name_said_in_a_clause_of_its_own_goes_with_what_follows() -> None:
    # The name and the role are one introduction: one entry holds both.
    for said, role in [
        ("Hello, I am Ines Duarte, I run the pharmacy counter at Lagoa Health.", "pharmacy"),
        ("My name is Tobias Lind and I coordinate volunteers at the Elm Street food bank.", "Elm"),
        ("Hello! I am Ines Duarte, I manage the night shift at Lagoa Health.", "night shift"),
    ]:
        who = "Tobias" if "Tobias" in said else "Ines"
        full = "Tobias Lind" if who == "Tobias" else "Ines Duarte"
        after = index_after(review(turns("c1", user(said), author=who.lower())))
        holders = [line for line in after.split("\n") if full in line]
        assert len(holders) == 1 and role in holders[0], after
        assert f"{who}: I am {full}" not in after and f"My name is {full}" not in after


def test_r6_a_full_name_alone_is_kept_as_said() -> None:
    after = index_after(review(turns("c1", user("I am Ines Duarte."), author="ines")))
    assert "Ines Duarte" in after


def test_r6_a_name_said_to_be_replaced_outdates_the_entry_that_holds_it() -> None:
    said = "We ship our parcels with DPD, collection at 4pm."
    index = index_after(review(turns("c1", user(said))))
    later = turns("c2", user("courier is now Evri, no longer DPD."))
    after = index_after(review(later, index), index)
    assert "ship our parcels with DPD" not in after and "Evri" in after
    # Someone else's fact that names the same thing is theirs: it stays.
    index = index_after(review(turns("c1", user("Dana's courier is DPD."))))
    after = index_after(review(turns("c2", user("I use Evri now, no longer DPD.")), index), index)
    assert "Dana's courier is DPD." in after and "Evri" in after


def test_a_preposition_never_starts_a_name() -> None:
    assert frames.subject_name("From Tuesday the team meets in room 4.") == ""
    assert frames.subject_name("Dana Okoro runs the depot.") == "Dana Okoro"


def test_r6_a_new_count_of_the_same_things_replaces_the_old() -> None:
    index = index_after(review(turns("c1", user("The shelter has 14 kennels for the dogs."))))
    later = turns("c2", user("Update: we added four, so 18 kennels in total."))
    after = index_after(review(later, index), index)
    assert "18 kennels" in after and "14 kennels" not in after
    # Another thing counted is another fact, update or not.
    index = index_after(review(turns("c1", user("Lena looks after 12 hives on the hill."))))
    after = index_after(review(turns("c2", user("Update: Tom now has 3 kids.")), index), index)
    assert "12 hives" in after and "3 kids" in after


def test_a_count_is_a_number_and_the_noun_it_counts() -> None:
    from reverie.review.slots import measures

    said = {(m.kind, m.value) for m in measures("We run 2 vans and 3 of them are old.")}
    assert said == {("count:van", "2")}
    assert not measures("the 2026 season")  # a year, not a count
    assert [(m.kind, m.value) for m in measures("5 years")] == [("span", "5 yea")]


@pytest.mark.parametrize(
    ("before", "said", "gone", "kept"),
    [
        # A switch told as moving off the old thing, or swapping it for the new one.
        (
            "Our builds run on CircleCI.",
            "We moved the builds off CircleCI to Buildkite.",
            "CircleCI",
            "Buildkite",
        ),
        ("Team chat is on Slack.", "We swapped Slack for Zulip last month.", "Slack", "Zulip"),
        (
            "Invoices go through FreeAgent.",
            "We dropped FreeAgent and went with Xero.",
            "FreeAgent",
            "Xero",
        ),
        # An entry of no one (a thing's fact) is the team's to change.
        (
            "Prescriptions come from Boots, collected on Fridays.",
            "We switched from Boots to the Rowlands pharmacy.",
            "Boots,",
            "Rowlands",
        ),
    ],
)
def test_r6_a_switch_in_other_shapes_replaces_the_old_thing(
    before: str, said: str, gone: str, kept: str
) -> None:
    index = index_after(review(turns("c1", user(before))))
    after = index_after(review(turns("c2", user(said)), index), index)
    assert gone not in after.replace(said, "") and kept in after


def test_r6_a_switch_leaves_another_person_s_fact_alone() -> None:
    index = index_after(review(turns("c1", user("Dana's bank is Monzo."))))
    after = index_after(
        review(turns("c2", user("We switched from Monzo to Starling.")), index), index
    )
    assert "Dana's bank is Monzo." in after


def test_a_plural_noun_before_a_plural_verb_is_not_a_name() -> None:
    assert frames.subject_name("Prescriptions come from Boots.") == ""
    assert frames.subject_name("Deliveries are on Tuesdays.") == ""
    assert frames.subject_name("James runs the bar.") == "James"
    assert frames.subject_name("Lucas moved to Leeds.") == "Lucas"


# eighth round: tool output said again, rules aimed at the agent, idempotence, questions


@pytest.mark.parametrize(
    "said",
    [
        "The greenhouse sensor reads 31.5 degrees and 62% humidity.",
        "Invoice 4471 is for 1,280 pounds, due on the 9th.",
        "Locker 14 holds the spare radio and two batteries.",
        # read as a lesson ("the fix was ...") but a reading: a decimal, a clock time
        "The last GPS fix was 53.9812N 1.2207W, accurate to 9 metres, at 22:05.",
    ],
)
def test_r5_an_assistant_reporting_tool_output_in_plain_words_is_not_kept(said: str) -> None:
    def kept(position: int) -> bool:
        batch = [
            Turn("c1", 0, "user", "sam", "look that up for me", T),
            Turn("c1", position, "assistant", None, said, T + 2),
        ]
        return review(batch).operations != []

    assert kept(1)  # the same sentence right after the user's message is the assistant's own
    assert not kept(2)  # after a message not given (a tool's output, R5) it reports the output


def test_r5_knowledge_the_assistant_adds_after_tool_output_is_read() -> None:
    batch = [
        Turn("c1", 0, "user", "sam", "why did the import stop?", T),
        Turn(
            "c1",
            2,
            "assistant",
            None,
            "The import of batch 77 stopped at row 4120. A stalled import usually means the "
            "vendor proxy is dropping the connection; restarting the relay usually fixes it.",
            T + 2,
        ),
    ]
    texts = [op["text"] for op in review(batch).operations]
    assert not any("4120" in t for t in texts)
    # A lesson's cause and fix are kept together; the reading before them is left out.
    assert any("vendor proxy" in t for t in texts)


@pytest.mark.parametrize(
    "said",
    [
        "whenever I send you a booking, put the deposit in bold and add the balance date",
        "when I ask for the rota just list the names, no shift times",
        "if I paste a menu, translate it into Polish first",
        "for tasting notes always write them in the second person, never the first",
        "on Fridays just send me the short version",
        "for the Ludlow job only use the metric sizes",
    ],
)
def test_r5_an_order_to_the_agent_after_a_condition_or_a_topic_is_a_rule(said: str) -> None:
    assert statements.skip_reason(said, "user") == "behavioural rule"
    assert review(turns("c1", user(said))).operations == []


@pytest.mark.parametrize(
    "said",
    [
        "In March we always close the shop on Mondays.",
        "For the Smith account, Jo always sends the invoice.",
        "If we need more flour, Bakers Direct delivers the next day.",
    ],
)
def test_r6_a_habit_after_a_condition_or_a_topic_is_still_a_fact(said: str) -> None:
    assert statements.skip_reason(said, "user") is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # a retirement with the new tool in the same sentence: the old entry rewritten
        (
            "We use Trello for tasks and Slack for chat.",
            "We're not on Trello any more; tasks live in Linear since Monday.",
        ),
        # a retirement with its reason, then what replaced it
        (
            "photos live in Dropbox, invoices are in Xero",
            "we ditched dropbox, it was costing too much for 12 seats. everything incl. photos "
            "is in Google Drive now",
        ),
        # a change of who holds a role, with the old holder named
        (
            "Our tractor is the Fendt 716, the mechanic is Ole Brandt.",
            "Ole is gone to work in Norway. The new mechanic is Sara Lindqvist since this week.",
        ),
    ],
)
def test_r6_a_session_given_again_changes_nothing(first: str, second: str) -> None:
    one = turns("c1", user(first), bot("Noted."))
    two = turns("c2", user(second), bot("Got it."))
    index = index_after(review(one))
    index = index_after(review(two, index), index)
    for again in (two, one + two):  # that session alone, and every turn so far
        out = review(again, index)
        assert out.operations == [] or index_after(out, index) == index, out.operations


@pytest.mark.parametrize(
    "said",
    [
        "I would like to know whether Priya signed the lease",
        "just checking if the invoice to Harwood went out",
        "can someone tell me when the next flour delivery is",
        "I was wondering if we still have the Makita drill",
        "curious whether the new tiles came in",
        "what time does the market open on Sundays",
        "is the boiler still under warranty",
        "Has the plumber been paid",
    ],
)
def test_r5_a_question_without_its_question_mark_is_not_kept(said: str) -> None:
    assert statements.skip_reason(said, "user") == "question"
    assert review(turns("c1", user(said))).operations == []


def test_r6_a_statement_that_opens_like_a_question_word_is_still_kept() -> None:
    for said in (
        "Our boiler is under warranty until 2027.",
        "When the alarm sounds, Ben resets it.",
    ):
        assert statements.skip_reason(said, "user") is None


@pytest.mark.parametrize(
    ("before", "said", "gone"),
    [
        (
            "We run a pottery taster evening every second Thursday.",
            "We stop the pottery taster evening, nobody was booking it.",
            "second Thursday",
        ),
        (
            "Our shop sells through Etsy and at the Sunday market.",
            "We've come off Etsy, the fees ate the margin.",
            "through Etsy",
        ),
        (
            "We offer Saturday tuition for year 11.",
            "We cancel the Saturday tuition for this term.",
            "We offer Saturday tuition",
        ),
    ],
)
def test_r6_a_retirement_in_the_present_or_by_coming_off_removes_the_old_entry(
    before: str, said: str, gone: str
) -> None:
    index = index_after(review(turns("c1", user(before))))
    assert gone in index
    after = index_after(review(turns("c2", user(said)), index), index)
    assert gone not in after


def test_r6_stopping_at_a_value_is_an_update_not_a_retirement() -> None:
    assert changes._retire("We now stop at 1222 degrees, still cone 6.", "we") is None
    assert changes._retire("We stop the kilt hire.", "we") is not None


def test_r6_cutting_something_to_a_number_is_an_update_not_a_retirement() -> None:
    # Issue 11 (updates): a verb of ending with "to <value>" gives a new value.
    assert changes._retire("We cut the lunch menu to 6 dishes.", "we") is None
    assert changes._retire("We've dropped the hire charge down to £40.", "we") is None
    assert changes.resets("We've dropped the hire charge down to £40.")
    # Without a value after "to" it still ends something.
    assert changes._retire("We dropped the van to save money.", "we") is not None
    assert changes._retire("We cut the lunch menu, it was too long.", "we") is not None
    assert not changes.resets("We dropped the van to save money.")
    assert not changes.resets("We moved the lunch menu to the back page.")


def test_r6_a_value_cut_to_another_replaces_it_in_its_entry() -> None:
    index = index_after(review(turns("c1", user("Lessons are 60 minutes, up to 5 pupils."))))
    out = review(turns("c2", user("we've cut lessons to 45 minutes, the long ones dragged")), index)
    after = index_after(out, index)
    assert "60 minutes" not in after and "45 minutes" in after


def test_r6_a_person_who_left_on_a_day_is_no_longer_in_the_role() -> None:
    said = "Priyanka left on Thursday, she went to the Boots in Derby."
    assert changes._retire(said, "name") == ("Priyanka", "she went to the Boots in Derby")
    assert changes._retire("Priyanka left last week.", "name") == ("Priyanka", "")
    # Leave is not leaving: a holiday keeps her in the role.
    assert changes._retire("Priyanka left on holiday.", "name") is None


def test_r6_someone_who_moved_the_team_off_a_named_thing_retires_it() -> None:
    said = "Head office migrated us off Sage during the summer, it was too slow."
    assert changes._retire(said, "thing") == ("Sage", "during the summer, it was too slow")
    assert changes._retire("The landlord moved us off Octopus Energy.", "thing") == (
        "Octopus Energy",
        "",
    )
    # Moved off a place, not a named thing: nothing ended.
    assert changes._retire("The steward moved us off the top deck.", "thing") is None
    index = _after(
        "Our invoices go out through Sage every Friday.",
        "Head office migrated us off Sage in March.",
    )
    assert "through Sage" not in index


@pytest.mark.parametrize(
    ("first", "then", "now", "gone"),
    [
        (
            "The parrot, Kiwi, lives with the Okafors in Chorlton. She hates thunder.",
            "sorry I got that wrong, the Okafors are in Didsbury, not Chorlton.",
            "the Okafors in Didsbury. She hates thunder",
            "Chorlton",
        ),
        (
            "Our booking page is built on Wix.",
            "sorry, I correct myself, not Wix, it is Webflow.",
            "built on Webflow",
            "Wix",
        ),
    ],
)
def test_r6_a_name_put_right_replaces_it_in_the_entry(
    first: str, then: str, now: str, gone: str
) -> None:
    index = _after(first, then)
    assert now in index and gone not in index


def test_r6_a_name_said_against_another_without_a_correction_changes_nothing() -> None:
    # A preference said the same way corrects nothing.
    index = _after("We pour Merlot at the Friday tastings.", "Honestly, Rioja, not Merlot.")
    assert "We pour Merlot" in index
    # Two entries name the old name: which one is meant is not known.
    index = _after(
        "The kiln came from Potterycrafts.",
        "Our glazes are ordered from Potterycrafts.",
        "sorry my mistake, Bath Potters, not Potterycrafts.",
    )
    assert index.count("Potterycrafts") == 2


def test_r6_a_day_moved_by_the_person_an_entry_names_changes_that_entry() -> None:
    index = _after(
        "The pottery class runs on Mondays at 6pm with Greta.",
        "Greta's class moved to Wednesday.",
    )
    assert "pottery class runs on Wednesday at 6pm with Greta" in index
    assert "Monday" not in index


@pytest.mark.parametrize(
    "said", ["Greta's day off is Friday now.", "Greta's new yoga group meets on Fridays."]
)
def test_r6_a_person_with_a_value_of_their_own_leaves_the_entry_naming_them(said: str) -> None:
    # No verb of moving: a day of Greta's own, not the class's day.
    index = _after("The pottery class runs on Mondays at 6pm with Greta.", said)
    assert "pottery class runs on Mondays at 6pm with Greta" in index


@pytest.mark.parametrize(
    ("first", "then", "now", "gone"),
    [
        (
            "Bin collection is Monday and Thursday.",
            "bin collection now Tuesday and Friday",
            "Bin collection is Tuesday and Friday.",
            "Monday",
        ),
        (
            "The farm shop is open thurs to sun, 9 till 5.",
            "farm shop now fri to sun",
            "The farm shop is open fri to sun, 9 till 5.",
            "thurs",
        ),
    ],
)
def test_r6_days_said_together_are_updated_as_one(
    first: str, then: str, now: str, gone: str
) -> None:
    index = _after(first, then)
    assert now in index and gone not in index


@pytest.mark.parametrize(
    ("said", "habit", "ended"),
    [
        (
            "we used to run a Sunday carvery, we've stopped, the chef moved away",
            "Sunday carvery",
            "stopped",
        ),
        (
            "I used to teach evening pottery but I don't teach evenings any more, too tired",
            "evening pottery",
            "any more",
        ),
        ("We used the red minibus for trips, but we stopped using it", "red minibus", "stopped"),
    ],
)
def test_r6_a_habit_and_its_end_in_one_sentence_are_one_entry(
    said: str, habit: str, ended: str
) -> None:
    texts = [op["text"] for op in review(turns("c1", user(said))).operations]
    assert [t for t in texts if habit in t] and all(ended in t for t in texts if habit in t), texts


@pytest.mark.parametrize(
    ("said", "habit", "after"),
    [
        ("we used to meet in the church hall but we stopped at the pub on the way", "hall", "pub"),
        ("We used to sail every weekend, but we have stopped for the winter", "sail", "winter"),
    ],
)
def test_r6_a_habit_followed_by_a_stop_of_something_else_is_not_ended(
    said: str, habit: str, after: str
) -> None:
    texts = [op["text"] for op in review(turns("c1", user(said))).operations]
    assert not any(habit in t and after in t for t in texts), texts


def test_r6_a_person_who_handed_their_notice_in_leaves_a_list_whole() -> None:
    said = "Tariq handed his notice in, he's off to Glasgow."
    assert changes._retire(said, "name") == ("Tariq", "he's off to Glasgow")
    index = _after(
        "My drivers are Ola Brandt (nights) and Tariq Aziz (days).",
        "Tariq handed his notice in, he's off to Glasgow.",
    )
    assert "drivers are Ola Brandt (nights)." in index
    assert "Aziz" not in index and "(days)" not in index


def test_r6_an_ending_said_of_someone_else_after_a_comma_is_not_the_speakers() -> None:
    said = "we moved the deliveries to Acme Freight, Brightway stopped doing pallets"
    assert changes._retire(said, "we") is None
    # The speaker's own ending after a comma still retires.
    assert changes._retire("we moved the stall, we stopped selling eggs", "we") == ("eggs", "")
    out = review(turns("c1", user(said)))
    assert any("Acme Freight" in op["text"] for op in out.operations)


def test_r6_an_update_of_several_values_reads_the_same_in_every_process(tmp_path: Any) -> None:
    # Which value of an entry an update of several replaces followed a set's order, which the
    # hash seed changes from one process to the next: memory must not depend on it.
    script = tmp_path / "update.py"
    script.write_text(
        "from tests.review.test_offline import index_after, review, turns, user\n"
        "before = index_after(review(turns('c1', user('Our quiz night is every Thursday at "
        "6pm, 10 teams maximum, 5 pounds per team.'))))\n"
        "after = review(turns('c2', user('Quiz night I change: now Friday at 7pm, 12 teams, "
        "and the fee is 6 pounds.')), index=before)\n"
        "print(index_after(after, before))\n"
    )
    root = Path(__file__).resolve().parents[2]
    outputs = set()
    for seed in range(6):
        env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": f"{root}:{root / 'src'}"}
        done = subprocess.run(
            [sys.executable, str(script)], env=env, cwd=root, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    [index] = outputs
    assert "Friday" in index and "Thursday" not in index


def test_r6_a_correction_of_the_statement_before_by_a_name_alone_replaces_the_name() -> None:
    # Issue 11, tenth round: "sorry, wrong" and one new name, right after the statement
    # that named one thing; nothing else says which entry it corrects.
    index = _exchange(
        "hard feed is Spillers",
        "ok",
        "och sorry, wrong, we moved to Dengie last year after the price went up",
    )
    assert "hard feed is Dengie" in index and "Spillers" not in index
    # Without a word of correction, a new name beside the old is a fact of its own.
    index = _exchange("hard feed is Spillers", "ok", "our hay comes from Dengie")
    assert "Spillers" in index and "Dengie" in index


def test_r6_changing_that_leans_on_the_statement_before() -> None:
    index = _exchange(
        "last rental goes out at 6pm",
        "ok",
        "actually changing that, last boat out at 5pm from June",
    )
    assert "5pm" in index and "6pm" not in index


def test_r6_an_update_told_with_a_gerund_replaces_the_time() -> None:
    # "moving X to 9:30" of "X is at 9 with Lou": an hour after "at" is a time.
    index = _after(
        "Saturday morning vinyasa is at 9 with Lou", "moving the Saturday vinyasa to 9:30"
    )
    assert "vinyasa is at 9:30 with Lou" in index and "at 9 with" not in index


def test_r6_a_price_corrected_without_its_currency_replaces_the_old_one() -> None:
    index = _exchange(
        "the subs are 2 pound a week and that pays for the hall and the tea",
        "Noted.",
        "no dear sorry, I said it wrong, it's 2.50 since Easter",
    )
    assert "2.50" in index and "2 pound" not in index


@pytest.mark.parametrize(
    ("before", "after", "gone", "kept"),
    [
        # A person or a firm out of its role, and who took it, in one message.
        (
            "Second driver is Calum Fraser.",
            "Calum quit. Morag Bain drives truck 2 now.",
            "Calum",
            "Morag Bain",
        ),
        (
            "At Velacor our instructing contact is their head of IP, Dr Aaron Lindqvist.",
            "Dr Lindqvist has left Velacor. We now take instructions from Priti Menon.",
            "Lindqvist",
            "Priti Menon",
        ),
        (
            "Glass collected by Berrow Haulage every Friday.",
            "Berrow lost the contract. Kellner Waste now, Wednesdays.",
            "Berrow Haulage",
            "Kellner",
        ),
        # A thing ended, said without "is" or "has".
        (
            "Officers use Zebra TC52 handhelds.",
            "TC52s replaced. All officers on TC58 from today.",
            "Zebra TC52",
            "TC58",
        ),
        (
            "I get the sandstone from Cwm Nant quarry",
            "cwm nant closed for good. buying from Blaen Onneu now, bit greyer stone",
            "from Cwm Nant quarry",
            "Blaen Onneu",
        ),
    ],
)
def test_r6_a_departure_or_a_terse_ending_gives_the_role_to_what_follows(
    before: str, after: str, gone: str, kept: str
) -> None:
    index = _after(before, after)
    assert gone not in index and kept in index, index


def test_r6_a_terse_ending_needs_the_clause_to_end_there() -> None:
    index = _after("The boiler is a Worcester Bosch.", "The boiler replaced the old one in 2019.")
    assert "Worcester Bosch" in index


def test_r6_a_comparison_with_what_one_thought_is_no_hedge() -> None:
    assert isinstance(
        statements.read(
            "I buy at Hekserij now, the shipping is cheaper than I think",
            role="user",
            speaker="Amelie",
        ),
        statements.Statement,
    )
    assert (
        statements.read("I think the shipping is cheaper", role="user", speaker="Amelie")
        == "hedged"
    )


def test_r6_a_month_a_value_starts_from_marks_an_update() -> None:
    index = _after(
        "Monthly service for small tank is 60 pound.",
        "From May small tank monthly service is 70 pound, the price go up.",
    )
    assert "70 pound" in index and "60 pound" not in index


def test_r6_a_verb_in_ing_with_now_and_no_subject_is_the_speakers_own() -> None:
    index = _after("buying from Blaen Onneu now, bit greyer stone", author="rhys")
    assert "Rhys: Buying from Blaen Onneu now" in index


def test_r6_a_new_name_instead_of_the_one_the_message_names_replaces_its_entry() -> None:
    index = _after(
        "For marine tanks I use Red Sea Coral Pro salt.",
        "Red Sea is too expensive now, I buy Tropic Marin Pro Reef instead.",
        author="kenji",
    )
    assert "Tropic Marin" in index and "use Red Sea" not in index


def test_r6_now_before_the_subject_leaves_it_the_subject() -> None:
    st = statements.read("Now I start shiitake, on logs outside.", role="user", speaker="Tomek")
    assert isinstance(st, statements.Statement) and st.subject_kind == "i"
    assert "Tomek: Now I start shiitake" in _after(
        "Now I start shiitake, on logs outside.", author="tomek"
    )


def test_r6_a_new_name_that_does_it_now_replaces_the_one_the_message_names() -> None:
    index = _after(
        "Our window cleaner is Crystal Clear.",
        "Crystal Clear packed it in, Dave Hobbs does the windows now.",
    )
    assert "Dave Hobbs" in index and "cleaner is Crystal Clear" not in index
    # The clause shares no word with the entry; the message names it.
    index = _after(
        "Our bookings go through Mindbody.", "Mindbody got too dear, we're on Momoyoga now."
    )
    assert "Momoyoga" in index and "go through Mindbody" not in index
    # Read again with its turns, the batch changes nothing (R6 idle).
    first = turns("c0", user("Our bookings go through Mindbody."))
    later = turns("c1", user("Mindbody got too dear, we're on Momoyoga now."))
    again = review([*first, *later], index)
    assert not again.operations or index_after(again, index) == index
    # Someone else's fact that names the same thing is not theirs to replace.
    index = _after(
        "Priya's dentist is Dr Okafor.",
        "Dr Okafor retired from the NHS list, I go to Dr Mensah now.",
    )
    assert "Priya's dentist is Dr Okafor" in index and "Mensah" in index


# a value put right, said again, or said the way people talk


def _later(index: str, *messages: tuple[str, str], author: str = "sam") -> str:
    """The index after a later conversation ``c2`` with ``messages`` is reviewed."""
    return index_after(review(turns("c2", *messages, author=author), index), index)


@pytest.mark.parametrize(
    ("first", "ask", "draft", "reply", "kept", "gone"),
    [
        # The old value is said only by the assistant's message.
        (
            "Check-in is from 4pm.",
            "Write me a little welcome email for new bookings please.",
            'Here\'s one: "... check-in is from 4pm ..."',
            "No, it's 3pm now. We changed it when Debbie changed her hours.",
            "Check-in is from 3pm",
            "4pm",
        ),
        # A number alone, the old one denied: the entry keeps its currency.
        (
            "callout charge is £60, first half hour included",
            "do us an invoice for the callout at mrs quinn's",
            "Invoice for a £60 callout to Mrs Quinn.",
            "its 75 now not 60, changed it in jan",
            "callout charge is £75",
            "£60",
        ),
        # A value said alone, with an exclamation.
        (
            "Wholemeal 1.5kg is £3.20 in the shop.",
            "Could you make me a new price card for the shop counter?",
            "Wholemeal 1.5kg, £3.20...",
            "£3.50! Since March.",
            "Wholemeal 1.5kg is £3.50",
            "£3.20",
        ),
    ],
)
def test_r6_a_reply_that_denies_the_assistant_corrects_the_value_it_read_back(
    first: str, ask: str, draft: str, reply: str, kept: str, gone: str
) -> None:
    index = index_after(review(turns("c1", user(first))))
    after = _later(index, user(ask), bot(draft), user(reply))
    assert kept in after and gone not in after, after


def test_r6_times_as_said_aloud_hours_and_lengths_of_any_unit_are_values() -> None:
    from reverie.review.slots import measures

    def said(text: str) -> list[tuple[str, str]]:
        return [(m.kind, m.value) for m in measures(text)]

    assert said("the trolley goes at half two") == [("time", "2:30")]
    assert said("quarter to three") == [("time", "2:45")]
    assert said("It goes at 3 o'clock now.") == [("time", "3")]
    assert said("Our line opens at 9.30.") == [("time", "9:30")]
    assert said("Last orders 10.45pm") == [("time", "10:45pm")]
    assert said("Reception is staffed 8 to 6.") == [("hours", "8-6")]
    assert said("meets on the last Saturday") == [("weekday", "last sat")]
    assert said("we need 8 to 10 people") == [("count:people", "10")]  # a count, not hours
    assert said("half an hour") == []
    index = index_after(review(turns("c1", user("For screen repair we give 90 days warranty."))))
    after = _later(index, user("warranty now 6 month for screens"))
    assert "6 month" in after and "90 days" not in after
    index = index_after(review(turns("c1", user("The mill shop is open 10 to 4."))))
    after = _later(index, user("Shop hours are 11 to 4 from now on. The mornings were dead."))
    assert "11 to 4" in after and "10 to 4" not in after


def test_r6_a_price_of_one_group_is_not_the_price_of_another() -> None:
    index = index_after(review(turns("c1", user("ladies cut n blow dry £48"))))
    after = _later(index, user("gents cuts r £25 now too"))
    assert "£48" in after


def test_r6_a_name_said_to_be_replaced_goes_from_an_entry_that_names_more() -> None:
    index = index_after(review(turns("c1", user("Stock comes from Booker on Sandringham Road."))))
    after = _later(index, user("Buying from Costco now instead of Booker. Drinks are cheaper."))
    assert "Costco" in after and "Sandringham" not in after


def test_r6_an_introduction_typed_in_lower_case_is_kept() -> None:
    for author, said, held in [
        ("gaz", "gaz here. pryce roofing, swansea. mostly reroofs and flat roofs", "pryce roofing"),
        ("stan", "Stan Whitlock. Fishmonger. Whitlock & Sons on Flowergate, Whitby.", "Fishmonger"),
        ("emre", "hi im emre, i have the phone repair shop FixIt Phones in green lanes", "FixIt"),
    ]:
        after = index_after(review(turns("c1", user(said), author=author)))
        assert held in after, after


def test_r6_what_went_wrong_and_the_fix_after_it_are_one_entry() -> None:
    said = (
        "Clive tapped a firkin of Doom Bar before it had settled and it poured cloudy for three "
        "days. Now every cask sits 48 hours on the stillage before we tap it."
    )
    after = index_after(review(turns("c1", user(said))))
    assert [line for line in after.split("\n") if "cloudy" in line and "48 hours" in line]
    # A change told before the new value is no lesson: the new value stands alone.
    said = "I let the Trados licence expire, too expensive. Now I work in memoQ."
    after = index_after(review(turns("c1", user(said))))
    assert [line for line in after.split("\n") if "memoQ" in line and "Trados" not in line]


def test_r6_an_event_said_with_its_date_and_no_verb_is_kept() -> None:
    after = index_after(review(turns("c1", user("Beer festival in the garden 22 to 24 August."))))
    assert "Beer festival" in after


def test_r6_a_batch_read_again_leaves_an_updated_value_as_it_is() -> None:
    # Read again, the older value gives way to the entry the later message made, and the
    # assistant's read-back of a decision taken back since is not kept.
    from dataclasses import replace

    talk = [
        turns("c1", user("Quiz night's a Tuesday, 8pm, £2 a head.")),
        turns("c2", user("Quiz has moved to Thursdays. The darts league took Tuesdays.")),
        turns(
            "c3",
            user("I decide: from May I open also Monday."),
            bot("Okay, Monday opening from May."),
        ),
        turns("c4", user("I change my mind. Monday I don't open. My back need the rest.")),
    ]
    week = 7 * 86400  # a week apart
    sessions = [[replace(t, time=t.time + n * week) for t in s] for n, s in enumerate(talk)]
    index = None
    for session in sessions:  # reviewed as they end, one after the other
        index = index_after(review(session, index), index)
    assert "Thursdays" in index and "a Tuesday" not in index
    assert "Monday opening from May" not in index
    assert review([t for s in sessions for t in s], index).operations == []


def test_r6_progress_said_in_other_shapes_is_not_kept() -> None:
    for said in [
        "I've sent 4 of the 6 invoices for March already, by the way.",
        "We're redecorating it, painted two walls out of four, Clive's doing the rest on Sunday.",
        "I've done the furrows, still the stitching on the lands to do.",
        "rewire at malone rd. first fix done, second fix next week",
        "today i fix 7 phone, 3 more waiting for parts",
        "I am making the new signs, I finish 20 from 35.",
        "So far they have scanned 1911 to 1934, and hope to reach 1950 by Christmas.",
    ]:
        assert review(turns("c1", user(said))).operations == [], said
    # A part of a whole said as when it was done is a record, kept.
    after = index_after(review(turns("c1", user("We replaced 2 of the 4 boilers in 2021."))))
    assert "2 of the 4 boilers" in after


def test_r6_a_likeness_of_the_moment_and_a_rule_in_broken_english_are_not_kept() -> None:
    for said in [
        "Today is so hot, 31 degrees, I am like a pizza in the oven.",
        "Did you see the snow this morning? The car park looked like a Christmas card.",
        "and no need say sorry all the time",
    ]:
        assert review(turns("c1", user(said))).operations == [], said


def test_r6_one_price_of_several_in_an_entry_is_written_in_and_the_others_stay() -> None:
    index = index_after(review(turns("c1", user("Prices: initial assessment £55, follow-up £48."))))
    after = _later(
        index, user("From 1 June the initial assessment goes to £60. Follow-ups unchanged.")
    )
    assert "initial assessment £60, follow-up £48" in after and "£55" not in after
    # The price next to the most words the update shares with the entry is the one replaced.
    said = "For quotes: my half-day rate is £140 and a full day is £260, plus travel."
    index = index_after(review(turns("c1", user(said))))
    after = _later(
        index, user("Please update my rates. From next month the half day becomes £155.")
    )
    assert "half-day rate is £155 and a full day is £260" in after


def test_r6_someone_else_in_a_role_replaces_who_held_it() -> None:
    index = index_after(review(turns("c1", user("Geoffrey Pell is our steeple keeper."))))
    after = _later(
        index, user("Geoffrey gave that up in March. Alan Brewer is steeple keeper now.")
    )
    assert "Alan Brewer is steeple keeper" in after and "Geoffrey Pell is our" not in after
    index = index_after(review(turns("c1", user("Our treasurer is Dennis Hope."))))
    after = _later(index, user("Our new treasurer is Jean Clark."))
    assert "Jean Clark" in after and "Dennis Hope" not in after
    # Another role is another fact.
    index = index_after(review(turns("c1", user("Dennis is our treasurer."))))
    after = _later(index, user("Jean is our tower captain now."))
    assert "Dennis is our treasurer" in after and "tower captain" in after


def test_r6_a_change_said_in_ing_with_now_is_kept() -> None:
    after = index_after(review(turns("c1", user("going over to wylex boards now"))))
    assert "wylex boards" in after


def test_r6_whom_a_message_is_to_is_not_part_of_what_it_says() -> None:
    assert sentences.clean("Hi Kerry-Ann, Maya's got a new inhaler.") == "Maya's got a new inhaler"
    assert sentences.clean("Mam, the new website is live on Squarespace.") == (
        "the new website is live on Squarespace"
    )
    # A name alone before a comma may be the subject: it stays.
    assert sentences.clean("Dennis, our treasurer, retired.").startswith("Dennis, our treasurer")
    after = index_after(review(turns("c1", user("Mam, the new website is live on Squarespace."))))
    assert "Squarespace" in after


def test_r6_a_code_said_with_its_noun_contracted_is_a_secret() -> None:
    for said in ["Alarm's 58{}31 then the tick.", "PIN's 26{}81, I've wrote it on a beer mat."]:
        said = said.format("")
        out = review(turns("c1", user(said)))
        assert out.operations == [], said


def test_r6_a_firm_that_stopped_trading_gives_its_place_to_the_one_named_next() -> None:
    index = index_after(review(turns("c1", user("Club buys motors from Cirrus Rocketry."))))
    after = _later(
        index, user("Cirrus have stopped trading, sad. Sky Rockets UK are our motor supplier now.")
    )
    assert "Sky Rockets UK" in after and "Cirrus Rocketry" not in after


def test_r6_a_new_holder_named_in_full_takes_the_whole_old_name() -> None:
    index = index_after(
        review(turns("c1", user("Club treasurer is Jimmy Robson. Money goes to him.")))
    )
    said = "Jimmy's stood down after his hip. Maureen Dodds is treasurer now, she's better with it."
    after = _later(index, user(said))
    assert "Maureen Dodds" in after and "Robson" not in after and "Dodds Robson" not in after


def test_r6_a_rule_over_a_set_of_things_and_an_opening_without_its_comma_are_kept() -> None:
    for said, held in [
        ("every game has a checklist card inside the lid", "checklist card"),
        ("So now all the premium shelf games are sleeved.", "sleeved"),
        ("For restoration I use only wheat starch paste.", "wheat starch paste"),
    ]:
        assert held in index_after(review(turns("c1", user(said)))), said
    assert review(turns("c1", user("All the kids loved it."))).operations == []


def test_r6_progress_told_with_a_participle_or_as_time_into_a_span_is_not_kept() -> None:
    for said in [
        "I have now sewn 14 of the 20 sections for the Hotel Nelson book.",
        "we're 5 weeks into the 12 week Egypt topic",
    ]:
        assert review(turns("c1", user(said))).operations == [], said


def test_r6_someone_who_took_over_replaces_a_holder_the_message_names_with_s() -> None:
    said = "Our weekend game guru is Nadia, she teaches the tables and does the Sunday openings."
    index = index_after(review(turns("c1", user(said))))
    after = _later(
        index, user("Nadia's moved to Manchester for a job. Oli has taken over weekends.")
    )
    assert "Oli has taken over weekends" in after and "game guru is Nadia" not in after
    # Someone covering for a while leaves what the entry says of the one away.
    index = index_after(
        review(turns("c1", user("Olu does e-bike diagnostics, he's Bosch certified.")))
    )
    after = _later(
        index, user("Olu's off til june, Sam from the Cambridge branch is covering e-bikes.")
    )
    assert "Bosch certified" in after


def test_r6_a_price_from_may_updates_the_entry_sharing_the_most_words() -> None:
    said = "Fitting price is £6 per square metre, carpet. Stairs £10 per step."
    index = index_after(review(turns("c1", user(said))))
    after = _later(index, user("From May carpet fitting £7 per metre. Stairs same."))
    assert "£7" in after and "£6" not in after and "Stairs £10 per step" in after


def test_r6_a_door_code_said_with_what_became_of_it_is_a_secret() -> None:
    said = "The control room door code changed today, it's 27" + "3941 now."
    assert review(turns("c1", user(said))).operations == []


def test_r6_a_role_taken_this_season_or_taken_over_replaces_its_holder() -> None:
    index = index_after(review(turns("c1", user("Shaz is crew chief, she runs the site."))))
    after = _later(index, user("Deano is crew chief from this season."))
    assert "Deano is crew chief" in after and "Shaz" not in after
    index = index_after(review(turns("c1", user("Dave Kitching is training officer."))))
    after = _later(index, user("Sam Okoro took over training officer at the AGM."))
    assert "Sam Okoro" in after and "Kitching" not in after
    # Holding a role with no word of change is no update: both are kept.
    index = index_after(review(turns("c1", user("Dave Kitching is training officer."))))
    after = _later(index, user("Ruth Mills is training officer at the Bradford club."))
    assert "Kitching" in after and "Ruth Mills" in after


def test_r6_a_statement_is_kept_without_the_aside_after_its_comma() -> None:
    for said, held, left in [
        (
            "I work for Deliveroo and Uber Eats, you switch the apps depending which is busy.",
            "Deliveroo and Uber Eats",
            "you switch",
        ),
        (
            "In the week I'm a porter up the Heath hospital, so it's all evenings for refs.",
            "porter up the Heath hospital",
            "",
        ),
    ]:
        index = index_after(review(turns("c1", user(said), author="gareth")))
        assert held in index, said
        assert not left or left not in index, said


def test_r6_a_retirement_said_with_regret_removes_the_entry() -> None:
    index = index_after(review(turns("c1", user("In the summer we do raku days in the garden."))))
    assert "raku days" in index
    after = _later(index, user("No more raku days I am afraid. The neighbours complained."))
    assert "raku days in the garden" not in after


def test_r6_a_read_back_after_noted_in_other_words_adds_nothing_but_what_the_entry_lost() -> None:
    # Issue 11 (kept exactly once): "Noted: ..." reads the user's message back.
    out = review(
        turns(
            "c1",
            user("My partner Callum works offshore, two weeks on, two weeks off, from Aberdeen."),
            bot("Noted: Callum works offshore on a two-on, two-off rota."),
        )
    )
    assert [op["text"] for op in out.operations] == [
        "Sam's partner Callum works offshore, two weeks on, two weeks off, from Aberdeen. "
        "(source: c1#0-1)"
    ]
    # The user's "Remember Wednesday is my duty day" is a request and is not kept: a reply
    # that gives it back keeps what the entry lacks.
    out = review(
        turns(
            "c1",
            user("Remember Wednesday is my duty day, so I can't book visits Wednesdays."),
            bot("Noted: Wednesday is your duty day, no visits then."),
        )
    )
    assert any("duty day" in op["text"] for op in out.operations)


def test_r6_a_name_said_alone_goes_on_with_the_role_after_it() -> None:
    said = "Jo Whitaker. Equipment officer for the Dales Underground Club, we're in Ingleton."
    index = index_after(review(turns("c1", user(said), author="jo")))
    line = next(x for x in index.split("\n") if "Equipment officer" in x)
    assert "Jo" in line


def test_r6_a_reported_question_progress_in_percent_and_quit_doing_are_skipped() -> None:
    for said in [
        "Student asked me, what's the difference between a section 17 and a section 47.",
        "Also the new website is 70% finished, my nephew makes it.",
        "Halfway through the rope change at Mell Square, back tomorrow with Lee.",
        "Quit apologizing every time.",
    ]:
        assert review(turns("c1", user(said))).operations == [], said
    # A name right after "halfway through" is still what the fact is about.
    said = "Hazel is halfway through her fourth novel, The Salt Ledger."
    assert "The Salt Ledger" in index_after(review(turns("c1", user(said))))


@pytest.mark.parametrize(
    ("first", "then", "gone"),
    [
        (
            "Off-season I teach a Tuesday silks class at Circomedia in Bristol.",
            "I've stopped teaching at Circomedia.",
            "Circomedia in Bristol",
        ),
        (
            "Weekends I do a bit of private work for a stairlift firm in Redditch.",
            "Packed in the stairlift work.",
            "Redditch",
        ),
        (
            "I run the after-school gardening club on Wednesdays, 3:15 to 4:15.",
            "Gardening club has finished. The funding ran out.",
            "3:15",
        ),
        (
            "We have permission on Mr Garner's land at Mepal, October to March.",
            "Sad news. Mr Garner has sold up, and the new owners won't have detectorists.",
            "October to March",
        ),
    ],
)
def test_r6_a_retirement_said_in_other_words_removes_the_entry(
    first: str, then: str, gone: str
) -> None:
    index = index_after(review(turns("c1", user(first))))
    assert gone in index
    assert gone not in _later(index, user(then))


def test_r6_a_finished_piece_of_work_or_todays_meeting_retires_nothing() -> None:
    index = index_after(review(turns("c1", user("Our website runs on Shopify."))))
    assert "Shopify" in _later(index, user("The website is finished."))
    index = index_after(review(turns("c1", user("Staff meetings are on Mondays at 3:30."))))
    for said in ["The meeting is over.", "Monday is done."]:
        out = review(turns("c2", user(said)), index)
        assert not any("3:30" in op.get("old", "") for op in out.operations), said


def test_r6_from_the_first_of_the_month_is_an_update() -> None:
    said = "Gate hours are 6am to 10pm every day, office is 9 to 6 Monday to Saturday."
    index = index_after(review(turns("c1", user(said))))
    said = "Gate hours are 5am to 11pm from the first of the month, contractors kept asking."
    after = _later(index, user(said))
    assert "5am to 11pm" in after and "6am" not in after


def test_r6_a_rule_of_the_users_own_work_is_kept_and_an_order_to_the_agent_is_not() -> None:
    for said, held in [
        ("Always check the goal nets are pegged down before kick-off.", "goal nets"),
        ("Never spray Primo Maxx when it's going to be over 25 degrees.", "Primo Maxx"),
    ]:
        assert held in index_after(review(turns("c1", user(said)))), said
    for said in ["Never use exclamation marks.", "Always check with me before booking."]:
        assert review(turns("c1", user(said))).operations == [], said


@pytest.mark.parametrize(
    ("said", "held"),
    [
        (
            "Write this down, committee decision: novices do at least 3 trips first.",
            "at least 3 trips",
        ),
        ("The club van's a Transit minibus.", "Transit minibus"),
        (
            "BCA membership, which is our insurance, has to be renewed by 1 January or you "
            "can't come on club trips.",
            "renewed by 1 January",
        ),
    ],
)
def test_r6_a_fact_is_kept_after_a_lead_with_s_for_is_or_before_what_happens_otherwise(
    said: str, held: str
) -> None:
    index = index_after(review(turns("c1", user(said))))
    assert held in index
    assert "you can't" not in index


def test_r6_a_standing_practice_each_time_or_anyones_you_is_kept() -> None:
    for said, held in [
        ("Untick auto-archive in the position settings at the start of every shift.", "Untick"),
        (
            "In the Whole Game System you have to accept within 48 hours or they give the game "
            "away.",
            "48 hours",
        ),
    ]:
        assert held in index_after(review(turns("c1", user(said)))), said
    for said in ["Check my calendar.", "You have to reply in French."]:
        assert review(turns("c1", user(said))).operations == [], said


@pytest.mark.parametrize(
    ("said", "reply"),
    [
        (
            "Van's a Luton box van, only Deano and Col are ADR trained so only they drive it.",
            "Noted: only Deano and Col drive the ADR van.",
        ),
        (
            "The web chap is Ollie Brennan, he charges 40 an hour.",
            "Noted: Ollie Brennan does your website, 40 an hour.",
        ),
        (
            "Stock take is done once a year, end of March, shop shut for the day.",
            "Annual stock take at the end of March with the shop closed, noted.",
        ),
    ],
)
def test_r6_a_read_back_opening_with_a_capital_naming_the_user_or_ending_noted_adds_nothing(
    said: str, reply: str
) -> None:
    out = review(turns("c1", user(said), bot(reply)))
    assert [op["text"][-16:] for op in out.operations] == ["(source: c1#0-1)"]


def test_r6_a_plural_after_switched_retires_the_one_before_and_keeps_the_one_named_next() -> None:
    said = "My regular physio between tours is Kemi at Motion Physio in Bristol."
    index = index_after(review(turns("c1", user(said), author="jess")))
    after = _later(
        index, user("Moved physios. I'm seeing Tom at BodyWorks in Bath now."), author="jess"
    )
    assert "Motion Physio" not in after and "BodyWorks" in after


def test_r6_from_the_week_of_a_date_is_an_update() -> None:
    # The reviewer writes "from next week" as "from the week after <date>" ("from this week":
    # "from the week of <date>"): still an update.
    index = index_after(review(turns("c1", user("Thursday pub night's at the Marton Arms."))))
    said = "Pub night is at the Craven Heifer from next week, the Marton Arms has closed."
    after = _later(index, user(said))
    assert "Craven Heifer" in after and "night's at the Marton Arms" not in after


def test_r6_a_named_holder_said_with_s_or_from_the_week_takes_the_role() -> None:
    index = index_after(review(turns("c1", user("Seán Byrne is my deputy on the greens."))))
    after = _later(index, user("Seán's gone to Druids Glen. Aoife Doyle's my deputy now."))
    assert "Aoife Doyle's my deputy now" in after and "on the greens" not in after
    index = index_after(review(turns("c1", user("My supervisor is Mr Dlamini."))))
    after = _later(index, user("Sharon Price is my supervisor from this week."))
    assert "Sharon Price" in after and "Mr Dlamini" not in after


def test_r6_sold_one_and_bought_another_replaces_it_unless_something_else_ended() -> None:
    index = index_after(review(turns("c1", user("Firing system is FireOne."))))
    after = _later(index, user("Sold the FireOne kit and bought Cobra. Cheaper to expand."))
    assert "Cobra" in after and "Firing system is FireOne" not in after
    index = index_after(review(turns("c1", user("The oil change is due every 7,500 miles."))))
    said = "We sold the Civic and bought a Kia EV6, so no more oil changes."
    assert "7,500" not in _later(index, user(said))


def test_r6_a_name_with_an_appositive_before_its_verb_is_kept() -> None:
    said = "Josh, one of the regulars, is doing Saturdays from next week."
    assert "one of the regulars" in index_after(review(turns("c1", user(said))))


def test_r6_no_worries_after_a_reply_is_no_correction_and_keeps_no_question() -> None:
    # Issue 11 (no question in memory): the user's own question, the assistant's reply, and
    # "no worries" with small talk; the question must not be kept as answered.
    out = review(
        turns(
            "c1",
            user("remind me, how many rescues did we log last week?"),
            bot("I don't have last week's log. If you paste it in I can count them."),
            user("no worries. it's chucking it down here, proper miserable"),
        )
    )
    assert not any("rescues" in op.get("text", "") for op in out.operations)


def test_r6_a_message_said_again_does_not_outdate_another_of_its_clauses() -> None:
    # Issue 11 (idle re-run changes nothing).
    said = (
        "the daily beach report goes up on the Cornwall Beach Report site by 9am, Owen does "
        "weekdays and I do weekends"
    )
    given = turns(
        "c1", user(said), user("for the record the hut key is on the hook"), author="kerry"
    )
    index = index_after(review(given))
    assert "weekends" in index and "weekdays" in index
    assert review(given, index).operations == []


def test_r6_a_daydream_is_not_kept_but_a_conditional_rule_is() -> None:
    said = "If I ever win the lottery I'm buying a Bentley Blower replica"
    assert review(turns("c1", user(said))).operations == []
    said = "If I ever say 'ask Bisi', it's Bisi Adeyemi in the same team."
    assert "Bisi Adeyemi" in index_after(review(turns("c1", user(said))))


# --- seventeenth round (issue 11): change said as a pair, from a day, or as a schedule ---


@pytest.mark.parametrize(
    ("before", "after", "old", "new"),
    [
        (
            "gas for the forge is propane from Calor",
            "Calor's out, Flogas is in.",
            "Calor",
            "Flogas",
        ),
        (
            "We check haemoglobin with the copper sulphate drop test.",
            "Copper sulphate is out, HemoCue is in!",
            "copper sulphate drop test",
            "HemoCue",
        ),
    ],
)
def test_r6_one_thing_out_and_another_in_is_a_switch(
    before: str, after: str, old: str, new: str
) -> None:
    index = _after(before, after)
    assert old not in index.replace(f"{old} is out", "").replace(f"{old}'s out", "")
    assert new in index


def test_r6_out_without_a_thing_in_switches_nothing() -> None:
    # "the rhododendrons are out" (in flower) names nothing that replaced them.
    index = _after("Bookings come through Airbnb.", "The rhododendrons are out, it's lovely.")
    assert "Airbnb" in index


@pytest.mark.parametrize(
    ("before", "after", "old", "new"),
    [
        ("subs are £90 a term", "From the summer term subs are £95 a term.", "£90", "£95"),
        ("pitches are £10 a car", "From Easter it's £12 a car.", "£10", "£12"),
        (
            "Ashcombe goes out at £28 a kilo wholesale",
            "Ashcombe wholesale is £31/kg from 1 May",
            "£28",
            "£31",
        ),
    ],
)
def test_r6_a_value_from_a_day_or_a_season_on_replaces_the_old_one(
    before: str, after: str, old: str, new: str
) -> None:
    index = _after(before, after)
    assert old not in index and new in index


def test_r6_a_period_from_one_day_to_another_is_no_update() -> None:
    assert not frames.says_update("The offer runs from 1 May to 30 June.")
    assert frames.says_update("Table money goes up to £5 from 1 April.")


def test_r6_a_start_time_from_now_on_is_kept_and_replaces_the_old_one() -> None:
    index = _after(
        "rehearsals start at 9:30",
        "we're starting at 9 now, not 9:30. the juniors have the hall from 12",
    )
    assert "starting at 9 now" in index and "rehearsals start at 9:30" not in index
    # still a moment's progress: "we're starting the backup" is not kept
    assert review(turns("c1", user("we're starting the backup now"))).operations == []


def test_r6_a_unit_after_a_number_ends_a_sentence() -> None:
    said = sentences.sentences("sorry, I misread the logger. Strongroom A is 14°C. please fix that")
    assert [s for _, _, s in said][1] == "Strongroom A is 14°C."
    assert [s for _, _, s in sentences.sentences("Ask J. Smith about it.")] == [
        "Ask J. Smith about it."
    ]


def test_r6_a_subject_of_several_words_said_again_with_another_value_replaces_it() -> None:
    index = _after(
        "house dry food is Burns Original, owners can bring their own",
        "house dry food is Skinner's Field & Trial.",
    )
    assert "Burns" not in index and "Skinner's" in index
    # one word of subject in common is not enough: two price lines stay
    index = _after("pitches are £10 for a car", "pitches are £15 for a van")
    assert "£10" in index and "£15" in index


@pytest.mark.parametrize(
    "said",
    [
        "halfway through the Range Rover valet, it's filthy, dog hair everywhere",
        "I'm about a third of the way through labelling the Cascade bottles",
        "we're about two thirds of the way up the back slope at the Forge",
        "I'm about 30 boards into checking the hand records from Monday",
        "We're halfway through the Bute Street job",
    ],
)
def test_r6_how_far_through_a_task_is_progress_not_memory(said: str) -> None:
    # Issue 11 (no progress in memory): a name in the task says which one, not what it is.
    assert review(turns("c1", user(said))).operations == []


def test_r6_halfway_through_a_named_work_is_still_kept() -> None:
    said = "I'm halfway through my fourth novel, The Salt Ledger, set in 1890s Whitby."
    assert "The Salt Ledger" in index_after(review(turns("c1", user(said))))


def test_r6_the_weather_here_and_a_long_day_are_small_talk_beside_a_fact() -> None:
    # Issue 11 (no small talk in memory): said after a fact, in the same message.
    said = (
        "club night is Wednesdays, 7 till half 9, in the sports hall at St Aldhelm's School. "
        "lovely sunny evening here for once btw"
    )
    index = index_after(review(turns("c1", user(said))))
    assert "St Aldhelm's" in index and "sunny" not in index
    for said in ("we've had nothing but rain", "Darren's been up since four, bless him"):
        assert review(turns("c1", user(said))).operations == []


def test_r6_a_whole_name_and_one_role_is_an_introduction_but_a_sign_off_is_not() -> None:
    said = "Fergus Doyle, treasurer. I'm about 30 boards into checking the hand records."
    index = index_after(review(turns("c1", user(said), author="Fergus")))
    assert "treasurer" in index and "boards" not in index
    said = "Fergus Doyle, cheers mate"
    assert review(turns("c1", user(said), author="Fergus")).operations == []
    # an aside of affection does not drop the fact it follows
    said = "our treasurer is Margaret Ellis, she's been doing it for years, bless her"
    assert "Margaret Ellis" in index_after(review(turns("c1", user(said))))


@pytest.mark.parametrize(
    ("before", "after", "old", "new"),
    [
        (
            "card machine's a SumUp",
            "the new Dojo card machine has replaced the SumUp. SumUp's fees were killing us",
            "SumUp",
            "Dojo",
        ),
        (
            "the planetarium dome is maintained by Spitz",
            "Spitz has been replaced by Evans and Sutherland for the dome maintenance contract.",
            "Spitz",
            "Evans",
        ),
    ],
)
def test_r6_one_thing_that_replaced_another_is_a_switch(
    before: str, after: str, old: str, new: str
) -> None:
    index = _after(before, after)
    entries = [line for line in index.split("\n") if line.startswith("- ")]
    # the old name stays only in the entry of the switch, never in an entry of its own
    assert all(new in line for line in entries if old in line)
    assert any(new in line for line in entries)


def test_r6_a_reason_that_names_the_old_day_joins_the_update() -> None:
    # Issue 11 (superseded values removed): "Thursdays were dead" says why the day changed;
    # on its own it would keep the old day in memory.
    index = _after(
        "late night is Thursday, open till 8",
        "switching late night to Friday from next week. Thursdays were dead",
    )
    entries = [line for line in index.split("\n") if line.startswith("- ")]
    assert len([e for e in entries if "Friday" in e]) == 1
    assert all("Friday" in e for e in entries if "Thursday" in e)


def test_r6_someone_else_doing_the_same_task_takes_it_over() -> None:
    index = _after(
        "Darren takes the pitch money at the gate",
        "Kelly takes the pitch money at the gate. Darren's on parking now",
    )
    entries = [line for line in index.split("\n") if line.startswith("- ")]
    assert any("Kelly" in e for e in entries)
    assert not any("Darren takes" in e for e in entries)
    # another task is another fact
    index = _after("Darren takes the pitch money at the gate", "Kelly takes the bookings")
    assert "Darren takes" in index and "Kelly takes" in index


# --- eighteenth round (issue 11): output pasted into a message, read by its shape ---


@pytest.mark.parametrize(
    ("said", "leaked"),
    [
        (
            "here's the fridge log from this morning\nunit        temp   time\n"
            "walk-in     3.1C   07:02\nblast       -18.4C 07:03",
            "-18.4C",
        ),
        (
            "this is what Optix shows in the admin page\n[reminders] queue=41 sent=0\n"
            "SMS_CREDIT_BALANCE=0 provider=TextLocal\nlast_error: 402 Payment Required",
            "402 Payment Required",
        ),
        (
            "had a batch of crowns crack in the furnace, here's the log\n"
            "SINTER PROG P2  ramp 10C/min  hold 1450C 120min\n03:12 ALERT: chamber delta > 40C\n"
            "cycle complete 05:58",
            "chamber delta",
        ),
        (
            "stock export\nsku,item,qty\nLIN-18-BLK,waxed linen 18/3 black,0",
            "LIN-18-BLK",
        ),
        ("tram 214 threw this\nF-7781 PANTOGRAPH PRESSURE LOW\nTRACTION INHIBIT", "F-7781"),
    ],
)
def test_r5_output_pasted_into_a_users_message_is_never_kept(said: str, leaked: str) -> None:
    # Issue 11 (no tool output in memory), SPEC R5: a pasted log is tool output.
    out = review(turns("c1", user(said)))
    assert not out.operations or leaked not in index_after(out)


def test_r6_lists_typed_in_a_message_are_still_read() -> None:
    said = (
        "dates for the diary:\nseason starts 16 May\n"
        "- Owen's on leave until 20 June\nWe open at 9.  Closed Mondays.  Ring Sue for keys."
    )
    index = index_after(review(turns("c1", user(said))))
    assert "16 May" in index and "20 June" in index and "open at 9" in index
    # commas typed without spaces are not a row of output
    said = "ok,we moved the studio to Leeds,the new office is on Park Row"
    assert "Park Row" in index_after(review(turns("c1", user(said))))
    # one setting said in a sentence is a statement, not pasted output
    said = "fyi\nwe set max_connections=200 on the primary db after the outage"
    assert "max_connections=200" in index_after(review(turns("c1", user(said))))


@pytest.mark.parametrize(
    "said",
    [
        "btw new wifi for the unit is SfogliaGuest / rigatoni-4419",
        "The club laptop is admin / ParryRiposte77",
    ],
)
def test_h2_a_login_written_as_name_slash_secret_is_never_kept(said: str) -> None:
    # Issue 11 (no secret in memory): the pair names no password, its shape does.
    out = review(turns("c1", user(f"{said}. The drying room stays at 65%.")))
    index = index_after(out)
    assert "65%" in index and "4419" not in index and "ParryRiposte" not in index
    assert statements.skip_reason("we run CI / CD on GitHub", "user") is None


def test_r6_a_question_after_and_without_its_question_mark_is_not_kept() -> None:
    said = (
        "I'm left-handed if that matters? and do I need to be able to swim 50 metres before "
        "the first session"
    )
    out = review(turns("c1", user(said)))
    assert not out.operations or "swim 50 metres" not in index_after(out)


def test_r6_an_older_price_read_again_does_not_replace_a_newer_one_of_another_thing() -> None:
    # Issue 11 (idle re-run changes nothing): read again, "A full restoration starts at £220"
    # (the first session) took "The standard service is now £95" (the second) for its old value.
    first = turns(
        "c1",
        user(
            "People ask prices all day. A standard service, which is clean, oil, adjust and a "
            "new ribbon, is £85. A full restoration starts at £220."
        ),
        author="halina",
    )
    second = [
        Turn(
            "c2",
            0,
            "user",
            "halina",
            "The standard service is now £95. The ribbons went up.",
            T + 3600,
        )
    ]
    index = index_after(review(first))
    index = index_after(review(second, index), index)
    assert "£95" in index and "£220" in index and "£85" not in index
    assert review([*first, *second], index).operations == []


# --- eighteenth round: test16's shapes, each said here in other words ----------------------


def test_r6_a_person_who_left_a_place_and_went_on_is_still_named() -> None:
    index = _after(
        "Our accountant: we use Hartley & Co in Leeds, Priya Shah does our books.",
        "Priya left Hartley and set up on her own at Northgate Accounts. We've gone with her, "
        "our books are with Northgate Accounts now.",
        author="dev",
    )
    assert "artley and set up" not in index.replace("Hartley and set up", "")  # no cut word
    assert "Northgate Accounts does our books" not in index  # the person is not the firm
    assert any("Priya" in line and "Northgate" in line for line in index.splitlines())


def test_r6_a_failure_told_with_would_not_updates_nothing() -> None:
    index = _after(
        "Rosa Lind, caretaker at Elm Street Community Hall. I look after the boiler, the "
        "kitchen and the stage lights.",
        "Write this down. The boiler would not light on Monday, the hall was freezing. Cause "
        "was a blocked condensate pipe that had frozen overnight.",
        author="rosa",
    )
    assert "Rosa Lind, caretaker" in index and "stage lights" in index
    assert "condensate pipe" in index


def test_r6_a_retired_thing_takes_only_its_own_sentences_from_an_entry() -> None:
    index = _after(
        "Omar Haddad, I run the bike workshop Mondays and Thursdays. We've got about 40 "
        "riders on the monthly service plan, £12 a month.",
        "Decision from me and Lena: no more monthly service plan, the workshop can't keep up.",
        author="omar",
    )
    assert "Omar Haddad, I run the bike workshop" in index
    assert "40 riders" not in index


def test_r6_a_decision_taken_back_by_name_goes_and_what_replaces_it_stays() -> None:
    index = _after(
        "Decision from the board: we're building a climbing wall in the old gym this autumn.",
        "We're reversing the climbing wall decision. The floor can't take the load. We'll put "
        "the money into new changing rooms instead.",
        author="jo",
    )
    assert "climbing wall in the old gym" not in index
    assert "new changing rooms" in index


def test_r6_a_plan_given_up_after_all_is_retired() -> None:
    index = _after(
        "we're going to buy a second minibus. a used Ford from a dealer in Derby, £21k",
        "not buying the Ford after all. we'll hire from Peak Coaches when we need a second one",
        author="kim",
    )
    assert "used Ford" not in index
    assert "Peak Coaches" in index
    index = _after(
        "Big decision: we're moving the bookings off the wall planner and onto SlotPal.",
        "Well. We're not going ahead with SlotPal after all. The coaches hated it.",
        author="kim",
    )
    assert "onto SlotPal" not in index


def test_r6_one_named_value_of_a_list_changes_and_the_rest_stays() -> None:
    index = _after(
        "Suppliers: coffee from Bean Brothers, milk from the Hill farm in Dore, bread is "
        "Crust & Co every morning.",
        "we've switched coffee to Roast Republic, better beans for the price. milk and bread "
        "the same",
        author="ana",
    )
    assert "coffee from Roast Republic" in index
    assert "Bean Brothers" not in index and "Crust & Co" in index and "Hill farm" in index


def test_r6_an_introduction_is_not_joined_to_what_it_cannot_keep() -> None:
    index = _after(
        "Good morning. I'm Ruth Okoye, practice manager at Brook Lane Surgery. I'll be using "
        "you to help with the rota and the letters.",
        author="ruth",
    )
    assert "Ruth Okoye" in index and "practice manager" in index
    index = _after(
        "ciao, I'm Marco Bruni, Elena's apprentice, first year. she said I can ask you things",
        author="marco",
    )
    assert "Marco Bruni" in index and "apprentice" in index


def test_r6_a_greeting_in_another_language_opens_an_introduction() -> None:
    for greeting in ("Hola", "Bonjour", "Hei", "Now then"):
        found = statements.read(
            sentences.clean(f"{greeting}, Ines Duarte. I book our gigs now."),
            role="user",
            speaker="ines",
        )
        assert isinstance(found, statements.Statement), greeting


def test_r6_a_fixed_booking_is_not_a_change_of_what_came_before() -> None:
    index = _after(
        "Ines Duarte. I book our gigs now, Tom handed that over to me.",
        "We have a fixed booking: the Riverside care home, first Monday of every month at 3pm.",
        author="ines",
    )
    assert "I book our gigs now" in index and "Riverside care home" in index


def test_r6_a_person_named_in_lower_case_who_handed_in_notice_leaves_memory() -> None:
    index = _after(
        "Corporate bookings: Callum handles corporate enquiries, he's got the patter.",
        "callum's handed his notice in, he's off to college. nina is taking over corporate "
        "from next week",
        author="marcus",
    )
    assert "Callum handles corporate" not in index
    assert "nina" in index.lower()


def test_r6_weather_of_the_moment_and_waiting_are_not_kept() -> None:
    for said, reason in (
        ("it's gorgeous out today by the way, first proper sun of the year", "small talk"),
        ("lovely day here in Hebden btw, first sun in weeks", "small talk"),
        ("anyway it's chucking it down here, the beck's nearly over the path", "small talk"),
        ("collection's friday, just waiting on the varnish to dry", "transient"),
    ):
        assert statements.read(sentences.clean(said), role="user", speaker="x") == reason, said
    # the weather a rule depends on is kept
    found = statements.read(
        "We don't open the pool if there's frost on the deck.", role="user", speaker="x"
    )
    assert isinstance(found, statements.Statement)


def test_r6_more_ways_of_saying_a_thing_ended_retire_it() -> None:
    cases = [
        (
            "In winter we also run a Tuesday evening craft market, 6 till 9.",
            "We've pulled the plug on the Tuesday craft market. Nobody came after October.",
            "craft market",
        ),
        (
            "Yes, from June we're opening Sunday mornings, 10 to 1, as a trial.",
            "Sorry all, we've had to cancel the Sunday trial before it started. We can't staff it.",
            "Sunday",
        ),
        (
            "every other Monday we clear the grease traps at Oakfield Care Home, steady money",
            "Oakfield's cancelled on us. They've gone with a bigger firm, so that's that",
            "Oakfield",
        ),
        (
            "on Wednesdays the minibus does a library run, Hillside school to the town library",
            "council's cut the library visits. so that's the Wednesday library run finished",
            "library run",
        ),
        (
            "We've decided the apples go through Dunmore Fruit this year instead of selling "
            "direct.",
            "Scrap what I said about Dunmore. They wanted all our pears too. Apples go direct "
            "again.",
            "Dunmore",
        ),
    ]
    for first, second, gone in cases:
        index = _after(first, second, author="kit")
        lines = [line for line in index.splitlines() if line.startswith("- ")]
        assert not [line for line in lines if gone.lower() in line.lower()], (second, lines)


def test_r6_who_took_over_from_someone_who_retired_takes_their_place() -> None:
    index = _after(
        "boiler man is Len from Calder Heating Services, he's done our boilers for years",
        "Len's retired bless him, his son Josh took over the business, same number",
        author="pat",
    )
    assert "Josh from Calder Heating Services" in index
    assert "Len" not in index


def test_r6_one_role_of_a_person_ended_keeps_the_rest_of_them() -> None:
    index = _after(
        "My wife Carol sings alto and is also treasurer of the choir.",
        "Carol has retired as treasurer after six years. Imran Shah takes over at the AGM.",
        author="bob",
    )
    assert "Carol sings alto" in index


def test_r6_where_a_thing_comes_from_now_replaces_its_old_source_in_the_entry() -> None:
    index = _after(
        "parts from Motor Factors Direct, they deliver twice a day",
        "fell out with MFD over a refund. parts all come from Autoparts Hub now",
        author="lee",
    )
    assert "parts from Autoparts Hub" in index and "Motor Factors Direct" not in index


def test_r6_a_name_typed_in_lower_case_by_its_first_word_still_names_it() -> None:
    index = (
        "# Memory\n\n## People & preferences\n\n## Decisions\n"
        "- Jade: We colour with Schwarzkopf Igora. (source: c0#0-1)\n"
        "- Rosa is caretaker at Elm Street Community Hall. (source: c0#0-1)\n\n"
        "## Environment & gotchas\n\n## Project state\n"
    )
    memory = offline._Memory.parse(index, {})
    memory.begin_message("switched all our colour to Davines, schwarzkopf's gone")
    assert "schwarzkopf igora" in memory.context
    # a later word of a longer name, said as a common word, does not name it
    memory.begin_message("The boiler would not light on Monday, the hall was freezing.")
    assert not memory.context
    memory.begin_message("The boiler at Community Hall would not light.")
    assert "elm street community hall" in memory.context


def test_r6_a_session_given_again_after_a_departure_changes_nothing() -> None:
    # "Ellis Ward. Same deadlines" reads as one name: given again, the entry the assistant's
    # read-back left still gives it, by its first word.
    index = _after(
        "Our bookkeeper is Priya Nair at Fenwick Accounts, year end is 30 June. She wants "
        "receipts by the 10th of each month.",
        author="morag",
    )
    second = turns(
        "c1",
        user("Priya's retired, the firm passed us to her colleague Ellis Ward. Same deadlines."),
        bot("Updated: Ellis Ward at Fenwick Accounts handles your books now."),
        author="morag",
    )
    index = index_after(review(second, index), index)
    assert "Ellis Ward" in index and "Priya" not in index
    assert not review(second, index).operations


def test_r6_a_question_without_its_mark_that_asks_of_others_or_of_a_value_is_not_kept() -> None:
    for said in (
        "do other hire firms round here charge extra for sundays",
        "is 60% decent for a wednesday matinee or should i panic",
        "was £40 too much for the big one",
        "are most venues doing card only now",
    ):
        assert statements.read(said, role="user", speaker="x") == "question", said
    # a statement that opens the same way is kept
    found = statements.read(
        "Other hire firms charge £10 extra on Sundays.", role="user", speaker="x"
    )
    assert isinstance(found, statements.Statement)


# --- nineteenth round: test17's retractions, said here in other words ----------------------


@pytest.mark.parametrize(
    ("first", "second", "gone"),
    [
        (
            "we do pottery parties too, £20 a head",
            "pottery parties are a thing of the past for us, too much mess in the shop",
            "pottery parties",
        ),
        (
            "we run a junior chess club tuesday evenings at 6",
            "we've knocked the tuesday junior club on the head, only 3 kids came",
            "junior chess club",
        ),
        (
            "we offer gift wrapping as an extra, £3, tom does it",
            "no gift wrapping any more, tom's gone to uni",
            "gift wrapping",
        ),
        (
            "the veterans XI plays most saturdays, friendly lot",
            "we've folded the veterans XI, couldn't get eleven out most weeks",
            "veterans",
        ),
        (
            "we do boat trips sundays in summer, £12 a head",
            "we've binned the boat trips, the harbour fees went up to £2k",
            "boat trips",
        ),
        (
            "the quiz league runs monday nights, 8 teams",
            "quiz league folded. only 4 teams left by christmas",
            "quiz league",
        ),
        (
            "the cafe's run by maggie, open on match days",
            "the cafe's finished i'm afraid. maggie moved away",
            "maggie",
        ),
    ],
)
def test_r6_more_endings_retire_and_why_they_ended_is_not_kept(
    first: str, second: str, gone: str
) -> None:
    index = _after(first, second, author="kit")
    lines = [line for line in index.splitlines() if line.startswith("- ")]
    assert not [line for line in lines if gone in line.lower()], lines
    # the reason it ended, in the past, is no fact of its own
    assert not [line for line in lines if "couldn't" in line or "fees went up" in line], lines


def test_r6_a_clause_of_an_entry_that_does_not_name_the_ended_thing_stays() -> None:
    index = _after(
        "we run a beginners class sunday mornings at 11, and kids can borrow a racket free "
        "for their first term",
        "we've knocked the sunday beginners class on the head, only 3 kids were coming",
        author="gareth",
    )
    assert "beginners class" not in index
    assert "Kids can borrow a racket free for their first term" in index


def test_r6_an_ended_state_said_short_ends_the_clause() -> None:
    from reverie.review import changes as ch

    assert ch._retire("the summer fete's off for good, the field flooded", "thing")
    # "gone" that goes on is no ending: where someone went, or how a price went
    assert (
        ch._retire("Josh's gone to college so it's his cousin Amir on Saturdays now", "name")
        is None
    )
    assert ch._retire("petrol's gone through the roof, delivery is £5 now", "thing") is None
    index = _after(
        "Lease renewal meeting on 4 May with Ruth Obi, she's their estates manager.",
        "Ruth Obi's gone, the new estates manager at Kingsway is Tom Hale. Same date.",
        author="dev",
    )
    assert "Tom Hale" in index and "Ruth" not in index


def test_r6_an_ending_matched_by_likeness_keeps_the_parts_it_does_not_share() -> None:
    index = _after(
        "Remind me what extras we offer? Off the top of my head: prosecco at 15 extra, and the "
        "printed photo at 20.",
        "We've binned the prosecco extra. The licence wasn't worth it. Photo stays.",
        author="maggie",
    )
    assert "prosecco" not in index.lower()
    assert "printed photo at 20" in index


def test_r6_a_person_off_to_uni_or_who_left_us_departs_in_lower_case_too() -> None:
    index = _after(
        "Megan helps with the pony rides on saturdays, she's 17, we pay her £9 an hour",
        "megan's off to uni in leeds. Owen Price from the farm is doing the pony rides",
        author="bethan",
    )
    assert "Megan helps" not in index and "Owen Price" in index
    index = _after(
        "our saturday helper is Kyle Dunn, does the deliveries with gaz",
        "kyle's away at college so Sam Ortiz helps gaz on saturdays",
        author="kelly",
    )
    assert "Kyle" not in index and "Sam Ortiz" in index


# --- nineteenth round: test17's updates, said here in other words ---------------------------


@pytest.mark.parametrize(
    ("first", "second", "old", "new"),
    [
        (
            "gravel comes from Hollins pit, £30 a tonne",
            "our gravel supplier is Redbrook pit, £28 a tonne",
            "Hollins",
            "Redbrook",
        ),
        ("entry fee is £10, juniors £5", "entry fees £12, juniors still a fiver", "£10", "£12"),
        (
            "our minibus hire is with Avis, £80 a day",
            "minibus hire is with Kestrel Hire, £70 a day, so that's sorted",
            "Avis",
            "Kestrel",
        ),
    ],
)
def test_r6_a_slot_said_again_another_day_with_another_value_is_an_update(
    first: str, second: str, old: str, new: str
) -> None:
    # No word of change ("now", "instead"): said in a later conversation, the same slot with
    # another value replaces the old one.
    index = _after(first, second, author="wyn")
    assert old not in index and new in index, index


def test_r6_another_day_a_persons_other_fact_is_not_their_old_one() -> None:
    # Said another day with no word of change, the word in common must be of the slot, not
    # the name of the person both are said of; and an entry that says more than the new
    # value (the days beside the number) stays.
    from reverie.review.slots import refills

    old, new = "Kez is a Level 2 coach, got it in 2024", "Kez shoots recurve, 30lb, Samick riser"
    assert refills(new, old) and not refills(new, old, later=True)
    assert refills("entry fees £12, juniors still a fiver", "entry fee is £10", later=True)
    # a doing or a story is no slot said again, nor is the person all their news is about
    for new, old in [
        ("Kestrel Hire do the minibus for £70 a day", "We hire the minibus from Avis at £80"),
        ("Tim recently read a book by Le Guin", "John has been reading a book by Pratchett"),
        ("Jolene got a lot of finals in September", "Jolene adopted her two years ago"),
    ]:
        assert not refills(new, old, later=True), new
    # another relation, another thing it is for, another subject: read as before
    for new, old in [
        ("Our feed is collected by Harlow Haulage.", "Our feed comes from Marsh Mill."),
        ("stalls are £20 for a charity", "stalls are £30 for a trader"),
        ("We decided to pin Node at 20 for all the apps.", "The billing app requires Ruby 3."),
    ]:
        assert refills(new, old) and not refills(new, old, later=True), new
    index = _after(
        "school visits are tuesdays and wednesdays, 30 children at most",
        "school groups are 25 children at most",
    )
    assert "tuesdays" in index, index


def test_r6_why_a_change_was_made_stays_with_the_change() -> None:
    # "wednesdays clashed ..." alone would keep the old day as if it still held.
    index = _after(
        "quiz night is wednesdays at 8pm",
        "quiz night's moved to thursdays, 8pm as before. wednesdays clashed with the darts league",
        author="mo",
    )
    lines = [line for line in index.splitlines() if line.startswith("- ")]
    assert [line for line in lines if "thursdays" in line.lower()], lines
    stale = [
        line for line in lines if "wednesday" in line.lower() and "thursday" not in line.lower()
    ]
    assert not stale, lines


def test_r6_how_someone_is_at_the_moment_is_not_kept_with_the_question() -> None:
    # "Is she feeling better?" "she's ok now": the answer is of the moment, and keeping it
    # would keep the question with it.
    out = review(
        turns(
            "c1",
            user("Pepper was off her food all week, the vet thinks it was the new litter"),
            bot("Poor Pepper. Is she feeling better?"),
            user("she's ok now. we've gone back to the old wood pellet litter for good"),
        )
    )
    index = index_after(out)
    assert "feeling better" not in index, index
    assert "wood pellet litter" in index, index


def test_r5_a_timetable_pasted_line_by_line_is_output() -> None:
    # "DEP 07:40 Platform 2": a code, then a time, and no word in lower case.
    said = "the ferry times for Saturday, copied off the website:\nDEP 07:40 Ardrossan\nARR 08:35"
    kept = " ".join(op.get("text", "") for op in review(turns("c1", user(said))).operations)
    assert "07:40" not in kept and "08:35" not in kept, kept


# --- twentieth round: test18's lists, read-backs and lessons, said here in other words -------


def test_r6_an_item_that_ended_leaves_the_rest_of_its_list() -> None:
    # "we're not X any more" of one item of a list: the other items stay, the list reads on.
    index = _after(
        "what we stock: oak, sweet chestnut, larch, and reclaimed pine if it's kiln dried",
        "we're not selling reclaimed pine any more, too many nails in it",
    )
    assert "reclaimed pine" not in index.replace("No longer reclaimed pine", ""), index
    assert "oak, sweet chestnut, and larch" in index, index
    # after a heading, the first item may go too
    index = _after(
        "classes we teach: pottery on Mondays, life drawing on Wednesdays, and printmaking",
        "pottery's not running any more, the kiln cracked",
    )
    assert "pottery" not in index.lower().replace("no longer pottery", ""), index
    assert "life drawing on Wednesdays and printmaking" in index, index


def test_r6_a_firm_gone_into_administration_is_retired_and_the_rest_stays() -> None:
    index = _after(
        "glaze is always 60 silica 25 flux 15 clay. clay comes from Ashworth Minerals in Stoke",
        "Ashworth Minerals have gone into administration. Ordering from Potclays now.",
    )
    assert "Stoke" not in index and "Potclays" in index, index
    assert "60 silica 25 flux 15 clay" in index, index


def test_r6_a_count_of_something_is_not_a_new_price() -> None:
    # "31 degrees", said by the same speaker right after an ending, is no new value of "£9 a
    # head": a number followed by what it counts is not a bare price. (A guard of the two
    # rules together: before this round the ending was not read, so this passed then too; with
    # the ending read and without the count rule it fails.)
    index = _after("we also do toddler tea parties, £9 a head, Bea does those")
    out = review(
        turns(
            "c1",
            user("not doing the toddler tea parties any more, the spills aren't worth £9 a head"),
            user("absolute scorcher today btw, 31 degrees in the shed"),
        ),
        index,
    )
    index = index_after(out, index)
    assert "£31" not in index and "Bea does those" not in index, index


def test_r6_what_a_recipe_uses_instead_of_something_replaces_no_entry() -> None:
    # "instead of gin" names what was replaced: an entry that never said gin is not it.
    out = review(
        turns(
            "c1",
            user(
                "Oi pessoal! I am Ines, from Porto, I make the cocktails in the weekends with Ade"
            ),
            bot("Oi Ines! Weekend bartender, from Porto. Welcome."),
            user(
                "I create a new one for the menu, Porto Tonic, with white port from Gaia instead "
                "of gin. Ade says yes it goes on the Classics menu"
            ),
            author="ines",
        )
    )
    index = index_after(out)
    assert "weekends" in index and "Porto Tonic" in index, index


def test_r6_same_terms_writes_the_new_value_into_the_entry() -> None:
    # "same mileage deal": the rest of the entry stands; only the rate changes.
    index = _after(
        "my hourly rate with Brightwell is £45, mileage paid over 30 miles",
        "got Brightwell up to £52 an hour from May. same mileage deal",
    )
    assert "hourly rate with Brightwell is £52" in index, index
    assert "£45" not in index, index


def test_r6_the_assistants_read_back_does_not_rewrite_the_users_update() -> None:
    # "Updated: ..." in fewer words, with no name or value of its own: the user's update,
    # with its reason, stays as they said it.
    index = _after("adult swim is Fridays till 10, over 18s only")
    out = review(
        turns(
            "c2",
            user(
                "we've moved adult swim to Thursdays, Fridays were empty because of the "
                "football. same deal, over 18s only till 10"
            ),
            bot("Updated: adult swim is now Thursday until 10pm, over 18s only."),
        ),
        index,
    )
    index = index_after(out, index)
    assert "Fridays were empty" in index and "now Thursday until 10pm" not in index, index


def test_r6_a_read_back_that_names_someone_opening_a_sentence_is_a_read_back() -> None:
    # "Nell's gone ..." opens its sentence with Nell: the reply that names her reads it back.
    out = review(
        turns(
            "c1",
            user(
                "Nell's gone on maternity leave! our rota lead for now is Omar Haddad, he does "
                "the Monday calls because it's busy"
            ),
            bot(
                "Noted: Omar Haddad is covering as rota lead while Nell's on maternity leave, "
                "doing the Monday calls."
            ),
        )
    )
    texts = [op["text"] for op in out.operations if op.get("action") == "add"]
    assert len([t for t in texts if "Omar Haddad" in t]) == 1, texts


def test_r6_a_name_alone_then_who_they_are_is_one_introduction() -> None:
    out = review(
        turns(
            "c1",
            user(
                "Priya Nair. Self employed tree surgeon, trading as Nair Arborists, based in Frome."
            ),
            author="priya",
        )
    )
    index = index_after(out)
    assert "Priya Nair" in index and "Nair Arborists" in index, index
    assert [line for line in index.splitlines() if "Priya Nair" in line and "tree surgeon" in line]


def test_r6_where_things_are_sent_is_no_update() -> None:
    # "goes to him" says where something is sent; the introduction before it stays.
    out = review(
        turns(
            "c1",
            user("so I'm Ruth, me and my brother Ed run The Rolling Scone, a vintage tea bus"),
            bot("Hi Ruth!"),
            user("Ed does the books and the permits so anything with the council goes to him"),
            author="ruth",
        )
    )
    index = index_after(out)
    assert "Ruth and their brother Ed run The Rolling Scone" in index, index
    assert "goes to him" in index, index


def test_r6_what_stays_beside_what_ended_is_kept() -> None:
    index = _after(
        "paddling pool is open weekends, £2 a go",
        "we've closed the paddling pool for good, the council wanted new fencing. "
        "splash pad stays open",
    )
    assert "splash pad stays open" in index, index
    assert "paddling pool is open" not in index, index


def test_r6_a_plan_for_a_month_is_not_progress() -> None:
    index = _after(
        "Tom Reyes here, I'm the trainee at Harbour Forge. doing my welding ticket in November"
    )
    assert "welding ticket in November" in index, index


def test_r6_how_it_has_gone_since_the_fix_stays_with_the_lesson() -> None:
    # one message each: the cause on one line with no full stop, the fix on the next
    out = review(
        turns(
            "c1",
            user(
                "worth remembering. three loaves collapsed in the oven last week. I'd cut the "
                "proof short because of the rush"
            ),
            user(
                "fix: a full 90 minute proof every batch, and the oven at 230 before loading. "
                "not had one collapse since"
            ),
        )
    )
    index = index_after(out)
    lines = [line for line in index.splitlines() if "collapse" in line]
    assert len(lines) == 1 and "rush. fix:" in lines[0] and "since" in lines[0], index


def test_r6_a_story_then_so_now_is_one_lesson() -> None:
    # "dropped" reads as a word of change; after it, "so now ..." is still the fix.
    out = review(
        turns(
            "c1",
            user(
                "note this. last spring we cut 300 tulips a week early to get ahead and half of "
                "them dropped their petals before the wedding, had to give a refund"
            ),
            user("so now tulips are never cut more than two days before an event"),
        )
    )
    index = index_after(out)
    lines = [line for line in index.splitlines() if "tulips" in line.lower()]
    assert len(lines) == 1 and "petals" in lines[0] and "two days" in lines[0], index


def test_r6_a_funny_aside_about_the_old_supplier_is_not_kept() -> None:
    index = _after(
        "repairs go to Fixwell in Derby, about 2 weeks",
        "we've moved repairs to Mendit in Leicester. Fixwell kept losing parts. "
        "funny thing is the Fixwell owner still sends us a calendar every year",
    )
    assert "calendar" not in index, index
    assert "Mendit" in index, index


def test_r6_a_comment_after_what_is_done_does_not_undo_it() -> None:
    # ", regulars love it" comments on the clause before it, which still says something.
    index = _after("we take payment by phone with SumUp now, regulars love it, no more cash tins")
    assert "SumUp" in index, index


def test_r6_what_alone_is_done_from_now_on_is_kept() -> None:
    index = _after(
        "we do soup in winter too, Gwen's got a soup kettle in the kitchen",
        "no more soup, the kettle kept tripping the power and the landlord said no hot food. "
        "sandwiches only from now on",
    )
    assert "sandwiches only from now on" in index, index
    assert "soup kettle" not in index, index


def test_r6_days_it_is_shut_are_hours_not_an_ending() -> None:
    # "shut Tuesdays" gives the days it is closed; nothing named "Tuesdays" ended.
    index = _after(
        "decision made: we're opening Tuesdays this spring, Ffion covers them",
        "scrap that. we'll be shut Tuesdays again from next week, hardly anyone came",
    )
    assert "shut Tuesdays again" in index, index


def test_r8_a_question_word_with_is_and_no_mark_is_a_question() -> None:
    for said in ("when's my next MOT again", "where's the spare key for the boathouse"):
        out = review(turns("c1", user(said), bot("Let me check.")))
        kept = " ".join(op.get("text", "") for op in out.operations)
        assert said.split(" ")[2] not in kept, kept


def test_r8_a_corrected_answer_to_the_users_own_question_keeps_no_question() -> None:
    # The user asks, the assistant answers wrongly, the user puts it right: the answer is
    # kept, the user's question is not (R8: memory holds no question the user asked).
    out = review(
        turns(
            "c1",
            user("How many portions do my lasagne trays give?"),
            bot("Your 1kg foil trays give about 4 portions."),
            user("They're 2kg, the ceramic ones with lids. 8 portions a tray. I've got three."),
        )
    )
    kept = " ".join(op.get("text", "") for op in out.operations)
    assert "8 portions" in kept and "How many" not in kept, kept


def test_r8_an_order_addressed_with_an_at_mention_is_a_rule_for_the_agent() -> None:
    said = "@assistant don't message me after 6 this week, I'm on earlies"
    index = index_after(review(turns("c1", user(said), bot("Noted."))))
    assert "don't message me" not in index, index


def test_r8_an_order_after_what_it_is_about_and_a_comma_is_a_rule_for_the_agent() -> None:
    said = 'for supplier emails, always sign off with "Cheers, Dev"'
    out = review(turns("c1", user(said), bot("Will do.")))
    assert not [op for op in out.operations if "Cheers" in op.get("text", "")], out.operations


def test_r6_why_a_value_changed_survives_the_assistants_fuller_read_back() -> None:
    # The reason joins the user's update; the assistant's read-back, which names more (Dan),
    # takes the update's place and keeps the reason, so that reading the batch again finds
    # the reason held and changes nothing.
    index = _after("our flour comes from Hartley Mills in Chelmsford")
    second = turns(
        "c1",
        user(
            "Heads up, we're getting our flour from Shipton Mill now. Hartley Mills put "
            "their prices up 30%. Ask for Dan on the trade line."
        ),
        bot("Updated: flour now comes from Shipton Mill; ask for Dan on the trade line."),
    )
    index = index_after(review(second, index), index)
    assert "Chelmsford" not in index and "Shipton Mill" in index, index
    assert index.count("prices up 30%") == 1, index
    again = review(second, index)
    assert not again.operations or index_after(again, index) == index, again.operations


# --- twenty-first round: test19's misses, said here in other words ---------------------------


def test_r6_a_wrong_read_back_put_right_keeps_the_users_date() -> None:
    # "the 16th, not the 6th": the denied value is the one standing on its own, not the "6th"
    # inside "16th"; the entry keeps the user's date and never takes the assistant's slip.
    for fix in ("no, the 16th, not the 6th", "16th not 6th!"):
        out = review(
            turns(
                "c1",
                user("The boiler service is booked for the 16th of March at 9am, Corgi engineer."),
                bot("Noted: boiler service on 6 March at 9am."),
                user(fix),
                bot("Sorry: 16 March at 9am."),
            )
        )
        index = index_after(out)
        assert "16th of March" in index and "the 6th" not in index, index


def test_r6_asked_to_note_something_keeps_what_follows() -> None:
    # "could you note ...:", "can you remember that ...?", "could you put in my diary: ...":
    # a request whose only task is keeping; what follows is the statement, mark or not.
    for said, kept in (
        ("Could you note the rota: Aled does Mondays, Bethan does the late feeds", "Aled does"),
        ("can you remember that Rhodri's the one who orders the hay?", "orders the hay."),
        ("Would you put in my calendar: the choir concert is on 4 March at the abbey", "4 March"),
    ):
        index = index_after(review(turns("c1", user(said), bot("Noted."))))
        assert kept in index and "?" not in index, index
    # a request to do something else is not one to keep
    said = "could you put the heating on: I'm freezing"
    assert review(turns("c1", user(said), bot("Done."))).operations == []


def test_r6_a_list_under_a_heading_is_kept_whole() -> None:
    said = "Uniform for the new volunteers: navy polo, black trousers, steel toe boots, hi-vis"
    index = index_after(review(turns("c1", user(said), bot("Got it."))))
    assert "Uniform for the new volunteers: navy polo" in index, index
    # a list of the day is not
    said = "today's jobs: clean the pens, feed the goats, ring the vet"
    assert review(turns("c1", user(said), bot("Good luck."))).operations == []


def test_r6_a_new_price_replaces_the_price_said_after_the_same_words() -> None:
    # "Mugs are £14 now" of "mugs £12, travel mugs £18, plates £9": the mugs' price, not the
    # one nearest to the most shared words (plates' and travel mugs' are said "unchanged").
    index = _after(
        "Price list: mugs £12, plates £9, travel mugs £18.",
        "Mugs are £14 now, plates and travel mugs unchanged.",
    )
    assert "mugs £14, plates £9, travel mugs £18" in index, index


def test_r6_a_dollar_price_that_changed_is_not_the_same_value() -> None:
    # "$14" and "$15" are two prices (they were both read as "$1", so the new one looked
    # like the old said again and was dropped).
    index = _after("A full tank is $14, half tank $9.", "Full tank's $17, half tank $10.")
    assert "$17" in index and "$14" not in index, index


def test_r6_a_moved_date_replaces_the_date_said_after_the_same_words() -> None:
    # Of two dates in one entry, the one said after the words the new one is said after.
    index = _after(
        "I've got a stall at the Hexham Makers Market on 12 October, pitch fee's due 1 September",
        "makers market moved to 19 October, the hall flooded. fee date's the same",
    )
    assert "on 19 October" in index and "due 1 September" in index, index


def test_r6_taken_off_the_menu_ends_the_item() -> None:
    index = _after(
        "what we serve for lunch: soup, toasties, jacket potatoes, and a veggie lasagne",
        "take the jacket potatoes off the menu, the oven's too small. not bringing them back",
    )
    assert "soup, toasties, and a veggie lasagne" in index, index
    assert "jacket potatoes" not in index.replace("No longer jacket potatoes", ""), index


def test_r6_a_read_back_with_the_users_date_keeps_the_rest_of_the_list() -> None:
    # The user's new turnaround is written into the list; the assistant's read-back names one
    # item and the date the user gave: nothing of its own, so the list stays whole.
    index = _after(
        "Standard turnaround: veneers 7 working days, bridges 10 working days, splints 15."
    )
    batch = turns(
        "c1",
        user(
            "With the new scanner running we're cutting veneer turnaround to 5 working days "
            "from 1 May. Bridges and splints unchanged."
        ),
        bot("Updated: veneers 5 working days from 1 May; bridges 10, splints 15."),
    )
    index = index_after(review(batch, index), index)
    assert "veneers 5 working days, bridges 10 working days, splints 15" in index, index
    again = review(batch, index)
    assert not again.operations or index_after(again, index) == index, again.operations


def test_r6_an_introduction_is_kept_without_what_the_speaker_hopes_for() -> None:
    # What the speaker hopes the agent will do is not joined to who they are: joined, it
    # made the whole introduction unkeepable.
    said = (
        "Morning. Ruth Okafor, I'm the head gardener at Brantwood Hall near Keswick. I report "
        "to Simon Hale, he owns the estate. I'm hoping you can keep my planting notes straight."
    )
    index = index_after(review(turns("c1", user(said), author="ruth okafor")))
    assert "head gardener at Brantwood Hall" in index, index
    assert "They report to Simon Hale" in index and "hoping" not in index, index


def test_r6_a_named_owner_of_it_goes_with_the_sentence_naming_it() -> None:
    said = "Hiya, Jas here. I run Tidewater Kayaks in Padstow. Mark Penrose owns it."
    index = index_after(review(turns("c1", user(said), author="jas")))
    assert "Tidewater Kayaks in Padstow. Mark Penrose owns it." in index, index


def test_r6_the_speakers_name_before_what_they_do_is_its_subject() -> None:
    for said, written in (
        ("I'm Wren, I throw porcelain at a studio in Frome.", "Wren throws porcelain"),
        ("I'm Ade, me and my partner Lou run the Swan in Ludlow.", "Ade and their partner Lou"),
    ):
        author = said.split(",")[0].removeprefix("I'm ").lower()
        index = index_after(review(turns("c1", user(said), author=author)))
        assert f"- {written}" in index, index


def test_r6_rip_ends_a_thing_and_its_successor_is_kept_once() -> None:
    index = _after(
        "The Traeger runs hotter at the back.",
        "RIP the Traeger. The new pit is a Weber Smokey Mountain and it holds heat evenly, so "
        "you can stop rotating the racks.",
    )
    assert "Traeger runs" not in index, index
    assert index.count("Weber Smokey Mountain") == 1, index


def test_r6_how_work_is_routed_is_kept_without_capitals() -> None:
    # "bookings go through checkfront", "the timing software is alpha timing": typed all in
    # lower case, the tool is named all the same.
    for said, tool in (
        ("ok cool. enquiries go through bookwhen btw", "bookwhen"),
        ("the till software is square for retail", "square for retail"),
    ):
        index = index_after(review(turns("c1", user(said), bot("Noted."))))
        assert tool in index, index


def test_r8_what_was_just_done_or_is_half_done_is_progress() -> None:
    for said in (
        "Just glazed six mugs from the speckled batch, lovely.",
        "I've weighed eleven of the fourteen lambs, doing the rest after lunch.",
        "I'm halfway down the returns pile from the bank holiday.",
        "If the kiln ever dies I'd love a bigger one.",
    ):
        assert review(turns("c1", user(said), bot("Nice."))).operations == [], said


# --- twenty-second round: test20's hard-rule breaks and misses, said here in other words -----


def test_r8_an_order_for_when_the_agent_writes_or_quotes_is_a_rule_for_the_agent() -> None:
    for said in (
        "When I ask for a price always round up to the nearest 10 pounds, no pence please.",
        'When emailing the parents always start with "Hi all" and keep it to one paragraph.',
    ):
        out = review(turns("c1", user(said), bot("Will do.")))
        assert out.operations == [], out.operations


def test_r8_work_going_on_as_we_speak_is_progress() -> None:
    for said in (
        "Re-glazing the north window at Hartwell as we speak.",
        "Rechecking 0215 with the new probe now.",
    ):
        assert review(turns("c1", user(said), bot("Good luck."))).operations == [], said


def test_r6_several_prices_changed_at_once_are_each_written_in() -> None:
    # Each new price takes the place of the old one said with the same words and numbers.
    index = _after(
        "tray bake prices: 6 squares £9, 12 squares £16",
        "new prices from today, 6 squares £10, 12 squares £18",
    )
    assert "6 squares £10, 12 squares £18" in index and "£16" not in index, index


def test_r6_just_one_thing_from_now_is_kept() -> None:
    said = "We've stopped doing the evening classes, nobody came. Just mornings from now."
    index = index_after(review(turns("c1", user(said), bot("Noted."))))
    assert "Just mornings from now" in index, index


def test_r6_a_rate_put_right_by_naming_the_wrong_one_keeps_the_other_rates() -> None:
    # Said in words the entry shares, the new rate is written in; said in none (the entry
    # cannot cite the correction), the correction is kept beside the entry, which is not
    # replaced by it: the pairs' rate would be lost.
    index = _after(
        "lessons are £22 an hour for pairs and £30 for solo",
        "£30 was wrong, the solo rate is £32 since March, sorry",
    )
    assert "£22 an hour for pairs and £32 for solo" in index and "£30" not in index, index
    index = _after(
        "lessons are £22 an hour for pairs and £30 for 1:1",
        "£30 was wrong, the 1:1 rate is £32 since March, sorry",
    )
    assert "£22 an hour for pairs" in index and "£32" in index, index


def test_r6_a_price_said_again_as_unchanged_is_not_the_one_replaced() -> None:
    index = _after(
        "pricing for reference: standard round is £7.50 a head, 3 rounds for £18",
        "gas bill came in. we're putting the single round up to £8.50 from 1 May, the 3-round "
        "deal stays at £18",
    )
    assert "£18" in index and "3 rounds for £8.50" not in index, index


def test_r6_something_said_to_be_off_then_dropped_by_a_pronoun_ends_it() -> None:
    # "X are off, we've dropped them": X is what ended; read again, nothing changes.
    index = _after("Rowing sessions are every Monday night and the first Saturday of each month.")
    batch = turns(
        "c1",
        user("The first Saturday rowing sessions are off, we've dropped them, hardly anyone came."),
        bot("Understood, no more first Saturday sessions."),
    )
    index = index_after(review(batch, index), index)
    assert "first Saturday" not in index.replace("No longer first Saturday", ""), index
    again = review(batch, index)
    assert not again.operations or index_after(again, index) == index, again.operations


def test_r6_a_count_said_in_words_gives_no_price_to_a_price_list() -> None:
    # "it takes three cakes" counts something: it replaces no price of the list.
    index = _after(
        "price list for the record. small cake £30, tier cake £200, cake topper £25",
        "tier cake is going up to £240 from next month. flour cost went up and it takes three "
        "cakes",
    )
    # (and the month it holds from, "next month" as of the message, goes with the new price)
    assert "small cake £30, tier cake £240 from June, cake topper £25" in index, index


def test_r6_a_price_changed_while_another_stays_replaces_the_one_it_names() -> None:
    # "the day rate ... £50. Weekly stays £250": the weekly price is said to stay, so the
    # new price is the day rate's, and the day it holds from goes with it.
    index = _after(
        "Kayak hire is £35 a day, weekly £180",
        "Changed my mind on the daily price, £40 from June. Weekly stays £180",
    )
    assert "£40 a day from June, weekly £180" in index, index
    assert "£35" not in index and "weekly £40" not in index, index


def test_r6_a_switch_to_a_named_supplier_for_a_thing_replaces_the_entry() -> None:
    # "switching to X for the Y": what the entry said of the old supplier's product is not
    # true of the new one, so the statement takes the entry's place; read again, the
    # older statement changes nothing.
    first = "Timber for the decking comes from Jewson, their pressure-treated redwood."
    then = (
        "We're switching to Travis Perkins for the timber, their larch boards, account opened "
        "today."
    )
    index = _after(first, then)
    assert "Travis Perkins" in index and "larch boards" in index, index
    assert "Jewson" not in index and "redwood" not in index, index
    batch = [*turns("c0", user(first)), Turn("c1", 0, "user", "sam", then, T + 60)]
    again = review(batch, index)
    assert not again.operations or index_after(again, index) == index, again.operations


def test_r6_new_said_of_a_kind_of_people_replaces_nothing() -> None:
    # "all new members" are whoever joins, not a change: Priya stays the coordinator.
    index = _after(
        "Priya is the new climbing volunteer lead.",
        "reminder all new volunteers MUST sign the waiver before their first session, waivers "
        "are at the front desk 9am.",
    )
    assert "Priya is the new climbing volunteer lead" in index and "waiver" in index, index


def test_r6_someone_named_who_is_sent_things_is_kept() -> None:
    kept = statements.read(
        "Owen does all the bookings, any refunds go to him", role="user", speaker="Ana"
    )
    assert isinstance(kept, statements.Statement), kept
    # but not a clause whose "him" is someone said elsewhere
    assert isinstance(statements.read("Money goes to him", role="user", speaker="Ana"), str)


def test_r6_doing_a_numbered_thing_now_is_progress() -> None:
    said = statements.read(
        "sanding table 12 now, then 13 and 14 after tea", role="user", speaker="Al"
    )
    assert said == "transient", said
    # a count said roughly is no numbered thing
    said = statements.read("Expecting around 40 runners", role="user", speaker="Al")
    assert said != "transient", said


def test_r6_a_retired_person_introduced_retires_nothing() -> None:
    assert (
        changes._retire("I'm Mags, retired nurse in Kendal, keen to help on Fridays", "i") is None
    )
    assert changes._retire("we retired the old minibus", "we") is not None


def test_r6_a_guess_in_a_comment_after_the_statement_leaves_the_statement() -> None:
    said = statements.read(
        "hi, my spaniel Ted had hip surgery a month ago, the physio said swimming might help",
        role="user",
        speaker="Jo",
    )
    assert isinstance(said, statements.Statement) and "hip surgery" in said.text, said
    # a guess about the whole is still a guess
    said = statements.read(
        "Fence is done at the Browns, tomorrow I start the gate, then done I think",
        role="user",
        speaker="Jo",
    )
    assert said == "hedged", said


def test_r6_a_statement_before_a_question_after_a_comma_is_kept() -> None:
    said = statements.read(
        "hi there we run a cafe in Whitby called The Galley, do you deliver to the coast?",
        role="user",
        speaker="Tess",
    )
    assert isinstance(said, statements.Statement) and "The Galley" in said.text, said
    # what is going on as they ask is part of the asking
    said = statements.read(
        "my boiler's making a banging noise every morning, can you send someone out?",
        role="user",
        speaker="Tess",
    )
    assert said == "question", said


def test_r6_the_rule_a_lesson_taught_stays_with_its_cause() -> None:
    said = (
        "lesson learned: the mower sank in the soft ground by the pond and stripped a belt. "
        "don't take the mower down there after a wet week, give it 2 days to firm up"
    )
    index = index_after(review(turns("c1", user(said), bot("Noted."))))
    assert "stripped a belt" in index and "give it 2 days" in index, index
    assert index.count("\n- ") == 1, index


def test_r6_a_named_supplier_used_now_said_without_a_verb_is_kept() -> None:
    index = _after(
        "bread comes from Hobbs Bakery, delivered mondays",
        "bread now from Crumb & Co, thursdays, Hobbs closed",
    )
    assert "Crumb & Co" in index and "Hobbs Bakery" not in index, index
    index = _after(
        "tyre repairs go to Dave Mills in Ripon",
        "Dave's retired. tyre repairs to TyreFix in Thirsk now",
    )
    assert "TyreFix in Thirsk" in index, index


def test_r6_opening_hours_said_without_a_verb_are_kept() -> None:
    index = _after("yard hours 7am to 4pm, saturdays 8 till 12")
    assert "7am to 4pm" in index, index


def test_r6_what_a_grant_asks_said_next_stays_with_it() -> None:
    said = (
        "Great news, we won the Arts Council grant, £3,000, for the autumn tour. "
        "Has to be spent by 30 November."
    )
    index = index_after(review(turns("c1", user(said), bot("Congratulations!"))))
    assert "£3,000" in index and "30 November" in index, index
    assert index.count("\n- ") == 1, index


def test_r6_one_thing_only_now_is_kept() -> None:
    index = _after("we've stopped selling on eBay, the fees went up. website only now")
    assert "website only now" in index.lower(), index


def test_r6_an_update_replaces_the_sentence_of_the_entry_that_held_the_old_value() -> None:
    # The entry holds two sentences; the update's value replaces the one that held the old
    # value, and the other (a lesson) stays.
    first = (
        "jars are 200ml hex jars from Jarco, lead time is 2 weeks. lesson: lids are a SEPARATE "
        "order with them"
    )
    index = _after(first, "Jarco lead time is 4 weeks now, they rang this morning")
    assert "4 weeks" in index and "2 weeks" not in index and "lids are a SEPARATE" in index, index


def test_r6_what_is_done_from_now_said_as_going_on_is_kept() -> None:
    index = _after(
        "tent repairs go to Peak Canvas in Buxton",
        "Peak Canvas is closing down. we're sending the tents to Fabric Fixers in Leek from now",
    )
    assert "Fabric Fixers in Leek" in index and "Peak Canvas in Buxton" not in index, index


def test_r6_what_must_be_done_by_a_day_is_no_guess() -> None:
    said = statements.read(
        "Costumes must be returned by the Saturday after the last show", role="user", speaker="Di"
    )
    assert isinstance(said, statements.Statement), said
    assert statements.read("Bev must be worried", role="user", speaker="Di") == "reaction"


def test_r6_a_lesson_label_alone_then_the_story_then_the_rule_is_one_lesson() -> None:
    said = (
        "lesson from yesterday. overfilled the resin mould on the big bowl and it cracked, "
        "had to redo the whole order. ALWAYS pour in two stages on anything over 2kg, "
        "12 hours apart"
    )
    index = index_after(review(turns("c1", user(said), bot("Noted."))))
    assert "cracked" in index and "two stages" in index, index
    assert index.count("\n- ") == 1, index


def test_r6_a_code_told_in_a_clause_that_reads_as_anything_else_is_a_secret() -> None:
    # Read first as a secret, before any other reading ("bin ..." otherwise opens as
    # something thrown out): the model reviewer's post-check relies on it too.
    clause = "bin combo is 51-08-33, keep that between us"
    assert statements.read(clause, role="user", speaker="Jo") == "secret"
    assert statements.entry_problem(f"Jo said: {clause} (source: c1#0-1)") == "secret"


def test_r6_an_entry_that_names_a_secret_and_gives_it_in_the_next_sentence_is_refused() -> None:
    # The rule the offline reviewer reads a message by (`statements.secret_values`), for an
    # entry another reviewer wrote.
    entry = (
        "Femi said: the rota system makes me change my password every month. "
        "It's Peckham#Rye42 now. (source: c1#0-1)"
    )
    assert statements.entry_problem(entry) == "secret"
    assert statements.entry_problem("Femi: the rota system is Rotamaster. (source: c1#0-1)") is None


def test_r6_an_entry_that_holds_a_question_asked_after_a_comma_is_refused() -> None:
    # The offline reviewer keeps only what comes before such a question; an entry another
    # reviewer wrote with the question in it is a question.
    entry = (
        "Tess said: we run a cafe in Whitby called The Galley, do you deliver to the coast? "
        "we open at 8 (source: c1#0-1)"
    )
    assert statements.entry_problem(entry) == "question"


@pytest.mark.parametrize(
    "said",
    [
        # "pass" named several words before a colon, then the value
        "pass for the members' area: Fell-Runner-9",
        # a network's password called its code
        "guest wifi is Harbour-Guest and the code is moor1ngs2026",
        # the key's name, then why it is given, then a colon and the value
        "the api key if the designer ever wants it for the site: Qm7tR2vX9kLp4WzN",
        # the secret's name, then "it's" and the value, or only a comma
        "if the booking page locks up you want the staff login, it's Harbour44Gulls",
        "the supplier set up the stock feed with a token, kx_live_4Rt8Wq2Zp7",
    ],
)
def test_r6_a_password_said_as_pass_or_a_network_code_is_never_kept(said: str) -> None:
    assert statements.read(said, role="user", speaker="Jo") == "secret"
    out = review(turns("c1", user(f"for the records: {said}. cheers"), bot("Noted.")))
    value = said.rsplit(" ", 1)[1]
    assert all(value not in str(op) for op in out.operations), out.operations


def test_r6_an_answer_to_a_question_asking_for_a_secret_is_never_kept() -> None:
    batch = turns(
        "c1",
        user("can you hang on to the gym's door details"),
        bot("Sure, what's the door code?"),
        user("5117 then the green button"),
        bot("Thanks."),
    )
    assert all("5117" not in str(op) for op in review(batch).operations)
    # and a password spelled out in words, "password's ...", is a password
    said = "password's heron with a capital H and 77 at the end"
    assert statements.read(said, role="user", speaker="Jo") == "secret"
    # but a token that is a voucher, then someone's "'s", gives no secret
    said = "We've swapped the raffle token for a month's free parking, people liked it more"
    assert isinstance(statements.read(said, role="user", speaker="Jo"), statements.Statement)


@pytest.mark.parametrize(
    "said",
    [
        "the Co-op car park is pay and display now, saw the signs this morning",
        "Megan does the Friday rota now, she told me yesterday",
    ],
)
def test_r6_what_holds_now_told_with_the_day_it_was_heard_is_kept(said: str) -> None:
    # "now" outlasts the day the news came (`statements._lasting`); a pattern of another rule
    # once took its name and, for a stop, its place.
    assert isinstance(statements.read(said, role="user", speaker="Jo"), statements.Statement)


@pytest.mark.parametrize(
    "said",
    [
        "Priya is in the middle of labelling the chutney jars, maybe 150 left to do",
        "proofing the spring catalogue for Hanna, on page 12 of 40",
        "Sam's on his fourth attempt at the reverse park now, nearly there",
        "I'm on the second crate of apples now, we'll want more boxes by Friday",
    ],
)
def test_r6_how_far_someone_has_got_is_progress(said: str) -> None:
    assert statements.read(said, role="user", speaker="Jo") == "transient"


@pytest.mark.parametrize(
    "said",
    [
        "the deli is in the middle of the high street, next to the bank",
        "we're on the third floor now, the lift is round the back",
    ],
)
def test_r6_a_place_in_the_middle_or_on_a_floor_is_no_progress(said: str) -> None:
    assert isinstance(statements.read(said, role="user", speaker="Jo"), statements.Statement)


def test_r6_what_a_business_would_do_if_it_ever_did_is_no_fact() -> None:
    said = "if we ever take on a second unit it'd be over in Leith, that's a pipe dream though"
    assert statements.read(said, role="user", speaker="Jo") == "hedged"


def test_r6_a_reply_that_reads_back_an_ending_the_user_made_keeps_nothing_of_it() -> None:
    # The user's retirement removed the entry; "Noted: ... has ended" reads that back and is
    # no entry of its own (it would hold the retired thing's name).
    first = review(turns("c1", user("we run a Friday night quiz at the Anchor, 8pm start")))
    index = index_after(first)
    assert "Friday night quiz" in index
    out = review(
        turns(
            "c2",
            user("no more Friday quiz, nobody came after the summer"),
            bot("Updated: the Friday quiz has ended."),
        ),
        index=index,
    )
    after = index_after(out, index)
    assert "quiz" not in after.lower(), after


def test_r6_a_reply_that_reads_back_an_ending_with_what_comes_next_is_read_as_usual() -> None:
    # The ending does not close the reply: what follows it ("reopening on 1 March for 12
    # places") is the user's new fact, read back, and stays the fact it was.
    batch = turns(
        "c1",
        user("I've shut the booking list, it reopens 1 March for 12 places and then shuts again"),
        bot("Understood: booking list closed, reopening on 1 March for 12 places."),
    )
    index = index_after(review(batch))
    assert "1 March" in index and "12" in index, index


def test_r6_an_update_written_into_an_older_entry_is_held_when_read_again() -> None:
    # The first run writes the new value into the older entry's words; given the same
    # message again (an idle re-run), the entry it made holds the statement: nothing changes.
    first = review(
        turns(
            "c1",
            user("tiling labour is $12 per square metre, grout included"),
            bot("Noted: tiling is $12 per square metre."),
        )
    )
    index = index_after(first)
    batch = turns(
        "c2",
        user("bumping tiling to $14 a square metre from the 1st. adhesive's gone up"),
        bot("Noted: tiling will be $14 per square metre from the 1st."),
    )
    index = index_after(review(batch, index=index), index)
    assert "$14 per square metre" in index and "$12" not in index, index
    again = review(batch, index=index)
    assert again.operations == [], again.operations


def test_r6_a_price_said_in_another_clause_of_an_update_is_written_in_too() -> None:
    # "... and it's $380" says nothing of what $380 is but "it": the one price of the entry
    # changes with the supplier, not left behind beside the new name.
    index = index_after(
        review(turns("c1", user("our routine music comes from Vortex Mixes, $450 a mix")))
    )
    said = (
        "switched music to Pulse Audio Lab, they turn mixes round in 2 weeks instead of 6 "
        "and it's $380"
    )
    after = index_after(review(turns("c2", user(said)), index), index)
    assert "Pulse Audio Lab" in after and "$380" in after, after
    assert "$450" not in after and "Vortex" not in after, after


def test_r6_a_read_back_in_place_of_an_update_keeps_what_the_user_said_stays() -> None:
    # "Pete still signs off": Pete's sentence is not what the update (or the assistant's
    # "Updated: ..." of it) outdates, though the message names him.
    said = (
        "our contact at the National Trust is Jenna Hosking, collections manager. "
        "her boss Pete Varcoe signs off the money"
    )
    index = index_after(review(turns("c1", user(said))))
    batch = turns(
        "c2",
        user(
            "Jenna's moved to Lanhydrock. new contact for the wagon wheels is Sam Rowe, "
            "assistant curator. Pete still signs off"
        ),
        bot("Updated: Sam Rowe is the Cotehele contact now."),
    )
    after = index_after(review(batch, index), index)
    assert "Sam Rowe" in after and "Pete Varcoe" in after, after
    assert "Jenna Hosking" not in after, after


def test_r6_a_read_back_read_again_after_an_update_leaves_what_it_read_back() -> None:
    # Given every turn again, the assistant's "Noted: ... visit 9 April" is older than the
    # entry of the move to 23 April; it does not take the placement, which the user's
    # message it read back said, away with it.
    first = turns(
        "c1",
        user(
            "Mabel's placement is with Mr Dennis Hale in Thame, he lost his hearing after "
            "meningitis two years ago. Matching visit is 9 April"
        ),
        bot("Noted: Mabel matched with Dennis Hale in Thame, matching visit 9 April."),
    )
    index = index_after(review(first))
    second = days_later(
        7,
        turns(
            "c2",
            user(
                "Mr Hale's had a fall, so the matching visit is moved to 23 April. Claire's agreed"
            ),
            bot("Noted, matching visit now 23 April."),
        ),
    )
    index = index_after(review(second, index), index)
    assert "23 April" in index and "9 April" not in index, index
    assert_changes_nothing(first + second, index)


def test_r6_a_read_back_of_an_update_leaves_the_other_clause_of_the_message() -> None:
    # "From January tuition is $199 a month" reads back the user's update; the choreo fee the
    # same message kept is not an older value it replaced, and the day the new price holds
    # from, said after "a month", goes with it.
    index = index_after(review(turns("c1", user("monthly tuition for all-star teams is $185"))))
    batch = days_later(
        11,
        turns(
            "c2",
            user(
                "had to raise it, gym rent went up. tuition is $199 a month starting January. "
                "choreo fee stays $150 one-time"
            ),
            bot(
                "Noted: from January tuition is $199 a month; choreography fee stays $150 one-time."
            ),
        ),
    )
    after = index_after(review(batch, index), index)
    entries = [line for line in after.split("\n") if line.startswith("- ")]
    assert [e for e in entries if "$150" in e and "choreo" in e], entries
    assert len([e for e in entries if "$199" in e]) == 1, entries
    assert "$185" not in after and "starting January" in after, after


def test_r6_a_switch_of_supplier_keeps_the_lesson_said_with_it() -> None:
    said = "we get our 10ml amber dropper bottles from Glassworks Direct, about 600 at a time"
    index = index_after(review(turns("c1", user(said))))
    batch = days_later(
        7,
        turns(
            "c2",
            user(
                "ugh. second box from glassworks arrived with 30-odd smashed. I've moved the "
                "bottles over to Ambrose Packaging in Norwich, they're dearer but they deliver "
                "in their own van"
            ),
            user(
                "lesson learned - anything glass that comes loose-packed breaks in the courier, "
                "so now we only order bottles that ship in honeycomb dividers"
            ),
        ),
    )
    after = index_after(review(batch, index), index)
    assert "Ambrose Packaging in Norwich" in after and "honeycomb dividers" in after, after
    assert "from Glassworks Direct" not in after, after
    assert_changes_nothing(batch, after)


def test_r6_a_switch_said_with_why_the_old_one_went_changes_nothing_read_again() -> None:
    # "fell out with ECP" names the old supplier (by its initials): it says why the switch
    # came, not a fact to add to the entry, which read again would no longer look outdated.
    first = turns("c1", user("parts from Euro Car Parts, they deliver within the hour"))
    index = index_after(review(first))
    second = days_later(
        7,
        turns("c2", user("fell out with ECP over a warranty claim. parts all come from GSF now")),
    )
    index = index_after(review(second, index), index)
    assert "GSF" in index and "Euro Car Parts" not in index and "ECP" not in index, index
    assert_changes_nothing(first + second, index)


def test_r6_a_change_of_mind_on_a_thing_takes_it_back_and_is_no_entry_itself() -> None:
    index = index_after(review(turns("c1", user("we're taking Storm to NCA in Dallas in March!!"))))
    said = (
        "changed my mind on Dallas. flights for 22 kids plus parents was insane. we're doing "
        "Cheersport in Atlanta instead, we can drive there"
    )
    after = index_after(review(days_later(8, turns("c2", user(said))), index), index)
    assert "Dallas" not in after and "Cheersport in Atlanta" in after, after
    assert "mind" not in after, after
    assert statements.skip_reason("changed my mind", "user") == "reaction"
    assert statements.skip_reason("ok, I've changed my mind about the venue.", "user")


def test_r6_a_read_back_in_other_words_is_one_fact_with_what_it_reads_back() -> None:
    # The reply gives the same names and values as the user's sentence, in a few words of
    # its own or a few more of the user's: memory holds it once. A hyphenated word is read
    # as its parts ("ABV-tested").
    cases = [
        (
            "anything over $500 goes Purolator now, with signature",
            "Noted: rugs over $500 ship by Purolator with signature.",
            "$500",
        ),
        (
            "for the record membership is $90 a year, visitors pay $5 a session and we lend "
            "them boules",
            "Noted: membership is $90 a year, visitors $5 a session with loan boules.",
            "$90",
        ),
        (
            "rule for us is every batch gets an ABV test at Campden BRI and anything over 0.5% "
            "gets poured away",
            "Noted: every batch is ABV-tested at Campden BRI; anything over 0.5% is discarded.",
            "0.5%",
        ),
    ]
    for said, noted, value in cases:
        batch = turns("c1", user(said), bot(noted))
        after = index_after(review(batch))
        held = [line for line in after.split("\n") if value in line]
        assert len(held) == 1, after
        assert_changes_nothing(batch, after)


def test_r6_a_message_read_again_is_held_by_the_read_back_that_took_its_place() -> None:
    first = turns("c1", user("once a month I do a day over the Hereford side, about 15 horses"))
    index = index_after(review(first))
    second = days_later(
        7,
        turns(
            "c2",
            user(
                "I've dropped the Hereford side altogether. 2 hours each way. passed them on to "
                "Tom Faulkner, EDT in Leominster"
            ),
            bot(
                "Noted: no more Hereford days; those clients are passed to Tom Faulkner in "
                "Leominster."
            ),
        ),
    )
    index = index_after(review(second, index), index)
    assert "Tom Faulkner" in index, index
    assert_changes_nothing(first + second, index)


def test_r6_a_read_back_of_what_users_said_in_few_words_is_their_fact() -> None:
    # "Ruth (chair) here", "Dev, treasurer": too few words to read as an introduction; the
    # assistant's "Noted: Ruth is chair; Dev is treasurer" says it in their words, and is kept.
    # A word of its own ("founder") is not theirs: that statement stays the assistant's.
    batch = [
        Turn("c1", 0, "user", "ruth", "evening all, Ruth (chair) here. subs are £35 this year", T),
        Turn("c1", 1, "user", "dev", "Dev, treasurer. pay by bank transfer not cash please", T + 1),
        Turn("c1", 2, "assistant", None, "Noted: Ruth is chair; Dev is treasurer.", T + 2),
    ]
    after = index_after(review(batch))
    assert "Ruth is chair" in after and "Dev is treasurer" in after, after
    batch[2] = replace(batch[2], text="Noted: Ruth is the club founder.")
    assert "founder" not in index_after(review(batch)), index_after(review(batch))


def test_r6_being_sick_of_something_is_a_feeling_not_a_fact() -> None:
    assert not isinstance(
        statements.read("Dev is sick of counting coins in the shed", role="user", speaker="dev"),
        statements.Statement,
    )


# twenty-fifth round: where a price or a schedule is filed


@pytest.mark.parametrize(
    "said",
    [
        "Basic service is £45, full service £85.",
        "Walks are on Tuesdays, Thursdays and Saturdays.",
        "The AGM is on Thursday 21 May at 7.30pm in the committee room.",
        "The junior programme runs Sundays 1 to 3pm, $95 for the season.",
    ],
)
def test_r6_what_things_cost_and_when_they_happen_is_project_state(said: str) -> None:
    # A price or a schedule says how things stand now; "Environment & gotchas" is for the
    # setting work is done in and what trips it up.
    index = index_after(review(turns("c1", user(said))))
    kept = said.rstrip(".").split(",")[0]
    assert section_of(index, kept) == "Project state", index


def test_r6_a_technical_fact_with_a_time_stays_in_the_environment() -> None:
    index = index_after(
        review(turns("c1", user("The nightly backup runs at 02:00 on db-1.internal.")))
    )
    assert section_of(index, "02:00 on db-1.internal") == "Environment & gotchas", index


def test_r6_a_weekday_and_a_number_are_a_date_not_a_version() -> None:
    # "Thursday 21 May" read as the tool "Thursday" at version 21 filed the AGM with the setup.
    for said in (
        "The AGM is on Thursday 21 May.",
        "Nets run Sundays 1 to 3pm.",
        "We're open Tue-Sun 12-10.",  # days as shops write them short
        "Opening hours Tues to Sat 10 till 5.30.",  # "till 5.30" is a time
    ):
        assert "version" not in frames.frame(said, "Sam", "user").kinds, said
    assert "version" in frames.frame("We run Postgres 16 now.", "Sam", "user").kinds


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("Great Taste Awards entries close 3 March.", "Great Taste Awards entries close"),
        ("Perfect Pitch Studios does our mastering now.", "Perfect Pitch Studios does"),
    ],
)
def test_r6_a_name_that_opens_with_a_word_of_praise_keeps_it(said: str, kept: str) -> None:
    # "Great" before a capital reads as "Great, ..." dropped; with no stop after it, and itself
    # capitalised, it is the first word of the name.
    assert kept in index_after(review(turns("c1", user(said))))
    assert sentences.clean("Great, the van is booked") == "the van is booked"


def test_r6_a_read_back_after_a_welcome_still_takes_the_users_place() -> None:
    # "Welcome, Priya." before "Noted: ..." hid that the reply takes note: the user's schedule
    # and the reply's shorter form of it were both kept.
    batch = [
        Turn(
            "c1",
            0,
            "user",
            "priya",
            "hi all, Priya Shah, I've taken over as youth coach from Dan. youths are Thursdays "
            "5 till 7",
            T,
        ),
        Turn("c1", 1, "assistant", None, "Welcome, Priya. Noted: youth coach, Thursdays 5-7.", T),
    ]
    index = index_after(review(batch))
    assert sum("Thursdays" in line for line in index.split("\n")) == 1, index
    assert_changes_nothing(batch, index)


@pytest.mark.parametrize(
    "said",
    [
        "The new pastry chef is Tomasz Wren.",
        "The chaperones for the away game are Karen and Debbie.",
    ],
)
def test_r6_who_someone_is_to_the_group_is_about_people(said: str) -> None:
    index = index_after(review(turns("c1", user(said))))
    assert section_of(index, said.rstrip(".")) == "People & preferences", index


def test_r6_a_role_word_in_a_technical_statement_is_not_about_people() -> None:
    said = "The job manager runs on Kubernetes in the Hetzner cluster."
    index = index_after(review(turns("c1", user(said))))
    assert section_of(index, "Kubernetes") == "Environment & gotchas", index


# twenty-sixth round: which entry a new value replaces


def test_r6_a_new_price_replaces_the_one_said_with_the_same_words_and_numbers() -> None:
    # A price list kept one entry a line: "Grade 1 goes to £375" shares "grade" with three of
    # them, so no entry was updated; the one whose price is said with "Grade 1" is.
    first = index_after(
        review(
            turns(
                "c1",
                user(
                    "price list as of now\nGrade 1+ (8+ straight grains) - £420\n"
                    "Grade 1 - £350\nGrade 2 - £280"
                ),
            )
        )
    )
    later = days_later(8, turns("c2", user("tom says Grade 1 goes to £375 from April")))
    index = index_after(review(later, first), first)
    assert "£350" not in index and "£375" in index, index
    assert "£420" in index and "£280" in index, index
    assert_changes_nothing(turns("c1", user("price list as of now\nGrade 1 - £350")) + later, index)


def test_r6_a_word_capitalised_in_one_statement_meets_it_said_plainly_in_another() -> None:
    # "The Marmo went up" reads "Marmo" as a name, "Marmo white 24x24 - $7.90" as a word: the
    # two shared nothing, and both prices were kept.
    first = index_after(
        review(
            turns("c1", user("Marmo white 24x24 - $7.90/sq ft.\nTerra wood-look - $6.25/sq ft."))
        )
    )
    index = _later(first, user("The Marmo went up, $8.40 a foot now."))
    assert "$7.90" not in index and "$8.40" in index and "$6.25" in index, index


def test_r6_two_entries_with_the_same_old_value_are_not_told_apart_by_their_words() -> None:
    # A statement and the assistant's read-back both hold £15: updating the one with more
    # words in common left the other, and reading the turns again updated that one too (an
    # idle re-run that changed memory). Neither is chosen, as before.
    batch = turns(
        "c1",
        user("Hire scooters: we've got 4, £15 a day or £60 a week"),
        bot("4 hire scooters, £15/day, £60/week."),
    )
    first = index_after(review(batch))
    later = days_later(8, turns("c2", user("put hire up to £18 a day, week stays £60")))
    out = review(later, first)
    index = index_after(out, first) if out.operations else first
    assert index.count("£15") == 2, index  # neither updated: which one goes is no clearer
    assert_changes_nothing(batch + later, index)


def test_r6_a_word_of_another_clause_met_as_a_name_links_no_value() -> None:
    # "Visitors" opens the entry and reads as a name; "visitors" in another clause of the later
    # message is a word. Met across clauses, they made "we added Sundays 1 to 4" replace the
    # entry's "11 to 3", which still holds on Saturdays.
    first = index_after(
        review(
            turns(
                "c1",
                user(
                    "Visitors may climb the tower on Wednesdays and Saturdays, 11 to 3, "
                    "£6 for adults."
                ),
            )
        )
    )
    index = _later(
        first,
        user(
            "We stopped the Wednesday openings. Not enough visitors midweek. Saturdays only "
            "now, and we added Sundays 1 to 4."
        ),
    )
    assert "11 to 3" in index and "£6 for adults" in index, index


@pytest.mark.parametrize(
    ("first", "update", "gone", "kept"),
    [
        (
            "royal python £95, leopard gecko £65, corn snake £60.",
            "corn snakes going to £70, breeder put his price up",
            "£60",
            "£70",
        ),
        (
            "We're opening sundays now, 11 till 3.",
            "Sundays are busier than I thought, going to 11 till 4.",
            "11 till 3",
            "11 till 4",
        ),
    ],
)
def test_r6_a_value_going_to_another_is_an_update(
    first: str, update: str, gone: str, kept: str
) -> None:
    # "going to" with a value after it says the value changes; it was read as no word of
    # update, and the old value stayed beside the new one.
    before = index_after(review(turns("c1", user(first))))
    index = _later(before, user(update))
    assert gone not in index and kept in index, index
    assert offline._GOING_TO.search("we're going to Tesco on the 4th") is None  # a plan


# Found by an outside audit (2026-12-06): a new user's first conversations.


def test_r6_a_lesson_fixed_by_something_replaces_no_ones_decision() -> None:
    # "we fixed it by adding REDIS_URL" is a repair, the fix of a lesson: read as a word of
    # update, the gotcha shared "payments" and "Fly" with Priya's decision, replaced it, and
    # kept the decision under Marek's name and source.
    first = index_after(
        review(
            turns(
                "c1",
                user("Hi Ada! I'm Priya Raman, I lead the payments team at Lumen."),
                user("We decided to move the payments service from Heroku to Fly.io next quarter."),
                author="priya",
            )
        )
    )
    index = _later(
        first,
        user(
            "Gotcha: the payments worker crashes on boot when REDIS_URL is missing; we fixed "
            "it by adding REDIS_URL to the Fly secrets."
        ),
        author="marek",
    )
    decision = next(line for line in index.split("\n") if "Fly.io next quarter" in line)
    assert "c1#" in decision and "Marek" not in decision, index
    assert "REDIS_URL" in index and section_of(index, "Priya Raman") == "People & preferences"


def test_r6_who_someone_is_and_what_they_decided_are_two_entries() -> None:
    # The decision in the message after an introduction was joined to it as "still who they
    # are", and the two were one entry under Decisions.
    index = index_after(
        review(
            turns(
                "c1",
                user("I'm Jo Tanaka and I run the data platform at Kestrel."),
                user("We decided to use dbt for all transformations."),
                author="jo",
            )
        )
    )
    assert section_of(index, "Kestrel") == "People & preferences", index
    assert section_of(index, "dbt") == "Decisions", index


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("I'm Lena, the new designer.", "Lena is the new designer."),
        ("Hey, I'm Marek, the SRE on Priya's team.", "Marek is the SRE on Priya's team."),
    ],
)
def test_r6_an_introduction_with_a_role_keeps_its_verb(said: str, written: str) -> None:
    # "I'm Lena, the new designer." was written "Lena, the new designer.": no sentence.
    author = said.split("I'm ")[1].split(",")[0].lower()
    index = index_after(review(turns("c1", user(said), author=author)))
    assert written in index, index


# Found by a second outside audit (2026-12-06): four new users in their own voices.


@pytest.mark.parametrize(
    ("said", "fix"),
    [
        (
            "card reader gotcha: the sumup reader won't connect if the phone is on the guest "
            "wifi, you have to put the phone on the staff network (KettleStaff) and then it "
            "pairs fine",
            "KettleStaff",
        ),
        (
            "gotcha: the dishwasher floods if you use normal washing up liquid, only use the "
            "tablets",
            "only use the tablets",
        ),
        (
            "the back door sticks in wet weather, you have to lift the handle up while you "
            "turn the key",
            "lift the handle",
        ),
    ],
)
def test_r6_a_gotcha_whose_fix_is_said_to_anyone_is_kept_with_its_fix(said: str, fix: str) -> None:
    # A thing that fails under a condition, its fix said as an instruction ("you have to
    # ...", "only use ..."): the "you" is anyone's, not a rule for the agent. All three had
    # been dropped as behavioural rules.
    index = index_after(review(turns("c1", user(said))))
    assert section_of(index, fix) == "Environment & gotchas", index
    assert_changes_nothing(turns("c1", user(said)), index)


def test_r6_a_rule_for_the_agent_with_if_you_is_still_no_gotcha() -> None:
    # The gotcha needs a thing that fails: "if you" in a rule for the agent stays a rule.
    said = "If you don't know the answer, you should say so instead of guessing."
    assert not review(turns("c1", user(said))).operations


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("mia has a severe peanut allergy, she carries an epipen everywhere", "Mia has"),
        ("alfie is lactose intolerant", "Alfie is lactose intolerant"),
        ("ben has a dairy allergy", "Ben has a dairy allergy"),
    ],
)
def test_r6_an_allergy_of_someone_typed_in_lower_case_is_kept(said: str, kept: str) -> None:
    # Typed in lower case, the child's name read as a common word and the allergy was lost;
    # with a capital it was kept. An allergy, an intolerance or a diet is said of a person.
    index = index_after(review(turns("c1", user(said))))
    assert section_of(index, kept) == "People & preferences", index


@pytest.mark.parametrize(
    "said",
    [
        "the fix was setting the batch size to 65k, then it ran fine. anyway hows your day going",
        "the kiln lesson: firing too fast cracked the pots, now we ramp at 100 degrees an hour "
        "and it's fine. anyway enough about me, hows your weekend",
    ],
)
def test_r6_small_talk_after_a_lesson_in_its_message_is_not_kept_with_it(said: str) -> None:
    # "... anyway hows your day going" was kept as part of the lesson before it.
    index = index_after(review(turns("c1", user(said))))
    assert "your day" not in index and "weekend" not in index, index
    assert "65k" in index or "100 degrees" in index, index


# Found by the second outside audit, fixed in a later round: updates that took the rest of an
# entry with them, and unrelated sentences of one message kept as one entry.


def _entries(index: str) -> list[str]:
    return [line for line in index.splitlines() if line.startswith("- ")]


def _updated(first: str, later: str) -> str:
    """Memory after ``first`` and, three days later in another conversation, ``later``."""
    index = index_after(review(turns("c1", user(first))))
    after = review(days_later(3, turns("c2", user(later))), index=index)
    return index_after(after, index)


@pytest.mark.parametrize(
    ("first", "later", "kept", "new", "gone"),
    [
        (
            "mia has a peanut allergy, rob does the school run on tuesdays",
            "rob does the school run on fridays now",
            "peanut allergy",
            "fridays",
            "tuesdays",
        ),
        (
            "staging deploys happen on thursdays, marek owns the pager",
            "staging deploys happen on fridays now",
            "marek owns the pager",
            "fridays",
            "thursdays",
        ),
        (
            "we close at 5 on sundays, the bread comes from hobbs",
            "we close at 4 on sundays now",
            "the bread comes from hobbs",
            "at 4",
            "at 5",
        ),
    ],
)
def test_r8_an_update_of_one_part_of_an_entry_keeps_its_other_parts(
    first: str, later: str, kept: str, new: str, gone: str
) -> None:
    # An entry of several facts said in one run-on sentence was replaced whole by an update
    # of one of them: the allergy, the pager, the bread went with the old day or hour.
    after = _updated(first, later)
    lines = _entries(after)
    assert any(kept in line for line in lines), lines
    assert any(new in line for line in lines), lines
    assert not any(gone in line for line in lines), lines


@pytest.mark.parametrize(
    ("first", "later", "stays", "now", "gone"),
    [
        (
            "jake and chloe do the saturday shifts",
            "chloe quit, ruby's doing her saturdays now",
            "jake",
            "ruby",
            "chloe",
        ),
        (
            "jake and chloe do the saturday shifts",
            "ruby's replaced chloe on saturdays",
            "jake",
            "ruby",
            "chloe",
        ),
        (
            "Marta and Lee run the night builds",
            "lee moved teams, so Omar is covering the night builds now",
            "Marta",
            "Omar",
            "Lee",
        ),
    ],
)
def test_r8_one_person_of_a_list_replaced_keeps_the_others(
    first: str, later: str, stays: str, now: str, gone: str
) -> None:
    # "chloe quit, ruby's doing her saturdays now" replaced "jake and chloe do the saturday
    # shifts" whole: Jake's Saturdays were lost.
    after = _updated(first, later)
    lines = _entries(after)
    # (names are spelled with capitals once read as people: "Jake and Ruby")
    holding = [
        line for line in lines if stays.lower() in line.lower() and now.lower() in line.lower()
    ]
    assert holding, lines
    assert not any(re.search(rf"\b{gone}\b", line, re.I) for line in holding), lines
    # read again, both messages in one batch, the older list is not written back
    batch = turns("c1", user(first)) + days_later(3, turns("c2", user(later)))
    assert_changes_nothing(batch, after)


@pytest.mark.parametrize(
    ("first", "later", "who", "news"),
    [
        (
            "helen is my supervisor, she's great",
            "helen got me an extension on the thesis deadline, it's now the 30th",
            "my supervisor",
            "extension",
        ),
        ("Marek is our team lead", "Marek moved the standup to 10am", "team lead", "10am"),
        (
            "Kasia is our shift manager",
            "Kasia moved the stocktake to friday",
            "shift manager",
            "stocktake",
        ),
        (
            "Bea is my editor",
            "Bea pushed the deadline back, it's the 20th now",
            "my editor",
            "20th",
        ),
    ],
)
def test_r8_news_of_a_person_keeps_who_they_are(
    first: str, later: str, who: str, news: str
) -> None:
    # "Helen got me an extension ..." replaced "Helen is my supervisor": news of someone is
    # not a change of who they are.
    lines = _entries(_updated(first, later))
    assert any(who in line for line in lines), lines
    assert any(news in line for line in lines), lines


@pytest.mark.parametrize(
    ("first", "later", "what", "new"),
    [
        (
            "Jen does the school run on tuesdays and thursdays",
            "jen's doing mondays and wednesdays now",
            "school run",
            "mondays and wednesdays",
        ),
        (
            "Priya runs the deploys on fridays",
            "priya's doing them on thursdays now",
            "deploys",
            "thursdays",
        ),
        (
            "Ana does the bank run on fridays",
            "ana's doing it on thursdays now",
            "bank run",
            "thursdays",
        ),
    ],
)
def test_r8_an_update_of_a_value_keeps_what_the_value_is_of(
    first: str, later: str, what: str, new: str
) -> None:
    # "Jen is doing mondays and wednesdays now" was written in place of "Jen does the school
    # run on tuesdays and thursdays": what she does on those days was lost.
    lines = _entries(_updated(first, later))
    assert len(lines) == 1, lines
    assert what in lines[0] and new in lines[0], lines


@pytest.mark.parametrize(
    ("said", "person", "other"),
    [
        (
            "mia has a peanut allergy. the dishwasher floods if you overload it, the fix is to "
            "run it half full",
            "peanut allergy",
            "dishwasher",
        ),
        (
            "ben is vegetarian. the kiln cracked the pots because we fired too fast",
            "vegetarian",
            "kiln",
        ),
        (
            "the boiler cut out because the pressure dropped. mia has a peanut allergy. topping "
            "it up to 1.5 bar fixed it",
            "peanut allergy",
            "boiler",
        ),
        (
            "the glaze crawled because the bisque was dusty. chloe is allergic to latex. turns "
            "out the gloves caused her rash",
            "allergic to latex",
            "glaze",
        ),
        (
            "helen is my supervisor. she's great. the fix for the vpn was reinstalling the client",
            "my supervisor",
            "vpn",
        ),
        (
            "the deploy failed because the cert expired. marek is our team lead. the fix was "
            "renewing it",
            "team lead",
            "cert expired",
        ),
        ("we switched the till to square last month. also ben is vegetarian", "vegetarian", "till"),
    ],
)
def test_r6_unrelated_sentences_of_one_message_are_kept_apart(
    said: str, person: str, other: str
) -> None:
    # A lesson's cue in one sentence joined the sentence before or after it to the lesson, so
    # a person's allergy ended up inside a lesson, under the lesson's section.
    index = index_after(review(turns("c1", user(said))))
    lines = _entries(index)
    assert not any(person in line and other in line for line in lines), lines
    assert any(person in line for line in lines) and any(other in line for line in lines), lines
    assert_changes_nothing(turns("c1", user(said)), index)


def test_r6_a_fix_said_after_an_aside_stays_with_its_lesson() -> None:
    # Kept apart from the aside, the fix goes with the lesson before it, not lost alone.
    said = (
        "the deploy failed because the cert expired. marek is our team lead. the fix was "
        "renewing it"
    )
    lines = _entries(index_after(review(turns("c1", user(said)))))
    assert any("cert expired" in line and "renewing it" in line for line in lines), lines


@pytest.mark.parametrize(
    ("said", "together"),
    [
        ("The glaze kept crawling. Turns out the bisque was dusty.", ("crawling", "bisque")),
        (
            "The card reader kept dropping out. The microwave was knocking out the wifi; moving "
            "the reader fixed it.",
            ("dropping out", "microwave"),
        ),
        ("Kofi joined as our SRE. He reports to Marek.", ("SRE", "Marek")),
        ("mia is 7. she does piano on thursdays", ("7", "piano")),
    ],
)
def test_r6_sentences_that_belong_together_are_still_one_entry(
    said: str, together: tuple[str, str]
) -> None:
    # What keeps unrelated sentences apart leaves a symptom with its cause, and a pronoun
    # with the one it stands for.
    lines = _entries(index_after(review(turns("c1", user(said)))))
    assert any(all(part in line for part in together) for line in lines), lines


@pytest.mark.parametrize(
    ("said", "now"),
    [
        (
            (
                "jake and chloe do the saturday shifts",
                "ruby's replaced chloe on saturdays",
                "tom's replaced jake on saturdays",
            ),
            ("tom", "ruby"),
        ),
        (
            (
                "ana and bea do the sunday shifts",
                "carl's replaced bea on sundays",
                "dana's replaced ana on sundays",
            ),
            ("dana", "carl"),
        ),
        (
            (
                "jake and chloe do the saturday shifts",
                "ruby's replaced chloe on saturdays",
                "chloe's replaced ruby on saturdays",
            ),
            ("jake", "chloe"),
        ),
    ],
)
def test_r8_a_list_swapped_twice_is_not_written_back_when_read_again(
    said: tuple[str, ...], now: tuple[str, str]
) -> None:
    # Found by the re-audit of the list swaps: after two swaps (or a swap and its undoing), the
    # three messages read again as one batch wrote the list in between back, or the first swap
    # as said.
    batch: list[Turn] = []
    index: str | None = None
    for n, text in enumerate(said):
        given = days_later(3 * n, turns(f"c{n + 1}", user(text)))
        batch += given
        out = review(given, index=index)
        index = index_after(out, index)
    assert index is not None
    lines = _entries(index)
    # (names are spelled with capitals once read as people: "Tom and Ruby")
    assert len(lines) == 1 and all(name in lines[0].lower() for name in now), lines
    assert_changes_nothing(batch, index)
