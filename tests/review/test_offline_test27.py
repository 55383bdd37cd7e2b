"""The offline reviewer (R6, R8, issue 11): faults found when test27 became development data
(the thirty-first round), each phrased again in other settings: bank details, a policy number
and a booking reference it kept, a question told as "I always forget if ...", a to-do dictated
after a lesson, a lesson whose cause and fix were cut apart and then outdated by the next
lesson, an entry moved within its section by an idle re-run, and a switch that rewrote a whole
entry where one name in it changed.

The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reverie.review.offline import OfflineReviewer, _without_round_trips
from reverie.review.sentences import clean, sentences
from reverie.review.statements import Statement, read
from tests.review.corpus_eval import review_conversation
from tests.review.corpus_format import half, load
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
    ("message", "value", "kept"),
    [
        (
            "we bank with Monzo for the business. my account is 04-00-04 / 3" + "1926819",
            "31926819",
            "Monzo",
        ),
        (
            "club banks with Westpac Parramatta, BSB 032-" + "001 account 4471" + "82",
            "447182",
            "Westpac",
        ),
        (
            "Home insurance is with Aviva, policy HX-5521" + "0987, renews in March.",
            "HX-55210987",
            "Aviva",
        ),
        (
            "Flights are with Aer Lingus to Boston, booking ref 7KQ" + "2ZD.",
            "7KQ2ZD",
            "Aer Lingus",
        ),
    ],
)
def test_bank_details_policy_numbers_and_booking_references_are_not_kept(
    message: str, value: str, kept: str
) -> None:
    """A bank account told with its number (after "my account is", or beside a BSB), an
    insurance policy's number and a booking reference open money or a booking to whoever
    quotes them: they never reach memory (R8), and what else the message says still does."""
    index = index_after(review(turns("c1", said(message), bot("Noted."))))
    assert value not in index.replace(" ", "").replace("-", "") and value not in index, index
    assert any(kept in e for e in entries(index)), index


@pytest.mark.parametrize(
    "text",
    [
        "our insurer is Hiscox, policy covers the camera kit",
        "Our account manager at Sysco is Dana Reyes.",
        "the policy renews on 1 May",
        "We account for about 40% of their orders.",
    ],
)
def test_a_policy_or_an_account_named_without_its_number_is_a_fact(text: str) -> None:
    assert isinstance(read(text, role="user", speaker="Sam"), Statement)


@pytest.mark.parametrize(
    "message",
    [
        "i always forget if its times 0.85 for female",
        "I can never remember whether the lease is 12 or 18 months",
        "I forgot if the skip comes on Thursdays",
    ],
)
def test_not_knowing_whether_is_a_question(message: str) -> None:
    """ "I always forget if it's times 0.85" asks, as "I wonder whether" does: it is not kept."""
    assert not isinstance(read(message, role="user", speaker="Sam"), Statement)


def test_a_to_do_dictated_after_a_lesson_is_not_kept_with_it() -> None:
    """Dictation runs on with no stop: a to-do said after a cause with "also" ("... because the
    fields need them also I need to buy more batteries remind me") is not part of what is kept."""
    message = (
        "dictating on the bus sorry um the choir rehearses on Tuesdays at seven because the hall "
        "is booked on Mondays also I need to buy more folders for the altos remind me"
    )
    index = index_after(review(turns("c1", said(message))))
    assert any("Tuesdays" in e for e in entries(index)), index
    assert "folders" not in index, index


def test_a_lesson_keeps_its_cause_and_fix_and_the_next_lesson_does_not_outdate_it() -> None:
    """ "Lesson learnt the hard way." then what happened, then "What worked in the end: ..." is
    one lesson: the cause was cut from the fix. A second lesson a week later, with its own
    "Fix:", outdated the first (both read "Fix" as a name)."""
    first = turns(
        "c1",
        said(
            "lesson learnt the hard way. Foxes dug up every single tulip bulb in the front beds "
            "over two nights. What worked in the end: chicken wire, 25mm mesh, pegged flat over "
            "every bulb bed. Fix is in the allotment handbook now"
        ),
        bot("Chicken wire on every bulb bed, noted."),
    )
    index = index_after(review(first))
    lesson = [e for e in entries(index) if "Foxes" in e]
    assert lesson and "chicken wire" in lesson[0], index
    second = days_later(
        7,
        turns(
            "c2",
            said(
                "second lesson: mice got into the seed store. Fix: Omar put every packet in "
                "a steel tin with a lid."
            ),
        ),
    )
    later = _then(index, second)
    assert any("Foxes" in e and "chicken wire" in e for e in entries(later)), later
    assert any("steel tin" in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


def test_an_entry_removed_and_added_again_as_it_was_is_left_alone() -> None:
    """An idle re-run that removed an entry and added it back, unchanged and under the same
    section, moved it to the end of that section: memory changed though nothing was new."""
    line = "We fly with KLM. (source: c1#0-1)"
    index = {line: "Decisions", "Budget is £2k.": "Decisions"}  # each given entry's section
    round_trip = [
        {"action": "remove", "old": line},
        {"action": "add", "section": "Decisions", "text": line},
    ]
    assert _without_round_trips(round_trip, index) == []
    moved = [
        {"action": "remove", "old": line},
        {"action": "add", "section": "Project state", "text": line},
    ]
    assert _without_round_trips(moved, index) == moved  # another section: a real change
    edited = [
        {"action": "remove", "old": line},
        {"action": "add", "section": "Decisions", "text": "We fly with Aer Lingus."},
    ]
    assert _without_round_trips(edited, index) == edited


@pytest.mark.parametrize(
    ("before", "after", "new", "stays", "old"),
    [
        (
            "Gran takes warfarin, wears compression socks on the coach, and sees Dr Ng at "
            "Elm Road surgery every month.",
            "the GP has switched Gran from warfarin to apixaban.",
            "apixaban",
            ["compression socks", "Elm Road"],
            "warfarin",
        ),
        (
            "The accounts are kept in Xero, Priya does the payroll on the 25th, and the "
            "bank feed comes from Starling.",
            "we moved the books from Xero to QuickBooks last week",
            "QuickBooks",
            ["payroll", "Starling"],
            "Xero",
        ),
    ],
)
def test_a_switch_of_one_thing_keeps_what_else_the_entry_says(
    before: str, after: str, new: str, stays: list[str], old: str
) -> None:
    """ "Switched Gran from warfarin to apixaban" of an entry that also says where she sees her
    doctor and what she wears on the coach writes the new name in: the whole entry was
    replaced by the switch and the rest was lost."""
    first = turns("c1", said(before), bot("Noted."))
    index = index_after(review(first))
    second = days_later(8, turns("c2", said(after)))
    later = _then(index, second)
    assert any(new in e for e in entries(later)), later
    for value in stays:
        assert any(value in e for e in entries(later)), later
    assert not any(old in e and new not in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


@pytest.mark.parametrize("text", ["Budget remains same.", "Fees stay same."])
def test_saying_that_something_stays_the_same_keeps_nothing(text: str) -> None:
    assert read(text, role="user", speaker="Sam") == "no durable fact"


def test_a_switch_of_one_tool_of_a_listed_stack_keeps_the_others() -> None:
    """ "moved bookings from mindbody to momence" of an entry listing four tools writes the new
    one in: the switch replaced the whole list with itself, and Mailchimp and Squarespace were
    lost."""
    first = turns(
        "c1",
        said(
            "our kit: booking system Mindbody, payments through Stripe, newsletter on "
            "Mailchimp, website on Squarespace"
        ),
        bot(
            "Noted: Mindbody for bookings, Stripe for payments, Mailchimp for the newsletter, "
            "Squarespace for the site."
        ),
    )
    index = index_after(review(first))
    second = days_later(
        9,
        turns(
            "c2",
            said("moved bookings from mindbody to momence, mindbody pricing went silly."),
            bot("Momence for bookings now."),
        ),
    )
    later = _then(index, second)
    assert any("momence" in e.lower() for e in entries(later)), later
    for tool in ("Stripe", "Mailchimp", "Squarespace"):
        assert any(tool in e for e in entries(later)), later
    assert not any("Mindbody" in e and "momence" not in e.lower() for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


@pytest.mark.parametrize(
    "text",
    [
        "Meet Tomás, our new volunteer coordinator.",
        "say hi to Priya, my sister",
        "meet Ola, our GP",
    ],
)
def test_someone_presented_to_the_listener_is_kept_with_who_they_are(text: str) -> None:
    """ "Meet Raúl, our new development director" says who Raúl is, as "Raúl is our new
    development director" does; it was read as an order to the listener and dropped."""
    found = read(text, role="user", speaker="Kim")
    assert isinstance(found, Statement), found
    name = text.split(",")[0].split()[-1]
    assert found.text.startswith(f"{name} is "), found.text


@pytest.mark.parametrize(
    "conversation",
    [
        "t27-grant-writer-15",  # an entry removed and added back in its section
        "t27-melbourne-garden-8",  # a lesson's cause, added when read again
        "t27-retired-travel-8",  # an older statement read again outdated a fuller entry
        "t26-dietitian-private-practice-13",  # a value fix read again went to another entry
        "t26-super-queens-10",  # the same, of "6 hours"
        "t26-netball-league-organiser-5",  # "Noted: no-show fine ..." read as "show fine ..."
    ],
)
def test_an_idle_rerun_of_these_development_conversations_changes_nothing(
    conversation: str, tmp_path: Path
) -> None:
    """Each of these conversations of the development sets (R6: nothing new changes nothing)
    changed memory when review was given every turn again after its sessions were reviewed."""
    conv = next(c for c in load(half(conversation)) if c.id == conversation)
    result = review_conversation(conv, tmp_path / "home", OfflineReviewer)
    assert result.idle_changes == []


@pytest.mark.parametrize(
    ("conversation", "fact"),
    [("t27-grant-writer-1", "Renee & Riverbend"), ("t26-language-school-berlin-1", "Katrin")],
)
def test_an_update_written_into_an_entry_keeps_who_said_it(
    conversation: str, fact: str, tmp_path: Path
) -> None:
    """An update written into an introduction ("Renee: I'm the (only) grant writer at
    Riverbend ...") kept its words in the first person but dropped the name before them: the
    entry said "I'm the (only) grant writer ..." of no one."""
    conv = next(c for c in load(half(conversation)) if c.id == conversation)
    result = review_conversation(conv, tmp_path / "home", OfflineReviewer)
    held = [n for _, f, n, _ in result.kept if f.text.startswith(fact)]
    assert held and held[0] == 1, [e.text for e in result.entries]


@pytest.mark.parametrize(
    "text",
    ["Tomás is our volunteer coordinator.", "Zoë does the Saturday shift.", "Léa is my daughter."],
)
def test_a_name_with_an_accent_is_a_name(text: str) -> None:
    """ "Tomás is our volunteer coordinator" was read as about no one (the name's pattern knew
    only unaccented letters) and dropped, where "Tomas is ..." was kept."""
    assert isinstance(read(text, role="user", speaker="Kim"), Statement)


@pytest.mark.parametrize(
    ("before", "after", "gone"),
    [
        (
            "We sell on Deliveroo and Just Eat, collection only for the big platters.",
            "we took ourselves off Deliveroo, 35% commission was daylight robbery",
            "Deliveroo",
        ),
        (
            "We've put in a bid to the Arts Council for the summer festival.",
            "And we're withdrawing the Arts Council bid, the town is funding the festival now.",
            "Arts Council",
        ),
        (
            "Our away fixtures this season: Harrogate in March and Ripon in May.",
            "Money's tight, so Harrogate is off the schedule. Ripon only.",
            "Harrogate",
        ),
        (
            "Our bass player is Kwame Mensah, and Ines Duarte does the vocals.",
            "Kwame pulled out, he got a cruise ship contract and can't do both.",
            "Kwame",
        ),
        (
            "Our receptionist is Marta Reyes, she's at the front desk 8 to 4.",
            "Staff news: Marta's last day was Friday, she's moving to Spain.",
            "Marta",
        ),
    ],
)
def test_these_ways_of_saying_something_ended_retire_it(before: str, after: str, gone: str) -> None:
    """ "took ourselves off", "withdrawing", "off the schedule", a person who "pulled out" and
    one whose "last day was Friday" end what they name; each was kept as a new statement and
    the old entry stayed."""
    first = turns("c1", said(before), bot("Noted."))
    index = index_after(review(first))
    second = days_later(9, turns("c2", said(after)))
    later = _then(index, second)
    ended = ("No longer", "no longer", "off the schedule", "pulled out", "last day", "off ")
    assert not any(gone in e and not any(w in e for w in ended) for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


def test_a_count_of_work_done_and_an_unknown_withdrawal_leave_a_bid_alone() -> None:
    """ "4 tabs done out of 9" is how far some work got: it wrote "9" into the bid's amount
    (£40k became £9k); and withdrawing a bid memory does not hold replaced the one it does."""
    first = turns(
        "c1",
        said(
            "We've sent a bid to the Garfield Weston Foundation, £40k over two years for the club."
        ),
        bot("Noted."),
    )
    index = index_after(review(first))
    second = days_later(
        9,
        turns(
            "c2",
            said("And we're withdrawing the Comic Relief bid, the council runs it now."),
            said("right, back to the budget sheet, 4 tabs done out of 9"),
        ),
    )
    later = _then(index, second)
    assert any("Garfield Weston" in e and "£40k" in e for e in entries(later)), later
    assert "£9k" not in later, later
    assert_changes_nothing([*first, *second], later)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Noted: no-show fee is now £25.", "no-show fee"),
        ("No-go zone for the kids is the car park.", "No-go zone"),
        ("No - we use Slack now.", "we use Slack"),
    ],
)
def test_a_word_that_opens_with_a_lead_keeps_it(text: str, kept: str) -> None:
    """ "no-show" opens with "no", which a reply leads with ("No, we use Slack"): the lead was
    cut at the hyphen and "show fee is now £25" kept."""
    assert any(kept in clean(s) for _, _, s in sentences(text)), text
