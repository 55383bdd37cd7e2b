"""The offline reviewer (R6, issue 11): faults found when test23 became development data (the
twenty-seventh round), each phrased again in other settings: an idle re-run that changed
memory, an introduction cut from what it introduces, a switch from a thing memory holds, and
a message that corrects itself.

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
            "insurance is with Hiscox, renewal's due 3 March",
            "hiscox emailed, they've brought the renewal forward to 17 February, something "
            "about new systems. need the risk assessment uploaded before then",
            "Renewal is now 17 February, risk assessment to upload before that.",
            "Hiscox",
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


@pytest.mark.parametrize(
    ("said", "held"),
    [
        (
            "hiya, I'm Dee, I run Puddleduck Nursery, we're a small forest school nursery in "
            "Hebden Bridge",
            ("Puddleduck Nursery", "Hebden Bridge"),
        ),
        (
            "Tariq Aziz here, practice manager at Northgate Dental, we're the NHS practice "
            "next to the station in Luton",
            ("Northgate Dental", "Luton"),
        ),
        (
            "so i'm Ana, i coach at Riverside Rowing, we are just a little club on the Wear in "
            "Durham",
            ("Riverside Rowing", "Durham"),
        ),
        (
            "hi, Marek Nowak, I run Oakfield Joinery, we're based in an old mill outside Todmorden",
            ("Oakfield Joinery", "Todmorden"),
        ),
    ],
)
def test_r6_we_are_a_after_a_name_says_what_the_name_is(said: str, held: tuple[str, ...]) -> None:
    """ "..., we're a small forest school nursery in Hebden Bridge" right after the nursery's
    name says what and where that nursery is: one entry holds the name and the place (it used
    to be cut off into an entry that says where "we" are, with nothing to say who "we" are)."""
    index = index_after(review(turns("c1", user(said), bot("Hi! What can I help with?"))))
    holders = [
        line
        for line in index.split("\n")
        if line.startswith("- ") and all(h.lower() in line.lower() for h in held)
    ]
    assert len(holders) == 1, index


def test_we_are_a_without_a_name_before_it_stands_alone() -> None:
    """A "we're a ..." clause after a part that names nothing still starts its own statement."""
    said = "i love a strong tea in the morning, we're a coffee family though"
    index = index_after(review(turns("c1", user(said))))
    assert not any("tea" in line and "coffee" in line for line in index.split("\n")), index


@pytest.mark.parametrize(
    ("before", "switch", "old", "new"),
    [
        (
            "PA is Ewan's Bose L1 rig, he brings it in his car",
            "we've replaced the Bose with a pair of Yamaha DXR10s, band fund paid for it",
            "Bose",
            "Yamaha",
        ),
        (
            "Gary's van is a white Transit with the logo on the side",
            "I've swapped the Transit for a Sprinter, more room for the ladders",
            "Transit",
            "Sprinter",
        ),
        (
            "Mum's car is a red Fiesta, we use it for the school run",
            "we've swapped the Fiesta for a Kia Niro, electric finally",
            "Fiesta",
            "Niro",
        ),
    ],
)
def test_a_switch_from_the_thing_memory_holds_replaces_it_whoever_it_is_said_of(
    before: str, switch: str, old: str, new: str
) -> None:
    """ "we've replaced the Bose with ..." points at the one Bose memory holds, also where its
    entry is said of someone or something else ("PA is Ewan's Bose"): the switch takes its
    place, and given again changes nothing."""
    index = index_after(review(turns("c1", user(before))))
    later = days_later(9, turns("c2", user(switch)))
    after = index_after(review(later, index=index), index)
    entries = [line for line in after.split("\n") if line.startswith("- ")]
    assert [e for e in entries if old in e and new not in e] == [], after
    assert any(new in e for e in entries), after
    assert_changes_nothing(later, after)


def test_a_switch_someone_else_made_leaves_an_entry_of_the_same_thing() -> None:
    """Another person's switch of "the Sage" is theirs: the office's Sage stays."""
    index = index_after(review(turns("c1", user("the office coffee machine is a Sage Barista"))))
    later = days_later(9, turns("c2", user("Tom replaced the Sage with a Jura at home")))
    after = index_after(review(later, index=index), index)
    assert "office coffee machine is a Sage Barista" in after, after


@pytest.mark.parametrize(
    ("first", "correction", "old", "new"),
    [
        (
            "the adults only build night is Wednesday 7pm at the hub",
            "hang on Kat's just corrected me, it's Thursdays, it moved in January",
            "Wednesday",
            "Thursday",
        ),
        (
            "choir practice is Tuesday 7.30 in the church hall",
            "wait no sorry, it's Mondays now, the hall's booked on Tuesdays",
            "Tuesday 7.30",
            "Monday",
        ),
    ],
)
def test_a_message_that_corrects_itself_updates_what_it_said(
    first: str, correction: str, old: str, new: str
) -> None:
    """A correction in the next message of the same person ("hang on ..., it's Thursdays")
    writes the new value into what they had just said."""
    batch = turns("c1", user(first), user(correction))
    index = index_after(review(batch))
    entries = [line for line in index.split("\n") if line.startswith("- ")]
    assert not [e for e in entries if old in e], index
    assert any(new in e for e in entries), index
    assert_changes_nothing(batch, index)


def test_an_apology_for_a_change_corrects_nothing_else_the_message_said() -> None:
    """ "sorry" said for a change ("flyer change, sorry!! ... we can't open till 7:30 now. last
    orders stays at 10:30") corrects no other sentence of the message: read again, the message
    changes nothing (a self-correction is said in the clause that corrects)."""
    first = turns(
        "c1", user("For the flyer: doors open 7pm, last orders at 10:30, we close at 11.")
    )
    index = index_after(review(first))
    later = days_later(
        7,
        turns(
            "c2",
            user(
                "flyer change, sorry!! the hall's let the early slot to a yoga group till "
                "quarter past seven so we can't open till 7:30 now. last orders stays at 10:30"
            ),
            bot(
                "Understood: opening moves from 7pm to 7:30 because of the yoga group, last "
                "orders still 10:30."
            ),
        ),
    )
    after = index_after(review(later, index=index), index)
    assert "7:30" in after, after
    assert_changes_nothing(later, after)
