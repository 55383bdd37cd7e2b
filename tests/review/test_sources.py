"""The one source rule (R6, H2) shared by the offline and model reviewers and the runner."""

from __future__ import annotations

import pytest

from reverie.review.sources import (
    MISSING_SOURCE,
    SOURCE_OUT_OF_BATCH,
    SOURCE_UNRELATED,
    BatchSources,
    is_link_line,
    said_words,
)
from reverie.review.types import Turn

SAID = {
    4: "I prefer tea, two sugars.",
    5: "The deploys moved to Thursday.",
    7: "Sorry, I meant Tuesday.",
}
TURNS = [Turn("c1", p, "user", "sam", SAID[p], 0.0) for p in (4, 5, 7)]  # 6 is a tool log


@pytest.mark.parametrize(
    "text",
    [
        "Sam prefers tea. (source: c1#4-5)",
        "Deploys moved to Tuesday. (source: c1#5-8)",  # spans the tool log at 6
        "Tea for Sam, deploys on Tuesday. (source: c1#4-5) (source: c1#7-8)",  # two sources
        "More: [[memory/decisions.md]]",
        "[[memory/people-preferences.md]]",
    ],
)
def test_admissible(text: str) -> None:
    assert BatchSources(TURNS).problem(text) is None


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Sam prefers tea.", MISSING_SOURCE),
        ("(source: c1#4-5) Sam prefers tea.", MISSING_SOURCE),  # must end with it
        ("Sam prefers tea. (source: c2#4-5)", SOURCE_OUT_OF_BATCH),
        ("Sam prefers tea. (source: c1#3-5)", SOURCE_OUT_OF_BATCH),
        ("Sam prefers tea. (source: c1#7-9)", SOURCE_OUT_OF_BATCH),
        ("Sam prefers tea. (source: c1#5-5)", SOURCE_OUT_OF_BATCH),
        ("Sam prefers tea. (source: c1#6-7)", SOURCE_OUT_OF_BATCH),  # only the tool log
        ("Sam prefers tea, see [[memory/x.md]] for the long story of why", MISSING_SOURCE),
        # Cited messages that share no word with the entry: it did not come from there.
        ("Sam drives a blue van. (source: c1#4-5)", SOURCE_UNRELATED),
        ("Sam prefers tea. (source: c1#4-5) (source: c1#5-6)", SOURCE_UNRELATED),
        ("It is. (source: c1#4-5)", SOURCE_UNRELATED),  # function words say nothing
    ],
)
def test_refused(text: str, code: str) -> None:
    problem = BatchSources(TURNS).problem(text)
    assert problem is not None and problem.code == code and problem.message


def test_link_lines() -> None:
    assert is_link_line("More: [[memory/decisions.md]]")
    assert is_link_line("- See also [[memory/a.md]], [[memory/b.md]]")
    assert not is_link_line("Sam prefers tea.")
    assert not is_link_line("The deploy runbook is long and lives in [[memory/deploys.md]] now")


def test_said_words_meet_as_the_judge_reads_them() -> None:
    # Letters and digits only, function words out, a plural "s" cut, three characters or more.
    assert said_words("We use Kuehne+Nagel for the vans (source: c1#0-1)") == {
        "use",
        "kuehne",
        "nagel",
        "van",
    }
    assert not said_words("It is what it is.")


def test_a_value_no_cited_message_states_is_not_grounded() -> None:
    """R5, O1: a model reviewer that writes a value from tool output it never saw, or from a
    group chat, and cites a message that only shares words with it, is caught by the number:
    every number an entry states is stated by a message it cites (a word up to twelve counts,
    a date or a year may come from when the message was said)."""
    said = {
        0: "The ferry runs 9 till 6 in summer.",
        1: "we have three slipways, and the crane lifts 12 tonnes",
    }
    sources = BatchSources(Turn("c1", p, "user", "sam", t, 0.0) for p, t in said.items())
    assert sources.grounded("The ferry runs 9 till 6 in summer. (source: c1#0-1)")
    assert sources.grounded("There are 3 slipways; the crane lifts 12 tonnes. (source: c1#1-2)")
    assert sources.grounded("On 2026-05-02 the ferry ran 9 till 6 in summer. (source: c1#0-1)")
    assert not sources.grounded("The ferry stops at 5 in summer. (source: c1#0-1)")
    assert not sources.grounded("The crane lifts 14 tonnes at the slipways. (source: c1#1-2)")


