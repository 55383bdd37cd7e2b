"""The offline reviewer (R6, R8, issue 11): what a message says beside what it changes or asks
(the thirty-sixth round, studied on development data): an update that says the rest stays
("moved site to Squarespace. same domain"); a clause before an ending ("we switched to Comotomo
bottles, sold the Dr Brown's"); a polite cue to keep what follows ("kindly also note ..."); a
heading that is a clause of its own ("Isle of Wight is booked: ..."); a newcomer welcomed
with who they are ("Welcome to Priya Venkatesan, new associate"); a clause that says what
follows from a change, not a change of it ("So Thursday is my speed day now"); "also she ..."
after a sentence about her; and the end of what a list's heading names.

The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

from reverie.review import offline
from tests.review.test_offline import assert_changes_nothing, bot, days_later, index_after, review
from tests.review.test_offline import turns as _turns
from tests.review.test_offline import user as said
from tests.review.test_offline_reading import _entries as entries
from tests.review.test_offline_test25 import _then


def turns(conv: str, *messages: tuple[str, str]) -> list:
    return _turns(conv, *messages, author="luana")


def kept_from(text: str, reply: str = "Noted.") -> list[str]:
    """The entries one user message and the assistant's reply leave in a new memory."""
    return entries(index_after(review(turns("c1", said(text), bot(reply)))))


def test_an_update_that_says_the_rest_is_the_same_keeps_it() -> None:
    """The site moved from Cargo to Squarespace, "same domain": the domain stays in memory
    with the new host. Before, the update replaced the entry whole and the domain was lost."""
    first = turns(
        "c1",
        said("portfolio site on Cargo, domain luanaferreira.art"),
        bot("Cargo site at luanaferreira.art."),
    )
    index = index_after(review(first))
    second = days_later(
        7,
        turns(
            "c2",
            said("moved site to Squarespace. Cargo too fiddly. same domain"),
            bot("Squarespace now, same domain."),
        ),
    )
    later = _then(index, second)
    held = entries(later)
    assert any("Squarespace" in e and "luanaferreira.art" in e for e in held), later
    assert not any("Cargo" in e and "Squarespace" not in e for e in held), later
    assert_changes_nothing(second, later)


def test_what_stays_the_same_and_addresses_are_read_as_such() -> None:
    assert offline._kept_same("moved site to Squarespace. same domain, same hours") == {
        "domain",
        "hour",
    }
    assert offline._kept_same("we moved to Squarespace") == set()
    found = offline._ADDRESS.findall(
        "domain luanaferreira.art, mail bookings@hanbit.la, 3.5 kg, e.g. Mr. X"
    )
    assert found == ["luanaferreira.art", "bookings@hanbit.la"]


def test_a_clause_before_an_ending_is_kept() -> None:
    """ "We switched to Comotomo bottles in the end, sold the Dr Brown's": the bottles they use
    now are kept. Before, the message read as the end of the Dr Brown's alone, and nothing was
    kept."""
    batch = turns(
        "c1",
        said(
            "Also we switched to Comotomo bottles in the end, sold the Dr Brown's on Marketplace."
        ),
        bot("Noted."),
    )
    index = index_after(review(batch))
    assert any("Comotomo" in e for e in entries(index)), index
    assert not any("Dr Brown" in e for e in entries(index)), index
    assert_changes_nothing(batch, index)


def test_an_ending_said_alone_keeps_nothing_more() -> None:
    """No clause of its own before the ending ("I finally cancelled Netflix"): nothing is
    kept, as before."""
    out = review(turns("c1", said("I finally cancelled Netflix."), bot("Noted.")))
    assert not out.operations, out.operations


def test_a_polite_cue_to_keep_what_follows() -> None:
    """ "Kindly also note our trustee ...": what follows is kept. Before, "kindly" made the
    whole a request, and nothing was kept."""
    held = kept_from(
        "Kindly also note our trustee Mr. Venkatesh is the one who meets the CSR heads."
    )
    assert any("Venkatesh" in e and "trustee" in e for e in held), held


def test_a_heading_that_is_a_clause_stays() -> None:
    """ "Isle of Wight is booked: Red Funnel from Southampton, 14 April": the heading says
    what was booked. Before, it was cut as a heading, and the entry did not say where they
    were going."""
    held = kept_from(
        "Isle of Wight is booked: Red Funnel from Southampton, 14 April, the car comes with us.",
        "Lovely.",
    )
    assert any("Isle of Wight" in e and "14 April" in e for e in held), held


