"""The offline reviewer (R6, issue 11) agrees with itself: what it made of a batch, it does not
change when given the batch again. Cases found by the idle check of the corpus
(``tests/review/corpus_eval.py``) on sets that became development data.

The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

import pytest

from tests.review.test_offline import (
    assert_changes_nothing,
    bot,
    days_later,
    index_after,
    review,
    turns,
    user,
)


@pytest.mark.parametrize(
    ("before", "update", "reply", "kept"),
    [
        (
            "insurance is with Sportscover, renewal's due 1 June",
            "sportscover emailed, they've brought the renewal forward to 20 May, something "
            "about aligning policies. need the instructor certs uploaded before then",
            "Renewal is now 20 May, instructor certificates to upload before that.",
            "Sportscover",
        ),
        (
            "the boiler service is done by Hartley Heating, booked for 14 March",
            "hartley rang, the boiler service got pushed to 2 April, their engineer is off sick",
            "Boiler service now 2 April.",
            "Hartley",
        ),
    ],
)
def test_a_reply_saying_less_of_an_update_just_made_leaves_it(
    before: str, update: str, reply: str, kept: str
) -> None:
    """An assistant's reply that gives the new value of an update the user just made, and
    leaves out a name the updated entry gives, is a read-back: the entry stays as the update
    made it, so the name is kept, and the batch given again changes nothing (it used to
    replace the entry with the reply, and, given again, add the user's message beside it)."""
    first = turns("c1", user(before), bot("Noted."))
    index = index_after(review(first))
    later = days_later(8, turns("c2", user(update), bot(reply)))
    after = index_after(review(later, index=index), index)
    entries = [line for line in after.split("\n") if line.startswith("- ")]
    assert len(entries) == 1, after
    assert kept.lower() in entries[0].lower(), after
    assert_changes_nothing(later, after)
