"""The offline reviewer (R6, issue 11): retractions it did not read as an ending, found by an
audit of retractions said in many ways, each phrased again here in other settings. Something
said in one conversation stops, with nothing in its place, in a later one; afterwards no entry
of the first conversation may still state it.

What used to go wrong, each time leaving the first entry as it was (and often keeping the
ending as one more fact beside it):

* a verb or state of ending the lexicon lacked: "has been canned", "got axed", "we terminated
  the agreement with", "we fired", "ended our contract with", "has wound down", "stepped back
  from", "finished with";
* a verb whose particle follows the thing: "let Tomasz go", "shut the Discord server down";
* a negated state typed without the apostrophe: "isnt a thing anymore";
* a thing "finished for good" that is no club or deal;
* "no" before a capital, dropped as an opener, taking the ending with it ("no Inkwell printing
  any more" read as "Inkwell printing any more");
* a word that only says what kind of thing it was, spelt the other side of the Atlantic
  ("Zoom licenses" against "zoom licences": the plural was not one of the generic words);
* a person "out of the band" or "out of the team";
* an arrangement that "ended", said tersely ("Fox and Hounds residency ended.": only a
  contract, deal, subscription or lease could);
* a thing that is "off", and nothing after it ("the pub quiz is off.");
* an ending still under way: "I'm cancelling Duolingo", "not renewing calendly";
* a line of trade given up: "we're out of the catering business".

The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

import pytest

from tests.review.test_offline import bot, days_later, index_after, review, turns, user


def _entries(index: str) -> list[str]:
    return [line for line in index.split("\n") if line.startswith("- ")]


def _after_retraction(said: str, retracted: str, author: str) -> str:
    first = turns("c1", user(said), bot("Noted."), author=author)
    index = index_after(review(first))
    assert any("(source: c1" in e for e in _entries(index)), index  # it was kept
    later = days_later(7, turns("c2", user(retracted), bot("Okay."), author=author))
    return index_after(review(later, index=index), index)


CASES = [
    # a verb or a state of ending the lexicon lacked
    (
        "We hold a book swap in the library every Thursday.",
        "The book swap has been canned, too few people came.",
        "book swap",
    ),
    (
        "Our garage does MOT testing for vans.",
        "MOT testing for vans got axed last month.",
        "MOT testing",
    ),
    (
        "Our bookkeeper is Fenwick Accounts.",
        "We terminated the agreement with Fenwick Accounts.",
        "Fenwick",
    ),
    ("Our dog walker is Priyanka.", "We fired Priyanka. Doing the walks ourselves.", "Priyanka"),
    (
        "The clinic's clinical waste goes to MedCollect.",
        "We ended our contract with MedCollect last week.",
        "MedCollect",
    ),
    (
        "The youth club runs a film night on Fridays.",
        "the friday film night has wound down for good",
        "film night",
    ),
    (
        "I marshal at the Ashby parkrun every Saturday.",
        "I've stepped back from the Ashby parkrun, my hip's bad.",
        "parkrun",
    ),
    # a verb whose particle follows the thing
    ("Dorota cleans the holiday lets for us.", "we let dorota go after christmas", "Dorota"),
    (
        "We have a gardener, Tomasz, on Tuesdays.",
        "We had to let Tomasz go, money's tight.",
        "Tomasz",
    ),
    # a negated state typed without the apostrophe
    (
        "We offer free delivery on orders over 50 quid.",
        "free delivery isnt a thing anymore, postage costs went up",
        "free delivery",
    ),
    (
        "The staff room has a quiz night every last Friday.",
        "the quiz night isnt a thing any more",
        "quiz night",
    ),
    # finished for good, whatever it was; finished with a thing
    (
        "The cafe has a pop-up stall at the Sunday market.",
        "the pop-up stall's finished for good.",
        "pop-up stall",
    ),
    (
        "I go to a pottery class at the community centre on Mondays.",
        "finished with the pottery class, too pricey",
        "pottery class",
    ),
    # "no" before a capital read as an opener and dropped, taking the ending with it
    (
        "Our tees are printed by Inkwell.",
        "no Inkwell printing any more, they doubled prices",
        "Inkwell",
    ),
    ("We stock Oatly in the cafe.", "no Oatly anymore, customers prefer the local one", "Oatly"),
    # a word that only says what kind of thing it was, spelt the other side of the Atlantic
    (
        "Our office has Zoom licenses for the sales team.",
        "zoom licences are cancelled, we use Teams",
        "Zoom",
    ),
    (
        "We have Adobe licences for the designers.",
        "Adobe licenses were cancelled last week.",
        "Adobe",
    ),
    # a person out of the band or the team; an arrangement that ended, said tersely
    ("Our keyboard player is Rosie.", "Rosie's out of the band, creative differences.", "Rosie"),
    (
        "Our left back is Marta, she never misses a game.",
        "Marta's out of the team, she moved to Leeds.",
        "Marta",
    ),
    (
        "We have a residency at the Fox and Hounds on Thursdays.",
        "Fox and Hounds residency ended.",
        "Fox and Hounds",
    ),
    (
        "Our partnership with Greenleaf Tours brings us coach groups.",
        "Greenleaf Tours partnership ended.",
        "Greenleaf",
    ),
    # off, and nothing after it
    ("We run a pub quiz on Wednesday nights.", "the pub quiz is off.", "pub quiz"),
    ("We have a happy hour from 5 to 7.", "Happy hour's off now.", "happy hour"),
    # an ending still under way: cancelling, not renewing
    ("I pay for a Duolingo subscription.", "I'm cancelling Duolingo, never open it.", "Duolingo"),
    (
        "We take bookings through Calendly.",
        "not renewing calendly, nobody books through it",
        "Calendly",
    ),
    # out of a line of trade
    (
        "We sell wedding cakes as well as bread.",
        "we're out of the wedding cake business, too stressful",
        "wedding cake",
    ),
    (
        "We also do catering for parties.",
        "We're out of the catering business for good.",
        "catering",
    ),
]


@pytest.mark.parametrize(("said", "retracted", "thing"), CASES)
def test_a_retraction_said_in_other_words_ends_the_entry(
    said: str, retracted: str, thing: str
) -> None:
    index = _after_retraction(said, retracted, "robin")
    stale = [e for e in _entries(index) if thing.lower() in e.lower() and "(source: c1" in e]
    assert not stale, index
