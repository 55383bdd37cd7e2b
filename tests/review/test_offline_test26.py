"""The offline reviewer (R6, R8, issue 11): faults found when test26 became development data
(the thirtieth round), each phrased again in other settings: an update that rewrote a whole
entry and lost what the entry said of other people and things, an entry outdated by a
statement about something else, a retirement that took a whole sentence with it, and the
kept secret (a pre-shared key).

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
)
from tests.review.test_offline import user as said
from tests.review.test_offline_reading import _entries as entries
from tests.review.test_offline_test25 import _then


@pytest.mark.parametrize(
    ("before", "after", "stays", "new"),
    [
        (
            "trainees at the moment: Megan Shaw (T permit, about 300 birds), Ravi Mistry "
            "(T permit, about 150), and Holly Bird (T permit, just started)",
            "Megan's C permit came through from the BTO yesterday! Megan Shaw has her C permit.",
            ["Ravi Mistry"],
            "C permit",
        ),
        (
            "our drivers: Ana Costa (van 1, early shift), Ben Okafor (van 2, late shift), "
            "and Chris Lamb (van 3, weekends)",
            "Ana got her HGV licence this week!",
            ["Ben Okafor", "Chris Lamb"],
            "HGV licence",
        ),
        (
            "equipment: nets from Ecotone, spring balances from Pesola, kept in the green kit "
            "box at the ringing hut",
            "We've bought a digital scale, an Ohaus, Pesolas only for the big birds now.",
            ["Ecotone"],
            "Ohaus",
        ),
    ],
)
def test_an_update_keeps_what_the_entry_says_of_others(
    before: str, after: str, stays: list[str], new: str
) -> None:
    """An update of one person or thing of an entry that names others ("Megan's C permit came
    through" of a list of three trainees) leaves what it says of the others (the trainees'
    list was rewritten whole and two of them lost; the other two cases guard the same against
    other phrasings). Read again, nothing changes."""
    first = turns("c1", said(before), bot("Noted."))
    index = index_after(review(first))
    second = days_later(9, turns("c2", said(after)))
    later = _then(index, second)
    for name in stays:
        assert any(name in e for e in entries(later)), later
    assert any(new in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


@pytest.mark.parametrize(
    ("before", "after", "stays"),
    [
        (
            "Well Sunday School is at 9:45, morning worship at 11, and we still have a "
            "Sunday night service at 6 though it's mostly the faithful few.",
            "The church voted to quit the Sunday night service. We're going to do small "
            "groups in homes on Sunday evenings instead, first and third Sundays",
            ["9:45"],
        ),
    ],
)
def test_an_entry_about_more_than_what_changed_stays(
    before: str, after: str, stays: list[str]
) -> None:
    """An entry the update seems to outdate, whose names and values neither the update nor
    its message touch ("Sunday School is at 9:45" of "small groups on Sunday evenings
    instead"), stays: it was removed with the entry the update replaced."""
    first = turns("c1", said(before), bot("Noted."))
    index = index_after(review(first))
    second = days_later(10, turns("c2", said(after), bot("Understood.")))
    later = _then(index, second)
    for value in stays:
        assert any(value in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


@pytest.mark.parametrize(
    ("before", "after", "stays", "gone"),
    [
        (
            "Wednesday is Skint club night, Tuesday is the pub quiz, quizmaster is Big Dave "
            "from security.",
            "Skint's been axed, numbers dropped to like 40 on a good night. we're trying a "
            "live music night on Wednesdays instead, local bands",
            ["Big Dave", "pub quiz"],
            "Skint club night",
        ),
        (
            "Wednesday is quiz night with Big Dave, Friday is karaoke, Sunday is the carvery.",
            "karaoke's been binned, nobody came after Christmas.",
            ["Big Dave", "carvery"],
            "Friday is karaoke",
        ),
        (
            "Mondays is the beginners class, Thursday is sparring, the coach is Tom Reilly.",
            "the beginners class is cancelled for good, nobody signed up",
            ["Tom Reilly", "sparring"],
            "beginners class",
        ),
    ],
)
def test_a_retirement_takes_only_the_part_that_names_it(
    before: str, after: str, stays: list[str], gone: str
) -> None:
    """A thing retired from one sentence of several parts ("Skint's been axed" of "Wednesday
    is Skint club night, Tuesday is the pub quiz, ...") takes only the part naming it: the
    whole sentence went."""
    first = turns("c1", said(before), bot("Noted."))
    index = index_after(review(first))
    later = _then(index, days_later(9, turns("c2", said(after))))
    for value in stays:
        assert any(value in e for e in entries(later)), later
    # (an entry may say that it ended: "No longer beginners class")
    assert not any(gone in e and "No longer" not in e for e in entries(later)), later


@pytest.mark.parametrize(
    ("message", "value"),
    [
        ("PSK for the site-to-site tunnel is {v} - do not share outside", "Harbour@" + "Vpn2031"),
        ("the wifi key is {v}, it's on the router too", "Trout-" + "Lake-88x"),
        ("pre-shared key for the branch office: {v}", "Kx9#" + "mountain4"),
    ],
)
def test_a_shared_key_told_with_its_value_is_a_secret(message: str, value: str) -> None:
    """A pre-shared or network key told with its value is a secret like a password (R8): it
    was kept, its name not being one of a secret's."""
    batch = turns("c1", said(f"All staff use FortiClient. {message.format(v=value)}"), bot("Ok."))
    index = index_after(review(batch))
    assert value not in index, index
    assert any("FortiClient" in e for e in entries(index)), index
