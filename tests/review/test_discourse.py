"""Sentences that lean on the one before are read with it (R6; review/discourse.py)."""

from __future__ import annotations

from reverie.review.discourse import units


def _texts(message: str) -> list[str]:
    return [text for _, _, text in units(message)]


def test_a_pronoun_subject_is_read_with_the_sentence_that_names_it() -> None:
    said = "Kofi joined as our SRE last week. He reports to Marek."
    assert _texts(said) == [said]


def test_a_verbless_fragment_continues_the_sentence_before() -> None:
    said = "I'm a staff engineer at Tidewater. Mostly Kubernetes and the deploy tooling."
    assert _texts(said) == [said]


def test_lines_of_a_price_list_are_one_list() -> None:
    # A table pasted a row a line is one list, written as a list typed on one line: one entry,
    # not one a row (a later change of one price is written into it: see
    # test_offline_reading.py). This test said the rows stayed apart, when a price in a list
    # could not yet be changed in place.
    said = "Hire rates:\nbig van £90 a day\nsmall van £60 a day\ntrailer £25 a day"
    assert _texts(said) == ["Hire rates: big van £90 a day, small van £60 a day, trailer £25 a day"]
    # two priced lines are a table under a heading ("membership / adult 120 / child 60": a
    # price without its currency says nothing alone), and without one each stays a line
    assert _texts("Hire rates:\nbig van £90 a day\nsmall van £60 a day") == [
        "Hire rates: big van £90 a day, small van £60 a day"
    ]
    assert _texts("big van £90 a day\nsmall van £60 a day") == [
        "big van £90 a day",
        "small van £60 a day",
    ]
    # a price after a plan is part of the plan: retired with it when the plan is called off
    said = "We booked the craft fair in May. 3 days, table £120."
    assert _texts(said) == [said]


def test_a_lesson_keeps_its_symptom_cause_and_fix_together() -> None:
    said = (
        "The nightly backup kept failing. It turned out the disk was full of old archives. "
        "Deleting archives older than a week fixed it."
    )
    assert _texts(said) == [said]


def test_separate_statements_questions_and_progress_stay_apart() -> None:
    assert _texts("We deploy on Fridays. Dana is our DBA.") == [
        "We deploy on Fridays.",
        "Dana is our DBA.",
    ]
    assert _texts("Who owns billing? He said it was Ines.") == [
        "Who owns billing?",
        "He said it was Ines.",
    ]
    assert len(_texts("ok it's green now. The tests were flaky because of a shared Redis.")) == 2
    assert _texts("I work at Globex.\nI'm vegan.") == ["I work at Globex.", "I'm vegan."]


def test_a_unit_spans_every_sentence_joined() -> None:
    message = "Kofi joined as our SRE. He reports to Marek."
    [(start, end, _)] = units(message)
    assert (start, end) == (0, len(message))


def test_a_verbless_self_introduction_is_kept() -> None:
    from reverie.review.statements import PEOPLE, Statement, read

    found = read("Hana Lind, office manager at Birchwood Dental", role="user", speaker="Hana")
    assert isinstance(found, Statement) and found.section == PEOPLE
    # Someone else's name with a comma is not the speaker introducing themselves.
    assert read("Hana, can you book the room", role="user", speaker="Ola") != found
    assert read("Ola here", role="user", speaker="Ola") == "introduction"
    # A fragment after a bare introduction continues it.
    said = "Ola Berg here. Night nurse, cardiology ward."
    assert [t for _, _, t in units(said, "user", "Ola")] == [said]


def test_full_name_is_a_clause_that_only_names_its_speaker() -> None:
    from reverie.review.discourse import full_name

    assert full_name("Hello, I am Ines Duarte", "Ines") == "Ines Duarte"
    assert full_name("My name is Tobias Lind", "Tobias") == "Tobias Lind"
    assert full_name("this is ines duarte", "Ines") == "Ines Duarte"  # lower case, as typed
    assert full_name("Let me say who I am first: I'm Ines Duarte", "Ines") == "Ines Duarte"
    assert full_name("Ines Duarte here", "Ines") == "Ines Duarte"
    assert full_name("I'm Ines", "Ines") is None  # no more than the name memory already has
    assert full_name("I am Paolo Conte", "Ines") is None  # someone else
    assert full_name("Ines is here", "Ines") is None  # a sentence, not a name
    assert full_name("I am Ines Duarte and I run the till", "Ines") is None


def test_r6_an_introduction_after_a_greeting_takes_the_fragment_after_it() -> None:
    text = (
        "Hi there. Denise Kowalski, I manage Buckeye Self Storage in Columbus, Ohio. "
        "340 units across five buildings, plus RV and boat parking out back."
    )
    said = [u for _, _, u in units(text, "user", "Denise")]
    assert said[-1].endswith(
        "Ohio. 340 units across five buildings, plus RV and boat parking out back."
    )
