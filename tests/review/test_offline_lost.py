"""The offline reviewer (R6, R8, issue 11): facts written and lost to a later update, and facts
neither a user's message nor the assistant's read-back of it kept (the thirty-fourth round,
studied on development data): an update that replaced a two-sentence entry whole where it spoke
of one sentence; a user's clause the learned second reading was kept from because the
assistant read it back, in words the rules keep nothing of; an idle re-run in which a
statement, read again, outdated what a later message read with it had said; and two
conversations held at the same time, where the earlier statement was read second and lost.

The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from reverie.review.offline import OfflineReviewer
from reverie.review.types import Turn
from tests.review.corpus_eval import review_conversation
from tests.review.corpus_format import load
from tests.review.test_offline import (
    assert_changes_nothing,
    bot,
    days_later,
    index_after,
    review,
    turns,
)
from tests.review.test_offline import user as said
from tests.review.test_offline_reading import _entries as entries
from tests.review.test_offline_test25 import _then


@pytest.mark.parametrize(
    ("before", "after", "stays", "new", "old"),
    [
        (
            "Our target race is the Leeds Half on 3 May, aiming for 1:50. Because of the "
            "traffic I only train early, 6 am at Roundhay Park.",
            "Small change, I'm training at Temple Newsam instead now, Roundhay Park got too busy.",
            "Leeds Half",
            "Temple Newsam",
            "Roundhay Park",
        ),
        (
            "The allotment show is on 9 August, I'm entering onions and dahlias. I water every "
            "evening from the butt by the shed.",
            "I water from the standpipe by the gate now, the butt by the shed cracked.",
            "onions",
            "standpipe",
            "every evening",
        ),
    ],
)
def test_an_update_of_one_sentence_keeps_the_other_sentences_of_the_entry(
    before: str, after: str, stays: str, new: str, old: str
) -> None:
    """Where no rule says which sentence of an entry an update outdates, the sentences that
    share a word with it (not the speaker's name, which the third person gives to each) are the
    ones: the race (or the onions) it does not speak of stays. Before, the update replaced the
    whole entry and the race was lost."""
    first = turns("c1", said(before))
    index = index_after(review(first))
    assert any(stays in e and old in e for e in entries(index)), index  # one entry, two sentences
    second = days_later(8, turns("c2", said(after)))
    later = _then(index, second)
    assert any(stays in e for e in entries(later)), later
    assert any(new in e for e in entries(later)), later
    assert not any(old in e and new not in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


@pytest.mark.parametrize(
    ("message", "reply", "kept"),
    [
        ("gym 6am mon wed fri", "Noted: gym at 6am Monday, Wednesday and Friday.", "gym"),
        ("Bordetella now yearly.", "Noted: Bordetella yearly.", "Bordetella"),
    ],
)
def test_a_read_back_the_rules_keep_nothing_of_leaves_the_second_reading_on(
    message: str, reply: str, kept: str
) -> None:
    """The learned second reading was left out of a message the assistant reads back in words
    of its own, so that what the user said would not be kept twice; but the rules keep nothing
    of a read-back as bare as "Noted: Bordetella yearly.", and then nothing was kept at all."""
    index = index_after(review(turns("c1", said(message), bot(reply))))
    assert sum(kept in e for e in entries(index)) == 1, index


def test_a_read_back_the_rules_keep_still_keeps_the_second_reading_out() -> None:
    """Where the rules keep the assistant's read-back, the user's clause is not read again by
    the model: one entry, the reply's, not two."""
    index = index_after(
        review(
            turns(
                "c1",
                said("auditors from Grant Thornton"),
                bot("Noted: the auditors are from Grant Thornton."),
            )
        )
    )
    held = [e for e in entries(index) if "Grant Thornton" in e]
    assert len(held) == 1 and "c1#1-2" in held[0], index


def test_a_statement_read_again_does_not_outdate_what_a_later_message_with_it_said(
    tmp_path: Path,
) -> None:
    """Two messages of one author are read as one text. Read again in an idle re-run, the first
    ("about me, ... I arrive at 7:30 and leave around 16:00", held already) outdated the entry
    the second had made (teaching labs on Wednesday afternoons), which it could not do when
    first read: the re-run changed memory though nothing was new (R6). A conversation of the
    development sets."""
    conv = next(c for c in load("test25") if c.id == "t25-chemistry-phd-12")
    result = review_conversation(conv, tmp_path / "home", OfflineReviewer)
    assert any("demonstrat" in e.text and "18" in e.text for e in result.entries)
    assert result.idle_changes == []


def _at(batch: list[Turn], *times: float) -> list[Turn]:
    return [replace(t, time=when) for t, when in zip(batch, times, strict=True)]


def test_two_conversations_held_at_once_each_keep_their_fact() -> None:
    """Two Slack DM threads of one user, a moment apart: the runner reads the one whose last
    message came first, so the later statement ("Postgres 16") is read before the earlier one
    ("tea"). Before, the tea preference was dropped as outdated by an entry said after it that
    shares nothing with it but its speaker (the CI run of stop 45 lost it)."""
    tea = _at(
        turns("d1", said("I prefer tea over coffee."), bot("Noted 0."), author="slack:U0SAM"),
        100.0,
        101.0,
    )
    pg = _at(
        turns(
            "d3",
            said("We decided to use Postgres 16 for the billing service."),
            bot("Noted 1."),
            author="slack:U0SAM",
        ),
        100.1,
        100.9,
    )
    batch = pg + tea
    index = index_after(review(batch))
    assert any("tea over coffee" in e for e in entries(index)), index
    assert any("Postgres 16" in e for e in entries(index)), index
    assert_changes_nothing(batch, index)


def test_an_update_in_a_conversation_held_at_the_same_time_still_outdates() -> None:
    """Read in the same order, a later statement that changes the earlier one still wins: the
    weekday of the deploys moved, whichever conversation was read first."""
    old = _at(
        turns("d1", said("We deploy on Fridays."), bot("Noted."), author="slack:U0SAM"),
        100.0,
        101.0,
    )
    new = _at(
        turns(
            "d3",
            said("We now deploy on Tuesdays instead of Fridays."),
            bot("Noted."),
            author="slack:U0SAM",
        ),
        100.1,
        100.9,
    )
    batch = new + old
    index = index_after(review(batch))
    held = entries(index)
    assert any("Tuesdays" in e for e in held), index
    assert not any("Fridays" in e and "Tuesdays" not in e for e in held), index
    assert_changes_nothing(batch, index)
