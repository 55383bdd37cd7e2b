"""The offline reviewer (R6, R8, issue 11): faults found when test25 became development data
(the twenty-ninth round), each phrased again in other settings: a withdrawn identity number
it kept, the two idle re-runs that changed memory, the retractions it missed, and progress and
small talk it kept.

The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

import pytest

from reverie.review.statements import Statement, read
from reverie.review.types import Turn
from tests.review.test_offline import (
    assert_changes_nothing,
    bot,
    days_later,
    index_after,
    review,
    turns,
    user,
)
from tests.review.test_offline_reading import _entries as entries


def _then(index: str, batch: list[Turn]) -> str:
    """``MEMORY.md`` once ``batch`` is reviewed against ``index`` (unchanged when review
    proposes nothing)."""
    out = review(batch, index=index)
    return index_after(out, index) if out.operations else index


@pytest.mark.parametrize(
    ("message", "value"),
    [
        ("her NHS number is 485 777 3456, wait, actually don't save that", "485 777 3456"),
        ("His passport number is 533412876. Actually don't write that down.", "533412876"),
        ("my national insurance number is QQ 12 34 56 C, don't keep that", "QQ 12 34 56 C"),
        ("his social security number is 078-05-1120", "078-05-1120"),
    ],
)
def test_an_identity_number_or_what_the_user_takes_back_is_not_kept(
    message: str, value: str
) -> None:
    """A person's identity number, and what the user asks not to be saved ("wait, actually
    don't save that"), never reach memory (R8); the message's other facts still do."""
    batch = turns("c1", user(f"Dad's insurance is with Aviva. {message}"), bot("Understood."))
    index = index_after(review(batch))
    assert value not in index and value.replace(" ", "") not in index, index
    assert any("Aviva" in e for e in entries(index)), index


@pytest.mark.parametrize(
    "text",
    [
        "Don't keep it in the van overnight.",
        "We keep it simple.",
        "we never store card numbers, the till does",
    ],
)
def test_keeping_words_that_take_nothing_back_are_not_withdrawals(text: str) -> None:
    assert read(text, role="user", speaker="Sam") != "secret"


@pytest.mark.parametrize(
    ("before", "after", "gone", "stays"),
    [
        (
            "We run a quiz every Friday, and a raffle at the open evening, £2 a strip.",
            "we're getting rid of the raffle, people complained about the prizes",
            "raffle",
            "quiz",
        ),
        (
            "We offer priority booking for members. Juniors train on Tuesdays.",
            "and we're dropping priority booking, can't honour it in summer anyway",
            "priority booking",
            "Tuesdays",
        ),
        (
            "Sunday morning line runs at Pat's house until we're off book. Tech week is in May.",
            "scrapping the Sunday line runs, two people turned up last time",
            "line runs",
            "May",
        ),
        (
            "Curry night is every Wednesday at the clubhouse. Bar opens at 6.",
            "Curry night is finished, the chef left and it never paid.",
            "Curry night",
            "Bar",
        ),
        (
            "The summer barbecue is in July on Tom's field. Our AGM is in March.",
            "the summer barbecue is off this year, Tom's sold the field",
            "barbecue",
            "AGM",
        ),
        (
            "Friday pool comp is a fiver entry. Darts league is on Mondays.",
            "pool comp is off as well, only four turning up",
            "pool comp",
            "Darts",
        ),
        (
            "We're planning a karaoke night on Fridays. Opening hours are 5 till late.",
            "and the Friday karaoke idea is dead too",
            "karaoke",
            "5 till late",
        ),
        (
            "There's a quick stock check of the freezers on the 1st. Deliveries come Thursdays.",
            "binning the freezer stock check on the 1st, it never matched the till anyway",
            "stock check",
            "Thursdays",
        ),
        (
            "Applications go first to our Planning Group (Cllrs Lee and Shah). Our clerk is "
            "Gwen Price.",
            "For the record, the Planning Group has been disbanded.",
            "Planning Group",
            "Gwen",
        ),
        (
            "We also put on an extra swim on Boxing Day. The lido opens at 7.",
            "sadly no Boxing Day swim this year or from now on, the council won't staff it",
            "Boxing Day",
            "7",
        ),
    ],
)
def test_a_thing_said_to_end_in_other_words_goes(
    before: str, after: str, gone: str, stays: str
) -> None:
    """Ways of saying that a thing ended that were read as facts (kept beside what they
    ended) or not read at all: "getting rid of", "dropping", "scrapping ..." with no subject,
    "X is finished" of a named day, "off this year", "off as well", "the X idea is dead",
    "binning", "disbanded", "no X from now on"."""
    first = turns("c1", user(before), bot("Noted."))
    index = index_after(review(first))
    assert any(gone.lower() in e.lower() for e in entries(index)), index
    second = days_later(7, turns("c2", user(after), bot("Okay.")))
    later = _then(index, second)
    assert not any(gone.lower() in e.lower() and not _says_it_ended(e) for e in entries(later)), (
        later
    )
    assert any(stays in e for e in entries(later)), later
    assert_changes_nothing(second, later)


def _says_it_ended(entry: str) -> bool:
    return any(w in entry.lower() for w in ("no longer", "getting rid", "dropping", "off", "no "))


@pytest.mark.parametrize(
    "text",
    [
        "we're dropping off the kids at nine",
        "the battery is dead",
        "Honestly, I'm exhausted",
        "Cancelling the Friday class costs us £50.",
        "Killing the lights after 11 is the rule.",
    ],
)
def test_words_of_ending_that_end_nothing_are_not_retirements(text: str) -> None:
    got = read(text, role="user", speaker="Sam")
    assert not (isinstance(got, Statement) and got.kind == "retire"), got


def test_a_retirement_a_person_makes_for_everyone_removes_the_teams_entry() -> None:
    """ "Hannah's deleted the Twitter account": a thing ended for everyone, not something
    Hannah gave up; the entry naming it goes, and the entry about Hannah stays (it was
    replaced by the retirement)."""
    first = turns(
        "c1",
        user(
            "Hannah posts on Mondays and Thursdays. We've got a Mastodon account too, mostly empty"
        ),
        bot("Noted."),
    )
    index = index_after(review(first))
    second = days_later(
        7, turns("c2", user("Hannah's deleted the Mastodon account, nobody was on it"))
    )
    later = _then(index, second)
    assert not any("Mastodon" in e for e in entries(later)), later
    assert any("Hannah posts on Mondays and Thursdays" in e for e in entries(later)), later


@pytest.mark.parametrize(
    "text",
    [
        "We are now at 212 of 420.",
        "I'm at chapter 12 of 40",
        "Doing the stocktake now, halfway thru the spirits.",
        "I am halfway with the new rota for the summer.",
    ],
)
def test_how_far_through_a_whole_is_progress(text: str) -> None:
    assert read(text, role="user", speaker="Sam") == "transient"


@pytest.mark.parametrize(
    "text",
    [
        "Priya would kill me",
        "I'm on hold with the bank for 40 min",
        "lol my dog just walked across the keyboard",
        "ALFIE'S JUST LOST HIS FIRST TOOTH",
        "Sun is finally out",
        "the heat is unreal",
    ],
)
def test_asides_of_the_moment_are_small_talk(text: str) -> None:
    assert read(text, role="user", speaker="Sam") == "small talk"


_HOURS = (
    user("Salon is open Tuesday until Saturday, 9 to 6. Wednesday we close at 1."),
    bot("Open Tuesday to Saturday 9-6, Wednesday half day."),
    user("Ah no, Saturday is until 4, not 6. Only Tuesday, Thursday, Friday until 6."),
    bot("Got it, Saturday closes at 4pm."),
)


def test_a_day_said_to_be_added_outdates_no_other_day() -> None:
    """ "From May we open also Monday, 10 to 4": a day more, not the days before replaced (the
    entry of the days a correction narrowed was replaced by it, and given again, the
    correction came back)."""
    first = turns("c1", *_HOURS)
    index = index_after(review(first))
    assert any("Tuesday, Thursday, Friday" in e for e in entries(index)), index
    second = days_later(
        9, turns("c2", user("From May we open also Monday, 10 to 4, because Jo is full time now."))
    )
    later = _then(index, second)
    assert any("Tuesday, Thursday, Friday" in e for e in entries(later)), later
    assert any("Monday" in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


def test_a_correction_that_narrows_days_changes_nothing_when_read_again() -> None:
    """The entry a correction rewrote cites a range that ends with it: read again, the
    correction is said already."""
    batch = turns("c1", *_HOURS)
    index = index_after(review(batch))
    assert_changes_nothing(batch, index)


def test_a_switch_written_already_is_not_added_again() -> None:
    """No entry names the old thing and one names the new: a switch read again (after a
    later message rewrote the entry it went into) adds nothing."""
    index = index_after(
        review(turns("c1", user("Theo coordinates volunteers now, signups are on a Google Sheet.")))
    )
    again = turns("c0", user("we switched from SignUpGenius to a Google Sheet, it wanted money"))
    out = review(again, index=index)
    assert not out.operations, out.operations


def test_a_person_gone_by_a_short_first_name_leaves_the_rest_of_the_entry() -> None:
    """ "kim moved to leeds": a first name of three letters names "Kim Ito"; only her part of
    the entry is replaced, and where swaps go stays (it was lost)."""
    first = turns("c1", user("Kim Ito runs the kitchen rota, swaps go through a WhatsApp group"))
    index = index_after(review(first))
    second = days_later(
        9,
        turns(
            "c2",
            user("kim moved to leeds :( theo brandt is rota coordinator now"),
            bot("Sorry to lose Kim! Theo Brandt is coordinator now."),
        ),
    )
    later = _then(index, second)
    assert any("WhatsApp group" in e and "Theo Brandt" in e for e in entries(later)), later
    assert not any("Kim Ito runs" in e for e in entries(later)), later


def test_a_roster_keeps_each_name_with_its_role() -> None:
    """A roster pasted as lines ("Brenda Kowalski - office mgr, does dispatch + billing",
    "Tomasz: head bartender"): each name stays with what they do (the names were cut off, or
    the lines not kept), and the heading before it ("my guys:") is no fact of its own."""
    batch = turns(
        "c1",
        user(
            "my crew:\n- Dana Whitfield - site foreman, 9 yrs w me\n- Omar Haddad: head "
            "joiner, Mon to Thu\n- Priti Shah - office mgr, does payroll + invoices"
        ),
        bot("Got it."),
    )
    index = index_after(review(batch))
    kept = entries(index)
    assert any("Omar Haddad" in e and "head joiner" in e for e in kept), index
    assert any("Priti Shah" in e and "office mgr" in e for e in kept), index
    assert not any(e.lower().startswith(("my crew", "sam's crew")) for e in kept), index
    assert_changes_nothing(batch, index)


@pytest.mark.parametrize(
    ("message", "speaker", "held"),
    [
        ("this is marisol ortega, i own Blue Ridge Pools", "marisol", "Blue Ridge Pools"),
        ("I am Kris (Krzysztof Nowak). I am manager at Tulley & Sons since 2019", "kris", "2019"),
    ],
)
def test_a_speaker_naming_themselves_first_is_kept_with_the_name(
    message: str, speaker: str, held: str
) -> None:
    """ "this is marisol ortega, i own ...": who is speaking, then what they do (nothing was
    kept); "I am Kris (Krzysztof Nowak)": the full name in brackets goes with the next fact
    about them (it was kept as "Kris is Kris (Krzysztof Nowak).")."""
    batch = turns("c1", user(message), bot("Nice to meet you!"), author=speaker)
    index = index_after(review(batch))
    assert any(held in e for e in entries(index)), index
    assert not any(e.startswith("Kris is Kris") for e in entries(index)), index


def test_praise_from_the_assistant_is_not_kept() -> None:
    batch = turns("c1", user("We open at 8 on weekdays."), bot("Your English is great, Kris."))
    index = index_after(review(batch))
    assert not any("English" in e for e in entries(index)), index


def test_a_thing_named_first_and_no_longer_used_goes() -> None:
    """ "And Connexxion we don't use anymore": the thing first, then that it is no longer
    used (nothing was read)."""
    first = turns("c1", user("Transport for events is always Flixbus charter coaches."))
    index = index_after(review(first))
    second = days_later(
        7,
        turns("c2", user("And Flixbus we don't use anymore, clients arrange their own buses now")),
    )
    later = _then(index, second)
    assert not any("Flixbus charter" in e for e in entries(later)), later


def test_a_reason_with_no_verb_after_an_ending_is_not_kept() -> None:
    """ "We stop working with Smaakmakers, two times late delivery this year": the reason is not
    a fact of its own ("Two times late delivery in 2026." was kept)."""
    first = turns("c1", user("Catering is always Bellweather Kitchen, £40 a head."))
    index = index_after(review(first))
    second = days_later(
        7,
        turns("c2", user("We stop working with Bellweather, three times late delivery this year.")),
    )
    later = _then(index, second)
    assert not any("late delivery" in e for e in entries(later)), later
    assert not any("Bellweather Kitchen, £40" in e for e in entries(later)), later


@pytest.mark.parametrize(
    ("before", "after", "kept"),
    [
        (
            "i work mon to fri, 9 till 5",
            "dropping fridays from next month, i want long weekends. so mon to thu now",
            "mon to thu",
        ),
        (
            "bookings come through Airbnb and the odd phone call",
            "we've come off Airbnb the fees were daylight robbery so it's our own website and "
            "email only now",
            "website and email",
        ),
    ],
)
def test_what_replaces_an_ending_in_the_same_message_is_kept(
    before: str, after: str, kept: str
) -> None:
    """A day dropped "from next month" is a change of days, not a thing that ended; and what
    follows why something ended, after "so", is how it goes now. (This round's first readings
    of "dropping" and of an ending run on without a comma lost both.)"""
    first = turns("c1", user(before), bot("Noted."))
    index = index_after(review(first))
    second = days_later(7, turns("c2", user(after)))
    later = _then(index, second)
    assert any(kept in e for e in entries(later)), later


def test_an_ending_replaced_by_a_plain_noun_is_not_written_into_the_old_entry() -> None:
    """ "Committee's binned the dinner. ... We'll do the prizes at the AGM": the AGM is not
    written over "dinner" in the old entry, a name only takes a name's place (with a short
    first name read as naming, "Annual prize-giving AGM's at the Portland Hotel" was
    written)."""
    first = turns(
        "c1", user("Annual prize-giving dinner's at the Grand Hotel in November, £30 a ticket.")
    )
    index = index_after(review(first))
    second = days_later(
        7,
        turns(
            "c2",
            user(
                "Committee's binned the dinner. Only twenty wanted tickets last year. We'll do "
                "the prizes at the AGM in the clubhouse."
            ),
        ),
    )
    later = _then(index, second)
    assert not any("AGM's at the Grand Hotel" in e for e in entries(later)), later
    assert any("prizes at the AGM" in e for e in entries(later)), later


def test_progress_said_with_how_the_body_feels_is_not_kept() -> None:
    """How the speaker feels after a comma is no reason of a statement before it when it is
    their body ("my back is destroyed"): the whole is small talk, progress included."""
    assert (
        read(
            "340 of the 600 books are on the new shelves now, my back is destroyed.",
            role="user",
            speaker="Mei",
        )
        == "small talk"
    )


def test_what_replaces_an_ending_is_kept_and_the_session_read_again_changes_nothing() -> None:
    """ "we stop with the printed A2 boards, the seating plan is only in the event app now":
    where a thing is now, said with "only", is kept (it was not); and that session given
    again alone removes nothing (the ending, finding no entry that names the boards any
    more, removed the closest one, "on-site printing only for late changes")."""
    first = turns(
        "c1",
        user(
            "We pre-print all badges the day before, the printers on site are only for late "
            "changes."
        ),
        bot("Noted: on-site printing only for late changes."),
        user("the seating plan we print on A2 boards at the entrance"),
    )
    index = index_after(review(first))
    second = days_later(
        30,
        turns(
            "c2",
            user(
                "we stop with the printed A2 boards, the seating plan is only in the event app "
                "now, guests find their table there"
            ),
        ),
    )
    later = _then(index, second)
    assert any("event app" in e for e in entries(later)), later
    assert not any("A2 boards at the entrance" in e for e in entries(later)), later
    assert_changes_nothing(second, later)


def test_an_ending_after_an_update_in_the_same_message_still_finds_its_entry() -> None:
    """An entry this message updated does not make the message look read before: "we're
    dropping the Teams option" still removes the entry about joining on Teams (a guard against
    idle re-runs, first written too wide, kept it)."""
    first = turns(
        "c1",
        user(
            "Committee meetings are the first Tuesday of the month, 7pm in the church hall. "
            "People can join on Teams too, we pay £10 a month for it"
        ),
        bot("First Tuesday, 7pm, church hall."),
    )
    index = index_after(review(first))
    assert any("Teams" in e for e in entries(index)), index
    second = days_later(
        30,
        turns(
            "c2",
            user(
                "meetings are moving to Wednesdays, Tom's got football on Tuesdays now. And we're "
                "dropping the Teams option, literally nobody used it."
            ),
        ),
    )
    later = _then(index, second)
    assert not any("Teams" in e for e in entries(later)), later
    assert_changes_nothing(second, later)
