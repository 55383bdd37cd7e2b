"""The offline reviewer (R6, R8, issue 11): what an update of one part of an entry leaves of the
rest, and list lines that were read without what they label (the thirty-fifth round, studied on
development data): an assistant's read-back that took an entry its user's message had left
standing; a two-sentence entry replaced whole where only one sentence was about the update, or where
each shared a word with it;
a part of a one-sentence entry no rule named; a pasted list's labels ("Knight full app: May 30"
kept as "May 30."); and pace lines ("MP 4:58/km") skipped as pasted output.

The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

from reverie.review.offline import _touched
from reverie.review.sentences import clean, sentences
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


def test_a_read_back_takes_no_entry_the_update_it_reads_back_left_standing() -> None:
    """The user's message replaced the Saturday social and left practice times alone (they say
    more than the update changes); the assistant's read-back of it ("... on the first and third
    Saturday evenings instead") no longer takes the practice times. Before, it did."""
    first = turns(
        "c1",
        said(
            "Well Saturday practice is at 9:30, the match squad meets at 12. And we still have a "
            "Saturday evening social at 7 though it's mostly the old guard. Thursday is the "
            "coaching session at 6."
        ),
        bot("Noted."),
    )
    index = index_after(review(first))
    assert any("9:30" in e for e in entries(index)), index
    second = days_later(
        7,
        turns(
            "c2",
            said(
                "We had the AGM and the club voted to stop the Saturday evening social, hardly "
                "anyone came. We're going to do a monthly quiz in the clubhouse on Saturday "
                "evenings instead, first and third Saturdays."
            ),
            bot(
                "Understood: the Saturday evening social has ended; the clubhouse quiz runs on "
                "the first and third Saturday evenings instead."
            ),
            said("That's right. Thursday stays the same"),
        ),
    )
    later = _then(index, second)
    assert any("9:30" in e and "match squad" in e for e in entries(later)), later
    assert any("quiz" in e for e in entries(later)), later
    assert not any("social at 7" in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


def test_an_update_of_one_sentence_keeps_the_sentence_only_a_shared_word_tied_to_it() -> None:
    """Both sentences share a word with the update ("deploy"), but only the first is about what
    it changes (the review meeting): the second (Flux) stays. Before, the entry was replaced
    whole."""
    first = turns(
        "c1",
        said(
            "Every Thursday at 2pm we have the deploy review meeting, all on-call engineers "
            "attend, Kofi runs it. Also prod deploys go through Flux, manual sync for billing-svc "
            "only."
        ),
    )
    index = index_after(review(first))
    second = days_later(
        7,
        turns(
            "c2", said("We scrapped the Thursday deploy review, replaced by async notes in the PR.")
        ),
    )
    later = _then(index, second)
    assert any("Flux" in e for e in entries(later)), later
    assert any("async notes" in e for e in entries(later)), later
    assert not any("Kofi runs it" in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


def test_of_sentences_that_all_share_a_word_the_one_sharing_most_is_updated() -> None:
    """Both sentences of the entry share a word with the read-back ("patch"; "city centre"),
    none by a rule: the one sharing twice as many goes, and the patch's towns stay. Before, the
    entry was replaced whole and the towns were lost."""
    first = turns(
        "c1",
        said("2 fitted today, 1 to go"),
        bot("Anything to note?"),
        said(
            "yeah my patch is leith portobello musselburgh dalkeith. no city centre the parkings "
            "a nightmare"
        ),
    )
    index = index_after(review(first))
    assert any("dalkeith" in e and "no city centre" in e for e in entries(index)), index
    second = days_later(
        9,
        turns(
            "c2",
            said(
                "started taking edinburgh city centre jobs got a trade parking permit sorted thru "
                "the council. add corstorphine too. min charge in town is £90 cos of the parking"
            ),
            bot("Patch now includes Edinburgh city centre (with a trade permit) and Corstorphine."),
        ),
    )
    later = _then(index, second)
    assert any("dalkeith" in e and "Corstorphine" in e for e in entries(later)), later
    assert not any("no city centre" in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


def test_an_update_of_one_part_keeps_the_parts_that_say_something_of_their_own() -> None:
    """No rule says which part of "the kiln is ..., glazes from Amaco, cone 6" the update
    outdates: the parts sharing a word with it go, the kiln (a part with its own verb) stays,
    and the update goes after its comma in lower case. Before, the kiln was lost."""
    first = turns(
        "c1", said("the kiln is a Skutt KM-1027 in the garage, glazes from Amaco, cone 6.")
    )
    index = index_after(review(first))
    second = days_later(
        7,
        turns("c2", said("We get glazes from Mayco now, Amaco's cone 6 line was out of stock.")),
    )
    later = _then(index, second)
    (entry,) = [e for e in entries(later) if "Mayco" in e]
    assert "Skutt KM-1027" in entry, later
    assert "garage, we get glazes from Mayco" in entry, later
    assert not any("glazes from Amaco" in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


def test_a_heading_that_labels_a_value_stays() -> None:
    """A line of a pasted list is a label and its value: the label stays (before, "Lottery bid:
    June 3" was kept as "June 3."); a heading before a clause still goes."""
    assert clean("Lottery bid: June 3") == "Lottery bid: June 3"
    assert clean("Arts Council report: Apr 20") == "Arts Council report: Apr 20"
    assert clean("Reorg news: Sarah leads the design team now") == "Sarah leads the design team now"
    batch = turns(
        "c1",
        said("grant deadlines, keep these:\nArts Council report: Apr 20\nLottery bid: June 3"),
        bot("Saved."),
    )
    index = index_after(review(batch))
    assert any("Arts Council report" in e and "Apr 20" in e for e in entries(index)), index
    assert any("Lottery bid" in e and "June 3" in e for e in entries(index)), index
    assert_changes_nothing(batch, index)


def test_pace_lines_are_prose_and_a_tide_table_is_not() -> None:
    """ "LT 4:40/km" (a pace) is not a code and a clock time pasted from a program, so the lines
    after it are not read as that output's tail: each line of the list is a sentence. (A tide
    table, "HW 06:12 1.6m", still is output.)"""
    text = "splits from coach:\nwarmup 6:10/km\nLT 4:40/km\nreps 4:05/km"
    assert [s for _, _, s in sentences(text)][1:] == [
        "warmup 6:10/km",
        "LT 4:40/km",
        "reps 4:05/km",
    ]
    tide = "tides for Saturday:\nHW 06:12 1.6m\nLW 12:30 0.4m"
    assert [s for _, _, s in sentences(tide)] == ["tides for Saturday:"]
    index = index_after(review(turns("c1", said(text))))
    assert any("reps 4:05/km" in e for e in entries(index)), index


def test_a_heading_before_a_word_a_password_could_be_still_goes() -> None:
    """A label kept with its value must not keep a secret with it: "staff one: Kestrel$27",
    after a message giving the guest wifi's password, is read as before (the value alone, which
    no rule keeps), and nothing of it reaches memory."""
    assert clean("staff one: Kestrel$27") == "Kestrel$27"
    batch = turns(
        "c1",
        said("guest wifi pw this week: tern2026!"),
        said("staff one: Kestrel$27"),
        bot("I won't save those."),
    )
    written = " ".join(str(op) for op in review(batch).operations)
    assert "Kestrel" not in written and "tern2026" not in written, written


def test_a_later_word_of_another_name_does_not_touch_a_name() -> None:
    """ "Hope Street" in the update does not name "Seel Street": the entry giving the opening
    hour and the parking keeps two values the update does not touch, and stays beside it.
    Before, "Street" counted as naming Seel Street, and the entry went with the old address."""
    first = turns(
        "c1",
        said(
            "The studio is on Bold Street above the bakery. It opens at 10 on weekdays, studio "
            "parking is on Seel Street."
        ),
    )
    index = index_after(review(first))
    assert any("Seel Street" in e and "Bold Street" not in e for e in entries(index)), index
    second = days_later(
        9,
        turns(
            "c2",
            said("The studio is above the florist on Hope Street now, the bakery got too noisy."),
        ),
    )
    later = _then(index, second)
    assert any("Seel Street" in e and "opens at 10" in e for e in entries(later)), later
    assert any("Hope Street" in e for e in entries(later)), later
    assert not any("Bold Street" in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)


def test_which_words_of_a_message_touch_a_name() -> None:
    """A name is touched by any of its words but a later one that ends another name there; a
    capitalised word opening a sentence ("The library ...") is no other name."""
    assert not _touched("seel street", "The studio is above the florist on Hope Street now")
    assert _touched("seel street", "Seel Street is closed for roadworks")
    assert _touched("central library", "The library had a water leak.")
    assert _touched("sister faye hendrix", "Faye stepped down from bereavement")


def test_the_speakers_name_before_an_update_shares_no_word_with_a_part() -> None:
    """The update is written "Ines: ...", and "Ines stays in Chapel Allerton" shares only that
    name with it: the part stays. Before (the first version of the part rule), the name counted
    as a shared word and the part went with the lift."""
    first = turns(
        "c1",
        said("I stay in Chapel Allerton, I don't have a car, Ravi picks me up."),
        author="ines",
    )
    index = index_after(review(first))
    assert any("Chapel Allerton" in e and "Ravi picks" in e for e in entries(index)), index
    second = days_later(
        9,
        turns(
            "c2",
            said("Ravi doesn't drive now, his car broke, Sue picks me up now at 4:15."),
            author="ines",
        ),
    )
    later = _then(index, second)
    assert any("Chapel Allerton" in e and "Sue picks" in e for e in entries(later)), later
    assert not any("Ravi picks" in e for e in entries(later)), later
    assert_changes_nothing([*first, *second], later)
