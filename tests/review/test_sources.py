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