def test_a_short_heading_still_goes() -> None:
    held = kept_from("Small update on me: I moved to Leeds.")
    assert any("Leeds" in e for e in held) and not any("update" in e for e in held), held


def test_a_newcomer_welcomed_with_who_they_are_is_kept() -> None:
    """ "Welcome to Priya Venkatesan, new associate, who starts June 2": who she is and when
    she starts. Before, the welcome made it a reaction, and only the sentence after it was
    kept."""
    held = kept_from(
        "Welcome to Priya Venkatesan, new associate, who starts June 2. Priya is a Loyola Law "
        "grad and will work on the PI side with Derek."
    )
    assert any("Priya Venkatesan" in e and "associate" in e for e in held), held


def test_a_welcome_alone_is_still_a_reaction() -> None:
    for text in ("Welcome, Ben.", "Welcome to the team!"):
        out = review(turns("c1", said(text), bot("Thanks!")))
        assert not out.operations, (text, out.operations)


def test_a_clause_that_follows_from_a_change_does_not_replace_it() -> None:
    """ "Harriers moved track to Thursday 7pm, Saltwell still. So Thursday is my speed day now":
    the second sentence says what follows from the move, no value of its own. Before, it took
    the first one's place and the track's time and place were lost."""
    batch = turns(
        "c1",
        said(
            "Harriers moved track to Thursday 7pm, Saltwell still. So Thursday is my speed day now."
        ),
        bot("Noted."),
    )
    index = index_after(review(batch))
    held = entries(index)
    assert any("7pm" in e and "Saltwell" in e for e in held), index
    assert any("speed day" in e for e in held), index
    assert_changes_nothing(batch, index)


def test_a_correction_inside_one_message_still_replaces() -> None:
    held = kept_from("We open at 8 on Mondays. Sorry, we open at 9 on Mondays.")
    assert any("9" in e for e in held) and not any(" 8 " in e for e in held), held


def test_she_after_also_stays_with_whom_it_is_about() -> None:
    """ "Judge Patel's new standing order came out, ... Also she moved to courtroom 2208": one
    entry holds the judge and her courtroom. Before, "Also she moved to courtroom 2208" was kept
    apart, about no one."""
    held = kept_from(
        "Judge Patel's new standing order came out, courtesy copies are gone, she only wants "
        "the e-filed version now. Also she moved to courtroom 2208"
    )
    assert any("Patel" in e and "2208" in e for e in held), held


def test_a_clause_that_says_instead_still_replaces_what_its_message_said_first() -> None:
    """ "Nine-day fortnight now, so every other Friday off instead": the second clause puts
    its value in the place of the first's "Fridays off". A case of test12 that the rule above
    first kept twice."""
    index = index_after(
        review(turns("c1", said("I work compressed hours, four long days, Fridays off.")))
    )
    later = _then(
        index,
        days_later(
            7,
            turns(
                "c2",
                said(
                    "Changed my pattern. Nine-day fortnight now, so every other Friday off instead."
                ),
            ),
        ),
    )
    held = [e for e in entries(later) if "Friday" in e]
    assert len(held) == 1 and "every other friday" in held[0].lower(), later


def test_an_end_of_what_a_list_heading_names_takes_the_whole_list() -> None:
    """ "scrap the roast cruise" of "We do a Sunday roast cruise on Dabchick: two hours up to
    the Swan at Foxton, lunch, back by four": the heading names the cruise, so the entry goes.
    Before, the first item after the heading was cut as if it were the cruise, and the cruise
    stayed (a case of test19); before this round, the price stayed behind a later sentence
    ("We're not doing anything else on Sundays for now. Back by four. £45 a head.")."""
    index = index_after(
        review(
            turns(
                "c1",
                said(
                    "We do a Sunday roast cruise on Dabchick: two hours up to the Swan at Foxton, "
                    "lunch, back by four. £45 a head."
                ),
                bot("Noted: Sunday roast cruise on Dabchick to the Swan, £45 per person."),
            )
        )
    )
    assert any("roast cruise" in e for e in entries(index)), index
    later = _then(
        index,
        days_later(
            7,
            turns(
                "c2",
                said(
                    "scrap the roast cruise, the Swan's changed hands and the new lot don't do "
                    "group bookings. We're not doing anything else on Sundays for now."
                ),
                bot("Understood, the Sunday roast cruise is off."),
            ),
        ),
    )
    assert not any("roast cruise" in e or "£45" in e for e in entries(later)), later
