"""The offline reviewer (R6, issue 11): faults found when test24 became development data (the
twenty-eighth round), each phrased again in other settings: the two questions it kept and the
four idle re-runs that changed memory.

The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

import pytest

from reverie.review.wording import indirect
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


@pytest.mark.parametrize(
    ("question", "reported"),
    [
        ("Which three days is Bea in?", "which three days Bea is in"),
        ("Which days is Kemi in?", "which days Kemi is in"),
        ("Is Bea in on Mondays?", "whether Bea is in on Mondays"),
        ("When are the kids back at school?", "when the kids are back at school"),
        ("Sure. How many staff do you have?", "how many staff you have"),
        ("What does the team look after?", "what the team looks after"),
        ("What time do you open on Sundays?", "what time you open on Sundays"),
        ("How much is the deposit, roughly?", "how much the deposit is"),
        ("What are the dogs called?", "what the dogs are called"),
        ("Does Tom drive?", "whether Tom drives"),
    ],
)
def test_a_question_is_reported_as_a_clause_that_asks_nothing(question: str, reported: str) -> None:
    assert indirect(question) == reported


@pytest.mark.parametrize(
    "question",
    ["Is that right?", "Is there parking?", "Who does the bookings?", "Which topic first?"],
)
def test_a_question_without_that_shape_is_not_reported(question: str) -> None:
    assert indirect(question) is None


@pytest.mark.parametrize(
    ("said", "asked", "answer", "kept", "question"),
    [
        (
            "it's just me plus Kemi who does reception a few days a week",
            "Which days is Kemi in?",
            "monday, wednesday and saturday",
            "monday, wednesday and saturday",
            "which days is kemi in",
        ),
        (
            "we've got a second van now, Dean drives it",
            "Which days is Dean out on the second van?",
            "tuesdays and fridays",
            "tuesdays and fridays",
            "which days is dean out",
        ),
        (
            "the boys have a paper round each",
            "When are the boys back at school?",
            "5 september",
            "5 september",
            "when are the boys back",
        ),
    ],
)
def test_an_answer_is_kept_with_what_it_answered_not_the_question(
    said: str, asked: str, answer: str, kept: str, question: str
) -> None:
    """A verbless answer to the assistant's question is kept with what was asked, reported
    ("asked which days Kemi is in: ..."), not with the question as it was put: memory holds
    no question (R8). It used to quote it ("asked "Which days is Kemi in?": ...")."""
    batch = turns("c1", user(said), bot(f"Noted. {asked}"), user(answer))
    index = index_after(review(batch))
    answered = [e for e in entries(index) if kept in e.lower()]
    assert len(answered) == 1, index
    assert "?" not in index and question not in index.lower(), index
    assert_changes_nothing(batch, index)


@pytest.mark.parametrize(
    ("asked", "answer", "rest", "kept"),
    [
        (
            "Sure. Which topic first?",
            "resp. but first note how i like to study: anki every morning 7-8, no revision "
            "after 10pm",
            "10pm",
            "7-8",
        ),
        (
            "Happy to. Which chapter do you want to start with?",
            "ch 4. btw i revise 6-7am every day and never after 9pm",
            "9pm",
            "6-7am",
        ),
    ],
)
def test_what_to_do_first_is_not_a_fact_and_the_rest_of_the_answer_is_kept(
    asked: str, answer: str, rest: str, kept: str
) -> None:
    """The answer to a question about what to do now ("Which topic first?") is not kept
    with the question; the facts said after it are (they used to be lost with it)."""
    batch = turns("c1", user("can you help me revise? i'll send cards"), bot(asked), user(answer))
    index = index_after(review(batch))
    assert "?" not in index, index
    assert any(kept in e and rest in e for e in entries(index)), index


@pytest.mark.parametrize(
    ("first", "reply", "second", "cheer", "one", "other"),
    [
        (
            "chloe's taking over training the new apprentice, Jade, who starts 3rd june",
            "Chloe trains Jade from 3 June.",
            "also chloe's now officially senior tech, pay bump to £13.50/hr from £12.20",
            "Congratulations to Chloe. Senior tech at £13.50 an hour.",
            "jade",
            "£13.50",
        ),
        (
            "ana's taking over mentoring the new starter, Tom, who joins 2nd may",
            "Ana mentors Tom from 2 May.",
            "also ana's now officially team lead, salary up to £41k from £36k",
            "Congratulations to Ana. Team lead at £41k.",
            "tom",
            "£41k",
        ),
    ],
)
def test_two_facts_of_one_person_are_two_entries(
    first: str, reply: str, second: str, cheer: str, one: str, other: str
) -> None:
    """Two facts said of one person share their name, which is not what either is about:
    the second does not replace the first (it did, and given again the first came back)."""
    batch = turns("c1", user(first), bot(reply), user(second), bot(cheer))
    index = index_after(review(batch))
    assert any(one in e.lower() for e in entries(index)), index
    assert any(other in e for e in entries(index)), index
    assert_changes_nothing(batch, index)


@pytest.mark.parametrize(
    ("secret", "reply"),
    [
        (
            "the club's stripe secret key is sk_live_{key} if u need it",
            "Please don't share that key here; rotate it in the Stripe dashboard to be safe.",
        ),
        (
            "the mailchimp api key is {key}-us21 for the newsletter",
            "Please don't post keys here; change it in the Mailchimp account page to be safe.",
        ),
    ],
)
def test_advice_from_the_assistant_is_not_kept(secret: str, reply: str) -> None:
    """An assistant's sentence that opens with a verb and what it acts on ("rotate it ...",
    "change the password ...") is advice to the user, not a fact of theirs."""
    key = "51NxTq8KzP2mR7" + "vWcY4bH9dLs"
    batch = turns("c1", user(secret.format(key=key)), bot(reply))
    out = review(batch)
    assert not out.operations, out.operations


@pytest.mark.parametrize(
    ("message", "name", "second"),
    [
        (
            "lee does the bookings and the invoices, kyle's on the van with me. lee's mobile "
            "is the business number",
            "Lee",
            "business number",
        ),
        (
            "priya handles the rota and the payroll. priya's desk is by the back door",
            "Priya",
            "back door",
        ),
    ],
)
def test_someone_doing_a_duty_is_a_name_in_lower_case(message: str, name: str, second: str) -> None:
    """ "lee does the bookings": words said only of a person name one, typed in lower case as
    they may be; both facts are kept, with the name spelled (nothing was kept, and a later
    message that spelled the name made the batch, given again, add one)."""
    batch = turns("c1", user(message), bot(f"Noted: {name} handles that."))
    index = index_after(review(batch))
    assert any(name in e for e in entries(index) if "the" in e), index
    assert any(second in e for e in entries(index)), index


@pytest.mark.parametrize(
    ("message", "names"),
    [
        ("priti's running the tuesday games section and steve's doing badges", ["Priti", "Steve"]),
        ("joe's doing refunds and mia's running the tills", ["Joe", "Mia"]),
        ("lee's the first aider, kit in both vans", ["Lee"]),
        ("dom's the welfare officer, any concerns go to him", ["Dom"]),
    ],
)
def test_someone_doing_a_job_or_holding_a_role_is_a_name_in_lower_case(
    message: str, names: list[str]
) -> None:
    """ "steve's doing badges", "lee's the first aider": words said only of a person name one,
    typed in lower case; the fact is kept with the names spelled (it was dropped, or kept with
    them in lower case)."""
    index = index_after(review(turns("c1", user(message))))
    assert any(all(n in e for n in names) for e in entries(index)), index


@pytest.mark.parametrize(
    ("before", "later"),
    [
        (
            "i go home the weekend of 14 june for my brother's exams",
            "mum's having her knee replaced on 3 july so im home that week too",
        ),
        (
            "I'm working from home on 2 march for the delivery",
            "we're getting the boiler replaced on 9 march so I'm home that day too",
        ),
    ],
)
def test_having_something_replaced_is_not_an_update(before: str, later: str) -> None:
    """ "having her knee replaced on 3 july" is work done on something, not a value that
    changed: it does not replace the date said before (it did, and the entry it made took
    the next fact with it when the operation was called off)."""
    after = index_after(review(turns("c1", user(before), bot("Noted."), user(later))))
    dates = ("14 june", "3 july") if "june" in before else ("2 march", "9 march")
    assert all(any(d in e.lower() for e in entries(after)) for d in dates), after


@pytest.mark.parametrize(
    ("note", "kept"),
    [
        ("client notes. Albert Fenn, 88, dementia, 4 calls a day (8am, 12, 5pm, 8pm).", "88"),
        ("new starter list. Mrs Okoro, 91, diabetic, hard of hearing, visits tues and fri", "91"),
        ("Kemi Bello, 29, night shift, two kids under 5", "night shift"),
    ],
)
def test_a_note_of_a_persons_name_and_what_they_are_is_kept(note: str, kept: str) -> None:
    """ "Albert Fenn, 88, dementia, 4 calls a day": a name, then what the person is, listed
    with no clause, is a note about them (it was dropped as saying nothing)."""
    index = index_after(review(turns("c1", user(note))))
    assert any(kept in e for e in entries(index)), index


@pytest.mark.parametrize(
    ("note", "reply", "later", "kept"),
    [
        (
            "Albert Fenn, 88, dementia, 4 calls a day",
            "Noted: Albert Fenn, 88, dementia, four calls a day.",
            "he is allergic to penicillin, its in red on his care plan",
            "Albert Fenn is allergic to penicillin",
        ),
        (
            "Maisie Hart has joined the under 11s, she's 10",
            "Welcome Maisie!",
            "she's coeliac so no pizza at the end of season party",
            "Maisie Hart's coeliac",
        ),
    ],
)
def test_he_or_she_opening_a_message_is_the_person_the_last_one_named(
    note: str, reply: str, later: str, kept: str
) -> None:
    """A message opening with "he" or "she", after one that named one person in full, is
    said of that person: kept with their name (it was dropped, naming no one)."""
    batch = turns("c1", user(note), bot(reply), user(later))
    index = index_after(review(batch))
    assert any(kept in e for e in entries(index)), index
    assert_changes_nothing(batch, index)


@pytest.mark.parametrize(
    ("note", "update", "kept", "gone"),
    [
        (
            "client notes. Albert Fenn, 88, dementia, 4 calls a day (8am, 12, 5pm, 8pm).",
            "albert's down to 3 calls now",
            "Albert Fenn, 88, dementia, 3 calls a day",
            "4 calls",
        ),
        (
            "Rosa Diaz, 34, team lead, 2 days a week in the office",
            "rosa's up to 3 days a week now",
            "Rosa Diaz, 34, team lead, 3 days a week",
            "2 days",
        ),
    ],
)
def test_a_value_said_of_a_name_the_note_gives_is_written_in(
    note: str, update: str, kept: str, gone: str
) -> None:
    """ "albert's down to 3 calls now" of a note naming Albert Fenn says nothing but the new
    value: it is written into the note, which keeps the rest (the update replaced the whole
    note, and the age and the condition were lost)."""
    index = index_after(review(turns("c1", user(note))))
    after = index_after(review(days_later(7, turns("c2", user(update))), index), index)
    assert any(kept in e for e in entries(after)), after
    assert gone not in after, after


@pytest.mark.parametrize(
    ("before", "update", "new", "kept", "old"),
    [
        (
            "our digitiser is Marek in Poland, he charges £18 per logo and turns around in 48h",
            "marek's gone up to £20 a logo, still worth it",
            "£20",
            "48h",
            "£18",
        ),
        (
            "the dog groomer is Tasha at Fluffs, she charges £40 a groom, we go monthly",
            "tasha's up to £45 a groom now",
            "£45",
            "monthly",
            "£40",
        ),
        (
            "second class stamps are 85p, we buy them in books of 12",
            "stamps went up to 87p",
            "87p",
            "books of 12",
            "85p",
        ),
    ],
)
def test_a_new_price_of_someone_or_something_the_entry_names_is_written_in(
    before: str, update: str, new: str, kept: str, old: str
) -> None:
    """ "marek's gone up to £20 a logo" of "our digitiser is Marek ..., he charges £18 per
    logo": a price said of a person the entry names (not its speaker), in words it shares,
    is written into the entry, which keeps the rest; so is a price in pence ("87p"). The first
    was kept beside the old price (another owner), the last not read as a price at all."""
    index = index_after(review(turns("c1", user(before))))
    after = index_after(review(days_later(7, turns("c2", user(update))), index), index)
    assert any(new in e and kept in e for e in entries(after)), after
    assert old not in after, after