def test_a_name_no_reviewed_message_says_is_not_grounded() -> None:
    """O1: a name from a group chat the runner never showed, cited to a direct message that
    shares a word with it, is caught by the name: every name an entry gives was said in the
    reviewed messages of the conversation it cites (any of them: a model may cite the later
    one), or is who said them."""
    said = {
        0: "our open day is Sunday 5 July, free entry",
        1: "Okay, noted.",
        2: "and Priya runs the tea tent again",
    }
    sources = BatchSources(Turn("c1", p, "user", "maggie", t, 0.0) for p, t in said.items())
    assert not sources.grounded("Lily is bringing Marcus to the open day. (source: c1#0-1)")
    assert sources.grounded("Open day is Sunday 5 July, free entry. (source: c1#0-1)")
    assert sources.grounded("Maggie: the open day has free entry. (source: c1#0-1)")
    assert sources.grounded("Maggie: Priya runs the tea tent on the open day. (source: c1#2-3)")
    # a name said in another reviewed message of the conversation than the one cited
    assert sources.grounded(
        "Priya runs the tea tent at the open day, Sunday 5 July (source: c1#0-1)"
    )


def test_an_entry_that_quotes_output_pasted_into_a_message_is_caught() -> None:
    """R5: output pasted into a message (a report's columns, settings, a log) is not read by
    the offline reviewer; a model's entry that quotes it, in one line with the prose around
    it, is caught by its words: three in a row of such a line, or all of a line of two."""
    said = {
        0: "till is on Square now. here's last night's summary\n"
        "Gross sales   £842.10   Refunds   £0.00\nqueue=12 sent=0 last_error=402",
        1: "and we close at 9 on Fridays",
    }
    sources = BatchSources(Turn("c1", p, "user", "lola", t, 0.0) for p, t in said.items())
    assert sources.quotes_output(
        "Lola said: till is on Square now. here's last night's summary Gross sales £842.10 "
        "Refunds £0.00 (source: c1#0-1)"
    )
    assert sources.quotes_output(
        "The reminders show queue=12 sent=0 last_error=402 (source: c1#0-1)"
    )
    # the prose of the same message, and another message, quote nothing
    assert not sources.quotes_output("Lola: the till is on Square now. (source: c1#0-1)")
    assert not sources.quotes_output("We close at 9 on Fridays. (source: c1#1-2)")


def test_an_entry_that_only_reports_what_a_tool_printed_is_caught() -> None:
    """R5: the assistant's message right after a message not given (tool output) reports that
    output; an entry citing only such messages must hold something beyond it (a habit or a
    cause, no identifier or reading), the rule the offline reviewer reads them by."""
    turns = [
        Turn("c1", 0, "user", "mei", "what's on saturday?", 0.0),
        # position 1 is the booking system's output, not given to review
        Turn("c1", 2, "assistant", None, "Saturday has the Osei party for 10 at 2:30.", 0.0),
        Turn("c1", 3, "user", "mei", "parties always get the big room", 0.0),
    ]
    sources = BatchSources(turns)
    assert sources.reports_output(
        "The assistant said: Saturday has the Osei party for 10 at 2:30. (source: c1#2-3)"
    )
    # what the user says is read as usual, also in a range that takes the report in
    assert not sources.reports_output("Mei: parties always get the big room (source: c1#3-4)")
    assert not sources.reports_output("Parties get the big room. (source: c1#2-4)")
